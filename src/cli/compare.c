/* compare.c: `gpuimg compare BASELINE CURRENT`: timing reports in, regressions out. */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"

#include <cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_THRESHOLD 10.0
#define MAX_THRESHOLD 1000000.0
#define REPORT_SCHEMA 1 /* the report's schema_version this reader understands */

typedef enum { FORMAT_TEXT, FORMAT_JSON, FORMAT_JUNIT } format_t;

/* The compare command line; strings point into argv. */
typedef struct {
  const char *baseline, *current; /* "-": stdin */
  const char *output;             /* NULL: stdout */
  format_t format;
  double threshold; /* allowed slowdown in %, on top of the noise */
  int allow_missing, all_stages, ignore_variant, force, help;
} options_t;

/* ---------------------------------------------------------------------------------------------
 * A growing NUL-terminated string. Allocation failure is sticky: callers check failed once. */

typedef struct {
  char *s;
  size_t len, cap;
  int failed;
} str_t;

static void str_add(str_t *b, const char *p, size_t n)
{
  if (b->failed)
    return;
  if (n + 1 > b->cap - b->len) {
    size_t cap = b->cap ? b->cap : 256;
    while (n + 1 > cap - b->len) {
      if (cap > SIZE_MAX / 2) {
        b->failed = 1;
        return;
      }
      cap *= 2;
    }
    char *s = realloc(b->s, cap);
    if (!s) {
      b->failed = 1;
      return;
    }
    b->s = s;
    b->cap = cap;
  }
  memcpy(b->s + b->len, p, n);
  b->len += n;
  b->s[b->len] = '\0';
}

#ifdef __GNUC__
__attribute__((format(printf, 2, 3)))
#endif
static void
str_addf(str_t *b, const char *fmt, ...)
{
  char small[256];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(small, sizeof small, fmt, ap);
  va_end(ap);
  if (n < 0) {
    b->failed = 1;
    return;
  }
  if ((size_t)n < sizeof small) {
    str_add(b, small, (size_t)n);
    return;
  }
  char *big = malloc((size_t)n + 1);
  if (!big) {
    b->failed = 1;
    return;
  }
  va_start(ap, fmt);
  vsnprintf(big, (size_t)n + 1, fmt, ap);
  va_end(ap);
  str_add(b, big, (size_t)n);
  free(big);
}

/* Appends a string literal, its length counted by the compiler. */
#define str_lit(b, literal) str_add((b), "" literal, sizeof(literal) - 1)

static void str_free(str_t *b)
{
  free(b->s);
  memset(b, 0, sizeof *b);
}

/* Length of the valid UTF-8 sequence at s (n bytes left), 0 if it is not one. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
  unsigned char c = s[0];
  size_t len = c < 0x80             ? 1
               : (c & 0xe0) == 0xc0 ? 2
               : (c & 0xf0) == 0xe0 ? 3
               : (c & 0xf8) == 0xf0 ? 4
                                    : 0;
  if (len == 0 || len > n)
    return 0;
  if (len == 1)
    return 1;
  uint32_t cp = c & (0x7f >> len);
  for (size_t k = 1; k < len; k++) {
    if ((s[k] & 0xc0) != 0x80)
      return 0;
    cp = (cp << 6) | (s[k] & 0x3f);
  }
  static const uint32_t min_cp[5] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < min_cp[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
    return 0;
  if (cp == 0xfffe || cp == 0xffff) /* not characters; XML refuses them */
    return 0;
  return len;
}

/* Appends s made printable: invalid UTF-8 becomes U+FFFD, control characters '?';
 * with xml, the five XML specials become entities (safe in text and attributes). */
static void str_add_clean(str_t *b, const char *s, int xml)
{
  const unsigned char *p = (const unsigned char *)s;
  size_t n = strlen(s);
  while (n > 0) {
    size_t len = utf8_len(p, n);
    if (len == 0) {
      str_lit(b, "\xef\xbf\xbd");
      len = 1;
    } else if (len == 1 && (*p < 0x20 || *p == 0x7f)) {
      str_lit(b, "?");
    } else if (xml && len == 1 && strchr("&<>\"'", *p)) {
      static const char *const entity[] = {"&amp;", "&lt;", "&gt;", "&quot;", "&apos;"};
      const char *e = entity[strchr("&<>\"'", *p) - "&<>\"'"];
      str_add(b, e, strlen(e));
    } else {
      str_add(b, (const char *)p, len);
    }
    p += len;
    n -= len;
  }
}

static int out_of_memory(const char *what)
{
  gpuimg_error_set(GPUIMG_EXIT_FAILURE, what, "out of memory");
  return -1;
}

/* Makes room for one more element of size bytes in *array (count n, capacity *cap). */
static int grow(void *array, int n, int *cap, size_t size)
{
  if (n < *cap)
    return 0;
  int new_cap = *cap ? *cap * 2 : 16;
  void *p = realloc(*(void **)array, (size_t)new_cap * size);
  if (!p)
    return -1;
  *(void **)array = p;
  *cap = new_cap;
  return 0;
}

/* ---------------------------------------------------------------------------------------------
 * The reports of one file, reduced to what is compared. */

/* What must be the same for two runs' timings to be comparable. */
typedef struct {
  char *backend, *device, *cc, *runtime_major; /* "" when the report has none */
} platform_t;

/* One stage key of a file, over every report of the file that has it. */
typedef struct {
  char *key;
  double *ms; /* each report's median */
  int n, cap;
  double max_mad_pct;
  double median, noise_pct; /* the summary, set by summarise() */
} entry_t;

typedef struct {
  const char *name; /* the path as given, "<stdin>" for "-" */
  int nreports;
  platform_t *platforms; /* distinct ones, in order of appearance */
  int nplatforms, platforms_cap;
  entry_t *entries; /* in order of appearance */
  int nentries, entries_cap;
  int *slots; /* hash index of entries by key: entry number + 1, 0 for a free slot */
  size_t nslots;
} runs_t;

static void platform_free(platform_t *p)
{
  free(p->backend);
  free(p->device);
  free(p->cc);
  free(p->runtime_major);
  memset(p, 0, sizeof *p);
}

static void runs_free(runs_t *r)
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

static int platform_eq(const platform_t *a, const platform_t *b)
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
      grow(&runs->platforms, runs->nplatforms, &runs->platforms_cap, sizeof p) < 0) {
    platform_free(&p);
    return out_of_memory(runs->name);
  }
  for (int i = 0; i < runs->nplatforms; i++)
    if (platform_eq(&runs->platforms[i], &p)) {
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

static entry_t *find_entry(const runs_t *runs, const char *key)
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
  entry_t *e = find_entry(runs, key);
  if (!e) {
    if (grow(&runs->entries, runs->nentries, &runs->entries_cap, sizeof *e) < 0)
      return out_of_memory(runs->name);
    e = &runs->entries[runs->nentries];
    memset(e, 0, sizeof *e);
    if (!(e->key = strdup(key)))
      return out_of_memory(runs->name);
    runs->nentries++;
    if (index_last_entry(runs) < 0)
      return out_of_memory(runs->name);
  }
  if (grow(&e->ms, e->n, &e->cap, sizeof *e->ms) < 0)
    return out_of_memory(runs->name);
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
      return out_of_memory(runs->name);
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

/* The report's identity, the first part of each of its keys:
 * "<op>(<option>=<value>,...,variant=<v>) then <op>... <W>x<H>x<C> <backend>: ".
 * Operation stages are those with a step and an options object, in step order;
 * options sorted by name, so their order in the file does not matter. */
static int report_identity(const cJSON *root, const cJSON *stages, int ignore_variant, str_t *b)
{
  int n = cJSON_GetArraySize(stages), nops = 0;
  const cJSON **ops = malloc((size_t)(n ? n : 1) * sizeof *ops);
  const cJSON *s, *opt;
  if (!ops)
    return -1;
  cJSON_ArrayForEach(s, stages)
  {
    double step;
    if (json_number(s, "step", &step) &&
        cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(s, "options")))
      ops[nops++] = s;
  }
  /* insertion sort: stable, so equal steps keep the file's order */
  for (int i = 1; i < nops; i++)
    for (int k = i; k > 0 && cmp_step(&ops[k - 1], &ops[k]) > 0; k--) {
      const cJSON *t = ops[k];
      ops[k] = ops[k - 1];
      ops[k - 1] = t;
    }
  for (int i = 0; i < nops; i++) {
    const cJSON *options = cJSON_GetObjectItemCaseSensitive(ops[i], "options");
    const char *variant = json_string(ops[i], "variant");
    int nopt = cJSON_GetArraySize(options), k = 0;
    const cJSON **sorted = malloc((size_t)(nopt ? nopt : 1) * sizeof *sorted);
    if (!sorted) {
      free(ops);
      return -1;
    }
    cJSON_ArrayForEach(opt, options) if (opt->string) sorted[k++] = opt;
    qsort(sorted, (size_t)k, sizeof *sorted, cmp_name);
    if (i > 0)
      str_lit(b, " then ");
    str_add_clean(b, json_string(ops[i], "name"), 0);
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
static int stage_selected(const cJSON *s, const options_t *o)
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

/* Adds the report root (an object starting at line) to runs. Objects without "stages"
 * (a batch's summary line) are not reports and are skipped. */
static int add_report(runs_t *runs, const cJSON *root, int line, const options_t *o)
{
  if (!cJSON_IsObject(root))
    return report_error(runs, line, "not a JSON object");
  const cJSON *stages = cJSON_GetObjectItemCaseSensitive(root, "stages");
  if (!stages)
    return 0;
  if (!cJSON_IsArray(stages))
    return report_error(runs, line, "\"stages\" is not an array");
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
  runs->nreports++;
  if (add_platform(runs, root) < 0)
    return -1;

  str_t key = {0};
  if (report_identity(root, stages, o->ignore_variant, &key) < 0) {
    str_free(&key);
    return out_of_memory(runs->name);
  }
  size_t prefix = key.len;
  int rc = 0;
  const cJSON *t;
  cJSON_ArrayForEach(s, stages)
  {
    if (!stage_selected(s, o))
      continue;
    const char *name = json_string(s, "name");
    double step = -1, ms = 0, mad = 0;
    int has_step = json_number(s, "step", &step), seen = 1;
    /* A name that repeats without a step (mask-decode of two portraits) gets " (2)". */
    for (t = stages->child; t != s; t = t->next) {
      double tstep = -1;
      int t_has = json_number(t, "step", &tstep);
      seen += !strcmp(json_string(t, "name"), name) && t_has == has_step && tstep == step;
    }
    json_number(s, "ms", &ms);
    if (!json_number(s, "mad_pct", &mad) || mad < 0)
      mad = 0;
    key.len = prefix;
    str_add_clean(&key, name, 0);
    if (has_step)
      str_addf(&key, "#%.0f", step);
    if (seen > 1)
      str_addf(&key, " (%d)", seen);
    if (key.failed) {
      rc = out_of_memory(runs->name);
      break;
    }
    if ((rc = add_sample(runs, key.s, ms, mad)) < 0)
      break;
  }
  str_free(&key);
  return rc;
}

/* The line of pos, counting on from an earlier (*from, *line) so a long file is read once. */
static int line_at(const char **from, int *line, const char *pos)
{
  for (; *from < pos; ++*from)
    *line += **from == '\n';
  return *line;
}

/* Reads path: JSON values one after another (JSON Lines, or reports written one after
 * another). Fills runs; -1 with the error set (exit 3 for bad input). */
static int runs_load(const char *path, const options_t *o, runs_t *runs)
{
  gpuimg_buf_t buf;
  memset(runs, 0, sizeof *runs);
  runs->name = strcmp(path, "-") ? path : "<stdin>";
  if (gpuimg_text_read(path, &buf) < 0)
    return -1;
  if (gpuimg_buf_append(&buf, "", 1) < 0) { /* a NUL after the text, for safety */
    gpuimg_buf_free(&buf);
    return out_of_memory(runs->name);
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

/* ---------------------------------------------------------------------------------------------
 * Comparing */

typedef enum { V_OK, V_FASTER, V_SLOWER, V_MISSING, V_NEW } verdict_t;
static const char *const verdict_text[] = {"ok", "faster", "SLOWER", "missing", "new"};
static const char *const verdict_json[] = {"ok", "faster", "slower", "missing", "new"};

typedef struct {
  const entry_t *base, *cur; /* NULL: not in that file */
  verdict_t verdict;
  double change_pct; /* NAN when not defined */
  double noise_pct;
  double limit_pct; /* the largest allowed change: threshold + noise, as a % slowdown */
} row_t;

typedef struct {
  row_t *rows;
  int nrows, cap;
  int compared, slower, faster, missing, added;
} result_t;

static const char *row_key(const row_t *r)
{
  return r->base ? r->base->key : r->cur->key;
}

/* "device 'A' in BASE, 'B' in CUR" for the first field where a and b differ. */
static void platform_diff(const platform_t *a, const char *a_name, const platform_t *b,
                          const char *b_name, char *out, size_t size)
{
  static const char *const field[] = {"backend", "device", "compute capability",
                                      "CUDA runtime major version"};
  const char *va[] = {a->backend, a->device, a->cc, a->runtime_major};
  const char *vb[] = {b->backend, b->device, b->cc, b->runtime_major};
  for (int i = 0; i < 4; i++)
    if (strcmp(va[i], vb[i])) {
      snprintf(out, size, "%s '%s' in %s, '%s' in %s", field[i], va[i][0] ? va[i] : "none", a_name,
               vb[i][0] ? vb[i] : "none", b_name);
      return;
    }
  snprintf(out, size, "same platform");
}

/* The two files are comparable when their runs come from the same set of platforms. */
static int check_comparable(const runs_t *base, const runs_t *cur, const options_t *o)
{
  char diff[1024];
  diff[0] = '\0';
  for (int i = 0; i < base->nplatforms && !diff[0]; i++) {
    int found = 0;
    for (int k = 0; k < cur->nplatforms; k++)
      found |= platform_eq(&base->platforms[i], &cur->platforms[k]);
    if (!found)
      platform_diff(&base->platforms[i], base->name, &cur->platforms[0], cur->name, diff,
                    sizeof diff);
  }
  for (int k = 0; k < cur->nplatforms && !diff[0]; k++) {
    int found = 0;
    for (int i = 0; i < base->nplatforms; i++)
      found |= platform_eq(&base->platforms[i], &cur->platforms[k]);
    if (!found)
      platform_diff(&base->platforms[0], base->name, &cur->platforms[k], cur->name, diff,
                    sizeof diff);
  }
  if (!diff[0])
    return 0;
  if (o->force) {
    fprintf(stderr, "gpuimg: compare: warning: not comparable: %s (compared anyway: --force)\n",
            diff);
    return 0;
  }
  gpuimg_error_set(GPUIMG_EXIT_INPUT, "compare", "not comparable: %s (--force compares anyway)",
                   diff);
  return -1;
}

static int add_row(result_t *res, const entry_t *base, const entry_t *cur, const options_t *o)
{
  if (grow(&res->rows, res->nrows, &res->cap, sizeof *res->rows) < 0)
    return out_of_memory("compare");
  row_t *r = &res->rows[res->nrows++];
  memset(r, 0, sizeof *r);
  r->base = base;
  r->cur = cur;
  r->change_pct = NAN;
  r->noise_pct = base ? base->noise_pct : 0;
  if (cur && cur->noise_pct > r->noise_pct)
    r->noise_pct = cur->noise_pct;
  r->limit_pct = o->threshold + r->noise_pct;
  if (!cur) {
    r->verdict = V_MISSING;
    res->missing++;
    return 0;
  }
  if (!base) {
    r->verdict = V_NEW;
    res->added++;
    return 0;
  }
  double limit = 1.0 + r->limit_pct / 100.0;
  res->compared++;
  if (base->median > 0) /* rounded to 0.01, so equal medians never show as -0.0% */
    r->change_pct = round(1e4 * (cur->median - base->median) / base->median) / 100.0 + 0.0;
  if (cur->median > base->median * limit) {
    r->verdict = V_SLOWER;
    res->slower++;
  } else if (base->median > cur->median * limit) {
    r->verdict = V_FASTER;
    res->faster++;
  } else {
    r->verdict = V_OK;
  }
  return 0;
}

static int compare_runs(const runs_t *base, const runs_t *cur, const options_t *o, result_t *res)
{
  char *matched = calloc((size_t)cur->nentries + 1, 1);
  if (!matched)
    return out_of_memory("compare");
  int rc = 0;
  for (int i = 0; i < base->nentries && rc == 0; i++) {
    const entry_t *c = find_entry(cur, base->entries[i].key);
    if (c)
      matched[c - cur->entries] = 1;
    rc = add_row(res, &base->entries[i], c, o);
  }
  for (int k = 0; k < cur->nentries && rc == 0; k++)
    if (!matched[k])
      rc = add_row(res, NULL, &cur->entries[k], o);
  free(matched);
  if (rc < 0 || res->compared > 0)
    return rc;

  /* Nothing in common: different commands, options, sizes or backends. */
  if (base->nentries == 0 && cur->nentries == 0)
    gpuimg_error_set(GPUIMG_EXIT_INPUT, "compare",
                     "no stage to compare in %s or %s (--all-stages adds the host I/O stages)",
                     base->name, cur->name);
  else
    gpuimg_error_set(GPUIMG_EXIT_INPUT, "compare",
                     "no stage of %s matches a stage of %s (operations, options, variant, "
                     "image size or backend differ; --force compares anyway)",
                     base->name, cur->name);
  if (!o->force)
    return -1;
  fprintf(stderr, "gpuimg: %s\n", gpuimg_error_message());
  gpuimg_error_clear();
  return 0;
}

static int failed(const result_t *res, const options_t *o)
{
  return res->slower > 0 || (res->missing > 0 && !o->allow_missing);
}

/* ---------------------------------------------------------------------------------------------
 * Output formats */

static void platform_words(const runs_t *r, str_t *b)
{
  str_addf(b, "%d report%s", r->nreports, r->nreports == 1 ? "" : "s");
  for (int i = 0; i < r->nplatforms; i++) {
    const platform_t *p = &r->platforms[i];
    str_add(b, i ? "; " : ", ", 2);
    str_add_clean(b, p->backend[0] ? p->backend : "?", 0);
    if (p->device[0]) {
      str_lit(b, " on ");
      str_add_clean(b, p->device, 0);
    }
    if (p->cc[0])
      str_addf(b, " (compute capability %s)", p->cc);
  }
}

static void format_text(const runs_t *base, const runs_t *cur, const result_t *res,
                        const options_t *o, str_t *b)
{
  size_t width = 5; /* "STAGE" */
  for (int i = 0; i < res->nrows; i++) {
    size_t n = strlen(row_key(&res->rows[i]));
    width = n > width ? n : width;
  }
  str_lit(b, "baseline ");
  str_add_clean(b, base->name, 0);
  str_lit(b, ": ");
  platform_words(base, b);
  str_lit(b, "\ncurrent  ");
  str_add_clean(b, cur->name, 0);
  str_lit(b, ": ");
  platform_words(cur, b);
  str_addf(b, "\n\n%-*s %12s %12s %9s %7s  %s\n", (int)width, "STAGE", "BASELINE ms", "CURRENT ms",
           "CHANGE", "NOISE", "VERDICT");
  for (int i = 0; i < res->nrows; i++) {
    const row_t *r = &res->rows[i];
    char bms[32] = "-", cms[32] = "-", change[32] = "-";
    if (r->base)
      snprintf(bms, sizeof bms, "%.4f", r->base->median);
    if (r->cur)
      snprintf(cms, sizeof cms, "%.4f", r->cur->median);
    if (!isnan(r->change_pct))
      snprintf(change, sizeof change, "%+.1f%%", r->change_pct);
    str_addf(b, "%-*s %12s %12s %9s %6.1f%%  %s\n", (int)width, row_key(r), bms, cms, change,
             r->noise_pct, verdict_text[r->verdict]);
  }
  str_addf(b,
           "\n%d compared (threshold %.10g%% + noise): %d slower, %d faster, %d missing%s, "
           "%d new: %s\n",
           res->compared, o->threshold, res->slower, res->faster, res->missing,
           res->missing && o->allow_missing ? " (allowed)" : "", res->added,
           failed(res, o) ? "REGRESSION" : "no regression");
}

/* v rounded to the given number of decimals, or null when undefined. */
static void add_json_number(cJSON *obj, const char *key, double v, int decimals)
{
  if (isnan(v)) {
    cJSON_AddNullToObject(obj, key);
    return;
  }
  double scale = pow(10.0, decimals);
  cJSON_AddNumberToObject(obj, key, round(v * scale) / scale);
}

static int format_json(const runs_t *base, const runs_t *cur, const result_t *res,
                       const options_t *o, str_t *b)
{
  cJSON *root = cJSON_CreateObject(), *stages;
  str_t name = {0};
  str_add_clean(&name, base->name, 0);
  cJSON_AddStringToObject(root, "baseline", name.failed ? "" : name.s);
  name.len = 0;
  str_add_clean(&name, cur->name, 0);
  cJSON_AddStringToObject(root, "current", name.failed ? "" : name.s);
  int oom = name.failed;
  str_free(&name);
  cJSON_AddNumberToObject(root, "threshold", o->threshold);
  cJSON_AddNumberToObject(root, "compared", res->compared);
  cJSON_AddNumberToObject(root, "regressions", res->slower);
  cJSON_AddNumberToObject(root, "faster", res->faster);
  cJSON_AddNumberToObject(root, "missing", res->missing);
  cJSON_AddNumberToObject(root, "new", res->added);
  cJSON_AddBoolToObject(root, "allow_missing", o->allow_missing);
  cJSON_AddBoolToObject(root, "passed", !failed(res, o));
  if (!(stages = cJSON_AddArrayToObject(root, "stages")))
    oom = 1;
  for (int i = 0; i < res->nrows && !oom; i++) {
    const row_t *r = &res->rows[i];
    cJSON *s = cJSON_CreateObject();
    if (!s || !cJSON_AddItemToArray(stages, s)) {
      cJSON_Delete(s);
      oom = 1;
      break;
    }
    cJSON_AddStringToObject(s, "key", row_key(r));
    add_json_number(s, "baseline_ms", r->base ? r->base->median : NAN, 4);
    add_json_number(s, "current_ms", r->cur ? r->cur->median : NAN, 4);
    add_json_number(s, "change_pct", r->change_pct, 2);
    add_json_number(s, "noise_pct", r->noise_pct, 2);
    add_json_number(s, "limit_pct", r->base && r->cur ? r->limit_pct : NAN, 2);
    cJSON_AddStringToObject(s, "verdict", verdict_json[r->verdict]);
  }
  char *text = oom ? NULL : cJSON_Print(root);
  cJSON_Delete(root);
  if (!text)
    return out_of_memory("compare");
  str_add(b, text, strlen(text));
  str_lit(b, "\n");
  free(text);
  return 0;
}

static void format_junit(const runs_t *base, const runs_t *cur, const result_t *res,
                         const options_t *o, str_t *b)
{
  int failures = res->slower + (o->allow_missing ? 0 : res->missing);
  int skipped = res->added + (o->allow_missing ? res->missing : 0);
  double total_s = 0;
  for (int i = 0; i < res->nrows; i++)
    if (res->rows[i].cur)
      total_s += res->rows[i].cur->median / 1000.0;
  str_addf(b,
           "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
           "<testsuites name=\"gpuimg compare\" tests=\"%d\" failures=\"%d\" errors=\"0\" "
           "skipped=\"%d\" time=\"%.7f\">\n",
           res->nrows, failures, skipped, total_s);
  str_addf(b,
           "  <testsuite name=\"gpuimg.compare\" tests=\"%d\" failures=\"%d\" errors=\"0\" "
           "skipped=\"%d\" time=\"%.7f\">\n    <properties>\n"
           "      <property name=\"baseline\" value=\"",
           res->nrows, failures, skipped, total_s);
  str_add_clean(b, base->name, 1);
  str_lit(b, "\"/>\n      <property name=\"current\" value=\"");
  str_add_clean(b, cur->name, 1);
  str_addf(b, "\"/>\n      <property name=\"threshold_pct\" value=\"%.10g\"/>\n    </properties>\n",
           o->threshold);
  for (int i = 0; i < res->nrows; i++) {
    const row_t *r = &res->rows[i];
    str_lit(b, "    <testcase classname=\"gpuimg\" name=\"");
    str_add_clean(b, row_key(r), 1);
    str_addf(b, "\" time=\"%.7f\"", r->cur ? r->cur->median / 1000.0 : 0.0);
    switch (r->verdict) {
    case V_OK:
    case V_FASTER:
      str_addf(b, ">\n      <system-out>%s: %.4f ms, baseline %.4f ms", verdict_json[r->verdict],
               r->cur->median, r->base->median);
      if (!isnan(r->change_pct))
        str_addf(b, " (%+.1f%%)", r->change_pct);
      str_lit(b, "</system-out>\n    </testcase>\n");
      break;
    case V_SLOWER:
      str_addf(b,
               ">\n      <failure type=\"slower\" message=\"slower: %.4f ms, baseline %.4f ms "
               "(%+.1f%%, limit +%.1f%% = threshold %.10g%% + noise %.1f%%)\"/>\n"
               "    </testcase>\n",
               r->cur->median, r->base->median, r->change_pct, r->limit_pct, o->threshold,
               r->noise_pct);
      break;
    case V_MISSING:
      str_addf(b,
               ">\n      <%s message=\"missing: in the baseline (%.4f ms), not in the current "
               "run%s\"/>\n    </testcase>\n",
               o->allow_missing ? "skipped" : "failure type=\"missing\"", r->base->median,
               o->allow_missing ? " (allowed)" : "");
      break;
    case V_NEW:
      str_lit(b, ">\n      <skipped message=\"new: no baseline\"/>\n    </testcase>\n");
      break;
    }
  }
  str_lit(b, "  </testsuite>\n</testsuites>\n");
}

/* ---------------------------------------------------------------------------------------------
 * Command line */

enum {
  O_THRESHOLD,
  O_FORMAT,
  O_OUTPUT,
  O_ALLOW_MISSING,
  O_ALL_STAGES,
  O_IGNORE_VARIANT,
  O_FORCE,
  O_HELP
};

static const struct {
  const char *long_name;
  char short_name; /* 0: none */
  int has_arg;
  int id;
} compare_options[] = {
    {"threshold", 0, 1, O_THRESHOLD},   {"format", 0, 1, O_FORMAT},
    {"output", 'o', 1, O_OUTPUT},       {"allow-missing", 0, 0, O_ALLOW_MISSING},
    {"all-stages", 0, 0, O_ALL_STAGES}, {"ignore-variant", 0, 0, O_IGNORE_VARIANT},
    {"force", 0, 0, O_FORCE},           {"help", 'h', 0, O_HELP},
};
#define NCOMPARE_OPTIONS (sizeof compare_options / sizeof compare_options[0])

static int usage_error(const char *fmt, const char *a, const char *b)
{
  gpuimg_error_set(GPUIMG_EXIT_USAGE, "compare", fmt, a, b);
  return -1;
}

static int apply_option(options_t *o, int id, const char *spelled, const char *arg)
{
  char *end;
  switch (id) {
  case O_THRESHOLD:
    errno = 0;
    o->threshold = strtod(arg, &end);
    if (*end == '%')
      end++;
    if (errno || end == arg || *end || !isfinite(o->threshold) || o->threshold < 0 ||
        o->threshold > MAX_THRESHOLD)
      return usage_error("%s: invalid value '%s' (expected a percentage from 0 to 1000000)",
                         spelled, arg);
    return 0;
  case O_FORMAT:
    if (strcmp(arg, "text") == 0)
      o->format = FORMAT_TEXT;
    else if (strcmp(arg, "json") == 0)
      o->format = FORMAT_JSON;
    else if (strcmp(arg, "junit") == 0)
      o->format = FORMAT_JUNIT;
    else
      return usage_error("%s: invalid value '%s' (expected text, json or junit)", spelled, arg);
    return 0;
  case O_OUTPUT:
    if (!arg[0])
      return usage_error("%s: empty file name%s", spelled, "");
    o->output = arg;
    return 0;
  case O_ALLOW_MISSING:
    o->allow_missing = 1;
    return 0;
  case O_ALL_STAGES:
    o->all_stages = 1;
    return 0;
  case O_IGNORE_VARIANT:
    o->ignore_variant = 1;
    return 0;
  case O_FORCE:
    o->force = 1;
    return 0;
  case O_HELP:
    o->help = 1;
    return 0;
  }
  return usage_error("%s: unhandled option%s", spelled, "");
}

/* Handles argv[*i], an option; advances *i past a separate value. */
static int parse_option(options_t *o, int argc, char **argv, int *i)
{
  const char *a = argv[*i], *arg = NULL;
  char spelled[64];
  int found = -1;

  if (a[1] == '-') {
    const char *name = a + 2, *eq = strchr(name, '=');
    size_t len = eq ? (size_t)(eq - name) : strlen(name);
    snprintf(spelled, sizeof spelled, "--%.*s", (int)(len < 40 ? len : 40), name);
    for (size_t k = 0; k < NCOMPARE_OPTIONS; k++)
      if (strlen(compare_options[k].long_name) == len &&
          strncmp(compare_options[k].long_name, name, len) == 0)
        found = (int)k;
    if (found < 0)
      return usage_error("unknown option '%s'%s", spelled, "");
    if (eq) {
      if (!compare_options[found].has_arg)
        return usage_error("%s: takes no value%s", spelled, "");
      arg = eq + 1;
    }
  } else {
    snprintf(spelled, sizeof spelled, "-%c", a[1]);
    for (size_t k = 0; k < NCOMPARE_OPTIONS; k++)
      if (compare_options[k].short_name == a[1])
        found = (int)k;
    if (found < 0 || (a[2] && !compare_options[found].has_arg))
      return usage_error("unknown option '%s'%s", found < 0 ? spelled : a, "");
    if (a[2])
      arg = a + 2;
  }
  if (compare_options[found].has_arg && !arg) {
    if (*i + 1 >= argc)
      return usage_error("%s: missing value%s", spelled, "");
    arg = argv[++*i];
  }
  return apply_option(o, compare_options[found].id, spelled, arg);
}

static int parse_args(int argc, char **argv, options_t *o)
{
  const char *positional[2];
  int npositional = 0, end_of_options = 0;

  memset(o, 0, sizeof *o);
  o->threshold = DEFAULT_THRESHOLD;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!end_of_options && strcmp(a, "--") == 0) {
      end_of_options = 1;
      continue;
    }
    if (!end_of_options && a[0] == '-' && a[1] != '\0') {
      if (parse_option(o, argc, argv, &i) < 0)
        return -1;
      continue;
    }
    if (npositional == 2)
      return usage_error("unexpected argument '%s' (BASELINE and CURRENT already given)%s", a, "");
    if (!a[0])
      return usage_error("empty file name%s%s", "", "");
    positional[npositional++] = a;
  }
  if (o->help)
    return 0;
  if (npositional < 2)
    return usage_error("%s%s", npositional ? "CURRENT missing" : "BASELINE and CURRENT missing",
                       "");
  if (strcmp(positional[0], "-") == 0 && strcmp(positional[1], "-") == 0)
    return usage_error("BASELINE and CURRENT cannot both be stdin%s%s", "", "");
  o->baseline = positional[0];
  o->current = positional[1];
  return 0;
}

static void compare_usage(FILE *f)
{
  fprintf(f, "Usage: gpuimg compare [OPTIONS] BASELINE CURRENT\n"
             "Try 'gpuimg compare --help' for more information.\n");
}

static void compare_help(FILE *f)
{
  fprintf(f,
          "Usage: gpuimg compare [OPTIONS] BASELINE CURRENT\n"
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
          "Options:\n"
          "  --threshold PCT    allowed slowdown in percent, on top of the noise (default %g)\n"
          "  --format F         text (a table, the default), json or junit (JUnit XML)\n"
          "  -o, --output FILE  write there (replaced whole, atomically) instead of stdout\n"
          "  --allow-missing    stages only in BASELINE do not fail the comparison\n"
          "  --all-stages       compare the host I/O stages too\n"
          "  --ignore-variant   match stages whatever their variant (naive, tiled, fast)\n"
          "  --force            compare runs that are not comparable, with a warning\n"
          "  -h, --help         this help\n"
          "  --                 end of options\n"
          "\n"
          "Exit status: 0 no regression, 1 a stage slower or missing, 2 usage error,\n"
          "3 a report unreadable, invalid or not comparable, 4 output not written.\n",
          DEFAULT_THRESHOLD);
}

/* The same existing file (an output must never replace an input). */
static int same_file(const char *a, const char *b)
{
  return strcmp(a, "-") && strcmp(b, "-") && gpuimg_same_file(a, b);
}

int gpuimg_compare_main(int argc, char **argv)
{
  options_t o;
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
  if (o.output) {
    if (same_file(o.output, o.baseline) || same_file(o.output, o.current)) {
      gpuimg_error_set(GPUIMG_EXIT_OUTPUT, o.output, "output is the same file as the input");
      goto fail;
    }
    gpuimg_output_install_signal_cleanup();
    if (gpuimg_output_open(&out, o.output, 0) < 0)
      goto fail;
    have_out = 1;
  }
  if (runs_load(o.baseline, &o, &base) < 0 || runs_load(o.current, &o, &cur) < 0 ||
      check_comparable(&base, &cur, &o) < 0 || compare_runs(&base, &cur, &o, &res) < 0)
    goto fail;

  if (o.format == FORMAT_TEXT)
    format_text(&base, &cur, &res, &o, &text);
  else if (o.format == FORMAT_JUNIT)
    format_junit(&base, &cur, &res, &o, &text);
  else if (format_json(&base, &cur, &res, &o, &text) < 0)
    goto fail;
  if (text.failed) {
    out_of_memory("compare");
    goto fail;
  }
  if (have_out) {
    have_out = 0;
    if (gpuimg_output_commit(&out, text.s, text.len) < 0)
      goto fail;
  } else if (fwrite(text.s, 1, text.len, stdout) != text.len || fflush(stdout) != 0) {
    gpuimg_error_set(GPUIMG_EXIT_OUTPUT, "<stdout>", "write failed: %s", strerror(errno));
    goto fail;
  }
  if (failed(&res, &o)) {
    char what[128] = "";
    int n = 0;
    if (res.slower)
      n += snprintf(what + n, sizeof what - (size_t)n, "%d stage%s slower", res.slower,
                    res.slower == 1 ? "" : "s");
    if (res.missing && !o.allow_missing)
      snprintf(what + n, sizeof what - (size_t)n, "%s%d stage%s missing", n ? ", " : "",
               res.missing, res.missing == 1 ? "" : "s");
    fprintf(stderr, "gpuimg: compare: %s (threshold %.10g%% + noise)\n", what, o.threshold);
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
  runs_free(&base);
  runs_free(&cur);
  return status;
}
