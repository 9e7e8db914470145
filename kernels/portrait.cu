// portrait.cu: keep the subject (mask >= 128), blur the rest.
#include "cuda_internal.cuh"

namespace {

// portrait_composite_kernel<C>: after a naive or tiled blur into dst, one thread per
// pixel copies the source pixel back where the mask marks the subject. Only warps that
// straddle the subject's outline diverge; warps wholly inside or outside take one path.
// (The fast variant folds this test into the blur's column pass instead.)
template <int C>
__global__ void portrait_composite_kernel(const uint8_t *__restrict__ src,
                                          const uint8_t *__restrict__ mask,
                                          uint8_t *__restrict__ dst, int w, int h)
{
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= w || y >= h)
    return;
  size_t p = (size_t)y * w + x;
  if (mask[p] >= 128) {
#pragma unroll
    for (int c = 0; c < C; c++)
      dst[p * C + c] = src[p * C + c];
  } else if (C == 2 || C == 4) {
    dst[p * C + C - 1] = src[p * C + C - 1]; // alpha is never blurred
  }
}

template <int C>
int composite(gpuimg_cuda_t *ctx, const uint8_t *d_src, const uint8_t *d_mask, uint8_t *d_dst,
              int w, int h)
{
  dim3 block = gpuimg_block2d(ctx, 32, 8), grid = gpuimg_grid2d(block, w, h);
  if (gpuimg_cuda_check_grid(ctx, grid, "portrait_composite_kernel") < 0)
    return -1;
  portrait_composite_kernel<C><<<grid, block, 0, ctx->stream>>>(d_src, d_mask, d_dst, w, h);
  GPUIMG_CUDA_CHECK_LAUNCH("portrait_composite_kernel");
  return 0;
}

} // namespace

extern "C" int gpuimg_portrait_gpu(gpuimg_cuda_t *ctx, const uint8_t *d_src,
                                   const uint8_t *d_mask, uint8_t *d_dst, int width, int height,
                                   int channels, int radius, gpuimg_variant_t variant,
                                   gpuimg_launch_t *info)
{
  if (gpuimg_cuda_timer_start(ctx) < 0)
    return -1;
  if (variant == GPUIMG_VARIANT_FAST) {
    if (gpuimg_blur_enqueue(ctx, d_src, d_dst, width, height, channels, radius, variant, d_mask,
                            info) < 0)
      return -1;
  } else {
    if (gpuimg_blur_enqueue(ctx, d_src, d_dst, width, height, channels, radius, variant, NULL,
                            info) < 0)
      return -1;
    int rc = channels == 1   ? composite<1>(ctx, d_src, d_mask, d_dst, width, height)
             : channels == 2 ? composite<2>(ctx, d_src, d_mask, d_dst, width, height)
             : channels == 3 ? composite<3>(ctx, d_src, d_mask, d_dst, width, height)
                             : composite<4>(ctx, d_src, d_mask, d_dst, width, height);
    if (rc < 0)
      return -1;
    info->launches++;
  }
  return gpuimg_cuda_timer_stop(ctx, &info->ms);
}
