// blur_internal.cuh: what the blur's .cu files share: the window's shape, its exact
// division, and the entry point of each kernel design (naive, tiled, fast, two-pass).
#ifndef GPUIMG_BLUR_INTERNAL_CUH
#define GPUIMG_BLUR_INTERNAL_CUH

#include "blur.h"
#include "cuda_internal.cuh"

namespace gpuimg_blur
{

struct BlurShape {
  int w, h, r;
  uint32_t count, half;
  float inv;
  uint32_t div_m; // floor(x / count) = (t + ((x - t) >> 1)) >> div_s, t = umulhi(x, div_m)
  int div_s;
  uint32_t small_m; // r <= 127 (x < 2^24): floor(x / count) = umulhi(x, small_m) >> small_s
  int small_s;
};

__device__ __forceinline__ uint32_t div_count(uint32_t x, const BlurShape &s)
{
  if (s.count == 1) // radius 0 (portrait only): the formula needs a divisor >= 2
    return x;
  uint32_t t = __umulhi(x, s.div_m);
  return (t + ((x - t) >> 1)) >> s.div_s;
}

// div_count for r <= 127 (x < 2^24): two instructions instead of five.
__device__ __forceinline__ uint32_t div_small(uint32_t x, const BlurShape &s)
{
  return s.count == 1 ? x : __umulhi(x, s.small_m) >> s.small_s;
}

// The sum of v over lanes 0 .. lane of the warp (an inclusive scan by shuffles); every lane
// of the warp must call it.
__device__ __forceinline__ uint32_t warp_inclusive_sum(uint32_t v, int lane)
{
#pragma unroll
  for (int d = 1; d < 32; d <<= 1) {
    uint32_t t = __shfl_up_sync(0xffffffffu, v, d);
    if (lane >= d)
      v += t;
  }
  return v;
}

template <typename K> int allow_shared(K kernel, size_t bytes)
{
  if (bytes > 48 * 1024)
    GPUIMG_CUDA_CHECK(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes));
  return 0;
}

// Each design's launcher for C channels: enqueues its kernels on ctx's stream (no timing)
// and fills *info. Defined, and instantiated for C = 1..4, in the .cu named.

// blur_teaching.cu: the naive kernel.
template <int C>
int enqueue_naive(gpuimg_cuda_t *ctx, const uint8_t *d_src, uint8_t *d_dst, BlurShape s,
                  gpuimg_launch_t *info);

// blur_teaching.cu: the tiled kernel, its tile stored as tile says.
template <int C>
int enqueue_tiled(gpuimg_cuda_t *ctx, const uint8_t *d_src, uint8_t *d_dst, BlurShape s,
                  gpuimg_tile_t tile, gpuimg_launch_t *info);

// blur_fast.cu: the fast variant; picks the strip, fused or two-pass design. With d_mask,
// subject pixels (mask >= 128) and alpha get d_src's value (portrait).
template <int C>
int enqueue_fast(gpuimg_cuda_t *ctx, const uint8_t *d_src, uint8_t *d_dst, BlurShape s,
                 const uint8_t *d_mask, gpuimg_launch_t *info);

// blur_chunk.cu: the chunk kernel (d_mask as enqueue_fast) on the shape and numbers
// gpuimg_blur_fast_launch() gave (kernels/blur.h).
template <int C>
int enqueue_chunk(gpuimg_cuda_t *ctx, const uint8_t *d_src, uint8_t *d_dst, BlurShape s,
                  const uint8_t *d_mask, const gpuimg_blur_fast_t &f, gpuimg_launch_t *info);

// blur_pair.cu: the pair kernel, the chunk kernel two rows per pair of barriers (d_mask as
// enqueue_fast), on the shape and numbers gpuimg_blur_fast_launch() gave.
template <int C>
int enqueue_pair(gpuimg_cuda_t *ctx, const uint8_t *d_src, uint8_t *d_dst, BlurShape s,
                 const uint8_t *d_mask, const gpuimg_blur_fast_t &f, gpuimg_launch_t *info);

// blur_twopass.cu: row sums into scratch, then the column walk (d_mask as enqueue_fast), in
// the bands gpuimg_blur_fast_launch() gave.
template <int C>
int enqueue_twopass(gpuimg_cuda_t *ctx, const uint8_t *d_src, uint8_t *d_dst, BlurShape s,
                    const uint8_t *d_mask, const gpuimg_blur_fast_t &f, gpuimg_launch_t *info);

} // namespace gpuimg_blur

#endif
