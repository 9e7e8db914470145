/* ops.h: what an operation declares about itself (its gpuimg_op_t) and the registry of them,
 * from which help, parsing, the report, --explain and the completion are made. */
#ifndef GPUIMG_OPS_H
#define GPUIMG_OPS_H

#include <stddef.h>

#include "base.h"
#include "cuda_context.h"
#include "options.h"

/* Room for one step's parameters (an operation's own struct), aligned to 16. */
#define GPUIMG_PARAMS_SIZE 256

/* The part every operation's parameter struct starts with: what code outside the operation
 * reads (the variant, the tile, the mask file) without knowing which operation it is. */
typedef struct {
  gpuimg_variant_t variant; /* --naive, --tiled; FAST when not given or not offered */
  gpuimg_tile_t tile;       /* --tile: the tiled blur's shared-memory tile */
  const char *mask_path;    /* --mask FILE (ops with a mask); NULL = the built-in sample's */
} gpuimg_params_common_t;

/* Each operation states that its struct Type starts with the common part and fits a step. */
#define GPUIMG_PARAMS_CHECK(Type)                                                                  \
  _Static_assert(sizeof(Type) <= GPUIMG_PARAMS_SIZE && _Alignof(Type) <= 16 &&                     \
                     offsetof(Type, common) == 0,                                                  \
                 #Type " must start with gpuimg_params_common_t and fit GPUIMG_PARAMS_SIZE")

/* The options several operations share, as entries of their tables (the common part is at
 * offset 0 of every parameter struct). */
#define GPUIMG_OPTION_NAIVE(text)                                                                  \
  {                                                                                                \
    .long_name = "naive", .kind = GPUIMG_OPTION_FLAG,                                              \
    .offset = offsetof(gpuimg_params_common_t, variant), .value = GPUIMG_VARIANT_NAIVE,            \
    .help = (text)                                                                                 \
  }
#define GPUIMG_OPTION_TILED(text)                                                                  \
  {                                                                                                \
    .long_name = "tiled", .kind = GPUIMG_OPTION_FLAG,                                              \
    .offset = offsetof(gpuimg_params_common_t, variant), .value = GPUIMG_VARIANT_TILED,            \
    .help = (text)                                                                                 \
  }
#define GPUIMG_OPTION_TILE(text)                                                                   \
  {                                                                                                \
    .long_name = "tile", .kind = GPUIMG_OPTION_CHOICE,                                             \
    .offset = offsetof(gpuimg_params_common_t, tile), .choices = gpuimg_tile_names,                \
    .metavar = "u8|float", .help = (text)                                                          \
  }
#define GPUIMG_OPTION_MASK(text)                                                                   \
  {                                                                                                \
    .long_name = "mask", .kind = GPUIMG_OPTION_STRING,                                             \
    .offset = offsetof(gpuimg_params_common_t, mask_path), .metavar = "FILE", .help = (text),      \
    .empty_what = "file name"                                                                      \
  }
/* The mask option as spelled on the command line, for messages about it. */
#define GPUIMG_MASK_OPTION "--mask"

/* An operation's parameter struct and its defaults (a const Type) in its declaration. */
#define GPUIMG_PARAMS(Type, defaults_) .params_size = sizeof(Type), .defaults = &(defaults_)

/* An operation's CUDA launcher (or an analysis's) in its declaration: NULL in a build without
 * CUDA (the function itself is then not compiled either). */
#ifdef GPUIMG_HAVE_CUDA
#define GPUIMG_RUN_GPU(fn) .run_gpu = (fn)
#define GPUIMG_MEASURE_GPU(fn) .measure_gpu = (fn)
#else
#define GPUIMG_RUN_GPU(fn) .run_gpu = NULL
#define GPUIMG_MEASURE_GPU(fn) .measure_gpu = NULL
#endif

/* "u8", "float": gpuimg_tile_t's names, NULL-terminated. */
extern const char *const gpuimg_tile_names[];

/* Where an operation's report options go: one call per option, in the report's order. */
typedef struct {
  void (*number)(void *ctx, const char *key, double value);
  void (*string)(void *ctx, const char *key, const char *value);
  void *ctx;
} gpuimg_report_sink_t;

typedef struct gpuimg_op gpuimg_op_t;

/* An operation, declared in full by its own file src/ops/<name>.c. `params` below is the
 * operation's own struct (params_size bytes, starting with gpuimg_params_common_t). */
struct gpuimg_op {
  const char *name;
  const char *summary;            /* one line for --help */
  const gpuimg_option_t *options; /* its options (offsets into params); NULL-terminated */
  size_t params_size;
  const void *defaults; /* params_size bytes: the parameters before any option */
  int needs_mask;       /* 1: a width x height mask (common.mask_path), whose bytes it moves */
  /* The channel counts its input may have, a bit set (GPUIMG_CHANNELS(c) for c channels);
   * 0: GPUIMG_CHANNELS_ANY, every layout gpuimg.h has. gpuimg_plan_shapes() refuses another
   * input at its step (exit 3). */
  unsigned channels;
  int (*out_channels)(int in_channels); /* NULL: as many as its input has */
  /* The size it makes of an in_w x in_h input: 0, or -1 with a usage error set (a size past
   * what an int holds). NULL: the input's size. Every stage, buffer and band of the engine
   * follows it (gpuimg_plan_shapes()). */
  int (*out_size)(const void *params, int in_w, int in_h, int *out_w, int *out_h);
  /* Checks its parameters as a whole once every option of the step is set (options that
   * need one another, or exclude one another): 0, or -1 with a usage error. NULL: none. */
  int (*check)(const void *params);
  /* Shrink-on-load, for the first step: the largest reduction r (1, 2, 4 or 8, at most max)
   * at which the decoder may decode an image of full_w x full_h (upright) as ceil(full / r)
   * instead, and in fixed (GPUIMG_PARAMS_SIZE bytes) the parameters that make the reduced
   * image into the size the full one would give. 1: decode at full size. NULL: never. */
  int (*load_reduction)(const void *params, int full_w, int full_h, int max, void *fixed);
  /* Its work per byte it moves (input, output, mask), relative to blur's (1.0; 0: as blur),
   * for the backend cost model (src/engine/cost.c; scripts/calibrate-cost measures it). */
  double work;
  /* CPU reference: dst is allocated by the caller with out_channels() and out_size().
   * mask is width x height, 1 channel, or empty when the op takes none. NULL: run_cpu_rows
   * on every row (gpuimg_op_run_cpu()). */
  int (*run_cpu)(const void *params, const gpuimg_image_t *src, const gpuimg_image_t *mask,
                 gpuimg_image_t *dst);
  /* The same on a band: writes rows y0 .. y1-1 of dst (0 <= y0 < y1 <= dst height) only (reading
   * any rows of src and mask), the bytes the whole run writes there, so that bands can run on
   * several threads at once (the CPU backend's --threads). NULL: the operation runs whole on one
   * thread. */
  int (*run_cpu_rows)(const void *params, const gpuimg_image_t *src, const gpuimg_image_t *mask,
                      gpuimg_image_t *dst, int y0, int y1);
  /* CUDA backend, NULL when built without CUDA: width x height x channels is its input; d_dst
   * has room for out_size() x out_channels(). */
  int (*run_gpu)(gpuimg_cuda_t *ctx, const void *params, const uint8_t *d_src,
                 const uint8_t *d_mask, uint8_t *d_dst, int width, int height, int channels,
                 gpuimg_launch_t *info);
  /* An analysis (stats): the operation measures its input into a result of result_size bytes
   * (the step's stage holds it: gpuimg_stage_t's result) and its output is its input, unchanged
   * (run_cpu copies it; on CUDA the next step reads the same buffer). measure_cpu is the CPU
   * reference, measure_gpu the CUDA launcher (its main kernel into info); result_json the result
   * as a JSON object (malloc'd text, NULL when out of memory). 0 / NULL: not an analysis. */
  size_t result_size;
  int (*measure_cpu)(const void *params, const gpuimg_image_t *src, void *result);
  int (*measure_gpu)(gpuimg_cuda_t *ctx, const void *params, const uint8_t *d_src, int width,
                     int height, int channels, void *result, gpuimg_launch_t *info);
  char *(*result_json)(const void *result);
  /* A total over images (a batch's, shards' in `gpuimg summary`): one image's result added to
   * total (a zeroed one is empty), and a result read back from its result_json text (0, or -1
   * when the text is not one: malformed, or figures past what it can hold exactly). */
  void (*result_add)(void *total, const void *result);
  int (*result_parse)(const char *json, void *result);
  /* A result in a few plain lines on f, each starting with prefix (`gpuimg summary`'s text). */
  void (*result_print)(const void *result, FILE *f, const char *prefix);
  /* Name of the variant for the report and --explain ("" when the op has none); NULL: the
   * common part's (fast, naive, tiled). */
  const char *(*variant_name)(const void *params);
  /* Its option values for the report's `options` object (NULL: none). */
  void (*report)(const void *params, const gpuimg_report_sink_t *sink);
  /* The shape of its CUDA launcher's main kernel on a w x h x c input in env: kernel, instance,
   * grid, block, dynamic shared memory, launches and memory accesses into l (zeroed by the
   * caller), by the function the launcher itself calls (kernels/<name>.h), so the model
   * without a GPU predicts what the device runs. A GPUIMG_LAUNCH_ value (cuda_context.h).
   * NULL: no model. */
  int (*launch)(const void *params, int w, int h, int c, const gpuimg_launch_env_t *env,
                gpuimg_launch_t *l);
  /* Host prediction of the warps its kernel diverges in for a bw x bh block, when the
   * launch counted divergence (NULL: none). mask as for run_cpu. map: NULL, or one byte per
   * warp of the grid in launch order (blocks row by row, a block's warps in order), set to 1
   * for a divergent warp (--explain-image's outlines). */
  void (*divergence)(const void *params, const gpuimg_image_t *mask, int width, int height, int bw,
                     int bh, uint64_t *warps, uint64_t *divergent, uint8_t *map);
};

/* NULL-terminated table of every operation, in help order (registry.c, generated from
 * src/ops/meson.build's gpuimg_op_names). */
extern const gpuimg_op_t *const gpuimg_ops[];
const gpuimg_op_t *gpuimg_ops_find(const char *name);

/* The registry's names for messages, "a, b, c or d", into buf (truncated to size). */
void gpuimg_ops_names(char *buf, size_t size);

/* gpuimg_op_t's channels: c channels, and 1 to 4 (gray, gray+alpha, RGB, RGBA). */
#define GPUIMG_CHANNELS(c) (1u << (c))
#define GPUIMG_CHANNELS_ANY                                                                        \
  (GPUIMG_CHANNELS(1) | GPUIMG_CHANNELS(2) | GPUIMG_CHANNELS(3) | GPUIMG_CHANNELS(4))

/* Whether op takes an input of in_channels channels, as its declaration says. */
int gpuimg_op_takes_channels(const gpuimg_op_t *op, int in_channels);
/* The channels op makes of in_channels, and the name of its variant under params: what its
 * declaration says, or the defaults above. */
int gpuimg_op_out_channels(const gpuimg_op_t *op, int in_channels);
/* op's CPU reference on the whole image: run_cpu, or run_cpu_rows on every row. */
int gpuimg_op_run_cpu(const gpuimg_op_t *op, const void *params, const gpuimg_image_t *src,
                      const gpuimg_image_t *mask, gpuimg_image_t *dst);
const char *gpuimg_op_variant_name(const gpuimg_op_t *op, const void *params);
/* The size op makes of a w x h input under params (its out_size, or w x h); 0, or -1 with a
 * usage error set. */
int gpuimg_op_out_size(const gpuimg_op_t *op, const void *params, int w, int h, int *out_w,
                       int *out_h);

/* The model's launch of op's step on a w x h x c input for env's GPU and --block (env's
 * resident is ignored): its shape (op->launch), registers and static shared memory from the
 * resource table for the GPU's architecture, occupancy, resident blocks, waves and, for a
 * teaching kernel, the divergent warps predicted on mask. A GPUIMG_LAUNCH_ value: with
 * GPUIMG_LAUNCH_KERNEL but no row in the resource table for the instance, l has its shape
 * only (has_occupancy 0). */
int gpuimg_op_predict(const gpuimg_op_t *op, const void *params, int w, int h, int c,
                      const gpuimg_launch_env_t *env, const gpuimg_image_t *mask,
                      gpuimg_launch_t *l);

/* Sets params (GPUIMG_PARAMS_SIZE bytes) to op's defaults. */
void gpuimg_ops_init(const gpuimg_op_t *op, void *params);

/* Sets op's option name ("radius") to value as the command line would; 0, or -1 with a
 * usage error set (for tests and library callers). */
int gpuimg_ops_set(const gpuimg_op_t *op, void *params, const char *name, const char *value);

/* The common part of a step's parameters. */
const gpuimg_params_common_t *gpuimg_ops_common(const void *params);

/* Shared pieces of the operations' declarations: the variant's name ("fast", "naive",
 * "tiled"), and report entries for the tile (only with --tiled) and the mask file. */
const char *gpuimg_variant_name(gpuimg_variant_t v);
const char *gpuimg_ops_variant_name(const void *params);
void gpuimg_ops_report_tile(const void *params, const gpuimg_report_sink_t *sink);
void gpuimg_ops_report_mask(const void *params, const gpuimg_report_sink_t *sink);

/* Host predictions of the warps the teaching kernels diverge in, for a bw x bh block grid
 * over a w x h image: warps with a lane in the image, and those whose lanes take both sides
 * of the branch side(arg, x, y); map as for gpuimg_op_t's divergence (NULL: counts only). */
void gpuimg_divergence_predict(int w, int h, int bw, int bh, int (*side)(const void *, int, int),
                               const void *arg, uint64_t *warps, uint64_t *divergent, uint8_t *map);
/* ... with the branch "mask >= 128". */
void gpuimg_divergence_mask(const gpuimg_image_t *mask, int bw, int bh, uint64_t *warps,
                            uint64_t *divergent, uint8_t *map);

#endif
