/* orient_ops.c: the parts of the orientation operations' declarations they share (rotate,
 * flip, flop, transpose, transverse). */
#include "orient_ops.h"

#include "orientation.h"
#include "rotate.h"

GPUIMG_PARAMS_CHECK(gpuimg_orient_params_t);

const gpuimg_option_t gpuimg_orient_options[] = {
    GPUIMG_ORIENT_VARIANT_OPTIONS,
    {0},
};

int gpuimg_orient_out_size(const void *params, int in_w, int in_h, int *out_w, int *out_h)
{
  const gpuimg_orient_params_t *p = params;
  gpuimg_orientation_t t = gpuimg_orientation_make(p->orientation, in_w, in_h);
  *out_w = t.out_w;
  *out_h = t.out_h;
  return 0;
}

int gpuimg_orient_cpu_rows(const void *params, const gpuimg_image_t *src,
                           const gpuimg_image_t *mask, gpuimg_image_t *dst, int y0, int y1)
{
  const gpuimg_orient_params_t *p = params;
  (void)mask;
  gpuimg_orientation_rows(p->orientation, src, dst, y0, y1);
  return 0;
}

int gpuimg_orient_launch(const void *params, int w, int h, int c, const gpuimg_launch_env_t *env,
                         gpuimg_launch_t *l)
{
  const gpuimg_orient_params_t *p = params;
  return gpuimg_rotate_launch(p->common.variant, p->orientation, w, h, c, env, l);
}

#ifdef GPUIMG_HAVE_CUDA
int gpuimg_orient_gpu_step(gpuimg_cuda_t *ctx, const void *params, const uint8_t *d_src,
                           const uint8_t *d_mask, uint8_t *d_dst, int width, int height,
                           int channels, gpuimg_launch_t *info)
{
  const gpuimg_orient_params_t *p = params;
  (void)d_mask;
  return gpuimg_rotate_gpu(ctx, d_src, d_dst, width, height, channels, p->orientation,
                           p->common.variant, info);
}
#endif
