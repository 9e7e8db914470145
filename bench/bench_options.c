/* bench_options.c: gpuimg_bench's command line: its option table (read by the one option
 * parser, src/base/options.c), --help and the defaults. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "blur_cpu.h"
#include "options.h"

/* What the command line fills: the options and --help. */
typedef struct {
  options_t opt;
  int help;
} command_t;

/* A number from lo to hi into the double at o->offset; -1 with a usage error. */
static int parse_range(const gpuimg_option_t *o, const char *spelled, const char *s, void *target,
                       double lo, double hi)
{
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (errno || end == s || *end || !(v >= lo && v <= hi)) {
    gpuimg_error_set(GPUIMG_EXIT_USAGE, spelled, "'%s' is not a number in %g..%g", s, lo, hi);
    return -1;
  }
  *(double *)((char *)target + o->offset) = v;
  return 0;
}

static int parse_max_run_ms(const gpuimg_option_t *o, const char *spelled, const char *s,
                            void *target)
{
  return parse_range(o, spelled, s, target, 0.001, 1e7);
}

static int parse_budget_s(const gpuimg_option_t *o, const char *spelled, const char *s,
                          void *target)
{
  return parse_range(o, spelled, s, target, 0, 1e7);
}

/* --sizes WxH,...: up to MAX_SIZES sizes, each side from 1 to 32768. */
static int parse_sizes(const gpuimg_option_t *opt, const char *spelled, const char *s, void *target)
{
  options_t *o = &((command_t *)target)->opt;
  char buf[256];
  (void)opt;
  snprintf(buf, sizeof buf, "%s", s);
  o->nsizes = 0;
  for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    long long w, h;
    if (o->nsizes == MAX_SIZES || gpuimg_options_size(tok, 32768, &w, &h) < 0) {
      gpuimg_error_set(GPUIMG_EXIT_USAGE, spelled,
                       "'%s' is not WxH with sides from 1 to 32768 (at most %d sizes)", tok,
                       MAX_SIZES);
      return -1;
    }
    o->sizes[o->nsizes][0] = (int)w;
    o->sizes[o->nsizes][1] = (int)h;
    o->nsizes++;
  }
  if (o->nsizes == 0) {
    gpuimg_error_set(GPUIMG_EXIT_USAGE, spelled, "no size given");
    return -1;
  }
  return 0;
}

/* --radii R,...: up to MAX_RADII blur radii. */
static int parse_radii(const gpuimg_option_t *opt, const char *spelled, const char *s, void *target)
{
  options_t *o = &((command_t *)target)->opt;
  char buf[256];
  (void)opt;
  snprintf(buf, sizeof buf, "%s", s);
  o->nradii = 0;
  for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    long long r;
    if (o->nradii == MAX_RADII) {
      gpuimg_error_set(GPUIMG_EXIT_USAGE, spelled, "at most %d radii", MAX_RADII);
      return -1;
    }
    if (gpuimg_options_int(spelled, tok, 0, GPUIMG_MAX_RADIUS, &r) < 0)
      return -1;
    o->radii[o->nradii++] = (int)r;
  }
  if (o->nradii == 0) {
    gpuimg_error_set(GPUIMG_EXIT_USAGE, spelled, "no radius given");
    return -1;
  }
  return 0;
}

#define OPT(field) offsetof(command_t, opt.field)
#define INT(name, field, lo, hi, text)                                                             \
  {                                                                                                \
    .long_name = name, .kind = GPUIMG_OPTION_INT, .offset = OPT(field), .min = lo, .max = hi,      \
    .metavar = "N", .help = text                                                                   \
  }

static const gpuimg_option_t bench_options[] = {
    {.long_name = "json",
     .kind = GPUIMG_OPTION_STRING,
     .offset = OPT(json_path),
     .metavar = "PATH",
     .help = "JSON lines output (default bench.jsonl)",
     .empty_what = "file name"},
    {.long_name = "sizes",
     .kind = GPUIMG_OPTION_CUSTOM,
     .parse = parse_sizes,
     .metavar = "WxH,...",
     .help = "image sizes, the first is checked against the CPU reference\n"
             "(default 1024x768,3840x2160,7680x4320)"},
    {.long_name = "radii",
     .kind = GPUIMG_OPTION_CUSTOM,
     .parse = parse_radii,
     .metavar = "R,...",
     .help = "blur radii (default 0,1,2,4,8,16,32,64)"},
    INT("runs", runs, 1, 100000, "timed runs per configuration, >= 1 (default 20)"),
    INT("warmup", warmup, 1, 100000, "warm-up runs, >= 1; the first is the probe (default 3)"),
    {.long_name = "max-run-ms",
     .kind = GPUIMG_OPTION_CUSTOM,
     .offset = OPT(max_run_ms),
     .parse = parse_max_run_ms,
     .metavar = "MS",
     .help = "skip configurations slower than this per run (default 600)"},
    {.long_name = "budget-s",
     .kind = GPUIMG_OPTION_CUSTOM,
     .offset = OPT(budget_s),
     .parse = parse_budget_s,
     .metavar = "S",
     .help = "time no new configuration after S seconds (default 240)"},
    INT("copy-mib", copy_mib, 64, 65536, "device-to-device copy buffer in MiB (default 1024)"),
    INT("channels", channels, 1, 4,
        "channels of every image, 1 to 4 (default 3); NPP's cases\nonly with 3"),
    {.long_name = "no-npp",
     .kind = GPUIMG_OPTION_FLAG,
     .offset = OPT(use_npp),
     .value = 0,
     .help = "leave NPP out even when built with it"},
    {.long_name = "help",
     .short_name = 'h',
     .kind = GPUIMG_OPTION_FLAG,
     .offset = offsetof(command_t, help),
     .value = 1,
     .help = "this help"},
    {.long_name = NULL},
};

static void usage(FILE *f)
{
  fprintf(f, "Usage: " BENCH_NAME " [OPTIONS]\n"
             "Times gpuimg's CUDA kernels (and NPP when built with it); a markdown table per size\n"
             "on stdout, one JSON object per line to --json, progress on stderr.\n"
             "\n");
  gpuimg_options_help(f, bench_options, 2, 20);
  fprintf(f, "\n"
             "Exit status: 0, 1 when a check or a CUDA call failed, 2 on misuse, 77 without a "
             "CUDA device.\n");
}

/* Reports a misuse: what, then where to look. */
static int misuse(const char *fmt, const char *arg)
{
  fprintf(stderr, BENCH_NAME ": ");
  fprintf(stderr, fmt, arg);
  fprintf(stderr, "\nUsage: " BENCH_NAME " [OPTIONS]; --help lists them\n");
  return -1;
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
  command_t cmd;
  const gpuimg_option_set_t set = {bench_options, &cmd};
  char spelled[64];
  memset(&cmd, 0, sizeof cmd);
  options_default(&cmd.opt);
  for (gpuimg_args_t args = {argc, argv, 1}; args.i < argc && !cmd.help; args.i++) {
    const char *a = argv[args.i];
    if (a[0] != '-' || a[1] == '\0')
      return misuse("%s: unexpected argument", a);
    int rc = gpuimg_options_parse(&args, &set, 1, NULL, spelled);
    if (rc > 0)
      return misuse("%s: unknown option", spelled);
    if (rc < 0)
      return misuse("%s", gpuimg_error_message());
  }
  *o = cmd.opt;
  if (cmd.help) {
    usage(stdout);
    return 1;
  }
  return 0;
}
