// checkerboard.cu: the warp-divergence example: brighten even cells, darken odd ones.
#include "checkerboard.h"
#include "cuda_internal.cuh"

namespace
{

// checkerboard_kernel<C, COUNT> (--naive): one thread per pixel of a 2-D grid. Each
// thread takes one side of a branch on the parity of (x / cell + y / cell): with cell = 1
// neighbouring lanes disagree, so every warp runs both sides one after the other
// (divergence); with a cell of 32 or more, whole warps agree. Colour channels are
// saturating add or subtract of amount; alpha (C = 2 or 4) is copied. Reads and writes
// are coalesced byte accesses along a row. With COUNT, each warp votes (__ballot_sync)
// on the branch and the block tallies warps whose lanes went both ways; and where d_times
// is set (--explain-image), thread 0 records the block's SM, start and end.
template <int C, bool COUNT>
__global__ void checkerboard_kernel(const uint8_t *__restrict__ src, uint8_t *__restrict__ dst,
                                    int w, int h, int cell, int amount,
                                    unsigned long long *d_counts, gpuimg_block_time_t *d_times)
{
  constexpr int colour = (C == 2 || C == 4) ? C - 1 : C;
  __shared__ unsigned s_warps, s_div;
  if (COUNT && d_times)
    gpuimg_block_clock(d_times, false);
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  bool inside = x < w && y < h;
  bool even = inside && (((x / cell) + (y / cell)) & 1) == 0;
  if (COUNT) {
    if (threadIdx.x == 0 && threadIdx.y == 0)
      s_warps = s_div = 0;
    __syncthreads();
    gpuimg_div_vote(inside, even, &s_warps, &s_div);
  }
  if (inside) {
    size_t i = ((size_t)y * w + x) * C;
    if (even) {
#pragma unroll
      for (int c = 0; c < colour; c++)
        dst[i + c] = (uint8_t)min(255, (int)src[i + c] + amount);
    } else {
#pragma unroll
      for (int c = 0; c < colour; c++)
        dst[i + c] = (uint8_t)max(0, (int)src[i + c] - amount);
    }
    if (colour < C)
      dst[i + C - 1] = src[i + C - 1];
  }
  if (COUNT) {
    __syncthreads();
    if (threadIdx.x == 0 && threadIdx.y == 0)
      gpuimg_div_flush(d_counts, s_warps, s_div);
    if (d_times)
      gpuimg_block_clock(d_times, true);
  }
}

constexpr int kPixelsPerThread = 16;

// checkerboard_fast_kernel<C>: the same rule without a branch. Each thread takes 16
// consecutive pixels of the flattened image as C 16-byte vector loads, works out each
// pixel's cell parity incrementally (one division per thread, not per pixel), builds
// per-byte "add" and "subtract" words (alpha bytes get 0) and applies them with the
// byte-wise saturating SIMD instructions __vaddus4/__vsubus4; 16-byte vector stores.
// groups = pixels / 16; thread index == groups does the remaining pixels one by one.
template <int C>
__global__ void checkerboard_fast_kernel(const uint8_t *__restrict__ src, uint8_t *__restrict__ dst,
                                         int w, size_t groups, size_t pixels, int cell, int amount)
{
  constexpr int colour = (C == 2 || C == 4) ? C - 1 : C;
  size_t g = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (g > groups)
    return;
  size_t q = g * kPixelsPerThread;
  int y = (int)(q / (size_t)w), x = (int)(q - (size_t)y * w);
  int cx = x / cell, rx = x - cx * cell, cy = y / cell;
  if (g == groups) {
    for (; q < pixels; q++) {
      bool even = ((cx + cy) & 1) == 0;
      for (int c = 0; c < C; c++) {
        int v = src[q * C + c];
        if (c < colour)
          v = even ? min(255, v + amount) : max(0, v - amount);
        dst[q * C + c] = (uint8_t)v;
      }
      if (++rx == cell) {
        rx = 0;
        cx++;
      }
      if (++x == w) {
        x = rx = cx = 0;
        cy = ++y / cell;
      }
    }
    return;
  }
  uint32_t add[4 * C] = {}, sub[4 * C] = {};
  const uint32_t a = (uint32_t)amount;
#pragma unroll
  for (int p = 0; p < kPixelsPerThread; p++) {
    bool even = ((cx + cy) & 1) == 0;
#pragma unroll
    for (int c = 0; c < colour; c++) {
      int b = p * C + c;
      uint32_t bits = a << (8 * (b & 3));
      if (even)
        add[b >> 2] |= bits;
      else
        sub[b >> 2] |= bits;
    }
    if (++rx == cell) {
      rx = 0;
      cx++;
    }
    if (++x == w) {
      x = rx = cx = 0;
      cy = ++y / cell;
    }
  }
  const uint4 *s = reinterpret_cast<const uint4 *>(src + q * C);
  uint4 *d = reinterpret_cast<uint4 *>(dst + q * C);
#pragma unroll
  for (int i = 0; i < C; i++) {
    uint4 v = __ldg(s + i);
    v.x = __vsubus4(__vaddus4(v.x, add[4 * i]), sub[4 * i]);
    v.y = __vsubus4(__vaddus4(v.y, add[4 * i + 1]), sub[4 * i + 1]);
    v.z = __vsubus4(__vaddus4(v.z, add[4 * i + 2]), sub[4 * i + 2]);
    v.w = __vsubus4(__vaddus4(v.w, add[4 * i + 3]), sub[4 * i + 3]);
    d[i] = v;
  }
}

template <int C>
int launch(gpuimg_cuda_t *ctx, const uint8_t *d_src, uint8_t *d_dst, int w, int h, int cell,
           int amount, gpuimg_variant_t variant, gpuimg_launch_t *info)
{
  gpuimg_launch_env_t env = gpuimg_cuda_env(ctx);
  gpuimg_checkerboard_launch(variant, w, h, C, &env, info);
  dim3 grid = gpuimg_launch_grid(info), block = gpuimg_launch_block(info);
  if (variant != GPUIMG_VARIANT_NAIVE) {
    size_t pixels = (size_t)w * h, groups = pixels / kPixelsPerThread;
    if (gpuimg_cuda_check_grid(ctx, grid, info->kernel) < 0 || gpuimg_cuda_timer_start(ctx) < 0)
      return -1;
    checkerboard_fast_kernel<C>
        <<<grid, block, 0, ctx->stream>>>(d_src, d_dst, w, groups, pixels, cell, amount);
    GPUIMG_CUDA_CHECK_LAUNCH("checkerboard_fast_kernel");
    gpuimg_launch_measure(ctx, info, checkerboard_fast_kernel<C>);
    return gpuimg_cuda_timer_stop(ctx, &info->ms);
  }
  // Blocks are recorded by the counting instance (a recording run is a measured one).
  bool count = ctx->count_divergence || ctx->record_blocks;
  unsigned long long blocks = (unsigned long long)grid.x * grid.y;
  gpuimg_block_time_t *d_times;
  if (gpuimg_cuda_check_grid(ctx, grid, info->kernel) < 0 || (count && gpuimg_div_begin(ctx) < 0) ||
      gpuimg_block_times_begin(ctx, blocks, &d_times) < 0 || gpuimg_cuda_timer_start(ctx) < 0)
    return -1;
  if (count)
    checkerboard_kernel<C, true>
        <<<grid, block, 0, ctx->stream>>>(d_src, d_dst, w, h, cell, amount, ctx->d_counts, d_times);
  else
    checkerboard_kernel<C, false>
        <<<grid, block, 0, ctx->stream>>>(d_src, d_dst, w, h, cell, amount, NULL, NULL);
  GPUIMG_CUDA_CHECK_LAUNCH("checkerboard_kernel");
  // The model's kernel: the one without the counting (the counts only tell what it does).
  gpuimg_launch_measure(ctx, info, checkerboard_kernel<C, false>);
  if (gpuimg_cuda_timer_stop(ctx, &info->ms) < 0 || gpuimg_block_times_end(ctx, blocks) < 0)
    return -1;
  return count ? gpuimg_div_end(ctx, info) : 0;
}

} // namespace

extern "C" int gpuimg_checkerboard_gpu(gpuimg_cuda_t *ctx, const uint8_t *d_src, uint8_t *d_dst,
                                       int width, int height, int channels, int cell, int amount,
                                       gpuimg_variant_t variant, gpuimg_launch_t *info)
{
  switch (channels) {
  case 1:
    return launch<1>(ctx, d_src, d_dst, width, height, cell, amount, variant, info);
  case 2:
    return launch<2>(ctx, d_src, d_dst, width, height, cell, amount, variant, info);
  case 3:
    return launch<3>(ctx, d_src, d_dst, width, height, cell, amount, variant, info);
  case 4:
    return launch<4>(ctx, d_src, d_dst, width, height, cell, amount, variant, info);
  }
  gpuimg_error_set(GPUIMG_EXIT_DEVICE, "checkerboard", "unsupported channel count %d", channels);
  return -1;
}
