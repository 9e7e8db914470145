/* checkerboard.c: the checkerboard operation (the warp-divergence example) and its CPU
 * reference. */
#include "ops.h"
#include "checkerboard.h"

int gpuimg_checkerboard_cpu(const gpuimg_image_t *src, int cell, int amount, gpuimg_image_t *dst)
{
  int c = src->channels;
  int colour = (c == 2 || c == 4) ? c - 1 : c; /* alpha stays */
  for (int y = 0; y < src->height; y++) {
    size_t off = (size_t)y * (size_t)src->width * (size_t)c;
    const uint8_t *s = src->data + off;
    uint8_t *d = dst->data + off;
    int row_parity = (y / cell) & 1;
    for (int x = 0; x < src->width; x++, s += c, d += c) {
      int even = (((x / cell) & 1) ^ row_parity) == 0;
      for (int ch = 0; ch < colour; ch++) {
        int v = even ? s[ch] + amount : s[ch] - amount;
        d[ch] = (uint8_t)(v > 255 ? 255 : v < 0 ? 0 : v);
      }
      if (colour < c)
        d[c - 1] = s[c - 1];
    }
  }
  return 0;
}

static void checkerboard_defaults(gpuimg_params_t *p)
{
  p->cell = 1;
  p->amount = 64;
  p->variant = GPUIMG_VARIANT_FAST;
}

static int checkerboard_out_channels(int in)
{
  return in;
}

static int checkerboard_cpu_step(const gpuimg_params_t *p, const gpuimg_image_t *src,
                                 const gpuimg_image_t *mask, gpuimg_image_t *dst)
{
  (void)mask;
  return gpuimg_checkerboard_cpu(src, p->cell, p->amount, dst);
}

#ifdef GPUIMG_HAVE_CUDA
static int checkerboard_gpu_step(gpuimg_cuda_t *ctx, const gpuimg_params_t *p, const uint8_t *d_src,
                                 const uint8_t *d_mask, uint8_t *d_dst, int width, int height,
                                 int channels, gpuimg_launch_t *info)
{
  (void)d_mask;
  return gpuimg_checkerboard_gpu(ctx, d_src, d_dst, width, height, channels, p->cell, p->amount,
                                 p->variant, info);
}
#endif

static const char *checkerboard_variant(const gpuimg_params_t *p)
{
  return p->variant == GPUIMG_VARIANT_NAIVE ? "naive" : "fast";
}

const gpuimg_op_t gpuimg_op_checkerboard = {
    .name = "checkerboard",
    .summary = "brighten even cells, darken odd cells (alpha untouched)",
    .options_help = "--cell K         cell size in pixels, >= 1 (default 1: per pixel)\n"
                    "--amount A       saturating add/subtract, 0..255 (default 64)\n"
                    "--naive          per-pixel CUDA kernel with the divergent branch\n",
    .options = GPUIMG_OPT_CELL | GPUIMG_OPT_AMOUNT | GPUIMG_OPT_NAIVE,
    .defaults = checkerboard_defaults,
    .out_channels = checkerboard_out_channels,
    .run_cpu = checkerboard_cpu_step,
#ifdef GPUIMG_HAVE_CUDA
    .run_gpu = checkerboard_gpu_step,
#endif
    .variant_name = checkerboard_variant,
};
