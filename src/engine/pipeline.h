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

/* CUDA's start (the driver and the primary context: about 0.2 s on an H200) begun on a
 * thread, so that it overlaps reading and decoding the input; NULL when plan runs on the CPU
 * or the build has no CUDA (or no thread could start). */
typedef struct gpuimg_prestart gpuimg_prestart_t;
gpuimg_prestart_t *gpuimg_pipeline_prestart(const gpuimg_plan_t *plan);

/* gpuimg_pipeline_open() for one image, once ps (or NULL: none) has finished: a device-start
 * stage in run (host clock, the start's whole time) when the device is usable. The runner
 * serves that image only (CUDA: copies from and to ordinary memory when the image runs once,
 * without pinned staging buffers, whose set-up costs more than one copy saves). Takes ps in
 * every case. */
gpuimg_pipeline_t *gpuimg_pipeline_open_started(const gpuimg_plan_t *plan, gpuimg_prestart_t *ps,
                                                gpuimg_run_t *run);

/* Waits for a start no runner was opened after, and frees it (NULL: nothing). */
void gpuimg_pipeline_prestart_free(gpuimg_prestart_t *ps);

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

/* Brings CUDA device `device` up: the driver, its primary context (the slow parts: about
 * 0.1 s each on an H200) and its way of waiting (blocking: a thread sleeps while the device
 * works), so that runners created on it afterwards start at once. wanted (or NULL) is asked
 * once the driver is up whether the device is still wanted. 1 when it is usable, 0 when not
 * (why in reason), -1 when no longer wanted (no context made). Any thread may call it. */
int gpuimg_pipeline_device_start(int device, int blocking, int (*wanted)(void *), void *arg,
                                 char *reason, size_t reason_size);

/* Pinned and device allocations made so far (0 on the CPU): constant in steady state. */
int gpuimg_pipeline_allocations(const gpuimg_pipeline_t *p);

void gpuimg_pipeline_destroy(gpuimg_pipeline_t *p);

/* Runs plan's pipeline on src (masks[i] for the steps whose op needs a mask), repeat times.
 * dst receives the result (caller frees). Fills the run's stages. */
int gpuimg_pipeline_run(const gpuimg_plan_t *plan, const gpuimg_image_t *src,
                        const gpuimg_image_t *masks, gpuimg_image_t *dst, gpuimg_run_t *run);

#endif
