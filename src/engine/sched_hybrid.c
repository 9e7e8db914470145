/* sched_hybrid.c: the hybrid start of a batch: its workers begin on the CPU while a device
 * start brings the device up, and move to it image by image once it is. */
#include "sched_state.h"

#include <stdio.h>
#include <time.h>

/* The hybrid start brings device devices[0] up (a device start) while the workers convert on
 * the CPU, then lets them move to it. The context (the second half of the start-up) is not
 * made once every image is taken. */
static int work_left(void *arg)
{
  gpuimg_sched_t *s = arg;
  if (s->paths)
    return atomic_load(&s->qnext[0]) < s->nqueue[0] || s->nqueue[1] > 0;
  return atomic_load(&s->next) < s->ntodo;
}

/* The device start's answer (on its thread): the workers may move to the device, or it says,
 * unless -q, that the batch stays on the CPU. */
static void device_started(void *arg, const gpuimg_device_start_t *start)
{
  gpuimg_sched_t *s = arg;
  int state = gpuimg_device_start_state(start);
  s->dev_ready_ms = state > 0 ? gpuimg_now_ms() - s->t_start : -1;
  atomic_store(&s->dev_state, state > 0 ? 1 : -1);
  if (state == -1 && !s->plan->quiet) {
    char msg[512];
    snprintf(msg, sizeof msg, "no usable CUDA device (%s); using the CPU backend",
             gpuimg_device_start_reason(start));
    s->calls.say(s->calls.ctx, msg);
  }
}

/* A hybrid worker's move to CUDA, once the device is up: a CUDA runner instead of its CPU
 * one. A runner that cannot be made (out of device memory) leaves the worker on the CPU, with
 * a notice (once per batch). */
static void move_to_device(gpuimg_sched_t *s, gpuimg_worker_t *wk)
{
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

void sched_hybrid_move(gpuimg_sched_t *s, gpuimg_worker_t *wk)
{
  if (!s->hybrid || wk->hybrid_done || wk->device_path || (s->paths && !s->host_cuda) ||
      atomic_load(&s->dev_state) != 1)
    return;
  wk->hybrid_done = 1;
  move_to_device(s, wk);
}

/* Started last, when nothing can stop the batch before the workers run (never without CUDA:
 * hybrid is 0 then). */
void sched_hybrid_begin(gpuimg_sched_t *s)
{
  gpuimg_device_start_ask_t ask = {.device = s->devices[0],
                                   .blocking = !sched_env_is("GPUIMG_CUDA_SYNC", "spin"),
                                   .wanted = work_left,
                                   .done = device_started,
                                   .arg = s};
  if (!(s->start = gpuimg_device_start_begin(&ask)))
    atomic_store(&s->dev_state, -1); /* out of memory: the batch stays on the CPU */
}

int sched_hybrid_wait(gpuimg_sched_t *s)
{
  while (s->hybrid && atomic_load(&s->dev_state) == 0) {
    struct timespec ts = {0, 2000000};
    nanosleep(&ts, NULL);
  }
  return !s->hybrid || atomic_load(&s->dev_state) == 1;
}

void gpuimg_sched_stop_starter(gpuimg_sched_t *s)
{
  gpuimg_device_start_end(s->start, NULL, NULL, 0);
  s->start = NULL;
  if (!s->hybrid)
    return;
  s->use_cuda = atomic_load(&s->cuda_ok);
}
