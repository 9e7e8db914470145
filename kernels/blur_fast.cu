// blur_fast.cu: the fast box blur's strip and fused running-sum kernels, and the launch of the
// design gpuimg_blur_fast_launch() (kernels/blur.h) chooses among them, the chunk kernel
// (blur_chunk.cu), the pair kernel (blur_pair.cu), the two passes (blur_twopass.cu) and the
// tiled kernel.
#include "blur_internal.cuh"

namespace gpuimg_blur
{
namespace
{

// Output pixels per warp in the strip kernel.
constexpr int kStripWidth = GPUIMG_BLUR_STRIP_WIDTH;

// blur_strip_kernel<C, RMAX> (fast): each warp owns a strip 128 pixels wide and a run of
// rows, and walks down it. Per value column (one channel of one x, including the r-pixel
// aprons on both sides) a lane keeps V, the sum of the 2r+1 rows around y, in registers:
// moving down one row adds the entering row and subtracts the leaving one (coalesced byte
// loads; the leaving row was read 2r+1 rows earlier and comes from L2), and the next row's
// bytes are loaded before this row's arithmetic to hide their latency. The V row then goes
// to the warp's own shared-memory slice, where a chunked scan (per-lane sequential sums,
// then shuffles) turns it into per-channel prefix sums, and each output is a difference of
// two prefix sums: O(1) per pixel for any r <= RMAX. Only __syncwarp, no block barriers.
// With d_mask (portrait) subject pixels and alpha take the source value.
template <int C, int RMAX>
__global__ void __launch_bounds__(256)
    blur_strip_kernel(const uint8_t *__restrict__ src, const uint8_t *__restrict__ d_mask,
                      uint8_t *__restrict__ dst, BlurShape s, int rows_per_warp)
{
  constexpr int kMaxLen = kStripWidth + 2 * RMAX;
  constexpr int NV = (kMaxLen * C + 31) / 32;
  extern __shared__ uint32_t warp_smem[];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int x0 = (blockIdx.x * (blockDim.x >> 5) + warp) * kStripWidth;
  if (x0 >= s.w)
    return;
  const int y0 = blockIdx.y * rows_per_warp;
  const int y1 = min(y0 + rows_per_warp, s.h);
  const int tn = min(kStripWidth, s.w - x0);
  const int len = tn + 2 * s.r, nvals = len * C;
  const int last = s.h - 1;
  const size_t row_bytes = (size_t)s.w * C;
  uint32_t *ps = warp_smem + (size_t)warp * (kMaxLen * C + C);

  // Value j of the strip (pixel j / C of the padded strip, channel j % C) sits at byte
  // (x0 - r) * C + j of a row, unless the apron leaves the image: then clamp.
  const int base = (x0 - s.r) * C;
  auto offset = [&](int j) {
    int o = base + j;
    if (o < 0 || o >= (int)row_bytes) {
      int px = j / C;
      o = gpuimg_clampi(x0 - s.r + px, 0, s.w - 1) * C + (j - px * C);
    }
    return o;
  };
  auto row_ptr = [&](int yy) { return src + (size_t)gpuimg_clampi(yy, 0, last) * row_bytes; };

  uint32_t v[NV];
  {
    int lo = y0 - s.r, hi = y0 + s.r;
    uint32_t top = lo < 0 ? (uint32_t)(-lo) : 0u, bottom = hi > last ? (uint32_t)(hi - last) : 0u;
    const uint8_t *r0 = row_ptr(0), *rl = row_ptr(last);
#pragma unroll
    for (int k = 0; k < NV; k++) {
      int j = lane + 32 * k;
      v[k] = 0;
      if (j < nvals && (top | bottom)) {
        int o = offset(j);
        v[k] = top * r0[o] + bottom * rl[o];
      }
    }
    for (int yy = max(lo, 0); yy <= min(hi, last); yy++) {
      const uint8_t *rp = src + (size_t)yy * row_bytes;
#pragma unroll
      for (int k = 0; k < NV; k++)
        if (lane + 32 * k < nvals)
          v[k] += __ldg(rp + offset(lane + 32 * k));
    }
  }

  const int ppl = (len + 31) / 32; // pixels per lane in the scan
  const int pb = min(lane * ppl, len), pe = min(pb + ppl, len);
  const int span = (2 * s.r + 1) * C;
  uint32_t nin[NV], nout[NV];
  for (int y = y0; y < y1; y++) {
    if (y > y0) {
#pragma unroll
      for (int k = 0; k < NV; k++)
        v[k] += nin[k] - nout[k];
    }
    if (y + 1 < y1) { // prefetch the rows entering and leaving at y + 1
      const uint8_t *in = row_ptr(y + 1 + s.r), *out = row_ptr(y - s.r);
#pragma unroll
      for (int k = 0; k < NV; k++) {
        int j = lane + 32 * k;
        nin[k] = nout[k] = 0;
        if (j < nvals) {
          int o = offset(j);
          nin[k] = __ldg(in + o);
          nout[k] = __ldg(out + o);
        }
      }
    }
#pragma unroll
    for (int k = 0; k < NV; k++)
      if (lane + 32 * k < nvals)
        ps[lane + 32 * k] = v[k];
    __syncwarp();

    // Exclusive per-channel prefix sums over the len pixels, in place.
    uint32_t tot[C];
#pragma unroll
    for (int c = 0; c < C; c++)
      tot[c] = 0;
    for (int p = pb; p < pe; p++)
#pragma unroll
      for (int c = 0; c < C; c++)
        tot[c] += ps[p * C + c];
    uint32_t base[C], all[C];
#pragma unroll
    for (int c = 0; c < C; c++) {
      uint32_t incl = warp_inclusive_sum(tot[c], lane);
      base[c] = incl - tot[c];
      all[c] = __shfl_sync(0xffffffffu, incl, 31);
    }
    for (int p = pb; p < pe; p++)
#pragma unroll
      for (int c = 0; c < C; c++) {
        uint32_t t = ps[p * C + c];
        ps[p * C + c] = base[c];
        base[c] += t;
      }
    if (lane == 0)
#pragma unroll
      for (int c = 0; c < C; c++)
        ps[nvals + c] = all[c];
    __syncwarp();

    uint8_t *drow = dst + (size_t)y * row_bytes + (size_t)x0 * C;
    const uint8_t *srow = src + (size_t)y * row_bytes + (size_t)x0 * C;
    for (int i = lane; i < tn * C; i += 32) {
      uint8_t o = (uint8_t)div_small(ps[i + span] - ps[i] + s.half, s);
      if (d_mask) {
        int px = i / C;
        bool alpha = (C == 2 || C == 4) && i - px * C == C - 1;
        if (alpha || d_mask[(size_t)y * s.w + x0 + px] >= 128)
          o = srow[i];
      }
      drow[i] = o;
    }
    __syncwarp(); // ps is rewritten by the next row
  }
}

// Words (4 bytes) of a row each thread of the fused kernel keeps column sums for.
constexpr int kFusedWords = GPUIMG_BLUR_FUSED_WORDS;
constexpr int kFusedThreads = GPUIMG_BLUR_FUSED_THREADS;

// Shared-memory index of span value i: one padding word per 32 makes the row's stride-4
// accesses (4 bytes per thread) and the scan's stride-8 chunks hit 32 different banks
// (stride 9: at most 2 threads a bank).
__device__ __forceinline__ int fused_pad(int i)
{
  return i + (i >> 5);
}

// Pixels per thread in the fused kernel's scan, and the span values one block holds.
template <int C> struct Fused {
  static constexpr int span_bytes = kFusedWords * 4 * kFusedThreads;
  static constexpr int chunk_px = (span_bytes / C + kFusedThreads - 1) / kFusedThreads;
  static constexpr int chunk = chunk_px * C;               // values per thread in the scan
  static constexpr int values = chunk * kFusedThreads + 4; // values in the shared row (+ i0)
  static constexpr int padded = values + (values >> 5);    // its shared words
  // Output pixels per block: gpuimg_blur_fused_tile() (kernels/blur.h).
};

// blur_fused_kernel<C> (fast): one pass, O(1) per pixel for any r it takes. A block of 256
// threads owns tile output pixels of a run of rows and walks down them. Each thread keeps,
// for 8 consecutive bytes of the row span (the tile and its r-pixel aprons, read as aligned
// 4-byte words), V = the sum of the 2r + 1 rows around y, packed two 16-bit sums to a
// register (exact while (2r + 1) * 255 < 65536): moving down a row subtracts the leaving
// row and adds the entering one, both loaded a row ahead. The V row goes to shared memory;
// a block-wide scan (each thread sums a chunk of whole pixels, a warp-shuffle scan and the
// warps' totals) turns it into per-channel exclusive prefix sums P; an output byte is
// P[j + (2r+1)C] - P[j], divided by (2r+1)^2 with rounding, and four of them go out as one
// 4-byte store. Three barriers a row; shared rows alternate so the next row's V can be
// written while the previous one is still read. Needs 4-byte aligned rows (w * C % 4 == 0).
// With d_mask (portrait) subject pixels and alpha take the source value.
template <int C>
__global__ void __launch_bounds__(kFusedThreads, 4)
    blur_fused_kernel(const uint8_t *__restrict__ src, const uint8_t *__restrict__ d_mask,
                      uint8_t *__restrict__ dst, BlurShape s, int tile, int rows_per_block)
{
  using F = Fused<C>;
  __shared__ uint32_t row_smem[2][F::padded];
  __shared__ uint32_t warp_tot[kFusedThreads / 32][C];
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int x0 = blockIdx.x * tile;
  const int tn = min(tile, s.w - x0);
  const int y0 = blockIdx.y * rows_per_block, y1 = min(y0 + rows_per_block, s.h);
  const int last = s.h - 1;
  const long long row_bytes = (long long)s.w * C;
  const int b0 = (x0 - s.r) * C; // row byte of span value 0 (may be < 0: clamped)
  const int wb = b0 >= 0 ? b0 & ~3 : -((-b0 + 3) & ~3); // aligned word start
  const int i0 = b0 - wb;                               // shared index of span value 0
  const int nvals = (tn + 2 * s.r) * C;
  const int nwords = (i0 + nvals + 3) >> 2;

  // Values past the span are never written by the rows: zero them once.
  for (int i = kFusedWords * 4 * kFusedThreads + tid; i < F::values; i += kFusedThreads) {
    row_smem[0][fused_pad(i)] = 0;
    row_smem[1][fused_pad(i)] = 0;
  }

  // The 4 bytes of word k of this thread in row yy, clamped at the image's sides.
  auto load_word = [&](int yy, int k) -> uint32_t {
    int w = tid + k * kFusedThreads;
    if (w >= nwords)
      return 0u;
    const uint8_t *rp = src + (size_t)gpuimg_clampi(yy, 0, last) * (size_t)row_bytes;
    int b = wb + 4 * w; // rows are under 2^31 bytes here
    if (b >= 0 && b + 4 <= row_bytes)
      return __ldg((const uint32_t *)(rp + b));
    uint32_t v = 0;
#pragma unroll
    for (int e = 0; e < 4; e++) {
      int t = b + e + (s.r + 2) * C; // >= 0: bytes start at most r pixels and 3 bytes left
      int px = gpuimg_clampi(t / C - (s.r + 2), 0, s.w - 1);
      v |= (uint32_t)rp[px * C + t % C] << (8 * e);
    }
    return v;
  };
  // V of word k: even bytes in lo, odd bytes in hi, 16 bits each.
  uint32_t lo[kFusedWords], hi[kFusedWords];
#pragma unroll
  for (int k = 0; k < kFusedWords; k++)
    lo[k] = hi[k] = 0;
  for (int yy = y0 - s.r; yy <= y0 + s.r; yy++)
#pragma unroll
    for (int k = 0; k < kFusedWords; k++) {
      uint32_t v = load_word(yy, k);
      lo[k] += v & 0x00ff00ffu;
      hi[k] += (v >> 8) & 0x00ff00ffu;
    }

  const int out_words = (tn * C) >> 2, out_tail = tn * C - out_words * 4;
  const int span = (2 * s.r + 1) * C;
  uint32_t nin[kFusedWords], nout[kFusedWords];
  for (int y = y0, buf = 0; y < y1; y++, buf ^= 1) {
    if (y + 1 < y1)
#pragma unroll
      for (int k = 0; k < kFusedWords; k++) {
        nin[k] = load_word(y + 1 + s.r, k);
        nout[k] = load_word(y - s.r, k);
      }
    uint32_t *ps = row_smem[buf];
#pragma unroll
    for (int k = 0; k < kFusedWords; k++) {
      int i = 4 * (tid + k * kFusedThreads);
      ps[fused_pad(i)] = lo[k] & 0xffffu;
      ps[fused_pad(i + 1)] = hi[k] & 0xffffu;
      ps[fused_pad(i + 2)] = lo[k] >> 16;
      ps[fused_pad(i + 3)] = hi[k] >> 16;
    }
    __syncthreads();

    // Per-channel exclusive prefix sums over the span, in place.
    const int c0 = i0 + tid * F::chunk;
    uint32_t tot[C], val[F::chunk];
#pragma unroll
    for (int c = 0; c < C; c++)
      tot[c] = 0;
#pragma unroll
    for (int m = 0; m < F::chunk; m++) {
      val[m] = ps[fused_pad(c0 + m)];
      tot[m % C] += val[m];
    }
    uint32_t base[C];
#pragma unroll
    for (int c = 0; c < C; c++) {
      uint32_t incl = warp_inclusive_sum(tot[c], lane);
      base[c] = incl - tot[c];
      if (lane == 31)
        warp_tot[warp][c] = incl;
    }
    __syncthreads();
    for (int wp = 0; wp < warp; wp++)
#pragma unroll
      for (int c = 0; c < C; c++)
        base[c] += warp_tot[wp][c];
#pragma unroll
    for (int m = 0; m < F::chunk; m++) {
      ps[fused_pad(c0 + m)] = base[m % C];
      base[m % C] += val[m];
    }
    __syncthreads();

    uint8_t *drow = dst + (size_t)y * (size_t)row_bytes + (size_t)x0 * C;
    const uint8_t *srow = src + (size_t)y * (size_t)row_bytes + (size_t)x0 * C;
    const uint8_t *mrow = d_mask ? d_mask + (size_t)y * s.w + x0 : NULL;
    for (int q = tid; q < out_words + (out_tail ? 1 : 0); q += kFusedThreads) {
      uint32_t word = 0, keep = 0; // keep: bytes that take the source value
#pragma unroll
      for (int e = 0; e < 4; e++) {
        int j = 4 * q + e;
        int p = i0 + j;
        uint32_t o = div_small(ps[fused_pad(p + span)] - ps[fused_pad(p)] + s.half, s);
        word |= (o & 0xffu) << (8 * e);
        if (mrow && j < tn * C) {
          int px = j / C;
          bool alpha = (C == 2 || C == 4) && j - px * C == C - 1;
          if (alpha || mrow[px] >= 128)
            keep |= 0xffu << (8 * e);
        }
      }
      if (q < out_words) {
        if (keep)
          word = (word & ~keep) | (*(const uint32_t *)(srow + 4 * q) & keep);
        *(uint32_t *)(drow + 4 * q) = word;
      } else {
        for (int e = 0; e < out_tail; e++)
          drow[4 * q + e] =
              (uint8_t)((keep >> (8 * e)) & 0xffu ? srow[4 * q + e] : (word >> (8 * e)) & 0xffu);
      }
    }

    if (y + 1 < y1)
#pragma unroll
      for (int k = 0; k < kFusedWords; k++) {
        lo[k] = lo[k] - (nout[k] & 0x00ff00ffu) + (nin[k] & 0x00ff00ffu);
        hi[k] = hi[k] - ((nout[k] >> 8) & 0x00ff00ffu) + ((nin[k] >> 8) & 0x00ff00ffu);
      }
  }
}

// The fast variant on the design gpuimg_blur_fast_launch() (kernels/blur.h) chooses, with
// the shape and the numbers it gives: the model predicts the same launch.
template <int C>
int launch_fused(gpuimg_cuda_t *ctx, const uint8_t *d_src, uint8_t *d_dst, BlurShape s,
                 const uint8_t *d_mask, const gpuimg_blur_fast_t &f, gpuimg_launch_t *info)
{
  dim3 grid = gpuimg_launch_grid(info), block = gpuimg_launch_block(info);
  if (gpuimg_cuda_check_grid(ctx, grid, "blur_fused_kernel") < 0)
    return -1;
  blur_fused_kernel<C><<<grid, block, 0, ctx->stream>>>(d_src, d_mask, d_dst, s, f.tile, f.rows);
  GPUIMG_CUDA_CHECK_LAUNCH("blur_fused_kernel");
  gpuimg_launch_measure(ctx, info, blur_fused_kernel<C>);
  return 0;
}

// One instance of the strip kernel: RMAX bounds r and sizes each warp's shared slice.
template <int C, int RMAX>
int launch_strip_rmax(gpuimg_cuda_t *ctx, const uint8_t *d_src, uint8_t *d_dst, BlurShape s,
                      const uint8_t *d_mask, int rows, gpuimg_launch_t *info)
{
  dim3 grid = gpuimg_launch_grid(info), block = gpuimg_launch_block(info);
  size_t shared = info->shared_bytes;
  if (gpuimg_cuda_check_grid(ctx, grid, "blur_strip_kernel") < 0 ||
      allow_shared(blur_strip_kernel<C, RMAX>, shared) < 0)
    return -1;
  blur_strip_kernel<C, RMAX><<<grid, block, shared, ctx->stream>>>(d_src, d_mask, d_dst, s, rows);
  GPUIMG_CUDA_CHECK_LAUNCH("blur_strip_kernel");
  gpuimg_launch_measure(ctx, info, blur_strip_kernel<C, RMAX>);
  return 0;
}

template <int C>
int launch_strip(gpuimg_cuda_t *ctx, const uint8_t *d_src, uint8_t *d_dst, BlurShape s,
                 const uint8_t *d_mask, const gpuimg_blur_fast_t &f, gpuimg_launch_t *info)
{
  if (s.r <= 4)
    return launch_strip_rmax<C, 4>(ctx, d_src, d_dst, s, d_mask, f.rows, info);
  if (s.r <= 16)
    return launch_strip_rmax<C, 16>(ctx, d_src, d_dst, s, d_mask, f.rows, info);
  return launch_strip_rmax<C, 64>(ctx, d_src, d_dst, s, d_mask, f.rows, info);
}

} // namespace

template <int C>
int enqueue_fast(gpuimg_cuda_t *ctx, const uint8_t *d_src, uint8_t *d_dst, BlurShape s,
                 const uint8_t *d_mask, gpuimg_launch_t *info)
{
  gpuimg_launch_env_t env = gpuimg_cuda_env(ctx);
  gpuimg_blur_fast_t f;
  uintptr_t align = (uintptr_t)d_src | (uintptr_t)d_dst | (uintptr_t)d_mask;
  if (gpuimg_blur_fast_launch(s.w, s.h, s.r, C, d_mask != NULL, align % 16 == 0, &env, info, &f) ==
      GPUIMG_LAUNCH_IMPOSSIBLE) {
    gpuimg_error_set(GPUIMG_EXIT_DEVICE, "blur", "radius %d too large for the fast kernel", s.r);
    return -1;
  }
  switch (f.design) {
  case GPUIMG_BLUR_CHUNK:
    return enqueue_chunk<C>(ctx, d_src, d_dst, s, d_mask, f, info);
  case GPUIMG_BLUR_PAIR:
    return enqueue_pair<C>(ctx, d_src, d_dst, s, d_mask, f, info);
  case GPUIMG_BLUR_FUSED:
    return launch_fused<C>(ctx, d_src, d_dst, s, d_mask, f, info);
  case GPUIMG_BLUR_STRIP:
    return launch_strip<C>(ctx, d_src, d_dst, s, d_mask, f, info);
  case GPUIMG_BLUR_TILED:
    return enqueue_tiled<C>(ctx, d_src, d_dst, s, GPUIMG_TILE_U8, info);
  case GPUIMG_BLUR_TWOPASS:
    break;
  }
  return enqueue_twopass<C>(ctx, d_src, d_dst, s, d_mask, f, info);
}

template int enqueue_fast<1>(gpuimg_cuda_t *, const uint8_t *, uint8_t *, BlurShape,
                             const uint8_t *, gpuimg_launch_t *);
template int enqueue_fast<2>(gpuimg_cuda_t *, const uint8_t *, uint8_t *, BlurShape,
                             const uint8_t *, gpuimg_launch_t *);
template int enqueue_fast<3>(gpuimg_cuda_t *, const uint8_t *, uint8_t *, BlurShape,
                             const uint8_t *, gpuimg_launch_t *);
template int enqueue_fast<4>(gpuimg_cuda_t *, const uint8_t *, uint8_t *, BlurShape,
                             const uint8_t *, gpuimg_launch_t *);

} // namespace gpuimg_blur
