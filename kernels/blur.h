/* blur.h: the box blur launcher (kernels/blur*.cu) and the shape of its teaching kernels'
 * launches. */
#ifndef GPUIMG_BLUR_H
#define GPUIMG_BLUR_H

#include "cuda_context.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Box blur of radius; tile is the tiled variant's shared-memory storage (the other
 * variants ignore it). 0, or -1 with the error set. */
int gpuimg_blur_gpu(gpuimg_cuda_t *ctx, const uint8_t *d_src, uint8_t *d_dst, int width, int height,
                    int channels, int radius, gpuimg_variant_t variant, gpuimg_tile_t tile,
                    gpuimg_launch_t *info);

/* A row of the tiled blur's shared tile: bw + 2r pixels of 4 bytes (u8: uchar4) or C floats. */
static inline size_t gpuimg_blur_tile_row_bytes(int bw, int r, int channels, gpuimg_tile_t tile)
{
  return ((size_t)bw + 2 * (size_t)r) * (tile == GPUIMG_TILE_FLOAT ? 4 * (size_t)channels : 4);
}

/* The separable tiled kernel's shared memory: the whole (bh + 2r)-row tile (to 16 bytes) and a
 * uint32 plane per channel of its rows' horizontal sums. */
static inline size_t gpuimg_blur_tiled_sep_bytes(int bw, int bh, int r, int channels,
                                                 gpuimg_tile_t tile)
{
  size_t tile_h = (size_t)bh + 2 * (size_t)r;
  return (tile_h * gpuimg_blur_tile_row_bytes(bw, r, channels, tile) + 15) / 16 * 16 +
         (size_t)channels * tile_h * (size_t)bw * 4;
}

/* The launch gpuimg_blur_gpu() makes of a width x height x channels image with the naive or
 * tiled variant in env (the model makes the same): a GPUIMG_LAUNCH_ value (radius 0: a copy;
 * the fast variant: unmodelled, its design follows the device; a tile row past the GPU's
 * shared memory: impossible). */
static inline int gpuimg_blur_launch(gpuimg_variant_t variant, gpuimg_tile_t tile, int radius,
                                     int width, int height, int channels,
                                     const gpuimg_launch_env_t *env, gpuimg_launch_t *l)
{
  char args[16];
  unsigned bw = env->block_w ? (unsigned)env->block_w : 16;
  unsigned bh = env->block_w ? (unsigned)env->block_h : 16;
  long long row = (long long)width * channels; /* an image row's bytes */
  if (radius == 0)
    return GPUIMG_LAUNCH_COPY;
  if (variant == GPUIMG_VARIANT_NAIVE) {
    /* One thread per pixel sums its window from global memory, a byte a channel: neighbouring
     * lanes C bytes apart, a block row narrower than 32 lanes wrapping to the next image row. */
    snprintf(args, sizeof args, "%d", channels);
    gpuimg_launch_set(l, "blur_naive_kernel", args, gpuimg_launch_blocks(width, (int)bw),
                      gpuimg_launch_blocks(height, (int)bh), bw, bh, 0);
    gpuimg_launch_access(l, GPUIMG_ACCESS_LOAD, 1, channels, (int)bw, row);
    gpuimg_launch_access(l, GPUIMG_ACCESS_STORE, 1, channels, (int)bw, row);
    return GPUIMG_LAUNCH_KERNEL;
  }
  if (variant != GPUIMG_VARIANT_TILED)
    return GPUIMG_LAUNCH_UNMODELLED;
  /* The tile plus apron staged in shared memory, loaded a byte a channel by consecutive threads
   * along tile rows of bw + 2r pixels; each pixel one 4-byte word (u8) or C floats. */
  int fl = tile == GPUIMG_TILE_FLOAT, px = fl ? 4 * channels : 4;
  int tile_w = (int)bw + 2 * radius, tile_h = (int)bh + 2 * radius;
  size_t row_bytes = gpuimg_blur_tile_row_bytes((int)bw, radius, channels, tile);
  size_t sep = gpuimg_blur_tiled_sep_bytes((int)bw, (int)bh, radius, channels, tile);
  size_t optin = (size_t)env->gpu->shared_per_block_optin;
  unsigned gx = gpuimg_launch_blocks(width, (int)bw), gy = gpuimg_launch_blocks(height, (int)bh);
  snprintf(args, sizeof args, "%d, %s", channels, fl ? "float" : "uchar4");
  if (sep <= optin) {
    /* The whole tile and a plane of row sums: the separable kernel. */
    gpuimg_launch_set(l, "blur_tiled_kernel", NULL, gx, gy, bw, bh, sep);
    snprintf(l->instance, sizeof l->instance, "blur_tiled_sep_kernel<%s>", args);
  } else {
    /* Bands of the tile's rows, summed window by window. */
    size_t band = optin / row_bytes;
    if (band < 1)
      return GPUIMG_LAUNCH_IMPOSSIBLE;
    if (band > (size_t)tile_h)
      band = (size_t)tile_h;
    gpuimg_launch_set(l, "blur_tiled_banded_kernel", NULL, gx, gy, bw, bh, band * row_bytes);
    snprintf(l->instance, sizeof l->instance, "blur_tiled_kernel<%s>", args);
  }
  gpuimg_launch_access(l, GPUIMG_ACCESS_LOAD, 1, channels, tile_w, row);
  gpuimg_launch_access(l, GPUIMG_ACCESS_SHARED_STORE, 4, px, 0, 0);
  /* The window: lane (tx, ty) reads tile row ty from column tx on. */
  gpuimg_launch_access(l, GPUIMG_ACCESS_SHARED_LOAD, 4, px, (int)bw, (long long)tile_w * px);
  if (sep <= optin) /* the row sums: plane rows of bw words */
    gpuimg_launch_access(l, GPUIMG_ACCESS_SHARED_LOAD, 4, 4, (int)bw, 4LL * bw);
  gpuimg_launch_access(l, GPUIMG_ACCESS_STORE, 1, channels, (int)bw, row);
  return GPUIMG_LAUNCH_KERNEL;
}

#ifdef __cplusplus
}
#endif

#endif
