/* gray.h: the grayscale launcher (kernels/gray.cu). */
#ifndef GPUIMG_GRAY_H
#define GPUIMG_GRAY_H

#include "cuda_context.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Rec. 601 luma of each pixel, alpha kept (gray or gray + alpha out). 0, or -1 with the
 * error set. */
int gpuimg_gray_gpu(gpuimg_cuda_t *ctx, const uint8_t *d_src, uint8_t *d_dst, int width, int height,
                    int channels, gpuimg_variant_t variant, gpuimg_launch_t *info);

#ifdef __cplusplus
}
#endif

#endif
