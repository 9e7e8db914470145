/* orient_ops.h: what the operations that turn an image share (rotate, flip, flop, transpose,
 * transverse: each one of the eight EXIF orientations of src/base/orientation.h): their
 * parameters, the variants' options, the size, the CPU reference, the CUDA launcher and its
 * launch. */
#ifndef GPUIMG_ORIENT_OPS_H
#define GPUIMG_ORIENT_OPS_H

#include "ops.h"

/* An orientation operation's parameters. */
typedef struct {
  gpuimg_params_common_t common;
  int orientation; /* the EXIF orientation it applies, 2..8; 0: none chosen yet (rotate) */
  int angle;       /* rotate's --angle: the index of its value */
} gpuimg_orient_params_t;

/* The variants' options: the naive transpose and the unpadded tile (the default: the padded
 * tile), as entries of an option table. */
#define GPUIMG_ORIENT_VARIANT_OPTIONS                                                              \
  GPUIMG_OPTION_NAIVE("CUDA: one thread per pixel, the naive transpose\n"                          \
                      "(columns written: uncoalesced)"),                                           \
      GPUIMG_OPTION_TILED("CUDA: a 32x32 tile in shared memory, unpadded\n"                        \
                          "(bank conflicts on its column walk)")

/* The option table of an orientation operation that has no other options. */
extern const gpuimg_option_t gpuimg_orient_options[];

/* The fields of an orientation operation's declaration after its name, summary, options,
 * parameters and work. */
#define GPUIMG_ORIENT_OP_FIELDS                                                                    \
  .out_size = gpuimg_orient_out_size, .run_cpu_rows = gpuimg_orient_cpu_rows,                      \
  GPUIMG_RUN_GPU(gpuimg_orient_gpu_step), .launch = gpuimg_orient_launch

/* The work per byte, relative to blur's (gpuimg_op_t.work), of the orientations that swap the
 * axes (the CPU reads a column of the source for each row it writes: about blur's on a 4000x3000
 * RGB image on one core) and of those that keep them (a quarter of it). */
#define GPUIMG_ORIENT_WORK_SWAP 1.0
#define GPUIMG_ORIENT_WORK_MIRROR 0.25

/* A width x height image's turned size (height x width for the orientations 5..8). */
int gpuimg_orient_out_size(const void *params, int in_w, int in_h, int *out_w, int *out_h);

/* The CPU reference on rows y0 .. y1-1 of dst: gpuimg_orientation_rows(). */
int gpuimg_orient_cpu_rows(const void *params, const gpuimg_image_t *src,
                           const gpuimg_image_t *mask, gpuimg_image_t *dst, int y0, int y1);

/* The CUDA launcher's launch on a w x h x c input: gpuimg_rotate_launch() with the parameters'
 * orientation and variant. */
int gpuimg_orient_launch(const void *params, int w, int h, int c, const gpuimg_launch_env_t *env,
                         gpuimg_launch_t *l);

#ifdef GPUIMG_HAVE_CUDA
/* The CUDA launcher: gpuimg_rotate_gpu() with the parameters' orientation and variant. */
int gpuimg_orient_gpu_step(gpuimg_cuda_t *ctx, const void *params, const uint8_t *d_src,
                           const uint8_t *d_mask, uint8_t *d_dst, int width, int height,
                           int channels, gpuimg_launch_t *info);
#endif

#endif
