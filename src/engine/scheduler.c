/* scheduler.c: batch mode's worker pool: the worker threads, their start handshake, and each
 * worker's loop over its work items; the devices, the hybrid start, the split and progress
 * have files of their own (sched_*.c). */
#define _XOPEN_SOURCE 700
#include "sched_state.h"

#include <stdio.h>
#include <time.h>

gpuimg_sched_t *gpuimg_sched_create(double t_start)
{
  gpuimg_sched_t *s = calloc(1, sizeof *s);
  if (!s) {
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, "", "out of memory");
    return NULL;
  }
  s->t_start = t_start;
  pthread_mutex_init(&s->mu, NULL);
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&s->cv, &ca);
  pthread_condattr_destroy(&ca);
  return s;
}

/* One worker's thread: its runner, the start handshake, then work items until none is left. */
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
  if (go && s->paths && !wk->device_path)
    sched_host_nice();
  if (go && wk->device_path)
    go = sched_device_path_open(s, wk);

  for (int k; go && (k = sched_take(s, wk)) >= 0;) {
    sched_hybrid_move(s, wk);
    if (s->calls.process(s->calls.ctx, wk, k) == 0 && wk->device >= 0)
      atomic_store(&s->cuda_ok, 1);
  }
  if (wk->device_path)
    sched_device_path_done(s);

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

int gpuimg_sched_run(gpuimg_sched_t *s, int nworkers, int ntodo, const gpuimg_sched_calls_t *calls)
{
  s->calls = *calls;
  s->ntodo = ntodo;
  if (!s->device_share)
    s->paths = NULL;
  if (s->paths && sched_make_queues(s) < 0)
    return -1;
  nworkers = gpuimg_sched_total_workers(s, nworkers);
  s->device_running = s->paths ? s->device_workers : 0;
  if (nworkers > 0 && !(s->workers = calloc((size_t)nworkers, sizeof *s->workers))) {
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, "", "out of memory");
    return -1;
  }
  s->nworkers = nworkers;
  if (s->hybrid && nworkers > 0)
    sched_hybrid_begin(s);
  start_workers(s);
  pthread_mutex_lock(&s->mu);
  int bad = release_workers(s);
  if (s->calls.progress && !s->stop)
    sched_show_progress(s);
  pthread_mutex_unlock(&s->mu);
  for (int w = 0; w < nworkers; w++)
    if (s->workers[w].started)
      pthread_join(s->workers[w].thread, NULL);
  gpuimg_sched_stop_starter(s);
  sched_stop_jpeg(s);
  if (atomic_load(&s->device_off)) /* the summary says there was no split */
    s->device_share = 0, s->device_workers = 0;
  if (bad < 0)
    return 0;
  s->bad_code = s->workers[bad].init_code;
  snprintf(s->bad_error, sizeof s->bad_error, "%s", s->workers[bad].init_error);
  return -2;
}

int gpuimg_worker_index(const gpuimg_worker_t *wk)
{
  return wk->index;
}

int gpuimg_worker_device(const gpuimg_worker_t *wk)
{
  return wk->device;
}

gpuimg_run_t *gpuimg_worker_run(const gpuimg_worker_t *wk)
{
  return wk->run;
}

int gpuimg_worker_allocations(const gpuimg_worker_t *wk)
{
  return gpuimg_pipeline_allocations(wk->pipe);
}

void gpuimg_worker_flow(const gpuimg_worker_t *wk, gpuimg_flow_t *flow)
{
  flow->runner = wk->pipe;
  flow->device_jpeg = (wk->s->device_jpeg || wk->device_path) && wk->device >= 0;
  flow->jpeg = wk->jpeg;
}

void gpuimg_sched_free(gpuimg_sched_t *s)
{
  if (!s)
    return;
  gpuimg_sched_stop_starter(s);
  sched_stop_jpeg(s); /* when an error came before the workers */
  free(s->workers);
  for (int q = 0; q < 2; q++)
    free(s->queue[q]);
  pthread_mutex_destroy(&s->mu);
  pthread_cond_destroy(&s->cv);
  free(s);
}
