/* lut.h: the launcher of the two-phase histogram operations (kernels/lut.cu): equalize and
 * normalize: the histogram (stats's kernels), a table per channel made from it, the pixels
 * mapped through the table; and the shape of the map's launch. */
#ifndef GPUIMG_LUT_H
#define GPUIMG_LUT_H

#include "cuda_context.h"
#include "stats.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Makes the tables of an image of channels channels from its histograms: hist[k * 256 + v]
 * values v in channel k, lut[k * 256 + v] what v becomes there. params: the operation's. The
 * same function serves the CPU reference and the CUDA launcher (on the host, between the two
 * kernels), so both map through the same bytes. */
typedef void gpuimg_lut_fn(const uint64_t *hist, int channels, const void *params, uint8_t *lut);

/* The width x height image of channels channels at d_src mapped into d_dst through the tables
 * make gives of its histograms (histogram's kernel). info: the map kernel's launch, its ms the
 * whole step. 0, or -1 with the error set. */
int gpuimg_lut_gpu(gpuimg_cuda_t *ctx, const uint8_t *d_src, uint8_t *d_dst, int width, int height,
                   int channels, gpuimg_histogram_t histogram, gpuimg_lut_fn *make,
                   const void *params, gpuimg_launch_t *info);

/* The launch of the map kernel gpuimg_lut_gpu() makes in env (the model makes the same): a
 * grid-stride loop over the image's bytes in 256-thread blocks, as many as the GPU holds at once
 * (fewer for a small image), each block's tables in shared memory; lane L maps byte L (coalesced
 * loads and stores of 1 byte). Two launches: the histogram's and this. */
static inline int gpuimg_lut_launch(int width, int height, int channels,
                                    const gpuimg_launch_env_t *env, gpuimg_launch_t *l)
{
  long long bytes = (long long)width * height * channels, grid = gpuimg_launch_blocks(bytes, 256);
  char args[4] = {(char)('0' + channels), '\0'};
  if (env->resident > 0 && env->resident < grid)
    grid = env->resident;
  gpuimg_launch_set(l, "lut_map_kernel", args, (unsigned)grid, 1, 256, 1, 0);
  l->grid_is_resident = 1;
  l->launches = 2;
  gpuimg_launch_access(l, GPUIMG_ACCESS_LOAD, 1, 1, 0, 0);
  gpuimg_launch_access(l, GPUIMG_ACCESS_STORE, 1, 1, 0, 0);
  return GPUIMG_LAUNCH_KERNEL;
}

#ifdef __cplusplus
}
#endif

#endif
