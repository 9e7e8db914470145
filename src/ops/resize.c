/* resize.c: the resize operation: its declaration (the output size from --width, --height,
 * --scale or --fit; the filter per axis; shrink-on-load) and the CPU reference (exact
 * fixed-point area and bilinear weights, separable, on row bands). */
#include "resize_cpu.h"
#include "ops.h"
#include "resize.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define RESIZE_MAX_SIDE (1 << 30)
#define RESIZE_MAX_SCALE 1000.0
/* Sums of weight * 255 must stay below 2^64: the product of the axes' totals below this. */
#define RESIZE_MAX_TOTAL ((uint64_t)1 << 55)

/* Division by total rounded to nearest, floor((sum + total / 2) / total): by a shift when
 * total is a power of two (1 included; whole-number area factors of 2, 4, 8, as in the usual
 * thumbnail's shrink after a reduced decode); else for sums below 2^32 by a multiplication
 * with M = floor((2^64 - 1) / total) + 1, whose product's high 64 bits are the exact quotient
 * of any 32-bit numerator (Lemire, Kaser and Kurz, "Faster remainder by direct computation",
 * 2019), taken in two 32-bit halves; else a 64-bit division. */
typedef struct {
  uint64_t total, half, m;
  int shift; /* log2(total) when total is a power of two, else -1 */
} divider_t;

static divider_t divider(uint64_t total)
{
  divider_t d = {total, total / 2, UINT64_MAX / total + 1, -1};
  if ((total & (total - 1)) == 0)
    for (d.shift = 0; ((uint64_t)1 << d.shift) < total; d.shift++) {
    }
  return d;
}

static inline uint8_t divide(const divider_t *d, uint64_t sum)
{
  uint64_t n = sum + d->half;
  if (d->shift >= 0)
    return (uint8_t)(n >> d->shift);
  if (n >> 32)
    return (uint8_t)(n / d->total);
  uint64_t lo = n * (d->m & 0xffffffffu), hi = n * (d->m >> 32) + (lo >> 32);
  return (uint8_t)(hi >> 32);
}

/* The columns' weighted sums of an output row's input rows, per input pixel and channel: 32-bit
 * where every sum fits (255 times the y axis's total below 2^32: a total, the input's rows
 * over gcd(rows in, rows out) for area or twice the output's over it for bilinear, of at most
 * 16,843,009), else 64-bit. */
typedef struct {
  uint32_t *narrow;
  uint64_t *wide;
} columns_t;

static inline uint64_t column(const columns_t *col, size_t i)
{
  return col->narrow ? col->narrow[i] : col->wide[i];
}

/* One output pixel of c channels from its taps' weights w (count of them) over the columns'
 * sums from index i. Inlined with c constant below, so that the sums stay in registers (a
 * copy per width of sum, without column()'s test, measured no faster). */
static inline void resize_pixel(const columns_t *col, size_t i, const uint32_t *w, int count, int c,
                                const divider_t *div, uint8_t *d)
{
  uint64_t sum[4] = {0, 0, 0, 0};
  for (int k = 0; k < count; k++, i += (size_t)c)
    for (int ch = 0; ch < c; ch++)
      sum[ch] += (uint64_t)w[k] * column(col, i + (size_t)ch);
  for (int ch = 0; ch < c; ch++)
    d[ch] = divide(div, sum[ch]);
}

/* One output row from the columns' sums; taps is the x axis's table (kernels/resize.h); c is 1
 * to 4. */
static void resize_row(const columns_t *col, const gpuimg_resize_tap_t *taps, int out_w, int c,
                       const divider_t *div, uint8_t *d)
{
  const uint32_t *weights = gpuimg_resize_taps_weights(taps, out_w);
  for (int x = 0; x < out_w; x++, d += c) {
    const uint32_t *w = weights + taps[x].off;
    size_t i = (size_t)taps[x].first * (size_t)c;
    switch (c) { /* the same function, with c known (gpuimg_resize_cpu_rows refuses others) */
    case 1:
      resize_pixel(col, i, w, taps[x].count, 1, div, d);
      break;
    case 2:
      resize_pixel(col, i, w, taps[x].count, 2, div, d);
      break;
    case 3:
      resize_pixel(col, i, w, taps[x].count, 3, div, d);
      break;
    default: /* 4 */
      resize_pixel(col, i, w, taps[x].count, 4, div, d);
      break;
    }
  }
}

/* Adds weight wy times input row s (n bytes) to the columns' sums (the first row sets them: no
 * clearing pass), for each width of sum; the loops the resize spends most of its time in,
 * vectorised 8 sums at a time where the CPU has AVX2 (GPUIMG_CPU_CLONES). */
#define ADD_ROW(name, type)                                                                        \
  GPUIMG_CPU_CLONES static void name(type *restrict col, const uint8_t *restrict s, size_t n,      \
                                     type wy, int first)                                           \
  {                                                                                                \
    if (first)                                                                                     \
      for (size_t i = 0; i < n; i++)                                                               \
        col[i] = wy * s[i];                                                                        \
    else                                                                                           \
      for (size_t i = 0; i < n; i++)                                                               \
        col[i] += wy * s[i];                                                                       \
  }
ADD_ROW(add_row_narrow, uint32_t)
ADD_ROW(add_row_wide, uint64_t)

/* Separable: for each output row, the weighted sum of its input rows (every column at once,
 * contiguous), then each output pixel's weighted sum of those columns. The sums are exact
 * integers, so their order does not matter: the CUDA kernels (the same two passes) get the same. */
int gpuimg_resize_cpu_rows(const gpuimg_image_t *src, gpuimg_image_t *dst, int area_x, int area_y,
                           int y0, int y1)
{
  gpuimg_resize_axis_t ax = gpuimg_resize_axis(src->width, dst->width, area_x);
  gpuimg_resize_axis_t ay = gpuimg_resize_axis(src->height, dst->height, area_y);
  int c = src->channels;
  if (c < 1 || c > 4) { /* gpuimg.h's images have 1 to 4 */
    gpuimg_error_set(GPUIMG_EXIT_INPUT, "resize", "unsupported channel count %d", c);
    return -1;
  }
  size_t row_len = (size_t)src->width * (size_t)c;
  int narrow = (uint64_t)ay.total * 255 <= UINT32_MAX;
  columns_t col = {NULL, NULL};
  void *sums = malloc(row_len * (narrow ? sizeof *col.narrow : sizeof *col.wide));
  gpuimg_resize_tap_t *tx = malloc(gpuimg_resize_taps_bytes(&ax));
  if (!sums || !tx) {
    free(sums);
    free(tx);
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, "resize", "out of memory");
    return -1;
  }
  if (narrow)
    col.narrow = sums;
  else
    col.wide = sums;
  gpuimg_resize_taps_fill(&ax, tx);
  divider_t div = divider((uint64_t)ax.total * (uint64_t)ay.total);
  for (int y = y0; y < y1; y++) {
    int count, first = gpuimg_resize_first(&ay, y, &count);
    for (int j = first; j < first + count; j++) {
      uint32_t wy = gpuimg_resize_weight(&ay, y, j);
      const uint8_t *s = src->data + (size_t)j * row_len;
      if (col.narrow)
        add_row_narrow(col.narrow, s, row_len, wy, j == first);
      else
        add_row_wide(col.wide, s, row_len, wy, j == first);
    }
    resize_row(&col, tx, dst->width, c, &div,
               dst->data + (size_t)y * (size_t)dst->width * (size_t)c);
  }
  free(tx);
  free(sums);
  return 0;
}

/* --filter: auto (area to shrink an axis, bilinear to enlarge it), area, bilinear. */
enum { FILTER_AUTO, FILTER_AREA, FILTER_BILINEAR };
static const char *const resize_filters[] = {"auto", "area", "bilinear", NULL};

/* resize's parameters: one way of giving the size (width and/or height, scale, or fit). */
typedef struct {
  gpuimg_params_common_t common;
  int width, height; /* 0: not given */
  double scale;      /* 0: not given */
  int fit_w, fit_h;  /* 0: not given */
  int filter;
} resize_params_t;
GPUIMG_PARAMS_CHECK(resize_params_t);

static const resize_params_t resize_defaults = {.common = {.variant = GPUIMG_VARIANT_FAST}};

static int parse_scale(const gpuimg_option_t *o, const char *spelled, const char *arg, void *target)
{
  (void)o;
  /* Digits and a point only: strtod would also read blanks, signs, exponents and "inf". */
  errno = 0;
  double v = gpuimg_options_decimal(arg, 0, 1) ? strtod(arg, NULL) : 0;
  if (errno || v <= 0 || v > RESIZE_MAX_SCALE) {
    gpuimg_error_set(GPUIMG_EXIT_USAGE, spelled,
                     "invalid value '%s' (expected a number above 0, at most %g)", arg,
                     RESIZE_MAX_SCALE);
    return -1;
  }
  ((resize_params_t *)target)->scale = v;
  return 0;
}

static int parse_fit(const gpuimg_option_t *o, const char *spelled, const char *arg, void *target)
{
  resize_params_t *p = target;
  long long vw, vh;
  (void)o;
  if (gpuimg_options_size(arg, RESIZE_MAX_SIDE, &vw, &vh) == 0) {
    p->fit_w = (int)vw;
    p->fit_h = (int)vh;
    return 0;
  }
  gpuimg_error_set(GPUIMG_EXIT_USAGE, spelled,
                   "invalid value '%s' (expected WxH, each from 1 to %d)", arg, RESIZE_MAX_SIDE);
  return -1;
}

static const gpuimg_option_t resize_options[] = {
    {.long_name = "width",
     .kind = GPUIMG_OPTION_INT,
     .offset = offsetof(resize_params_t, width),
     .min = 1,
     .max = RESIZE_MAX_SIDE,
     .metavar = "W",
     .help = "output width; alone, the height keeps the aspect ratio"},
    {.long_name = "height",
     .kind = GPUIMG_OPTION_INT,
     .offset = offsetof(resize_params_t, height),
     .min = 1,
     .max = RESIZE_MAX_SIDE,
     .metavar = "H",
     .help = "output height; alone, the width keeps the aspect ratio"},
    {.long_name = "scale",
     .kind = GPUIMG_OPTION_CUSTOM,
     .parse = parse_scale,
     .metavar = "S",
     .help = "both sides times S (0 < S <= 1000), rounded"},
    {.long_name = "fit",
     .kind = GPUIMG_OPTION_CUSTOM,
     .parse = parse_fit,
     .metavar = "WxH",
     .help = "the largest size inside WxH, aspect ratio kept"},
    {.long_name = "filter",
     .kind = GPUIMG_OPTION_CHOICE,
     .offset = offsetof(resize_params_t, filter),
     .choices = resize_filters,
     .metavar = "F",
     .help = "auto, area or bilinear (default auto: area when shrinking,\n"
             "bilinear when enlarging, each axis on its own)"},
    {0},
};

static int resize_check(const void *params)
{
  const resize_params_t *p = params;
  int ways = (p->width || p->height) + (p->scale > 0) + (p->fit_w > 0);
  if (ways == 1)
    return 0;
  gpuimg_error_set(GPUIMG_EXIT_USAGE, "resize", "%s",
                   ways ? "give one of --width/--height, --scale and --fit"
                        : "no size given (--width, --height, --scale or --fit)");
  return -1;
}

/* a * b / c rounded to nearest (half up), at least 1; a, b, c >= 1 and below 2^31. */
static int64_t scaled(int64_t a, int64_t b, int64_t c)
{
  int64_t v = a * b / c + (a * b % c * 2 >= c);
  return v < 1 ? 1 : v;
}

/* Whether an axis of n pixels going to m is resized by area weights. */
static int is_area(const resize_params_t *p, int n, int m)
{
  return p->filter == FILTER_AUTO ? m < n : p->filter == FILTER_AREA;
}

static int resize_out_size(const void *params, int in_w, int in_h, int *out_w, int *out_h)
{
  const resize_params_t *p = params;
  int64_t w, h;
  if (p->fit_w) {
    int by_width = (int64_t)p->fit_w * in_h <= (int64_t)p->fit_h * in_w;
    w = by_width ? p->fit_w : scaled(in_w, p->fit_h, in_h);
    h = by_width ? scaled(in_h, p->fit_w, in_w) : p->fit_h;
  } else if (p->scale > 0) {
    w = llround(in_w * p->scale);
    h = llround(in_h * p->scale);
  } else {
    w = p->width ? p->width : scaled(in_w, p->height, in_h);
    h = p->height ? p->height : scaled(in_h, p->width, in_w);
  }
  w = w < 1 ? 1 : w;
  h = h < 1 ? 1 : h;
  if (w > RESIZE_MAX_SIDE || h > RESIZE_MAX_SIDE) {
    gpuimg_error_set(GPUIMG_EXIT_USAGE, "resize",
                     "a %dx%d image would become %lldx%lld, over %d "
                     "pixels a side",
                     in_w, in_h, (long long)w, (long long)h, RESIZE_MAX_SIDE);
    return -1;
  }
  gpuimg_resize_axis_t ax = gpuimg_resize_axis(in_w, (int)w, is_area(p, in_w, (int)w));
  gpuimg_resize_axis_t ay = gpuimg_resize_axis(in_h, (int)h, is_area(p, in_h, (int)h));
  if ((double)ax.total * (double)ay.total >= (double)RESIZE_MAX_TOTAL) {
    gpuimg_error_set(GPUIMG_EXIT_USAGE, "resize", "%dx%d to %lldx%lld: sizes too far apart", in_w,
                     in_h, (long long)w, (long long)h);
    return -1;
  }
  *out_w = (int)w;
  *out_h = (int)h;
  return 0;
}

static int resize_cpu_rows(const void *params, const gpuimg_image_t *src,
                           const gpuimg_image_t *mask, gpuimg_image_t *dst, int y0, int y1)
{
  const resize_params_t *p = params;
  (void)mask;
  return gpuimg_resize_cpu_rows(src, dst, is_area(p, src->width, dst->width),
                                is_area(p, src->height, dst->height), y0, y1);
}

#ifdef GPUIMG_HAVE_CUDA
static int resize_gpu_step(gpuimg_cuda_t *ctx, const void *params, const uint8_t *d_src,
                           const uint8_t *d_mask, uint8_t *d_dst, int width, int height,
                           int channels, gpuimg_launch_t *info)
{
  const resize_params_t *p = params;
  int ow, oh;
  (void)d_mask;
  if (resize_out_size(params, width, height, &ow, &oh) < 0)
    return -1;
  return gpuimg_resize_gpu(ctx, d_src, d_dst, width, height, channels, ow, oh,
                           is_area(p, width, ow), is_area(p, height, oh), info);
}
#endif

static int resize_launch(const void *params, int w, int h, int c, const gpuimg_launch_env_t *env,
                         gpuimg_launch_t *l)
{
  int ow, oh;
  if (resize_out_size(params, w, h, &ow, &oh) < 0)
    return GPUIMG_LAUNCH_IMPOSSIBLE;
  return gpuimg_resize_launch(w, c, ow, oh, env, l);
}

/* Shrink-on-load, as libvips's thumbnail does: decode at 1/r (r a power of two up to max) only
 * when the image shrinks at least 2r times on both axes, so that the area resize is left at
 * least a 2x reduction (a plain 2x shrink decodes at full size); and only when both axes are
 * resized by area (a bilinear axis samples the image, which a reduced decode would change
 * beyond its tolerance). */
static int resize_load_reduction(const void *params, int full_w, int full_h, int max, void *fixed)
{
  const resize_params_t *p = params;
  int tw, th, r = 1;
  if (resize_out_size(params, full_w, full_h, &tw, &th) < 0) {
    gpuimg_error_clear(); /* the run itself reports it */
    return 1;
  }
  if (!is_area(p, full_w, tw) || !is_area(p, full_h, th))
    return 1;
  while (r * 2 <= max && full_w >= (int64_t)4 * r * tw && full_h >= (int64_t)4 * r * th)
    r *= 2;
  resize_params_t *f = fixed;
  memset(fixed, 0, GPUIMG_PARAMS_SIZE);
  *f = *p;
  f->width = tw;
  f->height = th;
  f->scale = 0;
  f->fit_w = f->fit_h = 0;
  f->filter = FILTER_AREA;
  return r;
}

static void resize_report(const void *params, const gpuimg_report_sink_t *sink)
{
  const resize_params_t *p = params;
  if (p->width)
    sink->number(sink->ctx, "width", p->width);
  if (p->height)
    sink->number(sink->ctx, "height", p->height);
  if (p->scale > 0)
    sink->number(sink->ctx, "scale", p->scale);
  if (p->fit_w) {
    sink->number(sink->ctx, "fit_width", p->fit_w);
    sink->number(sink->ctx, "fit_height", p->fit_h);
  }
  sink->string(sink->ctx, "filter", resize_filters[p->filter]);
}

const gpuimg_op_t gpuimg_op_resize = {
    .name = "resize",
    .summary = "change the size: area means to shrink, bilinear to enlarge",
    .options = resize_options,
    GPUIMG_PARAMS(resize_params_t, resize_defaults),
    .out_size = resize_out_size,
    .check = resize_check,
    .load_reduction = resize_load_reduction,
    .run_cpu_rows = resize_cpu_rows,
    GPUIMG_RUN_GPU(resize_gpu_step),
    .launch = resize_launch,
    .work = 1.0,
    .report = resize_report,
};
