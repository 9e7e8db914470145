/* report.h: what a run's timing record becomes: the JSON report and the --explain lines. */
#ifndef GPUIMG_REPORT_H
#define GPUIMG_REPORT_H

#include <stdio.h>

#include "run.h"

/* A malloc'd copy of s that is valid UTF-8 (each invalid byte becomes U+FFFD), for JSON. */
char *gpuimg_utf8_clean(const char *s);

/* Serialises the report to JSON text (malloc'd, caller frees). NULL on failure. */
char *gpuimg_report_json(const gpuimg_plan_t *plan, const gpuimg_run_t *run);

/* The results of the run's analysis steps (stats), a JSON object per line: {"input", "width",
 * "height" (the step's input), "step", "operation", "result"} (malloc'd text, "" when the plan
 * has none; caller frees). NULL with the error set when out of memory. */
char *gpuimg_report_results(const gpuimg_run_t *run, const gpuimg_plan_t *plan);

/* n with thousands separators ("3,072") in buf; returns buf. */
const char *gpuimg_grouped(unsigned long long n, char *buf, size_t size);

/* --explain: one plain line per kernel of the run on f. */
void gpuimg_explain(FILE *f, const gpuimg_plan_t *plan, const gpuimg_run_t *run);
/* The line of one of run's stages, a step's (s->step >= 0), as gpuimg_explain() prints it. */
void gpuimg_explain_stage(FILE *f, const gpuimg_plan_t *plan, const gpuimg_run_t *run,
                          const gpuimg_stage_t *s);

#endif
