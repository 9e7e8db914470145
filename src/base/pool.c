/* pool.c: the thread pool behind the CPU backend's row bands. */
#include "pool.h"
#include "files.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* The task in hand is (part, arg, nparts); a task is posted by bumping task_id, and its parts
 * are taken in order (next) by whichever thread is free, the caller included. */
struct gpuimg_pool {
  pthread_mutex_t mu;
  pthread_cond_t posted, finished;
  pthread_t *threads;
  int nthreads; /* started, besides the caller */
  int stop;
  unsigned long task_id;
  int (*part)(void *, int);
  void *arg;
  int nparts, next, pending;
  int failed, error_code; /* the first failed part's error, for the caller */
  char error[1024];
};

/* Takes and runs the task's parts until none is left; called and returns with mu held. */
static void take_parts(gpuimg_pool_t *p)
{
  while (p->next < p->nparts) {
    int i = p->next++;
    pthread_mutex_unlock(&p->mu);
    int rc = p->part(p->arg, i);
    pthread_mutex_lock(&p->mu);
    if (rc < 0 && !p->failed) {
      p->failed = 1;
      p->error_code = gpuimg_error_code();
      snprintf(p->error, sizeof p->error, "%s", gpuimg_error_message());
    }
    if (--p->pending == 0)
      pthread_cond_signal(&p->finished);
  }
}

static void *pool_thread(void *arg)
{
  gpuimg_pool_t *p = arg;
  unsigned long seen = 0;
  gpuimg_thread_name("gpuimg-pool");
  pthread_mutex_lock(&p->mu);
  for (;;) {
    while (!p->stop && p->task_id == seen)
      pthread_cond_wait(&p->posted, &p->mu);
    if (p->stop)
      break;
    seen = p->task_id;
    take_parts(p);
  }
  pthread_mutex_unlock(&p->mu);
  return NULL;
}

gpuimg_pool_t *gpuimg_pool_create(int nthreads)
{
  gpuimg_pool_t *p = calloc(1, sizeof *p);
  if (p)
    p->threads = calloc((size_t)(nthreads > 1 ? nthreads - 1 : 1), sizeof *p->threads);
  if (!p || !p->threads) {
    free(p);
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, "", "out of memory");
    return NULL;
  }
  pthread_mutex_init(&p->mu, NULL);
  pthread_cond_init(&p->posted, NULL);
  pthread_cond_init(&p->finished, NULL);
  for (; p->nthreads < nthreads - 1; p->nthreads++)
    if (gpuimg_thread_start(&p->threads[p->nthreads], pool_thread, p) != 0) {
      gpuimg_pool_free(p);
      gpuimg_error_set(GPUIMG_EXIT_FAILURE, "", "cannot start a thread (%d wanted)", nthreads);
      return NULL;
    }
  return p;
}

int gpuimg_pool_run(gpuimg_pool_t *p, int nparts, int (*part)(void *arg, int i), void *arg)
{
  pthread_mutex_lock(&p->mu);
  p->part = part;
  p->arg = arg;
  p->nparts = nparts;
  p->next = 0;
  p->pending = nparts;
  p->failed = 0;
  p->task_id++;
  if (p->nthreads > 0 && nparts > 1)
    pthread_cond_broadcast(&p->posted);
  take_parts(p);
  while (p->pending > 0)
    pthread_cond_wait(&p->finished, &p->mu);
  int failed = p->failed;
  if (failed)
    gpuimg_error_set(p->error_code, "", "%s", p->error);
  pthread_mutex_unlock(&p->mu);
  return failed ? -1 : 0;
}

void gpuimg_pool_free(gpuimg_pool_t *p)
{
  if (!p)
    return;
  pthread_mutex_lock(&p->mu);
  p->stop = 1;
  pthread_cond_broadcast(&p->posted);
  pthread_mutex_unlock(&p->mu);
  for (int i = 0; i < p->nthreads; i++)
    pthread_join(p->threads[i], NULL);
  pthread_cond_destroy(&p->posted);
  pthread_cond_destroy(&p->finished);
  pthread_mutex_destroy(&p->mu);
  free(p->threads);
  free(p);
}

/* Parts in flight per thread in gpuimg_pool_ordered(): enough to even out the threads'
 * finishing times, few enough that the finished buffers held until taken stay small. */
#define ORDERED_WINDOW_PER_THREAD 4

typedef struct {
  int (*part)(void *arg, int i, gpuimg_buf_t *buf);
  void *arg;
  gpuimg_buf_t *bufs; /* the window's */
  int first;          /* the window's first part */
} ordered_t;

static int ordered_part(void *arg, int i)
{
  const ordered_t *o = arg;
  return o->part(o->arg, o->first + i, &o->bufs[i]);
}

int gpuimg_pool_ordered(int threads, int nparts, int (*part)(void *arg, int i, gpuimg_buf_t *buf),
                        int (*take)(void *arg, int i, gpuimg_buf_t *buf), void *arg)
{
  if (threads > nparts)
    threads = nparts;
  gpuimg_pool_t *pool = threads > 1 ? gpuimg_pool_create(threads) : NULL;
  if (threads > 1 && !pool)
    gpuimg_error_clear(); /* no thread: the caller's alone, with the same result */
  int window = pool ? ORDERED_WINDOW_PER_THREAD * threads : 1;
  ordered_t o = {part, arg, calloc((size_t)window, sizeof(gpuimg_buf_t)), 0};
  int rc = o.bufs ? 0 : -1;
  if (!o.bufs)
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, "", "out of memory");
  for (; rc == 0 && o.first < nparts; o.first += window) {
    int n = nparts - o.first < window ? nparts - o.first : window;
    rc = pool ? gpuimg_pool_run(pool, n, ordered_part, &o) : ordered_part(&o, 0);
    for (int i = 0; i < n; i++) {
      if (rc == 0)
        rc = take(arg, o.first + i, &o.bufs[i]);
      gpuimg_buf_free(&o.bufs[i]);
    }
  }
  free(o.bufs);
  gpuimg_pool_free(pool);
  return rc;
}
