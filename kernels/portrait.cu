// portrait.cu: keep the subject (mask >= 128), blur the rest.
#include "cuda_internal.cuh"
#include "portrait.h"

namespace
{

// portrait_composite_kernel<C, COUNT>: after a naive or tiled blur into dst, one thread
// per pixel copies the source pixel back where the mask marks the subject (and the alpha
// everywhere). Only warps that straddle the subject's outline diverge; warps wholly
// inside or outside take one path. With COUNT, warps vote on the branch and the block
// tallies the divergent ones; where d_times is set (--explain-image), thread 0 records the
// block's SM, start and end. (The fast variant folds this test into the blur instead.)
template <int C, bool COUNT>
__global__ void
portrait_composite_kernel(const uint8_t *__restrict__ src, const uint8_t *__restrict__ mask,
                          uint8_t *__restrict__ dst, int w, int h, unsigned long long *d_counts,
                          gpuimg_block_time_t *d_times)
{
  __shared__ unsigned s_warps, s_div;
  if (COUNT && d_times)
    gpuimg_block_clock(d_times, false);
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  bool inside = x < w && y < h;
  size_t p = inside ? (size_t)y * w + x : 0;
  bool subject = inside && mask[p] >= 128;
  if (COUNT) {
    if (threadIdx.x == 0 && threadIdx.y == 0)
      s_warps = s_div = 0;
    __syncthreads();
    gpuimg_div_vote(inside, subject, &s_warps, &s_div);
  }
  if (subject) {
#pragma unroll
    for (int c = 0; c < C; c++)
      dst[p * C + c] = src[p * C + c];
  } else if (inside && (C == 2 || C == 4)) {
    dst[p * C + C - 1] = src[p * C + C - 1]; // alpha is never blurred
  }
  if (COUNT) {
    __syncthreads();
    if (threadIdx.x == 0 && threadIdx.y == 0)
      gpuimg_div_flush(d_counts, s_warps, s_div);
    if (d_times)
      gpuimg_block_clock(d_times, true);
  }
}

template <int C>
int composite(gpuimg_cuda_t *ctx, const uint8_t *d_src, const uint8_t *d_mask, uint8_t *d_dst,
              int w, int h, gpuimg_launch_t *info)
{
  // The report shows the composite's shape: it is the kernel that diverges.
  int blur_launches = info->launches;
  gpuimg_launch_env_t env = gpuimg_cuda_env(ctx);
  gpuimg_portrait_composite_launch(w, h, C, &env, info);
  info->launches += blur_launches;
  dim3 grid = gpuimg_launch_grid(info), block = gpuimg_launch_block(info);
  unsigned long long blocks = (unsigned long long)grid.x * grid.y;
  gpuimg_block_time_t *d_times;
  if (gpuimg_cuda_check_grid(ctx, grid, "portrait_composite_kernel") < 0 ||
      gpuimg_block_times_begin(ctx, blocks, &d_times) < 0)
    return -1;
  if (ctx->count_divergence || ctx->record_blocks) // the counting instance records blocks
    portrait_composite_kernel<C, true>
        <<<grid, block, 0, ctx->stream>>>(d_src, d_mask, d_dst, w, h, ctx->d_counts, d_times);
  else
    portrait_composite_kernel<C, false>
        <<<grid, block, 0, ctx->stream>>>(d_src, d_mask, d_dst, w, h, NULL, NULL);
  GPUIMG_CUDA_CHECK_LAUNCH("portrait_composite_kernel");
  gpuimg_launch_measure(ctx, info, portrait_composite_kernel<C, false>);
  return gpuimg_block_times_end(ctx, blocks);
}
} // namespace

extern "C" int gpuimg_portrait_gpu(gpuimg_cuda_t *ctx, const uint8_t *d_src, const uint8_t *d_mask,
                                   uint8_t *d_dst, int width, int height, int channels, int radius,
                                   gpuimg_variant_t variant, gpuimg_tile_t tile,
                                   gpuimg_launch_t *info)
{
  if (gpuimg_cuda_timer_start(ctx) < 0)
    return -1;
  if (variant == GPUIMG_VARIANT_FAST) {
    if (gpuimg_blur_enqueue(ctx, d_src, d_dst, width, height, channels, radius, variant, tile,
                            d_mask, info) < 0)
      return -1;
  } else {
    if (((ctx->count_divergence || ctx->record_blocks) && gpuimg_div_begin(ctx) < 0) ||
        gpuimg_blur_enqueue(ctx, d_src, d_dst, width, height, channels, radius, variant, tile, NULL,
                            info) < 0)
      return -1;
    int rc = channels == 1   ? composite<1>(ctx, d_src, d_mask, d_dst, width, height, info)
             : channels == 2 ? composite<2>(ctx, d_src, d_mask, d_dst, width, height, info)
             : channels == 3 ? composite<3>(ctx, d_src, d_mask, d_dst, width, height, info)
                             : composite<4>(ctx, d_src, d_mask, d_dst, width, height, info);
    if (rc < 0)
      return -1;
  }
  if (gpuimg_cuda_timer_stop(ctx, &info->ms) < 0)
    return -1;
  return variant != GPUIMG_VARIANT_FAST && (ctx->count_divergence || ctx->record_blocks)
             ? gpuimg_div_end(ctx, info)
             : 0;
}
