/* gray.h: the grayscale launcher (kernels/gray.cu) and the shape of its launch. */
#ifndef GPUIMG_GRAY_H
#define GPUIMG_GRAY_H

#include "cuda_context.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Rec. 601 luma of each pixel, alpha kept (gray or gray + alpha out). 0, or -1 with the
 * error set. */
int gpuimg_gray_gpu(gpuimg_cuda_t *ctx, const uint8_t *d_src, uint8_t *d_dst, int width, int height,
                    int channels, gpuimg_variant_t variant, gpuimg_launch_t *info);

/* Pixels each thread of gray_kernel converts, as 16-byte vectors. */
#define GPUIMG_GRAY_PIXELS_PER_THREAD 16

/* The launch gpuimg_gray_gpu() makes of a width x height x channels image in env (the model
 * makes the same): 0, or 1 for gray input, which is copied, not launched. */
static inline int gpuimg_gray_launch(gpuimg_variant_t variant, int width, int height, int channels,
                                     const gpuimg_launch_env_t *env, gpuimg_launch_t *l)
{
  int oc = channels == 4 ? 2 : 1;
  long long pixels = (long long)width * height;
  char args[12] = {(char)('0' + channels), '\0'};
  if (channels < 3)
    return 1;
  if (variant == GPUIMG_VARIANT_NAIVE) {
    /* One thread per pixel of a 2-D grid: a warp reads the R, G and B bytes of neighbouring
     * pixels of a row (1 byte per lane, C bytes apart; a block row narrower than 32 lanes
     * wraps to the next image row) and writes their gray bytes. */
    unsigned bw = env->block_w ? (unsigned)env->block_w : 16;
    unsigned bh = env->block_w ? (unsigned)env->block_h : 16;
    snprintf(args, sizeof args, "%d, false", channels); /* the instance that does not record */
    gpuimg_launch_set(l, "gray_naive_kernel", args, gpuimg_launch_blocks(width, (int)bw),
                      gpuimg_launch_blocks(height, (int)bh), bw, bh, 0);
    gpuimg_launch_access(l, GPUIMG_ACCESS_LOAD, 1, channels, (int)bw, (long long)width * channels);
    gpuimg_launch_access(l, GPUIMG_ACCESS_STORE, 1, oc, (int)bw, (long long)width * oc);
    return 0;
  }
  if (variant == GPUIMG_VARIANT_GRID_STRIDE) {
    /* As many 256-thread blocks as the GPU holds at once, each thread looping over the
     * flattened image a grid's threads apart: neighbouring lanes, neighbouring pixels. */
    long long grid = env->resident > 0 ? env->resident : gpuimg_launch_blocks(pixels, 256);
    gpuimg_launch_set(l, "gray_stride_kernel", args, (unsigned)grid, 1, 256, 1, 0);
    l->grid_is_resident = 1;
    gpuimg_launch_access(l, GPUIMG_ACCESS_LOAD, 1, channels, 0, 0);
    gpuimg_launch_access(l, GPUIMG_ACCESS_STORE, 1, oc, 0, 0);
    return 0;
  }
  /* 16 pixels a thread as 16-byte vectors (the last pixels % 16 by one more thread). */
  long long groups = pixels / GPUIMG_GRAY_PIXELS_PER_THREAD;
  gpuimg_launch_set(l, "gray_kernel", args, gpuimg_launch_blocks(groups + 1, 256), 1, 256, 1, 0);
  gpuimg_launch_access(l, GPUIMG_ACCESS_LOAD, 16, 16LL * channels, 0, 0);
  gpuimg_launch_access(l, GPUIMG_ACCESS_STORE, 16, 16LL * oc, 0, 0);
  return 0;
}

#ifdef __cplusplus
}
#endif

#endif
