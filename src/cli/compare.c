/* compare.c: `gpuimg compare BASELINE CURRENT`: its command line and help, and the run from
 * the two report files to the verdict's output and exit status. */
#include "compare.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"

#define DEFAULT_THRESHOLD 10 /* written as a literal for the help text */
#define MAX_THRESHOLD 1000000.0
#define STRINGIFY_(x) #x
#define STRINGIFY(x) STRINGIFY_(x)

/* --threshold PCT: a percentage, "%" allowed after it, from 0 to MAX_THRESHOLD. */
static int parse_threshold(const gpuimg_option_t *opt, const char *spelled, const char *arg,
                           void *target)
{
  compare_options_t *o = target;
  char *end;
  (void)opt;
  errno = 0;
  o->threshold = strtod(arg, &end);
  if (*end == '%')
    end++;
  if (errno || end == arg || *end || !isfinite(o->threshold) || o->threshold < 0 ||
      o->threshold > MAX_THRESHOLD) {
    gpuimg_error_set(GPUIMG_EXIT_USAGE, spelled,
                     "invalid value '%s' (expected a percentage from 0 to 1000000)", arg);
    return -1;
  }
  return 0;
}

static const char *const format_names[] = {"text", "json", "junit", "html",
                                           NULL}; /* format_t order */

#define OFFSET(field) offsetof(compare_options_t, field)
#define FLAG(name, field, text)                                                                    \
  {                                                                                                \
    .long_name = name, .kind = GPUIMG_OPTION_FLAG, .offset = OFFSET(field), .value = 1,            \
    .help = text                                                                                   \
  }

static const gpuimg_option_t compare_options[] = {
    {.long_name = "threshold",
     .kind = GPUIMG_OPTION_CUSTOM,
     .offset = OFFSET(threshold),
     .metavar = "PCT",
     .parse = parse_threshold,
     .help = "allowed slowdown in percent, on top of the noise (default " STRINGIFY(
         DEFAULT_THRESHOLD) ")"},
    {.long_name = "format",
     .kind = GPUIMG_OPTION_CHOICE,
     .offset = OFFSET(format),
     .choices = format_names,
     .metavar = "F",
     .help = "text (a table, the default), json, junit (JUnit XML) or html (a page)"},
    {.long_name = "output",
     .short_name = 'o',
     .kind = GPUIMG_OPTION_STRING,
     .offset = OFFSET(output),
     .metavar = "FILE",
     .empty_what = "file name",
     .help = "write there (replaced whole, atomically) instead of stdout"},
    FLAG("allow-missing", allow_missing, "stages only in BASELINE do not fail the comparison"),
    FLAG("all-stages", all_stages, "compare the host I/O stages too"),
    FLAG("ignore-variant", ignore_variant,
         "match stages whatever their variant (naive, tiled, fast)"),
    FLAG("force", force, "compare runs that are not comparable, with a warning"),
    {.long_name = "help",
     .short_name = 'h',
     .kind = GPUIMG_OPTION_FLAG,
     .offset = OFFSET(help),
     .value = 1,
     .help = "this help"},
    {.long_name = NULL},
};

static int usage_error(const char *fmt, const char *arg)
{
  gpuimg_error_set(GPUIMG_EXIT_USAGE, "compare", fmt, arg);
  return -1;
}

/* Handles the option at args->i; advances args->i past a separate value. */
static int parse_option(gpuimg_args_t *args, compare_options_t *o)
{
  const gpuimg_option_set_t set = {compare_options, o};
  const char *a = args->argv[args->i];
  char spelled[64];
  int rc = gpuimg_options_parse(args, &set, 1, NULL, spelled);
  if (rc == 1) /* "-hx": a known flag with more after it is named whole */
    return usage_error("unknown option '%s'", a[1] != '-' && spelled[2] ? a : spelled);
  if (rc < 0) /* "--format: invalid value ..." becomes "compare: --format: invalid value ..." */
    return usage_error("%s", gpuimg_error_message());
  return 0;
}

static int parse_args(int argc, char **argv, compare_options_t *o)
{
  const char *positional[2];
  int npositional = 0, end_of_options = 0;

  memset(o, 0, sizeof *o);
  o->threshold = DEFAULT_THRESHOLD;
  for (gpuimg_args_t args = {argc, argv, 1}; args.i < argc; args.i++) {
    const char *a = argv[args.i];
    if (!end_of_options && strcmp(a, "--") == 0) {
      end_of_options = 1;
      continue;
    }
    if (!end_of_options && a[0] == '-' && a[1] != '\0') {
      if (parse_option(&args, o) < 0)
        return -1;
      continue;
    }
    if (npositional == 2)
      return usage_error("unexpected argument '%s' (BASELINE and CURRENT already given)", a);
    if (!a[0])
      return usage_error("empty file name%s", "");
    positional[npositional++] = a;
  }
  if (o->help)
    return 0;
  if (npositional < 2)
    return usage_error("%s", npositional ? "CURRENT missing" : "BASELINE and CURRENT missing");
  if (strcmp(positional[0], "-") == 0 && strcmp(positional[1], "-") == 0)
    return usage_error("BASELINE and CURRENT cannot both be stdin%s", "");
  o->baseline = positional[0];
  o->current = positional[1];
  return 0;
}

static void compare_usage(FILE *f)
{
  fprintf(f, "Try 'gpuimg compare --help' for more information.\n");
}

static void compare_help(FILE *f)
{
  fprintf(f, "Usage: gpuimg compare [OPTIONS] BASELINE CURRENT\n"
             "Compare two timing reports (gpuimg --report) and flag the stages that got slower.\n"
             "\n"
             "BASELINE and CURRENT each hold one report or several: JSON Lines, or reports\n"
             "written one after another; objects without \"stages\" (a batch's summary) are\n"
             "skipped. '-' reads one of them from stdin.\n"
             "\n"
             "Stages match by key: the pipeline (each operation with its options and variant,\n"
             "in step order), the input's width x height x channels, the backend and the stage\n"
             "name and step; the order of the reports in the files does not matter. A key in\n"
             "several reports of one file counts as the median of their medians. Compared:\n"
             "CUDA-event stages and the operations' host stages; the host I/O stages (read,\n"
             "decode, encode, write, mask-*) only with --all-stages.\n"
             "\n"
             "A stage is SLOWER when\n"
             "  current > baseline * (1 + (threshold + noise) / 100)\n"
             "where noise is the larger mad_pct of the two, so a noisy stage needs a bigger\n"
             "change; it is faster when baseline > current * (1 + (threshold + noise) / 100).\n"
             "A stage only in BASELINE is missing (a failure unless --allow-missing); one only\n"
             "in CURRENT is new (for information). Runs on another backend, device, compute\n"
             "capability or CUDA runtime major version, or files without a single common\n"
             "stage, are not comparable.\n"
             "\n"
             "Options:\n");
  gpuimg_options_help(f, compare_options, 2, 18);
  fprintf(f,
          "  %-18s end of options\n"
          "\n"
          "Exit status: 0 no regression, 1 a stage slower or missing, 2 usage error,\n"
          "3 a report unreadable, invalid or not comparable, 4 output not written.\n",
          "--");
}

/* The same existing file (an output must never replace an input). */
static int same_file(const char *a, const char *b)
{
  return strcmp(a, "-") && strcmp(b, "-") && gpuimg_same_file(a, b);
}

/* Opens -o's file, refusing one that is an input; *opened says whether it was. */
static int open_output(const compare_options_t *o, gpuimg_output_t *out, int *opened)
{
  if (!o->output)
    return 0;
  if (same_file(o->output, o->baseline) || same_file(o->output, o->current)) {
    gpuimg_error_set(GPUIMG_EXIT_OUTPUT, o->output, "output is the same file as the input");
    return -1;
  }
  gpuimg_output_install_signal_cleanup();
  if (gpuimg_output_open(out, o->output, 0) < 0)
    return -1;
  *opened = 1;
  return 0;
}

/* Builds the output in the chosen format into text. */
static int format_result(const runs_t *base, const runs_t *cur, const result_t *res,
                         const compare_options_t *o, str_t *text)
{
  if (o->format == FORMAT_TEXT)
    compare_format_text(base, cur, res, o, text);
  else if (o->format == FORMAT_JUNIT)
    compare_format_junit(base, cur, res, o, text);
  else if (o->format == FORMAT_HTML)
    compare_format_html(base, cur, res, o, text);
  else if (compare_format_json(base, cur, res, o, text) < 0)
    return -1;
  return text->failed ? compare_out_of_memory("compare") : 0;
}

/* Writes text to the output, committing it, or to stdout. */
static int write_result(const str_t *text, gpuimg_output_t *out, int *have_out)
{
  if (*have_out) {
    *have_out = 0;
    return gpuimg_output_commit(out, text->s, text->len);
  }
  if (fwrite(text->s, 1, text->len, stdout) != text->len || fflush(stdout) != 0) {
    gpuimg_error_set(GPUIMG_EXIT_OUTPUT, "<stdout>", "write failed: %s", strerror(errno));
    return -1;
  }
  return 0;
}

/* "gpuimg: compare: 2 stages slower, 1 stage missing (threshold 10% + noise)" */
static void print_regression(const result_t *res, const compare_options_t *o)
{
  char what[128] = "";
  int n = 0;
  if (res->slower)
    n += snprintf(what + n, sizeof what - (size_t)n, "%d stage%s slower", res->slower,
                  res->slower == 1 ? "" : "s");
  if (res->missing && !o->allow_missing)
    snprintf(what + n, sizeof what - (size_t)n, "%s%d stage%s missing", n ? ", " : "", res->missing,
             res->missing == 1 ? "" : "s");
  fprintf(stderr, "gpuimg: compare: %s (threshold %.10g%% + noise)\n", what, o->threshold);
}

int gpuimg_compare_main(int argc, char **argv)
{
  compare_options_t o;
  runs_t base = {0}, cur = {0};
  result_t res = {0};
  gpuimg_output_t out = {0};
  str_t text = {0};
  int status = GPUIMG_EXIT_OK, have_out = 0;

  out.fd = -1;
  if (parse_args(argc, argv, &o) < 0) {
    fprintf(stderr, "gpuimg: %s\n", gpuimg_error_message());
    compare_usage(stderr);
    return GPUIMG_EXIT_USAGE;
  }
  if (o.help) {
    compare_help(stdout);
    return GPUIMG_EXIT_OK;
  }
  if (open_output(&o, &out, &have_out) < 0 || compare_runs_load(o.baseline, &o, &base) < 0 ||
      compare_runs_load(o.current, &o, &cur) < 0 || compare_check_platforms(&base, &cur, &o) < 0 ||
      compare_match(&base, &cur, &o, &res) < 0 || format_result(&base, &cur, &res, &o, &text) < 0 ||
      write_result(&text, &out, &have_out) < 0)
    goto fail;
  if (compare_failed(&res, &o)) {
    print_regression(&res, &o);
    status = GPUIMG_EXIT_FAILURE;
  }
  goto done;

fail:
  status = gpuimg_error_code();
  fprintf(stderr, "gpuimg: %s\n", gpuimg_error_message());
  if (status == GPUIMG_EXIT_USAGE)
    compare_usage(stderr);
  if (have_out)
    gpuimg_output_abort(&out);
done:
  str_free(&text);
  free(res.rows);
  compare_runs_free(&base);
  compare_runs_free(&cur);
  return status;
}
