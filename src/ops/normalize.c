/* normalize.c: the normalize operation (each colour channel stretched to 0..255 between black
 * and white points from its histogram, as ImageMagick's -contrast-stretch): its table function,
 * its declaration, and the two phases of what the histogram operations share (lut_ops.c). */
#include "lut_ops.h"

/* Channel k's table from its histogram h of n values, c = floor(n * clip / 100) clipped at each
 * end: the black point lo, the smallest v with more than c values at or below it, the white point
 * hi, the largest v with more than c values at or above it; v <= lo becomes 0, v >= hi 255, and
 * between them round(255 * (v - lo) / (hi - lo)), halves up, in integers. hi <= lo (one value
 * left): the channel is kept. */
static void normalize_channel(const uint64_t *h, int clip, uint8_t *lut)
{
  uint64_t n = 0, below = 0, above = 0;
  int lo = 0, hi = GPUIMG_STATS_BINS - 1;
  for (int v = 0; v < GPUIMG_STATS_BINS; v++)
    n += h[v];
  uint64_t c = n / 100 * (uint64_t)clip + n % 100 * (uint64_t)clip / 100;
  while (lo < GPUIMG_STATS_BINS - 1 && (below += h[lo]) <= c)
    lo++;
  while (hi > 0 && (above += h[hi]) <= c)
    hi--;
  for (int v = 0; v < GPUIMG_STATS_BINS; v++)
    lut[v] = hi <= lo  ? (uint8_t)v
             : v <= lo ? 0
             : v >= hi ? 255
                       : (uint8_t)(((v - lo) * 510 + (hi - lo)) / (2 * (hi - lo)));
}

static void normalize_lut(const uint64_t *hist, int channels, const void *params, uint8_t *lut)
{
  const gpuimg_lut_params_t *p = params;
  gpuimg_lut_identity(channels, lut);
  for (int k = 0; k < gpuimg_lut_colours(channels); k++)
    normalize_channel(hist + k * GPUIMG_STATS_BINS, p->clip, lut + k * GPUIMG_STATS_BINS);
}

static const gpuimg_lut_params_t normalize_defaults = {.common = {.variant = GPUIMG_VARIANT_FAST},
                                                       .histogram = GPUIMG_HISTOGRAM_SHARED};

static const gpuimg_option_t normalize_options[] = {
    {.long_name = "clip",
     .kind = GPUIMG_OPTION_INT,
     .offset = offsetof(gpuimg_lut_params_t, clip),
     .min = 0,
     .max = 49,
     .metavar = "P",
     .help = "percent of each channel's values clipped to black and to\n"
             "white, 0 to 49 (default 0: its minimum and maximum)"},
    GPUIMG_LUT_HISTOGRAM_OPTION,
    {0},
};

static int normalize_cpu(const void *params, const gpuimg_image_t *src, const gpuimg_image_t *mask,
                         gpuimg_image_t *dst)
{
  (void)mask;
  return gpuimg_lut_cpu(src, dst, normalize_lut, params);
}

#ifdef GPUIMG_HAVE_CUDA
static int normalize_gpu(gpuimg_cuda_t *ctx, const void *params, const uint8_t *d_src,
                         const uint8_t *d_mask, uint8_t *d_dst, int width, int height, int channels,
                         gpuimg_launch_t *info)
{
  const gpuimg_lut_params_t *p = params;
  (void)d_mask;
  return gpuimg_lut_gpu(ctx, d_src, d_dst, width, height, channels,
                        (gpuimg_histogram_t)p->histogram, normalize_lut, params, info);
}
#endif

static void normalize_report(const void *params, const gpuimg_report_sink_t *sink)
{
  const gpuimg_lut_params_t *p = params;
  sink->number(sink->ctx, "clip", p->clip);
}

const gpuimg_op_t gpuimg_op_normalize = {
    .name = "normalize",
    .summary = "stretch each colour channel to 0..255 (alpha kept)",
    .options = normalize_options,
    GPUIMG_PARAMS(gpuimg_lut_params_t, normalize_defaults),
    .run_cpu = normalize_cpu,
    GPUIMG_RUN_GPU(normalize_gpu),
    .report = normalize_report,
    .work = 0.3,
    GPUIMG_LUT_OP_FIELDS,
};
