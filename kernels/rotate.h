/* rotate.h: the launcher of the orientation kernels (kernels/rotate.cu): rotate, flip, flop,
 * transpose, transverse, and EXIF autorotation on the device. */
#ifndef GPUIMG_ROTATE_H
#define GPUIMG_ROTATE_H

#include "cuda_context.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Turns the width x height image of 1 to 4 channels at d_src as EXIF orientation
 * orientation (1..8, src/base/orientation.h) asks into d_dst (height x width for 5..8), with
 * variant's kernel: naive (one thread per source pixel), tiled (a 32x32 tile in shared memory,
 * unpadded) or fast (the same tile padded by one 4-byte word a row). The same bytes as
 * gpuimg_orientation_rows(). 0, or -1 with the error set. */
int gpuimg_rotate_gpu(gpuimg_cuda_t *ctx, const uint8_t *d_src, uint8_t *d_dst, int width,
                      int height, int channels, int orientation, gpuimg_variant_t variant,
                      gpuimg_launch_t *info);

#ifdef __cplusplus
}
#endif

#endif
