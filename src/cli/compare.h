/* compare.h: what the files of `gpuimg compare` share: its options, the runs read from a
 * file, the comparison's rows, and the growing string the output is built in. */
#ifndef GPUIMG_COMPARE_H
#define GPUIMG_COMPARE_H

#include "cli.h"

#include <stddef.h>

typedef enum { FORMAT_TEXT, FORMAT_JSON, FORMAT_JUNIT, FORMAT_HTML } format_t;

/* The compare command line; strings point into argv. */
typedef struct {
  const char *baseline, *current; /* "-": stdin */
  const char *output;             /* NULL: stdout */
  int format;                     /* a format_t */
  double threshold;               /* allowed slowdown in %, on top of the noise */
  int allow_missing, all_stages, ignore_variant, force, help;
} compare_options_t;

/* ---------------------------------------------------------------------------------------------
 * compare_str.c: a growing NUL-terminated string. Allocation failure is sticky: callers check
 * failed once. */

typedef struct {
  char *s;
  size_t len, cap;
  int failed;
} str_t;

void str_add(str_t *b, const char *p, size_t n);
void str_addf(str_t *b, const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Appends a string literal, its length counted by the compiler. */
#define str_lit(b, literal) str_add((b), "" literal, sizeof(literal) - 1)
/* Appends s made printable: invalid UTF-8 becomes U+FFFD, control characters '?';
 * with xml, the five XML specials become entities (safe in text and attributes). */
void str_add_clean(str_t *b, const char *s, int xml);
void str_free(str_t *b);

/* "out of memory" set against what (exit 1); returns -1. */
int compare_out_of_memory(const char *what);
/* Makes room for one more element of size bytes in *array (count n, capacity *cap). */
int compare_grow(void *array, int n, int *cap, size_t size);

/* ---------------------------------------------------------------------------------------------
 * compare_load.c: the reports of one file, reduced to what is compared. */

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
  double median, noise_pct; /* the summary of ms and max_mad_pct, set once the file is read */
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

/* Reads path: JSON values one after another (JSON Lines, or reports written one after
 * another). Fills runs, which compare_runs_free() frees (also after an error); -1 with the
 * error set (exit 3 for bad input). */
int compare_runs_load(const char *path, const compare_options_t *o, runs_t *runs);
void compare_runs_free(runs_t *r);
/* The entry of key in runs; NULL when it has none. */
entry_t *compare_find_entry(const runs_t *runs, const char *key);
int compare_platform_eq(const platform_t *a, const platform_t *b);

/* ---------------------------------------------------------------------------------------------
 * compare_match.c: the stages of the two files side by side, with their verdicts. */

typedef enum { V_OK, V_FASTER, V_SLOWER, V_MISSING, V_NEW } verdict_t;

typedef struct {
  const entry_t *base, *cur; /* NULL: not in that file */
  verdict_t verdict;
  double change_pct; /* NAN when not defined */
  double noise_pct;
  double limit_pct; /* the largest allowed change: threshold + noise, as a % slowdown */
} row_t;

/* The comparison; rows is freed by the caller with free(). */
typedef struct {
  row_t *rows;
  int nrows, cap;
  int compared, slower, faster, missing, added;
} result_t;

/* The two files are comparable when their runs come from the same set of platforms; with
 * --force a warning instead of an error. */
int compare_check_platforms(const runs_t *base, const runs_t *cur, const compare_options_t *o);
/* One row per key of either file: the baseline's order, then the keys new in cur. */
int compare_match(const runs_t *base, const runs_t *cur, const compare_options_t *o, result_t *res);
/* Whether the comparison fails: a stage slower, or one missing without --allow-missing. */
int compare_failed(const result_t *res, const compare_options_t *o);
const char *compare_row_key(const row_t *r);

/* ---------------------------------------------------------------------------------------------
 * compare_format.c: the comparison as a text table, JSON or JUnit XML, appended to b. */

/* "N reports, BACKEND on DEVICE (compute capability CC)" of r; with xml, escaped for markup. */
void compare_platform_words(const runs_t *r, int xml, str_t *b);
/* "N compared (threshold T% + noise): N slower, N faster, N missing, N new". */
void compare_summary_words(const result_t *res, const compare_options_t *o, str_t *b);

void compare_format_text(const runs_t *base, const runs_t *cur, const result_t *res,
                         const compare_options_t *o, str_t *b);
int compare_format_json(const runs_t *base, const runs_t *cur, const result_t *res,
                        const compare_options_t *o, str_t *b);
void compare_format_junit(const runs_t *base, const runs_t *cur, const result_t *res,
                          const compare_options_t *o, str_t *b);

/* ---------------------------------------------------------------------------------------------
 * compare_html.c: the comparison as a self-contained HTML page (inline CSS and SVG, no
 * script), appended to b. */

void compare_format_html(const runs_t *base, const runs_t *cur, const result_t *res,
                         const compare_options_t *o, str_t *b);

#endif
