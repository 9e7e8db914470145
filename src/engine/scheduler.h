/* scheduler.h: batch mode's workers: the threads that run images on the CPU or on CUDA devices
 * (--devices), the devices' nvJPEG threads, and the hybrid start of a device. */
#ifndef GPUIMG_SCHEDULER_H
#define GPUIMG_SCHEDULER_H

#include <pthread.h>
#include <stdatomic.h>

#include "route.h"

#define GPUIMG_SCHED_MAX_DEVICES 64

typedef struct gpuimg_sched gpuimg_sched_t;

/* One worker thread and what it keeps from image to image. */
typedef struct {
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
} gpuimg_worker_t;

/* What the scheduler's client does; ctx is passed back to each. */
typedef struct {
  void *ctx;
  /* Processes work item k (0 .. ntodo-1, taken in order) on wk; 0 when it succeeded. */
  int (*process)(void *ctx, gpuimg_worker_t *wk, int k);
  /* Prints a notice line (any thread). */
  void (*say)(void *ctx, const char *msg);
  /* NULL, or called by the starting thread every progress_ms while the workers run. */
  void (*progress)(void *ctx);
  double progress_ms;
} gpuimg_sched_calls_t;

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
  long jpeg_batches, jpeg_batch_images;
  double jpeg_batch_ms, jpeg_encode_ms, jpeg_setup_ms, jpeg_teardown_ms;
  /* From a decoder [0] and an encoder [1] thread's set-up to the stop, as jpeg_batch_ms */
  double jpeg_serving_ms[2];
  /* The decode [0] and encode [1] requests to the JPEG threads: ms queued, served and until
   * the requester woke (gpuimg_jpeg_batch_waits), summed, and their count. */
  double jpeg_wait_ms[2][3];
  long jpeg_requests[2];
  double go_ms; /* when the workers were told to go, from t_start */
  /* --backend auto on one device with host codecs: the device is brought up by the starter
   * thread while the workers begin on the CPU, each moving to CUDA at its next image once
   * the device is up (dev_state 1), or staying on the CPU if it is not (-1, dev_reason).
   * The outputs are the same bytes either way; the CPU works through CUDA's start-up (about
   * 0.25 s on an H200) instead of waiting for it. */
  int hybrid;
  pthread_t starter;
  int starter_started;
  atomic_int dev_state;
  atomic_int move_failed; /* a worker could not move (said once) */
  char dev_reason[256];
  double dev_ready_ms; /* when the device was up, from t_start; -1: never */
  atomic_int cuda_ok;  /* an item succeeded on CUDA */
  char reason[256];    /* why no CUDA device is used (use_cuda 0) */
  /* A split batch (gpuimg_sched_split): the items the client marks GPUIMG_PATH_DEVICE go down the
   * device's JPEG path (the hardware decoder, the steps and nvJPEG's encoder there) on
   * device_workers workers of their own, asleep while the device works, and the others to the
   * host codecs on the client's workers; the last device worker stops the JPEG threads while
   * the host works on. queue[0] holds the host's items, queue[1] the device's. */
  double device_share;
  /* The share is the cost model's, which priced the hardware JPEG decoder: without one (or
   * without a usable device) the device path is off and the host's workers take its items
   * too (device_path_check); device_checked counts the device workers that have looked. */
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
  int locks;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int ready, running, go, stop;
  /* The first worker that could not start (gpuimg_sched_run() returned -2). */
  int bad_code;
  char bad_error[1100];
};

/* Chooses the backend for plan (CUDA when usable, and asked for or auto; else the CPU), the
 * devices (spec: --devices, NULL: device 0) and starts the devices' nvJPEG threads. s must be
 * zeroed; plan must outlive it. 0, or -1 with the error set. */
int gpuimg_sched_open(gpuimg_sched_t *s, const gpuimg_plan_t *plan, const char *spec,
                      double t_start);

/* The reason for the notice that auto fell back to the CPU backend, or NULL when none is due. */
const char *gpuimg_sched_fallback(const gpuimg_sched_t *s);

/* How many workers for ntodo items: jobs, or when jobs <= 0 the cores this process may use
 * (its affinity and cgroup CPU quota: gpuimg_cpu_cores), twice that on the device's JPEG path
 * (--codec nvjpeg on CUDA). After gpuimg_sched_open(). */
int gpuimg_sched_workers(const gpuimg_sched_t *s, int jobs, int ntodo);

/* Each worker's CPU threads (--threads) when nworkers share the machine: threads when given
 * (> 0), else the cores this process may use divided by nworkers, at least 1. */
int gpuimg_sched_threads(int threads, int nworkers);

/* Decides whether the batch of n work items splits between the host codecs and the device's
 * JPEG path (gpuimg_route_device_share(): for inputs like the file first written as out), and
 * starts the devices' JPEG threads when it does. Returns the share (0: no split). */
double gpuimg_sched_split(gpuimg_sched_t *s, const char *first, gpuimg_format_t out, long n);

/* The path of the item named name (gpuimg_route_path()): down a split batch's device path,
 * decoded by the host in a batch that decodes JPEG on the device (device_jpeg, under
 * host_share), or its worker's way. */
gpuimg_path_t gpuimg_sched_path(const gpuimg_sched_t *s, const char *name);

/* How many workers gpuimg_sched_run() starts for nworkers host workers: with a split
 * (paths set), the device path's too. */
int gpuimg_sched_total_workers(const gpuimg_sched_t *s, int nworkers);

/* Runs ntodo work items on nworkers workers, and returns when they are done: 0; -1 with the
 * error set when nothing could start (nothing ran); -2 when a worker could not start (nothing
 * ran: the first failure in bad_code and bad_error). The hybrid start's thread and the
 * nvJPEG threads are stopped on return, except after -1 (gpuimg_sched_stop_starter() and
 * gpuimg_sched_close() stop them). */
int gpuimg_sched_run(gpuimg_sched_t *s, int nworkers, int ntodo, const gpuimg_sched_calls_t *calls);

/* Waits for the hybrid start's thread (safe to call twice); the batch then counts as a CUDA
 * one (use_cuda) when an item succeeded there. */
void gpuimg_sched_stop_starter(gpuimg_sched_t *s);

/* Stops everything still running and frees what s holds (safe on a zeroed s, and twice). */
void gpuimg_sched_close(gpuimg_sched_t *s);

#endif
