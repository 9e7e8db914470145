/* test_rotate.c: the orientation operations (rotate 90, 180, 270, flip, flop, transpose,
 * transverse): their CPU reference against the man page's definitions written out here on their
 * own, brute force over odd sizes and 1 to 4 channels; the identities between them; the EXIF
 * orientations they share with autorotation; their sizes, options, messages and report. */
#define TEST_NAME "test_rotate"
#include "test_fail.h"
#include "exif.h"
#include "ops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t seed = 2024;

static uint8_t rnd8(void)
{
  seed = seed * 1664525u + 1013904223u;
  return (uint8_t)(seed >> 24);
}

static gpuimg_image_t image_new(int w, int h, int c)
{
  gpuimg_image_t img;
  if (gpuimg_image_alloc(&img, w, h, c) < 0)
    fail("cannot allocate a %dx%dx%d image: %s", w, h, c, gpuimg_error_message());
  return img;
}

static gpuimg_image_t image_random(int w, int h, int c)
{
  gpuimg_image_t img = image_new(w, h, c);
  for (size_t i = 0; i < gpuimg_image_bytes(w, h, c); i++)
    img.data[i] = rnd8();
  return img;
}

/* Each operation as the man page defines it: out(x, y) = in(sx, sy) for a W x H input. */
typedef void source_fn(int W, int H, int x, int y, int *sx, int *sy);

static void rotate90(int W, int H, int x, int y, int *sx, int *sy)
{
  (void)W;
  *sx = y, *sy = H - 1 - x;
}
static void rotate180(int W, int H, int x, int y, int *sx, int *sy)
{
  *sx = W - 1 - x, *sy = H - 1 - y;
}
static void rotate270(int W, int H, int x, int y, int *sx, int *sy)
{
  (void)H;
  *sx = W - 1 - y, *sy = x;
}
static void flip(int W, int H, int x, int y, int *sx, int *sy)
{
  (void)W;
  *sx = x, *sy = H - 1 - y;
}
static void flop(int W, int H, int x, int y, int *sx, int *sy)
{
  (void)H;
  *sx = W - 1 - x, *sy = y;
}
static void transpose(int W, int H, int x, int y, int *sx, int *sy)
{
  (void)W, (void)H;
  *sx = y, *sy = x;
}
static void transverse(int W, int H, int x, int y, int *sx, int *sy)
{
  *sx = W - 1 - y, *sy = H - 1 - x;
}

/* A step as the command line gives it: the operation, then option and value pairs (NULL value:
 * a flag), ending in NULL; its definition, whether it swaps the sides, its EXIF orientation. */
typedef struct {
  const char *args[6];
  source_fn *source;
  int swap, exif;
} def_t;

static const def_t defs[] = {
    {{"rotate", "angle", "90", NULL}, rotate90, 1, 6},
    {{"rotate", "angle", "180", NULL}, rotate180, 0, 3},
    {{"rotate", "angle", "270", NULL}, rotate270, 1, 8},
    {{"flip", NULL}, flip, 0, 4},
    {{"flop", NULL}, flop, 0, 2},
    {{"transpose", NULL}, transpose, 1, 5},
    {{"transverse", NULL}, transverse, 1, 7},
};
enum { NDEFS = sizeof defs / sizeof defs[0] };

/* "rotate --angle 90" */
static const char *spelled(const char *const *args, char *buf, size_t size)
{
  snprintf(buf, size, "%s", args[0]);
  for (int k = 1; args[k]; k += 2) {
    size_t n = strlen(buf);
    snprintf(buf + n, size - n, " --%s%s%s", args[k], args[k + 1] ? " " : "",
             args[k + 1] ? args[k + 1] : "");
    if (!args[k + 1])
      break;
  }
  return buf;
}

/* The operation of args and its parameters, set as the command line sets them. */
static const gpuimg_op_t *step(const char *const *args, void *params)
{
  const gpuimg_op_t *op = gpuimg_ops_find(args[0]);
  if (!op)
    fail("the registry has no operation %s", args[0]);
  gpuimg_ops_init(op, params);
  for (int k = 1; args[k]; k += 2) {
    if (gpuimg_ops_set(op, params, args[k], args[k + 1]) < 0)
      fail("%s --%s: %s", args[0], args[k], gpuimg_error_message());
    if (!args[k + 1])
      break;
  }
  if (op->check && op->check(params) < 0)
    fail("%s: %s", args[0], gpuimg_error_message());
  return op;
}

/* args's CPU reference on src, with variant (a flag name, or NULL) set; the output poisoned
 * first, so that an unwritten byte cannot pass. */
static gpuimg_image_t apply(const char *const *args, const char *variant, const gpuimg_image_t *src)
{
  _Alignas(16) unsigned char params[GPUIMG_PARAMS_SIZE];
  char name[64];
  const gpuimg_op_t *op = step(args, params);
  if (variant && gpuimg_ops_set(op, params, variant, NULL) < 0)
    fail("%s --%s: %s", args[0], variant, gpuimg_error_message());
  int w, h;
  if (gpuimg_op_out_size(op, params, src->width, src->height, &w, &h) < 0)
    fail("%s: %s", spelled(args, name, sizeof name), gpuimg_error_message());
  gpuimg_image_t dst = image_new(w, h, gpuimg_op_out_channels(op, src->channels));
  memset(dst.data, 0xA5, gpuimg_image_bytes(w, h, dst.channels));
  if (gpuimg_op_run_cpu(op, params, src, NULL, &dst) < 0)
    fail("%s: %s", spelled(args, name, sizeof name), gpuimg_error_message());
  return dst;
}

static void expect_same(const char *what, const gpuimg_image_t *got, const gpuimg_image_t *want)
{
  if (got->width != want->width || got->height != want->height || got->channels != want->channels)
    fail("%s: a %dx%dx%d image, expected %dx%dx%d", what, got->width, got->height, got->channels,
         want->width, want->height, want->channels);
  if (memcmp(got->data, want->data,
             gpuimg_image_bytes(want->width, want->height, want->channels)) != 0)
    fail("%s: the bytes differ", what);
}

/* Every operation on every size and layout, byte for byte against its definition. */
static void test_definitions(void)
{
  static const int sizes[][2] = {{1, 1},   {1, 7},   {7, 1},  {2, 2},  {33, 17}, {17, 33},
                                 {32, 32}, {31, 33}, {64, 3}, {3, 64}, {100, 1}, {1, 100}};
  static const char *const variants[] = {NULL, "naive", "tiled"};
  char name[64];
  for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++)
    for (int c = 1; c <= 4; c++) {
      int W = sizes[z][0], H = sizes[z][1];
      gpuimg_image_t src = image_random(W, H, c);
      for (int d = 0; d < NDEFS; d++) {
        gpuimg_image_t got = apply(defs[d].args, variants[(z + (size_t)d) % 3], &src);
        int ow = defs[d].swap ? H : W, oh = defs[d].swap ? W : H;
        spelled(defs[d].args, name, sizeof name);
        if (got.width != ow || got.height != oh || got.channels != c)
          fail("%s of %dx%dx%d: a %dx%dx%d image, expected %dx%dx%d", name, W, H, c, got.width,
               got.height, got.channels, ow, oh, c);
        for (int y = 0; y < oh; y++)
          for (int x = 0; x < ow; x++) {
            int sx, sy;
            defs[d].source(W, H, x, y, &sx, &sy);
            const uint8_t *want = src.data + ((size_t)sy * W + sx) * c;
            const uint8_t *have = got.data + ((size_t)y * ow + x) * c;
            if (memcmp(want, have, (size_t)c) != 0)
              fail("%s of %dx%dx%d: pixel (%d, %d) is not the input's (%d, %d)", name, W, H, c, x,
                   y, sx, sy);
          }
        gpuimg_image_free(&got);
      }
      gpuimg_image_free(&src);
    }
  printf("rotate 90, 180, 270, flip, flop, transpose, transverse: every pixel as defined, 12 "
         "sizes from 1x1, 1-4 channels\n");
}

/* Hand-computed: a 3x2 gray image 0..5 row by row. */
static void test_hand(void)
{
  static const uint8_t in[] = {0, 1, 2, 3, 4, 5};
  static const uint8_t want[NDEFS][6] = {
      {3, 0, 4, 1, 5, 2}, /* rotate 90: 2x3 */
      {5, 4, 3, 2, 1, 0}, /* rotate 180 */
      {2, 5, 1, 4, 0, 3}, /* rotate 270: 2x3 */
      {3, 4, 5, 0, 1, 2}, /* flip */
      {2, 1, 0, 5, 4, 3}, /* flop */
      {0, 3, 1, 4, 2, 5}, /* transpose: 2x3 */
      {5, 2, 4, 1, 3, 0}, /* transverse: 2x3 */
  };
  char name[64];
  gpuimg_image_t src = image_new(3, 2, 1);
  memcpy(src.data, in, sizeof in);
  for (int d = 0; d < NDEFS; d++) {
    gpuimg_image_t got = apply(defs[d].args, NULL, &src);
    spelled(defs[d].args, name, sizeof name);
    if (got.width != (defs[d].swap ? 2 : 3) || memcmp(got.data, want[d], 6) != 0)
      fail("%s of the 3x2 image 0..5: %u %u %u %u %u %u (%dx%d)", name, got.data[0], got.data[1],
           got.data[2], got.data[3], got.data[4], got.data[5], got.width, got.height);
    gpuimg_image_free(&got);
  }
  gpuimg_image_free(&src);
  printf("rotations: hand-computed bytes of a 3x2 image\n");
}

/* src through the steps in turn. */
static gpuimg_image_t chain(const gpuimg_image_t *src, const char *const *const *steps, int n)
{
  gpuimg_image_t cur = apply(steps[0], NULL, src);
  for (int i = 1; i < n; i++) {
    gpuimg_image_t next = apply(steps[i], NULL, &cur);
    gpuimg_image_free(&cur);
    cur = next;
  }
  return cur;
}

/* Identities between the operations, on sizes that are not square. */
static void test_identities(void)
{
  static const char *const r90[] = {"rotate", "angle", "90", NULL},
                           *const r180[] = {"rotate", "angle", "180", NULL},
                           *const r270[] = {"rotate", "angle", "270", NULL},
                           *const fl[] = {"flip", NULL}, *const fo[] = {"flop", NULL},
                           *const tp[] = {"transpose", NULL}, *const tv[] = {"transverse", NULL};
  static const struct {
    const char *what;
    const char *const *lhs[4];
    int nl;
    const char *const *rhs[4];
    int nr; /* 0: the identity */
  } ids[] = {
      {"four rotate 90s are the identity", {r90, r90, r90, r90}, 4, {NULL}, 0},
      {"four rotate 270s are the identity", {r270, r270, r270, r270}, 4, {NULL}, 0},
      {"rotate 180 twice is the identity", {r180, r180}, 2, {NULL}, 0},
      {"flip twice is the identity", {fl, fl}, 2, {NULL}, 0},
      {"flop twice is the identity", {fo, fo}, 2, {NULL}, 0},
      {"transpose twice is the identity", {tp, tp}, 2, {NULL}, 0},
      {"transverse twice is the identity", {tv, tv}, 2, {NULL}, 0},
      {"rotate 90 then 270 is the identity", {r90, r270}, 2, {NULL}, 0},
      {"rotate 90 twice is rotate 180", {r90, r90}, 2, {r180}, 1},
      {"rotate 90 three times is rotate 270", {r90, r90, r90}, 3, {r270}, 1},
      {"flip then flop is rotate 180", {fl, fo}, 2, {r180}, 1},
      {"flop then flip is rotate 180", {fo, fl}, 2, {r180}, 1},
      {"rotate 270 then flop is transverse", {r270, fo}, 2, {tv}, 1},
      {"flop then rotate 90 is transverse", {fo, r90}, 2, {tv}, 1},
      {"flip then rotate 90 is transpose", {fl, r90}, 2, {tp}, 1},
      {"rotate 90 then flop is transpose", {r90, fo}, 2, {tp}, 1},
      {"transpose then transverse is rotate 180", {tp, tv}, 2, {r180}, 1},
      {"transpose then flop is rotate 90", {tp, fo}, 2, {r90}, 1},
      {"transpose then flip is rotate 270", {tp, fl}, 2, {r270}, 1},
  };
  static const int sizes[][2] = {{1, 1}, {1, 5}, {5, 1}, {33, 17}, {40, 7}};
  for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++)
    for (int c = 1; c <= 4; c++) {
      gpuimg_image_t src = image_random(sizes[z][0], sizes[z][1], c);
      for (size_t k = 0; k < sizeof ids / sizeof ids[0]; k++) {
        char what[160];
        snprintf(what, sizeof what, "%s (%dx%dx%d)", ids[k].what, sizes[z][0], sizes[z][1], c);
        gpuimg_image_t l = chain(&src, ids[k].lhs, ids[k].nl);
        gpuimg_image_t r = ids[k].nr ? chain(&src, ids[k].rhs, ids[k].nr) : src;
        expect_same(what, &l, &r);
        gpuimg_image_free(&l);
        if (ids[k].nr)
          gpuimg_image_free(&r);
      }
      gpuimg_image_free(&src);
    }
  printf("rotations: %zu identities (four 90s, transpose twice, flip then flop = rotate 180, "
         "...) on odd sizes, 1-4 channels\n",
         sizeof ids / sizeof ids[0]);
}

/* EXIF autorotation turns an image of orientation o as the operation of that orientation. */
static void test_exif(void)
{
  char name[64];
  for (int c = 1; c <= 4; c++) {
    gpuimg_image_t src = image_random(13, 6, c);
    for (int d = 0; d < NDEFS; d++) {
      gpuimg_image_t turned = image_new(13, 6, c);
      memcpy(turned.data, src.data, gpuimg_image_bytes(13, 6, c));
      if (gpuimg_image_orient(&turned, defs[d].exif, "exif") < 0)
        fail("gpuimg_image_orient: %s", gpuimg_error_message());
      gpuimg_image_t got = apply(defs[d].args, NULL, &src);
      char what[96];
      snprintf(what, sizeof what, "EXIF orientation %d and %s", defs[d].exif,
               spelled(defs[d].args, name, sizeof name));
      expect_same(what, &turned, &got);
      gpuimg_image_free(&turned);
      gpuimg_image_free(&got);
    }
    gpuimg_image_free(&src);
  }
  printf("rotations: EXIF orientations 2-8 turn as flop, rotate 180, flip, transpose, rotate 90, "
         "transverse, rotate 270\n");
}

/* rotate's --angle: its values, its absence, its report; the others take no value. */
static void test_options(void)
{
  _Alignas(16) unsigned char params[GPUIMG_PARAMS_SIZE];
  const gpuimg_op_t *rotate = gpuimg_ops_find("rotate");
  if (!rotate)
    fail("the registry has no rotate");
  gpuimg_ops_init(rotate, params);
  if (!rotate->check || rotate->check(params) == 0 || gpuimg_error_code() != GPUIMG_EXIT_USAGE ||
      strcmp(gpuimg_error_message(), "rotate: no angle given (--angle 90, 180 or 270)") != 0)
    fail("rotate without --angle: \"%s\"", gpuimg_error_message());
  static const char *const bad[] = {"45", "0", "360", "-90", "90.0", "ninety", ""};
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
    char want[96];
    snprintf(want, sizeof want, "--angle: invalid value '%s' (expected 90, 180 or 270)", bad[k]);
    if (gpuimg_ops_set(rotate, params, "angle", bad[k]) == 0 ||
        gpuimg_error_code() != GPUIMG_EXIT_USAGE || strcmp(gpuimg_error_message(), want) != 0)
      fail("rotate --angle '%s': \"%s\"", bad[k], gpuimg_error_message());
  }
  int w, h;
  if (gpuimg_ops_set(rotate, params, "angle", "270") < 0 || rotate->check(params) < 0 ||
      gpuimg_op_out_size(rotate, params, 4000, 3, &w, &h) < 0 || w != 3 || h != 4000)
    fail("rotate --angle 270 of 4000x3: %dx%d", w, h);
  for (int d = 0; d < NDEFS; d++) {
    const gpuimg_op_t *op = step(defs[d].args, params);
    if (gpuimg_op_out_size(op, params, 1, 70000, &w, &h) < 0 || w != (defs[d].swap ? 70000 : 1) ||
        h != (defs[d].swap ? 1 : 70000))
      fail("%s of 1x70000: %dx%d", defs[d].args[0], w, h);
    if (strcmp(gpuimg_op_variant_name(op, params), "fast") != 0 ||
        gpuimg_ops_set(op, params, "tiled", NULL) < 0 ||
        strcmp(gpuimg_op_variant_name(op, params), "tiled") != 0 ||
        gpuimg_ops_set(op, params, "naive", NULL) < 0 ||
        strcmp(gpuimg_op_variant_name(op, params), "naive") != 0)
      fail("%s: variants fast, tiled, naive", defs[d].args[0]);
  }
  if (gpuimg_ops_set(gpuimg_ops_find("flip"), params, "angle", "90") == 0 ||
      strcmp(gpuimg_error_message(), "flip: unknown option '--angle'") != 0)
    fail("flip --angle 90: \"%s\"", gpuimg_error_message());
  printf("rotations: --angle's values and messages, sizes up to 70000 a side, variants\n");
}

int main(void)
{
  test_hand();
  test_definitions();
  test_identities();
  test_exif();
  test_options();
  printf("test_rotate: all passed\n");
  return 0;
}
