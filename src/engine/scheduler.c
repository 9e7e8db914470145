/* scheduler.c: batch mode's workers: the backend and devices of a batch, the worker threads and
 * their start handshake, the hybrid start of a device, and the devices' nvJPEG threads. */
#define _XOPEN_SOURCE 700
#include "scheduler.h"
#include "files.h"
#include "options.h"
#include "pool.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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

/* Whether GPUIMG_<name> is set to value. */
static int env_is(const char *name, const char *value)
{
  const char *v = getenv(name);
  return v && strcmp(v, value) == 0;
}

/* --codec nvjpeg on CUDA: device-resident JPEG, with one nvJPEG thread per device doing
 * every worker's nvJPEG work, decoding in batches where the GPU has a hardware JPEG decoder
 * (GPUIMG_JPEG_BATCH=0: every image alone, for comparison). Worker threads then wait on the device
 * instead of spinning (GPUIMG_CUDA_SYNC=spin keeps CUDA's default), so that a waiting worker leaves
 * its core to the codecs of the others. */
static void start_device_jpeg(gpuimg_sched_t *s)
{
  int blocking = !env_is("GPUIMG_CUDA_SYNC", "spin");
  for (int d = 0; s->use_cuda && !s->hybrid && d < s->ndevices; d++)
    if (gpuimg_pipeline_wait_mode(s->devices[d], blocking) < 0)
      gpuimg_error_clear(); /* the default way of waiting is no failure */
  s->device_jpeg = s->use_cuda && gpuimg_codec_choice_device(s->plan->codec);
  if (!s->device_jpeg)
    return;
  s->host_share = gpuimg_env_fraction("GPUIMG_JPEG_HOST_SHARE", 0);
  for (int d = 0; d < s->ndevices; d++)
    if (!(s->jpeg[d] = gpuimg_jpeg_batch_create(s->devices[d], !env_is("GPUIMG_JPEG_BATCH", "0"))))
      gpuimg_error_clear(); /* no thread: each worker then makes its own nvJPEG handle */
}

static void stop_device_jpeg(gpuimg_sched_t *s)
{
  for (int d = 0; d < s->ndevices; d++) {
    long batches = 0, images = 0;
    double ms[2] = {0, 0}, serving[2] = {0, 0}, setup = 0;
    if (!s->jpeg[d])
      continue;
    gpuimg_jpeg_batch_counts(s->jpeg[d], &batches, &images, ms, serving, &setup);
    for (int k = 0; k < 2; k++) {
      double w[3];
      long n;
      gpuimg_jpeg_batch_waits(s->jpeg[d], k, w, &n);
      for (int j = 0; j < 3; j++)
        s->jpeg_wait_ms[k][j] += w[j];
      s->jpeg_requests[k] += n;
    }
    if (setup > s->jpeg_setup_ms)
      s->jpeg_setup_ms = setup;
    s->jpeg_batch_ms += ms[0];
    s->jpeg_encode_ms += ms[1];
    s->jpeg_serving_ms[0] += serving[0];
    s->jpeg_serving_ms[1] += serving[1];
    s->jpeg_batches += batches;
    s->jpeg_batch_images += images;
    double t0 = gpuimg_now_ms();
    gpuimg_jpeg_batch_destroy(s->jpeg[d]);
    s->jpeg_teardown_ms += gpuimg_now_ms() - t0;
    s->jpeg[d] = NULL;
  }
}

int gpuimg_sched_open(gpuimg_sched_t *s, const gpuimg_plan_t *plan, const char *spec,
                      double t_start)
{
  s->plan = plan;
  s->t_start = t_start;
  pthread_mutex_init(&s->mu, NULL);
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&s->cv, &ca);
  pthread_condattr_destroy(&ca);
  s->locks = 1;

  int count = 0, have_cuda = gpuimg_pipeline_have_cuda();
  /* auto on the default device with host codecs and the default block: hybrid, the device
   * found (or not) by the starter thread (GPUIMG_HYBRID=0: wait for it, as before). */
  s->hybrid = have_cuda && plan->backend == GPUIMG_BACKEND_AUTO && !spec &&
              !gpuimg_codec_choice_device(plan->codec) && gpuimg_route_fast(plan) &&
              !env_is("GPUIMG_HYBRID", "0");
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

/* ---- the hybrid start ---- */

/* The hybrid start's thread: brings device devices[0] up while the workers convert on the
 * CPU, then lets them move to it (or says, unless -q, that the batch stays on the CPU). The
 * context (the second half of the start-up) is not made once every image is taken. */
static int work_left(void *arg)
{
  gpuimg_sched_t *s = arg;
  if (s->paths)
    return atomic_load(&s->qnext[0]) < s->nqueue[0] || s->nqueue[1] > 0;
  return atomic_load(&s->next) < s->ntodo;
}

static void *device_starter(void *arg)
{
  gpuimg_sched_t *s = arg;
  gpuimg_thread_name("gpuimg-start");
  int ok = gpuimg_pipeline_device_start(s->devices[0], !env_is("GPUIMG_CUDA_SYNC", "spin"),
                                        work_left, s, s->dev_reason, sizeof s->dev_reason);
  s->dev_ready_ms = ok > 0 ? gpuimg_now_ms() - s->t_start : -1;
  atomic_store(&s->dev_state, ok > 0 ? 1 : -1);
  if (ok == 0 && !s->plan->quiet) {
    char msg[512];
    snprintf(msg, sizeof msg, "no usable CUDA device (%s); using the CPU backend", s->dev_reason);
    s->calls.say(s->calls.ctx, msg);
  }
  return NULL;
}

/* A hybrid worker's move to CUDA, once the device is up: a CUDA runner instead of its CPU
 * one. A runner that cannot be made (out of device memory) leaves the worker on the CPU, with
 * a notice (once per batch). */
static void move_to_device(gpuimg_sched_t *s, gpuimg_worker_t *wk)
{
  wk->hybrid_done = 1;
  gpuimg_pipeline_t *p = gpuimg_pipeline_create(s->plan, s->devices[0]);
  if (!p) {
    if (!atomic_exchange(&s->move_failed, 1) && !s->plan->quiet) {
      char msg[1200];
      snprintf(msg, sizeof msg,
               "CUDA device %d is up but a worker cannot use it (%s); it stays "
               "on the CPU backend",
               s->devices[0], gpuimg_error_message());
      s->calls.say(s->calls.ctx, msg);
    }
    gpuimg_error_clear();
    return;
  }
  gpuimg_pipeline_destroy(wk->pipe);
  wk->pipe = p;
  wk->device = s->devices[0];
  gpuimg_codec_set_pixel_source(gpuimg_pipeline_pixel_source, wk->pipe);
}

void gpuimg_sched_stop_starter(gpuimg_sched_t *s)
{
  if (s->starter_started)
    pthread_join(s->starter, NULL);
  s->starter_started = 0;
  if (!s->hybrid)
    return;
  s->use_cuda = atomic_load(&s->cuda_ok);
}

/* ---- the split between the host codecs and the device's JPEG path ---- */

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
      stop_device_jpeg(s);
      return 0;
    }
  s->device_share = share;
  s->split_model = model;
  int workers =
      gpuimg_codec_device_encodes(out) ? DEVICE_PATH_WORKERS : DEVICE_PATH_WORKERS_HOST_ENCODE;
  s->device_workers = gpuimg_env_int("GPUIMG_SPLIT_WORKERS", workers, 1, 256) * s->ndevices;
  s->host_cuda = !env_is("GPUIMG_SPLIT_HOST_CUDA", "0");
  return s->device_share;
}

gpuimg_path_t gpuimg_sched_path(const gpuimg_sched_t *s, const char *name)
{
  return gpuimg_route_path(name, s->device_share, s->device_jpeg ? s->host_share : 0);
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
static int take(gpuimg_sched_t *s, gpuimg_worker_t *wk)
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
static int make_queues(gpuimg_sched_t *s)
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
  while (s->hybrid && atomic_load(&s->dev_state) == 0) {
    struct timespec ts = {0, 2000000};
    nanosleep(&ts, NULL);
  }
  if (!s->hybrid || atomic_load(&s->dev_state) == 1)
    wk->pipe = gpuimg_pipeline_create(s->plan, wk->device);
  if (wk->pipe) {
    gpuimg_codec_set_pixel_source(gpuimg_pipeline_pixel_source, wk->pipe);
    return;
  }
  /* A device that never came up was said by the starter; a runner that failed is said here. */
  int said = s->hybrid && atomic_load(&s->dev_state) != 1;
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
static void device_path_done(gpuimg_sched_t *s)
{
  pthread_mutex_lock(&s->mu);
  int last = --s->device_running == 0;
  pthread_mutex_unlock(&s->mu);
  if (last)
    stop_device_jpeg(s);
}

/* ---- the workers ---- */

static void *worker_main(void *arg)
{
  gpuimg_worker_t *wk = arg;
  gpuimg_sched_t *s = wk->s;
  gpuimg_thread_name(wk->device_path ? "gpuimg-devpath" : "gpuimg-worker");

  int ok = 1;
  if (!(wk->run = calloc(1, sizeof *wk->run))) {
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, "", "out of memory");
    ok = 0;
  } else if (!wk->device_path) { /* the device path's runner is made after the start */
    wk->pipe = gpuimg_pipeline_create(s->plan, wk->device);
    ok = wk->pipe != NULL;
  }
  /* On CUDA, JPEGs decode straight into the runner's pinned staging buffer. */
  if (wk->pipe && wk->device >= 0)
    gpuimg_codec_set_pixel_source(gpuimg_pipeline_pixel_source, wk->pipe);
  if (!ok) {
    wk->init_code = gpuimg_error_code();
    snprintf(wk->init_error, sizeof wk->init_error, "%s", gpuimg_error_message());
  }
  pthread_mutex_lock(&s->mu);
  s->ready++;
  pthread_cond_broadcast(&s->cv);
  while (!s->go && !s->stop)
    pthread_cond_wait(&s->cv, &s->mu);
  int go = s->go && !s->stop;
  pthread_mutex_unlock(&s->mu);
  if (go && s->paths && !wk->device_path &&
      nice(gpuimg_env_int("GPUIMG_SPLIT_NICE", HOST_WORKER_NICE, 0, 19)) == -1)
    errno = 0; /* a priority it cannot change is no failure */
  /* A device worker makes its runner while the JPEG threads set up, then looks whether the
   * device path is on (with the threads it was given: a runner on the CPU drops them). */
  if (go && wk->device_path) {
    gpuimg_jpeg_batch_t *jpeg = wk->jpeg;
    open_device_path(s, wk);
    go = device_path_check(s, jpeg);
  }

  for (int k; go && (k = take(s, wk)) >= 0;) {
    if (s->hybrid && !wk->hybrid_done && !wk->device_path && (!s->paths || s->host_cuda) &&
        atomic_load(&s->dev_state) == 1)
      move_to_device(s, wk);
    if (s->calls.process(s->calls.ctx, wk, k) == 0 && wk->device >= 0)
      atomic_store(&s->cuda_ok, 1);
  }
  if (wk->device_path)
    device_path_done(s);

  gpuimg_codec_set_pixel_source(NULL, NULL);
  gpuimg_pipeline_destroy(wk->pipe);
  wk->pipe = NULL;
  gpuimg_codec_thread_end();
  if (wk->run)
    gpuimg_run_free(wk->run);
  free(wk->run);
  wk->run = NULL;
  pthread_mutex_lock(&s->mu);
  s->running--;
  pthread_cond_broadcast(&s->cv);
  pthread_mutex_unlock(&s->mu);
  return NULL;
}

/* Starts every worker (with the cleanup signals blocked: gpuimg_thread_start); one that cannot
 * start counts as ready, with its error. */
static void start_workers(gpuimg_sched_t *s)
{
  s->running = 0;
  for (int w = 0; w < s->nworkers; w++) {
    gpuimg_worker_t *wk = &s->workers[w];
    wk->s = s;
    wk->index = w;
    wk->device_path = w >= s->nworkers - (s->paths ? s->device_workers : 0);
    int d = w % s->ndevices;
    wk->device = s->use_cuda && (!s->hybrid || wk->device_path) ? s->devices[d] : -1;
    wk->jpeg = s->use_cuda && (s->device_jpeg || wk->device_path) ? s->jpeg[d] : NULL;
    pthread_mutex_lock(&s->mu);
    s->running++;
    pthread_mutex_unlock(&s->mu);
    int err = gpuimg_thread_start(&wk->thread, worker_main, wk);
    if (err) {
      pthread_mutex_lock(&s->mu);
      s->running--;
      s->ready++; /* so the wait for the workers does not count it */
      pthread_mutex_unlock(&s->mu);
      wk->init_code = GPUIMG_EXIT_FAILURE;
      snprintf(wk->init_error, sizeof wk->init_error, "cannot start a worker thread: %s",
               strerror(err));
      continue;
    }
    wk->started = 1;
  }
}

/* Every worker ready (its CUDA context made): go, or stop at the first that failed. Returns
 * that worker's index, or -1. mu held. */
static int release_workers(gpuimg_sched_t *s)
{
  while (s->ready < s->nworkers)
    pthread_cond_wait(&s->cv, &s->mu);
  int bad = -1;
  for (int w = 0; w < s->nworkers && bad < 0; w++)
    if (s->workers[w].init_code)
      bad = w;
  if (bad >= 0)
    s->stop = 1;
  else
    s->go = 1;
  s->go_ms = gpuimg_now_ms() - s->t_start;
  pthread_cond_broadcast(&s->cv);
  return bad;
}

/* Calls the progress callback every progress_ms until the workers are done. mu held. */
static void show_progress(gpuimg_sched_t *s)
{
  while (s->running > 0) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_nsec += (long)(s->calls.progress_ms * 1e6);
    if (ts.tv_nsec >= 1000000000L) {
      ts.tv_sec++;
      ts.tv_nsec -= 1000000000L;
    }
    pthread_cond_timedwait(&s->cv, &s->mu, &ts);
    if (s->running > 0) {
      pthread_mutex_unlock(&s->mu);
      s->calls.progress(s->calls.ctx);
      pthread_mutex_lock(&s->mu);
    }
  }
}

int gpuimg_sched_run(gpuimg_sched_t *s, int nworkers, int ntodo, const gpuimg_sched_calls_t *calls)
{
  s->calls = *calls;
  s->ntodo = ntodo;
  if (!s->device_share)
    s->paths = NULL;
  if (s->paths && make_queues(s) < 0)
    return -1;
  nworkers = gpuimg_sched_total_workers(s, nworkers);
  s->device_running = s->paths ? s->device_workers : 0;
  if (nworkers > 0 && !(s->workers = calloc((size_t)nworkers, sizeof *s->workers))) {
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, "", "out of memory");
    return -1;
  }
  s->nworkers = nworkers;
  /* Started last, when nothing can stop the batch before the workers run (never without
   * CUDA: hybrid is 0 then). */
  if (s->hybrid && nworkers > 0) {
    if (gpuimg_thread_start(&s->starter, device_starter, s) == 0)
      s->starter_started = 1;
    else
      device_starter(s); /* no thread: bring the device up before the workers, as before */
  }
  start_workers(s);
  pthread_mutex_lock(&s->mu);
  int bad = release_workers(s);
  if (s->calls.progress && !s->stop)
    show_progress(s);
  pthread_mutex_unlock(&s->mu);
  for (int w = 0; w < nworkers; w++)
    if (s->workers[w].started)
      pthread_join(s->workers[w].thread, NULL);
  gpuimg_sched_stop_starter(s);
  stop_device_jpeg(s);
  if (atomic_load(&s->device_off)) /* the summary says there was no split */
    s->device_share = 0, s->device_workers = 0;
  if (bad < 0)
    return 0;
  s->bad_code = s->workers[bad].init_code;
  snprintf(s->bad_error, sizeof s->bad_error, "%s", s->workers[bad].init_error);
  return -2;
}

void gpuimg_sched_close(gpuimg_sched_t *s)
{
  gpuimg_sched_stop_starter(s);
  stop_device_jpeg(s); /* when an error came before the workers */
  free(s->workers);
  s->workers = NULL;
  for (int q = 0; q < 2; q++) {
    free(s->queue[q]);
    s->queue[q] = NULL;
  }
  if (s->locks) {
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cv);
  }
  s->locks = 0;
}
