/* test_ops.c: the CPU reference operations checked byte for byte against SEMANTICS.md. */
#define TEST_NAME "test_ops"
#include "test_fail.h"
#include "blur_cpu.h"
#include "checkerboard_cpu.h"
#include "gray_cpu.h"
#include "ops.h"
#include "portrait_cpu.h"
#include "pipeline.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* splitmix64 with a fixed seed: the same images on every run and platform. */
static uint64_t rng_state;

static void rng_seed(uint64_t seed)
{
  rng_state = seed;
}

static uint32_t rng_next(void)
{
  uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return (uint32_t)((z ^ (z >> 31)) >> 32);
}

static gpuimg_image_t image_new(int w, int h, int c)
{
  gpuimg_image_t img;
  if (gpuimg_image_alloc(&img, w, h, c) < 0)
    fail("cannot allocate a %dx%dx%d image: %s", w, h, c, gpuimg_error_message());
  return img;
}

/* Random pixels, never all zeros. */
static gpuimg_image_t image_random(int w, int h, int c, uint64_t seed)
{
  gpuimg_image_t img = image_new(w, h, c);
  size_t n = gpuimg_image_bytes(w, h, c);
  rng_seed(seed);
  for (size_t i = 0; i < n; i++)
    img.data[i] = (uint8_t)rng_next();
  img.data[0] |= 1;
  return img;
}

static gpuimg_image_t image_from(int w, int h, int c, const uint8_t *bytes)
{
  gpuimg_image_t img = image_new(w, h, c);
  memcpy(img.data, bytes, gpuimg_image_bytes(w, h, c));
  return img;
}

/* Fails at the first byte that differs, naming pixel and channel. */
static void expect_same(const char *what, const gpuimg_image_t *got, const gpuimg_image_t *want)
{
  if (got->width != want->width || got->height != want->height || got->channels != want->channels)
    fail("%s: got a %dx%dx%d image, expected %dx%dx%d", what, got->width, got->height,
         got->channels, want->width, want->height, want->channels);
  size_t n = gpuimg_image_bytes(want->width, want->height, want->channels);
  for (size_t i = 0; i < n; i++)
    if (got->data[i] != want->data[i]) {
      size_t px = i / (size_t)want->channels;
      fail("%s (%dx%dx%d): x=%zu y=%zu channel %zu: got %u, expected %u", what, want->width,
           want->height, want->channels, px % (size_t)want->width, px / (size_t)want->width,
           i % (size_t)want->channels, got->data[i], want->data[i]);
    }
}

static void expect_bytes(const char *what, const gpuimg_image_t *got, int w, int h, int c,
                         const uint8_t *want)
{
  gpuimg_image_t ref = image_from(w, h, c, want);
  expect_same(what, got, &ref);
  gpuimg_image_free(&ref);
}

static int clampi(int v, int lo, int hi)
{
  return v < lo ? lo : v > hi ? hi : v;
}

/* ------------------------------------------------------------------------------------------ */
/* gray */

/* The registry's entry for name (each test names the operation it checks). */
static const gpuimg_op_t *op_named(const char *name)
{
  const gpuimg_op_t *op = gpuimg_ops_find(name);
  if (!op)
    fail("the registry has no operation %s", name);
  return op;
}

static gpuimg_image_t gray(const gpuimg_image_t *src)
{
  gpuimg_image_t dst =
      image_new(src->width, src->height, gpuimg_op_out_channels(op_named("gray"), src->channels));
  if (gpuimg_gray_cpu(src, &dst) < 0)
    fail("gpuimg_gray_cpu failed: %s", gpuimg_error_message());
  return dst;
}

/* The written definition (man/gpuimg.1, gray): Y = (19595 R + 38470 G + 7471 B + 32768) >> 16,
 * computed here apart from src/ops/gray.c, so a change of a weight or the rounding shows. */
static int gray_fixed_point(int r, int g, int b)
{
  return (int)((19595u * (unsigned)r + 38470u * (unsigned)g + 7471u * (unsigned)b + 32768u) >> 16);
}

static void test_gray_exhaustive(void)
{
  /* Every RGB triple once: pixel i is R = i >> 16, G = (i >> 8) & 255, B = i & 255. */
  gpuimg_image_t src = image_new(4096, 4096, 3);
  for (uint32_t i = 0; i < (1u << 24); i++) {
    src.data[3 * (size_t)i] = (uint8_t)(i >> 16);
    src.data[3 * (size_t)i + 1] = (uint8_t)(i >> 8);
    src.data[3 * (size_t)i + 2] = (uint8_t)i;
  }
  gpuimg_image_t dst = gray(&src);
  if (dst.channels != 1)
    fail("gray of RGB has %d channels, expected 1", dst.channels);
  uint32_t differ = 0;
  for (uint32_t i = 0; i < (1u << 24); i++) {
    int r = (int)(i >> 16), g = (int)((i >> 8) & 255), b = (int)(i & 255);
    int want = gray_fixed_point(r, g, b), got = dst.data[i];
    if (got != want)
      fail("gray(%d,%d,%d) = %d, the fixed-point definition gives %d", r, g, b, got, want);
    /* The definition itself keeps SEMANTICS.md's promise: within 1 of the float formula. */
    int real = (int)round(0.299 * r + 0.587 * g + 0.114 * b);
    if (abs(want - real) > 1)
      fail("gray(%d,%d,%d) = %d, more than 1 from round(0.299R+0.587G+0.114B) = %d", r, g, b, want,
           real);
    differ += want != real;
  }
  printf("gray: all 16777216 RGB inputs equal the fixed-point definition, within 1 of the "
         "floating-point formula (%u of them 1 off)\n",
         differ);
  gpuimg_image_free(&src);
  gpuimg_image_free(&dst);
}

static void test_gray_layouts(void)
{
  /* Hand-computed: 0.299*255 = 76.245, 0.587*255 = 149.685, 0.114*255 = 29.07,
   * 10,20,30 -> 18.15, 100,150,200 -> 140.75, 1,1,1 -> 1, 128,128,128 -> 128. */
  static const uint8_t rgb[] = {0,   0,  0,  255, 255, 255, 255, 0, 0, 0, 255, 0,   0,  0,
                                255, 10, 20, 30,  100, 150, 200, 1, 1, 1, 128, 128, 128};
  static const uint8_t rgb_gray[] = {0, 255, 76, 150, 29, 18, 141, 1, 128};
  gpuimg_image_t src = image_from(9, 1, 3, rgb);
  gpuimg_image_t dst = gray(&src);
  expect_bytes("gray of hand-computed RGB", &dst, 9, 1, 1, rgb_gray);
  gpuimg_image_free(&src);
  gpuimg_image_free(&dst);

  /* RGBA -> gray + the original alpha. */
  static const uint8_t rgba[] = {255, 0, 0, 17, 0, 255, 0, 0, 0, 0, 255, 255, 100, 150, 200, 128};
  static const uint8_t rgba_gray[] = {76, 17, 150, 0, 29, 255, 141, 128};
  src = image_from(2, 2, 4, rgba);
  dst = gray(&src);
  expect_bytes("gray of hand-computed RGBA", &dst, 2, 2, 2, rgba_gray);
  gpuimg_image_free(&src);
  gpuimg_image_free(&dst);

  /* RGBA on random pixels: the gray channel equals gray of the RGB part, alpha is kept. */
  gpuimg_image_t rgba_img = image_random(37, 23, 4, 11);
  gpuimg_image_t rgb_img = image_new(37, 23, 3);
  for (size_t i = 0; i < 37 * 23; i++)
    memcpy(rgb_img.data + 3 * i, rgba_img.data + 4 * i, 3);
  gpuimg_image_t g4 = gray(&rgba_img), g3 = gray(&rgb_img);
  gpuimg_image_t want = image_new(37, 23, 2);
  for (size_t i = 0; i < 37 * 23; i++) {
    want.data[2 * i] = g3.data[i];
    want.data[2 * i + 1] = rgba_img.data[4 * i + 3];
  }
  expect_same("gray of random RGBA", &g4, &want);
  gpuimg_image_free(&rgba_img);
  gpuimg_image_free(&rgb_img);
  gpuimg_image_free(&g4);
  gpuimg_image_free(&g3);
  gpuimg_image_free(&want);

  /* 1- and 2-channel input comes back unchanged. */
  for (int c = 1; c <= 2; c++) {
    gpuimg_image_t in = image_random(33, 17, c, 20 + (uint64_t)c);
    gpuimg_image_t out = gray(&in);
    expect_same(c == 1 ? "gray of gray" : "gray of gray+alpha", &out, &in);
    gpuimg_image_free(&in);
    gpuimg_image_free(&out);
  }
  const gpuimg_op_t *g = op_named("gray");
  if (gpuimg_op_out_channels(g, 1) != 1 || gpuimg_op_out_channels(g, 2) != 2 ||
      gpuimg_op_out_channels(g, 3) != 1 || gpuimg_op_out_channels(g, 4) != 2)
    fail("gray.out_channels is not 1,2,1,2 for 1..4 channels");
  printf("gray: hand-computed bytes, RGBA keeps alpha, 1 and 2 channels unchanged\n");
}

/* ------------------------------------------------------------------------------------------ */
/* blur */

/* The definition: the (2r+1)^2 window, coordinates clamped, floor((S + C/2) / C). */
static gpuimg_image_t blur_brute(const gpuimg_image_t *src, int r)
{
  int w = src->width, h = src->height, c = src->channels;
  gpuimg_image_t dst = image_new(w, h, c);
  uint64_t count = (uint64_t)(2 * r + 1) * (uint64_t)(2 * r + 1);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      uint64_t sum[4] = {0, 0, 0, 0};
      for (int dy = -r; dy <= r; dy++) {
        const uint8_t *row = src->data + (size_t)clampi(y + dy, 0, h - 1) * (size_t)w * (size_t)c;
        for (int dx = -r; dx <= r; dx++) {
          const uint8_t *p = row + (size_t)clampi(x + dx, 0, w - 1) * (size_t)c;
          for (int ch = 0; ch < c; ch++)
            sum[ch] += p[ch];
        }
      }
      for (int ch = 0; ch < c; ch++)
        dst.data[((size_t)y * (size_t)w + (size_t)x) * (size_t)c + (size_t)ch] =
            (uint8_t)((sum[ch] + count / 2) / count);
    }
  return dst;
}

static gpuimg_image_t blur(const gpuimg_image_t *src, int r)
{
  gpuimg_image_t dst = image_new(src->width, src->height, src->channels);
  memset(dst.data, 0xA5, gpuimg_image_bytes(src->width, src->height, src->channels));
  if (gpuimg_blur_cpu(src, r, &dst) < 0)
    fail("gpuimg_blur_cpu(radius %d) failed: %s", r, gpuimg_error_message());
  return dst;
}

static void test_blur_hand(void)
{
  char what[64];
  /* 3x3, values 0..8, r = 1, C = 9. Corner (0,0): rows {0,0,1} x cols {0,0,1}:
   * 0+0+1 + 0+0+1 + 3+3+4 = 12 -> (12+4)/9 = 1; centre: 36 -> 40/9 = 4; ... */
  static const uint8_t v3x3[] = {0, 1, 2, 3, 4, 5, 6, 7, 8};
  static const uint8_t b3x3[] = {1, 2, 3, 3, 4, 5, 5, 6, 7};
  gpuimg_image_t src = image_from(3, 3, 1, v3x3);
  gpuimg_image_t dst = blur(&src, 1);
  expect_bytes("blur -r 1 of 3x3 0..8", &dst, 3, 3, 1, b3x3);
  gpuimg_image_free(&dst);
  /* r = 5 on the same 3x3: every window is clamped on all sides. Pixel (0,0): columns
   * {0 x6, 1, 2 x4}, likewise rows; S = sum over rows of weights... computed below by hand:
   * column weights for x=0: col0 6, col1 1, col2 4 (11 in all); rows the same.
   * S = sum_{i,j} wr[i] wc[j] v[i][j] with v = 3i + j:
   *   = 11 * (3 * (0*6 + 1*1 + 2*4)) + 11 * (0*6 + 1*1 + 2*4) = 11*27 + 11*9 = 396,
   * C = 121 -> (396 + 60) / 121 = 3. Centre (1,1): weights {5,1,5}: S = 11*3*(1+10) + 11*11
   *   = 363 + 121 = 484 -> (484+60)/121 = 4. */
  dst = blur(&src, 5);
  if (dst.data[0] != 3 || dst.data[4] != 4)
    fail("blur -r 5 of 3x3 0..8: (0,0) = %u (expected 3), (1,1) = %u (expected 4)", dst.data[0],
         dst.data[4]);
  gpuimg_image_free(&dst);
  gpuimg_image_free(&src);

  /* 1x7 and 7x1, r = 1: three identical copies across the thin side, so
   * out[k] = floor((3 (v[k-1] + v[k] + v[k+1]) + 4) / 9) with clamped ends. */
  static const uint8_t line[] = {10, 20, 30, 40, 50, 60, 70};
  static const uint8_t line_b1[] = {13, 20, 30, 40, 50, 60, 67};
  src = image_from(1, 7, 1, line);
  dst = blur(&src, 1);
  expect_bytes("blur -r 1 of 1x7", &dst, 1, 7, 1, line_b1);
  gpuimg_image_free(&src);
  gpuimg_image_free(&dst);
  src = image_from(7, 1, 1, line);
  dst = blur(&src, 1);
  expect_bytes("blur -r 1 of 7x1", &dst, 7, 1, 1, line_b1);
  gpuimg_image_free(&src);
  gpuimg_image_free(&dst);
  /* 7x1, r = 2, C = 25: out[0] = (5 (10+10+10+20+30) + 12) / 25 = (400 + 12) / 25 = 16;
   * out[3] = (5 * 200 + 12) / 25 = 40; out[6] = (5 (50+60+70+70+70) + 12) / 25 = 64. */
  static const uint8_t line_b2[] = {16, 22, 30, 40, 50, 58, 64};
  src = image_from(7, 1, 1, line);
  dst = blur(&src, 2);
  expect_bytes("blur -r 2 of 7x1", &dst, 7, 1, 1, line_b2);
  gpuimg_image_free(&src);
  gpuimg_image_free(&dst);

  /* Every channel alike, alpha included: 2x1 RGBA 0 and 255, r = 1:
   * x=0: 3 (0+0+255) = 765 -> 769/9 = 85; x=1: 3 (0+255+255) = 1530 -> 1534/9 = 170. */
  static const uint8_t two[] = {0, 0, 0, 0, 255, 255, 255, 255};
  static const uint8_t two_b[] = {85, 85, 85, 85, 170, 170, 170, 170};
  src = image_from(2, 1, 4, two);
  dst = blur(&src, 1);
  expect_bytes("blur -r 1 of 2x1 RGBA", &dst, 2, 1, 4, two_b);
  gpuimg_image_free(&src);
  gpuimg_image_free(&dst);

  /* Rounding is half up: 3x1 {0, v, 0}, r = 1: centre S = 3v, edges S = 3v too
   * (window {0,0,v} and {v,0,0}): v = 1 -> (3+4)/9 = 0; v = 2 -> (6+4)/9 = 1. */
  for (int v = 1; v <= 3; v++) {
    uint8_t in[3] = {0, (uint8_t)v, 0};
    uint8_t q = (uint8_t)((3 * v + 4) / 9);
    uint8_t want[3] = {q, q, q};
    src = image_from(3, 1, 1, in);
    dst = blur(&src, 1);
    snprintf(what, sizeof what, "blur -r 1 of {0,%d,0}", v);
    expect_bytes(what, &dst, 3, 1, 1, want);
    gpuimg_image_free(&src);
    gpuimg_image_free(&dst);
  }

  /* Radius 0 is the identity. */
  for (int c = 1; c <= 4; c++) {
    src = image_random(33, 17, c, 40 + (uint64_t)c);
    dst = blur(&src, 0);
    snprintf(what, sizeof what, "blur -r 0 (%d channels)", c);
    expect_same(what, &dst, &src);
    gpuimg_image_free(&src);
    gpuimg_image_free(&dst);
  }
  printf("blur: hand-computed bytes (3x3, 1x7, 7x1, 2x1 RGBA, rounding), radius 0 identity\n");
}

static void test_blur_brute_force(void)
{
  static const int sizes[][2] = {{1, 1}, {1, 7}, {7, 1}, {33, 17}, {64, 48}};
  static const int radii[] = {0, 1, 2, 5, 16};
  char what[128];
  int cases = 0;
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
    for (int c = 1; c <= 4; c++)
      for (size_t k = 0; k < sizeof radii / sizeof radii[0]; k++) {
        int w = sizes[s][0], h = sizes[s][1], r = radii[k];
        gpuimg_image_t src = image_random(w, h, c, (uint64_t)(1000 * s + 10 * c + k));
        gpuimg_image_t got = blur(&src, r), want = blur_brute(&src, r);
        snprintf(what, sizeof what, "blur -r %d vs brute force", r);
        expect_same(what, &got, &want);
        gpuimg_image_free(&src);
        gpuimg_image_free(&got);
        gpuimg_image_free(&want);
        cases++;
      }
  /* Radii past the image: 40 on 33x17 (larger than both sides), 20 on 33x17 (past the
   * height only), 2047 (the largest) on 5x3 and 1x1. */
  static const int big[][3] = {{33, 17, 40}, {33, 17, 20}, {17, 33, 20},
                               {5, 3, 2047}, {1, 1, 2047}, {2, 1, 2047}};
  for (size_t s = 0; s < sizeof big / sizeof big[0]; s++)
    for (int c = 1; c <= 4; c++) {
      int w = big[s][0], h = big[s][1], r = big[s][2];
      gpuimg_image_t src = image_random(w, h, c, (uint64_t)(5000 + 10 * s + (size_t)c));
      gpuimg_image_t got = blur(&src, r), want = blur_brute(&src, r);
      snprintf(what, sizeof what, "blur -r %d of %dx%d vs brute force", r, w, h);
      expect_same(what, &got, &want);
      gpuimg_image_free(&src);
      gpuimg_image_free(&got);
      gpuimg_image_free(&want);
      cases++;
    }
  printf("blur: %d random images equal the brute-force window (sizes 1x1..64x48, 1..4 channels, "
         "radii 0..2047)\n",
         cases);
}

static void test_blur_constant(void)
{
  /* A constant image stays constant for every radius, including sums near 2^32
   * (255 * 4095^2 + C/2 at radius 2047). */
  static const uint8_t values[] = {0, 1, 127, 128, 254, 255};
  static const int shapes[][3] = {
      {1, 1, 2047}, {5, 3, 2047}, {64, 48, 16}, {33, 17, 40}, {7, 1, 3}};
  char what[128];
  for (size_t v = 0; v < sizeof values; v++)
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
      for (int c = 1; c <= 4; c++) {
        gpuimg_image_t src = image_new(shapes[s][0], shapes[s][1], c);
        memset(src.data, values[v], gpuimg_image_bytes(shapes[s][0], shapes[s][1], c));
        gpuimg_image_t dst = blur(&src, shapes[s][2]);
        snprintf(what, sizeof what, "blur -r %d of a constant %u image", shapes[s][2], values[v]);
        expect_same(what, &dst, &src);
        gpuimg_image_free(&src);
        gpuimg_image_free(&dst);
      }
  printf("blur: constant images stay constant (radii up to 2047)\n");
}

/* ------------------------------------------------------------------------------------------ */
/* checkerboard */

static gpuimg_image_t checkerboard_ref(const gpuimg_image_t *src, int cell, int amount)
{
  int w = src->width, h = src->height, c = src->channels;
  int colour = (c == 2 || c == 4) ? c - 1 : c;
  gpuimg_image_t dst = image_from(w, h, c, src->data);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      int even = ((x / cell) + (y / cell)) % 2 == 0;
      uint8_t *p = dst.data + ((size_t)y * (size_t)w + (size_t)x) * (size_t)c;
      for (int ch = 0; ch < colour; ch++)
        p[ch] = (uint8_t)(even ? clampi(p[ch] + amount, 0, 255) : clampi(p[ch] - amount, 0, 255));
    }
  return dst;
}

static gpuimg_image_t checkerboard(const gpuimg_image_t *src, int cell, int amount)
{
  gpuimg_image_t dst = image_new(src->width, src->height, src->channels);
  if (gpuimg_checkerboard_cpu(src, cell, amount, &dst) < 0)
    fail("gpuimg_checkerboard_cpu failed: %s", gpuimg_error_message());
  return dst;
}

static void test_checkerboard(void)
{
  /* 4x2 gray 100, cell 1, amount 64: even pixels 164, odd 36. */
  static const uint8_t flat[8] = {100, 100, 100, 100, 100, 100, 100, 100};
  static const uint8_t flat_c1[8] = {164, 36, 164, 36, 36, 164, 36, 164};
  gpuimg_image_t src = image_from(4, 2, 1, flat);
  gpuimg_image_t dst = checkerboard(&src, 1, 64);
  expect_bytes("checkerboard --cell 1 of 4x2 gray 100", &dst, 4, 2, 1, flat_c1);
  gpuimg_image_free(&dst);
  /* cell 2: columns 0-1 even on row 0-1, columns 2-3 odd. */
  static const uint8_t flat_c2[8] = {164, 164, 36, 36, 164, 164, 36, 36};
  dst = checkerboard(&src, 2, 64);
  expect_bytes("checkerboard --cell 2 of 4x2 gray 100", &dst, 4, 2, 1, flat_c2);
  gpuimg_image_free(&dst);
  gpuimg_image_free(&src);

  /* Saturation: 250 + 64 -> 255 on even pixels, 5 - 64 -> 0 on odd ones; alpha kept. */
  static const uint8_t ga[8] = {250, 7, 5, 8, 250, 9, 5, 10};
  static const uint8_t ga_c1[8] = {255, 7, 0, 8, 186, 9, 69, 10};
  src = image_from(2, 2, 2, ga);
  dst = checkerboard(&src, 1, 64);
  expect_bytes("checkerboard of gray+alpha (saturating)", &dst, 2, 2, 2, ga_c1);
  gpuimg_image_free(&src);
  gpuimg_image_free(&dst);
  static const uint8_t rgba[8] = {250, 5, 128, 0, 250, 5, 128, 255};
  static const uint8_t rgba_c1[8] = {255, 69, 192, 0, 186, 0, 64, 255};
  src = image_from(2, 1, 4, rgba);
  dst = checkerboard(&src, 1, 64);
  expect_bytes("checkerboard of RGBA (saturating, alpha kept)", &dst, 2, 1, 4, rgba_c1);
  gpuimg_image_free(&src);
  gpuimg_image_free(&dst);

  /* The rule on random images: cells 1, 2, 8 (and one larger than the image). */
  static const int cells[] = {1, 2, 8, 100};
  static const int amounts[] = {0, 1, 64, 255};
  char what[128];
  for (int c = 1; c <= 4; c++)
    for (size_t k = 0; k < sizeof cells / sizeof cells[0]; k++)
      for (size_t a = 0; a < sizeof amounts / sizeof amounts[0]; a++) {
        gpuimg_image_t in = image_random(33, 17, c, (uint64_t)(700 + 10 * c + (int)k));
        gpuimg_image_t got = checkerboard(&in, cells[k], amounts[a]);
        gpuimg_image_t want = checkerboard_ref(&in, cells[k], amounts[a]);
        snprintf(what, sizeof what, "checkerboard --cell %d --amount %d", cells[k], amounts[a]);
        expect_same(what, &got, &want);
        if (c == 2 || c == 4)
          for (size_t i = 0; i < 33 * 17; i++)
            if (got.data[i * (size_t)c + (size_t)c - 1] != in.data[i * (size_t)c + (size_t)c - 1])
              fail("%s: alpha of pixel %zu changed", what, i);
        gpuimg_image_free(&in);
        gpuimg_image_free(&got);
        gpuimg_image_free(&want);
      }
  printf("checkerboard: hand-computed bytes, saturation, alpha untouched, cells 1/2/8/100\n");
}

/* ------------------------------------------------------------------------------------------ */
/* portrait */

static gpuimg_image_t portrait(const gpuimg_image_t *src, const gpuimg_image_t *mask, int r)
{
  gpuimg_image_t dst = image_new(src->width, src->height, src->channels);
  if (gpuimg_portrait_cpu(src, mask, r, &dst) < 0)
    fail("gpuimg_portrait_cpu failed: %s", gpuimg_error_message());
  return dst;
}

static void test_portrait(void)
{
  /* 3x1 {0, 90, 0} with r = 1: the blur is 30 everywhere ((3*90+4)/9 = 30).
   * Mask {127, 128, 0}: 127 takes the blur, 128 keeps the pixel. */
  static const uint8_t in3[] = {0, 90, 0};
  static const uint8_t m3[] = {127, 128, 0};
  static const uint8_t want3[] = {30, 90, 30};
  gpuimg_image_t src = image_from(3, 1, 1, in3), mask = image_from(3, 1, 1, m3);
  gpuimg_image_t dst = portrait(&src, &mask, 1);
  expect_bytes("portrait 3x1 with mask {127,128,0}", &dst, 3, 1, 1, want3);
  gpuimg_image_free(&src);
  gpuimg_image_free(&mask);
  gpuimg_image_free(&dst);

  /* Gray+alpha 3x1 {(0,10), (90,200), (0,30)}, r = 1, mask {0, 0, 255}: the gray of the
   * background takes the blur (30), alpha stays (10, 200), the subject is kept. */
  static const uint8_t in_ga[] = {0, 10, 90, 200, 0, 30};
  static const uint8_t m_ga[] = {0, 0, 255};
  static const uint8_t want_ga[] = {30, 10, 30, 200, 0, 30};
  src = image_from(3, 1, 2, in_ga);
  mask = image_from(3, 1, 1, m_ga);
  dst = portrait(&src, &mask, 1);
  expect_bytes("portrait of gray+alpha keeps alpha", &dst, 3, 1, 2, want_ga);
  gpuimg_image_free(&src);
  gpuimg_image_free(&mask);
  gpuimg_image_free(&dst);

  static const uint8_t levels[] = {0, 1, 126, 127, 128, 129, 254, 255};
  static const int radii[] = {0, 1, 3, 16, 40};
  for (int c = 1; c <= 4; c++)
    for (size_t k = 0; k < sizeof radii / sizeof radii[0]; k++) {
      int w = 33, h = 17;
      gpuimg_image_t in = image_random(w, h, c, (uint64_t)(900 + 10 * c + (int)k));
      gpuimg_image_t m = image_new(w, h, 1);
      rng_seed(77 + (uint64_t)k);
      for (int i = 0; i < w * h; i++)
        m.data[i] = levels[rng_next() % sizeof levels];
      gpuimg_image_t got = portrait(&in, &m, radii[k]);
      gpuimg_image_t blurred = blur_brute(&in, radii[k]);
      int colour = (c == 2 || c == 4) ? c - 1 : c; /* alpha is carried through untouched */
      for (int i = 0; i < w * h; i++) {
        size_t at = (size_t)i * (size_t)c;
        for (int ch = 0; ch < c; ch++) {
          int keep = m.data[i] >= 128 || ch >= colour;
          uint8_t want = keep ? in.data[at + (size_t)ch] : blurred.data[at + (size_t)ch];
          if (got.data[at + (size_t)ch] != want)
            fail("portrait -r %d (%d channels): x=%d y=%d channel %d (mask %u): got %u, "
                 "expected %u (%s)",
                 radii[k], c, i % w, i / w, ch, m.data[i], got.data[at + (size_t)ch], want,
                 ch >= colour ? "the original alpha"
                 : keep       ? "the original"
                              : "the blur");
        }
      }
      gpuimg_image_free(&in);
      gpuimg_image_free(&m);
      gpuimg_image_free(&got);
      gpuimg_image_free(&blurred);
    }
  printf("portrait: mask >= 128 keeps, < 128 takes the brute-force blur (127/128 boundary), "
         "alpha untouched\n");
}

/* ------------------------------------------------------------------------------------------ */
/* pipeline */

static void test_pipeline(void)
{
  static const int shapes[][3] = {{33, 17, 3}, {1, 7, 4}, {7, 1, 3}, {64, 48, 4}, {5, 3, 1}};
  char what[128];
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
    for (int repeat = 1; repeat <= 3; repeat += 2) {
      int w = shapes[s][0], h = shapes[s][1], c = shapes[s][2], r = (int)s + 1;
      gpuimg_image_t src = image_random(w, h, c, 3000 + s);

      gpuimg_plan_t cli;
      memset(&cli, 0, sizeof cli);
      cli.backend = GPUIMG_BACKEND_CPU;
      cli.repeat = repeat;
      cli.nsteps = 2;
      cli.steps[0].op = gpuimg_ops_find("gray");
      cli.steps[1].op = gpuimg_ops_find("blur");
      if (!cli.steps[0].op || !cli.steps[1].op)
        fail("gpuimg_ops_find does not know gray or blur");
      gpuimg_ops_init(cli.steps[0].op, cli.steps[0].params);
      gpuimg_ops_init(cli.steps[1].op, cli.steps[1].params);
      char radius[16];
      snprintf(radius, sizeof radius, "%d", r);
      if (gpuimg_ops_set(cli.steps[1].op, cli.steps[1].params, "radius", radius) < 0)
        fail("blur --radius %s: %s", radius, gpuimg_error_message());

      gpuimg_image_t masks[GPUIMG_MAX_STEPS], dst;
      gpuimg_run_t run;
      memset(masks, 0, sizeof masks);
      memset(&dst, 0, sizeof dst);
      memset(&run, 0, sizeof run);
      if (gpuimg_pipeline_run(&cli, &src, masks, &dst, &run) < 0)
        fail("gpuimg_pipeline_run(gray then blur) failed: %s", gpuimg_error_message());

      gpuimg_image_t g = gray(&src);
      gpuimg_image_t want = blur(&g, r);
      snprintf(what, sizeof what, "pipeline gray then blur -r %d (repeat %d)", r, repeat);
      expect_same(what, &dst, &want);
      if (strcmp(run.backend, "cpu") != 0)
        fail("%s: backend %s, expected cpu", what, run.backend);
      if (run.nstages != 2 || strcmp(run.stages[0].name, "gray") != 0 ||
          strcmp(run.stages[1].name, "blur") != 0 || run.stages[0].nms != repeat ||
          run.stages[1].nms != repeat)
        fail("%s: stages are not gray and blur with %d samples each", what, repeat);
      for (int i = 0; i < run.nstages; i++)
        for (int k = 0; k < run.stages[i].nms; k++)
          if (!(run.stages[i].ms[k] >= 0))
            fail("%s: stage %s sample %d is %g ms", what, run.stages[i].name, k,
                 run.stages[i].ms[k]);
      gpuimg_run_free(&run);
      gpuimg_image_free(&src);
      gpuimg_image_free(&dst);
      gpuimg_image_free(&g);
      gpuimg_image_free(&want);
    }
  printf("pipeline: gray then blur equals the two applied in turn (repeat 1 and 3)\n");
}

/* The registry against the list it is generated from (names[0..n), src/ops/meson.build's
 * gpuimg_op_names, which meson passes as the arguments): the same operations in the same
 * order, found by name, listed by gpuimg_ops_names(). */
static void test_ops_table(const char *const *names, int n)
{
  char want[1024] = "", list[1024];
  if (n < 2)
    fail("give the registry's operations as arguments (meson test does)");
  for (int i = 0; i < n; i++) {
    if (!gpuimg_ops[i] || strcmp(gpuimg_ops[i]->name, names[i]) != 0)
      fail("operation %d is not %s", i, names[i]);
    if (gpuimg_ops_find(names[i]) != gpuimg_ops[i])
      fail("gpuimg_ops_find(\"%s\") is not the table's entry", names[i]);
    size_t used = strlen(want);
    snprintf(want + used, sizeof want - used, "%s%s",
             i == 0       ? ""
             : i + 1 == n ? " or "
                          : ", ",
             names[i]);
  }
  if (gpuimg_ops[n] != NULL || gpuimg_ops_find("then") || gpuimg_ops_find("") ||
      gpuimg_ops_find("Gray"))
    fail("the operation table has extra entries or matches loosely");
  gpuimg_ops_names(list, sizeof list);
  if (strcmp(list, want) != 0)
    fail("gpuimg_ops_names() gives \"%s\", not \"%s\"", list, want);
  /* Each declaration is complete: parameters that fit a step, help for every option, a
   * mask only where the mask option is, a CPU reference, a launch for the CUDA model, an
   * analysis's measure and JSON. */
  for (int i = 0; gpuimg_ops[i]; i++) {
    const gpuimg_op_t *op = gpuimg_ops[i];
    if (op->params_size > GPUIMG_PARAMS_SIZE || !op->defaults || !op->options ||
        !(op->run_cpu || op->run_cpu_rows) || !op->summary || !op->launch)
      fail("%s: incomplete declaration", op->name);
    for (const gpuimg_option_t *o = op->options; o->long_name; o++)
      if (!o->help || (o->offset >= op->params_size))
        fail("%s --%s: no help, or a field outside its parameters", op->name, o->long_name);
    if (op->needs_mask != (gpuimg_options_find(op->options, "mask", 4, 0) != NULL))
      fail("%s: needs_mask and the --mask option disagree", op->name);
    if (!op->result_size != !op->measure_cpu || !op->result_size != !op->result_json ||
        !op->result_size != !op->result_add || !op->result_size != !op->result_parse ||
        !op->result_size != !op->result_print)
      fail("%s: an analysis without one of its functions, or one of them alone", op->name);
  }
  /* Options set parameters as the command line does, with its messages. */
  unsigned char params[GPUIMG_PARAMS_SIZE];
  gpuimg_ops_init(op_named("portrait"), params);
  if (gpuimg_ops_common(params)->mask_path || gpuimg_ops_common(params)->variant)
    fail("portrait's defaults: a mask or a variant");
  if (gpuimg_ops_set(op_named("portrait"), params, "mask", "m.png") < 0 ||
      gpuimg_ops_set(op_named("portrait"), params, "tiled", NULL) < 0 ||
      strcmp(gpuimg_ops_common(params)->mask_path, "m.png") != 0 ||
      strcmp(gpuimg_op_variant_name(op_named("portrait"), params), "tiled") != 0)
    fail("portrait --mask m.png --tiled did not set the mask and the variant");
  if (gpuimg_ops_set(op_named("blur"), params, "radius", "2048") == 0 ||
      strcmp(gpuimg_error_message(),
             "--radius: invalid value '2048' (expected an integer from 0 to 2047)") != 0)
    fail("blur --radius 2048: \"%s\"", gpuimg_error_message());
  printf("ops: table order, lookup, declarations and options\n");
}

/* Host predictions of divergent warps (the gpu suite compares them with device counts). */
static void test_divergence_predictions(void)
{
  uint64_t warps, div;
  /* 1024x768 in 32x8 blocks: 3,072 blocks of 8 warps; a warp is one row of 32 pixels. */
  static const struct {
    int cell;
    uint64_t div;
  } cb[] = {{1, 24576}, {2, 24576}, {8, 24576}, {16, 24576}, {32, 0}, {64, 0}};
  for (size_t i = 0; i < sizeof cb / sizeof cb[0]; i++) {
    gpuimg_divergence_checkerboard(1024, 768, cb[i].cell, 32, 8, &warps, &div, NULL);
    if (warps != 24576 || div != cb[i].div)
      fail("checkerboard cell %d: predicted %llu of %llu warps, want %llu of 24576", cb[i].cell,
           (unsigned long long)div, (unsigned long long)warps, (unsigned long long)cb[i].div);
  }
  /* 16x16 blocks: a warp is two half rows of 16 pixels; cell 16 gives two rows of one cell
   * each, both of the same parity only when they lie in the same cell row: always, so 0. */
  gpuimg_divergence_checkerboard(1024, 768, 16, 16, 16, &warps, &div, NULL);
  if (warps != 24576 || div != 0)
    fail("checkerboard cell 16 in 16x16 blocks: %llu of %llu", (unsigned long long)div,
         (unsigned long long)warps);
  /* Partial warps and blocks: a 33x17 image in 24x5 blocks (120 threads: 4 warps, the last
   * with 24 lanes); blocks past the edge hold fewer in-image lanes, and a warp with a
   * single in-image lane cannot diverge. Counted here lane by lane. */
  gpuimg_divergence_checkerboard(33, 17, 1, 24, 5, &warps, &div, NULL);
  {
    uint64_t want_warps = 0, want_div = 0;
    for (int by = 0; by < 4; by++)
      for (int bx = 0; bx < 2; bx++)
        for (int t0 = 0; t0 < 120; t0 += 32) {
          int even = 0, odd = 0;
          for (int t = t0; t < t0 + 32 && t < 120; t++) {
            int x = bx * 24 + t % 24, y = by * 5 + t / 24;
            if (x < 33 && y < 17 && (x + y) % 2 == 0)
              even = 1;
            else if (x < 33 && y < 17)
              odd = 1;
          }
          want_warps += (uint64_t)(even | odd);
          want_div += (uint64_t)(even & odd);
        }
    if (warps != want_warps || div != want_div || want_div == want_warps)
      fail("checkerboard 33x17 in 24x5 blocks: %llu of %llu warps, want %llu of %llu",
           (unsigned long long)div, (unsigned long long)warps, (unsigned long long)want_div,
           (unsigned long long)want_warps);
  }
  /* A mask edge at x = 100: in 32x8 blocks only the warp covering x 96..127 of each row
   * diverges: 768 warps. An all-background mask: none. */
  gpuimg_image_t mask;
  if (gpuimg_image_alloc(&mask, 1024, 768, 1) < 0)
    fail("out of memory");
  for (int y = 0; y < 768; y++)
    for (int x = 0; x < 1024; x++)
      mask.data[(size_t)y * 1024 + x] = x < 100 ? 255 : 0;
  gpuimg_divergence_mask(&mask, 32, 8, &warps, &div, NULL);
  if (warps != 24576 || div != 768)
    fail("mask edge: predicted %llu of %llu, want 768 of 24576", (unsigned long long)div,
         (unsigned long long)warps);
  memset(mask.data, 0, (size_t)1024 * 768);
  gpuimg_divergence_mask(&mask, 32, 8, &warps, &div, NULL);
  if (div != 0)
    fail("empty mask: %llu divergent warps", (unsigned long long)div);
  gpuimg_image_free(&mask);
  printf("divergence: host predictions for checkerboard cells and mask edges\n");
}

int main(int argc, char **argv)
{
  test_ops_table((const char *const *)argv + 1, argc - 1);
  test_divergence_predictions();
  test_gray_layouts();
  test_gray_exhaustive();
  test_blur_hand();
  test_blur_constant();
  test_blur_brute_force();
  test_checkerboard();
  test_portrait();
  test_pipeline();
  printf("test_ops: all passed\n");
  return 0;
}
