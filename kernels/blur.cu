// blur.cu: box blur on the GPU: naive, tiled (shared-memory tile + apron) and fast (running sums).
#include <stdlib.h>
#include <string.h>

#include "cuda_internal.cuh"

namespace
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

// Output pixels per warp in the strip kernel.
constexpr int kStripWidth = 128;

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
      uint32_t incl = tot[c];
#pragma unroll
      for (int d = 1; d < 32; d <<= 1) {
        uint32_t t = __shfl_up_sync(0xffffffffu, incl, d);
        if (lane >= d)
          incl += t;
      }
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

// blur_naive_kernel<C>: one thread per pixel sums its (2r+1)^2 window straight from
// global memory, clamping each coordinate to the image. A warp covers 32 neighbouring
// pixels of one row, so each window row is a coalesced read, but every pixel is read
// (2r+1)^2 times over: the cost grows with r^2 and only the caches hide it.
template <int C>
__global__ void blur_naive_kernel(const uint8_t *__restrict__ src, uint8_t *__restrict__ dst,
                                  BlurShape s)
{
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= s.w || y >= s.h)
    return;
  uint32_t sum[C] = {};
  for (int dy = -s.r; dy <= s.r; dy++) {
    const uint8_t *row = src + (size_t)gpuimg_clampi(y + dy, 0, s.h - 1) * s.w * C;
    for (int dx = -s.r; dx <= s.r; dx++) {
      const uint8_t *p = row + (size_t)gpuimg_clampi(x + dx, 0, s.w - 1) * C;
#pragma unroll
      for (int c = 0; c < C; c++)
        sum[c] += __ldg(p + c);
    }
  }
  uint8_t *o = dst + ((size_t)y * s.w + x) * C;
#pragma unroll
  for (int c = 0; c < C; c++)
    o[c] = (uint8_t)gpuimg_div_exact(sum[c] + s.half, s.count, s.inv);
}

// blur_tiled_kernel<C>: a block of BW x BH threads produces a BW x BH tile. It stages
// the tile plus an apron of r pixels on every side in shared memory (one 4-byte
// uchar4 per pixel whatever C is), loading it cooperatively with coalesced reads and
// clamped coordinates, then each thread sums its window from shared memory. When the
// (BH + 2r) x (BW + 2r) tile does not fit, it is staged in bands of band_rows rows and
// the threads accumulate band by band, so any radius works. Consecutive threads read
// consecutive 4-byte words: no bank conflicts.
// Tile storage: 4 bytes per pixel (uchar4) whatever C is, or C floats per pixel (the
// float tile of the teaching material: 3x the shared memory for RGB, so fewer blocks fit
// an SM). Sums stay exact integers either way.
template <int C, typename P> struct Tile;
template <int C> struct Tile<C, uchar4> {
  static __device__ __forceinline__ void store(uchar4 *t, size_t i, const uint8_t *p)
  {
    uchar4 v = make_uchar4(0, 0, 0, 0);
    v.x = __ldg(p);
    if (C > 1)
      v.y = __ldg(p + 1);
    if (C > 2)
      v.z = __ldg(p + 2);
    if (C > 3)
      v.w = __ldg(p + 3);
    t[i] = v;
  }
  static __device__ __forceinline__ void add(const uchar4 *t, size_t i, uint32_t *sum)
  {
    uchar4 v = t[i];
    sum[0] += v.x;
    if (C > 1)
      sum[1] += v.y;
    if (C > 2)
      sum[2] += v.z;
    if (C > 3)
      sum[3] += v.w;
  }
  static constexpr size_t bytes = sizeof(uchar4);
};
template <int C> struct Tile<C, float> {
  static __device__ __forceinline__ void store(float *t, size_t i, const uint8_t *p)
  {
#pragma unroll
    for (int c = 0; c < C; c++)
      t[i * C + c] = (float)__ldg(p + c);
  }
  static __device__ __forceinline__ void add(const float *t, size_t i, uint32_t *sum)
  {
#pragma unroll
    for (int c = 0; c < C; c++)
      sum[c] += (uint32_t)t[i * C + c];
  }
  static constexpr size_t bytes = C * sizeof(float);
};

// blur_tiled_kernel<C, P>: a block of BW x BH threads produces a BW x BH tile. It stages
// the tile plus an apron of r pixels on every side in shared memory (P = uchar4: one
// 4-byte word per pixel; P = float: C floats per pixel), loading it cooperatively with
// coalesced reads and clamped coordinates, then each thread sums its window from shared
// memory. When the (BH + 2r) x (BW + 2r) tile does not fit, it is staged in bands of
// band_rows rows and the threads accumulate band by band, so any radius works. With
// uchar4, consecutive threads read consecutive words: no bank conflicts.
template <int C, typename P>
__global__ void blur_tiled_kernel(const uint8_t *__restrict__ src, uint8_t *__restrict__ dst,
                                  BlurShape s, int band_rows)
{
  extern __shared__ __align__(16) unsigned char tile_raw[];
  P *tile = reinterpret_cast<P *>(tile_raw);
  const int bw = blockDim.x, bh = blockDim.y;
  const int tile_w = bw + 2 * s.r, tile_h = bh + 2 * s.r;
  const int x0 = blockIdx.x * bw, y0 = blockIdx.y * bh;
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int tid = ty * bw + tx, nthreads = bw * bh;
  uint32_t sum[C] = {};

  for (int band0 = 0; band0 < tile_h; band0 += band_rows) {
    int rows = min(band_rows, tile_h - band0);
    __syncthreads(); // the previous band is no longer read
    for (int i = tid; i < rows * tile_w; i += nthreads) {
      int ry = i / tile_w, rx = i - ry * tile_w;
      int gy = gpuimg_clampi(y0 - s.r + band0 + ry, 0, s.h - 1);
      int gx = gpuimg_clampi(x0 - s.r + rx, 0, s.w - 1);
      Tile<C, P>::store(tile, (size_t)i, src + ((size_t)gy * s.w + gx) * C);
    }
    __syncthreads(); // the band is complete
    // This thread's window covers tile rows ty .. ty + 2r.
    int j0 = max(ty, band0), j1 = min(ty + 2 * s.r, band0 + rows - 1);
    for (int j = j0; j <= j1; j++) {
      size_t row = (size_t)(j - band0) * tile_w + tx;
      for (int k = 0; k <= 2 * s.r; k++)
        Tile<C, P>::add(tile, row + k, sum);
    }
  }
  int x = x0 + tx, y = y0 + ty;
  if (x < s.w && y < s.h) {
    uint8_t *o = dst + ((size_t)y * s.w + x) * C;
#pragma unroll
    for (int c = 0; c < C; c++)
      o[c] = (uint8_t)gpuimg_div_exact(sum[c] + s.half, s.count, s.inv);
  }
}

// blur_tiled_sep_kernel<C, P>: the tiled blur when the whole (BH + 2r) x (BW + 2r) tile
// fits in shared memory (the usual case). The block stages tile plus apron exactly as
// blur_tiled_kernel does, then uses it twice: each thread first sums 2r + 1 tile pixels
// along its column's rows (horizontal window sums of the tile rows it is given, kept in
// a second shared array, one uint32 plane per channel), then, after a barrier, sums 2r + 1
// of those down its column. Every tile pixel is read from global memory once and the
// work per pixel is O(r) shared-memory reads instead of O(r^2).
template <int C, typename P>
__global__ void blur_tiled_sep_kernel(const uint8_t *__restrict__ src, uint8_t *__restrict__ dst,
                                      BlurShape s)
{
  extern __shared__ __align__(16) unsigned char tile_raw[];
  const int bw = blockDim.x, bh = blockDim.y;
  const int tile_w = bw + 2 * s.r, tile_h = bh + 2 * s.r;
  P *tile = reinterpret_cast<P *>(tile_raw);
  uint32_t *hs = reinterpret_cast<uint32_t *>(
      tile_raw + ((size_t)tile_w * tile_h * Tile<C, P>::bytes + 15) / 16 * 16);
  const int x0 = blockIdx.x * bw, y0 = blockIdx.y * bh;
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int tid = ty * bw + tx, nthreads = bw * bh;

  for (int i = tid; i < tile_w * tile_h; i += nthreads) {
    int ry = i / tile_w, rx = i - ry * tile_w;
    int gy = gpuimg_clampi(y0 - s.r + ry, 0, s.h - 1);
    int gx = gpuimg_clampi(x0 - s.r + rx, 0, s.w - 1);
    Tile<C, P>::store(tile, (size_t)i, src + ((size_t)gy * s.w + gx) * C);
  }
  __syncthreads(); // the tile is complete
  for (int j = ty; j < tile_h; j += bh) {
    uint32_t sum[C] = {};
    size_t row = (size_t)j * tile_w + tx;
    for (int k = 0; k <= 2 * s.r; k++)
      Tile<C, P>::add(tile, row + k, sum);
#pragma unroll
    for (int c = 0; c < C; c++)
      hs[((size_t)c * tile_h + j) * bw + tx] = sum[c];
  }
  __syncthreads(); // every row's horizontal sums are complete
  int x = x0 + tx, y = y0 + ty;
  if (x < s.w && y < s.h) {
    uint8_t *o = dst + ((size_t)y * s.w + x) * C;
#pragma unroll
    for (int c = 0; c < C; c++) {
      uint32_t sum = 0;
      const uint32_t *col = hs + (size_t)c * tile_h * bw + tx;
      for (int j = ty; j <= ty + 2 * s.r; j++)
        sum += col[(size_t)j * bw];
      o[c] = (uint8_t)gpuimg_div_exact(sum + s.half, s.count, s.inv);
    }
  }
}

template <int C, typename P>
int launch_tiled(gpuimg_cuda_t *ctx, const uint8_t *d_src, uint8_t *d_dst, BlurShape s,
                 gpuimg_launch_t *info);

// Threads of the row-sum kernel, and output pixels per block.
constexpr int kRowThreads = 256;
constexpr int kRowSegment = 1024;

// blur_rows_kernel<C> (fast, pass 1): block (blockIdx.x, y) makes the horizontal window
// sums of up to 1024 pixels of row y. It loads the segment plus r clamped pixels each side
// into shared memory, one uint32 plane per channel, turns each plane into inclusive
// prefix sums (each thread scans a contiguous chunk, then a warp-shuffle scan of the chunk
// totals), and writes out[x] = P[x + 2r] - P[x - 1]: O(1) per pixel whatever r is.
// Global reads and writes are consecutive across threads.
template <int C, typename T>
__global__ void blur_rows_kernel(const uint8_t *__restrict__ src, T *__restrict__ rows, BlurShape s,
                                 int row_lo, int row_hi)
{
  extern __shared__ uint32_t plane[]; // C planes of len values
  __shared__ uint32_t warp_total[kRowThreads / 32];
  const int x0 = blockIdx.x * kRowSegment;
  const int n_out = min(kRowSegment, s.w - x0);
  const int len = n_out + 2 * s.r;
  const int tid = threadIdx.x;

  // Grid-stride over rows: gridDim.y is capped at 65535.
  for (int y = row_lo + blockIdx.y; y < row_hi; y += gridDim.y) {
    const uint8_t *row = src + (size_t)y * s.w * C;
    __syncthreads(); // the previous row's planes are no longer read
    for (int j = tid; j < len; j += kRowThreads) {
      const uint8_t *p = row + (size_t)gpuimg_clampi(x0 - s.r + j, 0, s.w - 1) * C;
#pragma unroll
      for (int c = 0; c < C; c++)
        plane[c * len + j] = __ldg(p + c);
    }
    __syncthreads();

    // Chunked block scan of each plane.
    const int chunk = (len + kRowThreads - 1) / kRowThreads;
    const int b = min(tid * chunk, len), e = min(b + chunk, len);
    const int lane = tid & 31, warp = tid >> 5;
    for (int c = 0; c < C; c++) {
      uint32_t *pl = plane + c * len;
      uint32_t acc = 0;
      for (int j = b; j < e; j++) {
        acc += pl[j];
        pl[j] = acc;
      }
      uint32_t incl = acc; // inclusive scan of chunk totals within the warp
#pragma unroll
      for (int d = 1; d < 32; d <<= 1) {
        uint32_t v = __shfl_up_sync(0xffffffffu, incl, d);
        if (lane >= d)
          incl += v;
      }
      if (lane == 31)
        warp_total[warp] = incl;
      __syncthreads();
      uint32_t offset = incl - acc;
      for (int k = 0; k < warp; k++)
        offset += warp_total[k];
      for (int j = b; j < e; j++)
        pl[j] += offset;
      __syncthreads(); // plane complete; warp_total reusable
    }

    T *out = rows + ((size_t)(y - row_lo) * s.w + x0) * C;
    for (int i = tid; i < n_out; i += kRowThreads) {
#pragma unroll
      for (int c = 0; c < C; c++) {
        const uint32_t *pl = plane + c * len;
        out[(size_t)i * C + c] = (T)(pl[i + 2 * s.r] - (i > 0 ? pl[i - 1] : 0u));
      }
    }
  }
}

// blur_columns_kernel<C> (fast, pass 2): each thread owns one column of the row sums
// (one channel of one x) over a strip of rows and walks down it keeping the window's
// running sum: add the row entering at the bottom, subtract the row leaving at the top.
// Neighbouring threads own neighbouring columns, so every step is a coalesced row read.
// With d_mask (portrait) subject pixels, and alpha everywhere, take the source value.
template <int C, typename T>
__global__ void blur_columns_kernel(const T *__restrict__ rows, const uint8_t *__restrict__ src,
                                    const uint8_t *__restrict__ d_mask, uint8_t *__restrict__ dst,
                                    BlurShape s, int row_lo, int y_begin, int y_end, int strip)
{
  const int cols = s.w * C;
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (col >= cols)
    return;
  // Rows y_begin .. y_end - 1 of this band; the row sums hold rows from row_lo on.
  const int y0 = y_begin + blockIdx.y * strip;
  const int y1 = min(y0 + strip, y_end);
  const int last = s.h - 1;
  const T *column = rows + col;
  auto at = [&](int yy) { return (uint32_t)__ldg(column + (size_t)(yy - row_lo) * cols); };

  // Window rows y0-r .. y0+r, clamped: the top and bottom rows count several times.
  int lo = y0 - s.r, hi = y0 + s.r;
  uint32_t sum = 0;
  if (lo < 0)
    sum += (uint32_t)(-lo) * at(0);
  if (hi > last)
    sum += (uint32_t)(hi - last) * at(last);
  for (int yy = max(lo, 0); yy <= min(hi, last); yy++)
    sum += at(yy);

  const int x = col / C;
  // Portrait carries alpha through: the alpha column always takes the source.
  const bool alpha = d_mask && (C == 2 || C == 4) && col % C == C - 1;
  // Unrolled so the loads of several rows are in flight at once.
#pragma unroll 4
  for (int y = y0; y < y1; y++) {
    size_t i = (size_t)y * cols + col;
    uint8_t v = (uint8_t)div_count(sum + s.half, s);
    if (d_mask && (alpha || d_mask[(size_t)y * s.w + x] >= 128))
      v = src[i];
    dst[i] = v;
    // Slide the window down, except after the band's last row: its entering row may lie
    // past the rows this band's row sums hold.
    if (y + 1 < y1)
      sum += at(min(y + s.r + 1, last)) - at(max(y - s.r, 0));
  }
}

// Words (4 bytes) of a row each thread of the fused kernel keeps column sums for.
constexpr int kFusedWords = 2;
constexpr int kFusedThreads = 256;

// Shared-memory index of span value i: one padding word per 32 makes the row's stride-4
// accesses (4 bytes per thread) and the scan's stride-8 chunks hit 32 different banks
// (stride 9: at most 2 threads a bank).
__device__ __forceinline__ int fused_pad(int i) { return i + (i >> 5); }

// Pixels per thread in the fused kernel's scan, and the span values one block holds.
template <int C> struct Fused {
  static constexpr int span_bytes = kFusedWords * 4 * kFusedThreads;
  static constexpr int chunk_px = (span_bytes / C + kFusedThreads - 1) / kFusedThreads;
  static constexpr int chunk = chunk_px * C;                 // values per thread in the scan
  static constexpr int values = chunk * kFusedThreads + 4;   // values in the shared row (+ i0)
  static constexpr int padded = values + (values >> 5);      // its shared words
  // Output pixels per block: the span must hold them, the 2r apron and 3 alignment bytes,
  // and the scan one pixel more (the prefix sum past the last window).
  static int tile(int r)
  {
    int a = (span_bytes - 3) / C, b = chunk_px * kFusedThreads - 1;
    return ((a < b ? a : b) - 2 * r) & ~3;
  }
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
  const int b0 = (x0 - s.r) * C;      // row byte of span value 0 (may be < 0: clamped)
  const int wb = b0 >= 0 ? b0 & ~3 : -((-b0 + 3) & ~3); // aligned word start
  const int i0 = b0 - wb;             // shared index of span value 0
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
      uint32_t incl = tot[c];
#pragma unroll
      for (int d = 1; d < 32; d <<= 1) {
        uint32_t t = __shfl_up_sync(0xffffffffu, incl, d);
        if (lane >= d)
          incl += t;
      }
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
          drow[4 * q + e] = (uint8_t)((keep >> (8 * e)) & 0xffu ? srow[4 * q + e]
                                                                   : (word >> (8 * e)) & 0xffu);
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

template <typename K> int allow_shared(K kernel, size_t bytes)
{
  if (bytes > 48 * 1024)
    GPUIMG_CUDA_CHECK(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes));
  return 0;
}

template <int C, typename T>
int enqueue_twopass(gpuimg_cuda_t *ctx, const uint8_t *d_src, uint8_t *d_dst, BlurShape s,
                    const uint8_t *d_mask, gpuimg_launch_t *info);

template <int C>
int enqueue(gpuimg_cuda_t *ctx, const uint8_t *d_src, uint8_t *d_dst, BlurShape s,
            gpuimg_variant_t variant, const uint8_t *d_mask, gpuimg_launch_t *info)
{
  cudaStream_t st = ctx->stream;

  if (variant == GPUIMG_VARIANT_NAIVE) {
    dim3 block = gpuimg_block2d(ctx, 16, 16), grid = gpuimg_grid2d(block, s.w, s.h);
    if (gpuimg_cuda_check_grid(ctx, grid, "blur_naive_kernel") < 0)
      return -1;
    blur_naive_kernel<C><<<grid, block, 0, st>>>(d_src, d_dst, s);
    GPUIMG_CUDA_CHECK_LAUNCH("blur_naive_kernel");
    gpuimg_launch_record(ctx, info, blur_naive_kernel<C>, "blur_naive_kernel", grid, block, 0, 1);
    return 0;
  }
  if (variant == GPUIMG_VARIANT_TILED)
    return ctx->tile == GPUIMG_TILE_FLOAT ? launch_tiled<C, float>(ctx, d_src, d_dst, s, info)
                                          : launch_tiled<C, uchar4>(ctx, d_src, d_dst, s, info);

  // Three designs, all O(1) per pixel in r: the single-pass strip kernel (r <= 64), the
  // fused single-pass kernel (4-byte aligned rows, r <= 127) and row sums + column walk.
  // By default the strip kernel serves blur (not portrait) with r <= 16 on images that give
  // it enough blocks (it was the fastest there on the H200), the fused kernel the rest it
  // takes (portrait at 8K r = 16: 0.55 ms against the strip kernel's 0.82), the two
  // passes what is left. GPUIMG_FAST_BLUR=strip|fused|twopass overrides the choice (for
  // benchmarks and tests), falling back to the two passes where the kernel cannot serve.
  const char *impl = getenv("GPUIMG_FAST_BLUR");
  if (impl && strcmp(impl, "strip") != 0 && strcmp(impl, "fused") != 0 &&
      strcmp(impl, "twopass") != 0)
    impl = NULL; // any other value: the default choice
  bool strip = impl ? strcmp(impl, "strip") == 0 && s.r <= 64 : s.r <= 16 && !d_mask;
  if (strip && !impl) {
    // The strip kernel needs tall runs of rows per warp; a small image then gives too few
    // blocks to fill the GPU (1024x768 at r = 16: 12 blocks).
    long long strips = (s.w + kStripWidth - 1) / kStripWidth;
    long long runs = (s.h + 4LL * s.r + 1) / (4LL * s.r + 2);
    if ((strips + 7) / 8 * runs < 2LL * ctx->prop.multiProcessorCount)
      strip = false;
  }
  bool fused = !strip && (!impl || strcmp(impl, "fused") == 0) && (long long)s.w * C % 4 == 0 &&
               (long long)s.w * C < (1LL << 30) && s.r <= 127 && Fused<C>::tile(s.r) >= 64;
  if (fused) {
    int tile = Fused<C>::tile(s.r);
    long long tiles = (s.w + tile - 1) / tile;
    // Runs of rows long enough to amortise each block's window set-up (2r + 1 row loads,
    // much cheaper than a row of output), short enough to give every SM several blocks.
    int rows = 64;
    while (rows > 16 && tiles * ((s.h + rows - 1) / rows) < 8LL * ctx->prop.multiProcessorCount)
      rows /= 2;
    if ((s.h + rows - 1) / rows > 65535)
      rows = (s.h + 65534) / 65535;
    dim3 block(kFusedThreads), grid((unsigned)tiles, (unsigned)((s.h + rows - 1) / rows));
    if (gpuimg_cuda_check_grid(ctx, grid, "blur_fused_kernel") < 0)
      return -1;
    blur_fused_kernel<C><<<grid, block, 0, st>>>(d_src, d_mask, d_dst, s, tile, rows);
    GPUIMG_CUDA_CHECK_LAUNCH("blur_fused_kernel");
    gpuimg_launch_record(ctx, info, blur_fused_kernel<C>, "blur_fused_kernel", grid, block, 0, 1);
    return 0;
  }
  if (strip) {
    // Strips of 128 pixels, 8 per block; runs of rows long enough to amortise each
    // warp's window set-up (2r+1 rows), short enough to give every SM many warps.
    dim3 block(256);
    unsigned strips = (unsigned)((s.w + kStripWidth - 1) / kStripWidth);
    dim3 grid((strips + 7) / 8);
    int want_warps = ctx->prop.multiProcessorCount * 48;
    int rows = (int)(((long long)s.h * strips + want_warps - 1) / want_warps);
    if (rows < 4 * s.r + 2)
      rows = 4 * s.r + 2;
    if (rows < 32)
      rows = 32;
    grid.y = (unsigned)((s.h + rows - 1) / rows);
    const char *name = "blur_strip_kernel";
    if (gpuimg_cuda_check_grid(ctx, grid, name) < 0)
      return -1;
#define GPUIMG_STRIP_LAUNCH(RMAX)                                                                  \
  do {                                                                                             \
    size_t shared = 8 * ((kStripWidth + 2 * (RMAX)) * C + C) * sizeof(uint32_t);                   \
    if (allow_shared(blur_strip_kernel<C, RMAX>, shared) < 0)                                      \
      return -1;                                                                                   \
    blur_strip_kernel<C, RMAX><<<grid, block, shared, st>>>(d_src, d_mask, d_dst, s, rows);        \
    GPUIMG_CUDA_CHECK_LAUNCH(name);                                                                \
    gpuimg_launch_record(ctx, info, blur_strip_kernel<C, RMAX>, name, grid, block, shared, 1);     \
  } while (0)
    if (s.r <= 4)
      GPUIMG_STRIP_LAUNCH(4);
    else if (s.r <= 16)
      GPUIMG_STRIP_LAUNCH(16);
    else
      GPUIMG_STRIP_LAUNCH(64);
#undef GPUIMG_STRIP_LAUNCH
    return 0;
  }

  // Row sums into scratch, then the column walk: 16-bit sums while 255 (2r + 1) fits.
  if (s.r <= 128)
    return enqueue_twopass<C, uint16_t>(ctx, d_src, d_dst, s, d_mask, info);
  return enqueue_twopass<C, uint32_t>(ctx, d_src, d_dst, s, d_mask, info);
}

template <int C, typename T>
int enqueue_twopass(gpuimg_cuda_t *ctx, const uint8_t *d_src, uint8_t *d_dst, BlurShape s,
                    const uint8_t *d_mask, gpuimg_launch_t *info)
{
  cudaStream_t st = ctx->stream;
  size_t optin = ctx->prop.sharedMemPerBlockOptin;
  // Bands of rows whose row sums (halo included) fit in half the L2 cache, so pass 2
  // reads them from L2 rather than device memory; at least 256 rows per band.
  size_t row_bytes = (size_t)s.w * C * sizeof(T);
  long long fit = (long long)(ctx->prop.l2CacheSize / 2 / row_bytes) - 2LL * s.r;
  int band = fit < 256 ? 256 : fit > s.h ? s.h : (int)fit;
  void *scratch;
  size_t rows_bytes = row_bytes * (size_t)min(band + 2 * s.r, s.h);
  if (gpuimg_cuda_scratch(ctx, rows_bytes, &scratch) < 0)
    return -1;
  T *d_rows = (T *)scratch;
  size_t row_shared = (size_t)C * (min(kRowSegment, s.w) + 2 * (size_t)s.r) * sizeof(uint32_t);
  if (row_shared > optin) {
    gpuimg_error_set(GPUIMG_EXIT_DEVICE, "blur", "radius %d too large for the fast kernel", s.r);
    return -1;
  }
  if (allow_shared(blur_rows_kernel<C, T>, row_shared) < 0)
    return -1;
  dim3 rblock(kRowThreads), cblock(256), cgrid((unsigned)((s.w * C + 255) / 256));
  int launches = 0;
  for (int b0 = 0; b0 < s.h; b0 += band) {
    int b1 = min(b0 + band, s.h);
    int lo = max(b0 - s.r, 0), hi = min(b1 + s.r, s.h); // rows the band's windows touch
    dim3 rgrid((s.w + kRowSegment - 1) / kRowSegment, min(hi - lo, 65535));
    if (gpuimg_cuda_check_grid(ctx, rgrid, "blur_rows_kernel") < 0)
      return -1;
    blur_rows_kernel<C, T><<<rgrid, rblock, row_shared, st>>>(d_src, d_rows, s, lo, hi);
    GPUIMG_CUDA_CHECK_LAUNCH("blur_rows_kernel");

    // Strips tall enough to amortise each thread's window set-up, short enough to give
    // every SM several blocks.
    int want = ctx->prop.multiProcessorCount * 8;
    int strips = (want + (int)cgrid.x - 1) / (int)cgrid.x;
    int strip = (b1 - b0 + strips - 1) / strips;
    if (strip < 32)
      strip = 32;
    cgrid.y = (unsigned)((b1 - b0 + strip - 1) / strip);
    if (gpuimg_cuda_check_grid(ctx, cgrid, "blur_columns_kernel") < 0)
      return -1;
    blur_columns_kernel<C, T>
        <<<cgrid, cblock, 0, st>>>(d_rows, d_src, d_mask, d_dst, s, lo, b0, b1, strip);
    GPUIMG_CUDA_CHECK_LAUNCH("blur_columns_kernel");
    launches += 2;
  }
  gpuimg_launch_record(ctx, info, blur_columns_kernel<C, T>, "blur_columns_kernel", cgrid, cblock,
                       0, launches);
  return 0;
}

template <int C, typename P>
int launch_tiled(gpuimg_cuda_t *ctx, const uint8_t *d_src, uint8_t *d_dst, BlurShape s,
                 gpuimg_launch_t *info)
{
  size_t optin = ctx->prop.sharedMemPerBlockOptin;
  dim3 block = gpuimg_block2d(ctx, 16, 16), grid = gpuimg_grid2d(block, s.w, s.h);
  size_t row_bytes = (block.x + 2 * (size_t)s.r) * Tile<C, P>::bytes;
  int tile_h = (int)block.y + 2 * s.r;
  if (gpuimg_cuda_check_grid(ctx, grid, "blur_tiled_kernel") < 0)
    return -1;
  // The whole tile plus the row sums, when they fit: the separable kernel.
  size_t sep =
      ((size_t)tile_h * row_bytes + 15) / 16 * 16 + (size_t)C * tile_h * block.x * sizeof(uint32_t);
  if (sep <= optin) {
    if (allow_shared(blur_tiled_sep_kernel<C, P>, sep) < 0)
      return -1;
    blur_tiled_sep_kernel<C, P><<<grid, block, sep, ctx->stream>>>(d_src, d_dst, s);
    GPUIMG_CUDA_CHECK_LAUNCH("blur_tiled_kernel");
    gpuimg_launch_record(ctx, info, blur_tiled_sep_kernel<C, P>, "blur_tiled_kernel", grid, block,
                         sep, 1);
    return 0;
  }
  // Otherwise bands of the tile, summed window by window.
  int band = (int)(optin / row_bytes);
  if (band > tile_h)
    band = tile_h;
  if (band < 1) {
    gpuimg_error_set(GPUIMG_EXIT_DEVICE, "blur", "radius %d too large for the tiled kernel", s.r);
    return -1;
  }
  size_t shared = (size_t)band * row_bytes;
  if (allow_shared(blur_tiled_kernel<C, P>, shared) < 0)
    return -1;
  blur_tiled_kernel<C, P><<<grid, block, shared, ctx->stream>>>(d_src, d_dst, s, band);
  GPUIMG_CUDA_CHECK_LAUNCH("blur_tiled_banded_kernel");
  gpuimg_launch_record(ctx, info, blur_tiled_kernel<C, P>, "blur_tiled_banded_kernel", grid, block,
                       shared, 1);
  return 0;
}

} // namespace

int gpuimg_blur_enqueue(gpuimg_cuda_t *ctx, const uint8_t *d_src, uint8_t *d_dst, int width,
                        int height, int channels, int radius, gpuimg_variant_t variant,
                        const uint8_t *d_mask, gpuimg_launch_t *info)
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
    return enqueue<1>(ctx, d_src, d_dst, s, variant, d_mask, info);
  case 2:
    return enqueue<2>(ctx, d_src, d_dst, s, variant, d_mask, info);
  case 3:
    return enqueue<3>(ctx, d_src, d_dst, s, variant, d_mask, info);
  case 4:
    return enqueue<4>(ctx, d_src, d_dst, s, variant, d_mask, info);
  }
  gpuimg_error_set(GPUIMG_EXIT_DEVICE, "blur", "unsupported channel count %d", channels);
  return -1;
}

extern "C" int gpuimg_blur_gpu(gpuimg_cuda_t *ctx, const uint8_t *d_src, uint8_t *d_dst, int width,
                               int height, int channels, int radius, gpuimg_variant_t variant,
                               gpuimg_launch_t *info)
{
  if (gpuimg_cuda_timer_start(ctx) < 0 ||
      gpuimg_blur_enqueue(ctx, d_src, d_dst, width, height, channels, radius, variant, NULL, info) <
          0)
    return -1;
  return gpuimg_cuda_timer_stop(ctx, &info->ms);
}
