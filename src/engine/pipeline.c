/* pipeline.c: runners: the backend a plan's steps run on, chosen from the backend registry
 * by the plan and the devices present, kept from image to image. */
#include "pipeline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

gpuimg_pipeline_t *gpuimg_pipeline_create(const gpuimg_plan_t *plan, int device)
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
  if (!(p->state = b->open(plan, device))) {
    free(p);
    return NULL;
  }
  return p;
}

int gpuimg_pipeline_process(gpuimg_pipeline_t *p, const gpuimg_image_t *src,
                            const gpuimg_image_t *masks, gpuimg_image_t *dst, gpuimg_run_t *run)
{
  memset(dst, 0, sizeof *dst);
  return p->backend->process(p->state, p->plan, src, NULL, masks, dst, run);
}

int gpuimg_pipeline_process_jpeg(gpuimg_pipeline_t *p, const gpuimg_jpeg_io_t *io,
                                 const gpuimg_image_t *src, const gpuimg_image_t *masks,
                                 gpuimg_image_t *dst, gpuimg_run_t *run)
{
  memset(dst, 0, sizeof *dst);
  if (!p->backend->device_jpeg) {
    gpuimg_error_set(GPUIMG_EXIT_DEVICE, io->what, "no device JPEG decoder in this runner");
    return -1;
  }
  return p->backend->process(p->state, p->plan, src, io, masks, dst, run);
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

int gpuimg_pipeline_device_jpeg(const gpuimg_plan_t *plan)
{
  const gpuimg_backend_ops_t *b = device_backend();
  char reason[256];
  return b && b->device_jpeg && gpuimg_codec_choice_device(plan->codec) &&
         plan->backend != GPUIMG_BACKEND_CPU && b->probe(reason, sizeof reason) > 0;
}

gpuimg_pipeline_t *gpuimg_pipeline_open(const gpuimg_plan_t *plan)
{
  int device = GPUIMG_DEVICE_CPU;
  if (plan->backend != GPUIMG_BACKEND_CPU) {
    char reason[256];
    if (gpuimg_pipeline_probe(reason, sizeof reason) > 0) {
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
  return gpuimg_pipeline_create(plan, device);
}

int gpuimg_pipeline_run(const gpuimg_plan_t *plan, const gpuimg_image_t *src,
                        const gpuimg_image_t *masks, gpuimg_image_t *dst, gpuimg_run_t *run)
{
  gpuimg_pipeline_t *p = gpuimg_pipeline_open(plan);
  if (!p)
    return -1;
  gpuimg_image_t lent;
  int rc = gpuimg_pipeline_process(p, src, masks, &lent, run);
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
