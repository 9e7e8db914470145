/* summary_charts.c: `gpuimg summary --format html`'s charts from the per-image times of batch
 * reports: images done over time, and each report's workers' timelines (inline SVG). */
#include "summary.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define CHART_W 640.0 /* px of a chart's plot area */
#define CHART_H 200.0
#define MARGIN_L 56.0 /* room for the y axis' labels */
#define MARGIN_B 28.0 /* room for the x axis' labels */
#define MARGIN_T 10.0 /* room above the y axis' top label */
#define MARGIN_R 24.0 /* room right of the x axis' last label */
#define POINTS 200    /* points of a report's line at most */
#define ROW_H 10      /* px of a worker's row */

/* The stages of an image's host intervals, in timeline_ms's order, and their colours. */
static const char *const kinds[3] = {"load", "steps", "store"};
static const char *const kind_colours[3] = {"#1565c0", "#ef6c00", "#2e7d32"};
static const char *const line_colours[] = {"#1565c0", "#ef6c00", "#2e7d32", "#6a1b9a",
                                           "#c62828", "#00838f", "#9e9d24", "#5d4037"};
#define NLINES (sizeof line_colours / sizeof line_colours[0])

/* When an image was done: the end of its last interval; -1 without any. */
static double done_ms(const summary_image_t *im)
{
  double end = -1;
  for (int k = 0; k < 3; k++)
    if (im->iv[k][0] >= 0 && im->iv[k][1] > end)
      end = im->iv[k][1];
  return end;
}

static int by_value(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The converted images' done times of a report, sorted (malloc'd; *n of them); NULL when none
 * or out of memory (*oom then set). */
static double *done_times(const summary_images_t *images, size_t *n, int *oom)
{
  double *t = images->n ? malloc(images->n * sizeof *t) : NULL;
  *n = 0;
  if (images->n && !t)
    *oom = 1;
  for (size_t i = 0; t && i < images->n; i++)
    if (images->v[i].converted && done_ms(&images->v[i]) >= 0)
      t[(*n)++] = done_ms(&images->v[i]);
  if (t && *n == 0)
    t = (free(t), NULL);
  if (t)
    qsort(t, *n, sizeof *t, by_value);
  return t;
}

/* A round step for an axis of span units with about 4 ticks (1, 2 or 5 times a power of 10). */
static double tick_step(double span)
{
  double raw = span / 4, p = pow(10, floor(log10(raw)));
  return raw / p < 1.5 ? p : raw / p < 3.5 ? 2 * p : raw / p < 7.5 ? 5 * p : 10 * p;
}

/* The axes of a chart whose x runs to x_max seconds and y to y_max images. */
static void axes(str_t *b, double x_max, double y_max)
{
  str_addf(b,
           "<line x1=\"%.0f\" y1=\"0\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"#888\"/>"
           "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"#888\"/>",
           MARGIN_L, MARGIN_L, CHART_H, MARGIN_L, CHART_H, MARGIN_L + CHART_W, CHART_H);
  double dx = tick_step(x_max), dy = tick_step(y_max);
  for (double x = 0; x <= x_max * 1.0001; x += dx)
    str_addf(b, "<text x=\"%.1f\" y=\"%.0f\" font-size=\"11\" text-anchor=\"middle\">%g</text>",
             MARGIN_L + CHART_W * x / x_max, CHART_H + 14, x);
  for (double y = 0; y <= y_max * 1.0001; y += dy)
    str_addf(b, "<text x=\"%.0f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">%g</text>",
             MARGIN_L - 4, CHART_H - CHART_H * y / y_max + 4, y);
  str_addf(b,
           "<text x=\"%.0f\" y=\"%.0f\" font-size=\"11\" text-anchor=\"middle\">seconds since the "
           "report's run began</text>",
           MARGIN_L + CHART_W / 2, CHART_H + MARGIN_B - 2);
}

/* One report's line: its images done by each of POINTS moments. */
static void done_line(str_t *b, const double *t, size_t n, double x_ms, double y_max, size_t k)
{
  str_addf(b, "<polyline fill=\"none\" stroke-width=\"2\" stroke=\"%s\" points=\"",
           line_colours[k % NLINES]);
  size_t done = 0;
  for (int p = 0; p <= POINTS; p++) {
    double at = x_ms * p / POINTS;
    while (done < n && t[done] <= at)
      done++;
    str_addf(b, "%s%.1f,%.1f", p ? " " : "", MARGIN_L + CHART_W * p / POINTS,
             CHART_H - CHART_H * (double)done / y_max);
    if (done == n)
      break;
  }
  str_lit(b, "\"/>");
}

/* Images done over time: a line per report with per-image times; 0, or -1 out of memory. */
static int throughput(str_t *b, const totals_t *t, int nruns)
{
  double **times = calloc((size_t)nruns + 1, sizeof *times);
  size_t *counts = calloc((size_t)nruns + 1, sizeof *counts);
  double x_max = 0, y_max = 0;
  int oom = !times || !counts, lines = 0;
  for (int i = 0; !oom && i < nruns; i++) {
    times[i] = done_times(&t->image_times[i], &counts[i], &oom);
    if (times[i]) {
      lines++;
      x_max = fmax(x_max, times[i][counts[i] - 1]);
      y_max = fmax(y_max, (double)counts[i]);
    }
  }
  str_lit(b, "<h2>Throughput over time</h2>\n");
  if (!oom && !lines)
    str_lit(b, "<p class=\"note\">The reports have no per-image times.</p>\n");
  if (!oom && lines) {
    x_max = x_max > 0 ? x_max : 1;
    double x_s = tick_step(x_max / 1000.0) * ceil(x_max / 1000.0 / tick_step(x_max / 1000.0));
    str_addf(b,
             "<p class=\"note\">Images converted by each moment of each report's run (the end of "
             "each image's last stage).</p>\n<svg class=\"throughput\" width=\"%.0f\" "
             "height=\"%.0f\" role=\"img\"><g transform=\"translate(0,%.0f)\">",
             MARGIN_L + CHART_W + MARGIN_R, MARGIN_T + CHART_H + MARGIN_B + 4, MARGIN_T);
    axes(b, x_s, y_max);
    for (int i = 0, k = 0; i < nruns; i++)
      if (times[i])
        done_line(b, times[i], counts[i], x_s * 1000.0, y_max, (size_t)k++);
    str_lit(b, "</g></svg>\n<p class=\"legend\">");
    const cJSON *run;
    int i = 0, k = 0;
    cJSON_ArrayForEach(run, t->runs)
    {
      if (times[i++]) {
        str_addf(b, "<span style=\"color:%s\">&#9644; ", line_colours[k++ % NLINES]);
        str_add_clean(b, cJSON_GetObjectItemCaseSensitive(run, "report")->valuestring, 1);
        str_lit(b, "</span> ");
      }
    }
    str_lit(b, "</p>\n");
  }
  for (int i = 0; times && i < nruns; i++)
    free(times[i]);
  free(times);
  free(counts);
  return oom ? -1 : 0;
}

/* Which workers a report's images name (present[w] for worker w, of *n: the highest index + 1;
 * malloc'd, NULL when none names one or out of memory: *oom), and the run's end. */
static unsigned char *workers_of(const summary_images_t *images, int *n, double *end, int *oom)
{
  unsigned char *present = NULL;
  *n = 0;
  *end = 0;
  for (size_t i = 0; i < images->n; i++) {
    const summary_image_t *im = &images->v[i];
    *end = fmax(*end, done_ms(im));
    if (im->worker >= *n)
      *n = im->worker + 1;
  }
  if (*n > 0 && !(present = calloc((size_t)*n, 1)))
    *oom = 1;
  for (size_t i = 0; present && i < images->n; i++)
    if (images->v[i].worker >= 0)
      present[images->v[i].worker] = 1;
  return present;
}

/* One worker's row of a report: each stage's busy columns (of CHART_W) merged into bars, so
 * that a row has at most CHART_W bars a stage whatever the images. */
static int worker_row(str_t *b, const summary_images_t *images, int worker, double end, int y)
{
  unsigned char *busy = calloc((size_t)CHART_W, 1);
  if (!busy)
    return -1;
  for (int k = 0; k < 3; k++) {
    memset(busy, 0, (size_t)CHART_W);
    for (size_t i = 0; i < images->n; i++) {
      const summary_image_t *im = &images->v[i];
      if (im->worker != worker || im->iv[k][0] < 0)
        continue;
      int c0 = (int)(CHART_W * im->iv[k][0] / end), c1 = (int)ceil(CHART_W * im->iv[k][1] / end);
      for (int c = c0; c < c1 + (c1 == c0) && c < (int)CHART_W; c++)
        busy[c] = 1;
    }
    for (int c = 0; c < (int)CHART_W;) {
      int c0 = c;
      while (c < (int)CHART_W && busy[c] == busy[c0])
        c++;
      if (busy[c0])
        str_addf(b,
                 "<rect x=\"%.0f\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\"><title>%s"
                 "</title></rect>",
                 MARGIN_L + c0, y, c - c0, ROW_H - 2, kind_colours[k], kinds[k]);
    }
  }
  free(busy);
  return 0;
}

/* A report's chart: its workers' rows, each worker's load, steps and store as bars. */
static int report_timeline(str_t *b, const cJSON *run, const summary_images_t *images,
                           const unsigned char *present, int n, double end)
{
  int rows = 0;
  for (int w = 0; w < n; w++)
    rows += present[w];
  str_lit(b, "<p class=\"name\">");
  str_add_clean(b, cJSON_GetObjectItemCaseSensitive(run, "report")->valuestring, 1);
  str_addf(b,
           ": %d worker%s over %.3f s</p>\n<svg class=\"workers\" width=\"%.0f\" height=\"%d\" "
           "role=\"img\">",
           rows, rows == 1 ? "" : "s", end / 1000.0, MARGIN_L + CHART_W + MARGIN_R, rows * ROW_H);
  for (int w = 0, y = 0; w < n; w++) {
    if (!present[w])
      continue;
    str_addf(b, "<text x=\"%.0f\" y=\"%d\" font-size=\"9\" text-anchor=\"end\">worker %d</text>",
             MARGIN_L - 4, y + ROW_H - 2, w);
    if (worker_row(b, images, w, end, y) < 0)
      return -1;
    y += ROW_H;
  }
  str_lit(b, "</svg>\n");
  return 0;
}

/* Each report's workers over time, where its images name their workers. */
static int timelines(str_t *b, const totals_t *t)
{
  const cJSON *run;
  int i = 0, shown = 0, oom = 0;
  str_lit(b, "<h2>Workers over time</h2>\n");
  cJSON_ArrayForEach(run, t->runs)
  {
    double end;
    int n;
    const summary_images_t *images = &t->image_times[i++];
    unsigned char *present = workers_of(images, &n, &end, &oom);
    if (present && end > 0 && shown++ == 0) {
      str_lit(b, "<p class=\"legend\">");
      for (int k = 0; k < 3; k++)
        str_addf(b, "<span style=\"color:%s\">&#9644; %s</span> ", kind_colours[k], kinds[k]);
      str_lit(b, "</p>\n");
    }
    if (present && end > 0 && report_timeline(b, run, images, present, n, end) < 0)
      oom = 1;
    free(present);
    if (oom)
      return -1;
  }
  if (!shown)
    str_lit(b, "<p class=\"note\">The reports name no workers.</p>\n");
  return 0;
}

void summary_charts_html(const totals_t *t, str_t *b)
{
  int nruns = cJSON_GetArraySize(t->runs);
  if (throughput(b, t, nruns) < 0 || timelines(b, t) < 0)
    b->failed = 1;
}
