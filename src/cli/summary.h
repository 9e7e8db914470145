/* summary.h: what the files of `gpuimg summary` share: the totals over the batch reports read,
 * and the HTML page made of them. */
#ifndef GPUIMG_SUMMARY_H
#define GPUIMG_SUMMARY_H

#include <cJSON.h>

#include "compare.h"
#include "run.h"

/* One image of a report's counted run, for the page's charts: its worker (-1: the record
 * names none), whether it was converted, and its host intervals (load, steps, store) in ms since
 * its run began ([k][0] < 0: none). */
typedef struct {
  int worker, converted;
  float iv[3][2];
} summary_image_t;

/* The images of one report's counted run (v malloc'd). */
typedef struct {
  summary_image_t *v;
  size_t n, cap;
} summary_images_t;

/* The totals over the reports; shards: N of the sharded reports (0: none, -1: several N). */
typedef struct {
  int reports, unsharded, shards;
  double inputs, images, converted, failed, skipped, existing, wall_ms, wall_ms_max;
  int exit_status;
  /* The analysis steps' totals (stats: a dataset's figures), added over the reports' "results":
   * step i's operation, its total (malloc'd, result_size bytes) and the images in it. */
  const gpuimg_op_t *result_ops[GPUIMG_MAX_STEPS];
  void *results[GPUIMG_MAX_STEPS];
  double result_images[GPUIMG_MAX_STEPS];
  unsigned char *seen; /* seen[k - 1]: a report of shard k/shards was given (malloc'd) */
  /* Kept for the page only (NULL otherwise), freed with cJSON_Delete: */
  cJSON *runs;                   /* per report: {"report": name, "summary": its summary line} */
  cJSON *failures;               /* per failed image: {"report", "input", "error"} */
  summary_images_t *image_times; /* per report, in runs' order (malloc'd, each freed) */
} totals_t;

/* The shards no report covers, as "3 5 7" in buf (empty: none, or not one sharded run). */
void summary_missing_shards(const totals_t *t, char *buf, size_t size, int *count);

/* summary_html.c: the totals as one self-contained HTML page (inline CSS and SVG, no script),
 * appended to b. */
void summary_format_html(const totals_t *t, str_t *b);

/* summary_charts.c: the page's charts from the reports' per-image times: images done over time
 * (one line per report) and each report's workers' timelines; a note where the reports have
 * no such times. */
void summary_charts_html(const totals_t *t, str_t *b);

#endif
