/* compare_load.c: reading `gpuimg compare`'s report files into runs: one entry per stage key,
 * each with its median and noise over the file's reports. */
#define _POSIX_C_SOURCE 200809L
#include "compare.h"

#include <cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define REPORT_SCHEMA 1 /* the report's schema_version this reader understands */

static void platform_free(platform_t *p)
{
  free(p->backend);
  free(p->device);
  free(p->cc);
  free(p->runtime_major);
  memset(p, 0, sizeof *p);
}

void compare_runs_free(runs_t *r)
{
  for (int i = 0; i < r->nplatforms; i++)
    platform_free(&r->platforms[i]);
  for (int i = 0; i < r->nentries; i++) {
    free(r->entries[i].key);
    free(r->entries[i].ms);
  }
  free(r->platforms);
  free(r->entries);
  free(r->slots);
  memset(r, 0, sizeof *r);
}

static const char *json_string(const cJSON *obj, const char *key)
{
  const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
  return cJSON_IsString(item) && item->valuestring ? item->valuestring : NULL;
}

static int json_number(const cJSON *obj, const char *key, double *v)
{
  const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!cJSON_IsNumber(item) || !isfinite(item->valuedouble))
    return 0;
  *v = item->valuedouble;
  return 1;
}

int compare_platform_eq(const platform_t *a, const platform_t *b)
{
  return !strcmp(a->backend, b->backend) && !strcmp(a->device, b->device) &&
         !strcmp(a->cc, b->cc) && !strcmp(a->runtime_major, b->runtime_major);
}

/* Adds the report's platform to runs unless it is already there. */
static int add_platform(runs_t *runs, const cJSON *root)
{
  const char *backend = json_string(root, "backend"), *device = json_string(root, "device");
  const char *cc = json_string(root, "compute_capability");
  const char *runtime = json_string(root, "cuda_runtime");
  platform_t p = {strdup(backend ? backend : ""),
                  strdup(device && strcmp(device, "none") ? device : ""), strdup(cc ? cc : ""),
                  strndup(runtime ? runtime : "", runtime ? strcspn(runtime, ".") : 0)};
  if (!p.backend || !p.device || !p.cc || !p.runtime_major ||
      compare_grow(&runs->platforms, runs->nplatforms, &runs->platforms_cap, sizeof p) < 0) {
    platform_free(&p);
    return compare_out_of_memory(runs->name);
  }
  for (int i = 0; i < runs->nplatforms; i++)
    if (compare_platform_eq(&runs->platforms[i], &p)) {
      platform_free(&p);
      return 0;
    }
  runs->platforms[runs->nplatforms++] = p;
  return 0;
}

/* FNV-1a: a batch file can hold thousands of keys, so lookups must not be linear. */
static size_t hash_key(const char *key)
{
  uint64_t h = 0xcbf29ce484222325u;
  for (const unsigned char *p = (const unsigned char *)key; *p; p++)
    h = (h ^ *p) * 0x100000001b3u;
  return (size_t)h;
}

/* The slot of key in runs' index: its entry's, or the free one where it would go. */
static size_t find_slot(const runs_t *runs, const char *key)
{
  size_t mask = runs->nslots - 1, i = hash_key(key) & mask;
  while (runs->slots[i] && strcmp(runs->entries[runs->slots[i] - 1].key, key) != 0)
    i = (i + 1) & mask;
  return i;
}

entry_t *compare_find_entry(const runs_t *runs, const char *key)
{
  if (!runs->nslots)
    return NULL;
  int n = runs->slots[find_slot(runs, key)];
  return n ? &runs->entries[n - 1] : NULL;
}

/* Indexes the last entry, doubling the index first when it is half full. */
static int index_last_entry(runs_t *runs)
{
  if ((size_t)runs->nentries * 2 > runs->nslots) {
    size_t nslots = runs->nslots ? runs->nslots * 2 : 64;
    int *slots = calloc(nslots, sizeof *slots);
    if (!slots)
      return -1;
    free(runs->slots);
    runs->slots = slots;
    runs->nslots = nslots;
    for (int i = 0; i < runs->nentries - 1; i++)
      runs->slots[find_slot(runs, runs->entries[i].key)] = i + 1;
  }
  runs->slots[find_slot(runs, runs->entries[runs->nentries - 1].key)] = runs->nentries;
  return 0;
}

/* Records one report's median (and noise) for key. */
static int add_sample(runs_t *runs, const char *key, double ms, double mad_pct)
{
  entry_t *e = compare_find_entry(runs, key);
  if (!e) {
    if (compare_grow(&runs->entries, runs->nentries, &runs->entries_cap, sizeof *e) < 0)
      return compare_out_of_memory(runs->name);
    e = &runs->entries[runs->nentries];
    memset(e, 0, sizeof *e);
    if (!(e->key = strdup(key)))
      return compare_out_of_memory(runs->name);
    runs->nentries++;
    if (index_last_entry(runs) < 0)
      return compare_out_of_memory(runs->name);
  }
  if (compare_grow(&e->ms, e->n, &e->cap, sizeof *e->ms) < 0)
    return compare_out_of_memory(runs->name);
  e->ms[e->n++] = ms;
  if (mad_pct > e->max_mad_pct)
    e->max_mad_pct = mad_pct;
  return 0;
}

/* A key seen in several reports of one file (a batch over images of one size, repeated
 * runs) is the median of their medians; its noise the larger of their mad_pct and the
 * spread of those medians (their MAD, in % of the median). */
static int summarise(runs_t *runs)
{
  for (int i = 0; i < runs->nentries; i++) {
    entry_t *e = &runs->entries[i];
    double *dev = malloc((size_t)e->n * sizeof *dev);
    if (!dev)
      return compare_out_of_memory(runs->name);
    e->median = gpuimg_median(e->ms, e->n);
    for (int k = 0; k < e->n; k++)
      dev[k] = fabs(e->ms[k] - e->median);
    double spread = e->median > 0 ? 100.0 * gpuimg_median(dev, e->n) / e->median : 0.0;
    free(dev);
    e->noise_pct = spread > e->max_mad_pct ? spread : e->max_mad_pct;
  }
  return 0;
}

static int cmp_step(const void *a, const void *b)
{
  double x = 0, y = 0;
  json_number(*(const cJSON *const *)a, "step", &x);
  json_number(*(const cJSON *const *)b, "step", &y);
  return (x > y) - (x < y);
}

static int cmp_name(const void *a, const void *b)
{
  return strcmp((*(const cJSON *const *)a)->string, (*(const cJSON *const *)b)->string);
}

/* Appends a JSON option value: numbers with 15 significant digits, strings as they are. */
static void add_value(str_t *b, const cJSON *v)
{
  if (cJSON_IsNumber(v)) {
    str_addf(b, "%.15g", v->valuedouble);
  } else if (cJSON_IsString(v) && v->valuestring) {
    str_add_clean(b, v->valuestring, 0);
  } else {
    char *text = cJSON_PrintUnformatted(v);
    if (!text) {
      b->failed = 1;
      return;
    }
    str_add_clean(b, text, 0);
    free(text);
  }
}

/* The report's operation stages, those with a step and an options object, in step order;
 * *nops says how many. The caller frees the array; NULL when out of memory. */
static const cJSON **operation_stages(const cJSON *stages, int *nops)
{
  int n = cJSON_GetArraySize(stages);
  const cJSON **ops = malloc((size_t)(n ? n : 1) * sizeof *ops);
  const cJSON *s;
  if (!ops)
    return NULL;
  *nops = 0;
  cJSON_ArrayForEach(s, stages)
  {
    double step;
    if (json_number(s, "step", &step) &&
        cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(s, "options")))
      ops[(*nops)++] = s;
  }
  /* insertion sort: stable, so equal steps keep the file's order */
  for (int i = 1; i < *nops; i++)
    for (int k = i; k > 0 && cmp_step(&ops[k - 1], &ops[k]) > 0; k--) {
      const cJSON *t = ops[k];
      ops[k] = ops[k - 1];
      ops[k - 1] = t;
    }
  return ops;
}

/* Appends "<op>(<option>=<value>,...,variant=<v>)" for the operation stage op, its options
 * sorted by name so their order in the file does not matter. */
static int add_operation(str_t *b, const cJSON *op, int ignore_variant)
{
  const cJSON *options = cJSON_GetObjectItemCaseSensitive(op, "options"), *opt;
  const char *variant = json_string(op, "variant");
  int nopt = cJSON_GetArraySize(options), k = 0;
  const cJSON **sorted = malloc((size_t)(nopt ? nopt : 1) * sizeof *sorted);
  if (!sorted)
    return -1;
  cJSON_ArrayForEach(opt, options) if (opt->string) sorted[k++] = opt;
  qsort(sorted, (size_t)k, sizeof *sorted, cmp_name);
  str_add_clean(b, json_string(op, "name"), 0);
  int want_variant = variant && variant[0] && !ignore_variant;
  if (k > 0 || want_variant) {
    str_lit(b, "(");
    for (int j = 0; j < k; j++) {
      str_addf(b, "%s", j ? "," : "");
      str_add_clean(b, sorted[j]->string, 0);
      str_lit(b, "=");
      add_value(b, sorted[j]);
    }
    if (want_variant) {
      str_addf(b, "%svariant=", k ? "," : "");
      str_add_clean(b, variant, 0);
    }
    str_lit(b, ")");
  }
  free(sorted);
  return 0;
}

/* The report's identity, the first part of each of its keys:
 * "<op>(<option>=<value>,...,variant=<v>) then <op>... <W>x<H>x<C> <backend>: ". */
static int report_identity(const cJSON *root, const cJSON *stages, int ignore_variant, str_t *b)
{
  int nops;
  const cJSON **ops = operation_stages(stages, &nops);
  if (!ops)
    return -1;
  for (int i = 0; i < nops; i++) {
    if (i > 0)
      str_lit(b, " then ");
    if (add_operation(b, ops[i], ignore_variant) < 0) {
      free(ops);
      return -1;
    }
  }
  free(ops);
  if (nops == 0)
    str_lit(b, "(no operation)");

  const cJSON *input = cJSON_GetObjectItemCaseSensitive(root, "input");
  double w, h, c;
  if (json_number(input, "width", &w) && json_number(input, "height", &h) &&
      json_number(input, "channels", &c))
    str_addf(b, " %.0fx%.0fx%.0f ", w, h, c);
  else
    str_lit(b, " ?x?x? ");
  const char *backend = json_string(root, "backend");
  str_add_clean(b, backend ? backend : "?", 0);
  str_lit(b, ": ");
  return b->failed ? -1 : 0;
}

/* Compared by default: CUDA-event stages and the operations' host stages (those with a
 * step); the host I/O stages (read, decode, encode, write, mask-*) with --all-stages. */
static int stage_selected(const cJSON *s, const compare_options_t *o)
{
  const char *clock = json_string(s, "clock");
  double step;
  return o->all_stages || (clock && strcmp(clock, "cuda-event") == 0) ||
         json_number(s, "step", &step);
}

#ifdef __GNUC__
__attribute__((format(printf, 3, 4)))
#endif
static int
report_error(const runs_t *runs, int line, const char *fmt, ...)
{
  char reason[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(reason, sizeof reason, fmt, ap);
  va_end(ap);
  gpuimg_error_set(GPUIMG_EXIT_INPUT, runs->name, "invalid report at line %d: %s", line, reason);
  return -1;
}

/* Refuses a report (root, an object starting at line, with the array stages) that this
 * reader cannot take: another schema_version, a stage without a name or a valid time. */
static int check_report(const runs_t *runs, const cJSON *root, const cJSON *stages, int line)
{
  const cJSON *schema = cJSON_GetObjectItemCaseSensitive(root, "schema_version");
  if (schema && (!cJSON_IsNumber(schema) || schema->valuedouble != REPORT_SCHEMA)) {
    char *text = cJSON_PrintUnformatted(schema);
    report_error(runs, line, "schema_version %s is not supported (expected %d)", text ? text : "?",
                 REPORT_SCHEMA);
    free(text);
    return -1;
  }
  int k = 0;
  const cJSON *s;
  cJSON_ArrayForEach(s, stages)
  {
    double ms;
    k++;
    if (!cJSON_IsObject(s) || !json_string(s, "name"))
      return report_error(runs, line, "stage %d has no \"name\"", k);
    if (!json_number(s, "ms", &ms) || ms < 0)
      return report_error(runs, line, "stage %d (%s) has no valid \"ms\"", k,
                          json_string(s, "name"));
  }
  return 0;
}

/* Appends the stage s's part of its key: "<name>", "#<step>" when it has one, and " (2)"
 * when the name repeats without a step (mask-decode of two portraits). */
static void add_stage_name(str_t *key, const cJSON *stages, const cJSON *s)
{
  const char *name = json_string(s, "name");
  double step = -1;
  int has_step = json_number(s, "step", &step), seen = 1;
  for (const cJSON *t = stages->child; t != s; t = t->next) {
    double tstep = -1;
    int t_has = json_number(t, "step", &tstep);
    seen += !strcmp(json_string(t, "name"), name) && t_has == has_step && tstep == step;
  }
  str_add_clean(key, name, 0);
  if (has_step)
    str_addf(key, "#%.0f", step);
  if (seen > 1)
    str_addf(key, " (%d)", seen);
}

/* Adds the selected stages of a checked report to runs, each under its key. */
static int add_stages(runs_t *runs, const cJSON *root, const cJSON *stages,
                      const compare_options_t *o)
{
  str_t key = {0};
  if (report_identity(root, stages, o->ignore_variant, &key) < 0) {
    str_free(&key);
    return compare_out_of_memory(runs->name);
  }
  size_t prefix = key.len;
  int rc = 0;
  const cJSON *s;
  cJSON_ArrayForEach(s, stages)
  {
    if (!stage_selected(s, o))
      continue;
    double ms = 0, mad = 0;
    json_number(s, "ms", &ms);
    if (!json_number(s, "mad_pct", &mad) || mad < 0)
      mad = 0;
    key.len = prefix;
    add_stage_name(&key, stages, s);
    if (key.failed) {
      rc = compare_out_of_memory(runs->name);
      break;
    }
    if ((rc = add_sample(runs, key.s, ms, mad)) < 0)
      break;
  }
  str_free(&key);
  return rc;
}

/* Adds the report root (an object starting at line) to runs. Objects without "stages"
 * (a batch's summary line) are not reports and are skipped. */
static int add_report(runs_t *runs, const cJSON *root, int line, const compare_options_t *o)
{
  if (!cJSON_IsObject(root))
    return report_error(runs, line, "not a JSON object");
  const cJSON *stages = cJSON_GetObjectItemCaseSensitive(root, "stages");
  if (!stages)
    return 0;
  if (!cJSON_IsArray(stages))
    return report_error(runs, line, "\"stages\" is not an array");
  if (check_report(runs, root, stages, line) < 0)
    return -1;
  runs->nreports++;
  if (add_platform(runs, root) < 0)
    return -1;
  return add_stages(runs, root, stages, o);
}

/* The line of pos, counting on from an earlier (*from, *line) so a long file is read once. */
static int line_at(const char **from, int *line, const char *pos)
{
  for (; *from < pos; ++*from)
    *line += **from == '\n';
  return *line;
}

int compare_runs_load(const char *path, const compare_options_t *o, runs_t *runs)
{
  gpuimg_buf_t buf;
  memset(runs, 0, sizeof *runs);
  runs->name = strcmp(path, "-") ? path : "<stdin>";
  if (gpuimg_text_read(path, &buf) < 0)
    return -1;
  if (gpuimg_buf_append(&buf, "", 1) < 0) { /* a NUL after the text, for safety */
    gpuimg_buf_free(&buf);
    return compare_out_of_memory(runs->name);
  }
  const char *text = (const char *)buf.data, *end = text + buf.size - 1, *p = text;
  const char *nul = memchr(text, '\0', buf.size - 1), *counted = text;
  int rc = 0, line = 1;
  if (nul) {
    gpuimg_error_set(GPUIMG_EXIT_INPUT, runs->name, "invalid JSON at line %d (a NUL byte)",
                     line_at(&counted, &line, nul));
    rc = -1;
  }
  while (rc == 0) {
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
      p++;
    if (p == end)
      break;
    const char *stop = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(p, (size_t)(end - p), &stop, 0);
    if (!root) {
      const char *at = stop && stop >= p && stop <= end ? stop : p;
      gpuimg_error_set(GPUIMG_EXIT_INPUT, runs->name, "invalid JSON at line %d",
                       line_at(&counted, &line, at));
      rc = -1;
      break;
    }
    rc = add_report(runs, root, line_at(&counted, &line, p), o);
    cJSON_Delete(root);
    p = stop;
  }
  if (rc == 0 && runs->nreports == 0) {
    gpuimg_error_set(GPUIMG_EXIT_INPUT, runs->name, "no report (no JSON object with \"stages\")");
    rc = -1;
  }
  if (rc == 0)
    rc = summarise(runs);
  gpuimg_buf_free(&buf);
  return rc;
}
