/* pipeline.h: a pipeline runner that keeps its backend state from image to image (batch mode). */
#ifndef GPUIMG_PIPELINE_H
#define GPUIMG_PIPELINE_H

#include "backend.h"

/* One thread's runner: the CPU backend, or one CUDA context (its own non-blocking stream)
 * with pinned staging and device buffers that are kept between images and only grow, so
 * that in steady state an image costs no cudaMalloc or cudaMallocHost. Create, use and
 * destroy it on one thread: CUDA makes the device current for the creating thread. */
typedef struct gpuimg_pipeline gpuimg_pipeline_t;

/* A runner for plan's steps (plan must outlive it) on the CPU (GPUIMG_DEVICE_CPU), on CUDA's
 * default device (GPUIMG_DEVICE_DEFAULT) or on CUDA device number `device`. NULL with the error set
 * (exit 5 for CUDA, 2 for a --block the device does not take). */
gpuimg_pipeline_t *gpuimg_pipeline_create(const gpuimg_plan_t *plan, int device);

/* The runner of a one-image run: on CUDA's default device unless plan->backend is cpu or
 * (auto) no device is usable (a notice on stderr unless plan->quiet, then the CPU); NULL
 * with the error set (exit 5) when cuda was asked for and none is usable. */
gpuimg_pipeline_t *gpuimg_pipeline_open(const gpuimg_plan_t *plan);

/* The device start: the one way gpuimg starts CUDA ahead of its runners. The driver and a
 * device's primary context (the slow parts: about 0.1 s each on an H200) come up on a thread
 * of their own while the caller works on: a one-image run begins one before its decode (its
 * route's GPUIMG_STEPS_CUDA) and opens its runner after it (gpuimg_pipeline_open_started());
 * a batch's hybrid start begins one while its workers convert on the CPU, and they move to
 * the device once it is up. A runner made without one brings its device up itself. */
typedef struct gpuimg_device_start gpuimg_device_start_t;

/* What a device start is asked. */
typedef struct {
  int device;   /* the CUDA device number */
  int blocking; /* threads waiting for the device sleep (1) or spin (0, CUDA's default) */
  /* NULL, or asked once the driver is up whether the device is still wanted (arg passed):
   * 0 makes no context (the start ends as not usable) */
  int (*wanted)(void *arg);
  /* NULL, or called on the start's thread once it has an answer (arg passed) */
  void (*done)(void *arg, const gpuimg_device_start_t *start);
  void *arg;
} gpuimg_device_start_ask_t;

/* Begins a device start on a thread (or, when no thread can start, runs it before returning);
 * NULL when the build has no CUDA or out of memory (then no device is started). */
gpuimg_device_start_t *gpuimg_device_start_begin(const gpuimg_device_start_ask_t *ask);

/* The start's answer so far: 0 still starting, 1 the device is up, -1 not usable (why:
 * gpuimg_device_start_reason()), -2 no longer wanted. Any thread. */
int gpuimg_device_start_state(const gpuimg_device_start_t *start);
const char *gpuimg_device_start_reason(const gpuimg_device_start_t *start);

/* Waits for the start to end and frees it (NULL: nothing); 1 when the device is up, 0 when
 * not (why in reason, when given). With run and a device that is up, its whole time becomes
 * the run's device-start stage (host clock). */
int gpuimg_device_start_end(gpuimg_device_start_t *start, gpuimg_run_t *run, char *reason,
                            size_t reason_size);

/* The device start of a one-image run of plan: device 0, threads spinning while they wait;
 * NULL when plan runs on the CPU or the build has no CUDA. */
gpuimg_device_start_t *gpuimg_device_start_plan(const gpuimg_plan_t *plan);

/* gpuimg_pipeline_open() for one image, once start (or NULL: none) has ended: a device-start
 * stage in run (host clock, the start's whole time) when the device is usable. The runner
 * serves that image only (CUDA: copies from and to ordinary memory when the image runs once,
 * without pinned staging buffers, whose set-up costs more than one copy saves). Takes start
 * in every case. */
gpuimg_pipeline_t *gpuimg_pipeline_open_started(const gpuimg_plan_t *plan,
                                                gpuimg_device_start_t *start, gpuimg_run_t *run);

/* Runs the steps once on src (plan->repeat times, after plan->warmup; with plan->measure,
 * divergence counting and a copy-bandwidth measurement on CUDA). masks[i] is step i's
 * mask, shared and never changed while the runner lives: the device copy is uploaded on its
 * first use only (an upload-mask stage then) and reused while masks[i].data is the same
 * pointer. dst receives the result; the caller frees it with gpuimg_image_free(). On CUDA the
 * result is usually lent (dst->borrowed): it lies in the runner's pinned staging buffer, valid
 * until the runner's next run or its destruction, and needed no copy; a one-image runner that
 * runs once hands over memory of its own (not borrowed). steps: the runner's plan, or
 * NULL for it, or a copy of it whose steps' parameters differ (shrink-on-load's fixed first
 * step). */
int gpuimg_pipeline_process(gpuimg_pipeline_t *p, const gpuimg_plan_t *steps,
                            const gpuimg_image_t *src, const gpuimg_image_t *masks,
                            gpuimg_image_t *dst, gpuimg_run_t *run);

/* gpuimg_pipeline_process() with device-resident JPEG (the output's size and channels go to
 * run->out_w, out_h and out_c, as on every CUDA run): from io->jpeg, a decode stage (host
 * clock, codec nvjpeg, header and any wait for the nvJPEG thread included) instead of the
 * upload, the image's size and channels going to run->in_w, in_h and in_c, and a step's
 * mask of another size an input error (exit 3) before any kernel runs; else from src as
 * usual. With io->out, an encode stage (codec nvjpeg) instead of the download, and dst is
 * left empty. */
int gpuimg_pipeline_process_jpeg(gpuimg_pipeline_t *p, const gpuimg_plan_t *steps,
                                 const gpuimg_jpeg_io_t *io, const gpuimg_image_t *src,
                                 const gpuimg_image_t *masks, gpuimg_image_t *dst,
                                 gpuimg_run_t *run);

/* 1 when a one-image run of plan decodes a JPEG input on the device: --codec nvjpeg, not
 * --backend cpu, a usable CUDA device and nvJPEG in the build. */
int gpuimg_pipeline_device_jpeg(const gpuimg_plan_t *plan);

/* Whether the build's device backend can decode and encode JPEG on the device (nvJPEG). */
int gpuimg_pipeline_has_device_jpeg(void);

/* 1 when this build has the CUDA backend. */
int gpuimg_pipeline_have_cuda(void);

/* CUDA devices usable now; 0 with why in reason (also: a build without CUDA). */
int gpuimg_pipeline_probe(char *reason, size_t reason_size);

/* Makes threads waiting for CUDA device `device` sleep (blocking 1) or spin; 0 in a build
 * without CUDA; -1 with the error set. */
int gpuimg_pipeline_wait_mode(int device, int blocking);

/* A gpuimg_pixel_source_t (codec.h) for a runner: its pinned input staging buffer, grown to
 * bytes, which the next run uploads without copying; NULL on the CPU (or when the pinned
 * allocation fails: the decoder then allocates as usual). Only the runner's thread uses it,
 * and the image decoded there must be done with before the runner's next decode. */
uint8_t *gpuimg_pipeline_pixel_source(void *runner, size_t bytes);

/* Pinned and device allocations made so far (0 on the CPU): constant in steady state. */
int gpuimg_pipeline_allocations(const gpuimg_pipeline_t *p);

void gpuimg_pipeline_destroy(gpuimg_pipeline_t *p);

/* Runs plan's pipeline on src (masks[i] for the steps whose op needs a mask), repeat times.
 * dst receives the result (caller frees). Fills the run's stages. */
int gpuimg_pipeline_run(const gpuimg_plan_t *plan, const gpuimg_image_t *src,
                        const gpuimg_image_t *masks, gpuimg_image_t *dst, gpuimg_run_t *run);

#endif
