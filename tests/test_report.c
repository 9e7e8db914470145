/* test_report.c: the report's stage statistics (ms, ms_min, ms_max, samples, mad_pct, bytes,
 * gbps) computed from known samples, against their definitions in man/gpuimg-report.5. */
#define TEST_NAME "test_report"
#include "test_fail.h"
#include "plan.h"
#include "report.h"

#include <cJSON.h>
#include <math.h>
#include <string.h>

/* One stage to record: its samples (in the order they were timed) and bytes. */
typedef struct {
  const char *name;
  int step;
  double ms[5];
  int nms;
  uint64_t bytes;
} sample_stage_t;

/* Samples chosen so that the median and the mean differ (and gbps with them), odd and even
 * counts, in an order other than sorted. */
static const sample_stage_t STAGES[] = {
    {"read", -1, {9.0, 1.0, 2.0}, 3, 4000000},     /* median 2, mean 4 */
    {"decode", -1, {3.0}, 1, 0},                   /* no bytes: no bytes, no gbps */
    {"blur", 0, {5.0, 0.5, 0.9, 0.6}, 4, 1500000}, /* median 0.75, mean 1.75 */
    {"encode", -1, {0.0, 0.0, 0.0}, 3, 1000},      /* ms 0: bytes, no gbps */
    {"write", -1, {1.23456789}, 1, 987654321},     /* rounding: 0.1 us, 1 MB/s */
};
#define NSTAGES ((int)(sizeof STAGES / sizeof STAGES[0]))

static double number(const cJSON *o, const char *stage, const char *key)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  if (!cJSON_IsNumber(v))
    fail("stage %s: no number %s", stage, key);
  return v->valuedouble;
}

static void expect_number(const cJSON *o, const char *stage, const char *key, double want)
{
  double got = number(o, stage, key);
  if (fabs(got - want) > 1e-9)
    fail("stage %s: %s is %.10g, expected %.10g", stage, key, got, want);
}

static void expect_absent(const cJSON *o, const char *stage, const char *key)
{
  if (cJSON_GetObjectItemCaseSensitive(o, key))
    fail("stage %s: has %s, expected none", stage, key);
}

/* The report of a CPU run of "blur -r 3" with STAGES, parsed. */
static cJSON *report_of_stages(void)
{
  static gpuimg_plan_t plan;
  static gpuimg_run_t run;
  gpuimg_plan_init(&plan);
  if (gpuimg_plan_add_step(&plan, "blur") < 0)
    fail("plan: %s", gpuimg_error_message());
  run.backend = "cpu";
  run.input_name = "in.png";
  for (int i = 0; i < NSTAGES; i++) {
    const sample_stage_t *t = &STAGES[i];
    gpuimg_stage_t *s = gpuimg_run_stage(&run, t->name, t->step, 0, t->nms);
    if (!s)
      fail("stage %s: %s", t->name, gpuimg_error_message());
    memcpy(s->ms, t->ms, (size_t)t->nms * sizeof *s->ms);
    s->bytes = t->bytes;
  }
  char *text = gpuimg_report_json(&plan, &run);
  if (!text)
    fail("no report: %s", gpuimg_error_message());
  cJSON *root = cJSON_Parse(text);
  if (!root)
    fail("the report is not JSON:\n%s", text);
  free(text);
  gpuimg_run_free(&run);
  return root;
}

int main(void)
{
  cJSON *root = report_of_stages();
  const cJSON *stages = cJSON_GetObjectItemCaseSensitive(root, "stages");
  if (cJSON_GetArraySize(stages) != NSTAGES)
    fail("%d stages, expected %d", cJSON_GetArraySize(stages), NSTAGES);
  /* Per stage: ms (the median), ms_min, ms_max, samples, mad_pct, bytes and gbps (-1: absent),
   * gbps = bytes / (ms * 10^6) from the unrounded median, e.g. 4000000 / (2 ms * 10^6) = 2. */
  static const double want[NSTAGES][7] = {
      {2.0, 1.0, 9.0, 3, 50.0, 4000000, 2.0},   /* |x - 2|: 7, 1, 0 -> MAD 1 */
      {3.0, 3.0, 3.0, 1, 0.0, -1, -1},          /* -1: absent */
      {0.75, 0.5, 5.0, 4, 26.67, 1500000, 2.0}, /* |x - 0.75|: 4.25, .15, .15, .25 -> MAD .2 */
      {0.0, 0.0, 0.0, 3, 0.0, 1000, -1},        /* gbps absent: ms is 0 */
      {1.2346, 1.2346, 1.2346, 1, 0.0, 987654321, 800}, /* 987654321 / 1234567.89 = 800.0000 */
  };
  static const char *const keys[7] = {"ms",      "ms_min", "ms_max", "samples",
                                      "mad_pct", "bytes",  "gbps"};
  for (int i = 0; i < NSTAGES; i++) {
    const cJSON *o = cJSON_GetArrayItem(stages, i);
    const char *name = STAGES[i].name;
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(o, "name");
    if (!cJSON_IsString(n) || strcmp(n->valuestring, name) != 0)
      fail("stage %d is not %s", i, name);
    for (int k = 0; k < 7; k++) {
      if (want[i][k] < 0)
        expect_absent(o, name, keys[k]);
      else
        expect_number(o, name, keys[k], want[i][k]);
    }
  }
  cJSON_Delete(root);
  printf("report: ms is the median (odd and even counts), ms_min, ms_max, samples, mad_pct; "
         "bytes and gbps = bytes / ms present as defined\n");
  return 0;
}
