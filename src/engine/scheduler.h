/* scheduler.h: batch mode's workers: the threads that run images on the CPU or on CUDA devices
 * (--devices), the devices' nvJPEG threads, the hybrid start of a device, the split between
 * the host codecs and the device's JPEG path, and progress; the client sees functions only. */
#ifndef GPUIMG_SCHEDULER_H
#define GPUIMG_SCHEDULER_H

#include "flow.h"

#define GPUIMG_SCHED_MAX_DEVICES 64

/* A batch's scheduler and one of its workers (opaque: sched_state.h is the scheduler's). */
typedef struct gpuimg_sched gpuimg_sched_t;
typedef struct gpuimg_worker gpuimg_worker_t;

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

/* The devices' JPEG threads, added up over the devices once they stop: the hardware decoder's
 * batches and the images they took, ms decoding and encoding, from a decoder [0] and an
 * encoder [1] thread's set-up to its stop, the slowest set-up, the teardown; the decode [0] and
 * encode [1] requests: ms queued, served and until the requester woke, summed, and their count. */
typedef struct {
  long batches, batch_images;
  double batch_ms, encode_ms, serving_ms[2], setup_ms, teardown_ms;
  double wait_ms[2][3];
  long requests[2];
} gpuimg_sched_jpeg_t;

/* What a batch's scheduler did, for its summary (gpuimg_sched_figures()). */
typedef struct {
  int use_cuda;       /* the batch runs on CUDA (a hybrid one: once an item succeeded there) */
  int hybrid;         /* the hybrid start: the workers began on the CPU */
  const int *devices; /* the devices in use (valid while the scheduler lives) */
  int ndevices;
  int device_jpeg;     /* --codec nvjpeg on CUDA: JPEG on the device */
  double host_share;   /* of such a batch, the share the host decodes */
  double device_share; /* a split's share down the device's JPEG path (0: none, or off) */
  int device_workers;  /* its workers */
  gpuimg_sched_jpeg_t jpeg;
  double go_ms;        /* when the workers were told to go, from the start */
  double dev_ready_ms; /* the hybrid start: when the device was up; -1: never */
} gpuimg_sched_figures_t;

/* A scheduler for a batch that starts at t_start (gpuimg_now_ms()); NULL with the error set. */
gpuimg_sched_t *gpuimg_sched_create(double t_start);

/* Chooses the backend for plan (CUDA when usable, and asked for or auto; else the CPU), the
 * devices (spec: --devices, NULL: device 0) and starts the devices' nvJPEG threads; plan must
 * outlive s. 0, or -1 with the error set. */
int gpuimg_sched_open(gpuimg_sched_t *s, const gpuimg_plan_t *plan, const char *spec);

/* Whether the batch's workers run on CUDA (or, with the hybrid start, may move there). */
int gpuimg_sched_uses_cuda(const gpuimg_sched_t *s);

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

/* Hands the scheduler the client's paths, a gpuimg_path_t for each work item (owned by the
 * client, alive until gpuimg_sched_run() returns): a split batch's queues. */
void gpuimg_sched_set_paths(gpuimg_sched_t *s, const unsigned char *paths);

/* How many workers gpuimg_sched_run() starts for nworkers host workers: with a split
 * (paths set), the device path's too. */
int gpuimg_sched_total_workers(const gpuimg_sched_t *s, int nworkers);

/* Runs ntodo work items on nworkers workers, and returns when they are done: 0; -1 with the
 * error set when nothing could start (nothing ran); -2 when a worker could not start (nothing
 * ran: the first failure in gpuimg_sched_failure()). The hybrid start's device start and the
 * nvJPEG threads are stopped on return, except after -1 (gpuimg_sched_stop_starter() and
 * gpuimg_sched_free() stop them). */
int gpuimg_sched_run(gpuimg_sched_t *s, int nworkers, int ntodo, const gpuimg_sched_calls_t *calls);

/* Waits for the hybrid start's device start to end (safe to call twice); the batch then
 * counts as a CUDA one (use_cuda) when an item succeeded there. */
void gpuimg_sched_stop_starter(gpuimg_sched_t *s);

/* After gpuimg_sched_run() returned -2: the first worker's failure, its exit code in *code. */
const char *gpuimg_sched_failure(const gpuimg_sched_t *s, int *code);

/* What the scheduler did, into *f (after gpuimg_sched_run() for the full figures). */
void gpuimg_sched_figures(const gpuimg_sched_t *s, gpuimg_sched_figures_t *f);

/* A worker's number (0 .. the workers started - 1), its CUDA device (-1: the CPU), the record
 * of its current image, and its runner's pinned and device allocations so far. */
int gpuimg_worker_index(const gpuimg_worker_t *wk);
int gpuimg_worker_device(const gpuimg_worker_t *wk);
gpuimg_run_t *gpuimg_worker_run(const gpuimg_worker_t *wk);
int gpuimg_worker_allocations(const gpuimg_worker_t *wk);

/* Fills the worker's part of a flow: its runner, whether it does JPEG on the device (a
 * --codec nvjpeg batch's or a split's device-path worker on a device) and its device's JPEG
 * threads. */
void gpuimg_worker_flow(const gpuimg_worker_t *wk, gpuimg_flow_t *flow);

/* Stops everything still running and frees s (NULL: nothing). */
void gpuimg_sched_free(gpuimg_sched_t *s);

#endif
