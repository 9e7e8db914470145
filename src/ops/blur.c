/* blur.c: the blur operation: its declaration and the CPU reference (exact running box sums). */
#include "blur_cpu.h"
#include "ops.h"
#include "blur.h"

#include <stdlib.h>
#include <string.h>

/* Exact floor(x / d) for any 32-bit x by one multiply and shifts (Granlund and
 * Montgomery's round-up method); d >= 2. Cheaper than a divide in the inner loop. */
typedef struct {
  uint32_t m;
  int s1, s2;
} divider_t;

static divider_t divider_make(uint32_t d)
{
  int l = 0;
  while (((uint64_t)1 << l) < d)
    l++;
  divider_t v;
  v.m = (uint32_t)((((uint64_t)1 << 32) * (((uint64_t)1 << l) - d)) / d + 1);
  v.s1 = 1;
  v.s2 = l - 1;
  return v;
}

static inline uint32_t divider_apply(uint32_t x, divider_t v)
{
  uint32_t t = (uint32_t)(((uint64_t)v.m * x) >> 32);
  return (t + ((x - t) >> v.s1)) >> v.s2;
}

/* One output row from its column sums: padded exclusive prefix sums, then differences. */
static inline __attribute__((always_inline)) void blur_row(const uint32_t *col, uint32_t *prefix,
                                                           uint8_t *d, int w, int r, const int c,
                                                           uint32_t half, divider_t div)
{
  uint32_t acc[4] = {0, 0, 0, 0};
  uint32_t *p = prefix;
  for (int k = 0; k < r; k++, p += c)
    for (int ch = 0; ch < c; ch++) {
      p[ch] = acc[ch];
      acc[ch] += col[ch];
    }
  for (int x = 0; x < w; x++, p += c)
    for (int ch = 0; ch < c; ch++) {
      p[ch] = acc[ch];
      acc[ch] += col[(size_t)x * c + ch];
    }
  const uint32_t *edge = col + (size_t)(w - 1) * c;
  for (int k = 0; k <= r; k++, p += c)
    for (int ch = 0; ch < c; ch++) {
      p[ch] = acc[ch];
      acc[ch] += edge[ch];
    }
  size_t n = (size_t)w * c, span = (size_t)(2 * r + 1) * c;
  for (size_t i = 0; i < n; i++)
    d[i] = (uint8_t)divider_apply(prefix[i + span] - prefix[i] + half, div);
}

/* col[i] = the sum of rows y0-r .. y0+r, clamped: row 0 stands for the rows above the image
 * and the last row for those below, so a band starting at y0 begins where a whole-image run
 * would be when it reaches y0 (the same uint32 values), at the cost of at most h row adds. */
static void blur_columns_init(const gpuimg_image_t *src, int r, int y0, uint32_t *col)
{
  size_t row_len = (size_t)src->width * (size_t)src->channels;
  int last = src->height - 1;
  uint32_t above = (uint32_t)(r - y0 > 0 ? r - y0 : 0);
  uint32_t below = (uint32_t)(y0 + r - last > 0 ? y0 + r - last : 0);
  const uint8_t *first_row = src->data, *last_row = src->data + (size_t)last * row_len;
  for (size_t i = 0; i < row_len; i++)
    col[i] = above * first_row[i] + below * last_row[i];
  int lo = y0 - r > 0 ? y0 - r : 0, hi = y0 + r < last ? y0 + r : last;
  for (int k = lo; k <= hi; k++) {
    const uint8_t *row = src->data + (size_t)k * row_len;
    for (size_t i = 0; i < row_len; i++)
      col[i] += row[i];
  }
}

/* Rows [y0, y1) of dst from the column sums col of row y0 (blur_columns_init()), prefix a row
 * of scratch: col moves down a row at a time, each row then becomes output (blur_row()). Built
 * for x86-64-v3 too (GPUIMG_CPU_CLONES): 32-byte vectors for the column moves and the
 * divisions. */
GPUIMG_CPU_CLONES static void blur_rows(const gpuimg_image_t *src, int r, gpuimg_image_t *dst,
                                        int y0, int y1, uint32_t *col, uint32_t *prefix)
{
  int w = src->width, c = src->channels, last = src->height - 1;
  size_t row_len = (size_t)w * (size_t)c;
  uint32_t count = (uint32_t)(2 * r + 1) * (uint32_t)(2 * r + 1);
  uint32_t half = count / 2;
  divider_t div = divider_make(count);
  for (int y = y0; y < y1; y++) {
    if (y > y0) {
      const uint8_t *in = src->data + (size_t)(y + r < last ? y + r : last) * row_len;
      const uint8_t *out = src->data + (size_t)(y - r - 1 > 0 ? y - r - 1 : 0) * row_len;
      for (size_t i = 0; i < row_len; i++)
        col[i] += (uint32_t)in[i] - (uint32_t)out[i];
    }
    uint8_t *d = dst->data + (size_t)y * row_len;
    switch (c) { /* constant channel counts let the compiler keep sums in registers */
    case 1:
      blur_row(col, prefix, d, w, r, 1, half, div);
      break;
    case 2:
      blur_row(col, prefix, d, w, r, 2, half, div);
      break;
    case 3:
      blur_row(col, prefix, d, w, r, 3, half, div);
      break;
    default:
      blur_row(col, prefix, d, w, r, 4, half, div);
      break;
    }
  }
}

/* The blur runs in two passes per output row, both O(1) per value whatever r is:
 * col[i] keeps, for every x and channel, the sum of the 2r+1 clamped rows around y
 * (one add and one subtract per value when y advances, contiguous, vectorised), and
 * the row of column sums, padded with r copies of its edge pixels, becomes exclusive
 * prefix sums whose differences are the window sums. uint32 arithmetic wraps, but
 * every difference is a true window sum below 2^32, so it is exact. */
int gpuimg_blur_cpu_rows(const gpuimg_image_t *src, int radius, gpuimg_image_t *dst, int y0, int y1)
{
  int w = src->width, c = src->channels, r = radius;
  size_t row_len = (size_t)w * (size_t)c;
  size_t pad_len = ((size_t)w + 2 * (size_t)r) * (size_t)c;

  if (r == 0) {
    memcpy(dst->data + (size_t)y0 * row_len, src->data + (size_t)y0 * row_len,
           row_len * (size_t)(y1 - y0));
    return 0;
  }
  uint32_t *col = malloc(row_len * sizeof *col);
  uint32_t *prefix = malloc((pad_len + (size_t)c) * sizeof *prefix);
  if (!col || !prefix) {
    free(col);
    free(prefix);
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, "blur", "out of memory");
    return -1;
  }
  blur_columns_init(src, r, y0, col);
  blur_rows(src, r, dst, y0, y1, col, prefix);
  free(col);
  free(prefix);
  return 0;
}

int gpuimg_blur_cpu(const gpuimg_image_t *src, int radius, gpuimg_image_t *dst)
{
  return gpuimg_blur_cpu_rows(src, radius, dst, 0, src->height);
}

typedef gpuimg_radius_params_t blur_params_t;
GPUIMG_PARAMS_CHECK(blur_params_t);

static const blur_params_t blur_defaults = {.common = {.variant = GPUIMG_VARIANT_FAST},
                                            .radius = 2};

static const gpuimg_option_t blur_options[] = {
    GPUIMG_OPTION_RADIUS(blur_params_t, "window radius, 0..2047 (default 2)"),
    GPUIMG_OPTION_NAIVE("naive CUDA kernel (global-memory window)"),
    GPUIMG_OPTION_TILED("tiled CUDA kernel (shared-memory tile + apron)"),
    GPUIMG_OPTION_TILE("tiled kernel's tile: 4-byte pixels (default) or floats"),
    {0},
};

static int blur_cpu_rows(const void *params, const gpuimg_image_t *src, const gpuimg_image_t *mask,
                         gpuimg_image_t *dst, int y0, int y1)
{
  const blur_params_t *p = params;
  (void)mask;
  return gpuimg_blur_cpu_rows(src, p->radius, dst, y0, y1);
}

#ifdef GPUIMG_HAVE_CUDA
static int blur_gpu_step(gpuimg_cuda_t *ctx, const void *params, const uint8_t *d_src,
                         const uint8_t *d_mask, uint8_t *d_dst, int width, int height, int channels,
                         gpuimg_launch_t *info)
{
  const blur_params_t *p = params;
  (void)d_mask;
  return gpuimg_blur_gpu(ctx, d_src, d_dst, width, height, channels, p->radius, p->common.variant,
                         p->common.tile, info);
}
#endif

static void blur_report(const void *params, const gpuimg_report_sink_t *sink)
{
  const blur_params_t *p = params;
  sink->number(sink->ctx, "radius", p->radius);
  gpuimg_ops_report_tile(params, sink);
}

static int blur_launch(const void *params, int w, int h, int c, const gpuimg_launch_env_t *env,
                       gpuimg_launch_t *l)
{
  const blur_params_t *p = params;
  return gpuimg_blur_launch(p->common.variant, p->common.tile, p->radius, w, h, c, env, l);
}

const gpuimg_op_t gpuimg_op_blur = {
    .name = "blur",
    .summary = "box (mean) blur over the (2N+1)x(2N+1) window, edges clamped",
    .options = blur_options,
    GPUIMG_PARAMS(blur_params_t, blur_defaults),
    .run_cpu_rows = blur_cpu_rows,
    GPUIMG_RUN_GPU(blur_gpu_step),
    .launch = blur_launch,
    .work = 1.0,
    .report = blur_report,
};
