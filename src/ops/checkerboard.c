/* checkerboard.c: the checkerboard operation (the warp-divergence example): its declaration,
 * CPU reference and divergence prediction. */
#include "checkerboard_cpu.h"
#include "ops.h"
#include "checkerboard.h"

int gpuimg_checkerboard_cpu_rows(const gpuimg_image_t *src, int cell, int amount,
                                 gpuimg_image_t *dst, int y0, int y1)
{
  int c = src->channels;
  int colour = (c == 2 || c == 4) ? c - 1 : c; /* alpha stays */
  for (int y = y0; y < y1; y++) {
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

int gpuimg_checkerboard_cpu(const gpuimg_image_t *src, int cell, int amount, gpuimg_image_t *dst)
{
  return gpuimg_checkerboard_cpu_rows(src, cell, amount, dst, 0, src->height);
}

static int checkerboard_side(const void *arg, int x, int y)
{
  int cell = *(const int *)arg;
  return ((x / cell + y / cell) & 1) == 0;
}

void gpuimg_divergence_checkerboard(int w, int h, int cell, int bw, int bh, uint64_t *warps,
                                    uint64_t *divergent, uint8_t *map)
{
  gpuimg_divergence_predict(w, h, bw, bh, checkerboard_side, &cell, warps, divergent, map);
}

/* checkerboard's parameters. */
typedef struct {
  gpuimg_params_common_t common;
  int cell, amount;
} checkerboard_params_t;
GPUIMG_PARAMS_CHECK(checkerboard_params_t);

static const checkerboard_params_t checkerboard_defaults = {
    .common = {.variant = GPUIMG_VARIANT_FAST}, .cell = 1, .amount = 64};

static const gpuimg_option_t checkerboard_options[] = {
    {.long_name = "cell",
     .kind = GPUIMG_OPTION_INT,
     .offset = offsetof(checkerboard_params_t, cell),
     .min = 1,
     .max = INT32_MAX,
     .metavar = "K",
     .help = "cell size in pixels, >= 1 (default 1: per pixel)"},
    {.long_name = "amount",
     .kind = GPUIMG_OPTION_INT,
     .offset = offsetof(checkerboard_params_t, amount),
     .min = 0,
     .max = 255,
     .metavar = "A",
     .help = "saturating add/subtract, 0..255 (default 64)"},
    GPUIMG_OPTION_NAIVE("per-pixel CUDA kernel with the divergent branch"),
    {0},
};

static int checkerboard_cpu_rows(const void *params, const gpuimg_image_t *src,
                                 const gpuimg_image_t *mask, gpuimg_image_t *dst, int y0, int y1)
{
  const checkerboard_params_t *p = params;
  (void)mask;
  return gpuimg_checkerboard_cpu_rows(src, p->cell, p->amount, dst, y0, y1);
}

#ifdef GPUIMG_HAVE_CUDA
static int checkerboard_gpu_step(gpuimg_cuda_t *ctx, const void *params, const uint8_t *d_src,
                                 const uint8_t *d_mask, uint8_t *d_dst, int width, int height,
                                 int channels, gpuimg_launch_t *info)
{
  const checkerboard_params_t *p = params;
  (void)d_mask;
  return gpuimg_checkerboard_gpu(ctx, d_src, d_dst, width, height, channels, p->cell, p->amount,
                                 p->common.variant, info);
}
#endif

static void checkerboard_report(const void *params, const gpuimg_report_sink_t *sink)
{
  const checkerboard_params_t *p = params;
  sink->number(sink->ctx, "cell", p->cell);
  sink->number(sink->ctx, "amount", p->amount);
}

static void checkerboard_divergence(const void *params, const gpuimg_image_t *mask, int width,
                                    int height, int bw, int bh, uint64_t *warps,
                                    uint64_t *divergent, uint8_t *map)
{
  const checkerboard_params_t *p = params;
  (void)mask;
  gpuimg_divergence_checkerboard(width, height, p->cell, bw, bh, warps, divergent, map);
}

static int checkerboard_launch(const void *params, int w, int h, int c,
                               const gpuimg_launch_env_t *env, gpuimg_launch_t *l)
{
  const checkerboard_params_t *p = params;
  return gpuimg_checkerboard_launch(p->common.variant, w, h, c, env, l);
}

const gpuimg_op_t gpuimg_op_checkerboard = {
    .name = "checkerboard",
    .summary = "brighten even cells, darken odd cells (alpha untouched)",
    .options = checkerboard_options,
    GPUIMG_PARAMS(checkerboard_params_t, checkerboard_defaults),
    .run_cpu_rows = checkerboard_cpu_rows,
    GPUIMG_RUN_GPU(checkerboard_gpu_step),
    .launch = checkerboard_launch,
    .work = 1.7,
    .report = checkerboard_report,
    .divergence = checkerboard_divergence,
};
