/* compare_html.c: `gpuimg compare`'s result as one self-contained HTML page: inline CSS and
 * SVG, no script, nothing fetched, every string from a report escaped. */
#include "compare.h"

#include <math.h>

#define BAR_WIDTH 150.0 /* the chart's drawing width in px, the longest bar of the row */

static const char *const verdict_mark[] = {"ok", "&#9660; faster", "&#9650; SLOWER", "missing",
                                           "new"};
static const char *const verdict_class[] = {"ok", "faster", "slower", "missing", "new"};

static const char page_style[] =
    "body{font-family:sans-serif;margin:1.5em;color:#222;background:#fff}"
    "h1.pass{color:#1a7f37}h1.fail{color:#c62828}"
    "table{border-collapse:collapse}th,td{padding:.25em .6em;border-bottom:1px solid #ddd;"
    "text-align:right;vertical-align:middle}th{background:#f3f3f3}"
    "td.key{text-align:left;font-family:monospace;word-break:break-all;max-width:40em}"
    ".spread{color:#666;font-size:90%}"
    "tr.slower td{background:#fde8e8}tr.slower td.verdict{color:#c62828;font-weight:bold}"
    "tr.missing td.verdict{color:#c62828}tr.faster td.verdict{color:#1a7f37}"
    "svg .base{fill:#9e9e9e}svg .cur{fill:#1565c0}tr.slower svg .cur{fill:#c62828}"
    "svg line{stroke:#222;stroke-width:1}";

/* "1.2345 ±1.0%" (with " of N" reports when there were several), or "-" without a value. */
static void add_timing(str_t *b, const entry_t *e)
{
  if (!e) {
    str_lit(b, "<td>-</td>");
    return;
  }
  str_addf(b, "<td>%.4f <span class=\"spread\">&#177;%.1f%%", e->median, e->noise_pct);
  if (e->n > 1)
    str_addf(b, " of %d", e->n);
  str_lit(b, "</span></td>");
}

/* One bar at row y of the chart, its whisker the median's spread, scaled by px per ms. */
static void add_bar(str_t *b, const entry_t *e, const char *cls, int y, double px)
{
  if (!e)
    return;
  double w = e->median * px, d = w * e->noise_pct / 100.0;
  double lo = w - d > 0 ? w - d : 0, hi = w + d;
  str_addf(b, "<rect class=\"%s\" x=\"0\" y=\"%d\" width=\"%.1f\" height=\"8\"/>", cls, y, w);
  str_addf(b, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>", lo, y + 4, hi, y + 4);
}

/* The row's chart: baseline above, current below, on the row's own scale. */
static void add_chart(str_t *b, const row_t *r)
{
  double top = 0;
  const entry_t *sides[2] = {r->base, r->cur};
  for (int i = 0; i < 2; i++)
    if (sides[i] && sides[i]->median * (1 + sides[i]->noise_pct / 100.0) > top)
      top = sides[i]->median * (1 + sides[i]->noise_pct / 100.0);
  str_lit(b, "<td><svg width=\"160\" height=\"22\" viewBox=\"0 0 160 22\" role=\"img\">");
  if (top > 0) {
    add_bar(b, r->base, "base", 2, BAR_WIDTH / top);
    add_bar(b, r->cur, "cur", 12, BAR_WIDTH / top);
  }
  str_lit(b, "</svg></td>");
}

static void add_row(str_t *b, const row_t *r)
{
  str_addf(b, "<tr class=\"%s\"><td class=\"key\">", verdict_class[r->verdict]);
  str_add_clean(b, compare_row_key(r), 1);
  str_lit(b, "</td>");
  add_timing(b, r->base);
  add_timing(b, r->cur);
  if (isnan(r->change_pct))
    str_lit(b, "<td>-</td>");
  else
    str_addf(b, "<td>%+.1f%%</td>", r->change_pct);
  if (r->base && r->cur)
    str_addf(b, "<td>+%.1f%%</td>", r->limit_pct);
  else
    str_lit(b, "<td>-</td>");
  str_addf(b, "<td class=\"verdict\">%s</td>", verdict_mark[r->verdict]);
  add_chart(b, r);
  str_lit(b, "</tr>\n");
}

/* "<dt>baseline</dt><dd>NAME: N reports, ...</dd>" */
static void add_file(str_t *b, const char *role, const runs_t *r)
{
  str_addf(b, "<dt>%s</dt><dd><code>", role);
  str_add_clean(b, r->name, 1);
  str_lit(b, "</code>: ");
  compare_platform_words(r, 1, b);
  str_lit(b, "</dd>\n");
}

void compare_format_html(const runs_t *base, const runs_t *cur, const result_t *res,
                         const compare_options_t *o, str_t *b)
{
  int failed = compare_failed(res, o);
  const char *verdict = failed ? "REGRESSION" : "no regression";
  str_addf(b,
           "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n"
           "<title>gpuimg compare: %s</title>\n<style>%s</style>\n</head>\n<body>\n"
           "<h1 class=\"%s\">%s</h1>\n<p class=\"summary\">",
           verdict, page_style, failed ? "fail" : "pass", verdict);
  compare_summary_words(res, o, b);
  str_lit(b, "</p>\n<dl>\n");
  add_file(b, "baseline", base);
  add_file(b, "current", cur);
  str_lit(b, "</dl>\n<table>\n<thead><tr><th>stage</th><th>baseline ms</th><th>current ms</th>"
             "<th>change</th><th>limit</th><th>verdict</th><th>median &#177; noise</th></tr>"
             "</thead>\n<tbody>\n");
  for (int i = 0; i < res->nrows; i++)
    add_row(b, &res->rows[i]);
  str_lit(b, "</tbody>\n</table>\n<p class=\"spread\">Times are medians in milliseconds, "
             "&#177; the noise (mad_pct, or the spread of several reports' medians: \"of N\"). "
             "Limit: the threshold plus the larger noise. Bars: baseline above, current below, "
             "each row on its own scale, the whisker the noise.</p>\n</body>\n</html>\n");
}
