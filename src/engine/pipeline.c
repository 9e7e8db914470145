/* pipeline.c: runners: the backend a plan's steps run on, chosen from the backend registry
 * by the plan and the devices present, kept from image to image. */
#include "pipeline.h"

#include <pthread.h>
#include <stdatomic.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "files.h"

#define NO_CUDA "this gpuimg was built without CUDA"

struct gpuimg_pipeline {
  const gpuimg_plan_t *plan;
  const gpuimg_backend_ops_t *backend;
  void *state; /* the backend's */
};

/* The device backend, or NULL in a build without one. */
static const gpuimg_backend_ops_t *device_backend(void)
{
  return gpuimg_backend_find("cuda");
}

int gpuimg_pipeline_have_cuda(void)
{
  return device_backend() != NULL;
}

int gpuimg_pipeline_probe(char *reason, size_t reason_size)
{
  const gpuimg_backend_ops_t *b = device_backend();
  if (b)
    return b->probe(reason, reason_size);
  snprintf(reason, reason_size, NO_CUDA);
  return 0;
}

/* A runner on device; once: it serves one image (the backend's open says what changes). */
static gpuimg_pipeline_t *create(const gpuimg_plan_t *plan, int device, int once)
{
  const gpuimg_backend_ops_t *b =
      device == GPUIMG_DEVICE_CPU ? gpuimg_backend_find("cpu") : device_backend();
  if (!b) {
    gpuimg_error_set(GPUIMG_EXIT_DEVICE, "", NO_CUDA);
    return NULL;
  }
  gpuimg_pipeline_t *p = calloc(1, sizeof *p);
  if (!p) {
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, "", "out of memory");
    return NULL;
  }
  p->plan = plan;
  p->backend = b;
  if (!(p->state = b->open(plan, device, once))) {
    free(p);
    return NULL;
  }
  return p;
}

gpuimg_pipeline_t *gpuimg_pipeline_create(const gpuimg_plan_t *plan, int device)
{
  return create(plan, device, 0);
}

int gpuimg_pipeline_process(gpuimg_pipeline_t *p, const gpuimg_plan_t *steps,
                            const gpuimg_image_t *src, const gpuimg_image_t *masks,
                            gpuimg_image_t *dst, gpuimg_run_t *run)
{
  memset(dst, 0, sizeof *dst);
  return p->backend->process(p->state, steps ? steps : p->plan, src, NULL, masks, dst, run);
}

int gpuimg_pipeline_process_jpeg(gpuimg_pipeline_t *p, const gpuimg_plan_t *steps,
                                 const gpuimg_jpeg_io_t *io, const gpuimg_image_t *src,
                                 const gpuimg_image_t *masks, gpuimg_image_t *dst,
                                 gpuimg_run_t *run)
{
  memset(dst, 0, sizeof *dst);
  if (!p->backend->device_jpeg) {
    gpuimg_error_set(GPUIMG_EXIT_DEVICE, io->what, "no device JPEG decoder in this runner");
    return -1;
  }
  return p->backend->process(p->state, steps ? steps : p->plan, src, io, masks, dst, run);
}

uint8_t *gpuimg_pipeline_pixel_source(void *runner, size_t bytes)
{
  gpuimg_pipeline_t *p = runner;
  return p->backend->pixels ? p->backend->pixels(p->state, bytes) : NULL;
}

/* Brings device up on this thread: 1 usable, 0 not (why in reason), -1 no longer wanted. */
static int device_start(const gpuimg_device_start_ask_t *ask, char *reason, size_t reason_size)
{
  const gpuimg_backend_ops_t *b = device_backend();
  if (b && b->start)
    return b->start(ask->device, ask->blocking, ask->wanted, ask->arg, reason, reason_size);
  snprintf(reason, reason_size, NO_CUDA);
  return 0;
}

int gpuimg_pipeline_wait_mode(int device, int blocking)
{
  const gpuimg_backend_ops_t *b = device_backend();
  return b && b->wait_mode ? b->wait_mode(device, blocking) : 0;
}

int gpuimg_pipeline_allocations(const gpuimg_pipeline_t *p)
{
  return p->backend->allocations ? p->backend->allocations(p->state) : 0;
}

void gpuimg_pipeline_destroy(gpuimg_pipeline_t *p)
{
  if (!p)
    return;
  p->backend->close(p->state);
  free(p);
}

int gpuimg_pipeline_has_device_jpeg(void)
{
  const gpuimg_backend_ops_t *b = device_backend();
  return b && b->device_jpeg;
}

int gpuimg_pipeline_device_jpeg(const gpuimg_plan_t *plan)
{
  const gpuimg_backend_ops_t *b = device_backend();
  char reason[256];
  return b && b->device_jpeg && gpuimg_codec_choice_device(plan->codec) &&
         plan->backend != GPUIMG_BACKEND_CPU && b->probe(reason, sizeof reason) > 0;
}

struct gpuimg_device_start {
  gpuimg_device_start_ask_t ask;
  pthread_t thread;
  int threaded;
  double t0, ms;    /* when it began, how long it took */
  atomic_int state; /* gpuimg_device_start_state() */
  char reason[256];
};

static void *start_main(void *arg)
{
  gpuimg_device_start_t *st = arg;
  if (st->threaded)
    gpuimg_thread_name("gpuimg-start");
  int ok = device_start(&st->ask, st->reason, sizeof st->reason);
  st->ms = gpuimg_now_ms() - st->t0;
  atomic_store(&st->state, ok > 0 ? 1 : ok == 0 ? -1 : -2);
  if (st->ask.done)
    st->ask.done(st->ask.arg, st);
  return NULL;
}

gpuimg_device_start_t *gpuimg_device_start_begin(const gpuimg_device_start_ask_t *ask)
{
  if (!gpuimg_pipeline_have_cuda())
    return NULL;
  gpuimg_device_start_t *st = calloc(1, sizeof *st);
  if (!st)
    return NULL;
  st->ask = *ask;
  st->t0 = gpuimg_now_ms();
  st->threaded = gpuimg_thread_start(&st->thread, start_main, st) == 0;
  if (!st->threaded)
    start_main(st); /* no thread: the device comes up now */
  return st;
}

int gpuimg_device_start_state(const gpuimg_device_start_t *st)
{
  return atomic_load(&st->state);
}

const char *gpuimg_device_start_reason(const gpuimg_device_start_t *st)
{
  return st->reason;
}

int gpuimg_device_start_end(gpuimg_device_start_t *st, gpuimg_run_t *run, char *reason,
                            size_t reason_size)
{
  if (!st)
    return 0;
  if (st->threaded)
    pthread_join(st->thread, NULL);
  int usable = atomic_load(&st->state) == 1;
  if (reason)
    snprintf(reason, reason_size, "%s", st->reason);
  gpuimg_stage_t *s = usable && run ? gpuimg_run_stage(run, "device-start", -1, 0, 1) : NULL;
  if (s)
    s->ms[0] = st->ms;
  free(st);
  return usable;
}

gpuimg_device_start_t *gpuimg_device_start_plan(const gpuimg_plan_t *plan)
{
  /* CUDA's default device (0); threads that wait for it spin, CUDA's default. */
  gpuimg_device_start_ask_t ask = {.device = 0, .blocking = 0};
  if (plan->backend == GPUIMG_BACKEND_CPU)
    return NULL;
  return gpuimg_device_start_begin(&ask);
}

/* The runner where a one-image run goes, once start (or NULL) has ended; once as create's. */
static gpuimg_pipeline_t *open_default(const gpuimg_plan_t *plan, gpuimg_device_start_t *start,
                                       gpuimg_run_t *run, int once)
{
  int device = GPUIMG_DEVICE_CPU;
  if (plan->backend != GPUIMG_BACKEND_CPU) {
    char reason[256];
    if (start ? gpuimg_device_start_end(start, run, reason, sizeof reason)
              : gpuimg_pipeline_probe(reason, sizeof reason) > 0) {
      device = GPUIMG_DEVICE_DEFAULT;
    } else if (plan->backend == GPUIMG_BACKEND_CUDA) {
      if (gpuimg_pipeline_have_cuda())
        gpuimg_error_set(GPUIMG_EXIT_DEVICE, "", "no usable CUDA device: %s", reason);
      else
        gpuimg_error_set(GPUIMG_EXIT_DEVICE, "", NO_CUDA);
      return NULL;
    } else if (!plan->quiet && gpuimg_pipeline_have_cuda()) {
      fprintf(stderr, "gpuimg: no usable CUDA device (%s); using the CPU backend\n", reason);
    }
  }
  return create(plan, device, once);
}

gpuimg_pipeline_t *gpuimg_pipeline_open(const gpuimg_plan_t *plan)
{
  return open_default(plan, NULL, NULL, 0);
}

gpuimg_pipeline_t *gpuimg_pipeline_open_started(const gpuimg_plan_t *plan,
                                                gpuimg_device_start_t *start, gpuimg_run_t *run)
{
  return open_default(plan, start, run, 1);
}

int gpuimg_pipeline_run(const gpuimg_plan_t *plan, const gpuimg_image_t *src,
                        const gpuimg_image_t *masks, gpuimg_image_t *dst, gpuimg_run_t *run)
{
  gpuimg_pipeline_t *p = open_default(plan, NULL, NULL, 1);
  if (!p)
    return -1;
  gpuimg_image_t lent;
  int rc = gpuimg_pipeline_process(p, NULL, src, masks, &lent, run);
  if (rc == 0 && lent.borrowed) {
    rc = gpuimg_image_alloc(dst, lent.width, lent.height, lent.channels);
    if (rc == 0)
      memcpy(dst->data, lent.data, gpuimg_image_bytes(lent.width, lent.height, lent.channels));
  } else {
    *dst = lent;
  }
  gpuimg_pipeline_destroy(p);
  return rc;
}
