/* cpu.c: the CPU backend: every step's CPU reference, one after another, each timed. */
#include "backend.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int run_cpu(const gpuimg_plan_t *plan, const gpuimg_image_t *src,
                   const gpuimg_image_t *masks, gpuimg_image_t *dst, gpuimg_run_t *run)
{
  gpuimg_image_t tmp[GPUIMG_MAX_STEPS];
  gpuimg_stage_t *stage[GPUIMG_MAX_STEPS];
  int rc = -1, c = src->channels;
  /* The image's name for an allocation failure (none outside the flow). */
  const char *what = run->input_name ? run->input_name : "";

  memset(tmp, 0, sizeof tmp);
  run->backend = "cpu";
  snprintf(run->device, sizeof run->device, "none");
  for (int i = 0; i < plan->nsteps; i++) {
    const gpuimg_step_t *s = &plan->steps[i];
    int out_c = gpuimg_op_out_channels(s->op, c);
    stage[i] = gpuimg_run_stage(run, s->op->name, i, 0, plan->repeat);
    if (!stage[i] || gpuimg_image_alloc_for(&tmp[i], src->width, src->height, out_c, what) < 0)
      goto done;
    stage[i]->bytes = gpuimg_step_bytes(s, src->width, src->height, c);
    c = out_c;
  }
  for (int r = -plan->warmup; r < plan->repeat; r++) { /* r < 0: warm-up, not recorded */
    const gpuimg_image_t *in = src;
    for (int i = 0; i < plan->nsteps; i++) {
      const gpuimg_step_t *s = &plan->steps[i];
      double t0 = gpuimg_now_ms();
      if (s->op->run_cpu(s->params, in, &masks[i], &tmp[i]) < 0)
        goto done;
      if (r >= 0)
        stage[i]->ms[r] = gpuimg_now_ms() - t0;
      in = &tmp[i];
    }
  }
  *dst = tmp[plan->nsteps - 1];
  memset(&tmp[plan->nsteps - 1], 0, sizeof tmp[0]);
  rc = 0;
done:
  for (int i = 0; i < plan->nsteps; i++)
    gpuimg_image_free(&tmp[i]);
  return rc;
}

static int cpu_probe(char *reason, size_t reason_size)
{
  (void)reason, (void)reason_size;
  return 1;
}

/* The CPU keeps no state between images: every runner shares this. */
static char cpu_state;

static void *cpu_open(const gpuimg_plan_t *plan, int device)
{
  (void)plan, (void)device;
  return &cpu_state;
}

static int cpu_process(void *state, const gpuimg_plan_t *plan, const gpuimg_image_t *src,
                       const gpuimg_jpeg_io_t *io, const gpuimg_image_t *masks, gpuimg_image_t *dst,
                       gpuimg_run_t *run)
{
  (void)state;
  if (io && io->jpeg) {
    gpuimg_error_set(GPUIMG_EXIT_DEVICE, io->what, "no device JPEG decoder in this runner");
    return -1;
  }
  return run_cpu(plan, src, masks, dst, run);
}

static void cpu_close(void *state)
{
  (void)state;
}

const gpuimg_backend_ops_t gpuimg_backend_cpu = {
    .name = "cpu",
    .probe = cpu_probe,
    .open = cpu_open,
    .process = cpu_process,
    .close = cpu_close,
};
