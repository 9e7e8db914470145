// blur.cu: box blur on the GPU: the entry points, which pick the variant's design
// (blur_teaching.cu: naive and tiled; blur_fast.cu and blur_twopass.cu: running sums).
#include "blur.h"
#include "blur_internal.cuh"

namespace gpuimg_blur
{
namespace
{

BlurShape blur_shape(int w, int h, int r)
{
  BlurShape s;
  s.w = w;
  s.h = h;
  s.r = r;
  s.count = (uint32_t)(2 * r + 1) * (uint32_t)(2 * r + 1);
  s.half = s.count / 2;
  s.inv = 1.0f / (float)s.count;
  // Granlund-Montgomery round-up divisor, exact for every 32-bit x (count >= 2).
  int l = 0;
  while (((uint64_t)1 << l) < s.count)
    l++;
  s.div_m = (uint32_t)((((uint64_t)1 << 32) * (((uint64_t)1 << l) - s.count)) / s.count + 1);
  s.div_s = l > 0 ? l - 1 : 0;
  // For x < 2^24 (every window sum plus half while r <= 127) a multiply-high and one shift
  // are exact: with k = floor(log2 count) and m = ceil(2^(32+k) / count) < 2^32 (count is
  // odd, never a power of two past 1), the error m * count - 2^(32+k) < count <= 2^(k+1)
  // keeps x * error below 2^(32+k). Checked exhaustively for r = 1..127.
  s.small_m = 0;
  s.small_s = 0;
  if (r >= 1 && r <= 127) {
    int k = 0;
    while (((uint64_t)2 << k) <= s.count)
      k++;
    s.small_m = (uint32_t)((((uint64_t)1 << (32 + k)) + s.count - 1) / s.count);
    s.small_s = k;
  }
  return s;
}

template <int C>
int enqueue(gpuimg_cuda_t *ctx, const uint8_t *d_src, uint8_t *d_dst, BlurShape s,
            gpuimg_variant_t variant, gpuimg_tile_t tile, const uint8_t *d_mask,
            gpuimg_launch_t *info)
{
  if (variant == GPUIMG_VARIANT_NAIVE)
    return enqueue_naive<C>(ctx, d_src, d_dst, s, info);
  if (variant == GPUIMG_VARIANT_TILED)
    return enqueue_tiled<C>(ctx, d_src, d_dst, s, tile, info);
  return enqueue_fast<C>(ctx, d_src, d_dst, s, d_mask, info);
}

} // namespace
} // namespace gpuimg_blur

using namespace gpuimg_blur;

int gpuimg_blur_enqueue(gpuimg_cuda_t *ctx, const uint8_t *d_src, uint8_t *d_dst, int width,
                        int height, int channels, int radius, gpuimg_variant_t variant,
                        gpuimg_tile_t tile, const uint8_t *d_mask, gpuimg_launch_t *info)
{
  BlurShape s = blur_shape(width, height, radius);
  if (radius == 0 && !d_mask) {
    GPUIMG_CUDA_CHECK(cudaMemcpyAsync(d_dst, d_src, (size_t)width * height * channels,
                                      cudaMemcpyDeviceToDevice, ctx->stream));
    gpuimg_launch_record(info, "cudaMemcpyAsync", dim3(0, 0, 0), dim3(0, 0, 0), 0, 0);
    return 0;
  }
  switch (channels) {
  case 1:
    return enqueue<1>(ctx, d_src, d_dst, s, variant, tile, d_mask, info);
  case 2:
    return enqueue<2>(ctx, d_src, d_dst, s, variant, tile, d_mask, info);
  case 3:
    return enqueue<3>(ctx, d_src, d_dst, s, variant, tile, d_mask, info);
  case 4:
    return enqueue<4>(ctx, d_src, d_dst, s, variant, tile, d_mask, info);
  }
  gpuimg_error_set(GPUIMG_EXIT_DEVICE, "blur", "unsupported channel count %d", channels);
  return -1;
}

extern "C" int gpuimg_blur_gpu(gpuimg_cuda_t *ctx, const uint8_t *d_src, uint8_t *d_dst, int width,
                               int height, int channels, int radius, gpuimg_variant_t variant,
                               gpuimg_tile_t tile, gpuimg_launch_t *info)
{
  if (gpuimg_cuda_timer_start(ctx) < 0 ||
      gpuimg_blur_enqueue(ctx, d_src, d_dst, width, height, channels, radius, variant, tile, NULL,
                          info) < 0)
    return -1;
  return gpuimg_cuda_timer_stop(ctx, &info->ms);
}
