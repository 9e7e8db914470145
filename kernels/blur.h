/* blur.h: the box blur launcher (kernels/blur*.cu). */
#ifndef GPUIMG_BLUR_H
#define GPUIMG_BLUR_H

#include "cuda_context.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Box blur of radius; tile is the tiled variant's shared-memory storage (the other
 * variants ignore it). 0, or -1 with the error set. */
int gpuimg_blur_gpu(gpuimg_cuda_t *ctx, const uint8_t *d_src, uint8_t *d_dst, int width, int height,
                    int channels, int radius, gpuimg_variant_t variant, gpuimg_tile_t tile,
                    gpuimg_launch_t *info);

#ifdef __cplusplus
}
#endif

#endif
