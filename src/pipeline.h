/* pipeline.h: a pipeline runner that keeps its backend state from image to image (batch mode). */
#ifndef GPUIMG_PIPELINE_H
#define GPUIMG_PIPELINE_H

#include "jpeg_batch.h"
#include "run.h"

/* One thread's runner: the CPU backend, or one CUDA context (its own non-blocking stream)
 * with pinned staging and device buffers that are kept between images and only grow, so
 * that in steady state an image costs no cudaMalloc or cudaMallocHost. Create, use and
 * destroy it on one thread: CUDA makes the device current for the creating thread. */
typedef struct gpuimg_pipeline gpuimg_pipeline_t;

/* A runner for cli's steps (cli must outlive it) on the CPU (device < 0) or on CUDA device
 * number `device`. NULL with the error set (exit 5 for CUDA, 2 for a --block the device
 * does not take). */
gpuimg_pipeline_t *gpuimg_pipeline_create(const gpuimg_cli_t *cli, int device);

/* Runs the steps once on src, as gpuimg_pipeline_run() does (same stages in run, no
 * divergence counting, no copy-bandwidth measurement). masks[i] is the portrait step i's
 * mask, shared and never changed while the runner lives: the device copy is uploaded on its
 * first use only (an upload-mask stage then) and reused while masks[i].data is the same
 * pointer. dst receives the result; the caller frees it with gpuimg_image_free(). */
int gpuimg_pipeline_process(gpuimg_pipeline_t *p, const gpuimg_image_t *src,
                            const gpuimg_image_t *masks, gpuimg_image_t *dst, gpuimg_run_t *run);

/* Device-resident JPEG: a JPEG file's bytes decoded by nvJPEG straight into the runner's
 * device memory, and the result, when out is set, encoded by nvJPEG from device memory, so
 * that no pixels cross the host (a CUDA runner in a build with nvJPEG). */
typedef struct {
  const uint8_t *jpeg; /* the input file's bytes and name */
  size_t size;
  const char *what;
  int width, height, channels; /* from gpuimg_pipeline_jpeg_info() */
  double header_ms;            /* its time, counted in the decode stage */
  gpuimg_jpeg_batch_t *batch;  /* the device's nvJPEG thread does the work, or NULL: the runner */
  gpuimg_buf_t *out;           /* NULL: the pixels come back in dst; else the JPEG file here */
  int quality;
  const char *out_what;
} gpuimg_jpeg_io_t;

/* 1 when p decodes and encodes JPEG on its device: a CUDA runner, nvJPEG built in. */
int gpuimg_pipeline_device_jpeg(const gpuimg_pipeline_t *p);

/* The JPEG's size and channels (1 gray, 3 colour) from its header, with nvJPEG's checks
 * (gpuimg_nvjpeg_info()): -1 with an input error (exit 3) for what it cannot decode. Read by
 * jb's thread (batch mode: the device's nvJPEG thread) when jb is not NULL, else with the
 * runner's own nvJPEG handle, made by its first call. */
int gpuimg_pipeline_jpeg_info(gpuimg_pipeline_t *p, gpuimg_jpeg_batch_t *jb, const uint8_t *jpeg,
                              size_t n, const char *what, int *width, int *height, int *channels);

/* gpuimg_pipeline_process() from a device-resident JPEG: a decode stage (host clock,
 * codec nvjpeg, the wait for a shared batch included) instead of the upload, and with
 * io->out an encode stage (codec nvjpeg) instead of the download; dst is then left empty. */
int gpuimg_pipeline_process_jpeg(gpuimg_pipeline_t *p, const gpuimg_jpeg_io_t *io,
                                 const gpuimg_image_t *masks, gpuimg_image_t *dst,
                                 gpuimg_run_t *run);

/* Pinned and device allocations made so far (0 on the CPU): constant in steady state. */
int gpuimg_pipeline_allocations(const gpuimg_pipeline_t *p);

void gpuimg_pipeline_destroy(gpuimg_pipeline_t *p);

#endif
