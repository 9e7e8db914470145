/* pipeline.h: a pipeline runner that keeps its backend state from image to image (batch mode). */
#ifndef GPUIMG_PIPELINE_H
#define GPUIMG_PIPELINE_H

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

/* Pinned and device allocations made so far (0 on the CPU): constant in steady state. */
int gpuimg_pipeline_allocations(const gpuimg_pipeline_t *p);

void gpuimg_pipeline_destroy(gpuimg_pipeline_t *p);

#endif
