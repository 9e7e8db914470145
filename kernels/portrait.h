/* portrait.h: the portrait launcher (kernels/portrait.cu) and the shape of its launch. */
#ifndef GPUIMG_PORTRAIT_H
#define GPUIMG_PORTRAIT_H

#include "blur.h"
#include "cuda_context.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Blurs all but the subject. d_mask: width x height, one byte per pixel (>= 128 =
 * subject); tile as for gpuimg_blur_gpu(). 0, or -1 with the error set. */
int gpuimg_portrait_gpu(gpuimg_cuda_t *ctx, const uint8_t *d_src, const uint8_t *d_mask,
                        uint8_t *d_dst, int width, int height, int channels, int radius,
                        gpuimg_variant_t variant, gpuimg_tile_t tile, gpuimg_launch_t *info);

/* The composite kernel's launch (after a naive or tiled blur) on a width x height x channels
 * image in env: one thread per pixel of a 2-D grid (32x8 blocks by default) reads its mask
 * byte and, for the subject, copies its pixel's bytes, one byte a lane, C bytes apart. */
static inline void gpuimg_portrait_composite_launch(int width, int height, int channels,
                                                    const gpuimg_launch_env_t *env,
                                                    gpuimg_launch_t *l)
{
  char args[12];
  unsigned bw = env->block_w ? (unsigned)env->block_w : 32;
  unsigned bh = env->block_w ? (unsigned)env->block_h : 8;
  snprintf(args, sizeof args, "%d, false", channels);
  gpuimg_launch_set(l, "portrait_composite_kernel", args, gpuimg_launch_blocks(width, (int)bw),
                    gpuimg_launch_blocks(height, (int)bh), bw, bh, 0);
  l->divergence_kernel = 1;
  gpuimg_launch_access(l, GPUIMG_ACCESS_LOAD, 1, 1, (int)bw, width);
  gpuimg_launch_access(l, GPUIMG_ACCESS_LOAD, 1, channels, (int)bw, (long long)width * channels);
  gpuimg_launch_access(l, GPUIMG_ACCESS_STORE, 1, channels, (int)bw, (long long)width * channels);
}

/* The launch gpuimg_portrait_gpu() reports (the model makes the same): with the naive or tiled
 * blur, the composite kernel, one launch after the blur's (none at radius 0: a copy); with the
 * fast variant, the fast blur's, which composites as it goes. A GPUIMG_LAUNCH_ value. */
static inline int gpuimg_portrait_launch(gpuimg_variant_t variant, gpuimg_tile_t tile, int radius,
                                         int width, int height, int channels,
                                         const gpuimg_launch_env_t *env, gpuimg_launch_t *l)
{
  if (variant == GPUIMG_VARIANT_FAST) { /* device buffers are 256-byte aligned */
    gpuimg_blur_fast_t f;
    return gpuimg_blur_fast_launch(width, height, radius, channels, 1, 1, env, l, &f);
  }
  gpuimg_launch_t blur = *l;
  int rc = gpuimg_blur_launch(variant, tile, radius, width, height, channels, env, &blur);
  if (rc == GPUIMG_LAUNCH_IMPOSSIBLE)
    return rc;
  gpuimg_portrait_composite_launch(width, height, channels, env, l);
  l->launches += rc == GPUIMG_LAUNCH_KERNEL;
  return GPUIMG_LAUNCH_KERNEL;
}

#ifdef __cplusplus
}
#endif

#endif
