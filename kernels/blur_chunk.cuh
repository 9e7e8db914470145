// blur_chunk.cuh: what the chunk kernel (blur_chunk.cu) and the pair kernel (blur_pair.cu)
// share: a thread's chunk of 8 pixels, its loads, stores and packed column sums, and the
// padded shared-memory row of a block's prefix sums.
#ifndef GPUIMG_BLUR_CHUNK_CUH
#define GPUIMG_BLUR_CHUNK_CUH

#include <stdint.h>

#include "blur_internal.cuh"

namespace gpuimg_blur
{
namespace
{

constexpr int kChunkPx = GPUIMG_BLUR_CHUNK_PX;           // pixels a thread owns
constexpr int kChunkThreads = GPUIMG_BLUR_CHUNK_THREADS; // threads a block
constexpr int kChunkSpan = kChunkPx * kChunkThreads;     // pixels of a block's row span
constexpr uint32_t kLanes = 0x00ff00ffu;                 // bytes 0 and 2 of a word

// Shared-memory index of P's pixel i in a channel's row: one padding word after every 8, so
// that threads reading or writing pixel i + 8 * thread hit 32 different banks (stride 9).
__host__ __device__ inline int chunk_pad(int i)
{
  return i + (i >> 3);
}
constexpr int kChunkPadded = kChunkSpan + 1 + kChunkSpan / 8; // chunk_pad(kChunkSpan) + 1

// The 8C bytes of pixels [px, px + 8) of row rp as 2C words (byte 4k + e of the chunk in
// byte e of word k), pixels outside [0, w) clamped to the nearest edge.
template <int C>
__device__ __forceinline__ void chunk_load(const uint8_t *rp, int px, int w, uint32_t (&v)[2 * C])
{
  if (px >= 0 && px + kChunkPx <= w) {
    const uint8_t *p = rp + (size_t)px * C;
    if (C % 2 == 0) {
#pragma unroll
      for (int k = 0; k < C / 2; k++) {
        uint4 q = __ldg((const uint4 *)p + k);
        v[4 * k] = q.x, v[4 * k + 1] = q.y, v[4 * k + 2] = q.z, v[4 * k + 3] = q.w;
      }
    } else {
#pragma unroll
      for (int k = 0; k < C; k++) {
        uint2 q = __ldg((const uint2 *)p + k);
        v[2 * k] = q.x, v[2 * k + 1] = q.y;
      }
    }
    return;
  }
#pragma unroll
  for (int k = 0; k < 2 * C; k++) {
    uint32_t word = 0;
#pragma unroll
    for (int e = 0; e < 4; e++) {
      int m = 4 * k + e, x = gpuimg_clampi(px + m / C, 0, w - 1);
      word |= (uint32_t)rp[(size_t)x * C + m % C] << (8 * e);
    }
    v[k] = word;
  }
}

// Stores 2C words as the 8C bytes at p (16-byte aligned when C is even, else 8-byte).
template <int C> __device__ __forceinline__ void chunk_store(uint8_t *p, const uint32_t (&v)[2 * C])
{
  if (C % 2 == 0) {
#pragma unroll
    for (int k = 0; k < C / 2; k++)
      ((uint4 *)p)[k] = make_uint4(v[4 * k], v[4 * k + 1], v[4 * k + 2], v[4 * k + 3]);
  } else {
#pragma unroll
    for (int k = 0; k < C; k++)
      ((uint2 *)p)[k] = make_uint2(v[2 * k], v[2 * k + 1]);
  }
}

// Adds the 8C bytes of v into packed column sums: even bytes to lo, odd bytes to hi.
template <int C>
__device__ __forceinline__ void chunk_add(uint32_t (&lo)[2 * C], uint32_t (&hi)[2 * C],
                                          const uint32_t (&v)[2 * C])
{
#pragma unroll
  for (int k = 0; k < 2 * C; k++) {
    lo[k] += v[k] & kLanes;
    hi[k] += (v[k] >> 8) & kLanes;
  }
}

// Moves packed column sums down a row: adds the row entering (in), subtracts the leaving one.
template <int C>
__device__ __forceinline__ void chunk_move(uint32_t (&lo)[2 * C], uint32_t (&hi)[2 * C],
                                           const uint32_t (&in)[2 * C],
                                           const uint32_t (&out)[2 * C])
{
#pragma unroll
  for (int k = 0; k < 2 * C; k++) {
    lo[k] = lo[k] + (in[k] & kLanes) - (out[k] & kLanes);
    hi[k] = hi[k] + ((in[k] >> 8) & kLanes) - ((out[k] >> 8) & kLanes);
  }
}

// Adds rows [ya, yb] of the image (row_bytes apart from src, every one inside it) into packed
// column sums; for whole chunks 32 / (2C) rows at a time (5 for RGB), their loads in flight
// together.
template <int C>
__device__ __forceinline__ void chunk_sum_rows(const uint8_t *src, size_t row_bytes, int px, int w,
                                               int ya, int yb, uint32_t (&lo)[2 * C],
                                               uint32_t (&hi)[2 * C])
{
  constexpr int W = 2 * C, NB = 32 / W;
  int yy = ya;
  if (px >= 0 && px + kChunkPx <= w)
    for (; yy + NB - 1 <= yb; yy += NB) {
      uint32_t a[NB][W];
#pragma unroll
      for (int q = 0; q < NB; q++)
        chunk_load<C>(src + (size_t)(yy + q) * row_bytes, px, w, a[q]);
#pragma unroll
      for (int q = 0; q < NB; q++)
        chunk_add<C>(lo, hi, a[q]);
    }
  for (; yy <= yb; yy++) {
    uint32_t a[W];
    chunk_load<C>(src + (size_t)yy * row_bytes, px, w, a);
    chunk_add<C>(lo, hi, a);
  }
}

// Adds to packed column sums the window's rows above and below the image, which count as its
// edge rows: top copies of the image's first row (at src) and bottom copies of its last (row
// last, row_bytes apart); nothing when the window lies inside the image.
template <int C>
__device__ __forceinline__ void chunk_edges(const uint8_t *src, size_t row_bytes, int last, int px,
                                            int w, int top, int bottom, uint32_t (&lo)[2 * C],
                                            uint32_t (&hi)[2 * C])
{
  if (top + bottom) {
    uint32_t a[2 * C], b[2 * C];
    chunk_load<C>(src, px, w, a);
    chunk_load<C>(src + (size_t)last * row_bytes, px, w, b);
#pragma unroll
    for (int k = 0; k < 2 * C; k++) {
      lo[k] = (a[k] & kLanes) * top + (b[k] & kLanes) * bottom;
      hi[k] = ((a[k] >> 8) & kLanes) * top + ((b[k] >> 8) & kLanes) * bottom;
    }
  }
}

// Value m (byte m of the chunk) of the packed column sums: even bytes in lo, odd in hi, 16
// bits each.
template <int C>
__device__ __forceinline__ uint32_t chunk_value(const uint32_t (&lo)[2 * C],
                                                const uint32_t (&hi)[2 * C], int m)
{
  uint32_t p = (m & 1) ? hi[m >> 2] : lo[m >> 2];
  return (m & 2) ? p >> 16 : p & 0xffffu;
}

// Portrait: the bytes of o (pixels [px, px + 8) of a row) whose pixel is subject (its mask
// byte in mrow >= 128), and alpha, take the source row srow's bytes.
template <int C>
__device__ __forceinline__ void chunk_keep_source(const uint8_t *srow, const uint8_t *mrow, int px,
                                                  int w, uint32_t (&o)[2 * C])
{
  constexpr int W = 2 * C;
  uint2 mk = *(const uint2 *)(mrow + px);
  uint32_t keep[W], sv[W];
  bool any = false;
#pragma unroll
  for (int k = 0; k < W; k++) {
    keep[k] = 0;
#pragma unroll
    for (int e = 0; e < 4; e++) {
      int m = 4 * k + e, j = m / C;
      uint32_t mj = ((j < 4 ? mk.x : mk.y) >> (8 * (j & 3))) & 0xffu;
      if (((C == 2 || C == 4) && m % C == C - 1) || mj >= 128)
        keep[k] |= 0xffu << (8 * e);
    }
    any |= keep[k] != 0;
  }
  if (any) {
    chunk_load<C>(srow, px, w, sv);
#pragma unroll
    for (int k = 0; k < W; k++)
      o[k] = (o[k] & ~keep[k]) | (sv[k] & keep[k]);
  }
}

// This thread's per-channel sums of its packed column sums.
template <int C>
__device__ __forceinline__ void chunk_totals(const uint32_t (&lo)[2 * C],
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
__device__ __forceinline__ void chunk_prefix(uint32_t *P, int tid, const uint32_t (&lo)[2 * C],
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
__device__ __forceinline__ void chunk_output(const uint32_t *P, const uint8_t *src,
                                             const uint8_t *d_mask, uint8_t *dst,
                                             const BlurShape &s, int y, int px, int ia, int ib)
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

// A thread's place in a block of the chunk or pair kernel (blockIdx.x: a tile of tile output
// pixels, blockIdx.y: a run of rows rows): the span's first pixel xs (a multiple of 8, rounded
// towards -infinity), its chunk's first pixel px, whether some output's window reads the chunk
// (needed) and whether its pixels are the tile's (outputs), the run's rows [y0, y1), the
// image's last row, and P's pixels ia and ib, which bound the window of its first pixel.
struct ChunkPlace {
  int xs, px, y0, y1, last, ia, ib;
  bool needed, outputs;
  size_t row_bytes;
};

template <int C>
__device__ __forceinline__ ChunkPlace chunk_place(const BlurShape &s, int tile, int rows)
{
  ChunkPlace t;
  const int x0 = blockIdx.x * tile, tn = min(tile, s.w - x0);
  t.xs = (x0 - s.r) & ~7;
  t.px = t.xs + kChunkPx * (int)threadIdx.x;
  t.needed = t.px <= x0 + tn + s.r;
  t.outputs = t.px >= x0 && t.px < x0 + tn;
  t.y0 = blockIdx.y * rows;
  t.y1 = min(t.y0 + rows, s.h);
  t.last = s.h - 1;
  t.row_bytes = (size_t)s.w * C;
  t.ia = t.px - t.xs - s.r;
  t.ib = t.px - t.xs + s.r + 1;
  return t;
}

// The rows entering and leaving V when it moves from row y - 1 to row y (rows past the image's
// edges are its edge rows), for the chunk at t.px; nothing past the run or where no output
// needs the chunk.
template <int C>
__device__ __forceinline__ void chunk_fetch(const uint8_t *src, const BlurShape &s,
                                            const ChunkPlace &t, int y, uint32_t (&in)[2 * C],
                                            uint32_t (&out)[2 * C])
{
  if (t.needed && y < t.y1) {
    chunk_load<C>(src + (size_t)gpuimg_clampi(y + s.r, 0, t.last) * t.row_bytes, t.px, s.w, in);
    chunk_load<C>(src + (size_t)gpuimg_clampi(y - 1 - s.r, 0, t.last) * t.row_bytes, t.px, s.w,
                  out);
  }
}

} // namespace
} // namespace gpuimg_blur

#endif
