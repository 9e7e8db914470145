/* gpuimg_kernels.h: the one C interface to the CUDA backend (kernels/ *.cu), shared by .c and .cu. */
#ifndef GPUIMG_KERNELS_H
#define GPUIMG_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Kernel variants; the CPU backend has one algorithm per operation that all must match. */
typedef enum {
  GPUIMG_VARIANT_FAST = 0, /* the default: fastest available */
  GPUIMG_VARIANT_NAIVE,    /* the teaching kernel: one thread per pixel, global memory */
  GPUIMG_VARIANT_TILED,    /* blur: tile plus apron staged in shared memory */
} gpuimg_variant_t;

/* Opaque CUDA context: device, one non-blocking stream, timing events. */
typedef struct gpuimg_cuda gpuimg_cuda_t;

/* What a launcher ran, for the report: filled by every *_gpu launcher. */
typedef struct {
  const char *kernel; /* kernel function name */
  unsigned grid[3];
  unsigned block[3];
  size_t shared_bytes; /* dynamic shared memory per block */
  int launches;        /* kernels launched for this step */
  float ms;            /* event-timed, all launches of the step */
} gpuimg_launch_t;

/* Device and properties; returns the device count (> 0), or 0 and a reason. */
int gpuimg_cuda_probe(char *reason, size_t reason_size);

/* Creates a context on device (-1 = current default). NULL with the error set. */
gpuimg_cuda_t *gpuimg_cuda_create(int device);
void gpuimg_cuda_destroy(gpuimg_cuda_t *ctx);

/* Device description for the report. */
const char *gpuimg_cuda_device_name(const gpuimg_cuda_t *ctx);
void gpuimg_cuda_device_cc(const gpuimg_cuda_t *ctx, int *major, int *minor);

/* Block shape used by 2-D kernels; 0x0 = each kernel's default. 0 or -1. */
int gpuimg_cuda_set_block(gpuimg_cuda_t *ctx, int bw, int bh);

/* Pinned host memory (cudaMallocHost) and device memory. NULL on failure. */
void *gpuimg_cuda_host_alloc(size_t bytes);
void gpuimg_cuda_host_free(void *h_ptr);
void *gpuimg_cuda_dev_alloc(size_t bytes);
void gpuimg_cuda_dev_free(void *d_ptr);

/* Event-timed copies on the context's stream; they complete before return. */
int gpuimg_cuda_upload(gpuimg_cuda_t *ctx, void *d_dst, const void *h_src, size_t bytes, float *ms);
int gpuimg_cuda_download(gpuimg_cuda_t *ctx, void *h_dst, const void *d_src, size_t bytes,
                         float *ms);

/* Launchers: images are tightly packed width x height x channels on the device.
 * d_dst never aliases d_src. Each waits for its kernels and fills *info. */
int gpuimg_gray_gpu(gpuimg_cuda_t *ctx, const uint8_t *d_src, uint8_t *d_dst, int width,
                    int height, int channels, gpuimg_launch_t *info);
int gpuimg_blur_gpu(gpuimg_cuda_t *ctx, const uint8_t *d_src, uint8_t *d_dst, int width,
                    int height, int channels, int radius, gpuimg_variant_t variant,
                    gpuimg_launch_t *info);
int gpuimg_checkerboard_gpu(gpuimg_cuda_t *ctx, const uint8_t *d_src, uint8_t *d_dst, int width,
                            int height, int channels, int cell, int amount,
                            gpuimg_variant_t variant, gpuimg_launch_t *info);
/* d_mask: width x height, one byte per pixel (>= 128 = subject). */
int gpuimg_portrait_gpu(gpuimg_cuda_t *ctx, const uint8_t *d_src, const uint8_t *d_mask,
                        uint8_t *d_dst, int width, int height, int channels, int radius,
                        gpuimg_variant_t variant, gpuimg_launch_t *info);

#ifdef __cplusplus
}
#endif

#endif
