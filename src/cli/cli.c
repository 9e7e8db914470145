/* cli.c: command-line parsing for `gpuimg OP [OPTIONS] [then OP [OPTIONS]]... [INPUT [OUTPUT]]`. */
#include "cli.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#ifndef GPUIMG_VERSION
#define GPUIMG_VERSION "unknown"
#endif

enum {
  /* Global options: numbers above the per-operation GPUIMG_OPT_* bits (OP_OPTIONS). */
  OPT_BACKEND = 1 << 16,
  OPT_REPORT = 2 << 16,
  OPT_REPEAT = 3 << 16,
  OPT_QUALITY = 4 << 16,
  OPT_QUIET = 5 << 16,
  OPT_HELP = 6 << 16,
  OPT_VERSION = 7 << 16,
  OPT_BLOCK = 8 << 16,
  OPT_MAX_PIXELS = 9 << 16,
  OPT_WARMUP = 10 << 16,
  OPT_EXPLAIN = 11 << 16,
  OPT_OUTDIR = 12 << 16,
  OPT_FROM = 13 << 16,
  OPT_FORMAT = 14 << 16,
  OPT_FORCE = 15 << 16,
  OPT_JOBS = 16 << 16,
  OPT_DEVICES = 17 << 16,
  OPT_SHARD = 18 << 16,
  OPT_CODEC = 19 << 16,
  OPT_PNG_LEVEL = 20 << 16,
};

typedef struct {
  const char *long_name;
  char short_name; /* 0: none */
  int has_arg;
  unsigned id;
} option_t;

static const option_t options[] = {
    {"radius", 'r', 1, GPUIMG_OPT_RADIUS},
    {"naive", 0, 0, GPUIMG_OPT_NAIVE},
    {"tiled", 0, 0, GPUIMG_OPT_TILED},
    {"cell", 0, 1, GPUIMG_OPT_CELL},
    {"amount", 0, 1, GPUIMG_OPT_AMOUNT},
    {"mask", 0, 1, GPUIMG_OPT_MASK},
    {"tile", 0, 1, GPUIMG_OPT_TILE},
    {"backend", 0, 1, OPT_BACKEND},
    {"report", 0, 1, OPT_REPORT},
    {"repeat", 0, 1, OPT_REPEAT},
    {"warmup", 0, 1, OPT_WARMUP},
    {"quality", 0, 1, OPT_QUALITY},
    {"codec", 0, 1, OPT_CODEC},
    {"png-level", 0, 1, OPT_PNG_LEVEL},
    {"quiet", 'q', 0, OPT_QUIET},
    {"help", 'h', 0, OPT_HELP},
    {"version", 'V', 0, OPT_VERSION},
    {"block", 0, 1, OPT_BLOCK},
    {"max-pixels", 0, 1, OPT_MAX_PIXELS},
    {"explain", 0, 0, OPT_EXPLAIN},
    {"output-dir", 'o', 1, OPT_OUTDIR},
    {"from", 0, 1, OPT_FROM},
    {"format", 0, 1, OPT_FORMAT},
    {"force", 0, 0, OPT_FORCE},
    {"jobs", 'j', 1, OPT_JOBS},
    {"devices", 0, 1, OPT_DEVICES},
    {"shard", 0, 1, OPT_SHARD},
};
#define NOPTIONS (sizeof options / sizeof options[0])
#define OP_OPTIONS 0xffffu

static int usage_error(const char *what, const char *fmt, const char *arg)
{
  gpuimg_error_set(GPUIMG_EXIT_USAGE, what, fmt, arg);
  return -1;
}

/* Integer from lo to hi, with range and overflow checks. */
static int parse_int(const char *name, const char *s, long long lo, long long hi, long long *out)
{
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (errno || end == s || *end || v < lo || v > hi) {
    gpuimg_error_set(GPUIMG_EXIT_USAGE, name,
                     "invalid value '%s' (expected an integer from %lld to %lld)", s, lo, hi);
    return -1;
  }
  *out = v;
  return 0;
}

static int parse_block(const char *s, gpuimg_cli_t *cli)
{
  char *end;
  errno = 0;
  long w = strtol(s, &end, 10);
  if (!errno && end != s && (*end == 'x' || *end == 'X')) {
    const char *hs = end + 1;
    long h = strtol(hs, &end, 10);
    if (!errno && end != hs && !*end && w >= 1 && h >= 1 && w <= 1024 && h <= 1024 &&
        w * h <= 1024) {
      cli->plan.block_w = (int)w;
      cli->plan.block_h = (int)h;
      return 0;
    }
  }
  return usage_error("--block", "invalid value '%s' (expected WxH with W*H <= 1024)", s);
}

static int apply_option(gpuimg_cli_t *cli, gpuimg_step_t *step, const option_t *o,
                        const char *spelled, const char *arg)
{
  long long v;
  gpuimg_params_t *p = step ? &step->params : NULL;

  switch (o->id) {
  case GPUIMG_OPT_RADIUS:
    if (parse_int(spelled, arg, 0, GPUIMG_MAX_RADIUS, &v) < 0)
      return -1;
    p->radius = (int)v;
    return 0;
  case GPUIMG_OPT_NAIVE:
    p->variant = GPUIMG_VARIANT_NAIVE;
    return 0;
  case GPUIMG_OPT_TILED:
    p->variant = GPUIMG_VARIANT_TILED;
    return 0;
  case GPUIMG_OPT_CELL:
    if (parse_int(spelled, arg, 1, INT32_MAX, &v) < 0)
      return -1;
    p->cell = (int)v;
    return 0;
  case GPUIMG_OPT_AMOUNT:
    if (parse_int(spelled, arg, 0, 255, &v) < 0)
      return -1;
    p->amount = (int)v;
    return 0;
  case GPUIMG_OPT_MASK:
    if (!arg[0])
      return usage_error(spelled, "%sempty file name", "");
    p->mask_path = arg;
    return 0;
  case GPUIMG_OPT_TILE:
    if (strcmp(arg, "u8") == 0)
      p->tile = GPUIMG_TILE_U8;
    else if (strcmp(arg, "float") == 0)
      p->tile = GPUIMG_TILE_FLOAT;
    else
      return usage_error(spelled, "invalid value '%s' (expected u8 or float)", arg);
    return 0;
  case OPT_EXPLAIN:
    cli->explain = 1;
    return 0;
  case OPT_OUTDIR:
    if (!arg[0])
      return usage_error(spelled, "%sempty directory name", "");
    cli->outdir = arg;
    return 0;
  case OPT_FROM:
    if (!arg[0])
      return usage_error(spelled, "%sempty file name", "");
    cli->from = arg;
    return 0;
  case OPT_FORMAT: {
    char name[8];
    snprintf(name, sizeof name, "x.%s", arg);
    if (strlen(arg) > 4 ||
        (cli->batch_format = gpuimg_format_from_name(name)) == GPUIMG_FORMAT_NONE)
      return usage_error(spelled, "invalid value '%s' (expected png, jpg, bmp or tga)", arg);
    return 0;
  }
  case OPT_FORCE:
    cli->force = 1;
    return 0;
  case OPT_JOBS:
    if (parse_int(spelled, arg, 1, 1024, &v) < 0)
      return -1;
    cli->jobs = (int)v;
    return 0;
  case OPT_DEVICES:
    if (!arg[0])
      return usage_error(spelled, "%sempty device list", "");
    cli->devices = arg;
    return 0;
  case OPT_SHARD: {
    char *end;
    errno = 0;
    long k = strtol(arg, &end, 10), n = 0;
    int ok = !errno && end != arg && *end == '/';
    if (ok) {
      const char *ns = end + 1;
      n = strtol(ns, &end, 10);
      ok = !errno && end != ns && !*end && n >= 1 && n <= 1000000 && k >= 1 && k <= n;
    }
    if (!ok)
      return usage_error(spelled, "invalid value '%s' (expected K/N with 1 <= K <= N)", arg);
    cli->shard_k = (int)k;
    cli->shard_n = (int)n;
    return 0;
  }
  case OPT_BACKEND:
    if (strcmp(arg, "auto") == 0)
      cli->plan.backend = GPUIMG_BACKEND_AUTO;
    else if (strcmp(arg, "cpu") == 0)
      cli->plan.backend = GPUIMG_BACKEND_CPU;
    else if (strcmp(arg, "cuda") == 0)
      cli->plan.backend = GPUIMG_BACKEND_CUDA;
    else
      return usage_error(spelled, "invalid value '%s' (expected auto, cpu or cuda)", arg);
    return 0;
  case OPT_REPORT:
    if (!arg[0])
      return usage_error(spelled, "%sempty file name", "");
    cli->report = arg;
    return 0;
  case OPT_REPEAT:
    if (parse_int(spelled, arg, 1, 100000, &v) < 0)
      return -1;
    cli->plan.repeat = (int)v;
    return 0;
  case OPT_WARMUP:
    if (parse_int(spelled, arg, 0, 10000, &v) < 0)
      return -1;
    cli->plan.warmup = (int)v;
    return 0;
  case OPT_QUALITY:
    if (parse_int(spelled, arg, 1, 100, &v) < 0)
      return -1;
    cli->plan.quality = (int)v;
    return 0;
  case OPT_CODEC:
    if (strcmp(arg, "auto") == 0)
      cli->plan.codec = GPUIMG_CODEC_AUTO;
    else if (strcmp(arg, "stb") == 0)
      cli->plan.codec = GPUIMG_CODEC_STB;
    else if (strcmp(arg, "fastpng") == 0)
      cli->plan.codec = GPUIMG_CODEC_FASTPNG;
    else if (strcmp(arg, "libpng") == 0 && gpuimg_codec_have_libpng())
      cli->plan.codec = GPUIMG_CODEC_LIBPNG;
    else if (strcmp(arg, "libpng") == 0)
      return usage_error(spelled, "%snot available: this gpuimg was built without libpng", "");
    else if (strcmp(arg, "libjpeg") == 0 && gpuimg_codec_have_libjpeg())
      cli->plan.codec = GPUIMG_CODEC_LIBJPEG;
    else if (strcmp(arg, "libjpeg") == 0)
      return usage_error(spelled, "%snot available: this gpuimg was built without libjpeg", "");
    else if (strcmp(arg, "nvjpeg") == 0 && gpuimg_codec_have_nvjpeg())
      cli->plan.codec = GPUIMG_CODEC_NVJPEG;
    else if (strcmp(arg, "nvjpeg") == 0)
      return usage_error(spelled, "%snot available: this gpuimg was built without nvJPEG", "");
    else
      return usage_error(spelled,
                         "invalid value '%s' (expected auto, stb, fastpng, libpng, libjpeg or nvjpeg)", arg);
    return 0;
  case OPT_PNG_LEVEL:
    if (parse_int(spelled, arg, 0, 9, &v) < 0)
      return -1;
    cli->plan.png_level = (int)v;
    return 0;
  case OPT_QUIET:
    cli->plan.quiet = 1;
    return 0;
  case OPT_HELP:
    cli->help = 1;
    return 0;
  case OPT_VERSION:
    cli->version = 1;
    return 0;
  case OPT_BLOCK:
    return parse_block(arg, cli);
  case OPT_MAX_PIXELS:
    if (parse_int(spelled, arg, 1, (long long)1 << 40, &v) < 0)
      return -1;
    cli->plan.max_pixels = (uint64_t)v;
    return 0;
  }
  return usage_error(spelled, "%sunhandled option", "");
}

static const option_t *find_long(const char *name, size_t len)
{
  for (size_t i = 0; i < NOPTIONS; i++)
    if (strlen(options[i].long_name) == len && strncmp(options[i].long_name, name, len) == 0)
      return &options[i];
  return NULL;
}

static const option_t *find_short(char c)
{
  for (size_t i = 0; i < NOPTIONS; i++)
    if (options[i].short_name == c)
      return &options[i];
  return NULL;
}

static int start_step(gpuimg_cli_t *cli, const char *name)
{
  const gpuimg_op_t *op = gpuimg_ops_find(name);
  if (!op)
    return usage_error("", "unknown operation '%s' (expected gray, blur, checkerboard or portrait)",
                       name);
  if (cli->plan.nsteps == GPUIMG_MAX_STEPS)
    return usage_error("", "too many operations (at most 32)%s", "");
  gpuimg_step_t *s = &cli->plan.steps[cli->plan.nsteps++];
  memset(s, 0, sizeof *s);
  s->op = op;
  op->defaults(&s->params);
  return 0;
}

/* Handles argv[*i], an option; advances *i past a separate value. */
static int parse_option(gpuimg_cli_t *cli, int argc, char **argv, int *i)
{
  const char *a = argv[*i];
  const option_t *o;
  const char *arg = NULL;
  char spelled[64];

  if (a[1] == '-') {
    const char *name = a + 2;
    const char *eq = strchr(name, '=');
    size_t len = eq ? (size_t)(eq - name) : strlen(name);
    o = find_long(name, len);
    snprintf(spelled, sizeof spelled, "--%.*s", (int)(len < 40 ? len : 40), name);
    if (!o)
      return usage_error("", "unknown option '%s'", spelled);
    if (eq) {
      if (!o->has_arg)
        return usage_error(spelled, "%stakes no value", "");
      arg = eq + 1;
    }
  } else {
    o = find_short(a[1]);
    snprintf(spelled, sizeof spelled, "-%c", a[1]);
    if (!o)
      return usage_error("", "unknown option '%s'", spelled);
    if (a[2]) {
      if (!o->has_arg)
        return usage_error("", "unknown option '%s'", a);
      arg = a + 2;
    }
  }
  if (o->has_arg && !arg) {
    if (*i + 1 >= argc)
      return usage_error(spelled, "%smissing value", "");
    arg = argv[++*i];
  }

  gpuimg_step_t *step = cli->plan.nsteps ? &cli->plan.steps[cli->plan.nsteps - 1] : NULL;
  if (o->id & OP_OPTIONS) {
    if (!step)
      return usage_error(spelled, "%sgiven before any operation", "");
    if (!(step->op->options & o->id)) {
      gpuimg_error_set(GPUIMG_EXIT_USAGE, step->op->name, "unknown option '%s'", spelled);
      return -1;
    }
  }
  return apply_option(cli, step, o, spelled, arg);
}

int gpuimg_cli_parse(int argc, char **argv, gpuimg_cli_t *cli)
{
  const char **positional;
  int npositional = 0, end_of_options = 0, want_op = 1;

  memset(cli, 0, sizeof *cli);
  /* Batch mode takes any number of inputs: room for every argument. Freed by
   * gpuimg_cli_free(); points into argv. */
  positional = calloc((size_t)argc + 1, sizeof *positional);
  if (!positional) {
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, "", "out of memory");
    return -1;
  }
  cli->inputs = positional;
  cli->batch_format = GPUIMG_FORMAT_NONE;
  cli->format = GPUIMG_FORMAT_NONE;
  cli->plan.repeat = 1;
  cli->plan.quality = GPUIMG_DEFAULT_QUALITY;
  cli->plan.png_level = GPUIMG_DEFAULT_PNG_LEVEL;
  cli->plan.max_pixels = GPUIMG_DEFAULT_MAX_PIXELS;

  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!end_of_options && strcmp(a, "--") == 0) {
      end_of_options = 1;
      continue;
    }
    if (!end_of_options && a[0] == '-' && a[1] != '\0') {
      if (parse_option(cli, argc, argv, &i) < 0)
        return -1;
      continue;
    }
    if (want_op) {
      if (start_step(cli, a) < 0)
        return -1;
      want_op = 0;
      continue;
    }
    if (!end_of_options && npositional == 0 && strcmp(a, "then") == 0) {
      want_op = 1;
      continue;
    }
    positional[npositional++] = a;
  }
  cli->ninputs = npositional;
  cli->plan.measure = cli->report || cli->explain;
  if (cli->help || cli->version)
    return 0;
  if (cli->plan.nsteps == 0)
    return usage_error("", "%sno operation given", "");
  if (want_op)
    return usage_error("", "%s'then' must be followed by an operation", "");
  if (cli->outdir) {
    /* Batch mode: every positional argument is an input. */
    if (cli->ninputs == 0 && !cli->from)
      return usage_error(cli->outdir, "%sno input files (give INPUT... or --from LIST)", "");
    if (cli->explain)
      return usage_error("--explain", "%snot available with -o DIR", "");
    for (int s = 0; s < cli->plan.nsteps; s++)
      if (cli->plan.steps[s].op == &gpuimg_op_portrait && !cli->plan.steps[s].params.mask_path)
        return usage_error("portrait", "%s--mask FILE is required with an input image", "");
    return 0;
  }
  if (cli->from || cli->batch_format != GPUIMG_FORMAT_NONE || cli->force || cli->jobs ||
      cli->devices || cli->shard_n)
    return usage_error("", "%s--from, --format, --force, --jobs, --devices and --shard need -o DIR",
                       "");
  if (npositional > 2)
    return usage_error("", "unexpected argument '%s' (INPUT and OUTPUT already given)",
                       positional[2]);
  /* "sample:" names the built-in sample explicitly, as ImageMagick's "rose:" does. */
  if (npositional > 0 && strcmp(positional[0], GPUIMG_SAMPLE_INPUT) != 0)
    cli->input = positional[0];
  if (npositional > 1)
    cli->output = positional[1];
  if (cli->input && !cli->input[0])
    return usage_error("", "%sempty input file name", "");
  if (cli->output) {
    if (strcmp(cli->output, "-") == 0)
      cli->format = GPUIMG_FORMAT_PNG;
    else
      cli->format = gpuimg_format_from_name(cli->output);
    if (cli->format == GPUIMG_FORMAT_NONE)
      return usage_error(cli->output,
                         "%sunsupported output format (use .png, .jpg, .jpeg, .bmp or .tga)", "");
    if (cli->report && strcmp(cli->output, "-") == 0 && strcmp(cli->report, "-") == 0)
      return usage_error("", "%simage and report cannot both go to stdout", "");
  }
  for (int s = 0; s < cli->plan.nsteps; s++)
    if (cli->plan.steps[s].op == &gpuimg_op_portrait && cli->input && !cli->plan.steps[s].params.mask_path)
      return usage_error("portrait", "%s--mask FILE is required with an input image", "");
  return 0;
}

void gpuimg_cli_free(gpuimg_cli_t *cli)
{
  free(cli->inputs);
  cli->inputs = NULL;
}

void gpuimg_cli_usage(FILE *f)
{
  fprintf(f, "Usage: gpuimg OP [OPTIONS] [then OP [OPTIONS]]... [INPUT [OUTPUT]]\n"
             "Try 'gpuimg --help' for more information.\n");
}

void gpuimg_cli_help(FILE *f)
{
  fprintf(f, "Usage: gpuimg OP [OPTIONS] [then OP [OPTIONS]]... [INPUT [OUTPUT]]\n"
             "       gpuimg OP [OPTIONS] [then OP [OPTIONS]]... -o DIR INPUT...\n"
             "Process a PNG or JPEG image with CUDA kernels (or the CPU reference backend).\n"
             "\n"
             "Operations run in order on one image; 'then' separates them:\n"
             "  gpuimg gray then blur -r 4 in.png out.png\n"
             "Without INPUT (or with INPUT 'sample:'), the built-in 1024x768 sample and its\n"
             "subject mask are used.\n"
             "Without OUTPUT, no image is written. '-' is stdin/stdout. OUTPUT's extension\n"
             "picks the format: .png, .jpg/.jpeg, .bmp or .tga (stdout: PNG).\n");
  for (int i = 0; gpuimg_ops[i]; i++) {
    const gpuimg_op_t *op = gpuimg_ops[i];
    fprintf(f, "\n%s: %s\n", op->name, op->summary);
    const char *h = op->options_help;
    while (*h) {
      const char *nl = strchr(h, '\n');
      size_t len = nl ? (size_t)(nl - h) : strlen(h);
      fprintf(f, "  %.*s\n", (int)len, h);
      h += len + (nl ? 1 : 0);
    }
  }
  fprintf(f,
          "\nGlobal options:\n"
          "  --backend B      auto (CUDA when a device is usable, else CPU; batches start\n"
          "                   on the CPU while the device comes up), cpu or cuda\n"
          "  --block WxH      CUDA block shape for 2-D kernels (W*H <= 1024)\n"
          "  --report FILE    write a JSON timing report ('-' = stdout)\n"
          "  --explain        one line per kernel on stderr: blocks, occupancy, waves,\n"
          "                   bandwidth, divergence (CUDA backend)\n"
          "  --repeat N       run the processing N times; report median/min/max/noise (default 1)\n"
          "  --warmup M       run it M more times first, unrecorded (default 0)\n"
          "  --quality Q      JPEG quality 1..100 (default %d)\n"
          "  --codec C        image codecs: auto (the fastest built in: libjpeg decodes and\n"
          "                   encodes JPEG; fastpng encodes PNG at --png-level 0..1, libpng\n"
          "                   at 2..9; stb the rest), stb (stb for everything), fastpng,\n"
          "                   libpng or libjpeg (that one, stb the rest), nvjpeg (JPEG on\n"
          "                   the GPU with nvJPEG, auto's choice the rest)\n"
          "  --png-level N    PNG compression 0..9: 0 stores, 1 fast, 9 smallest (default %d)\n"
          "  --max-pixels N   refuse larger images (default %" PRIu64 ")\n"
          "  -q, --quiet      no notices on stderr\n"
          "  -h, --help       this help\n"
          "  -V, --version    version and build features\n"
          "  --               end of options\n"
          "\nBatch mode (-o DIR): every INPUT is converted into DIR under its own base name:\n"
          "  -o, --output-dir DIR   write outputs here (created files only: see --force)\n"
          "  --from LIST      read input paths from LIST, one per line ('-' = stdin)\n"
          "  --format F       output format png, jpg, bmp or tga (default: the input's)\n"
          "  --force          replace existing outputs (never an input)\n"
          "  -j, --jobs N     host threads (default: online CPU cores)\n"
          "  --devices D      all, or a list of CUDA device numbers like 0,1 (default 0)\n"
          "  --shard K/N      only the inputs whose path hashes to shard K of N\n"
          "  With --report FILE the report is JSON Lines: one object per image and a summary.\n"
          "\nOther commands: gpuimg info [--report FILE] (the CUDA device),\n"
          "gpuimg compare [OPTIONS] BASELINE CURRENT (see gpuimg compare --help).\n"
          "\nExit status: 0 ok, 1 processing failure, 2 usage error, 3 bad input or mask,\n"
          "4 output or report not written, 5 CUDA unavailable or failed.\n"
          "With -o DIR: 0 when every image converted, else the largest failed image's code.\n",
          GPUIMG_DEFAULT_QUALITY, GPUIMG_DEFAULT_PNG_LEVEL, GPUIMG_DEFAULT_MAX_PIXELS);
}
