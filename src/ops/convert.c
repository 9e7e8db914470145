/* convert.c: the convert operation: the identity, so that a command only changes the format,
 * applies the EXIF orientation (at decode) and keeps or strips the metadata. */
#include "ops.h"

#include <string.h>

/* convert's parameters: only the common part (it has no variant). */
typedef struct {
  gpuimg_params_common_t common;
} convert_params_t;
GPUIMG_PARAMS_CHECK(convert_params_t);

static const convert_params_t convert_defaults = {.common = {.variant = GPUIMG_VARIANT_FAST}};

static const gpuimg_option_t convert_options[] = {{0}};

/* The backends hand every step an output of its own: the rows are copied as they are. */
static int convert_cpu_rows(const void *params, const gpuimg_image_t *src,
                            const gpuimg_image_t *mask, gpuimg_image_t *dst, int y0, int y1)
{
  (void)params, (void)mask;
  size_t row = (size_t)src->width * (size_t)src->channels;
  memcpy(dst->data + (size_t)y0 * row, src->data + (size_t)y0 * row, (size_t)(y1 - y0) * row);
  return 0;
}

#ifdef GPUIMG_HAVE_CUDA
/* On the device, a device-to-device copy: no kernel. */
static int convert_gpu_step(gpuimg_cuda_t *ctx, const void *params, const uint8_t *d_src,
                            const uint8_t *d_mask, uint8_t *d_dst, int width, int height,
                            int channels, gpuimg_launch_t *info)
{
  (void)params, (void)d_mask;
  return gpuimg_cuda_copy(ctx, d_dst, d_src, gpuimg_image_bytes(width, height, channels), info);
}
#endif

static int convert_launch(const void *params, int w, int h, int c, const gpuimg_launch_env_t *env,
                          gpuimg_launch_t *l)
{
  (void)params, (void)w, (void)h, (void)c, (void)env, (void)l;
  return GPUIMG_LAUNCH_COPY;
}

static const char *convert_variant_name(const void *params)
{
  (void)params;
  return "";
}

const gpuimg_op_t gpuimg_op_convert = {
    .name = "convert",
    .summary = "no change to the pixels: a format conversion, orientation applied",
    .options = convert_options,
    GPUIMG_PARAMS(convert_params_t, convert_defaults),
    .run_cpu_rows = convert_cpu_rows,
    GPUIMG_RUN_GPU(convert_gpu_step),
    .launch = convert_launch,
    .variant_name = convert_variant_name,
    .work = 0.05,
};
