/* portrait.h: the portrait launcher (kernels/portrait.cu). */
#ifndef GPUIMG_PORTRAIT_H
#define GPUIMG_PORTRAIT_H

#include "cuda_context.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Blurs all but the subject. d_mask: width x height, one byte per pixel (>= 128 =
 * subject); tile as for gpuimg_blur_gpu(). 0, or -1 with the error set. */
int gpuimg_portrait_gpu(gpuimg_cuda_t *ctx, const uint8_t *d_src, const uint8_t *d_mask,
                        uint8_t *d_dst, int width, int height, int channels, int radius,
                        gpuimg_variant_t variant, gpuimg_tile_t tile, gpuimg_launch_t *info);

#ifdef __cplusplus
}
#endif

#endif
