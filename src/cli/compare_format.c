/* compare_format.c: `gpuimg compare`'s result as a text table, a JSON object or JUnit XML. */
#include "compare.h"

#include <cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const verdict_text[] = {"ok", "faster", "SLOWER", "missing", "new"};
static const char *const verdict_json[] = {"ok", "faster", "slower", "missing", "new"};

void compare_platform_words(const runs_t *r, int xml, str_t *b)
{
  str_addf(b, "%d report%s", r->nreports, r->nreports == 1 ? "" : "s");
  for (int i = 0; i < r->nplatforms; i++) {
    const platform_t *p = &r->platforms[i];
    str_add(b, i ? "; " : ", ", 2);
    str_add_clean(b, p->backend[0] ? p->backend : "?", xml);
    if (p->device[0]) {
      str_lit(b, " on ");
      str_add_clean(b, p->device, xml);
    }
    if (p->cc[0]) {
      str_lit(b, " (compute capability ");
      str_add_clean(b, p->cc, xml);
      str_lit(b, ")");
    }
  }
}

void compare_summary_words(const result_t *res, const compare_options_t *o, str_t *b)
{
  str_addf(b, "%d compared (threshold %.10g%% + noise): %d slower, %d faster, %d missing%s, %d new",
           res->compared, o->threshold, res->slower, res->faster, res->missing,
           res->missing && o->allow_missing ? " (allowed)" : "", res->added);
}

void compare_format_text(const runs_t *base, const runs_t *cur, const result_t *res,
                         const compare_options_t *o, str_t *b)
{
  size_t width = 5; /* "STAGE" */
  for (int i = 0; i < res->nrows; i++) {
    size_t n = strlen(compare_row_key(&res->rows[i]));
    width = n > width ? n : width;
  }
  str_lit(b, "baseline ");
  str_add_clean(b, base->name, 0);
  str_lit(b, ": ");
  compare_platform_words(base, 0, b);
  str_lit(b, "\ncurrent  ");
  str_add_clean(b, cur->name, 0);
  str_lit(b, ": ");
  compare_platform_words(cur, 0, b);
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
    str_addf(b, "%-*s %12s %12s %9s %6.1f%%  %s\n", (int)width, compare_row_key(r), bms, cms,
             change, r->noise_pct, verdict_text[r->verdict]);
  }
  str_lit(b, "\n");
  compare_summary_words(res, o, b);
  str_addf(b, ": %s\n", compare_failed(res, o) ? "REGRESSION" : "no regression");
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

/* Adds one object per row to the array stages; -1 when out of memory. */
static int add_json_stages(cJSON *stages, const result_t *res)
{
  for (int i = 0; i < res->nrows; i++) {
    const row_t *r = &res->rows[i];
    cJSON *s = cJSON_CreateObject();
    if (!s || !cJSON_AddItemToArray(stages, s)) {
      cJSON_Delete(s);
      return -1;
    }
    cJSON_AddStringToObject(s, "key", compare_row_key(r));
    add_json_number(s, "baseline_ms", r->base ? r->base->median : NAN, 4);
    add_json_number(s, "current_ms", r->cur ? r->cur->median : NAN, 4);
    add_json_number(s, "change_pct", r->change_pct, 2);
    add_json_number(s, "noise_pct", r->noise_pct, 2);
    add_json_number(s, "limit_pct", r->base && r->cur ? r->limit_pct : NAN, 2);
    cJSON_AddStringToObject(s, "verdict", verdict_json[r->verdict]);
  }
  return 0;
}

int compare_format_json(const runs_t *base, const runs_t *cur, const result_t *res,
                        const compare_options_t *o, str_t *b)
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
  cJSON_AddBoolToObject(root, "passed", !compare_failed(res, o));
  if (!(stages = cJSON_AddArrayToObject(root, "stages")))
    oom = 1;
  if (!oom && add_json_stages(stages, res) < 0)
    oom = 1;
  char *text = oom ? NULL : cJSON_Print(root);
  cJSON_Delete(root);
  if (!text)
    return compare_out_of_memory("compare");
  str_add(b, text, strlen(text));
  str_lit(b, "\n");
  free(text);
  return 0;
}

/* Appends the rest of row r's <testcase> element, from the end of its start tag. */
static void add_junit_verdict(str_t *b, const row_t *r, const compare_options_t *o)
{
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

void compare_format_junit(const runs_t *base, const runs_t *cur, const result_t *res,
                          const compare_options_t *o, str_t *b)
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
    str_add_clean(b, compare_row_key(r), 1);
    str_addf(b, "\" time=\"%.7f\"", r->cur ? r->cur->median / 1000.0 : 0.0);
    add_junit_verdict(b, r, o);
  }
  str_lit(b, "  </testsuite>\n</testsuites>\n");
}
