/* test_threads.c: the CPU backend's --threads: every operation and a pipeline give the same
 * bytes at 1, 2 and 7 threads and on bands of any shape; the thread pool; the defaults; the
 * threads' names. */
#define _POSIX_C_SOURCE 200809L /* nanosleep() */
#define TEST_NAME "test_threads"
#include "test_fail.h"
#include "files.h"
#include "pipeline.h"
#include "plan.h"
#include "pool.h"
#include "scheduler.h"

#include <dirent.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* xorshift32 noise, the same on every run; seed != 0. */
static gpuimg_image_t noise(int w, int h, int c, uint32_t seed)
{
  gpuimg_image_t img;
  if (gpuimg_image_alloc(&img, w, h, c) < 0)
    fail("%dx%dx%d: %s", w, h, c, gpuimg_error_message());
  for (size_t i = 0, n = gpuimg_image_bytes(w, h, c); i < n; i++) {
    seed ^= seed << 13;
    seed ^= seed >> 17;
    seed ^= seed << 5;
    img.data[i] = (uint8_t)(seed >> 11);
  }
  return img;
}

static void same(const char *what, const gpuimg_image_t *got, const gpuimg_image_t *want)
{
  if (got->width != want->width || got->height != want->height || got->channels != want->channels)
    fail("%s: %dx%dx%d, expected %dx%dx%d", what, got->width, got->height, got->channels,
         want->width, want->height, want->channels);
  size_t n = gpuimg_image_bytes(want->width, want->height, want->channels);
  if (memcmp(got->data, want->data, n) == 0)
    return;
  size_t i = 0;
  while (got->data[i] == want->data[i])
    i++;
  size_t row = (size_t)want->width * (size_t)want->channels;
  fail("%s (%dx%dx%d): first difference at row %zu, byte %zu of the row: %u, expected %u", what,
       want->width, want->height, want->channels, i / row, i % row, got->data[i], want->data[i]);
}

/* plan's steps on src on the CPU backend with n threads (0: the default), with mask for every
 * step that takes one; checks the run's thread count. */
static gpuimg_image_t run_threads(gpuimg_plan_t *plan, const gpuimg_image_t *src,
                                  const gpuimg_image_t *mask, int n, const char *what)
{
  gpuimg_image_t masks[GPUIMG_MAX_STEPS], dst;
  gpuimg_run_t run;
  memset(masks, 0, sizeof masks);
  memset(&run, 0, sizeof run);
  for (int i = 0; i < plan->nsteps; i++)
    if (plan->steps[i].op->needs_mask)
      masks[i] = *mask;
  plan->backend = GPUIMG_BACKEND_CPU;
  plan->threads = n;
  if (gpuimg_pipeline_run(plan, src, masks, &dst, &run) < 0)
    fail("%s at %d threads: %s", what, n, gpuimg_error_message());
  int want = n ? n : gpuimg_cpu_cores();
  if (run.threads != want)
    fail("%s: the run records %d threads, expected %d", what, run.threads, want);
  gpuimg_run_free(&run);
  return dst;
}

/* Appends a step: spec is the op, then its options as name, value pairs (value NULL: a flag),
 * then NULL. */
static void plan_step(gpuimg_plan_t *plan, const char *const *spec)
{
  if (gpuimg_plan_add_step(plan, spec[0]) < 0)
    fail("%s: %s", spec[0], gpuimg_error_message());
  for (int k = 1; spec[k]; k += 2) {
    gpuimg_step_t *s = &plan->steps[plan->nsteps - 1];
    if (gpuimg_step_set(s, spec[k], spec[k], spec[k + 1]) != 0)
      fail("%s --%s: %s", spec[0], spec[k], gpuimg_error_message());
  }
}

/* The step's run_cpu_rows over the bands cut at cuts[0..ncuts-1] equals whole. */
static void check_cuts(const gpuimg_step_t *s, const gpuimg_image_t *src,
                       const gpuimg_image_t *mask, const gpuimg_image_t *whole, const int *cuts,
                       int ncuts, const char *what)
{
  gpuimg_image_t dst;
  if (gpuimg_image_alloc(&dst, whole->width, whole->height, whole->channels) < 0)
    fail("%s", gpuimg_error_message());
  memset(dst.data, 0xa5, gpuimg_image_bytes(dst.width, dst.height, dst.channels));
  for (int b = 0, y0 = 0; b <= ncuts; b++) {
    int y1 = b < ncuts ? cuts[b] : whole->height;
    if (s->op->run_cpu_rows(s->params, src, mask, &dst, y0, y1) < 0)
      fail("%s: rows %d..%d: %s", what, y0, y1, gpuimg_error_message());
    y0 = y1;
  }
  same(what, &dst, whole);
  gpuimg_image_free(&dst);
}

/* Bands of one row each (small images), and seven uneven bands. */
static void check_bands(const gpuimg_step_t *s, const gpuimg_image_t *src,
                        const gpuimg_image_t *mask, const gpuimg_image_t *whole, const char *what)
{
  char label[300];
  int h = whole->height, cuts[64];
  if (!s->op->run_cpu_rows)
    fail("%s has no run_cpu_rows", s->op->name);
  if (h <= 64) {
    for (int y = 1; y < h; y++)
      cuts[y - 1] = y;
    snprintf(label, sizeof label, "%s, one band per row", what);
    check_cuts(s, src, mask, whole, cuts, h - 1, label);
  }
  int n = 0;
  for (int k = 1; k <= 6; k++) /* cuts at h * k^2 / 49, merged where they meet */
    if (h * k * k / 49 > (n ? cuts[n - 1] : 0))
      cuts[n++] = h * k * k / 49;
  snprintf(label, sizeof label, "%s, %d uneven bands", what, n + 1);
  check_cuts(s, src, mask, whole, cuts, n, label);
}

/* One operation with its options on a w x h x c image: the CPU backend at 1, 2 and 7
 * threads, and the op's own bands, all equal to run_cpu on the whole image. */
static void check_op(const char *const *spec, int w, int h, int c, uint32_t seed)
{
  char what[200];
  int len = snprintf(what, sizeof what, "%dx%dx%d %s", w, h, c, spec[0]);
  for (int k = 1; spec[k]; k += 2)
    len += snprintf(what + len, sizeof what - (size_t)len, " --%s%s%s", spec[k],
                    spec[k + 1] ? " " : "", spec[k + 1] ? spec[k + 1] : "");
  gpuimg_image_t src = noise(w, h, c, seed), mask = noise(w, h, 1, seed ^ 0x5bd1e995u), whole;
  gpuimg_plan_t plan;
  gpuimg_plan_init(&plan);
  plan_step(&plan, spec);
  const gpuimg_step_t *s = &plan.steps[0];
  int ow, oh;
  if (gpuimg_op_out_size(s->op, s->params, w, h, &ow, &oh) < 0 ||
      gpuimg_image_alloc(&whole, ow, oh, gpuimg_op_out_channels(s->op, c)) < 0 ||
      gpuimg_op_run_cpu(s->op, s->params, &src, &mask, &whole) < 0)
    fail("%s: %s", what, gpuimg_error_message());
  static const int threads[] = {1, 2, 7};
  for (int t = 0; t < 3; t++) {
    gpuimg_image_t got = run_threads(&plan, &src, &mask, threads[t], what);
    char label[260];
    snprintf(label, sizeof label, "%s at %d threads", what, threads[t]);
    same(label, &got, &whole);
    gpuimg_image_free(&got);
  }
  check_bands(s, &src, &mask, &whole, what);
  gpuimg_image_free(&src);
  gpuimg_image_free(&mask);
  gpuimg_image_free(&whole);
}

/* Sizes: odd ones, and 300x1600, which the backend cuts into 7 bands at 7 threads (a band
 * holds at least 65536 pixels). Radii larger than the image included. */
static void test_every_op(void)
{
  static const int sizes[][2] = {{1, 1}, {1, 9}, {9, 1}, {33, 17}, {300, 1600}};
  static const char *const specs[][8] = {
      {"gray", NULL},
      {"gray", "naive", NULL, NULL},
      {"blur", "radius", "0", NULL},
      {"blur", "radius", "1", NULL},
      {"blur", "radius", "5", "naive", NULL, NULL},
      {"blur", "radius", "3", "tiled", NULL, NULL},
      {"blur", "radius", "40", "tiled", NULL, "tile", "float", NULL},
      {"blur", "radius", "1700", NULL},
      {"checkerboard", NULL},
      {"checkerboard", "cell", "3", "amount", "200", "naive", NULL, NULL},
      {"portrait", "radius", "4", NULL},
      {"portrait", "radius", "70", "naive", NULL, NULL},
      {"portrait", "radius", "2", "tiled", NULL, NULL},
      {"resize", "scale", "0.37", NULL},
      {"resize", "scale", "1.7", NULL},
      {"resize", "width", "5", "height", "900", NULL},
      {"resize", "width", "290", "height", "1500", "filter", "area", NULL},
      {"resize", "fit", "40x40", "filter", "bilinear", NULL},
      {"rotate", "angle", "90", NULL},
      {"rotate", "angle", "180", "naive", NULL, NULL},
      {"rotate", "angle", "270", "tiled", NULL, NULL},
      {"flip", NULL},
      {"flop", NULL},
      {"transpose", NULL},
      {"transverse", "naive", NULL, NULL},
  };
  uint32_t seed = 1;
  for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++)
    for (int c = 1; c <= 4; c++)
      for (size_t k = 0; k < sizeof specs / sizeof specs[0]; k++)
        check_op(specs[k], sizes[z][0], sizes[z][1], c, seed++);
  printf("threads: every operation and variant, channels 1-4, odd sizes: the same bytes at 1, 2 "
         "and 7 threads and on bands of any height\n");
}

/* gray then blur -r 5 then checkerboard at 1, 2 and 7 threads (and the default). */
static void test_pipeline(void)
{
  static const int sizes[][2] = {{1, 1}, {1, 9}, {9, 1}, {33, 17}, {300, 1600}};
  static const char *const gray[] = {"gray", NULL}, *const blur[] = {"blur", "radius", "5", NULL},
                           *const board[] = {"checkerboard", NULL};
  char what[100];
  for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++)
    for (int c = 1; c <= 4; c++) {
      int w = sizes[z][0], h = sizes[z][1];
      snprintf(what, sizeof what, "gray then blur -r 5 then checkerboard %dx%dx%d", w, h, c);
      gpuimg_plan_t plan;
      gpuimg_plan_init(&plan);
      plan_step(&plan, gray);
      plan_step(&plan, blur);
      plan_step(&plan, board);
      gpuimg_image_t src = noise(w, h, c, 77 + (uint32_t)z * 4 + (uint32_t)c);
      gpuimg_image_t one = run_threads(&plan, &src, NULL, 1, what);
      static const int threads[] = {2, 7, 0};
      for (int t = 0; t < 3; t++) {
        gpuimg_image_t got = run_threads(&plan, &src, NULL, threads[t], what);
        same(what, &got, &one);
        gpuimg_image_free(&got);
      }
      gpuimg_image_free(&one);
      gpuimg_image_free(&src);
    }
  printf("threads: the pipeline gray, blur -r 5, checkerboard: the same bytes at 1, 2, 7 and "
         "the default threads\n");
}

static int count_part(void *arg, int i)
{
  int *hits = arg;
  hits[i]++; /* each part is run once, by one thread */
  return 0;
}

static int fail_part(void *arg, int i)
{
  (void)arg;
  if (i == 5)
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, "part 5", "failed on purpose");
  return i == 5 ? -1 : 0;
}

/* The pool runs every part once, task after task, and brings a part's error back. */
static void test_pool(void)
{
  static int hits[1000];
  for (int n = 1; n <= 8; n += 3) {
    gpuimg_pool_t *pool = gpuimg_pool_create(n);
    if (!pool)
      fail("gpuimg_pool_create(%d): %s", n, gpuimg_error_message());
    for (int task = 0; task < 200; task++) {
      int parts = 1 + task * 37 % 1000;
      memset(hits, 0, sizeof hits);
      if (gpuimg_pool_run(pool, parts, count_part, hits) < 0)
        fail("pool of %d: %s", n, gpuimg_error_message());
      for (int i = 0; i < 1000; i++)
        if (hits[i] != (i < parts))
          fail("pool of %d, task %d of %d parts: part %d ran %d times", n, task, parts, i, hits[i]);
    }
    gpuimg_error_clear();
    if (gpuimg_pool_run(pool, 9, fail_part, NULL) != -1 ||
        strcmp(gpuimg_error_message(), "part 5: failed on purpose") != 0)
      fail("pool of %d: a failing part gives '%s'", n, gpuimg_error_message());
    gpuimg_pool_free(pool);
  }
  printf("threads: the pool runs every part once and returns a part's error\n");
}

/* The defaults: the usable cores; a batch's workers share them unless --threads is given; the
 * library's context takes "threads". */
static void test_defaults(void)
{
  int cores = gpuimg_cpu_cores();
  if (cores < 1 || cores > 1024)
    fail("gpuimg_cpu_cores() = %d", cores);
  if (gpuimg_sched_threads(0, 1) != cores || gpuimg_sched_threads(0, 2 * cores) != 1 ||
      gpuimg_sched_threads(3, 8) != 3 || gpuimg_sched_threads(0, cores) != 1)
    fail("gpuimg_sched_threads: the batch rule is not max(1, cores / jobs) or --threads");
  gpuimg_context_t *ctx = gpuimg_context_create(GPUIMG_BACKEND_CPU);
  gpuimg_image_t src = noise(500, 700, 3, 9), dst;
  if (!ctx || gpuimg_context_add(ctx, "blur") < 0 || gpuimg_context_set(ctx, "threads", "3") < 0 ||
      gpuimg_context_process(ctx, &src, &dst) < 0)
    fail("context with threads 3: %s", gpuimg_error_message());
  char *report = gpuimg_context_report(ctx);
  if (!report || !strstr(report, "\"threads\":\t3,"))
    fail("the context's report does not say \"threads\": 3:\n%s", report ? report : "(none)");
  free(report);
  if (gpuimg_context_set(ctx, "threads", "0") != -1 ||
      strcmp(gpuimg_error_message(),
             "--threads: invalid value '0' (expected an integer from 1 to 1024)") != 0)
    fail("threads 0: '%s'", gpuimg_error_message());
  gpuimg_image_free(&src);
  gpuimg_image_free(&dst);
  gpuimg_context_destroy(ctx);
  printf("threads: the default is the %d usable cores; batch workers share them\n", cores);
}

#if defined(__linux__) && defined(__GLIBC__)
/* This process's threads named name, from /proc (what top -H and ps -L show). */
static int threads_named(const char *name)
{
  DIR *dir = opendir("/proc/self/task");
  int n = 0;
  for (struct dirent *e; dir && (e = readdir(dir));) {
    char path[300], comm[64] = "";
    snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
    FILE *f = e->d_name[0] != '.' ? fopen(path, "r") : NULL;
    if (f && fgets(comm, sizeof comm, f))
      comm[strcspn(comm, "\n")] = 0;
    if (f)
      fclose(f);
    n += strcmp(comm, name) == 0;
  }
  if (dir)
    closedir(dir);
  return n;
}

static void *name_long(void *arg)
{
  gpuimg_thread_name(arg);
  return (void *)(intptr_t)threads_named("gpuimg-a-long-n");
}
#endif

/* gpuimg_thread_name() names the calling thread, cut to Linux's 15 bytes; the pool's threads
 * are "gpuimg-pool" (each names itself as it starts: waited for, up to 5 s). */
static void test_names(void)
{
#if defined(__linux__) && defined(__GLIBC__)
  pthread_t t;
  void *seen = NULL;
  if (gpuimg_thread_start(&t, name_long, "gpuimg-a-long-name-indeed") != 0 ||
      pthread_join(t, &seen) != 0 || seen != (void *)1)
    fail("a thread named 'gpuimg-a-long-name-indeed' is not seen as 'gpuimg-a-long-n'");
  gpuimg_pool_t *pool = gpuimg_pool_create(4);
  if (!pool)
    fail("gpuimg_pool_create(4): %s", gpuimg_error_message());
  int named = 0;
  for (int i = 0; i < 500 && (named = threads_named("gpuimg-pool")) < 3; i++)
    nanosleep(&(struct timespec){0, 10000000}, NULL);
  if (named != 3)
    fail("a pool of 4 has %d threads named gpuimg-pool (expected 3: the caller is the 4th)", named);
  gpuimg_pool_free(pool);
  printf("threads: named by role (gpuimg-pool), cut to 15 bytes\n");
#else
  printf("threads: names not checked (not Linux with glibc)\n");
#endif
}

int main(void)
{
  test_pool();
  test_defaults();
  test_names();
  test_every_op();
  test_pipeline();
  printf("test_threads: all passed\n");
  return 0;
}
