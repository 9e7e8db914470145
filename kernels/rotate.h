/* rotate.h: the launcher of the orientation kernels (kernels/rotate.cu): rotate, flip, flop,
 * transpose, transverse, and EXIF autorotation on the device. */
#ifndef GPUIMG_ROTATE_H
#define GPUIMG_ROTATE_H

#include "cuda_context.h"
#include "orientation.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Turns the width x height image of 1 to 4 channels at d_src as EXIF orientation
 * orientation (1..8, src/base/orientation.h) asks into d_dst (height x width for 5..8), with
 * variant's kernel: naive (one thread per source pixel), tiled (a 32x32 tile in shared memory,
 * unpadded) or fast (the same tile padded by one 4-byte word a row). The same bytes as
 * gpuimg_orientation_rows(). 0, or -1 with the error set. */
int gpuimg_rotate_gpu(gpuimg_cuda_t *ctx, const uint8_t *d_src, uint8_t *d_dst, int width,
                      int height, int channels, int orientation, gpuimg_variant_t variant,
                      gpuimg_launch_t *info);

/* The tile kernels' tile: 32x32 pixels, moved by a 32x8 block; the padded tile's rows are one
 * 4-byte word longer. */
#define GPUIMG_ROTATE_TILE 32
#define GPUIMG_ROTATE_TILE_ROWS 8
#define GPUIMG_ROTATE_PAD_BYTES 4

/* The byte offset of pixel (x, y) of a w-pixel-wide image of e-byte pixels. */
static inline long long gpuimg_rotate_offset(int x, int y, long long w, int e)
{
  return ((long long)y * w + x) * e;
}

/* Declares a pixel's move as its accesses: one e-byte access (uchar, uchar2, uchar4), or for 3
 * bytes (uchar3) the first of its three byte accesses at +0, +1, +2 (the others alike). */
static inline void gpuimg_rotate_access(gpuimg_launch_t *l, gpuimg_access_kind_t kind, int e,
                                        long long base, long long stride, int row_lanes,
                                        long long row_stride)
{
  gpuimg_launch_access_at(l, kind, e == 3 ? 1 : e, base, stride, row_lanes, row_stride);
}

/* The launch gpuimg_rotate_gpu() makes of a width x height image of channels (1..4) bytes a
 * pixel turned as EXIF orientation orientation in env (the model makes the same): always a
 * kernel. The accesses are warp 0's of block (0, 0), at their addresses in the image (a
 * mirror puts lane 0 at a row's or a column's far end and walks backwards). */
static inline int gpuimg_rotate_launch(gpuimg_variant_t variant, int orientation, int width,
                                       int height, int channels, const gpuimg_launch_env_t *env,
                                       gpuimg_launch_t *l)
{
  const int e = channels, T = GPUIMG_ROTATE_TILE;
  gpuimg_orientation_t t = gpuimg_orientation_make(orientation, width, height);
  char args[16];
  unsigned gy;
  if (variant == GPUIMG_VARIANT_NAIVE) {
    /* One thread per source pixel, blocks over the source (32x8, --block), rows of blocks
     * capped at the GPU's limit. Lane (tx, ty) loads pixel (tx, ty) of the source and stores
     * it where gpuimg_orientation_dest() sends it: with the axes swapped, out_w pixels apart
     * a lane (a column of the result, a sector each). */
    unsigned bw = env->block_w ? (unsigned)env->block_w : 32;
    unsigned bh = env->block_w ? (unsigned)env->block_h : 8;
    int x0, y0, x1, y1, x2, y2;
    gy = gpuimg_launch_blocks(height, (int)bh);
    snprintf(args, sizeof args, "%d", e);
    gpuimg_launch_set(l, "rotate_naive_kernel", args, gpuimg_launch_blocks(width, (int)bw),
                      gy < (unsigned)env->gpu->max_grid_y ? gy : (unsigned)env->gpu->max_grid_y, bw,
                      bh, 0);
    gpuimg_rotate_access(l, GPUIMG_ACCESS_LOAD, e, 0, e, (int)bw, (long long)width * e);
    gpuimg_orientation_dest(t, 0, 0, &x0, &y0);
    gpuimg_orientation_dest(t, 1, 0, &x1, &y1);
    gpuimg_orientation_dest(t, 0, 1, &x2, &y2);
    long long at = gpuimg_rotate_offset(x0, y0, t.out_w, e);
    gpuimg_rotate_access(l, GPUIMG_ACCESS_STORE, e, at,
                         gpuimg_rotate_offset(x1, y1, t.out_w, e) - at, (int)bw,
                         gpuimg_rotate_offset(x2, y2, t.out_w, e) - at);
    return GPUIMG_LAUNCH_KERNEL;
  }
  /* A 32x8 block (--block does not apply) makes the 32x32 tile of the result at (ox0, oy0):
   * phase 1 loads the source rectangle the tile shows into shared memory a tile row a warp,
   * phase 2 stores the result's rows, lane tx reading the tile where the source of result pixel
   * (ox0 + tx, oy0) lies: down a tile column when the axes swap, R bytes a lane. */
  int pad = variant != GPUIMG_VARIANT_TILED;
  long long R = (long long)T * e + (pad ? GPUIMG_ROTATE_PAD_BYTES : 0);
  int tw = t.out_w < T ? t.out_w : T, th = t.out_h < T ? t.out_h : T;
  int ax, ay, bx, by, sx0, sy0, sx, sy, nx, ny;
  gpuimg_orientation_source(t, 0, 0, &ax, &ay);
  gpuimg_orientation_source(t, tw - 1, th - 1, &bx, &by);
  sx0 = ax < bx ? ax : bx, sy0 = ay < by ? ay : by;
  gpuimg_orientation_source(t, 0, 0, &sx, &sy);
  gpuimg_orientation_source(t, 1, 0, &nx, &ny);
  long long at = (sy - sy0) * R + (long long)(sx - sx0) * e;
  gy = gpuimg_launch_blocks(t.out_h, T);
  snprintf(args, sizeof args, "%d, %s", e, pad ? "true" : "false");
  gpuimg_launch_set(l, pad ? "rotate_kernel" : "rotate_tiled_kernel", NULL,
                    gpuimg_launch_blocks(t.out_w, T),
                    gy < (unsigned)env->gpu->max_grid_y ? gy : (unsigned)env->gpu->max_grid_y, T,
                    GPUIMG_ROTATE_TILE_ROWS, 0);
  snprintf(l->instance, sizeof l->instance, "rotate_tile_kernel<%s>", args);
  gpuimg_rotate_access(l, GPUIMG_ACCESS_LOAD, e, gpuimg_rotate_offset(sx0, sy0, width, e), e, 0, 0);
  gpuimg_rotate_access(l, GPUIMG_ACCESS_SHARED_STORE, e, 0, e, 0, 0);
  gpuimg_rotate_access(l, GPUIMG_ACCESS_SHARED_LOAD, e, at,
                       (ny - sy) * R + (long long)(nx - sx) * e, 0, 0);
  gpuimg_rotate_access(l, GPUIMG_ACCESS_STORE, e, 0, e, 0, 0);
  return GPUIMG_LAUNCH_KERNEL;
}

#ifdef __cplusplus
}
#endif

#endif
