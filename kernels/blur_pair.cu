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

// Row of segment boundary j (gpuimg_blur_heads_t, kernels/blur.h), clamped to [0, h].
__device__ __forceinline__ int heads_boundary(const gpuimg_blur_heads_t &g, int rows, int h, int j)
{
  long long y = (long long)(g.kmin + (j >> 1)) * rows + ((j & 1) ? g.o1 : g.o0);
  return (int)(y < 0 ? 0 : y > h ? h : y);
}

// Where segment j's sums of chunk q start: 4C words, each a plane of g.chunks words (lo, then
// hi), so that a warp's consecutive chunks read and write consecutive words.
__device__ __forceinline__ size_t heads_at(const gpuimg_blur_heads_t &g, int C, int j, int q)
{
  return (size_t)j * 4 * C * g.chunks + q;
}

// blur_heads_kernel<C>: the packed column sums of every segment (blockIdx.y) of the image's
// rows for each chunk of 8 pixels (a thread each), chunk q at pixel 8q - 128, pixels outside
// the image clamped as chunk_load() clamps them: the image read once. A segment has at most
// 256 rows, so its 16-bit sums cannot overflow.
template <int C>
__global__ void __launch_bounds__(256)
    blur_heads_kernel(const uint8_t *__restrict__ src, uint32_t *__restrict__ heads, BlurShape s,
                      int rows, gpuimg_blur_heads_t g)
{
  constexpr int W = 2 * C;
  const int q = blockIdx.x * blockDim.x + threadIdx.x, j = blockIdx.y;
  if (q >= g.chunks)
    return;
  uint32_t lo[W], hi[W];
#pragma unroll
  for (int k = 0; k < W; k++)
    lo[k] = hi[k] = 0;
  chunk_sum_rows<C>(src, (size_t)s.w * C, kChunkPx * q - 128, s.w, heads_boundary(g, rows, s.h, j),
                    heads_boundary(g, rows, s.h, j + 1) - 1, lo, hi);
  uint32_t *p = heads + heads_at(g, C, j, q);
#pragma unroll
  for (int k = 0; k < W; k++) {
    p[(size_t)k * g.chunks] = lo[k];
    p[(size_t)(W + k) * g.chunks] = hi[k];
  }
}

// Adds to packed column sums the segments of run b's window (its rows inside the image) for
// the chunk at pixel px: a few loads in flight instead of 2r + 1 rows. The segments' sums are
// parts of the window's, so no 16-bit lane overflows.
template <int C>
__device__ __forceinline__ void heads_add(const uint32_t *heads, const gpuimg_blur_heads_t &g,
                                          int b, int px, uint32_t (&lo)[2 * C],
                                          uint32_t (&hi)[2 * C])
{
  constexpr int W = 2 * C;
  const int q = (px + 128) >> 3, ja = 2 * b + g.sa, jb = 2 * (b + g.kr - g.kmin) + g.sc;
#pragma unroll 2
  for (int j = ja; j < jb; j++) {
    const uint32_t *p = heads + heads_at(g, C, j, q);
#pragma unroll
    for (int k = 0; k < W; k++) {
      lo[k] += __ldg(p + (size_t)k * g.chunks);
      hi[k] += __ldg(p + (size_t)(W + k) * g.chunks);
    }
  }
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
//   instead of one after another: at r = 127 it reads 255 rows before the first output; or,
//   with heads, adds the window's segments summed ahead by blur_heads_kernel;
// - the rows that move V to the next pair's two rows are loaded before this pair's outputs,
//   once V has moved to the next pair's first row (so one V, not two, lives through them).
// MINB: resident blocks per SM the registers are capped for. Rows past the run (an odd run's
// last pair) are summed into P but never written out.
template <int C, int MINB>
__global__ void __launch_bounds__(kChunkThreads, MINB)
    blur_pair_kernel(const uint8_t *__restrict__ src, const uint8_t *__restrict__ d_mask,
                     uint8_t *__restrict__ dst, BlurShape s, int tile, int rows,
                     const uint32_t *__restrict__ heads, gpuimg_blur_heads_t g)
{
  constexpr int W = 2 * C, NW = kChunkThreads / 32;
  extern __shared__ __align__(16) uint32_t pair_smem[]; // P: [kPairRows][C][kChunkPadded]
  __shared__ uint32_t warp_tot[kPairRows][C][NW];
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const ChunkPlace t = chunk_place<C>(s, tile, rows);

  uint32_t lo[W], hi[W]; // V of row y (the pair's first row)
#pragma unroll
  for (int k = 0; k < W; k++)
    lo[k] = hi[k] = 0;
  if (t.needed) { // V at y0: rows above and below the image count as its edge rows
    chunk_edges<C>(src, t.row_bytes, t.last, t.px, s.w, max(s.r - t.y0, 0),
                   max(t.y0 + s.r - t.last, 0), lo, hi);
    if (heads) // the window's segments, summed ahead
      heads_add<C>(heads, g, blockIdx.y, t.px, lo, hi);
    else
      chunk_sum_rows<C>(src, t.row_bytes, t.px, s.w, max(t.y0 - s.r, 0), min(t.y0 + s.r, t.last),
                        lo, hi);
  }

  // in1, out1 move V to a pair's second row; in2, out2 on to the next pair's first row.
  uint32_t in1[W], out1[W], in2[W], out2[W];
  chunk_fetch<C>(src, s, t, t.y0 + 1, in1, out1);
  chunk_fetch<C>(src, s, t, t.y0 + 2, in2, out2);
  for (int y = t.y0; y < t.y1; y += kPairRows) {
    const bool two = y + 1 < t.y1; // the same for the whole block
    uint32_t lo1[W], hi1[W];       // V of row y + 1
#pragma unroll
    for (int k = 0; k < W; k++)
      lo1[k] = lo[k], hi1[k] = hi[k];
    if (t.needed && two)
      chunk_move<C>(lo1, hi1, in1, out1);

    // Both rows' per-channel totals, scanned across the warp; the warps' totals cross warps
    // through shared memory.
    uint32_t base[kPairRows][C];
    {
      uint32_t tot[kPairRows][C];
      chunk_totals<C>(lo, hi, tot[0]);
      chunk_totals<C>(lo1, hi1, tot[1]);
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
    chunk_prefix<C>(pair_smem, tid, lo, hi, base[0]);
    chunk_prefix<C>(P1, tid, lo1, hi1, base[1]);
    if (tid == kChunkThreads - 1)
#pragma unroll
      for (int k = 0; k < kPairRows; k++)
#pragma unroll
        for (int c = 0; c < C; c++)
          pair_smem[(k * C + c) * kChunkPadded + chunk_pad(kChunkSpan)] = base[k][c];
    // V moves to the next pair's first row, and the next pair's rows are loaded, before the
    // outputs: only one V stays live through them.
    if (t.needed && y + 2 < t.y1) {
#pragma unroll
      for (int k = 0; k < W; k++)
        lo[k] = lo1[k], hi[k] = hi1[k];
      chunk_move<C>(lo, hi, in2, out2);
    }
    chunk_fetch<C>(src, s, t, y + 3, in1, out1);
    chunk_fetch<C>(src, s, t, y + 4, in2, out2);
    __syncthreads();

    if (t.outputs) // one row after the other: two rows at once would spill
#pragma unroll 1
      for (int k = 0; k < (two ? kPairRows : 1); k++)
        chunk_output<C>(pair_smem + k * C * kChunkPadded, src, d_mask, dst, s, y + k, t.px, t.ia,
                        t.ib);
  }
}

// The segments' sums ahead into scratch (*heads; NULL where f has none).
template <int C>
int launch_heads(gpuimg_cuda_t *ctx, const uint8_t *d_src, BlurShape s, const gpuimg_blur_fast_t &f,
                 uint32_t **heads)
{
  *heads = NULL;
  if (!f.ahead)
    return 0;
  const gpuimg_blur_heads_t &g = f.heads;
  void *scratch;
  if (gpuimg_cuda_scratch(ctx, (size_t)g.segments * 4 * C * g.chunks * 4, &scratch) < 0)
    return -1;
  dim3 grid((unsigned)((g.chunks + 255) / 256), (unsigned)g.segments);
  if (gpuimg_cuda_check_grid(ctx, grid, "blur_heads_kernel") < 0)
    return -1;
  *heads = (uint32_t *)scratch;
  blur_heads_kernel<C><<<grid, 256, 0, ctx->stream>>>(d_src, *heads, s, f.rows, g);
  GPUIMG_CUDA_CHECK_LAUNCH("blur_heads_kernel");
  return 0;
}

template <int C, int MINB>
int launch_pair(gpuimg_cuda_t *ctx, const uint8_t *d_src, uint8_t *d_dst, BlurShape s,
                const uint8_t *d_mask, const gpuimg_blur_fast_t &f, gpuimg_launch_t *info)
{
  dim3 grid = gpuimg_launch_grid(info), block = gpuimg_launch_block(info);
  size_t shared = info->shared_bytes;
  uint32_t *heads;
  if (gpuimg_cuda_check_grid(ctx, grid, "blur_pair_kernel") < 0 ||
      allow_shared(blur_pair_kernel<C, MINB>, shared) < 0 ||
      launch_heads<C>(ctx, d_src, s, f, &heads) < 0)
    return -1;
  blur_pair_kernel<C, MINB><<<grid, block, shared, ctx->stream>>>(d_src, d_mask, d_dst, s, f.tile,
                                                                  f.rows, heads, f.heads);
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
    return launch_pair<C, 2>(ctx, d_src, d_dst, s, d_mask, f, info);
  return f.minb == 4 ? launch_pair<C, 4>(ctx, d_src, d_dst, s, d_mask, f, info)
                     : launch_pair<C, 3>(ctx, d_src, d_dst, s, d_mask, f, info);
}

#define GPUIMG_PAIR_INSTANCE(C)                                                                    \
  template int enqueue_pair<C>(gpuimg_cuda_t *, const uint8_t *, uint8_t *, BlurShape,             \
                               const uint8_t *, const gpuimg_blur_fast_t &, gpuimg_launch_t *);
GPUIMG_PAIR_INSTANCE(1)
GPUIMG_PAIR_INSTANCE(2)
GPUIMG_PAIR_INSTANCE(3)
GPUIMG_PAIR_INSTANCE(4)

} // namespace gpuimg_blur
