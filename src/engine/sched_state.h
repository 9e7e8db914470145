/* sched_state.h: the scheduler's state and the functions its files share (scheduler.c the
 * worker pool, sched_devices.c, sched_hybrid.c, sched_split.c, sched_report.c); private to
 * them: clients use scheduler.h. */
#ifndef GPUIMG_SCHED_STATE_H
#define GPUIMG_SCHED_STATE_H

#include "scheduler.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* One worker thread and what it keeps from image to image. */
struct gpuimg_worker {
  gpuimg_sched_t *s;
  int index;
  int device;                /* CUDA device number, -1 on the CPU (so far: see hybrid) */
  gpuimg_jpeg_batch_t *jpeg; /* its device's shared JPEG decoder, or NULL */
  gpuimg_pipeline_t *pipe;   /* its runner, made on its own thread */
  gpuimg_run_t *run;         /* the record of its current image */
  /* The scheduler's own. */
  pthread_t thread;
  int started;
  int init_code;
  char init_error[1100];
  int hybrid_done; /* a hybrid worker that moved to CUDA, or tried */
  int device_path; /* a split batch's worker for the items of the device's JPEG path */
};

struct gpuimg_sched {
  const gpuimg_plan_t *plan;
  double t_start; /* the batch's start (gpuimg_now_ms()): the times below count from it */
  int use_cuda;
  int devices[GPUIMG_SCHED_MAX_DEVICES], ndevices;
  /* --codec nvjpeg on CUDA: JPEG inputs are decoded, and JPEG outputs encoded, on the
   * device; jpeg[d] batches the decodes for devices[d] (NULL: each worker decodes alone). */
  int device_jpeg;
  gpuimg_jpeg_batch_t *jpeg[GPUIMG_SCHED_MAX_DEVICES];
  /* Of such a batch's JPEG inputs, the share decoded by the host's decoder (libjpeg) instead,
   * so that the host's cores decode beside the hardware decoder (gpuimg_sched_path());
   * the results still go through the device and its encoder. */
  double host_share;
  gpuimg_sched_jpeg_t jpeg_figures; /* the JPEG threads', added up as they stop */
  double go_ms;                     /* when the workers were told to go, from t_start */
  /* --backend auto on one device with host codecs: the device is brought up by the starter
   * thread while the workers begin on the CPU, each moving to CUDA at its next image once
   * the device is up (dev_state 1), or staying on the CPU if it is not (-1).
   * The outputs are the same bytes either way; the CPU works through CUDA's start-up (about
   * 0.25 s on an H200) instead of waiting for it. */
  int hybrid;
  gpuimg_device_start_t *start;
  atomic_int dev_state;
  atomic_int move_failed; /* a worker could not move (said once) */
  double dev_ready_ms;    /* when the device was up, from t_start; -1: never */
  atomic_int cuda_ok;     /* an item succeeded on CUDA */
  char reason[256];       /* why no CUDA device is used (use_cuda 0) */
  /* A split batch (gpuimg_sched_split): the items the client marks GPUIMG_PATH_DEVICE go down
   * the device's JPEG path (the hardware decoder, the steps and nvJPEG's encoder there) on
   * device_workers workers of their own, asleep while the device works, and the others to the
   * host codecs on the client's workers; the last device worker stops the JPEG threads while
   * the host works on. queue[0] holds the host's items, queue[1] the device's. */
  double device_share;
  /* The share is the cost model's, which priced the hardware JPEG decoder: without one (or
   * without a usable device) the device path is off and the host's workers take its items
   * too (sched_device_path_open); device_checked counts the device workers that have looked. */
  int split_model, device_checked;
  atomic_int device_off;
  const unsigned char *paths; /* the client's, a gpuimg_path_t per work item; NULL: no split */
  int device_workers, device_running;
  int host_cuda; /* the host's workers move to CUDA for the steps (GPUIMG_SPLIT_HOST_CUDA) */
  int *queue[2], nqueue[2];
  atomic_int qnext[2];
  /* The workers and their work. */
  gpuimg_sched_calls_t calls;
  gpuimg_worker_t *workers;
  int nworkers;
  int ntodo;
  atomic_int next; /* next work item */
  /* Worker start-up: each reports ready, then waits for go or stop. */
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int ready, running, go, stop;
  /* The first worker that could not start (gpuimg_sched_run() returned -2). */
  int bad_code;
  char bad_error[1100];
};

/* Whether the environment variable name is set to value. */
static inline int sched_env_is(const char *name, const char *value)
{
  const char *v = getenv(name);
  return v && strcmp(v, value) == 0;
}

/* sched_devices.c: stops the devices' JPEG threads, adding up their figures (safe twice). */
void sched_stop_jpeg(gpuimg_sched_t *s);

/* sched_hybrid.c: begins the hybrid start's device start. */
void sched_hybrid_begin(gpuimg_sched_t *s);
/* A hybrid worker's move to CUDA at its next item, once the device is up (at most once). */
void sched_hybrid_move(gpuimg_sched_t *s, gpuimg_worker_t *wk);
/* Waits until the hybrid start has an answer; 1 when the device is up (or no hybrid start). */
int sched_hybrid_wait(gpuimg_sched_t *s);

/* sched_split.c: the split's two queues from the client's paths; 0, or -1 with the error set. */
int sched_make_queues(gpuimg_sched_t *s);
/* The next work item for wk (-1: none left). */
int sched_take(gpuimg_sched_t *s, gpuimg_worker_t *wk);
/* A device-path worker's runner and its look whether the device path is on: 1 when it is. */
int sched_device_path_open(gpuimg_sched_t *s, gpuimg_worker_t *wk);
/* A device-path worker is done; the last stops the JPEG threads. */
void sched_device_path_done(gpuimg_sched_t *s);
/* A split batch's host workers' nice value (Linux: per thread). */
void sched_host_nice(void);

/* sched_report.c: calls the progress callback every progress_ms until the workers are done
 * (mu held). */
void sched_show_progress(gpuimg_sched_t *s);

#endif
