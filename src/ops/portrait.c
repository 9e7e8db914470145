/* portrait.c: the portrait operation (subject kept, background blurred) and its CPU reference.
 */
#include "ops.h"
#include "portrait.h"

int gpuimg_portrait_cpu(const gpuimg_image_t *src, const gpuimg_image_t *mask, int radius,
                        gpuimg_image_t *dst)
{
  /* Blur everything, then put the subject back: the window includes subject pixels.
   * Alpha is never blurred (SEMANTICS.md: portrait carries alpha through). */
  if (gpuimg_blur_cpu(src, radius, dst) < 0)
    return -1;
  size_t n = (size_t)src->width * (size_t)src->height;
  size_t c = (size_t)src->channels;
  int has_alpha = c == 2 || c == 4;
  for (size_t i = 0; i < n; i++) {
    if (mask->data[i] >= 128)
      for (size_t ch = 0; ch < c; ch++)
        dst->data[i * c + ch] = src->data[i * c + ch];
    else if (has_alpha)
      dst->data[i * c + c - 1] = src->data[i * c + c - 1];
  }
  return 0;
}

static void portrait_defaults(gpuimg_params_t *p)
{
  p->radius = 16;
  p->variant = GPUIMG_VARIANT_FAST;
  p->mask_path = NULL;
}

static int portrait_out_channels(int in)
{
  return in;
}

static int portrait_cpu_step(const gpuimg_params_t *p, const gpuimg_image_t *src,
                             const gpuimg_image_t *mask, gpuimg_image_t *dst)
{
  return gpuimg_portrait_cpu(src, mask, p->radius, dst);
}

#ifdef GPUIMG_HAVE_CUDA
static int portrait_gpu_step(gpuimg_cuda_t *ctx, const gpuimg_params_t *p, const uint8_t *d_src,
                             const uint8_t *d_mask, uint8_t *d_dst, int width, int height,
                             int channels, gpuimg_launch_t *info)
{
  return gpuimg_portrait_gpu(ctx, d_src, d_mask, d_dst, width, height, channels, p->radius,
                             p->variant, p->tile, info);
}
#endif

static const char *portrait_variant(const gpuimg_params_t *p)
{
  return gpuimg_variant_name(p->variant);
}

const gpuimg_op_t gpuimg_op_portrait = {
    .name = "portrait",
    .summary = "keep the subject (mask >= 128), blur the colour of everything else",
    .options_help = "-r, --radius N   background blur radius, 0..2047 (default 16)\n"
                    "--mask FILE      subject mask, same size as the image, first channel used\n"
                    "                 (default: the built-in sample's mask, sample input only)\n"
                    "--naive, --tiled blur variant on the CUDA backend (then a separate\n"
                    "                 composite kernel, whose divergence is counted)\n"
                    "--tile u8|float  tiled kernel's tile storage\n",
    .options =
        GPUIMG_OPT_RADIUS | GPUIMG_OPT_MASK | GPUIMG_OPT_NAIVE | GPUIMG_OPT_TILED | GPUIMG_OPT_TILE,
    .defaults = portrait_defaults,
    .out_channels = portrait_out_channels,
    .run_cpu = portrait_cpu_step,
#ifdef GPUIMG_HAVE_CUDA
    .run_gpu = portrait_gpu_step,
#endif
    .variant_name = portrait_variant,
};
