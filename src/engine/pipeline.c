/* pipeline.c: runners: the backend a plan's steps run on, chosen from the backend registry
 * by the plan and the devices present, kept from image to image. */
#include "pipeline.h"

#include <pthread.h>

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

int gpuimg_pipeline_device_start(int device, int blocking, int (*wanted)(void *), void *arg,
                                 char *reason, size_t reason_size)
{
  const gpuimg_backend_ops_t *b = device_backend();
  if (b && b->start)
    return b->start(device, blocking, wanted, arg, reason, reason_size);
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

/* A device brought up on a thread while the caller reads and decodes. */
struct gpuimg_prestart {
  pthread_t thread;
  double t0, ms; /* when it began, how long it took */
  int usable;    /* 1: the device is up; 0: not usable (reason) */
  char reason[256];
};

static void *prestart_main(void *arg)
{
  gpuimg_prestart_t *ps = arg;
  gpuimg_thread_name("gpuimg-start");
  /* CUDA's default device (0); threads that wait for it spin, CUDA's default. */
  ps->usable = gpuimg_pipeline_device_start(0, 0, NULL, NULL, ps->reason, sizeof ps->reason) > 0;
  ps->ms = gpuimg_now_ms() - ps->t0;
  return NULL;
}

gpuimg_prestart_t *gpuimg_pipeline_prestart(const gpuimg_plan_t *plan)
{
  if (plan->backend == GPUIMG_BACKEND_CPU || !gpuimg_pipeline_have_cuda())
    return NULL;
  gpuimg_prestart_t *ps = calloc(1, sizeof *ps);
  if (!ps)
    return NULL; /* the runner then brings the device up itself */
  ps->t0 = gpuimg_now_ms();
  if (gpuimg_thread_start(&ps->thread, prestart_main, ps) != 0) {
    free(ps);
    return NULL;
  }
  return ps;
}

/* Waits for the device's start; on a usable device its time becomes the device-start stage.
 * 1 usable, 0 not (why in reason). Frees ps. */
static int prestart_join(gpuimg_prestart_t *ps, gpuimg_run_t *run, char *reason, size_t size)
{
  pthread_join(ps->thread, NULL);
  int usable = ps->usable;
  snprintf(reason, size, "%s", ps->reason);
  gpuimg_stage_t *s = usable && run ? gpuimg_run_stage(run, "device-start", -1, 0, 1) : NULL;
  if (s)
    s->ms[0] = ps->ms;
  free(ps);
  return usable;
}

void gpuimg_pipeline_prestart_free(gpuimg_prestart_t *ps)
{
  char reason[256];
  if (ps)
    prestart_join(ps, NULL, reason, sizeof reason);
}

/* The runner where a one-image run goes, once ps (or NULL) has finished; once as create's. */
static gpuimg_pipeline_t *open_default(const gpuimg_plan_t *plan, gpuimg_prestart_t *ps,
                                       gpuimg_run_t *run, int once)
{
  int device = GPUIMG_DEVICE_CPU;
  if (plan->backend != GPUIMG_BACKEND_CPU) {
    char reason[256];
    if (ps ? prestart_join(ps, run, reason, sizeof reason)
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

gpuimg_pipeline_t *gpuimg_pipeline_open_started(const gpuimg_plan_t *plan, gpuimg_prestart_t *ps,
                                                gpuimg_run_t *run)
{
  return open_default(plan, ps, run, 1);
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
