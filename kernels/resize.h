/* resize.h: the resize launcher (kernels/resize.cu) and the fixed-point weights it shares with
 * the CPU reference (src/ops/resize.c), so that both compute the same integers. */
#ifndef GPUIMG_RESIZE_H
#define GPUIMG_RESIZE_H

#include "cuda_context.h"

#include <stddef.h>
#include <stdint.h>

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

/* One output pixel's taps in a table gpuimg_resize_taps_fill() builds: it reads count input
 * pixels from first, with the weights at off in the table's weight array. */
typedef struct {
  int64_t off;
  int32_t first, count;
} gpuimg_resize_tap_t;

/* Bytes of the table of axis a: m taps, then the weights (at most n + 2m of them, area's
 * n + m or bilinear's 2m), rounded up to 16 so that tables can follow one another. */
GPUIMG_RESIZE_FN size_t gpuimg_resize_taps_bytes(const gpuimg_resize_axis_t *a)
{
  size_t bytes = (size_t)a->m * sizeof(gpuimg_resize_tap_t) +
                 ((size_t)a->n + 2 * (size_t)a->m) * sizeof(uint32_t);
  return (bytes + 15) / 16 * 16;
}

/* The weights of a table (they follow its m taps). */
GPUIMG_RESIZE_FN const uint32_t *gpuimg_resize_taps_weights(const gpuimg_resize_tap_t *taps,
                                                            int64_t m)
{
  return (const uint32_t *)(taps + m);
}

/* Tabulates axis a (gpuimg_resize_first() and gpuimg_resize_weight() for every output pixel)
 * into table, gpuimg_resize_taps_bytes(a) bytes: the CPU reference and the GPU launcher read
 * the same integers. */
static inline void gpuimg_resize_taps_fill(const gpuimg_resize_axis_t *a, void *table)
{
  gpuimg_resize_tap_t *taps = (gpuimg_resize_tap_t *)table;
  uint32_t *w = (uint32_t *)(taps + a->m);
  int64_t k = 0;
  for (int o = 0; o < (int)a->m; o++) {
    int count, first = gpuimg_resize_first(a, o, &count);
    taps[o].off = k;
    taps[o].first = first;
    taps[o].count = count;
    for (int j = 0; j < count; j++)
      w[k++] = gpuimg_resize_weight(a, o, first + j);
  }
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

/* Output rows per band of column sums: at most 64 MiB of them (at least one row), so that a
 * tall enlargement does not need an out_h x in_w buffer. */
static inline int gpuimg_resize_band(int in_w, int channels, int out_h)
{
  size_t band = ((size_t)64 << 20) / ((size_t)in_w * (size_t)channels * sizeof(uint64_t));
  return band < 1 ? 1 : band > (size_t)out_h ? out_h : (int)band;
}

/* The launch gpuimg_resize_gpu() reports (the model makes the same): the row pass of a band,
 * 32x8 blocks by default, grid rows capped at 65535 (the kernels stride over the rest), two
 * launches a band. Its output bytes go out a byte a lane, C bytes apart; its reads follow the
 * taps, whose spacing is the scale's. */
static inline int gpuimg_resize_launch(int in_w, int channels, int out_w, int out_h,
                                       const gpuimg_launch_env_t *env, gpuimg_launch_t *l)
{
  char args[4] = {(char)('0' + channels), '\0'};
  unsigned bw = env->block_w ? (unsigned)env->block_w : 32;
  unsigned bh = env->block_w ? (unsigned)env->block_h : 8;
  int band = gpuimg_resize_band(in_w, channels, out_h), bands = (out_h + band - 1) / band;
  unsigned gy = gpuimg_launch_blocks(band, (int)bh);
  gpuimg_launch_set(l, "resize_rows_kernel", args, gpuimg_launch_blocks(out_w, (int)bw),
                    gy > 65535 ? 65535 : gy, bw, bh, 0);
  l->launches = 2 * bands;
  gpuimg_launch_access(l, GPUIMG_ACCESS_STORE, 1, channels, (int)bw, (long long)out_w * channels);
  return GPUIMG_LAUNCH_KERNEL;
}

#ifdef __cplusplus
}
#endif

#endif
