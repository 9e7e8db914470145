// blur_chunk.cu: the fast box blur's chunk design, one pass in which each thread owns eight
// pixels of a row span and keeps their column sums in registers, for rows of a multiple of
// 8 pixels and r <= 127.
#include <stdint.h>

#include "blur_chunk.cuh"

namespace gpuimg_blur
{
namespace
{

// blur_chunk_kernel<C> (fast): one pass, O(1) per pixel for r <= 127. A block of 256
// threads owns `tile` output pixels of a run of rows and walks down them; its row span (the
// tile and its aprons, from a multiple of 8 pixels) is 2048 pixels, 8 to a thread. Each
// thread keeps V, the sum of the 2r + 1 rows around y, for its 8C bytes, packed two 16-bit
// sums to a register (exact while (2r + 1) * 255 < 65536): moving down a row adds the
// entering row and subtracts the leaving one, loaded (8 or 16 bytes at a time) a row ahead.
// A row's horizontal sums come from per-channel exclusive prefix sums P over the span: each
// thread sums its own values per channel, a warp-shuffle scan and the warps' totals give
// its start, and it writes its P to shared memory, one row per channel, padded against bank
// conflicts (chunk_pad); an output byte is
// P[x + r + 1] - P[x - r] of its channel, divided by (2r + 1)^2 with rounding, and each
// thread writes its own 8 pixels when they are in the tile. Two barriers a row. With d_mask
// (portrait) subject pixels and alpha take the source value.
template <int C, int MINB>
__global__ void __launch_bounds__(kChunkThreads, MINB)
    blur_chunk_kernel(const uint8_t *__restrict__ src, const uint8_t *__restrict__ d_mask,
                      uint8_t *__restrict__ dst, BlurShape s, int tile, int rows)
{
  constexpr int W = 2 * C, NW = kChunkThreads / 32;
  __shared__ uint32_t P[C][kChunkPadded];
  __shared__ __align__(16) uint32_t warp_tot[2][C][NW];
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const ChunkPlace t = chunk_place<C>(s, tile, rows);

  uint32_t lo[W], hi[W];
#pragma unroll
  for (int k = 0; k < W; k++)
    lo[k] = hi[k] = 0;
  if (t.needed) { // V at y0: rows above and below the image count as its edge rows
    chunk_edges<C>(src, t.row_bytes, t.last, t.px, s.w, max(s.r - t.y0, 0),
                   max(t.y0 + s.r - t.last, 0), lo, hi);
    for (int yy = max(t.y0 - s.r, 0); yy <= min(t.y0 + s.r, t.last); yy++) {
      uint32_t a[W];
      chunk_load<C>(src + (size_t)yy * t.row_bytes, t.px, s.w, a);
      chunk_add<C>(lo, hi, a);
    }
  }

  // Row y's outputs from V, then V moved down a row by the rows entering and leaving (in, out);
  // buf picks the warps' totals' buffer, alternating.
  auto step = [&](int y, int buf, const uint32_t(&in)[W], const uint32_t(&out)[W]) {
    // This thread's per-channel totals, and where its values start in the block's prefix.
    uint32_t tot[C], base[C];
    chunk_totals<C>(lo, hi, tot);
#pragma unroll
    for (int c = 0; c < C; c++) {
      uint32_t incl = warp_inclusive_sum(tot[c], lane);
      base[c] = incl - tot[c];
      if (lane == 31)
        warp_tot[buf][c][warp] = incl;
    }
    __syncthreads();
#pragma unroll
    for (int c = 0; c < C; c++) {
      uint4 t0 = *(const uint4 *)&warp_tot[buf][c][0], t1 = *(const uint4 *)&warp_tot[buf][c][4];
      uint32_t tw[NW] = {t0.x, t0.y, t0.z, t0.w, t1.x, t1.y, t1.z, t1.w};
#pragma unroll
      for (int wp = 0; wp < NW; wp++)
        base[c] += wp < warp ? tw[wp] : 0u;
    }
    chunk_prefix<C>(&P[0][0], tid, lo, hi, base);
    if (tid == kChunkThreads - 1)
#pragma unroll
      for (int c = 0; c < C; c++)
        P[c][chunk_pad(kChunkSpan)] = base[c];
    __syncthreads();

    // The outputs, as chunk_output() writes them but in the order this kernel was measured
    // with: through chunk_output() ptxas schedules RGB at 2 blocks per SM in 121 registers,
    // not 117.
    if (t.outputs) {
      uint32_t o[W];
#pragma unroll
      for (int k = 0; k < W; k++)
        o[k] = 0;
#pragma unroll
      for (int m = 0; m < kChunkPx * C; m++) {
        const uint32_t *pc = P[m % C];
        uint32_t v = pc[chunk_pad(t.ib + m / C)] - pc[chunk_pad(t.ia + m / C)] + s.half;
        o[m >> 2] |= div_small(v, s) << (8 * (m & 3));
      }
      size_t at = (size_t)y * t.row_bytes + (size_t)t.px * C;
      if (d_mask) // portrait: subject pixels and alpha keep the source's bytes
        chunk_keep_source<C>(src + (size_t)y * t.row_bytes, d_mask + (size_t)y * s.w, t.px, s.w, o);
      chunk_store<C>(dst + at, o);
    }

    if (t.needed && y + 1 < t.y1)
      chunk_move<C>(lo, hi, in, out);
  };
  // The rows entering and leaving the window at row y are loaded two rows ahead, so that
  // their latency hides behind two rows of work.
  uint32_t in_a[W], out_a[W], in_b[W], out_b[W];
  chunk_fetch<C>(src, s, t, t.y0 + 1, in_a, out_a);
  for (int y = t.y0; y < t.y1; y += 2) {
    chunk_fetch<C>(src, s, t, y + 2, in_b, out_b);
    step(y, 0, in_a, out_a);
    if (y + 1 >= t.y1)
      break;
    chunk_fetch<C>(src, s, t, y + 3, in_a, out_a);
    step(y + 1, 1, in_b, out_b);
  }
}

} // namespace

// The kernel for MINB resident blocks per SM on the shape in info.
template <int C, int MINB>
int launch_chunk(gpuimg_cuda_t *ctx, const uint8_t *d_src, uint8_t *d_dst, BlurShape s,
                 const uint8_t *d_mask, int tile, int rows, gpuimg_launch_t *info)
{
  dim3 grid = gpuimg_launch_grid(info), block = gpuimg_launch_block(info);
  if (gpuimg_cuda_check_grid(ctx, grid, "blur_chunk_kernel") < 0)
    return -1;
  blur_chunk_kernel<C, MINB><<<grid, block, 0, ctx->stream>>>(d_src, d_mask, d_dst, s, tile, rows);
  GPUIMG_CUDA_CHECK_LAUNCH("blur_chunk_kernel");
  gpuimg_launch_measure(ctx, info, blur_chunk_kernel<C, MINB>);
  return 0;
}

template <int C>
int enqueue_chunk(gpuimg_cuda_t *ctx, const uint8_t *d_src, uint8_t *d_dst, BlurShape s,
                  const uint8_t *d_mask, const gpuimg_blur_fast_t &f, gpuimg_launch_t *info)
{
  // Tiles, runs of rows and the register cap as gpuimg_blur_fast_launch() (kernels/blur.h)
  // chose them. The cap: 3 resident blocks per SM where the grid has more blocks than 2 per
  // SM, for RGB: 80 registers and 4 bytes of spill against 117, 3-17% faster on the H200 at
  // 8K at r = 1, 4 and 64 and for portrait, the same at r = 16 and 127 (docs/performance.md).
  // Smaller grids, and the other layouts, keep 2: gray and two channels already fit 3 blocks
  // (72 and 80 registers), and RGBA capped at 80 spills 112 bytes and was slower at most radii.
  return f.minb == 3 ? launch_chunk<C, 3>(ctx, d_src, d_dst, s, d_mask, f.tile, f.rows, info)
                     : launch_chunk<C, 2>(ctx, d_src, d_dst, s, d_mask, f.tile, f.rows, info);
}

#define GPUIMG_CHUNK_INSTANCE(C)                                                                   \
  template int enqueue_chunk<C>(gpuimg_cuda_t *, const uint8_t *, uint8_t *, BlurShape,            \
                                const uint8_t *, const gpuimg_blur_fast_t &, gpuimg_launch_t *);
GPUIMG_CHUNK_INSTANCE(1)
GPUIMG_CHUNK_INSTANCE(2)
GPUIMG_CHUNK_INSTANCE(3)
GPUIMG_CHUNK_INSTANCE(4)

} // namespace gpuimg_blur
