/* resize.h: the resize launcher (kernels/resize.cu) and the fixed-point weights it shares with
 * the CPU reference (src/ops/resize.c), so that both compute the same integers. */
#ifndef GPUIMG_RESIZE_H
#define GPUIMG_RESIZE_H

#include "cuda_context.h"

#ifdef __CUDACC__
#define GPUIMG_RESIZE_FN static __host__ __device__ inline
#else
#define GPUIMG_RESIZE_FN static inline
#endif

/* One axis of a resize, n input pixels to m output pixels, in exact integers.
 * area: output pixel o covers [o*n, (o+1)*n) in units where input pixel i covers
 * [i*m, (i+1)*m); a tap's weight is their overlap / g, g = gcd(n, m), so the weights of an
 * output pixel sum to n / g.
 * bilinear: output pixel o samples t = (2o+1)*n - m in units of 1/(2m) of an input pixel
 * (the centre (o + 0.5) * n / m - 0.5), clamped to [0, 2m(n-1)]; the taps are i = t / 2m
 * with weight (2m - t mod 2m) / g and i + 1 with (t mod 2m) / g, summing to 2m / g.
 * Every quantity is a multiple of g, so the divisions are exact. */
typedef struct {
  int64_t n, m, g;
  int area;
  int64_t total; /* the weights of every output pixel sum to this */
} gpuimg_resize_axis_t;

GPUIMG_RESIZE_FN gpuimg_resize_axis_t gpuimg_resize_axis(int n, int m, int area)
{
  gpuimg_resize_axis_t a;
  int64_t x = n, y = m;
  while (y) {
    int64_t t = x % y;
    x = y;
    y = t;
  }
  a.n = n;
  a.m = m;
  a.g = x;
  a.area = area;
  a.total = area ? a.n / a.g : 2 * a.m / a.g;
  return a;
}

/* Bilinear's sample point of output pixel o, clamped (see above). */
GPUIMG_RESIZE_FN int64_t gpuimg_resize_point(const gpuimg_resize_axis_t *a, int o)
{
  int64_t t = (2 * (int64_t)o + 1) * a->n - a->m, hi = 2 * a->m * (a->n - 1);
  return t < 0 ? 0 : t > hi ? hi : t;
}

/* The first input pixel output pixel o reads, and how many (*count) from there. */
GPUIMG_RESIZE_FN int gpuimg_resize_first(const gpuimg_resize_axis_t *a, int o, int *count)
{
  if (a->area) {
    int64_t lo = (int64_t)o * a->n, hi = lo + a->n;
    int first = (int)(lo / a->m);
    *count = (int)((hi - 1) / a->m) - first + 1;
    return first;
  }
  int64_t t = gpuimg_resize_point(a, o);
  *count = t % (2 * a->m) ? 2 : 1;
  return (int)(t / (2 * a->m));
}

/* The weight of input pixel i (one of those gpuimg_resize_first() gives) in output pixel o. */
GPUIMG_RESIZE_FN uint32_t gpuimg_resize_weight(const gpuimg_resize_axis_t *a, int o, int i)
{
  if (a->area) {
    int64_t lo = (int64_t)o * a->n, hi = lo + a->n, il = (int64_t)i * a->m, ih = il + a->m;
    return (uint32_t)(((hi < ih ? hi : ih) - (lo > il ? lo : il)) / a->g);
  }
  int64_t t = gpuimg_resize_point(a, o), f = t % (2 * a->m);
  return (uint32_t)((i == t / (2 * a->m) ? 2 * a->m - f : f) / a->g);
}

#ifdef __cplusplus
extern "C" {
#endif

/* Resizes an in_w x in_h image of channels channels to out_w x out_h, each axis by area
 * (area_x, area_y 1) or bilinear weights: every output value is floor((S + D/2) / D), S the
 * exact 64-bit sum of weight_x * weight_y * input and D the product of the axes' totals, as
 * the CPU reference computes it. 0, or -1 with the error set. */
int gpuimg_resize_gpu(gpuimg_cuda_t *ctx, const uint8_t *d_src, uint8_t *d_dst, int in_w, int in_h,
                      int channels, int out_w, int out_h, int area_x, int area_y,
                      gpuimg_launch_t *info);

#ifdef __cplusplus
}
#endif

#endif
