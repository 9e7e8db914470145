/* equalize.c: the equalize operation (histogram equalization of each colour channel, as
 * ImageMagick's -equalize and libvips' hist_equal do by default): its table function, its
 * declaration, and the two phases of what the histogram operations share (lut_ops.c). */
#include "lut_ops.h"

/* Channel k's table from its histogram h of n values: the cumulative count cdf(v) of the values
 * up to v, cdf_min that of the smallest value present; v becomes
 * round(255 * (cdf(v) - cdf_min) / (n - cdf_min)), halves up, in integers; a channel of one
 * value is kept. */
static void equalize_channel(const uint64_t *h, uint8_t *lut)
{
  uint64_t n = 0, cdf = 0, cdf_min = 0;
  for (int v = 0; v < GPUIMG_STATS_BINS; v++)
    n += h[v];
  for (int v = 0; v < GPUIMG_STATS_BINS && !cdf_min; v++)
    cdf_min = h[v];
  for (int v = 0; v < GPUIMG_STATS_BINS; v++) {
    cdf += h[v];
    if (n == cdf_min)
      lut[v] = (uint8_t)v;
    else if (cdf < cdf_min)
      lut[v] = 0; /* below the smallest value: none there */
    else
      lut[v] = (uint8_t)(((cdf - cdf_min) * 510 + (n - cdf_min)) / (2 * (n - cdf_min)));
  }
}

static void equalize_lut(const uint64_t *hist, int channels, const void *params, uint8_t *lut)
{
  (void)params;
  gpuimg_lut_identity(channels, lut);
  for (int k = 0; k < gpuimg_lut_colours(channels); k++)
    equalize_channel(hist + k * GPUIMG_STATS_BINS, lut + k * GPUIMG_STATS_BINS);
}

static const gpuimg_lut_params_t equalize_defaults = {.common = {.variant = GPUIMG_VARIANT_FAST},
                                                      .histogram = GPUIMG_HISTOGRAM_SHARED};

static const gpuimg_option_t equalize_options[] = {GPUIMG_LUT_HISTOGRAM_OPTION, {0}};

static int equalize_cpu(const void *params, const gpuimg_image_t *src, const gpuimg_image_t *mask,
                        gpuimg_image_t *dst)
{
  (void)mask;
  return gpuimg_lut_cpu(src, dst, equalize_lut, params);
}

#ifdef GPUIMG_HAVE_CUDA
static int equalize_gpu(gpuimg_cuda_t *ctx, const void *params, const uint8_t *d_src,
                        const uint8_t *d_mask, uint8_t *d_dst, int width, int height, int channels,
                        gpuimg_launch_t *info)
{
  const gpuimg_lut_params_t *p = params;
  (void)d_mask;
  return gpuimg_lut_gpu(ctx, d_src, d_dst, width, height, channels,
                        (gpuimg_histogram_t)p->histogram, equalize_lut, params, info);
}
#endif

const gpuimg_op_t gpuimg_op_equalize = {
    .name = "equalize",
    .summary = "histogram equalization of each colour channel (alpha kept)",
    .options = equalize_options,
    GPUIMG_PARAMS(gpuimg_lut_params_t, equalize_defaults),
    .run_cpu = equalize_cpu,
    GPUIMG_RUN_GPU(equalize_gpu),
    .work = 0.3,
    GPUIMG_LUT_OP_FIELDS,
};
