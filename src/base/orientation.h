/* orientation.h: the eight EXIF orientations as one pixel mapping, shared by the host (the
 * CPU reference of the rotations and EXIF autorotation) and the CUDA kernels. */
#ifndef GPUIMG_ORIENTATION_H
#define GPUIMG_ORIENTATION_H

#include "base.h"

/* The mapping's functions are compiled for the GPU too where nvcc includes this header. */
#ifdef __CUDACC__
#define GPUIMG_HOST_DEVICE __host__ __device__
#else
#define GPUIMG_HOST_DEVICE
#endif

/* How a w x h image is turned, as three steps: swap the axes (transpose), then mirror the
 * source's columns and rows. EXIF orientation o is (swap, mirror_x, mirror_y):
 *   1 (0,0,0) as stored      2 (0,1,0) flop       3 (0,1,1) rotate 180   4 (0,0,1) flip
 *   5 (1,0,0) transpose      6 (1,0,1) rotate 90  7 (1,1,1) transverse   8 (1,1,0) rotate 270
 * (rotations clockwise, as ImageMagick's -rotate and the EXIF standard mean them). */
typedef struct {
  int w, h;         /* the source's size */
  int out_w, out_h; /* the result's: h x w when swap */
  int swap, mirror_x, mirror_y;
} gpuimg_orientation_t;

/* Orientation o (1..8; any other value as 1) of a w x h source. */
GPUIMG_HOST_DEVICE static inline gpuimg_orientation_t gpuimg_orientation_make(int o, int w, int h)
{
  /* Bit k of each mask: orientation k has the step. */
  const unsigned swaps = 0x1e0u, mirror_xs = 0x18cu, mirror_ys = 0xd8u;
  unsigned bit = o >= 1 && o <= 8 ? 1u << o : 2u;
  gpuimg_orientation_t t;
  t.w = w;
  t.h = h;
  t.swap = (swaps & bit) != 0;
  t.mirror_x = (mirror_xs & bit) != 0;
  t.mirror_y = (mirror_ys & bit) != 0;
  t.out_w = t.swap ? h : w;
  t.out_h = t.swap ? w : h;
  return t;
}

/* The source pixel (*sx, *sy) that shows at (x, y) of the result. */
GPUIMG_HOST_DEVICE static inline void gpuimg_orientation_source(gpuimg_orientation_t t, int x,
                                                                int y, int *sx, int *sy)
{
  int u = t.swap ? y : x, v = t.swap ? x : y;
  *sx = t.mirror_x ? t.w - 1 - u : u;
  *sy = t.mirror_y ? t.h - 1 - v : v;
}

/* The inverse: where source pixel (sx, sy) goes in the result. */
GPUIMG_HOST_DEVICE static inline void gpuimg_orientation_dest(gpuimg_orientation_t t, int sx,
                                                              int sy, int *x, int *y)
{
  int u = t.mirror_x ? t.w - 1 - sx : sx, v = t.mirror_y ? t.h - 1 - sy : sy;
  *x = t.swap ? v : u;
  *y = t.swap ? u : v;
}

#ifdef __cplusplus
extern "C" {
#endif

/* The CPU reference: writes rows y0 .. y1-1 of dst (out_w x out_h of the orientation, src's
 * channels, 1 to 4) with src turned as EXIF orientation o asks: exact pixel moves. */
void gpuimg_orientation_rows(int o, const gpuimg_image_t *src, gpuimg_image_t *dst, int y0, int y1);

#ifdef __cplusplus
}
#endif

#endif
