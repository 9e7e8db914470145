// blur_pair.cu: the fast box blur's pair design, the chunk kernel's single pass made two rows
// per pair of block-wide barriers, for rows of a multiple of 8 pixels and r <= 127.
#include <stdint.h>

#include "blur_chunk.cuh"

namespace gpuimg_blur
{
namespace
{

// Rows of prefix sums a block holds in shared memory: the rows one pair of barriers serves.
constexpr int kPairRows = 2;

// The sum of v over the warp's 32 lanes, in every lane; every lane must call it.
__device__ __forceinline__ uint32_t warp_sum(uint32_t v)
{
#if __CUDA_ARCH__ >= 800
  return __reduce_add_sync(0xffffffffu, v);
#else
#pragma unroll
  for (int d = 16; d > 0; d >>= 1)
    v += __shfl_xor_sync(0xffffffffu, v, d);
  return v;
#endif
}

// This thread's per-channel sums of its packed column sums.
template <int C>
__device__ __forceinline__ void pair_totals(const uint32_t (&lo)[2 * C],
                                            const uint32_t (&hi)[2 * C], uint32_t (&tot)[C])
{
#pragma unroll
  for (int c = 0; c < C; c++)
    tot[c] = 0;
#pragma unroll
  for (int m = 0; m < kChunkPx * C; m++)
    tot[m % C] += chunk_value<C>(lo, hi, m);
}

// Writes this thread's exclusive prefix sums (from base, per channel) of its column sums into
// one row of prefix sums P (C channel rows of kChunkPadded words), at its own pixels.
template <int C>
__device__ __forceinline__ void pair_prefix(uint32_t *P, int tid, const uint32_t (&lo)[2 * C],
                                            const uint32_t (&hi)[2 * C], uint32_t (&base)[C])
{
  uint32_t *own = P + chunk_pad(kChunkPx * tid);
#pragma unroll
  for (int m = 0; m < kChunkPx * C; m++) {
    own[(m % C) * kChunkPadded + m / C] = base[m % C];
    base[m % C] += chunk_value<C>(lo, hi, m);
  }
}

// The thread's 8 output pixels of row y from the row's prefix sums P: P's pixels ia and ib
// bound the window of its first pixel (ib - ia = 2r + 1). With d_mask (portrait) subject
// pixels and alpha take the source's bytes.
template <int C>
__device__ __forceinline__ void pair_output(const uint32_t *P, const uint8_t *src,
                                            const uint8_t *d_mask, uint8_t *dst, const BlurShape &s,
                                            int y, int px, int ia, int ib)
{
  constexpr int W = 2 * C;
  const size_t row_bytes = (size_t)s.w * C;
  uint32_t o[W];
#pragma unroll
  for (int k = 0; k < W; k++)
    o[k] = 0;
#pragma unroll
  for (int m = 0; m < kChunkPx * C; m++) {
    const uint32_t *pc = P + (m % C) * kChunkPadded;
    uint32_t v = pc[chunk_pad(ib + m / C)] - pc[chunk_pad(ia + m / C)] + s.half;
    o[m >> 2] |= div_small(v, s) << (8 * (m & 3));
  }
  if (d_mask)
    chunk_keep_source<C>(src + (size_t)y * row_bytes, d_mask + (size_t)y * s.w, px, s.w, o);
  chunk_store<C>(dst + (size_t)y * row_bytes + (size_t)px * C, o);
}

// blur_pair_kernel<C, MINB> (fast): the chunk kernel's design (blur_chunk.cu: a block of 256
// threads, a 2048-pixel row span of a tile and its aprons, 8 pixels a thread, the column sums
// V packed in registers, per-channel prefix sums P in padded shared rows, one subtraction and
// a division an output byte, the same integer sums and rounding) with these changes:
// - two rows per pair of barriers: each thread holds V of rows y and y + 1, scans both (the
//   warps' shuffle scans of both rows interleave), and after one barrier writes both rows of
//   P (dynamic shared memory, 2C rows), after the second writes both rows of output;
// - a thread's base from the warps before its own: one shared load a lane and a warp-wide sum
//   (redux.sync from sm_80) per row and channel, instead of 8 loads, selects and adds;
// - the window's set-up loads 32 / (2C) rows at a time (5 for RGB), their latencies overlapped,
//   instead of one after another: at r = 127 it reads 255 rows before the first output;
// - the rows that move V to the next pair's two rows are loaded before this pair's outputs,
//   once V has moved to the next pair's first row (so one V, not two, lives through them).
// MINB: resident blocks per SM the registers are capped for. Rows past the run (an odd run's
// last pair) are summed into P but never written out.
template <int C, int MINB>
__global__ void __launch_bounds__(kChunkThreads, MINB)
    blur_pair_kernel(const uint8_t *__restrict__ src, const uint8_t *__restrict__ d_mask,
                     uint8_t *__restrict__ dst, BlurShape s, int tile, int rows)
{
  constexpr int W = 2 * C, NW = kChunkThreads / 32, NB = 32 / W;
  extern __shared__ __align__(16) uint32_t pair_smem[]; // P: [kPairRows][C][kChunkPadded]
  __shared__ uint32_t warp_tot[kPairRows][C][NW];
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int x0 = blockIdx.x * tile, tn = min(tile, s.w - x0);
  const int xs = (x0 - s.r) & ~7; // the span's first pixel (rounded towards -infinity)
  const int px = xs + kChunkPx * tid;
  const bool needed = px <= x0 + tn + s.r; // some output's window reads this chunk's P
  const bool outputs = px >= x0 && px < x0 + tn;
  const int y0 = blockIdx.y * rows, y1 = min(y0 + rows, s.h), last = s.h - 1;
  const size_t row_bytes = (size_t)s.w * C;
  const int ia = px - xs - s.r, ib = px - xs + s.r + 1; // P's pixels of the first window
  auto row = [&](int yy) { return src + (size_t)gpuimg_clampi(yy, 0, last) * row_bytes; };

  uint32_t lo[W], hi[W]; // V of row y (the pair's first row)
#pragma unroll
  for (int k = 0; k < W; k++)
    lo[k] = hi[k] = 0;
  if (needed) { // V at y0: rows above and below the image count as its edge rows
    chunk_edges<C>(src, row_bytes, last, px, s.w, max(s.r - y0, 0), max(y0 + s.r - last, 0), lo,
                   hi);
    const int yb = min(y0 + s.r, last);
    int yy = max(y0 - s.r, 0);
    if (px >= 0 && px + kChunkPx <= s.w) // whole chunks: NB rows' loads in flight at once
      for (; yy + NB - 1 <= yb; yy += NB) {
        uint32_t a[NB][W];
#pragma unroll
        for (int q = 0; q < NB; q++)
          chunk_load<C>(src + (size_t)(yy + q) * row_bytes, px, s.w, a[q]);
#pragma unroll
        for (int q = 0; q < NB; q++)
          chunk_add<C>(lo, hi, a[q]);
      }
    for (; yy <= yb; yy++) {
      uint32_t a[W];
      chunk_load<C>(src + (size_t)yy * row_bytes, px, s.w, a);
      chunk_add<C>(lo, hi, a);
    }
  }

  // The rows entering and leaving V when it moves from row y - 1 to row y.
  auto fetch = [&](int y, uint32_t(&in)[W], uint32_t(&out)[W]) {
    if (needed && y < y1) {
      chunk_load<C>(row(y + s.r), px, s.w, in);
      chunk_load<C>(row(y - 1 - s.r), px, s.w, out);
    }
  };
  // in1, out1 move V to a pair's second row; in2, out2 on to the next pair's first row.
  uint32_t in1[W], out1[W], in2[W], out2[W];
  fetch(y0 + 1, in1, out1);
  fetch(y0 + 2, in2, out2);
  for (int y = y0; y < y1; y += kPairRows) {
    const bool two = y + 1 < y1; // the same for the whole block
    uint32_t lo1[W], hi1[W];     // V of row y + 1
#pragma unroll
    for (int k = 0; k < W; k++)
      lo1[k] = lo[k], hi1[k] = hi[k];
    if (needed && two)
      chunk_move<C>(lo1, hi1, in1, out1);

    // Both rows' per-channel totals, scanned across the warp; the warps' totals cross warps
    // through shared memory.
    uint32_t base[kPairRows][C];
    {
      uint32_t tot[kPairRows][C];
      pair_totals<C>(lo, hi, tot[0]);
      pair_totals<C>(lo1, hi1, tot[1]);
#pragma unroll
      for (int k = 0; k < kPairRows; k++)
#pragma unroll
        for (int c = 0; c < C; c++) {
          uint32_t incl = warp_inclusive_sum(tot[k][c], lane);
          base[k][c] = incl - tot[k][c];
          if (lane == 31)
            warp_tot[k][c][warp] = incl;
        }
    }
    __syncthreads();
    // The warps before this one: lane j < warp reads warp j's total, the warp sums them.
#pragma unroll
    for (int k = 0; k < kPairRows; k++)
#pragma unroll
      for (int c = 0; c < C; c++)
        base[k][c] += warp_sum(lane < warp ? warp_tot[k][c][lane] : 0u);
    uint32_t *P1 = pair_smem + C * kChunkPadded; // the second row's prefix sums
    pair_prefix<C>(pair_smem, tid, lo, hi, base[0]);
    pair_prefix<C>(P1, tid, lo1, hi1, base[1]);
    if (tid == kChunkThreads - 1)
#pragma unroll
      for (int k = 0; k < kPairRows; k++)
#pragma unroll
        for (int c = 0; c < C; c++)
          pair_smem[(k * C + c) * kChunkPadded + chunk_pad(kChunkSpan)] = base[k][c];
    // V moves to the next pair's first row, and the next pair's rows are loaded, before the
    // outputs: only one V stays live through them.
    if (needed && y + 2 < y1) {
#pragma unroll
      for (int k = 0; k < W; k++)
        lo[k] = lo1[k], hi[k] = hi1[k];
      chunk_move<C>(lo, hi, in2, out2);
    }
    fetch(y + 3, in1, out1);
    fetch(y + 4, in2, out2);
    __syncthreads();

    if (outputs) // one row after the other: two rows at once would spill
#pragma unroll 1
      for (int k = 0; k < (two ? kPairRows : 1); k++)
        pair_output<C>(pair_smem + k * C * kChunkPadded, src, d_mask, dst, s, y + k, px, ia, ib);
  }
}

template <int C, int MINB>
int launch_pair(gpuimg_cuda_t *ctx, const uint8_t *d_src, uint8_t *d_dst, BlurShape s,
                const uint8_t *d_mask, int tile, int rows, gpuimg_launch_t *info)
{
  dim3 grid = gpuimg_launch_grid(info), block = gpuimg_launch_block(info);
  size_t shared = info->shared_bytes;
  if (gpuimg_cuda_check_grid(ctx, grid, "blur_pair_kernel") < 0 ||
      allow_shared(blur_pair_kernel<C, MINB>, shared) < 0)
    return -1;
  blur_pair_kernel<C, MINB>
      <<<grid, block, shared, ctx->stream>>>(d_src, d_mask, d_dst, s, tile, rows);
  GPUIMG_CUDA_CHECK_LAUNCH("blur_pair_kernel");
  gpuimg_launch_measure(ctx, info, blur_pair_kernel<C, MINB>);
  return 0;
}

} // namespace

template <int C>
int enqueue_pair(gpuimg_cuda_t *ctx, const uint8_t *d_src, uint8_t *d_dst, BlurShape s,
                 const uint8_t *d_mask, const gpuimg_blur_fast_t &f, gpuimg_launch_t *info)
{
  // Tiles, runs of rows, shared memory and the register cap as gpuimg_blur_fast_launch()
  // (kernels/blur.h) chose them: 3 resident blocks per SM (80 registers; sm_90 RGB spills 56
  // bytes a thread), or 2 (no spill) or 4 (64 registers) asked for.
  if (f.minb == 2)
    return launch_pair<C, 2>(ctx, d_src, d_dst, s, d_mask, f.tile, f.rows, info);
  return f.minb == 4 ? launch_pair<C, 4>(ctx, d_src, d_dst, s, d_mask, f.tile, f.rows, info)
                     : launch_pair<C, 3>(ctx, d_src, d_dst, s, d_mask, f.tile, f.rows, info);
}

#define GPUIMG_PAIR_INSTANCE(C)                                                                    \
  template int enqueue_pair<C>(gpuimg_cuda_t *, const uint8_t *, uint8_t *, BlurShape,             \
                               const uint8_t *, const gpuimg_blur_fast_t &, gpuimg_launch_t *);
GPUIMG_PAIR_INSTANCE(1)
GPUIMG_PAIR_INSTANCE(2)
GPUIMG_PAIR_INSTANCE(3)
GPUIMG_PAIR_INSTANCE(4)

} // namespace gpuimg_blur
