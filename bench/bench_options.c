/* bench_options.c: gpuimg_bench's command line: --help, the options and their defaults. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "blur_cpu.h"

static void usage(FILE *f)
{
  fprintf(f, "Usage: " BENCH_NAME " [OPTIONS]\n"
             "Times gpuimg's CUDA kernels (and NPP when built with it); a markdown table per size\n"
             "on stdout, one JSON object per line to --json, progress on stderr.\n"
             "\n"
             "  --json PATH          JSON lines output (default bench.jsonl)\n"
             "  --sizes WxH,...      image sizes, the first is checked against the CPU reference\n"
             "                       (default 1024x768,3840x2160,7680x4320)\n"
             "  --radii R,...        blur radii (default 0,1,2,4,8,16,32,64)\n"
             "  --runs N             timed runs per configuration, >= 1 (default 20)\n"
             "  --warmup N           warm-up runs, >= 1; the first is the probe (default 3)\n"
             "  --max-run-ms MS      skip configurations slower than this per run (default 600)\n"
             "  --budget-s S         time no new configuration after S seconds (default 240)\n"
             "  --copy-mib N         device-to-device copy buffer in MiB (default 1024)\n"
             "  --channels N         channels of every image, 1 to 4 (default 3); NPP's cases\n"
             "                       only with 3\n"
             "  --no-npp             leave NPP out even when built with it\n"
             "  -h, --help           this help\n"
             "\n"
             "Exit status: 0, 1 when a check or a CUDA call failed, 2 on misuse, 77 without a "
             "CUDA device.\n");
}

/* A whole decimal number in [lo, hi]; 0 or -1 with a message. */
static int parse_long(const char *opt, const char *s, long lo, long hi, long *out)
{
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno || end == s || *end || v < lo || v > hi) {
    fprintf(stderr, BENCH_NAME ": %s: '%s' is not a number in %ld..%ld\n", opt, s, lo, hi);
    return -1;
  }
  *out = v;
  return 0;
}

static int parse_double(const char *opt, const char *s, double lo, double hi, double *out)
{
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (errno || end == s || *end || !(v >= lo && v <= hi)) {
    fprintf(stderr, BENCH_NAME ": %s: '%s' is not a number in %g..%g\n", opt, s, lo, hi);
    return -1;
  }
  *out = v;
  return 0;
}

static int parse_sizes(const char *s, options_t *o)
{
  char buf[256];
  snprintf(buf, sizeof buf, "%s", s);
  o->nsizes = 0;
  for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    char *x = strchr(tok, 'x');
    long w, h;
    if (!x || o->nsizes == MAX_SIZES) {
      fprintf(stderr, BENCH_NAME ": --sizes: '%s' is not WxH (at most %d sizes)\n", tok, MAX_SIZES);
      return -1;
    }
    *x = '\0';
    if (parse_long("--sizes", tok, 1, 32768, &w) < 0 ||
        parse_long("--sizes", x + 1, 1, 32768, &h) < 0)
      return -1;
    o->sizes[o->nsizes][0] = (int)w;
    o->sizes[o->nsizes][1] = (int)h;
    o->nsizes++;
  }
  if (o->nsizes == 0) {
    fprintf(stderr, BENCH_NAME ": --sizes: no size given\n");
    return -1;
  }
  return 0;
}

static int parse_radii(const char *s, options_t *o)
{
  char buf[256];
  snprintf(buf, sizeof buf, "%s", s);
  o->nradii = 0;
  for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    long r;
    if (o->nradii == MAX_RADII) {
      fprintf(stderr, BENCH_NAME ": --radii: at most %d radii\n", MAX_RADII);
      return -1;
    }
    if (parse_long("--radii", tok, 0, GPUIMG_MAX_RADIUS, &r) < 0)
      return -1;
    o->radii[o->nradii++] = (int)r;
  }
  if (o->nradii == 0) {
    fprintf(stderr, BENCH_NAME ": --radii: no radius given\n");
    return -1;
  }
  return 0;
}

static void options_default(options_t *o)
{
  static const int radii[] = {0, 1, 2, 4, 8, 16, 32, 64};
  memset(o, 0, sizeof *o);
  o->sizes[0][0] = 1024;
  o->sizes[0][1] = 768;
  o->sizes[1][0] = 3840;
  o->sizes[1][1] = 2160;
  o->sizes[2][0] = 7680;
  o->sizes[2][1] = 4320;
  o->nsizes = 3;
  memcpy(o->radii, radii, sizeof radii);
  o->nradii = (int)(sizeof radii / sizeof radii[0]);
  o->runs = 20;
  o->warmup = 3;
  o->channels = 3;
  o->max_run_ms = 600;
  o->budget_s = 240;
  o->copy_mib = 1024;
  o->use_npp = 1;
  o->json_path = "bench.jsonl";
}

/* 0: go on; 1: --help done; -1: misuse (reported). */
int bench_parse_options(int argc, char **argv, options_t *o)
{
  options_default(o);
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    long n;
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      usage(stdout);
      return 1;
    }
    if (strcmp(a, "--no-npp") == 0) {
      o->use_npp = 0;
      continue;
    }
    if (strncmp(a, "--", 2) != 0 || !v) {
      fprintf(stderr, BENCH_NAME ": %s: %s\n", a,
              strncmp(a, "--", 2) != 0 ? "unexpected argument" : "needs a value");
      fprintf(stderr, "Usage: " BENCH_NAME " [OPTIONS]; --help lists them\n");
      return -1;
    }
    i++;
    if (strcmp(a, "--json") == 0) {
      o->json_path = v;
    } else if (strcmp(a, "--sizes") == 0) {
      if (parse_sizes(v, o) < 0)
        return -1;
    } else if (strcmp(a, "--radii") == 0) {
      if (parse_radii(v, o) < 0)
        return -1;
    } else if (strcmp(a, "--runs") == 0) {
      if (parse_long(a, v, 1, 100000, &n) < 0)
        return -1;
      o->runs = (int)n;
    } else if (strcmp(a, "--warmup") == 0) {
      if (parse_long(a, v, 1, 100000, &n) < 0)
        return -1;
      o->warmup = (int)n;
    } else if (strcmp(a, "--channels") == 0) {
      if (parse_long(a, v, 1, 4, &n) < 0)
        return -1;
      o->channels = (int)n;
    } else if (strcmp(a, "--copy-mib") == 0) {
      if (parse_long(a, v, 64, 65536, &n) < 0)
        return -1;
      o->copy_mib = (int)n;
    } else if (strcmp(a, "--max-run-ms") == 0) {
      if (parse_double(a, v, 0.001, 1e7, &o->max_run_ms) < 0)
        return -1;
    } else if (strcmp(a, "--budget-s") == 0) {
      if (parse_double(a, v, 0, 1e7, &o->budget_s) < 0)
        return -1;
    } else {
      fprintf(stderr, BENCH_NAME ": %s: unknown option\n", a);
      fprintf(stderr, "Usage: " BENCH_NAME " [OPTIONS]; --help lists them\n");
      return -1;
    }
  }
  return 0;
}
