/* test_resize.c: the resize operation's CPU reference against a brute-force floating-point
 * definition (exact box means for whole factors, within 1 otherwise) and, byte for byte,
 * against the man page's fixed-point definition written out here on its own, also where its
 * sums pass 32 bits; its output sizes. */
#define TEST_NAME "test_resize"
#include "test_fail.h"
#include "ops.h"
#include "resize_cpu.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t seed = 12345;

static uint8_t rnd8(void)
{
  seed = seed * 1664525u + 1013904223u;
  return (uint8_t)(seed >> 24);
}

/* The real-valued weight of input pixel i in output pixel o on an axis of n to m: area, the
 * part of o's span [o n/m, (o+1) n/m) that pixel i covers, over the span's length; bilinear,
 * the tent around the clamped sample point (o + 0.5) n / m - 0.5. */
static double weight(int area, int n, int m, int o, int i)
{
  double scale = (double)n / m;
  if (area) {
    double lo = o * scale, hi = (o + 1) * scale;
    double a = lo > i ? lo : i, b = hi < i + 1 ? hi : i + 1;
    return b > a ? (b - a) / scale : 0;
  }
  double s = (o + 0.5) * scale - 0.5;
  s = s < 0 ? 0 : s > n - 1 ? n - 1 : s;
  double d = fabs(s - i);
  return d < 1 ? 1 - d : 0;
}

/* Brute force: every input pixel's weight in every output pixel, in doubles. */
static double reference(const gpuimg_image_t *src, int ow, int oh, int ax, int ay, int x, int y,
                        int ch)
{
  double v = 0;
  for (int j = 0; j < src->height; j++) {
    double wy = weight(ay, src->height, oh, y, j);
    if (wy == 0)
      continue;
    for (int i = 0; i < src->width; i++)
      v += wy * weight(ax, src->width, ow, x, i) *
           src->data[((size_t)j * src->width + i) * src->channels + ch];
  }
  return v;
}

/* Whole factors kx, ky (area both ways): the exact box mean, rounded half up. */
static int box_mean(const gpuimg_image_t *src, int kx, int ky, int x, int y, int ch)
{
  int64_t sum = 0, n = (int64_t)kx * ky;
  for (int64_t j = (int64_t)y * ky; j < (int64_t)(y + 1) * ky; j++)
    for (int64_t i = (int64_t)x * kx; i < (int64_t)(x + 1) * kx; i++)
      sum += src->data[((size_t)j * src->width + i) * src->channels + ch];
  return (int)((2 * sum + n) / (2 * n));
}

static int64_t gcd(int64_t a, int64_t b)
{
  return b ? gcd(b, a % b) : a;
}

/* The man page's integer weight of input pixel i in output pixel o on an axis of n to m, and
 * (*total) what an output pixel's weights sum to. area: the overlap of [o n, (o+1) n) and
 * [i m, (i+1) m), over gcd(n, m); bilinear: with t = (2o+1) n - m clamped to [0, 2m (n-1)],
 * pixel t / 2m weighs (2m - t mod 2m) / g and the next one (t mod 2m) / g. */
static int64_t int_weight(int area, int64_t n, int64_t m, int64_t o, int64_t i, int64_t *total)
{
  int64_t g = gcd(n, m);
  if (area) {
    int64_t lo = o * n > i * m ? o * n : i * m;
    int64_t hi = (o + 1) * n < (i + 1) * m ? (o + 1) * n : (i + 1) * m;
    *total = n / g;
    return hi > lo ? (hi - lo) / g : 0;
  }
  int64_t t = (2 * o + 1) * n - m, top = 2 * m * (n - 1);
  t = t < 0 ? 0 : t > top ? top : t;
  *total = 2 * m / g;
  if (i == t / (2 * m))
    return (2 * m - t % (2 * m)) / g;
  return i == t / (2 * m) + 1 ? t % (2 * m) / g : 0;
}

/* The fixed-point result: the sum of wx * wy * value over the input, divided by the product
 * of the totals rounded half up. */
static int exact_value(const gpuimg_image_t *src, int ow, int oh, int ax, int ay, int x, int y,
                       int ch)
{
  uint64_t sum = 0;
  int64_t tx = 1, ty = 1;
  for (int j = 0; j < src->height; j++) {
    int64_t wy = int_weight(ay, src->height, oh, y, j, &ty);
    for (int i = 0; i < src->width && wy; i++)
      sum += (uint64_t)(wy * int_weight(ax, src->width, ow, x, i, &tx)) *
             src->data[((size_t)j * src->width + i) * src->channels + ch];
  }
  uint64_t d = (uint64_t)tx * (uint64_t)ty;
  return (int)((sum + d / 2) / d);
}

static void check_case(int w, int h, int c, int ow, int oh, int ax, int ay)
{
  gpuimg_image_t src, dst;
  if (gpuimg_image_alloc(&src, w, h, c) < 0 || gpuimg_image_alloc(&dst, ow, oh, c) < 0)
    fail("out of memory");
  for (size_t k = 0; k < gpuimg_image_bytes(w, h, c); k++)
    src.data[k] = rnd8();
  if (gpuimg_resize_cpu_rows(&src, &dst, ax, ay, 0, oh) < 0)
    fail("%s", gpuimg_error_message());
  int whole = ax && ay && w % ow == 0 && h % oh == 0;
  for (int y = 0; y < oh; y++)
    for (int x = 0; x < ow; x++)
      for (int ch = 0; ch < c; ch++) {
        int got = dst.data[((size_t)y * ow + x) * c + ch];
        double want = reference(&src, ow, oh, ax, ay, x, y, ch);
        int exact = whole ? box_mean(&src, w / ow, h / oh, x, y, ch) : -1;
        if (whole ? got != exact : fabs(got - want) > 1.0)
          fail("%dx%dx%d to %dx%d (%s x, %s y) at (%d,%d,%d): %d, want %s%.3f", w, h, c, ow, oh,
               ax ? "area" : "bilinear", ay ? "area" : "bilinear", x, y, ch, got,
               whole ? "exactly " : "", whole ? (double)exact : want);
        int fixed = exact_value(&src, ow, oh, ax, ay, x, y, ch);
        if (got != fixed)
          fail("%dx%dx%d to %dx%d (%s x, %s y) at (%d,%d,%d): %d, the fixed-point definition "
               "gives %d",
               w, h, c, ow, oh, ax ? "area" : "bilinear", ay ? "area" : "bilinear", x, y, ch, got,
               fixed);
      }
  gpuimg_image_free(&src);
  gpuimg_image_free(&dst);
}

static void test_values(void)
{
  static const int sizes[][4] = {
      {8, 6, 4, 3}, {9, 9, 3, 3},  {12, 8, 4, 2},   {33, 17, 11, 1},  {1, 1, 1, 1},
      {7, 5, 3, 2}, {10, 7, 4, 3}, {33, 17, 16, 9}, {5, 1, 2, 1},     {1, 9, 1, 4},
      {3, 2, 7, 5}, {1, 1, 5, 3},  {4, 4, 9, 9},    {33, 17, 50, 40}, {6, 9, 4, 13},
  };
  int n = 0, whole = 0;
  for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++)
    for (int c = 1; c <= 4; c++)
      for (int f = 0; f < 4; f++) {
        const int *s = sizes[k];
        check_case(s[0], s[1], c, s[2], s[3], f & 1, f >> 1);
        n++;
        whole += (f == 3 && s[0] % s[2] == 0 && s[1] % s[3] == 0);
      }
  printf("values: %d cases (%d whole-factor area cases exact), every other within 1 of the "
         "real-valued area mean or bilinear sample, all equal to the fixed-point definition\n",
         n, whole);
}

/* Axes whose column sums pass 32 bits (255 times the y axis's total above 2^32 - 1: the
 * resize's 64-bit columns): an area shrink of a column of 16,843,010 pixels and a bilinear
 * enlargement to 8,421,505 rows, against both definitions; and the same column all 255,
 * whose sums pass 2^32 (the divider's 64-bit division), to one pixel and to three; and one
 * row shorter, the last total whose sums fit 32 bits (255 * 16,843,009 = 2^32 - 1). */
static void test_wide_sums(void)
{
  const int tall = 16843010; /* 255 * tall > 2^32 - 1 */
  check_case(1, tall, 1, 1, 1, 1, 1);
  check_case(1, 3, 1, 1, tall / 2, 0, 0);
  gpuimg_image_t src, dst;
  if (gpuimg_image_alloc(&src, 1, tall, 1) < 0 || gpuimg_image_alloc(&dst, 1, 3, 1) < 0)
    fail("out of memory");
  memset(src.data, 255, (size_t)tall);
  for (src.height = tall - 1; src.height <= tall; src.height++)
    for (int oh = 1; oh <= 3; oh += 2) {
      dst.height = oh;
      if (gpuimg_resize_cpu_rows(&src, &dst, 1, 1, 0, oh) < 0)
        fail("%s", gpuimg_error_message());
      for (int y = 0; y < oh; y++)
        if (dst.data[y] != 255)
          fail("a column of %d pixels of 255 to %d: %d at row %d", src.height, oh, dst.data[y], y);
    }
  src.height = tall;
  gpuimg_image_free(&src);
  gpuimg_image_free(&dst);
  printf("wide sums: columns past 32 bits, area and bilinear, equal to the definitions\n");
}

/* An image of 5 channels (gpuimg.h's images have 1 to 4, which gpuimg_image_alloc() holds
 * to: this one is made by hand) is refused with a message. */
static void test_channels(void)
{
  static uint8_t src_px[4 * 4 * 5], dst_px[2 * 2 * 5];
  gpuimg_image_t src = {.width = 4, .height = 4, .channels = 5, .data = src_px};
  gpuimg_image_t dst = {.width = 2, .height = 2, .channels = 5, .data = dst_px};
  memset(src_px, 7, sizeof src_px);
  if (gpuimg_resize_cpu_rows(&src, &dst, 1, 1, 0, 2) != -1 ||
      strcmp(gpuimg_error_message(), "resize: unsupported channel count 5") != 0)
    fail("5 channels: want -1 and \"resize: unsupported channel count 5\", got \"%s\"",
         gpuimg_error_message());
  gpuimg_error_clear();
  printf("channels: 5 refused\n");
}

/* The size resize makes of w x h under the options (name, value pairs). */
static void expect_size(const char *const *opts, int w, int h, int want_w, int want_h)
{
  const gpuimg_op_t *op = gpuimg_ops_find("resize");
  _Alignas(16) unsigned char p[GPUIMG_PARAMS_SIZE];
  int ow, oh;
  gpuimg_ops_init(op, p);
  for (int k = 0; opts[k]; k += 2)
    if (gpuimg_ops_set(op, p, opts[k], opts[k + 1]) < 0)
      fail("--%s %s: %s", opts[k], opts[k + 1], gpuimg_error_message());
  if (op->check(p) < 0 || gpuimg_op_out_size(op, p, w, h, &ow, &oh) < 0)
    fail("--%s %s on %dx%d: %s", opts[0], opts[1], w, h, gpuimg_error_message());
  if (ow != want_w || oh != want_h)
    fail("--%s %s on %dx%d gives %dx%d, want %dx%d", opts[0], opts[1], w, h, ow, oh, want_w,
         want_h);
}

static void test_sizes(void)
{
  expect_size((const char *[]){"width", "256", NULL}, 1600, 1200, 256, 192);
  expect_size((const char *[]){"width", "100", NULL}, 1024, 768, 100, 75);
  expect_size((const char *[]){"width", "3", NULL}, 10, 5, 3, 2);    /* 1.5 rounds up */
  expect_size((const char *[]){"width", "1", NULL}, 1000, 10, 1, 1); /* at least 1 */
  expect_size((const char *[]){"height", "100", NULL}, 1024, 768, 133, 100);
  expect_size((const char *[]){"width", "7", "height", "3", NULL}, 1024, 768, 7, 3);
  expect_size((const char *[]){"scale", "0.5", NULL}, 1023, 767, 512, 384);
  expect_size((const char *[]){"scale", "2.5", NULL}, 3, 1, 8, 3);
  expect_size((const char *[]){"scale", "0.001", NULL}, 100, 100, 1, 1);
  expect_size((const char *[]){"fit", "512x512", NULL}, 1024, 768, 512, 384);
  expect_size((const char *[]){"fit", "512x512", NULL}, 768, 1024, 384, 512);
  expect_size((const char *[]){"fit", "100x10", NULL}, 1024, 768, 13, 10);
  expect_size((const char *[]){"fit", "2000x2000", NULL}, 1024, 768, 2000, 1500);
  printf("sizes: --width, --height, both, --scale and --fit, rounded to nearest, at least 1\n");
}

int main(void)
{
  test_sizes();
  test_values();
  test_wide_sums();
  test_channels();
  printf("test_resize: all passed\n");
  return 0;
}
