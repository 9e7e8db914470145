/* sched_devices.c: a batch's backend and devices (--devices), the devices' nvJPEG threads, and
 * how many workers and CPU threads a batch gets. */
#define _XOPEN_SOURCE 700
#include "sched_state.h"
#include "files.h"
#include "options.h"
#include "pool.h"

#include <ctype.h>
#include <errno.h>

/* With CUDA each worker owns a gpuimg_pipeline_t: a context with its own non-blocking stream
 * on one of --devices (round-robin by worker number) and pinned and device buffers kept from
 * image to image. The copies and kernels of one worker run one after another, but several
 * workers per device keep several streams busy at once: while one uploads, another's kernels
 * run, a third downloads, and the others decode and encode on the host. */

/* --devices: "all" or a list like "0,1"; count devices exist. 0, or -1 (exit 2). */
static int parse_devices(gpuimg_sched_t *s, const char *spec, int count)
{
  if (!spec) {
    s->devices[0] = 0;
    s->ndevices = 1;
  } else if (strcmp(spec, "all") == 0) {
    for (int i = 0; i < count && i < GPUIMG_SCHED_MAX_DEVICES; i++)
      s->devices[i] = i;
    s->ndevices = count < GPUIMG_SCHED_MAX_DEVICES ? count : GPUIMG_SCHED_MAX_DEVICES;
  } else {
    const char *p = spec;
    s->ndevices = 0;
    for (;;) {
      char *end;
      errno = 0;
      long v = strtol(p, &end, 10);
      if (errno || !isdigit((unsigned char)*p) || v >= 1000000 || (*end && *end != ',') ||
          s->ndevices == GPUIMG_SCHED_MAX_DEVICES) {
        gpuimg_error_set(GPUIMG_EXIT_USAGE, "--devices",
                         "invalid value '%s' (expected all, or device numbers like 0,1)", spec);
        return -1;
      }
      s->devices[s->ndevices++] = (int)v;
      if (!*end)
        break;
      p = end + 1;
    }
  }
  for (int i = 0; count >= 0 && i < s->ndevices; i++)
    if (s->devices[i] >= count) {
      gpuimg_error_set(GPUIMG_EXIT_USAGE, "--devices", "no CUDA device %d (%d present)",
                       s->devices[i], count);
      return -1;
    }
  return 0;
}

/* --codec nvjpeg on CUDA: device-resident JPEG, with one nvJPEG thread per device doing
 * every worker's nvJPEG work, decoding in batches where the GPU has a hardware JPEG decoder
 * (GPUIMG_JPEG_BATCH=0: every image alone, for comparison). Worker threads then wait on the device
 * instead of spinning (GPUIMG_CUDA_SYNC=spin keeps CUDA's default), so that a waiting worker leaves
 * its core to the codecs of the others. */
static void start_device_jpeg(gpuimg_sched_t *s)
{
  int blocking = !sched_env_is("GPUIMG_CUDA_SYNC", "spin");
  for (int d = 0; s->use_cuda && !s->hybrid && d < s->ndevices; d++)
    if (gpuimg_pipeline_wait_mode(s->devices[d], blocking) < 0)
      gpuimg_error_clear(); /* the default way of waiting is no failure */
  s->device_jpeg = s->use_cuda && gpuimg_codec_choice_device(s->plan->codec);
  if (!s->device_jpeg)
    return;
  s->host_share = gpuimg_env_fraction("GPUIMG_JPEG_HOST_SHARE", 0);
  for (int d = 0; d < s->ndevices; d++)
    if (!(s->jpeg[d] =
              gpuimg_jpeg_batch_create(s->devices[d], !sched_env_is("GPUIMG_JPEG_BATCH", "0"))))
      gpuimg_error_clear(); /* no thread: each worker then makes its own nvJPEG handle */
}

void sched_stop_jpeg(gpuimg_sched_t *s)
{
  for (int d = 0; d < s->ndevices; d++) {
    long batches = 0, images = 0;
    double ms[2] = {0, 0}, serving[2] = {0, 0}, setup = 0;
    if (!s->jpeg[d])
      continue;
    gpuimg_jpeg_batch_counts(s->jpeg[d], &batches, &images, ms, serving, &setup);
    gpuimg_sched_jpeg_t *f = &s->jpeg_figures;
    for (int k = 0; k < 2; k++) {
      double w[3];
      long n;
      gpuimg_jpeg_batch_waits(s->jpeg[d], k, w, &n);
      for (int j = 0; j < 3; j++)
        f->wait_ms[k][j] += w[j];
      f->requests[k] += n;
    }
    if (setup > f->setup_ms)
      f->setup_ms = setup;
    f->batch_ms += ms[0];
    f->encode_ms += ms[1];
    f->serving_ms[0] += serving[0];
    f->serving_ms[1] += serving[1];
    f->batches += batches;
    f->batch_images += images;
    double t0 = gpuimg_now_ms();
    gpuimg_jpeg_batch_destroy(s->jpeg[d]);
    f->teardown_ms += gpuimg_now_ms() - t0;
    s->jpeg[d] = NULL;
  }
}

int gpuimg_sched_open(gpuimg_sched_t *s, const gpuimg_plan_t *plan, const char *spec)
{
  s->plan = plan;

  int count = 0, have_cuda = gpuimg_pipeline_have_cuda();
  /* auto on the default device with host codecs and the default block: hybrid, the device
   * found (or not) by the starter thread (GPUIMG_HYBRID=0: wait for it, as before). */
  s->hybrid = have_cuda && plan->backend == GPUIMG_BACKEND_AUTO && !spec &&
              !gpuimg_codec_choice_device(plan->codec) && gpuimg_route_fast(plan) &&
              !sched_env_is("GPUIMG_HYBRID", "0");
  s->dev_ready_ms = -1;
  if (s->hybrid)
    count = 1; /* device 0, if the starter finds it usable */
  else if (plan->backend != GPUIMG_BACKEND_CPU || !have_cuda)
    count = gpuimg_pipeline_probe(s->reason, sizeof s->reason);
  s->use_cuda = count > 0;
  if (!s->use_cuda && plan->backend == GPUIMG_BACKEND_CUDA) {
    gpuimg_error_set(GPUIMG_EXIT_DEVICE, "", have_cuda ? "no usable CUDA device: %s" : "%s",
                     s->reason);
    return -1;
  }
  if (parse_devices(s, spec, s->use_cuda ? count : -1) < 0)
    return -1;
  /* nvJPEG sets up while the caller goes on (reading and naming the inputs). */
  start_device_jpeg(s);
  return 0;
}

int gpuimg_sched_uses_cuda(const gpuimg_sched_t *s)
{
  return s->use_cuda;
}

const char *gpuimg_sched_fallback(const gpuimg_sched_t *s)
{
  if (gpuimg_pipeline_have_cuda() && !s->use_cuda && s->plan->backend == GPUIMG_BACKEND_AUTO)
    return s->reason;
  return NULL;
}

/* --codec nvjpeg's workers per core by default: they mostly wait on the device, and more
 * images in flight fill the hardware decoder's batches (32 workers made gray -> PNG 1.26x and
 * blur -> JPEG 1.13x faster than 16 on an H200 with 16 cores, 2026-12-02). */
#define DEVICE_JPEG_WORKERS_PER_CORE 2

int gpuimg_sched_workers(const gpuimg_sched_t *s, int jobs, int ntodo)
{
  int n = jobs;
  if (n <= 0)
    n = gpuimg_cpu_cores() * (s->device_jpeg ? DEVICE_JPEG_WORKERS_PER_CORE : 1);
  return n > ntodo ? ntodo : n;
}

int gpuimg_sched_threads(int threads, int nworkers)
{
  if (threads > 0)
    return threads;
  int n = gpuimg_cpu_cores() / (nworkers > 0 ? nworkers : 1);
  return n < 1 ? 1 : n;
}
