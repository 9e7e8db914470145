/* summary_html.c: `gpuimg summary --format html`: the batch reports' totals, throughput, share
 * of each stage and failures as one self-contained page (inline CSS and SVG, no script). */
#include "summary.h"

#include <string.h>

#define SHARE_WIDTH 600.0 /* px of the stage share bar */

static const char *const palette[] = {"#1565c0", "#ef6c00", "#2e7d32", "#6a1b9a",
                                      "#c62828", "#00838f", "#9e9d24", "#5d4037"};
#define NCOLORS (sizeof palette / sizeof palette[0])

static const char page_style[] =
    "body{font-family:sans-serif;margin:1.5em;color:#222;background:#fff}"
    "h1.pass{color:#1a7f37}h1.fail{color:#c62828}"
    "table{border-collapse:collapse;margin-bottom:1em}th,td{padding:.25em .6em;"
    "border-bottom:1px solid #ddd;text-align:right}th{background:#f3f3f3}"
    "td.name{text-align:left;font-family:monospace;word-break:break-all}"
    "td.reason{text-align:left}.note{color:#666;font-size:90%}";

static double number(const cJSON *o, const char *key)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

/* The string member key of o, escaped, or "-". */
static void add_string(str_t *b, const cJSON *o, const char *key)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  if (cJSON_IsString(v))
    str_add_clean(b, v->valuestring, 1);
  else
    str_lit(b, "-");
}

static void add_shards(str_t *b, const totals_t *t)
{
  char missing[256];
  int nmissing;
  summary_missing_shards(t, missing, sizeof missing, &nmissing);
  if (t->unsharded)
    str_lit(b, "(a report of an unsharded run covers every input)");
  else if (t->shards < 0)
    str_lit(b, "(reports of runs with different shard counts)");
  else if (t->shards == 0)
    str_lit(b, "-");
  else if (nmissing)
    str_addf(b, "%d of %d (missing: %s)", t->shards - nmissing, t->shards, missing);
  else
    str_addf(b, "%d of %d", t->shards, t->shards);
}

static void add_totals(str_t *b, const totals_t *t)
{
  double per_s = t->wall_ms_max > 0 ? t->images * 1000.0 / t->wall_ms_max : 0;
  str_addf(b,
           "<table class=\"totals\">\n<tr><th>reports</th><td>%d</td></tr>\n<tr><th>shards</th>"
           "<td>",
           t->reports);
  add_shards(b, t);
  str_addf(b,
           "</td></tr>\n<tr><th>inputs</th><td>%.0f</td></tr>\n<tr><th>images</th><td>%.0f</td>"
           "</tr>\n<tr><th>converted</th><td>%.0f</td></tr>\n<tr><th>failed</th><td>%.0f</td>"
           "</tr>\n<tr><th>existing</th><td>%.0f</td></tr>\n<tr><th>skipped</th><td>%.0f</td>"
           "</tr>\n<tr><th>wall</th><td>%.2f s (longest report), %.2f s added up</td></tr>\n"
           "<tr><th>throughput</th><td>%.1f images/s (images over the longest wall)</td></tr>\n"
           "<tr><th>exit status</th><td>%d (the largest)</td></tr>\n</table>\n",
           t->inputs, t->images, t->converted, t->failed, t->existing, t->skipped,
           t->wall_ms_max / 1000.0, t->wall_ms / 1000.0, per_s, t->exit_status);
}

/* One row per report: its shard, counts, wall time and throughput. */
static void add_runs(str_t *b, const totals_t *t)
{
  const cJSON *run;
  str_lit(b, "<h2>Reports</h2>\n<table class=\"runs\">\n<tr><th>report</th><th>shard</th>"
             "<th>images</th><th>converted</th><th>failed</th><th>wall s</th>"
             "<th>images/s</th></tr>\n");
  cJSON_ArrayForEach(run, t->runs)
  {
    const cJSON *sum = cJSON_GetObjectItemCaseSensitive(run, "summary");
    double wall = number(sum, "wall_ms");
    str_lit(b, "<tr><td class=\"name\">");
    add_string(b, run, "report");
    str_lit(b, "</td><td>");
    add_string(b, sum, "shard");
    str_addf(b, "</td><td>%.0f</td><td>%.0f</td><td>%.0f</td><td>%.2f</td><td>%.1f</td></tr>\n",
             number(sum, "images"), number(sum, "converted"), number(sum, "failed"), wall / 1000.0,
             wall > 0 ? number(sum, "images") * 1000.0 / wall : 0);
  }
  str_lit(b, "</table>\n");
}

/* Each stage's time added up over the reports' stage_totals_ms, in order of appearance; NULL
 * when out of memory. */
static cJSON *stage_totals(const totals_t *t)
{
  cJSON *stages = cJSON_CreateObject(), *run, *s;
  cJSON_ArrayForEach(run, t->runs)
  {
    const cJSON *sum = cJSON_GetObjectItemCaseSensitive(run, "summary");
    cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(sum, "stage_totals_ms"))
    {
      if (!cJSON_IsNumber(s) || !s->string)
        continue;
      cJSON *have = cJSON_GetObjectItemCaseSensitive(stages, s->string);
      if (have)
        cJSON_SetNumberValue(have, have->valuedouble + s->valuedouble);
      else if (stages && !cJSON_AddNumberToObject(stages, s->string, s->valuedouble))
        stages = (cJSON_Delete(stages), NULL);
    }
  }
  return stages;
}

/* One bar of the stages side by side, then a table of each stage's time and share. */
static void add_stages(str_t *b, const cJSON *stages)
{
  const cJSON *s;
  double total = 0, x = 0;
  size_t k = 0;
  cJSON_ArrayForEach(s, stages) total += s->valuedouble > 0 ? s->valuedouble : 0;
  str_lit(b, "<h2>Share of each stage</h2>\n");
  if (total <= 0) {
    str_lit(b, "<p class=\"note\">The reports have no stage times.</p>\n");
    return;
  }
  str_addf(b, "<svg width=\"%.0f\" height=\"24\" viewBox=\"0 0 %.0f 24\" role=\"img\">",
           SHARE_WIDTH, SHARE_WIDTH);
  cJSON_ArrayForEach(s, stages)
  {
    double w = s->valuedouble > 0 ? SHARE_WIDTH * s->valuedouble / total : 0;
    str_addf(b, "<rect x=\"%.1f\" y=\"0\" width=\"%.1f\" height=\"24\" fill=\"%s\"><title>", x, w,
             palette[k++ % NCOLORS]);
    str_add_clean(b, s->string, 1);
    str_lit(b, "</title></rect>");
    x += w;
  }
  str_lit(b, "</svg>\n<table class=\"stages\">\n<tr><th></th><th>stage</th><th>ms</th>"
             "<th>share</th></tr>\n");
  k = 0;
  cJSON_ArrayForEach(s, stages)
  {
    str_addf(b,
             "<tr><td><svg width=\"12\" height=\"12\"><rect width=\"12\" height=\"12\" "
             "fill=\"%s\"/></svg></td><td class=\"name\">",
             palette[k++ % NCOLORS]);
    str_add_clean(b, s->string, 1);
    str_addf(b, "</td><td>%.3f</td><td>%.1f%%</td></tr>\n", s->valuedouble,
             100.0 * (s->valuedouble > 0 ? s->valuedouble : 0) / total);
  }
  str_lit(b, "</table>\n");
}

static void add_failures(str_t *b, const totals_t *t)
{
  const cJSON *f;
  str_lit(b, "<h2>Failures</h2>\n");
  if (cJSON_GetArraySize(t->failures) == 0) {
    str_lit(b, "<p>None.</p>\n");
    return;
  }
  str_lit(b, "<table class=\"failures\">\n<tr><th>report</th><th>input</th><th>reason</th></tr>\n");
  cJSON_ArrayForEach(f, t->failures)
  {
    str_lit(b, "<tr><td class=\"name\">");
    add_string(b, f, "report");
    str_lit(b, "</td><td class=\"name\">");
    add_string(b, f, "input");
    str_lit(b, "</td><td class=\"reason\">");
    add_string(b, f, "error");
    str_lit(b, "</td></tr>\n");
  }
  str_lit(b, "</table>\n");
}

void summary_format_html(const totals_t *t, str_t *b)
{
  int failed = t->failed > 0 || t->exit_status != 0;
  cJSON *stages = stage_totals(t);
  if (!stages) {
    b->failed = 1;
    return;
  }
  str_addf(b,
           "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n"
           "<title>gpuimg summary</title>\n<style>%s</style>\n</head>\n<body>\n"
           "<h1 class=\"%s\">%.0f converted, %.0f failed</h1>\n",
           page_style, failed ? "fail" : "pass", t->converted, t->failed);
  add_totals(b, t);
  add_runs(b, t);
  summary_charts_html(t, b);
  add_stages(b, stages);
  add_failures(b, t);
  str_lit(b, "</body>\n</html>\n");
  cJSON_Delete(stages);
}
