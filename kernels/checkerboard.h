/* checkerboard.h: the checkerboard launcher (kernels/checkerboard.cu). */
#ifndef GPUIMG_CHECKERBOARD_H
#define GPUIMG_CHECKERBOARD_H

#include "cuda_context.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Brightens even cell x cell squares by amount and darkens odd ones; alpha is copied.
 * 0, or -1 with the error set. */
int gpuimg_checkerboard_gpu(gpuimg_cuda_t *ctx, const uint8_t *d_src, uint8_t *d_dst, int width,
                            int height, int channels, int cell, int amount,
                            gpuimg_variant_t variant, gpuimg_launch_t *info);

#ifdef __cplusplus
}
#endif

#endif
