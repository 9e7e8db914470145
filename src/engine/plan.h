/* plan.h: the plan's option table (the run-wide settings every client sets by name). */
#ifndef GPUIMG_PLAN_H
#define GPUIMG_PLAN_H

#include "options.h"
#include "run.h"

/* The run-wide settings by their command-line names, filling a gpuimg_plan_t. Their --help
 * lines are the command's (help NULL here). */
extern const gpuimg_option_t gpuimg_plan_options[];

/* An empty plan with every default. */
void gpuimg_plan_init(gpuimg_plan_t *plan);

/* Appends the operation called name with its defaults; -1 with a usage error when there is
 * none of that name or the plan is full. */
int gpuimg_plan_add_step(gpuimg_plan_t *plan, const char *name);

/* Sets the step's option called name (spelled for messages) to value (NULL: a flag). 0 set,
 * 1 the step's operation has no such option, -1 a usage error. */
int gpuimg_step_set(gpuimg_step_t *step, const char *name, const char *spelled, const char *value);

/* Every step's parameters as a whole, by its operation's check(), once all are set: 0, or -1
 * with a usage error. */
int gpuimg_plan_check(const gpuimg_plan_t *plan);

#endif
