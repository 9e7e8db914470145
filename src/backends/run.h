/* run.h: the plan of a run (steps and settings) and one run of it with its timings. */
#ifndef GPUIMG_RUN_H
#define GPUIMG_RUN_H

#include "codec.h"
#include "files.h"
#include "ops.h"

#define GPUIMG_MAX_STEPS 32
#define GPUIMG_DEFAULT_MAX_PIXELS ((uint64_t)1 << 28)
#define GPUIMG_DEFAULT_QUALITY 90
#define GPUIMG_SAMPLE_INPUT "sample:"

/* One step: an operation and its parameters, the operation's own struct, which only the
 * operation's functions read (gpuimg_ops_init() sets its defaults). */
typedef struct {
  const gpuimg_op_t *op;
  _Alignas(16) unsigned char params[GPUIMG_PARAMS_SIZE];
} gpuimg_step_t;

/* What the engine is asked to do to every image: the steps and how to run them. The command
 * line (src/cli) builds it; it never sees the command line itself. */
typedef struct {
  gpuimg_step_t steps[GPUIMG_MAX_STEPS];
  int nsteps;
  gpuimg_backend_t backend;
  int repeat;
  int warmup; /* unrecorded runs before the repeat timed ones */
  int quality;
  int png_level;               /* PNG compression level, 0..9 */
  gpuimg_codec_choice_t codec; /* the library per format */
  int quiet;                   /* no notices or warnings on stderr */
  int measure; /* one-image runs: measure the copy bandwidth and divergence (for a report) */
  int block_w, block_h; /* 0: kernel defaults */
  uint64_t max_pixels;
  int fsync;         /* every output file flushed to disk before its rename, its directory after */
  int threads;       /* CPU backend: threads over row bands; 0: not given (the usable cores) */
  int no_autorotate; /* keep the stored pixels: no EXIF orientation applied (images, masks) */
  int lossless;      /* WebP outputs lossless (--lossless), else lossy at quality */
  int compression;   /* TIFF outputs: a gpuimg_compression_t (--compression) */
  int speed;         /* AVIF outputs: libaom's speed 0..9 (--speed) */
  int strip;         /* write no metadata: the input's ICC profile and EXIF are not carried */
  int to_srgb;       /* an input with an ICC profile converted to sRGB on decode (--to-srgb) */
  int exact_decode;  /* no shrink-on-load: every input decoded at its full size */
  /* --explain-image on a device: the teaching kernels' blocks record their SM and times in
   * the last timed run (the stages' blocks); never otherwise. */
  int record_blocks;
  /* --device: the GPU whose launches the run's stages predict (the model's table; NULL: on a
   * device, with measure, the device itself, else none). */
  const gpuimg_gpu_t *model_gpu;
} gpuimg_plan_t;

/* An image's size and channels where it enters a step. */
typedef struct {
  int w, h, c;
} gpuimg_shape_t;

/* What each step of plan gets from a w x h x c input: shapes[i] step i's input, shapes[nsteps]
 * the result (shapes has GPUIMG_MAX_STEPS + 1 entries). 0, or -1 with a usage error (exit 2)
 * when a step makes a size over plan->max_pixels, as its operation's out_size() says, or an
 * input error (exit 3) when a step's operation does not take its input's channels (its
 * declaration's channels). */
int gpuimg_plan_shapes(const gpuimg_plan_t *plan, int w, int h, int c, gpuimg_shape_t *shapes);

/* Shrink-on-load: whether plan may decode its inputs reduced (its first step's operation
 * declares a reduction, and no --exact-decode); then the reduction (1, 2, 4 or 8) at which
 * decoder (NULL: none) decodes a w x h (upright) input, 1 when it cannot decode reduced, and
 * in fixed (GPUIMG_PARAMS_SIZE bytes) that step's parameters for the reduced image (use them
 * only when it is above 1: the operation may write them in any case). */
int gpuimg_plan_may_reduce(const gpuimg_plan_t *plan);
int gpuimg_plan_load_reduction(const gpuimg_plan_t *plan, const gpuimg_codec_t *decoder, int w,
                               int h, void *fixed);

/* Whether masks[i] (data NULL: none) has the size of step i's input, shapes[i]: 1, or 0 with
 * the rest of a sentence after "mask" in why ("is 8x8 but the image is 9x9"). */
int gpuimg_plan_mask_fits(const gpuimg_plan_t *plan, int i, const gpuimg_image_t *mask,
                          const gpuimg_shape_t *shapes, char *why, size_t why_size);

/* One timed stage of the report. */
#define GPUIMG_MAX_STAGES (GPUIMG_MAX_STEPS * 2 + 8)
typedef struct {
  char name[32];     /* read, decode, upload, <op>, download, encode, write, mask */
  const char *codec; /* decode/encode stages: the codec's name (static), else NULL */
  int step;          /* pipeline step index, -1 for I/O stages */
  int device;        /* 1: CUDA events, 0: host monotonic clock */
  double *ms;        /* one sample per repetition (malloc'd) */
  int nms;
  uint64_t bytes; /* bytes moved (read + written), 0 if not meaningful */
  int pinned;     /* upload/download: host buffer pinned; -1 otherwise */
  int has_launch;
  gpuimg_launch_t launch;
  int in_w, in_h;     /* a step's stage: the size it read */
  int out_w, out_h;   /* a step's stage: the size it made */
  int has_prediction; /* host-predicted divergence for launch's block shape */
  uint64_t predicted_warps, predicted_divergent;
  /* A step's stage: the model's launch (gpuimg_op_predict(): model_rc its GPUIMG_LAUNCH_
   * value) for the plan's model_gpu, or on a device for the device itself. */
  int has_model, model_rc;
  gpuimg_launch_t model;
  /* An analysis step's stage: what it measured (its operation's result_size bytes, malloc'd,
   * freed by gpuimg_run_free()); NULL otherwise. */
  void *result;
  /* A step's stage of a recording run (plan's record_blocks): its launch's blocks in launch
   * order as the device ran them (malloc'd, freed by gpuimg_run_free()); NULL, 0: none. */
  gpuimg_block_time_t *blocks;
  uint64_t nblocks;
} gpuimg_stage_t;

typedef struct {
  const char *backend; /* "cpu" or "cuda" */
  char device[256];    /* "none" on the CPU */
  int cc_major, cc_minor;
  int driver_version, runtime_version; /* CUDA, e.g. 13000; 0 on the CPU */
  double copy_gbps; /* device-to-device copy bandwidth measured in this run; 0 if not */
  int threads;      /* the CPU backend's threads (--threads); 0 on a device */
  /* --backend auto on one image: the cost model's predictions, from which it chose, and why
   * (static); with --codec nvjpeg, CUDA's with nvJPEG too (has_nvjpeg_choice). */
  int has_choice, has_nvjpeg_choice;
  double predicted_cpu_ms, predicted_cuda_ms, predicted_nvjpeg_ms;
  const char *choice_reason;
  const char *input_name;
  uint64_t input_bytes;
  int in_w, in_h, in_c; /* as decoded and turned upright */
  int orientation;      /* the input's EXIF orientation applied, 1..8 (0, 1: none) */
  int reduction;        /* shrink-on-load: decoded at 1/reduction of its size (0, 1: none) */
  const char *output_name;
  gpuimg_format_t output_format; /* with output_name */
  uint64_t output_bytes;
  int out_w, out_h, out_c;
  int metadata; /* what the output carries of the input's: GPUIMG_META_ICC, GPUIMG_META_EXIF */
  gpuimg_stage_t stages[GPUIMG_MAX_STAGES];
  int nstages;
  double total_ms;
} gpuimg_run_t;

/* Step i's stage's model (has_model, model_rc, model) on gpu: the step's input shapes[i],
 * plan's --block, mask (data NULL: none) for a teaching kernel's divergence. */
void gpuimg_run_model(const gpuimg_plan_t *plan, const gpuimg_gpu_t *gpu, int i,
                      const gpuimg_shape_t *shapes, const gpuimg_image_t *mask, gpuimg_stage_t *s);

/* Adds a stage; returns it, or NULL with the error set. */
gpuimg_stage_t *gpuimg_run_stage(gpuimg_run_t *run, const char *name, int step, int device,
                                 int nms);
void gpuimg_run_free(gpuimg_run_t *run);

#endif
