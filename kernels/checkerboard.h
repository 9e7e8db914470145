/* checkerboard.h: the checkerboard launcher (kernels/checkerboard.cu) and its launch's shape. */
#ifndef GPUIMG_CHECKERBOARD_H
#define GPUIMG_CHECKERBOARD_H

#include "cuda_context.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Brightens even cell x cell squares by amount and darkens odd ones; alpha is copied.
 * 0, or -1 with the error set. */
int gpuimg_checkerboard_gpu(gpuimg_cuda_t *ctx, const uint8_t *d_src, uint8_t *d_dst, int width,
                            int height, int channels, int cell, int amount,
                            gpuimg_variant_t variant, gpuimg_launch_t *info);

/* The launch gpuimg_checkerboard_gpu() makes of a width x height x channels image in env (the
 * model makes the same). */
static inline int gpuimg_checkerboard_launch(gpuimg_variant_t variant, int width, int height,
                                             int channels, const gpuimg_launch_env_t *env,
                                             gpuimg_launch_t *l)
{
  char args[12];
  if (variant == GPUIMG_VARIANT_NAIVE) {
    /* One thread per pixel of a 2-D grid (32x8 blocks by default): each lane reads and writes
     * its pixel's bytes one at a time, neighbouring lanes C bytes apart. */
    unsigned bw = env->block_w ? (unsigned)env->block_w : 32;
    unsigned bh = env->block_w ? (unsigned)env->block_h : 8;
    snprintf(args, sizeof args, "%d, false", channels);
    gpuimg_launch_set(l, "checkerboard_kernel", args, gpuimg_launch_blocks(width, (int)bw),
                      gpuimg_launch_blocks(height, (int)bh), bw, bh, 0);
    l->divergence_kernel = 1;
    gpuimg_launch_access(l, GPUIMG_ACCESS_LOAD, 1, channels, (int)bw, (long long)width * channels);
    gpuimg_launch_access(l, GPUIMG_ACCESS_STORE, 1, channels, (int)bw, (long long)width * channels);
    return 0;
  }
  /* 16 pixels a thread as C 16-byte vectors (the last pixels % 16 by one more thread). */
  long long groups = (long long)width * height / 16;
  snprintf(args, sizeof args, "%d", channels);
  gpuimg_launch_set(l, "checkerboard_fast_kernel", args, gpuimg_launch_blocks(groups + 1, 256), 1,
                    256, 1, 0);
  gpuimg_launch_access(l, GPUIMG_ACCESS_LOAD, 16, 16LL * channels, 0, 0);
  gpuimg_launch_access(l, GPUIMG_ACCESS_STORE, 16, 16LL * channels, 0, 0);
  return 0;
}

#ifdef __cplusplus
}
#endif

#endif
