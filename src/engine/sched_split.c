/* sched_split.c: a split batch: the items the route sends down the device's JPEG path on
 * workers of their own, the others to the host codecs, each side from its own queue. */
#define _XOPEN_SOURCE 700
#include "sched_state.h"
#include "options.h"

#include <errno.h>
#include <stdio.h>
#include <unistd.h>

/* How many device-path workers per device: enough images in flight to fill the hardware
 * decoder's batches while the others wait on the device (on an H200 with 16 cores, 10,000
 * 1024x768 JPEGs, 2026-12-02: 48 made gray -> PNG 1.05-1.17x faster than 24 in three pairs of
 * runs, blur -> JPEG the same within 1%). Outputs the device path encodes on the host (those
 * no device codec writes: all but JPEG) get twice as many: each of their workers also spends 5-6 ms
 * encoding and 6-8 ms writing an image (2026-12-02: gray -> PNG with 96 against 48,
 * 2.5% faster on the mean of three alternating pairs at 10,000 images, one pair a tie, within
 * the spread; blur -> JPEG went slower with 96 workers and 6 encoders). */
#define DEVICE_PATH_WORKERS 48
#define DEVICE_PATH_WORKERS_HOST_ENCODE 96
/* A split batch's host workers run at this nice value (Linux: per thread), so that the JPEG
 * threads and the device-path workers, which work briefly between waits, run when they wake
 * (19, the lowest priority, did no worse than 5 on that machine). */
#define HOST_WORKER_NICE 19

double gpuimg_sched_split(gpuimg_sched_t *s, const char *first, gpuimg_format_t out, long n)
{
  int model;
  double share =
      gpuimg_route_device_share(s->plan, s->use_cuda, s->device_jpeg, first, out, n, &model);
  s->device_share = 0;
  if (!(share > 0))
    return 0;
  for (int d = 0; d < s->ndevices; d++)
    if (!(s->jpeg[d] = gpuimg_jpeg_batch_create(s->devices[d], 1))) {
      gpuimg_error_clear(); /* no split: the host codecs take every image */
      sched_stop_jpeg(s);
      return 0;
    }
  s->device_share = share;
  s->split_model = model;
  int workers =
      gpuimg_codec_device_encodes(out) ? DEVICE_PATH_WORKERS : DEVICE_PATH_WORKERS_HOST_ENCODE;
  s->device_workers = gpuimg_env_int("GPUIMG_SPLIT_WORKERS", workers, 1, 256) * s->ndevices;
  s->host_cuda = !sched_env_is("GPUIMG_SPLIT_HOST_CUDA", "0");
  return s->device_share;
}

void sched_host_nice(void)
{
  if (nice(gpuimg_env_int("GPUIMG_SPLIT_NICE", HOST_WORKER_NICE, 0, 19)) == -1)
    errno = 0; /* a priority it cannot change is no failure */
}

gpuimg_path_t gpuimg_sched_path(const gpuimg_sched_t *s, const char *name)
{
  return gpuimg_route_path(name, s->device_share, s->device_jpeg ? s->host_share : 0);
}

void gpuimg_sched_set_paths(gpuimg_sched_t *s, const unsigned char *paths)
{
  s->paths = paths;
}

int gpuimg_sched_total_workers(const gpuimg_sched_t *s, int nworkers)
{
  return nworkers + (s->paths ? s->device_workers : 0);
}

/* Waits until every device worker has looked whether the device path is on (or the batch
 * stops); 1 when it is off. mu not held. */
static int device_path_off(gpuimg_sched_t *s)
{
  pthread_mutex_lock(&s->mu);
  while (s->device_checked < s->device_workers && !s->stop)
    pthread_cond_wait(&s->cv, &s->mu);
  pthread_mutex_unlock(&s->mu);
  return atomic_load(&s->device_off);
}

/* A device worker's look, before its first item and after making its runner (it waits for
 * the decoder thread's set-up, as its first decode would): the split is off where the decoder
 * thread has no usable device, on any device, so that the device path's items go to the host
 * codecs as though there were no split; the model's split also where it has no hardware decoder
 * (a share set by GPUIMG_JPEG_SPLIT then stays on, with nvJPEG's CUDA decoder: measurements).
 * 1 when the device path is on. */
static int device_path_check(gpuimg_sched_t *s, gpuimg_jpeg_batch_t *jpeg)
{
  int decoder = jpeg ? gpuimg_jpeg_batch_decoder(jpeg) : -1;
  if (decoder < 0 || (s->split_model && decoder == 0))
    atomic_store(&s->device_off, 1);
  pthread_mutex_lock(&s->mu);
  s->device_checked++;
  pthread_cond_broadcast(&s->cv);
  pthread_mutex_unlock(&s->mu);
  return !device_path_off(s);
}

/* The next work item for wk (-1: none left): in input order, from the worker's own queue in a
 * split batch; the host's workers go on to the device's queue when the device path is off. */
int sched_take(gpuimg_sched_t *s, gpuimg_worker_t *wk)
{
  if (!s->paths) {
    int k = atomic_fetch_add(&s->next, 1);
    return k < s->ntodo ? k : -1;
  }
  int q = wk->device_path, i = atomic_fetch_add(&s->qnext[q], 1);
  if (i < s->nqueue[q])
    return s->queue[q][i];
  if (q == 1 || s->nqueue[1] == 0 || !device_path_off(s))
    return -1;
  i = atomic_fetch_add(&s->qnext[1], 1);
  return i < s->nqueue[1] ? s->queue[1][i] : -1;
}

/* The split's two queues from the client's flags; 0, or -1 with the error set. */
int sched_make_queues(gpuimg_sched_t *s)
{
  for (int q = 0; q < 2; q++) {
    s->nqueue[q] = 0;
    atomic_store(&s->qnext[q], 0);
    if (!(s->queue[q] = malloc(((size_t)s->ntodo + 1) * sizeof *s->queue[q]))) {
      gpuimg_error_set(GPUIMG_EXIT_FAILURE, "", "out of memory");
      return -1;
    }
  }
  for (int k = 0; k < s->ntodo; k++) {
    int q = s->paths[k] == GPUIMG_PATH_DEVICE;
    s->queue[q][s->nqueue[q]++] = k;
  }
  return 0;
}

/* A device-path worker's runner, before its first item: on its device once that is up (after
 * the hybrid start, when there is one); else, like a worker whose device failed, the CPU
 * backend and the host codecs, with a notice (once per batch). */
static void open_device_path(gpuimg_sched_t *s, gpuimg_worker_t *wk)
{
  int up = sched_hybrid_wait(s);
  if (up)
    wk->pipe = gpuimg_pipeline_create(s->plan, wk->device);
  if (wk->pipe) {
    gpuimg_codec_set_pixel_source(gpuimg_pipeline_pixel_source, wk->pipe);
    return;
  }
  /* A device that never came up was said by the starter; a runner that failed is said here. */
  int said = !up;
  if (!said && !atomic_exchange(&s->move_failed, 1) && !s->plan->quiet) {
    char msg[1200];
    snprintf(msg, sizeof msg,
             "a worker of the device's JPEG path cannot use CUDA device %d (%s); its images go "
             "to the CPU backend and the host codecs",
             wk->device, gpuimg_error_message());
    s->calls.say(s->calls.ctx, msg);
  }
  gpuimg_error_clear();
  wk->device = -1;
  wk->jpeg = NULL;
  wk->pipe = gpuimg_pipeline_create(s->plan, GPUIMG_DEVICE_CPU);
}

/* The last device-path worker stops the JPEG threads (their teardown overlaps the host's
 * work). */
void sched_device_path_done(gpuimg_sched_t *s)
{
  pthread_mutex_lock(&s->mu);
  int last = --s->device_running == 0;
  pthread_mutex_unlock(&s->mu);
  if (last)
    sched_stop_jpeg(s);
}

/* A device worker makes its runner while the JPEG threads set up, then looks whether the
 * device path is on (with the threads it was given: a runner on the CPU drops them). */
int sched_device_path_open(gpuimg_sched_t *s, gpuimg_worker_t *wk)
{
  gpuimg_jpeg_batch_t *jpeg = wk->jpeg;
  open_device_path(s, wk);
  return device_path_check(s, jpeg);
}
