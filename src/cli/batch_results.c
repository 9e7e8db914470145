/* batch_results.c: a batch's analysis steps (stats): each image's figures on stdout in input
 * order, their total over the images (a dataset's figures), in the report's summary line and
 * as a last line on stdout. */
#define _XOPEN_SOURCE 700
#include "batch.h"

#include <cJSON.h>
#include <stdlib.h>
#include <string.h>

int batch_results_open(batch_t *b)
{
  const gpuimg_plan_t *plan = &b->cli.plan;
  for (int i = 0; i < plan->nsteps; i++) {
    const gpuimg_op_t *op = plan->steps[i].op;
    if (op->result_size && !(b->results[i] = batch_calloc(1, op->result_size)))
      return -1;
    b->analyses |= op->result_size != 0;
  }
  /* Standard output carries the report instead: the figures are in its lines. */
  b->print_results = b->analyses && !(b->cli.report && strcmp(b->cli.report, "-") == 0);
  return 0;
}

int batch_results_add(batch_t *b, item_t *it, const gpuimg_run_t *run)
{
  if (!b->analyses)
    return 0;
  pthread_mutex_lock(&b->report_mu);
  for (int i = 0; i < run->nstages; i++) {
    const gpuimg_stage_t *s = &run->stages[i];
    if (s->result) {
      b->cli.plan.steps[s->step].op->result_add(b->results[s->step], s->result);
      b->result_images[s->step]++;
    }
  }
  pthread_mutex_unlock(&b->report_mu);
  if (b->print_results && !(it->results = gpuimg_report_results(run, &b->cli.plan)))
    return -1;
  return 0;
}

void batch_results_emit(batch_t *b, item_t *it)
{
  if (it->results && fputs(it->results, stdout) < 0)
    b->results_err = 1;
  free(it->results);
  it->results = NULL;
}

/* The totals: one object per analysis step, {"step", "operation", "images", "result"}, with
 * head's keys first (NULL: none); into an array (NULL: printed as lines on stdout). */
static int totals_into(const batch_t *b, cJSON *array, int head)
{
  const gpuimg_plan_t *plan = &b->cli.plan;
  for (int i = 0; i < plan->nsteps; i++) {
    if (!b->results[i])
      continue;
    cJSON *o = cJSON_CreateObject();
    char *json = plan->steps[i].op->result_json(b->results[i]), *line = NULL;
    int ok = o && json;
    if (ok && head)
      ok = cJSON_AddBoolToObject(o, "total", 1) != NULL;
    ok = ok && cJSON_AddNumberToObject(o, "images", b->result_images[i]) &&
         cJSON_AddNumberToObject(o, "step", i) &&
         cJSON_AddStringToObject(o, "operation", plan->steps[i].op->name) &&
         cJSON_AddRawToObject(o, "result", json);
    free(json);
    if (ok && array) {
      ok = cJSON_AddItemToArray(array, o);
      o = ok ? NULL : o;
    } else if (ok) {
      ok = (line = cJSON_PrintUnformatted(o)) && printf("%s\n", line) >= 0;
      cJSON_free(line);
    }
    cJSON_Delete(o);
    if (!ok)
      return -1;
  }
  return 0;
}

int batch_results_summary(const batch_t *b, cJSON *summary)
{
  cJSON *a;
  if (!b->analyses)
    return 0;
  return (a = cJSON_AddArrayToObject(summary, "results")) ? totals_into(b, a, 0) : -1;
}

int batch_results_finish(batch_t *b)
{
  if (!b->print_results)
    return 0;
  if (totals_into(b, NULL, 1) < 0 || b->results_err || fflush(stdout) != 0) {
    gpuimg_error_set(GPUIMG_EXIT_OUTPUT, "<stdout>", "cannot write the figures");
    return -1;
  }
  return 0;
}

void batch_results_free(batch_t *b)
{
  for (int i = 0; i < GPUIMG_MAX_STEPS; i++)
    free(b->results[i]);
}
