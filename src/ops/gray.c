/* gray.c: the gray operation: its declaration and the CPU reference (Rec. 601 luma, fixed
 * point). */
#include "gray_cpu.h"
#include "ops.h"
#include "gray.h"

#include <string.h>

/* Luma weights scaled by 2^16 (19595 + 38470 + 7471 = 65536); kernels/gray.cu uses the same. */
enum { GRAY_WR = 19595, GRAY_WG = 38470, GRAY_WB = 7471 };

static int gray_out_channels(int in)
{
  return in == 4 ? 2 : in == 3 ? 1 : in;
}

/* The rounded luma of the RGB at p. */
static inline uint8_t luma(const uint8_t *p)
{
  return (uint8_t)((GRAY_WR * p[0] + GRAY_WG * p[1] + GRAY_WB * p[2] + 32768u) >> 16);
}

/* n RGB pixels to gray: a loop the compiler vectorizes where the CPU has AVX2 (its byte
 * shuffles gather every third byte: 1.31 -> 0.52 ms for a 1024x768 image on one thread of
 * a 2-core Xeon, docs/performance.md). */
GPUIMG_CPU_CLONES static void gray_rgb(const uint8_t *s, uint8_t *d, size_t n)
{
  for (size_t i = 0; i < n; i++)
    d[i] = luma(s + 3 * i);
}

int gpuimg_gray_cpu_rows(const gpuimg_image_t *src, gpuimg_image_t *dst, int y0, int y1)
{
  size_t first = (size_t)y0 * (size_t)src->width, n = (size_t)(y1 - y0) * (size_t)src->width;
  const uint8_t *s = src->data + first * (size_t)src->channels;
  uint8_t *d = dst->data + first * (size_t)dst->channels;

  if (src->channels <= 2) {
    memcpy(d, s, n * (size_t)src->channels);
    return 0;
  }
  if (src->channels == 3) {
    gray_rgb(s, d, n);
    return 0;
  }
  for (size_t i = 0; i < n; i++, s += 4, d += 2) {
    d[0] = luma(s);
    d[1] = s[3];
  }
  return 0;
}

int gpuimg_gray_cpu(const gpuimg_image_t *src, gpuimg_image_t *dst)
{
  return gpuimg_gray_cpu_rows(src, dst, 0, src->height);
}

/* gray's parameters: only the common part (its variant). */
typedef struct {
  gpuimg_params_common_t common;
} gray_params_t;
GPUIMG_PARAMS_CHECK(gray_params_t);

static const gray_params_t gray_defaults = {.common = {.variant = GPUIMG_VARIANT_FAST}};

static const gpuimg_option_t gray_options[] = {
    GPUIMG_OPTION_NAIVE("per-pixel CUDA kernel in 16x16 blocks (the teaching one)"),
    {.long_name = "grid-stride",
     .kind = GPUIMG_OPTION_FLAG,
     .offset = offsetof(gpuimg_params_common_t, variant),
     .value = GPUIMG_VARIANT_GRID_STRIDE,
     .help = "CUDA grid-stride loop: SMs x blocks per SM, each thread looping\n"
             "over pixels (one wave: no tail)"},
    {0},
};

static int gray_cpu_rows(const void *params, const gpuimg_image_t *src, const gpuimg_image_t *mask,
                         gpuimg_image_t *dst, int y0, int y1)
{
  (void)params;
  (void)mask;
  return gpuimg_gray_cpu_rows(src, dst, y0, y1);
}

#ifdef GPUIMG_HAVE_CUDA
static int gray_gpu_step(gpuimg_cuda_t *ctx, const void *params, const uint8_t *d_src,
                         const uint8_t *d_mask, uint8_t *d_dst, int width, int height, int channels,
                         gpuimg_launch_t *info)
{
  const gray_params_t *p = params;
  (void)d_mask;
  return gpuimg_gray_gpu(ctx, d_src, d_dst, width, height, channels, p->common.variant, info);
}
#endif

static int gray_launch(const void *params, int w, int h, int c, const gpuimg_launch_env_t *env,
                       gpuimg_launch_t *l)
{
  return gpuimg_gray_launch(((const gray_params_t *)params)->common.variant, w, h, c, env, l);
}

const gpuimg_op_t gpuimg_op_gray = {
    .name = "gray",
    .summary = "Rec. 601 luma: RGB -> gray, RGBA -> gray+alpha, gray unchanged",
    .options = gray_options,
    GPUIMG_PARAMS(gray_params_t, gray_defaults),
    .out_channels = gray_out_channels,
    .run_cpu_rows = gray_cpu_rows,
    GPUIMG_RUN_GPU(gray_gpu_step),
    .launch = gray_launch,
    .work = 0.42,
};
