/* summary.c: `gpuimg summary REPORT...`: the summary lines of batch reports (one per shard or
 * run) added up into one total, with the shards of a sharded run that no report covers. */
#define _XOPEN_SOURCE 700
#include "cli.h"
#include "summary.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"

#define USAGE "Usage: gpuimg summary [--format text|json|html] REPORT...\n"

typedef struct {
  int format; /* 0 text, 1 json, 2 html */
  int help;
} summary_options_t;

static const char *const format_names[] = {"text", "json", "html", NULL};

static const gpuimg_option_t summary_options[] = {
    {.long_name = "format",
     .kind = GPUIMG_OPTION_CHOICE,
     .offset = offsetof(summary_options_t, format),
     .choices = format_names,
     .metavar = "F",
     .help = "text (the default), json (one object) or html (a page)"},
    {.long_name = "help",
     .short_name = 'h',
     .kind = GPUIMG_OPTION_FLAG,
     .offset = offsetof(summary_options_t, help),
     .value = 1,
     .help = "this help"},
    {.long_name = NULL},
};

static double number(const cJSON *o, const char *key, double dflt)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

/* Notes the summary's shard "K/N" (null: the run was not sharded); 0, or -1 (out of memory). */
static int add_shard(totals_t *t, const cJSON *sum)
{
  const cJSON *s = cJSON_GetObjectItemCaseSensitive(sum, "shard");
  int k, n;
  char end;
  if (!cJSON_IsString(s) || sscanf(s->valuestring, "%d/%d%c", &k, &n, &end) != 2 || k < 1 ||
      k > n) {
    t->unsharded++;
    return 0;
  }
  if (t->shards == 0) {
    if (!(t->seen = calloc((size_t)n, 1)))
      return -1;
    t->shards = n;
  } else if (t->shards != n) {
    t->shards = -1;
  }
  if (t->shards == n)
    t->seen[k - 1] = 1;
  return 0;
}

/* Adds one entry of a summary's "results" (an analysis step's total) to t's; 0, or -1 with the
 * error set. */
static int add_result(totals_t *t, const cJSON *r, const char *what)
{
  const cJSON *op_name = cJSON_GetObjectItemCaseSensitive(r, "operation");
  double step = number(r, "step", -1);
  const gpuimg_op_t *op = cJSON_IsString(op_name) ? gpuimg_ops_find(op_name->valuestring) : NULL;
  if (!op || !op->result_parse || !(step >= 0 && step < GPUIMG_MAX_STEPS) ||
      (t->result_ops[(int)step] && t->result_ops[(int)step] != op)) {
    gpuimg_error_set(GPUIMG_EXIT_INPUT, what,
                     "the summary line's results are not those of the other reports' steps");
    return -1;
  }
  int i = (int)step;
  char *json = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(r, "result"));
  void *one = calloc(1, op->result_size);
  if (!t->results[i])
    t->results[i] = calloc(1, op->result_size);
  int rc = json && one && t->results[i] ? 0 : -2;
  if (rc == 0 && op->result_parse(json, one) < 0)
    rc = -1;
  if (rc == 0) {
    op->result_add(t->results[i], one);
    t->result_ops[i] = op;
    t->result_images[i] += number(r, "images", 0);
  }
  free(one);
  cJSON_free(json);
  if (rc == -1)
    gpuimg_error_set(GPUIMG_EXIT_INPUT, what, "the summary line's %s result is malformed",
                     op->name);
  else if (rc == -2)
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, what, "out of memory");
  return rc < 0 ? -1 : 0;
}

/* Adds one summary object; 0, or -1 with the error set. */
static int add_summary(totals_t *t, const cJSON *sum, const char *what)
{
  const char *need[] = {"images", "converted", "failed", "skipped"};
  for (size_t i = 0; i < sizeof need / sizeof need[0]; i++)
    if (!cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(sum, need[i]))) {
      gpuimg_error_set(GPUIMG_EXIT_INPUT, what, "the summary line has no number \"%s\"", need[i]);
      return -1;
    }
  double images = number(sum, "images", 0), inputs = number(sum, "inputs", images);
  double wall = number(sum, "wall_ms", 0);
  t->reports++;
  t->inputs = inputs > t->inputs ? inputs : t->inputs;
  t->images += images;
  t->converted += number(sum, "converted", 0);
  t->failed += number(sum, "failed", 0);
  t->skipped += number(sum, "skipped", 0);
  t->existing += number(sum, "existing", 0);
  t->wall_ms += wall;
  t->wall_ms_max = wall > t->wall_ms_max ? wall : t->wall_ms_max;
  int code = (int)number(sum, "exit_status", 0);
  t->exit_status = code > t->exit_status ? code : t->exit_status;
  if (add_shard(t, sum) < 0) {
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, what, "out of memory");
    return -1;
  }
  const cJSON *r;
  cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(sum, "results"))
  {
    if (add_result(t, r, what) < 0)
      return -1;
  }
  return 0;
}

/* For the page: notes a failed image's line o of the report what; 0, or -1 (out of memory). */
static int add_failure(totals_t *t, const cJSON *o, const char *what)
{
  const cJSON *status = cJSON_GetObjectItemCaseSensitive(o, "status");
  const cJSON *input = cJSON_GetObjectItemCaseSensitive(o, "input");
  const cJSON *name = cJSON_GetObjectItemCaseSensitive(input, "name");
  const cJSON *error = cJSON_GetObjectItemCaseSensitive(o, "error");
  if (!t->failures || !cJSON_IsString(status) || strcmp(status->valuestring, "failed"))
    return 0;
  cJSON *f = cJSON_CreateObject();
  if (f && !cJSON_AddItemToArray(t->failures, f))
    f = (cJSON_Delete(f), NULL);
  if (!f || !cJSON_AddStringToObject(f, "report", what) ||
      (cJSON_IsString(name) && !cJSON_AddStringToObject(f, "input", name->valuestring)) ||
      (cJSON_IsString(error) && !cJSON_AddStringToObject(f, "error", error->valuestring)))
    return -1;
  return 0;
}

/* The interval name of o's timeline_ms into iv ([0] -1 when it has none). */
static void interval(const cJSON *timeline, const char *name, float iv[2])
{
  const cJSON *pair = cJSON_GetObjectItemCaseSensitive(timeline, name);
  const cJSON *a = cJSON_GetArrayItem(pair, 0), *b = cJSON_GetArrayItem(pair, 1);
  iv[0] = iv[1] = -1;
  if (cJSON_GetArraySize(pair) == 2 && cJSON_IsNumber(a) && cJSON_IsNumber(b) &&
      a->valuedouble >= 0 && b->valuedouble >= a->valuedouble)
    iv[0] = (float)a->valuedouble, iv[1] = (float)b->valuedouble;
}

/* For the page: notes an image's line o (its worker and host intervals) in images; 0, or -1
 * (out of memory). A line without timeline_ms is not an image's, or has no times. */
static int add_image(summary_images_t *images, const cJSON *o)
{
  static const char *const names[3] = {"load", "steps", "store"};
  const cJSON *timeline = cJSON_GetObjectItemCaseSensitive(o, "timeline_ms");
  const cJSON *worker = cJSON_GetObjectItemCaseSensitive(o, "worker");
  const cJSON *status = cJSON_GetObjectItemCaseSensitive(o, "status");
  if (!cJSON_IsObject(timeline))
    return 0;
  if (images->n == images->cap) {
    size_t cap = images->cap ? 2 * images->cap : 64;
    summary_image_t *v = realloc(images->v, cap * sizeof *v);
    if (!v)
      return -1;
    images->v = v, images->cap = cap;
  }
  summary_image_t *im = &images->v[images->n++];
  im->worker = cJSON_IsNumber(worker) && worker->valuedouble >= 0 ? (int)worker->valuedouble : -1;
  im->converted = cJSON_IsString(status) && strcmp(status->valuestring, "ok") == 0;
  for (int k = 0; k < 3; k++)
    interval(timeline, names[k], im->iv[k]);
  return 0;
}

/* For the page: forgets n failures from index from on (those of runs that do not count). */
static void drop_failures(totals_t *t, int from, int n)
{
  while (n-- > 0)
    cJSON_DeleteItemFromArray(t->failures, from);
}

/* For the page: keeps the report's summary line sum and its run's images (taking both over);
 * 0, or -1. */
static int add_run(totals_t *t, cJSON *sum, summary_images_t *images, const char *what)
{
  int n = cJSON_GetArraySize(t->runs);
  summary_images_t *all = realloc(t->image_times, (size_t)(n + 1) * sizeof *all);
  cJSON *run = all ? cJSON_CreateObject() : NULL;
  if (all) {
    t->image_times = all;
    memset(&all[n], 0, sizeof all[n]);
  }
  if (!run || !cJSON_AddItemToArray(t->runs, run) ||
      !cJSON_AddStringToObject(run, "report", what)) {
    cJSON_Delete(sum);
    return -1;
  }
  cJSON_AddItemToObject(run, "summary", sum);
  all[n] = *images;
  memset(images, 0, sizeof *images);
  return 0;
}

/* Reads the report at path ("-": stdin) and adds its last summary line; 0, or -1 with the
 * error set (exit 3: unreadable, a line that is not JSON, no summary line). */
static int add_report(totals_t *t, const char *path)
{
  const char *what = strcmp(path, "-") ? path : "<stdin>";
  FILE *f = strcmp(path, "-") ? fopen(path, "r") : stdin;
  char *line = NULL;
  size_t size = 0;
  cJSON *last = NULL;
  int rc = -1, lineno = 0;
  /* The failures of this file from first on; those of the run under way from run on. */
  int first = cJSON_GetArraySize(t->failures), run = first;
  /* The images of the run under way, and of the last run with a summary. */
  summary_images_t going = {0}, counted = {0};
  if (!f) {
    gpuimg_error_set(GPUIMG_EXIT_INPUT, what, "%s", strerror(errno));
    return -1;
  }
  while (getline(&line, &size, f) >= 0) {
    cJSON *o = cJSON_Parse(line);
    lineno++;
    if (!o) {
      gpuimg_error_set(GPUIMG_EXIT_INPUT, what, "line %d is not JSON", lineno);
      goto done;
    }
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "summary"))) {
      cJSON_Delete(last);
      last = o;
      drop_failures(t, first, run - first); /* only the last summary's run counts */
      run = cJSON_GetArraySize(t->failures);
      free(counted.v);
      counted = going;
      memset(&going, 0, sizeof going);
      continue;
    }
    int oom = add_failure(t, o, what) < 0 || (t->runs && add_image(&going, o) < 0);
    cJSON_Delete(o);
    if (oom) {
      gpuimg_error_set(GPUIMG_EXIT_FAILURE, what, "out of memory");
      goto done;
    }
  }
  drop_failures(t, run, cJSON_GetArraySize(t->failures) - run); /* a run without summary */
  if (ferror(f))
    gpuimg_error_set(GPUIMG_EXIT_INPUT, what, "%s", strerror(errno));
  else if (!last)
    gpuimg_error_set(GPUIMG_EXIT_INPUT, what,
                     "no summary line (not a finished gpuimg batch report)");
  else if ((rc = add_summary(t, last, what)) == 0 && t->runs) {
    rc = add_run(t, last, &counted, what);
    last = NULL;
    if (rc < 0)
      gpuimg_error_set(GPUIMG_EXIT_FAILURE, what, "out of memory");
  }
done:
  cJSON_Delete(last);
  free(going.v);
  free(counted.v);
  free(line);
  if (f != stdin)
    fclose(f);
  return rc;
}

void summary_missing_shards(const totals_t *t, char *buf, size_t size, int *count)
{
  size_t len = 0;
  buf[0] = '\0';
  *count = 0;
  for (int k = 1; t->shards > 0 && !t->unsharded && k <= t->shards; k++)
    if (!t->seen[k - 1]) {
      (*count)++;
      if (len + 16 < size)
        len += (size_t)snprintf(buf + len, size - len, "%s%d", len ? " " : "", k);
      else if (len + 4 < size && buf[len - 1] != '.')
        len += (size_t)snprintf(buf + len, size - len, " ...");
    }
}

/* Each analysis step's total as its operation prints it (the whole figures: --format json). */
static void print_results_text(const totals_t *t)
{
  for (int i = 0; i < GPUIMG_MAX_STEPS; i++) {
    char prefix[64];
    if (!t->results[i])
      continue;
    snprintf(prefix, sizeof prefix, "%-13sstep %d, ", t->result_ops[i]->name, i);
    printf("%s%.0f images\n", prefix, t->result_images[i]);
    t->result_ops[i]->result_print(t->results[i], stdout, prefix);
  }
}

static void print_text(const totals_t *t)
{
  char missing[256];
  int nmissing;
  summary_missing_shards(t, missing, sizeof missing, &nmissing);
  printf("reports:     %d\n", t->reports);
  if (t->unsharded)
    printf("shards:      (a report of an unsharded run covers every input)\n");
  else if (t->shards < 0)
    printf("shards:      (reports of runs with different shard counts)\n");
  else if (nmissing)
    printf("shards:      %d of %d (missing: %s)\n", t->shards - nmissing, t->shards, missing);
  else
    printf("shards:      %d of %d\n", t->shards, t->shards);
  printf("inputs:      %.0f\nimages:      %.0f\nconverted:   %.0f\nfailed:      %.0f\n"
         "existing:    %.0f\nskipped:     %.0f (in other shards)\n",
         t->inputs, t->images, t->converted, t->failed, t->existing, t->skipped);
  printf("wall:        %.2f s (longest report), %.2f s added up\n", t->wall_ms_max / 1000.0,
         t->wall_ms / 1000.0);
  printf("exit status: %d (the largest)\n", t->exit_status);
  print_results_text(t);
}

/* The analysis steps' totals as o's "results", as the batch's summary line has them; 0, or -1
 * (out of memory). */
static int add_results_json(const totals_t *t, cJSON *o)
{
  cJSON *a = NULL;
  for (int i = 0; i < GPUIMG_MAX_STEPS; i++) {
    if (!t->results[i])
      continue;
    cJSON *r = NULL;
    char *json = t->result_ops[i]->result_json(t->results[i]);
    int ok = json && (a || (a = cJSON_AddArrayToObject(o, "results"))) &&
             (r = cJSON_CreateObject()) && cJSON_AddItemToArray(a, r);
    ok = ok && cJSON_AddNumberToObject(r, "images", t->result_images[i]) &&
         cJSON_AddNumberToObject(r, "step", i) &&
         cJSON_AddStringToObject(r, "operation", t->result_ops[i]->name) &&
         cJSON_AddRawToObject(r, "result", json);
    free(json);
    if (!ok)
      return -1;
  }
  return 0;
}

/* The totals as one JSON object on stdout; 0, or -1 (out of memory). */
static int print_json(const totals_t *t)
{
  cJSON *o = cJSON_CreateObject(), *m;
  char missing[256], *text;
  int nmissing;
  summary_missing_shards(t, missing, sizeof missing, &nmissing);
  cJSON_AddNumberToObject(o, "reports", t->reports);
  if (t->shards > 0 && !t->unsharded)
    cJSON_AddNumberToObject(o, "shards", t->shards);
  else
    cJSON_AddNullToObject(o, "shards");
  if ((m = cJSON_AddArrayToObject(o, "missing_shards")))
    for (int k = 1; nmissing && k <= t->shards; k++)
      if (!t->seen[k - 1])
        cJSON_AddItemToArray(m, cJSON_CreateNumber(k));
  const char *keys[] = {"inputs",   "images",  "converted", "failed",
                        "existing", "skipped", "wall_ms",   "wall_ms_max"};
  const double vals[] = {t->inputs,   t->images,  t->converted, t->failed,
                         t->existing, t->skipped, t->wall_ms,   t->wall_ms_max};
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
    cJSON_AddNumberToObject(o, keys[i], vals[i]);
  cJSON_AddNumberToObject(o, "exit_status", t->exit_status);
  if (add_results_json(t, o) < 0) {
    cJSON_Delete(o);
    return -1;
  }
  text = cJSON_PrintUnformatted(o);
  cJSON_Delete(o);
  if (!text)
    return -1;
  printf("%s\n", text);
  cJSON_free(text);
  return 0;
}

/* The page on stdout; 0, or -1 (out of memory). */
static int print_html(const totals_t *t)
{
  str_t b = {0};
  summary_format_html(t, &b);
  int rc = b.failed ? -1 : 0;
  if (!b.failed)
    fwrite(b.s, 1, b.len, stdout);
  str_free(&b);
  return rc;
}

static int summary_usage(const char *fmt, const char *arg)
{
  fprintf(stderr, "gpuimg: summary: ");
  fprintf(stderr, fmt, arg);
  fprintf(stderr, "\n" USAGE "Try 'gpuimg summary --help' for more information.\n");
  return GPUIMG_EXIT_USAGE;
}

static void summary_help(void)
{
  printf(USAGE "Add up the summary lines of batch reports (gpuimg ... -o DIR --report FILE):\n"
               "one per shard of a sharded run, or per run of a re-run. Prints the reports and\n"
               "shards read (with the shards of one sharded run that no report covers), the\n"
               "inputs of the list, and the images, converted, failed, existing (left alone by\n"
               "--skip-existing) and skipped (in other shards) added up. '-' reads stdin.\n"
               "\nOptions:\n");
  gpuimg_options_help(stdout, summary_options, 2, 18);
  printf("\nExit status: 0 read, 2 usage error, 3 a report unreadable or without a summary\n"
         "line, 1 out of memory.\n");
}

/* Reads the options, leaving the reports' names at the front of argv; their count, or -1
 * when the usage error was printed (*status its exit code). */
static int take_reports(int argc, char **argv, summary_options_t *o)
{
  int n = 0, options = 1;
  char spelled[64];
  memset(o, 0, sizeof *o);
  for (gpuimg_args_t args = {argc, argv, 1}; args.i < argc; args.i++) {
    char *a = argv[args.i];
    if (options && strcmp(a, "--") == 0) {
      options = 0;
    } else if (options && a[0] == '-' && a[1]) {
      const gpuimg_option_set_t set = {summary_options, o};
      int rc = gpuimg_options_parse(&args, &set, 1, NULL, spelled);
      if (rc != 0) {
        summary_usage(rc > 0 ? "unknown option '%s'" : "%s",
                      rc > 0 ? spelled : gpuimg_error_message());
        return -1;
      }
    } else if (!a[0]) {
      summary_usage("empty file name%s", "");
      return -1;
    } else {
      argv[n++] = a;
    }
  }
  if (n == 0 && !o->help) {
    summary_usage("no reports (give REPORT...)%s", "");
    return -1;
  }
  return n;
}

int gpuimg_summary_main(int argc, char **argv)
{
  summary_options_t o;
  totals_t t = {0};
  int n = take_reports(argc, argv, &o), status = GPUIMG_EXIT_OK;
  if (n < 0)
    return GPUIMG_EXIT_USAGE;
  if (o.help) {
    summary_help();
    return GPUIMG_EXIT_OK;
  }
  if (o.format == 2 && (!(t.runs = cJSON_CreateArray()) || !(t.failures = cJSON_CreateArray()))) {
    fprintf(stderr, "gpuimg: summary: out of memory\n");
    status = GPUIMG_EXIT_FAILURE;
  }
  for (int i = 0; i < n && status == GPUIMG_EXIT_OK; i++)
    if (add_report(&t, argv[i]) < 0) {
      fprintf(stderr, "gpuimg: %s\n", gpuimg_error_message());
      status = gpuimg_error_code();
    }
  if (status == GPUIMG_EXIT_OK) {
    if (o.format == 0)
      print_text(&t);
    else if ((o.format == 1 ? print_json(&t) : print_html(&t)) < 0)
      status = GPUIMG_EXIT_FAILURE;
    if (fflush(stdout) != 0)
      status = GPUIMG_EXIT_OUTPUT;
  }
  free(t.seen);
  for (int i = 0; i < GPUIMG_MAX_STEPS; i++)
    free(t.results[i]);
  for (int i = 0; t.image_times && i < cJSON_GetArraySize(t.runs); i++)
    free(t.image_times[i].v);
  free(t.image_times);
  cJSON_Delete(t.runs);
  cJSON_Delete(t.failures);
  return status;
}
