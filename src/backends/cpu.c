/* cpu.c: the CPU backend: every step's CPU reference, one after another, each timed; each
 * operation that has a band form (run_cpu_rows) split over row bands run by a thread pool. */
#include "backend.h"
#include "pool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The bands of a step: as many as --threads, of equal height (to a row), but none shorter than
 * BAND_MIN_ROWS rows or BAND_MIN_PIXELS pixels: each band costs a thread's wake-up and, for
 * blur, its column sums' start (tens of microseconds), so a small image is one band, run on
 * the calling thread. Every band computes exactly its own rows, so the bytes do not depend
 * on the count. */
#define BAND_MIN_ROWS 16
#define BAND_MIN_PIXELS 65536

/* A runner: its thread count, and the pool of threads (pool_size with the caller), started
 * at the first step that has more than one band with as many threads as that step has bands
 * (so that --threads 1024 on a small image starts few), grown when a later step has more,
 * and kept from image to image until the runner closes. */
typedef struct {
  int threads;
  gpuimg_pool_t *pool;
  int pool_size;
} cpu_runner_t;

int gpuimg_cpu_bands(int threads, int width, int height)
{
  if (width < 1 || height < 1)
    return 1;
  int min_rows = (BAND_MIN_PIXELS + width - 1) / width;
  if (min_rows < BAND_MIN_ROWS)
    min_rows = BAND_MIN_ROWS;
  int n = height / min_rows;
  return n < 1 ? 1 : n > threads ? threads : n;
}

/* One step on bands of its output: band i is rows h*i/n .. h*(i+1)/n - 1. */
typedef struct {
  const gpuimg_step_t *step;
  const gpuimg_image_t *src, *mask;
  gpuimg_image_t *dst;
  int nbands;
} band_task_t;

static int run_band(void *arg, int i)
{
  const band_task_t *t = arg;
  int64_t h = t->dst->height;
  int y0 = (int)(h * i / t->nbands), y1 = (int)(h * (i + 1) / t->nbands);
  return t->step->op->run_cpu_rows(t->step->params, t->src, t->mask, t->dst, y0, y1);
}

static int run_step(cpu_runner_t *cr, const gpuimg_step_t *s, const gpuimg_image_t *src,
                    const gpuimg_image_t *mask, gpuimg_image_t *dst)
{
  int n = gpuimg_cpu_bands(cr->threads, dst->width, dst->height);
  if (n <= 1 || !s->op->run_cpu_rows)
    return gpuimg_op_run_cpu(s->op, s->params, src, mask, dst);
  if (n > cr->pool_size) {
    gpuimg_pool_free(cr->pool);
    cr->pool_size = 0;
    if (!(cr->pool = gpuimg_pool_create(n)))
      return -1;
    cr->pool_size = n;
  }
  band_task_t task = {s, src, mask, dst, n};
  return gpuimg_pool_run(cr->pool, n, run_band, &task);
}

static int run_cpu(cpu_runner_t *cr, const gpuimg_plan_t *plan, const gpuimg_image_t *src,
                   const gpuimg_image_t *masks, gpuimg_image_t *dst, gpuimg_run_t *run)
{
  gpuimg_image_t tmp[GPUIMG_MAX_STEPS];
  gpuimg_stage_t *stage[GPUIMG_MAX_STEPS];
  gpuimg_shape_t sh[GPUIMG_MAX_STEPS + 1];
  int rc = -1;
  /* The image's name for an allocation failure (none outside the flow). */
  const char *what = run->input_name ? run->input_name : "";

  memset(tmp, 0, sizeof tmp);
  run->backend = "cpu";
  snprintf(run->device, sizeof run->device, "none");
  run->threads = cr->threads;
  if (gpuimg_plan_shapes(plan, src->width, src->height, src->channels, sh) < 0)
    return -1;
  for (int i = 0; i < plan->nsteps; i++) {
    const gpuimg_shape_t *o = &sh[i + 1];
    stage[i] = gpuimg_run_step_stage(run, plan, i, sh, 0, plan->repeat);
    if (!stage[i] || gpuimg_image_alloc_for(&tmp[i], o->w, o->h, o->c, what) < 0)
      goto done;
  }
  for (int r = -plan->warmup; r < plan->repeat; r++) { /* r < 0: warm-up, not recorded */
    const gpuimg_image_t *in = src;
    for (int i = 0; i < plan->nsteps; i++) {
      const gpuimg_step_t *s = &plan->steps[i];
      double t0 = gpuimg_now_ms();
      if ((s->op->measure_cpu && s->op->measure_cpu(s->params, in, stage[i]->result) < 0) ||
          run_step(cr, s, in, &masks[i], &tmp[i]) < 0)
        goto done;
      if (r >= 0)
        stage[i]->ms[r] = gpuimg_now_ms() - t0;
      in = &tmp[i];
    }
  }
  for (int i = 0; plan->model_gpu && i < plan->nsteps; i++) /* --device: the GPU's launches */
    gpuimg_run_model(plan, plan->model_gpu, i, sh, &masks[i], stage[i]);
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

static void *cpu_open(const gpuimg_plan_t *plan, int device, int once)
{
  (void)device, (void)once;
  cpu_runner_t *cr = calloc(1, sizeof *cr);
  if (!cr) {
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, "", "out of memory");
    return NULL;
  }
  cr->threads = plan->threads > 0 ? plan->threads : gpuimg_cpu_cores();
  return cr;
}

static int cpu_process(void *state, const gpuimg_plan_t *plan, const gpuimg_image_t *src,
                       const gpuimg_jpeg_io_t *io, const gpuimg_image_t *masks, gpuimg_image_t *dst,
                       gpuimg_run_t *run)
{
  if (io && io->jpeg) {
    gpuimg_error_set(GPUIMG_EXIT_DEVICE, io->what, "no device JPEG decoder in this runner");
    return -1;
  }
  return run_cpu(state, plan, src, masks, dst, run);
}

static void cpu_close(void *state)
{
  cpu_runner_t *cr = state;
  if (cr)
    gpuimg_pool_free(cr->pool);
  free(cr);
}

const gpuimg_backend_ops_t gpuimg_backend_cpu = {
    .name = "cpu",
    .probe = cpu_probe,
    .open = cpu_open,
    .process = cpu_process,
    .close = cpu_close,
};
