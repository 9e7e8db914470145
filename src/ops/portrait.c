/* portrait.c: the portrait operation (subject kept, background blurred): its declaration and
 * CPU reference. */
#include "blur_cpu.h"
#include "ops.h"
#include "portrait.h"
#include "portrait_cpu.h"

int gpuimg_portrait_cpu_rows(const gpuimg_image_t *src, const gpuimg_image_t *mask, int radius,
                             gpuimg_image_t *dst, int y0, int y1)
{
  /* Blur everything, then put the subject back: the window includes subject pixels.
   * Alpha is never blurred (SEMANTICS.md: portrait carries alpha through). */
  if (gpuimg_blur_cpu_rows(src, radius, dst, y0, y1) < 0)
    return -1;
  size_t end = (size_t)src->width * (size_t)y1;
  size_t c = (size_t)src->channels;
  int has_alpha = c == 2 || c == 4;
  for (size_t i = (size_t)src->width * (size_t)y0; i < end; i++) {
    if (mask->data[i] >= 128)
      for (size_t ch = 0; ch < c; ch++)
        dst->data[i * c + ch] = src->data[i * c + ch];
    else if (has_alpha)
      dst->data[i * c + c - 1] = src->data[i * c + c - 1];
  }
  return 0;
}

int gpuimg_portrait_cpu(const gpuimg_image_t *src, const gpuimg_image_t *mask, int radius,
                        gpuimg_image_t *dst)
{
  return gpuimg_portrait_cpu_rows(src, mask, radius, dst, 0, src->height);
}

typedef gpuimg_radius_params_t portrait_params_t;
GPUIMG_PARAMS_CHECK(portrait_params_t);

static const portrait_params_t portrait_defaults = {.common = {.variant = GPUIMG_VARIANT_FAST},
                                                    .radius = 16};

static const gpuimg_option_t portrait_options[] = {
    GPUIMG_OPTION_RADIUS(portrait_params_t, "background blur radius, 0..2047 (default 16)"),
    GPUIMG_OPTION_MASK("subject mask, same size as the image, first channel used\n"
                       "(default: the built-in sample's mask, sample input only)"),
    GPUIMG_OPTION_NAIVE("naive blur on the CUDA backend (then a separate\n"
                        "composite kernel, whose divergence is counted)"),
    GPUIMG_OPTION_TILED("tiled blur on the CUDA backend (likewise)"),
    GPUIMG_OPTION_TILE("tiled kernel's tile storage"),
    {0},
};

static int portrait_cpu_rows(const void *params, const gpuimg_image_t *src,
                             const gpuimg_image_t *mask, gpuimg_image_t *dst, int y0, int y1)
{
  const portrait_params_t *p = params;
  return gpuimg_portrait_cpu_rows(src, mask, p->radius, dst, y0, y1);
}

#ifdef GPUIMG_HAVE_CUDA
static int portrait_gpu_step(gpuimg_cuda_t *ctx, const void *params, const uint8_t *d_src,
                             const uint8_t *d_mask, uint8_t *d_dst, int width, int height,
                             int channels, gpuimg_launch_t *info)
{
  const portrait_params_t *p = params;
  return gpuimg_portrait_gpu(ctx, d_src, d_mask, d_dst, width, height, channels, p->radius,
                             p->common.variant, p->common.tile, info);
}
#endif

static void portrait_report(const void *params, const gpuimg_report_sink_t *sink)
{
  const portrait_params_t *p = params;
  sink->number(sink->ctx, "radius", p->radius);
  gpuimg_ops_report_mask(params, sink);
  gpuimg_ops_report_tile(params, sink);
}

static int portrait_launch(const void *params, int w, int h, int c, const gpuimg_launch_env_t *env,
                           gpuimg_launch_t *l)
{
  const portrait_params_t *p = params;
  return gpuimg_portrait_launch(p->common.variant, p->common.tile, p->radius, w, h, c, env, l);
}

/* The composite kernel's branch is the mask's. */
static void portrait_divergence(const void *params, const gpuimg_image_t *mask, int width,
                                int height, int bw, int bh, uint64_t *warps, uint64_t *divergent,
                                uint8_t *map)
{
  (void)params, (void)width, (void)height;
  gpuimg_divergence_mask(mask, bw, bh, warps, divergent, map);
}

const gpuimg_op_t gpuimg_op_portrait = {
    .name = "portrait",
    .summary = "keep the subject (mask >= 128), blur the colour of everything else",
    .options = portrait_options,
    GPUIMG_PARAMS(portrait_params_t, portrait_defaults),
    .needs_mask = 1,
    .run_cpu_rows = portrait_cpu_rows,
    GPUIMG_RUN_GPU(portrait_gpu_step),
    .launch = portrait_launch,
    .work = 1.16,
    .report = portrait_report,
    .divergence = portrait_divergence,
};
