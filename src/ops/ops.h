/* ops.h: the operation table that drives help, parsing, dispatch and report names. */
#ifndef GPUIMG_OPS_H
#define GPUIMG_OPS_H

#include "base.h"
#include "cuda_context.h"

/* Largest blur radius: (2*2047+1)^2 * 255 + C/2 still fits in 32 bits, so every
 * backend sums exactly in uint32. */
#define GPUIMG_MAX_RADIUS 2047

/* Option bits an operation accepts (see cli.c for their spellings). */
enum {
  GPUIMG_OPT_RADIUS = 1u << 0,
  GPUIMG_OPT_NAIVE = 1u << 1,
  GPUIMG_OPT_TILED = 1u << 2,
  GPUIMG_OPT_CELL = 1u << 3,
  GPUIMG_OPT_AMOUNT = 1u << 4,
  GPUIMG_OPT_MASK = 1u << 5,
  GPUIMG_OPT_TILE = 1u << 6,
};

/* Parameters of one step of a pipeline; each operation reads its own. */
typedef struct {
  int radius;
  gpuimg_variant_t variant;
  int cell;
  int amount;
  const char *mask_path; /* portrait: NULL = the built-in sample's mask */
  gpuimg_tile_t tile;    /* tiled blur: shared-memory tile storage */
} gpuimg_params_t;

typedef struct gpuimg_op gpuimg_op_t;

struct gpuimg_op {
  const char *name;
  const char *summary;      /* one line for --help */
  const char *options_help; /* its options for --help, "" if none */
  unsigned options;         /* GPUIMG_OPT_* bits accepted */
  void (*defaults)(gpuimg_params_t *p);
  int (*out_channels)(int in_channels);
  /* CPU reference: dst is allocated by the caller with out_channels().
   * mask is width x height, 1 channel, or NULL when the op takes none. */
  int (*run_cpu)(const gpuimg_params_t *p, const gpuimg_image_t *src, const gpuimg_image_t *mask,
                 gpuimg_image_t *dst);
  /* CUDA backend, NULL when built without CUDA. */
  int (*run_gpu)(gpuimg_cuda_t *ctx, const gpuimg_params_t *p, const uint8_t *d_src,
                 const uint8_t *d_mask, uint8_t *d_dst, int width, int height, int channels,
                 gpuimg_launch_t *info);
  /* Name of the variant for the report ("" when the op has none). */
  const char *(*variant_name)(const gpuimg_params_t *p);
};

extern const gpuimg_op_t gpuimg_op_gray;
extern const gpuimg_op_t gpuimg_op_blur;
extern const gpuimg_op_t gpuimg_op_checkerboard;
extern const gpuimg_op_t gpuimg_op_portrait;

/* NULL-terminated table of every operation, in help order. */
extern const gpuimg_op_t *const gpuimg_ops[];
const gpuimg_op_t *gpuimg_ops_find(const char *name);

/* CPU references, also used directly by tests. */
int gpuimg_gray_cpu(const gpuimg_image_t *src, gpuimg_image_t *dst);
int gpuimg_blur_cpu(const gpuimg_image_t *src, int radius, gpuimg_image_t *dst);
int gpuimg_checkerboard_cpu(const gpuimg_image_t *src, int cell, int amount, gpuimg_image_t *dst);
int gpuimg_portrait_cpu(const gpuimg_image_t *src, const gpuimg_image_t *mask, int radius,
                        gpuimg_image_t *dst);

const char *gpuimg_variant_name(gpuimg_variant_t v);

/* Host predictions of the warps the teaching kernels diverge in, for a bw x bh block:
 * warps with a lane in the image, and those whose lanes take both sides of the branch. */
void gpuimg_divergence_checkerboard(int w, int h, int cell, int bw, int bh, uint64_t *warps,
                                    uint64_t *divergent);
void gpuimg_divergence_mask(const gpuimg_image_t *mask, int bw, int bh, uint64_t *warps,
                            uint64_t *divergent);

#endif
