/* test_api_checks.c: gpuimg.h's contract: every malformed image in memory, NULL pointer,
 * out-of-range enum and malformed option value gets -1 (or NULL), its exit code and its exact
 * message, never a crash or a success (run under ASan and UBSan too); an image processed
 * into itself; a conversion that would replace its own input refused; an operation's declared
 * channels held at its step. */
#define _XOPEN_SOURCE 700
#include "ops.h"
#include "plan.h"

#include <gpuimg.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int failures;

/* A call that must fail: rc -1, the exit code and the message exactly. */
static void refused(int rc, int code, const char *message, const char *call)
{
  if (rc != -1 || gpuimg_error_code() != code || strcmp(gpuimg_error_message(), message) != 0) {
    printf("FAIL %s: %d, exit %d, \"%s\"; expected -1, exit %d, \"%s\"\n", call, rc,
           gpuimg_error_code(), gpuimg_error_message(), code, message);
    failures++;
  }
  gpuimg_error_clear();
}
#define REFUSED(call, code, message) refused((call), code, message, #call)
#define REFUSED_NULL(call, code, message) refused((call) == NULL ? -1 : 0, code, message, #call)

static void check(int ok, const char *what)
{
  if (!ok) {
    printf("FAIL %s (%s)\n", what, gpuimg_error_message());
    failures++;
  }
}
#define CHECK(cond) check((cond), #cond)

#define IN_MEMORY "(image in memory): "

/* A context on the CPU with the one step op. */
static gpuimg_context_t *context(const char *op)
{
  gpuimg_context_t *ctx = gpuimg_context_create(GPUIMG_BACKEND_CPU);
  if (!ctx || gpuimg_context_add(ctx, op) < 0) {
    printf("FAIL a context for %s: %s\n", op, gpuimg_error_message());
    exit(1);
  }
  return ctx;
}

/* gpuimg_image_alloc(): sizes that describe no image are usage errors, the image zeroed. */
static void test_alloc(void)
{
  gpuimg_image_t im = {.width = 7, .channels = 3};
  REFUSED(gpuimg_image_alloc(&im, -1, -1, 1), GPUIMG_EXIT_USAGE,
          "gpuimg_image_alloc: invalid size -1x-1 (width and height must be 1 or more)");
  CHECK(im.width == 0 && im.height == 0 && im.channels == 0 && im.data == NULL);
  REFUSED(gpuimg_image_alloc(&im, 0, 5, 1), GPUIMG_EXIT_USAGE,
          "gpuimg_image_alloc: invalid size 0x5 (width and height must be 1 or more)");
  REFUSED(gpuimg_image_alloc(&im, 5, 0, 1), GPUIMG_EXIT_USAGE,
          "gpuimg_image_alloc: invalid size 5x0 (width and height must be 1 or more)");
  REFUSED(gpuimg_image_alloc(&im, 1, 1, 0), GPUIMG_EXIT_USAGE,
          "gpuimg_image_alloc: 0 channels (expected 1 to 4)");
  REFUSED(gpuimg_image_alloc(&im, 1, 1, 5), GPUIMG_EXIT_USAGE,
          "gpuimg_image_alloc: 5 channels (expected 1 to 4)");
  REFUSED(gpuimg_image_alloc(&im, INT_MAX, INT_MAX, 4), GPUIMG_EXIT_USAGE,
          "gpuimg_image_alloc: 2147483647x2147483647 with 4 channels is too large to hold in "
          "memory");
  REFUSED(gpuimg_image_alloc(NULL, 1, 1, 1), GPUIMG_EXIT_USAGE, "gpuimg_image_alloc: img is NULL");
  CHECK(gpuimg_image_alloc(&im, 3, 2, 4) == 0 && im.data && im.width == 3 && im.channels == 4);
  gpuimg_image_free(&im);
  CHECK(im.data == NULL && im.width == 0);
  gpuimg_image_free(NULL); /* nothing to free */
}

/* process() refuses src with the message of why; dst, which held something, is emptied. */
static void refused_image(gpuimg_context_t *ctx, gpuimg_image_t src, const char *message,
                          const char *what)
{
  uint8_t other[4];
  gpuimg_image_t dst = {.width = 2, .height = 1, .channels = 2, .data = other};
  refused(gpuimg_context_process(ctx, &src, &dst), GPUIMG_EXIT_INPUT, message, what);
  if (dst.width || dst.height || dst.channels || dst.data) {
    printf("FAIL %s: dst not emptied\n", what);
    failures++;
  }
}

/* Malformed images in memory on the operations that took them. */
static void test_images(void)
{
  static uint8_t px[8 * 8 * 5];
  const char *const ops[] = {"gray", "blur", "checkerboard", "resize"};
  for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
    gpuimg_context_t *ctx = context(ops[k]);
    if (strcmp(ops[k], "resize") == 0)
      CHECK(gpuimg_context_set(ctx, "width", "4") == 0);
    gpuimg_image_t im = {.width = 8, .height = 8, .channels = 0, .data = px};
    refused_image(ctx, im, IN_MEMORY "0 channels (expected 1 to 4)", ops[k]);
    im.channels = 5;
    refused_image(ctx, im, IN_MEMORY "5 channels (expected 1 to 4)", ops[k]);
    im.channels = -3;
    refused_image(ctx, im, IN_MEMORY "-3 channels (expected 1 to 4)", ops[k]);
    im = (gpuimg_image_t){.width = 0, .height = 8, .channels = 1, .data = px};
    refused_image(ctx, im, IN_MEMORY "invalid size 0x8 (width and height must be 1 or more)",
                  ops[k]);
    im = (gpuimg_image_t){.width = 8, .height = -8, .channels = 1, .data = px};
    refused_image(ctx, im, IN_MEMORY "invalid size 8x-8 (width and height must be 1 or more)",
                  ops[k]);
    im = (gpuimg_image_t){.width = 8, .height = 8, .channels = 1, .data = NULL};
    refused_image(ctx, im, IN_MEMORY "no pixel data (data is NULL)", ops[k]);
    im = (gpuimg_image_t){.width = INT_MAX, .height = INT_MAX, .channels = 4, .data = px};
    refused_image(ctx, im,
                  IN_MEMORY "2147483647x2147483647 with 4 channels is too large to hold in memory",
                  ops[k]);
    gpuimg_context_destroy(ctx);
  }
  /* What a refused gpuimg_image_alloc(-1, -1, 1) leaves. */
  gpuimg_context_t *ctx = context("gray");
  gpuimg_image_t im;
  CHECK(gpuimg_image_alloc(&im, -1, -1, 1) < 0);
  refused_image(ctx, im, IN_MEMORY "invalid size 0x0 (width and height must be 1 or more)",
                "gray on a refused allocation");
  gpuimg_context_destroy(ctx);
}

/* --max-pixels holds images in memory as it holds decoded ones. */
static void test_max_pixels(void)
{
  static uint8_t px[40 * 40];
  gpuimg_context_t *ctx = context("gray");
  CHECK(gpuimg_context_set(ctx, "max-pixels", "1000") == 0);
  gpuimg_image_t im = {.width = 40, .height = 40, .channels = 1, .data = px};
  refused_image(ctx, im,
                IN_MEMORY "image is 40x40, over the limit of 1000 pixels (see --max-pixels)",
                "40x40 over 1000 pixels");
  im.width = im.height = 20000; /* refused before a byte of it is read */
  refused_image(ctx, im,
                IN_MEMORY "image is 20000x20000, over the limit of 1000 pixels (see --max-pixels)",
                "20000x20000 over 1000 pixels");
  im = (gpuimg_image_t){.width = 40, .height = 25, .channels = 1, .data = px};
  gpuimg_image_t dst;
  CHECK(gpuimg_context_process(ctx, &im, &dst) == 0 && dst.width == 40 && dst.height == 25);
  gpuimg_image_free(&dst);
  gpuimg_context_destroy(ctx);
}

/* process(ctx, &im, &im): src is read before dst is replaced. */
static void test_in_place(void)
{
  static const uint8_t rgb[18] = {0, 0,   0, 255, 255, 255, 255, 0,   0,
                                  0, 255, 0, 0,   0,   255, 12,  200, 99};
  gpuimg_context_t *ctx = context("gray");
  gpuimg_image_t im;
  if (gpuimg_image_alloc(&im, 3, 2, 3) < 0) {
    printf("FAIL alloc: %s\n", gpuimg_error_message());
    exit(1);
  }
  memcpy(im.data, rgb, sizeof rgb);
  uint8_t *old = im.data;
  CHECK(gpuimg_context_process(ctx, &im, &im) == 0);
  CHECK(im.width == 3 && im.height == 2 && im.channels == 1 && im.data && im.data != old);
  for (int i = 0; i < 6 && im.data && im.channels == 1; i++) {
    const uint8_t *p = rgb + 3 * i;
    unsigned want = (19595u * p[0] + 38470u * p[1] + 7471u * p[2] + 32768u) >> 16;
    if (im.data[i] != want) {
      printf("FAIL gray in place: pixel %d is %d, expected %u\n", i, im.data[i], want);
      failures++;
    }
  }
  free(old); /* the caller's, as before the call */
  /* A refused image processed into itself is left as it was. */
  im.channels = 5;
  uint8_t *data = im.data;
  REFUSED(gpuimg_context_process(ctx, &im, &im), GPUIMG_EXIT_INPUT,
          IN_MEMORY "5 channels (expected 1 to 4)");
  CHECK(im.width == 3 && im.height == 2 && im.channels == 5 && im.data == data);
  im.channels = 1;
  gpuimg_image_free(&im);
  gpuimg_context_destroy(ctx);
}

/* The last run: none before the first, after a failure; a report after a success. */
static void test_last_run(void)
{
  static const char none[] = "gpuimg_context_report: no run to report (none has succeeded since "
                             "the context was made or the last one failed)";
  uint8_t px[4] = {1, 2, 3, 4};
  gpuimg_context_t *ctx = context("blur");
  REFUSED_NULL(gpuimg_context_report(ctx), GPUIMG_EXIT_USAGE, none);
  CHECK(gpuimg_context_stage_count(ctx) == 0 && strcmp(gpuimg_context_backend(ctx), "") == 0);
  gpuimg_image_t im = {.width = 2, .height = 2, .channels = 1, .data = px}, dst;
  CHECK(gpuimg_context_process(ctx, &im, &dst) == 0);
  gpuimg_image_free(&dst);
  char *report = gpuimg_context_report(ctx);
  CHECK(report && strstr(report, "\"(image in memory)\""));
  free(report);
  CHECK(gpuimg_context_stage_count(ctx) == 1);
  im.channels = 0;
  CHECK(gpuimg_context_process(ctx, &im, &dst) < 0);
  REFUSED_NULL(gpuimg_context_report(ctx), GPUIMG_EXIT_USAGE, none);
  CHECK(gpuimg_context_stage_count(ctx) == 0 && strcmp(gpuimg_context_backend(ctx), "") == 0);
  gpuimg_stage_time_t st;
  REFUSED(gpuimg_context_stage(ctx, 0, &st), GPUIMG_EXIT_USAGE, "no stage 0 (the last run has 0)");
  gpuimg_context_destroy(ctx);
}

/* NULL where a pointer is required. */
static void test_null(void)
{
  uint8_t px[4] = {0};
  gpuimg_image_t im = {.width = 2, .height = 2, .channels = 1, .data = px}, dst;
  gpuimg_stage_time_t st;
  gpuimg_context_t *ctx = context("gray");
  REFUSED(gpuimg_context_add(NULL, "gray"), GPUIMG_EXIT_USAGE, "gpuimg_context_add: ctx is NULL");
  REFUSED(gpuimg_context_add(ctx, NULL), GPUIMG_EXIT_USAGE, "gpuimg_context_add: op is NULL");
  REFUSED(gpuimg_context_set(NULL, "radius", "3"), GPUIMG_EXIT_USAGE,
          "gpuimg_context_set: ctx is NULL");
  REFUSED(gpuimg_context_set(ctx, NULL, "3"), GPUIMG_EXIT_USAGE,
          "gpuimg_context_set: option is NULL");
  REFUSED(gpuimg_context_process(NULL, &im, &dst), GPUIMG_EXIT_USAGE,
          "gpuimg_context_process: ctx is NULL");
  REFUSED(gpuimg_context_process(ctx, NULL, &dst), GPUIMG_EXIT_USAGE,
          "gpuimg_context_process: src is NULL");
  REFUSED(gpuimg_context_process(ctx, &im, NULL), GPUIMG_EXIT_USAGE,
          "gpuimg_context_process: dst is NULL");
  REFUSED(gpuimg_context_convert(NULL, "in.png", NULL), GPUIMG_EXIT_USAGE,
          "gpuimg_context_convert: ctx is NULL");
  REFUSED(gpuimg_context_convert(ctx, NULL, "out.png"), GPUIMG_EXIT_USAGE,
          "gpuimg_context_convert: input is NULL");
  REFUSED(gpuimg_context_stage_count(NULL), GPUIMG_EXIT_USAGE,
          "gpuimg_context_stage_count: ctx is NULL");
  REFUSED(gpuimg_context_stage(NULL, 0, &st), GPUIMG_EXIT_USAGE,
          "gpuimg_context_stage: ctx is NULL");
  CHECK(gpuimg_context_process(ctx, &im, &dst) == 0);
  gpuimg_image_free(&dst);
  REFUSED(gpuimg_context_stage(ctx, 0, NULL), GPUIMG_EXIT_USAGE,
          "gpuimg_context_stage: out is NULL");
  REFUSED(gpuimg_context_stage(ctx, 1, &st), GPUIMG_EXIT_USAGE, "no stage 1 (the last run has 1)");
  REFUSED(gpuimg_context_stage(ctx, -1, &st), GPUIMG_EXIT_USAGE,
          "no stage -1 (the last run has 1)");
  REFUSED_NULL(gpuimg_context_backend(NULL), GPUIMG_EXIT_USAGE,
               "gpuimg_context_backend: ctx is NULL");
  REFUSED_NULL(gpuimg_context_report(NULL), GPUIMG_EXIT_USAGE,
               "gpuimg_context_report: ctx is NULL");
  gpuimg_context_destroy(NULL); /* nothing to destroy */
  gpuimg_context_destroy(ctx);
}

/* Out-of-range enum values. */
static void test_backend(void)
{
  static const char why[] = "gpuimg_context_create: invalid backend %d (expected "
                            "GPUIMG_BACKEND_AUTO, GPUIMG_BACKEND_CPU or GPUIMG_BACKEND_CUDA)";
  const int bad[] = {3, -1, 1000};
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
    char message[256];
    snprintf(message, sizeof message, why, bad[k]);
    REFUSED_NULL(gpuimg_context_create((gpuimg_backend_t)bad[k]), GPUIMG_EXIT_USAGE, message);
  }
}

/* set(ctx, option, value) refuses what the command line refuses: a value given to a flag or
 * none to an option that takes one, numbers with blanks, signs or anything after them. */
static void set_refused(gpuimg_context_t *ctx, const char *option, const char *value,
                        const char *message)
{
  char call[128];
  snprintf(call, sizeof call, "set(%s, '%s')", option, value ? value : "(null)");
  refused(gpuimg_context_set(ctx, option, value), GPUIMG_EXIT_USAGE, message, call);
}

static void test_values(void)
{
  gpuimg_context_t *ctx = context("blur");
  set_refused(ctx, "tiled", "yes", "--tiled: takes no value");
  set_refused(ctx, "tiled", "", "--tiled: takes no value");
  set_refused(ctx, "strip", "1", "--strip: takes no value");
  set_refused(ctx, "radius", NULL, "--radius: missing value");
  set_refused(ctx, "quality", NULL, "--quality: missing value");
  const char *const radii[] = {" 3", "3 ", "+3", "3x", "", "0x3", "-1", "3.0", "-0"};
  for (size_t k = 0; k < sizeof radii / sizeof radii[0]; k++) {
    char message[128];
    snprintf(message, sizeof message,
             "--radius: invalid value '%s' (expected an integer from 0 to 2047)", radii[k]);
    set_refused(ctx, "radius", radii[k], message);
  }
  set_refused(ctx, "radius", "\t3", /* control characters escaped in messages */
              "--radius: invalid value '\\t3' (expected an integer from 0 to 2047)");
  set_refused(ctx, "max-pixels", " 1000",
              "--max-pixels: invalid value ' 1000' (expected an integer from 1 to 1099511627776)");
  set_refused(ctx, "device", " 1",
              "--device: invalid value ' 1' (expected an integer from 0 to 1000000)");
  set_refused(ctx, "block", " 16x16",
              "--block: invalid value ' 16x16' (expected WxH with W*H <= 1024)");
  set_refused(ctx, "block", "16x 16",
              "--block: invalid value '16x 16' (expected WxH with W*H <= 1024)");
  CHECK(gpuimg_context_set(ctx, "tiled", NULL) == 0);
  CHECK(gpuimg_context_set(ctx, "radius", "3") == 0);
  CHECK(gpuimg_context_set(ctx, "block", "16x16") == 0);
  CHECK(gpuimg_context_set(ctx, "strip", NULL) == 0);
  gpuimg_context_destroy(ctx);
  ctx = context("resize");
  const char *const scales[] = {" 0.5", "0.5 ", "+0.5", "0x1p-1", "5e-1",
                                "inf",  "nan",  ".",    "1..5"};
  for (size_t k = 0; k < sizeof scales / sizeof scales[0]; k++) {
    char message[128];
    snprintf(message, sizeof message,
             "--scale: invalid value '%s' (expected a number above 0, at most 1000)", scales[k]);
    set_refused(ctx, "scale", scales[k], message);
  }
  set_refused(ctx, "fit", " 10x10",
              "--fit: invalid value ' 10x10' (expected WxH, each from 1 to 1073741824)");
  set_refused(ctx, "fit", "10x10 ",
              "--fit: invalid value '10x10 ' (expected WxH, each from 1 to 1073741824)");
  CHECK(gpuimg_context_set(ctx, "scale", "0.5") == 0);
  CHECK(gpuimg_context_set(ctx, "scale", ".5") == 0);
  CHECK(gpuimg_context_set(ctx, "fit", "10x10") == 0);
  gpuimg_context_destroy(ctx);
}

/* A file of these bytes at path. */
static void write_file(const char *path, const char *bytes)
{
  FILE *f = fopen(path, "wb");
  if (!f || fputs(bytes, f) < 0 || fclose(f) != 0) {
    printf("FAIL writing %s\n", path);
    exit(1);
  }
}

/* Whether the file at path holds exactly bytes. */
static int holds(const char *path, const char *bytes)
{
  char got[64] = "";
  FILE *f = fopen(path, "rb");
  size_t n = f ? fread(got, 1, sizeof got - 1, f) : 0;
  if (f)
    fclose(f);
  return f && n == strlen(bytes) && memcmp(got, bytes, n) == 0;
}

/* convert() never replaces its own input or a step's mask, also through another name. */
static void test_same_file(void)
{
  char dir[] = "/tmp/gpuimg-api-checks-XXXXXX";
  struct stat st;
  if (!mkdtemp(dir) || chdir(dir) < 0) {
    printf("FAIL a scratch directory\n");
    exit(1);
  }
  gpuimg_context_t *ctx = context("gray");
  REFUSED(gpuimg_context_convert(ctx, "x.png", "x.png"), GPUIMG_EXIT_OUTPUT,
          "x.png: output is the same file as the input");
  CHECK(stat("x.png", &st) < 0);
  write_file("x.png", "not a png");
  CHECK(symlink("x.png", "y.png") == 0 && link("x.png", "z.png") == 0);
  REFUSED(gpuimg_context_convert(ctx, "x.png", "x.png"), GPUIMG_EXIT_OUTPUT,
          "x.png: output is the same file as the input");
  REFUSED(gpuimg_context_convert(ctx, "./x.png", "y.png"), GPUIMG_EXIT_OUTPUT,
          "y.png: output is the same file as the input");
  REFUSED(gpuimg_context_convert(ctx, "z.png", "x.png"), GPUIMG_EXIT_OUTPUT,
          "x.png: output is the same file as the input");
  CHECK(holds("x.png", "not a png"));
  CHECK(gpuimg_context_convert(ctx, "x.png", "out.png") < 0 &&
        gpuimg_error_code() == GPUIMG_EXIT_INPUT && stat("out.png", &st) < 0);
  gpuimg_context_destroy(ctx);
  ctx = context("portrait");
  char mask[] = "m.png"; /* the context keeps its own copy of the name */
  CHECK(gpuimg_context_set(ctx, "mask", mask) == 0);
  mask[0] = 'q';
  write_file("m.png", "not a mask");
  REFUSED(gpuimg_context_convert(ctx, "x.png", "m.png"), GPUIMG_EXIT_OUTPUT,
          "m.png: output is the same file as step 1's mask");
  CHECK(holds("m.png", "not a mask"));
  gpuimg_context_destroy(ctx);
  unlink("x.png"), unlink("y.png"), unlink("z.png"), unlink("m.png");
  if (chdir("/") < 0 || rmdir(dir) < 0)
    printf("warning: %s left behind\n", dir);
}

/* Each operation declares the channels it takes, and its step refuses others. */
static void test_declared_channels(void)
{
  for (int k = 0; gpuimg_ops[k]; k++)
    for (int c = -1; c <= 6; c++)
      if (gpuimg_op_takes_channels(gpuimg_ops[k], c) != (c >= 1 && c <= 4)) {
        printf("FAIL %s takes %d channels: %d\n", gpuimg_ops[k]->name, c,
               gpuimg_op_takes_channels(gpuimg_ops[k], c));
        failures++;
      }
  gpuimg_op_t rgb_only = *gpuimg_ops_find("checkerboard");
  rgb_only.channels = GPUIMG_CHANNELS(3);
  gpuimg_plan_t plan;
  gpuimg_shape_t shapes[GPUIMG_MAX_STEPS + 1];
  gpuimg_plan_init(&plan);
  plan.nsteps = 1;
  plan.steps[0].op = &rgb_only;
  gpuimg_ops_init(&rgb_only, plan.steps[0].params);
  CHECK(gpuimg_plan_shapes(&plan, 8, 8, 3, shapes) == 0);
  REFUSED(gpuimg_plan_shapes(&plan, 8, 8, 1, shapes), GPUIMG_EXIT_INPUT,
          "checkerboard: cannot take an image of 1 channel (step 1)");
  plan.nsteps = 2; /* gray makes 1 channel of 3 */
  plan.steps[0].op = gpuimg_ops_find("gray");
  plan.steps[1].op = &rgb_only;
  gpuimg_ops_init(plan.steps[0].op, plan.steps[0].params);
  gpuimg_ops_init(&rgb_only, plan.steps[1].params);
  REFUSED(gpuimg_plan_shapes(&plan, 8, 8, 3, shapes), GPUIMG_EXIT_INPUT,
          "checkerboard: cannot take an image of 1 channel (step 2)");
}

int main(void)
{
  setvbuf(stdout, NULL, _IONBF, 0); /* each FAIL line out before a crash, if any */
  test_alloc();
  test_images();
  test_max_pixels();
  test_in_place();
  test_last_run();
  test_null();
  test_backend();
  test_values();
  test_same_file();
  test_declared_channels();
  if (failures) {
    printf("test_api_checks: %d failures\n", failures);
    return 1;
  }
  printf("test_api_checks: ok\n");
  return 0;
}
