/* api.c: libgpuimg's public context (include/gpuimg.h): a plan built from operation names and
 * option values, run through the engine's flow on images in memory or on files; every argument
 * a caller passes is checked here, at the library's boundary, as gpuimg.h's contract says. */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include "api.h"

#include "files.h"

#include <stdlib.h>
#include <string.h>

#ifndef GPUIMG_VERSION
#define GPUIMG_VERSION "unknown"
#endif

/* An image in memory in messages and the report. */
#define IN_MEMORY "(image in memory)"

struct gpuimg_context {
  gpuimg_plan_t plan;
  int device;                /* the CUDA device ("device"), or -1: the default one */
  gpuimg_pipeline_t *runner; /* opened at the first run, kept for the next */
  gpuimg_run_t run;          /* the last run, complete when ran */
  int ran;                   /* the last process or convert succeeded */
  char **kept;               /* copies of the file names set (the plan points to them) */
  int nkept;
};

const char *gpuimg_version(void)
{
  return GPUIMG_VERSION;
}

/* ---- The caller's arguments. A misuse is a usage error (exit 2) named after the function;
 * a bad image in memory is an input error (exit 3), as a file that cannot be decoded is. */

/* p is not NULL; else -1 with "fn: name is NULL". */
static int need(const void *p, const char *fn, const char *name)
{
  if (p)
    return 0;
  gpuimg_error_set(GPUIMG_EXIT_USAGE, fn, "%s is NULL", name);
  return -1;
}

/* An image in memory the plan can take: its fields (gpuimg_image_check()) and --max-pixels,
 * as a decoder holds a file's image to it; its channels are each step's to judge
 * (gpuimg_plan_shapes(), from the operation's declaration). */
static int check_image(const gpuimg_context_t *ctx, const gpuimg_image_t *img)
{
  if (gpuimg_image_check(img, GPUIMG_EXIT_INPUT, IN_MEMORY) < 0)
    return -1;
  uint64_t max = ctx->plan.max_pixels;
  if ((uint64_t)img->width * (uint64_t)img->height > max) {
    gpuimg_error_set(GPUIMG_EXIT_INPUT, IN_MEMORY,
                     "image is %dx%d, over the limit of %llu pixels (see --max-pixels)", img->width,
                     img->height, (unsigned long long)max);
    return -1;
  }
  return 0;
}

/* The output must not replace an input: the image or a step's mask file (the same file by
 * device and inode, or by canonical path before it exists, as the command checks). */
static int check_output(const gpuimg_context_t *ctx, const char *input, const char *output)
{
  if (strcmp(output, "-") == 0)
    return 0;
  if (strcmp(input, "-") && gpuimg_same_file(input, output)) {
    gpuimg_error_set(GPUIMG_EXIT_OUTPUT, output, "output is the same file as the input");
    return -1;
  }
  for (int i = 0; i < ctx->plan.nsteps; i++) {
    int takes;
    const char *mask = gpuimg_flow_mask_path(&ctx->plan, i, &takes);
    if (takes && mask && strcmp(mask, "-") && gpuimg_same_file(mask, output)) {
      gpuimg_error_set(GPUIMG_EXIT_OUTPUT, output, "output is the same file as step %d's mask",
                       i + 1);
      return -1;
    }
  }
  return 0;
}

/* ---- The context. */

gpuimg_context_t *gpuimg_context_create(gpuimg_backend_t backend)
{
  int b = (int)backend;
  if (b != GPUIMG_BACKEND_AUTO && b != GPUIMG_BACKEND_CPU && b != GPUIMG_BACKEND_CUDA) {
    gpuimg_error_set(GPUIMG_EXIT_USAGE, "gpuimg_context_create",
                     "invalid backend %d (expected GPUIMG_BACKEND_AUTO, GPUIMG_BACKEND_CPU or "
                     "GPUIMG_BACKEND_CUDA)",
                     b);
    return NULL;
  }
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
  for (int i = 0; i < ctx->nkept; i++)
    free(ctx->kept[i]);
  free(ctx->kept);
  free(ctx);
}

/* The runner is made for the plan's steps and device: a new one at the next run. */
static void forget_runner(gpuimg_context_t *ctx)
{
  gpuimg_pipeline_destroy(ctx->runner);
  ctx->runner = NULL;
}

/* No last run: before a run, and after one that failed. */
static void forget_run(gpuimg_context_t *ctx)
{
  gpuimg_run_free(&ctx->run);
  memset(&ctx->run, 0, sizeof ctx->run);
  ctx->ran = 0;
}

int gpuimg_context_add(gpuimg_context_t *ctx, const char *op)
{
  if (need(ctx, __func__, "ctx") < 0 || need(op, __func__, "op") < 0 ||
      gpuimg_plan_add_step(&ctx->plan, op) < 0)
    return -1;
  forget_runner(ctx);
  return 0;
}

/* A copy of value that lives as long as ctx (a file name the plan keeps); NULL without
 * memory. */
static const char *keep(gpuimg_context_t *ctx, const char *value)
{
  char **more = realloc(ctx->kept, (size_t)(ctx->nkept + 1) * sizeof *more);
  char *copy = more ? strdup(value) : NULL;
  if (more)
    ctx->kept = more;
  if (!copy) {
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, "", "out of memory");
    return NULL;
  }
  return ctx->kept[ctx->nkept++] = copy;
}

/* Applies option o with value (NULL for a flag) to target; a file name is copied first. */
static int apply(gpuimg_context_t *ctx, const gpuimg_option_t *o, const char *spelled,
                 const char *value, void *target)
{
  if (o->kind == GPUIMG_OPTION_STRING && value && !(value = keep(ctx, value)))
    return -1;
  return gpuimg_options_apply(o, spelled, value, target);
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
  if (need(ctx, __func__, "ctx") < 0 || need(option, __func__, "option") < 0)
    return -1;
  snprintf(spelled, sizeof spelled, "--%.40s", option);
  if (strcmp(option, "device") == 0)
    return set_device(ctx, spelled, value);
  size_t len = strlen(option);
  gpuimg_step_t *step = ctx->plan.nsteps ? &ctx->plan.steps[ctx->plan.nsteps - 1] : NULL;
  const gpuimg_option_t *o = step ? gpuimg_options_find(step->op->options, option, len, 0) : NULL;
  if (o)
    return apply(ctx, o, spelled, value, step->params);
  if (!(o = gpuimg_options_find(gpuimg_plan_options, option, len, 0))) {
    gpuimg_error_set(GPUIMG_EXIT_USAGE, "", "unknown option '%s'", spelled);
    return -1;
  }
  forget_runner(ctx); /* the backend, the block shape, ... */
  return apply(ctx, o, spelled, value, &ctx->plan);
}

/* The context's runner: on its device when one was set (and the backend is not cpu), else
 * where a one-image run goes. */
static gpuimg_pipeline_t *open_runner(gpuimg_context_t *ctx)
{
  if (ctx->device < 0 || ctx->plan.backend == GPUIMG_BACKEND_CPU)
    return gpuimg_pipeline_open(&ctx->plan);
  return gpuimg_pipeline_create(&ctx->plan, ctx->device);
}

/* Runs job through the flow on the context's runner (opened at its first use), once the plan
 * and an image in memory are checked; the run is the context's last only if it succeeds. */
static int run_job(gpuimg_context_t *ctx, gpuimg_job_t *job)
{
  if (!ctx->plan.nsteps) {
    gpuimg_error_set(GPUIMG_EXIT_USAGE, "", "no operation given");
    return -1;
  }
  if (gpuimg_plan_check(&ctx->plan) < 0 || (job->image && check_image(ctx, job->image) < 0))
    return -1;
  if (!ctx->runner && !(ctx->runner = open_runner(ctx)))
    return -1;
  gpuimg_flow_t flow = {.plan = &ctx->plan, .runner = ctx->runner};
  if (gpuimg_flow_run(&flow, job, &ctx->run) < 0) {
    forget_run(ctx);
    return -1;
  }
  ctx->ran = 1;
  return 0;
}

int gpuimg_context_process(gpuimg_context_t *ctx, const gpuimg_image_t *src, gpuimg_image_t *dst)
{
  if (need(dst, __func__, "dst") < 0)
    return -1;
  /* The flow copies src before it makes the result, which goes to dst only at the end: dst
   * may be src. A failure empties dst, unless it is src, which it leaves as it was. */
  gpuimg_image_t result = {0};
  int rc = -1;
  if (need(ctx, __func__, "ctx") == 0 && need(src, __func__, "src") == 0) {
    forget_run(ctx);
    gpuimg_job_t job = {.image = src, .what = IN_MEMORY, .result = &result};
    rc = run_job(ctx, &job);
  }
  if (rc == 0 || dst != src)
    *dst = result;
  return rc;
}

int gpuimg_context_convert(gpuimg_context_t *ctx, const char *input, const char *output)
{
  if (need(ctx, __func__, "ctx") < 0 || need(input, __func__, "input") < 0)
    return -1;
  forget_run(ctx);
  gpuimg_job_t job = {.input = input, .what = input, .output = output, .output_what = output};
  if (output && gpuimg_format_of_output(output, &job.format) < 0)
    return -1;
  if (output && check_output(ctx, input, output) < 0)
    return -1;
  return run_job(ctx, &job);
}

/* ---- The last run. */

int gpuimg_context_stage_count(const gpuimg_context_t *ctx)
{
  if (need(ctx, __func__, "ctx") < 0)
    return -1;
  return ctx->run.nstages;
}

int gpuimg_context_stage(const gpuimg_context_t *ctx, int i, gpuimg_stage_time_t *out)
{
  if (need(ctx, __func__, "ctx") < 0 || need(out, __func__, "out") < 0)
    return -1;
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
  if (need(ctx, __func__, "ctx") < 0)
    return NULL;
  return ctx->run.backend ? ctx->run.backend : "";
}

char *gpuimg_context_report(const gpuimg_context_t *ctx)
{
  if (need(ctx, __func__, "ctx") < 0)
    return NULL;
  if (!ctx->ran) {
    gpuimg_error_set(GPUIMG_EXIT_USAGE, __func__,
                     "no run to report (none has succeeded since the context was made or the "
                     "last one failed)");
    return NULL;
  }
  return gpuimg_report_json(&ctx->plan, &ctx->run);
}
