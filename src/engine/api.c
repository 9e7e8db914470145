/* api.c: libgpuimg's public context (include/gpuimg.h): a plan built from operation names and
 * option values, run through the engine's flow on images in memory or on files. */
#include "api.h"

#include <stdlib.h>
#include <string.h>

#ifndef GPUIMG_VERSION
#define GPUIMG_VERSION "unknown"
#endif

struct gpuimg_context {
  gpuimg_plan_t plan;
  int device;                /* the CUDA device ("device"), or -1: the default one */
  gpuimg_pipeline_t *runner; /* opened at the first run, kept for the next */
  gpuimg_run_t run;          /* the last run */
};

const char *gpuimg_version(void)
{
  return GPUIMG_VERSION;
}

gpuimg_context_t *gpuimg_context_create(gpuimg_backend_t backend)
{
  gpuimg_context_t *ctx = calloc(1, sizeof *ctx);
  if (!ctx) {
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, "", "out of memory");
    return NULL;
  }
  gpuimg_plan_init(&ctx->plan);
  ctx->plan.backend = backend;
  ctx->device = -1;
  ctx->plan.quiet = 1;
  return ctx;
}

void gpuimg_context_destroy(gpuimg_context_t *ctx)
{
  if (!ctx)
    return;
  gpuimg_pipeline_destroy(ctx->runner);
  gpuimg_run_free(&ctx->run);
  free(ctx);
}

/* The runner is made for the plan's steps and device: a new one at the next run. */
static void forget_runner(gpuimg_context_t *ctx)
{
  gpuimg_pipeline_destroy(ctx->runner);
  ctx->runner = NULL;
}

int gpuimg_context_add(gpuimg_context_t *ctx, const char *op)
{
  forget_runner(ctx);
  return gpuimg_plan_add_step(&ctx->plan, op);
}

/* "device": the CUDA device the context runs on. */
static int set_device(gpuimg_context_t *ctx, const char *spelled, const char *value)
{
  long long d;
  if (!value) {
    gpuimg_error_set(GPUIMG_EXIT_USAGE, spelled, "missing value");
    return -1;
  }
  if (gpuimg_options_int(spelled, value, 0, 1000000, &d) < 0)
    return -1;
  ctx->device = (int)d;
  forget_runner(ctx);
  return 0;
}

int gpuimg_context_set(gpuimg_context_t *ctx, const char *option, const char *value)
{
  char spelled[64];
  snprintf(spelled, sizeof spelled, "--%.40s", option);
  if (strcmp(option, "device") == 0)
    return set_device(ctx, spelled, value);
  gpuimg_step_t *step = ctx->plan.nsteps ? &ctx->plan.steps[ctx->plan.nsteps - 1] : NULL;
  int rc = step ? gpuimg_step_set(step, option, spelled, value) : 1;
  if (rc <= 0)
    return rc;
  const gpuimg_option_t *o = gpuimg_options_find(gpuimg_plan_options, option, strlen(option), 0);
  if (!o) {
    gpuimg_error_set(GPUIMG_EXIT_USAGE, "", "unknown option '%s'", spelled);
    return -1;
  }
  if (!value && o->kind != GPUIMG_OPTION_FLAG) {
    gpuimg_error_set(GPUIMG_EXIT_USAGE, spelled, "missing value");
    return -1;
  }
  forget_runner(ctx); /* the backend, the block shape, ... */
  return gpuimg_options_apply(o, spelled, value, &ctx->plan);
}

/* The context's runner: on its device when one was set (and the backend is not cpu), else
 * where a one-image run goes. */
static gpuimg_pipeline_t *open_runner(gpuimg_context_t *ctx)
{
  if (ctx->device < 0 || ctx->plan.backend == GPUIMG_BACKEND_CPU)
    return gpuimg_pipeline_open(&ctx->plan);
  return gpuimg_pipeline_create(&ctx->plan, ctx->device);
}

/* Runs job through the flow on the context's runner (opened at its first use). */
static int run_job(gpuimg_context_t *ctx, gpuimg_job_t *job)
{
  if (!ctx->plan.nsteps) {
    gpuimg_error_set(GPUIMG_EXIT_USAGE, "", "no operation given");
    return -1;
  }
  if (gpuimg_plan_check(&ctx->plan) < 0)
    return -1;
  if (!ctx->runner && !(ctx->runner = open_runner(ctx)))
    return -1;
  gpuimg_run_free(&ctx->run);
  memset(&ctx->run, 0, sizeof ctx->run);
  gpuimg_flow_t flow = {.plan = &ctx->plan, .runner = ctx->runner};
  return gpuimg_flow_run(&flow, job, &ctx->run);
}

int gpuimg_context_process(gpuimg_context_t *ctx, const gpuimg_image_t *src, gpuimg_image_t *dst)
{
  memset(dst, 0, sizeof *dst);
  gpuimg_job_t job = {.image = src, .what = "(image in memory)", .result = dst};
  return run_job(ctx, &job);
}

int gpuimg_context_convert(gpuimg_context_t *ctx, const char *input, const char *output)
{
  gpuimg_job_t job = {.input = input, .what = input, .output = output, .output_what = output};
  if (output && (job.format = gpuimg_format_from_name(output)) == GPUIMG_FORMAT_NONE) {
    gpuimg_error_set(GPUIMG_EXIT_USAGE, output,
                     "unsupported output format (use .png, .jpg, .jpeg, .bmp or .tga)");
    return -1;
  }
  return run_job(ctx, &job);
}

int gpuimg_context_stage_count(const gpuimg_context_t *ctx)
{
  return ctx->run.nstages;
}

int gpuimg_context_stage(const gpuimg_context_t *ctx, int i, gpuimg_stage_time_t *out)
{
  if (i < 0 || i >= ctx->run.nstages) {
    gpuimg_error_set(GPUIMG_EXIT_USAGE, "", "no stage %d (the last run has %d)", i,
                     ctx->run.nstages);
    return -1;
  }
  const gpuimg_stage_t *s = &ctx->run.stages[i];
  double *v = malloc((size_t)(s->nms > 0 ? s->nms : 1) * sizeof *v);
  if (!v) {
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, "", "out of memory");
    return -1;
  }
  memcpy(v, s->ms, (size_t)s->nms * sizeof *v);
  out->name = s->name;
  out->device = s->device;
  out->ms = gpuimg_median(v, s->nms);
  free(v);
  return 0;
}

const char *gpuimg_context_backend(const gpuimg_context_t *ctx)
{
  return ctx->run.backend ? ctx->run.backend : "";
}

char *gpuimg_context_report(const gpuimg_context_t *ctx)
{
  return gpuimg_report_json(&ctx->plan, &ctx->run);
}
