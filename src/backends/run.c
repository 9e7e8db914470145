/* run.c: the timing record of a run (its stages), shared by every backend, the size each step
 * gets and makes, and the backend registry's lookup. */
#include "backend.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

gpuimg_stage_t *gpuimg_run_stage(gpuimg_run_t *run, const char *name, int step, int device, int nms)
{
  if (run->nstages == GPUIMG_MAX_STAGES) {
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, "", "too many stages");
    return NULL;
  }
  gpuimg_stage_t *s = &run->stages[run->nstages];
  memset(s, 0, sizeof *s);
  s->ms = calloc((size_t)nms, sizeof *s->ms);
  if (!s->ms) {
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, "", "out of memory");
    return NULL;
  }
  run->nstages++;
  snprintf(s->name, sizeof s->name, "%s", name);
  s->step = step;
  s->device = device;
  s->nms = nms;
  s->pinned = -1;
  return s;
}

void gpuimg_run_free(gpuimg_run_t *run)
{
  for (int i = 0; i < run->nstages; i++) {
    free(run->stages[i].ms);
    free(run->stages[i].result);
    free(run->stages[i].blocks);
  }
  run->nstages = 0;
}

gpuimg_stage_t *gpuimg_run_step_stage(gpuimg_run_t *run, const gpuimg_plan_t *plan, int i,
                                      const gpuimg_shape_t *shapes, int device, int nms)
{
  const gpuimg_shape_t *in = &shapes[i], *out = &shapes[i + 1];
  const gpuimg_op_t *op = plan->steps[i].op;
  gpuimg_stage_t *s = gpuimg_run_stage(run, op->name, i, device, nms);
  if (!s)
    return NULL;
  if (op->result_size && !(s->result = calloc(1, op->result_size))) {
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, "", "out of memory");
    return NULL;
  }
  uint64_t px = (uint64_t)in->w * (uint64_t)in->h;
  /* An analysis reads its input only (its output is the same buffer on a device). */
  s->bytes = px * (uint64_t)in->c +
             (op->result_size ? 0 : gpuimg_image_bytes(out->w, out->h, out->c)) +
             (op->needs_mask ? px : 0);
  s->in_w = in->w;
  s->in_h = in->h;
  s->out_w = out->w;
  s->out_h = out->h;
  return s;
}

void gpuimg_run_model(const gpuimg_plan_t *plan, const gpuimg_gpu_t *gpu, int i,
                      const gpuimg_shape_t *shapes, const gpuimg_image_t *mask, gpuimg_stage_t *s)
{
  const gpuimg_step_t *st = &plan->steps[i];
  gpuimg_launch_env_t env = {gpu, plan->block_w, plan->block_h, 0};
  s->has_model = 1;
  s->model_rc = gpuimg_op_predict(st->op, st->params, shapes[i].w, shapes[i].h, shapes[i].c, &env,
                                  mask, &s->model);
}

int gpuimg_plan_may_reduce(const gpuimg_plan_t *plan)
{
  return !plan->exact_decode && plan->nsteps > 0 && plan->steps[0].op->load_reduction;
}

int gpuimg_plan_load_reduction(const gpuimg_plan_t *plan, const gpuimg_codec_t *decoder, int w,
                               int h, void *fixed)
{
  const gpuimg_step_t *first = &plan->steps[0];
  return gpuimg_plan_may_reduce(plan) && decoder && decoder->decode_reduced
             ? first->op->load_reduction(first->params, w, h, 8, fixed)
             : 1;
}

int gpuimg_plan_shapes(const gpuimg_plan_t *plan, int w, int h, int c, gpuimg_shape_t *shapes)
{
  shapes[0] = (gpuimg_shape_t){w, h, c};
  for (int i = 0; i < plan->nsteps; i++) {
    const gpuimg_step_t *s = &plan->steps[i];
    gpuimg_shape_t *out = &shapes[i + 1];
    if (!gpuimg_op_takes_channels(s->op, c)) {
      gpuimg_error_set(GPUIMG_EXIT_INPUT, s->op->name,
                       "cannot take an image of %d channel%s (step %d)", c, c == 1 ? "" : "s",
                       i + 1);
      return -1;
    }
    if (gpuimg_op_out_size(s->op, s->params, w, h, &out->w, &out->h) < 0)
      return -1;
    /* A size a step makes is held to --max-pixels as decoded ones are (0: no limit). */
    if ((out->w != w || out->h != h) && plan->max_pixels &&
        (uint64_t)out->w * (uint64_t)out->h > plan->max_pixels) {
      gpuimg_error_set(GPUIMG_EXIT_USAGE, s->op->name,
                       "a %dx%d image would become %dx%d, over the limit of %llu pixels (see "
                       "--max-pixels)",
                       w, h, out->w, out->h, (unsigned long long)plan->max_pixels);
      return -1;
    }
    out->c = c = gpuimg_op_out_channels(s->op, c);
    w = out->w;
    h = out->h;
  }
  return 0;
}

int gpuimg_plan_mask_fits(const gpuimg_plan_t *plan, int i, const gpuimg_image_t *mask,
                          const gpuimg_shape_t *shapes, char *why, size_t why_size)
{
  const gpuimg_shape_t *in = &shapes[i];
  if (!mask->data || (mask->width == in->w && mask->height == in->h))
    return 1;
  int n = snprintf(why, why_size, "is %dx%d but the image is %dx%d", mask->width, mask->height,
                   in->w, in->h);
  if ((in->w != shapes[0].w || in->h != shapes[0].h) && n >= 0 && (size_t)n < why_size)
    snprintf(why + n, why_size - (size_t)n, " at step %d (%s; it was %dx%d)", i + 1,
             plan->steps[i].op->name, shapes[0].w, shapes[0].h);
  return 0;
}

const gpuimg_backend_ops_t *gpuimg_backend_find(const char *name)
{
  for (int i = 0; gpuimg_backends[i]; i++)
    if (strcmp(gpuimg_backends[i]->name, name) == 0)
      return gpuimg_backends[i];
  return NULL;
}
