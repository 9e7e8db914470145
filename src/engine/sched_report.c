/* sched_report.c: what the scheduler tells its client: progress while the workers run, and
 * afterwards the figures of the batch's summary and the first worker that could not start. */
#define _XOPEN_SOURCE 700
#include "sched_state.h"

#include <time.h>

/* Calls the progress callback every progress_ms until the workers are done. mu held. */
void sched_show_progress(gpuimg_sched_t *s)
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

const char *gpuimg_sched_failure(const gpuimg_sched_t *s, int *code)
{
  *code = s->bad_code;
  return s->bad_error;
}

void gpuimg_sched_figures(const gpuimg_sched_t *s, gpuimg_sched_figures_t *f)
{
  *f = (gpuimg_sched_figures_t){.use_cuda = s->use_cuda,
                                .hybrid = s->hybrid,
                                .devices = s->devices,
                                .ndevices = s->ndevices,
                                .device_jpeg = s->device_jpeg,
                                .host_share = s->host_share,
                                .device_share = s->device_share,
                                .device_workers = s->device_workers,
                                .jpeg = s->jpeg_figures,
                                .go_ms = s->go_ms,
                                .dev_ready_ms = s->dev_ready_ms};
}
