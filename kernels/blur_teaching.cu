// blur_teaching.cu: the teaching box blurs: naive (global memory) and tiled (shared-memory
// tile + apron), O(r^2) and O(r) per pixel.
#include <string.h>

#include "blur.h"
#include "blur_internal.cuh"

namespace gpuimg_blur
{
namespace
{

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

// The tiled kernel on the shape gpuimg_blur_launch() gives (kernels/blur.h): the separable
// kernel when the whole tile and its row sums fit the block's shared memory, else bands.
template <int C, typename P>
int launch_tiled(gpuimg_cuda_t *ctx, const uint8_t *d_src, uint8_t *d_dst, BlurShape s,
                 gpuimg_tile_t tile, gpuimg_launch_t *info)
{
  gpuimg_launch_env_t env = gpuimg_cuda_env(ctx);
  if (gpuimg_blur_launch(GPUIMG_VARIANT_TILED, tile, s.r, s.w, s.h, C, &env, info) ==
      GPUIMG_LAUNCH_IMPOSSIBLE) {
    gpuimg_error_set(GPUIMG_EXIT_DEVICE, "blur", "radius %d too large for the tiled kernel", s.r);
    return -1;
  }
  dim3 grid = gpuimg_launch_grid(info), block = gpuimg_launch_block(info);
  size_t shared = info->shared_bytes;
  if (gpuimg_cuda_check_grid(ctx, grid, "blur_tiled_kernel") < 0)
    return -1;
  if (strcmp(info->kernel, "blur_tiled_kernel") == 0) { // the separable kernel
    if (allow_shared(blur_tiled_sep_kernel<C, P>, shared) < 0)
      return -1;
    blur_tiled_sep_kernel<C, P><<<grid, block, shared, ctx->stream>>>(d_src, d_dst, s);
    GPUIMG_CUDA_CHECK_LAUNCH("blur_tiled_kernel");
    gpuimg_launch_measure(ctx, info, blur_tiled_sep_kernel<C, P>);
    return 0;
  }
  int band = (int)(shared / gpuimg_blur_tile_row_bytes((int)block.x, s.r, C, tile));
  if (allow_shared(blur_tiled_kernel<C, P>, shared) < 0)
    return -1;
  blur_tiled_kernel<C, P><<<grid, block, shared, ctx->stream>>>(d_src, d_dst, s, band);
  GPUIMG_CUDA_CHECK_LAUNCH("blur_tiled_banded_kernel");
  gpuimg_launch_measure(ctx, info, blur_tiled_kernel<C, P>);
  return 0;
}

} // namespace

template <int C>
int enqueue_naive(gpuimg_cuda_t *ctx, const uint8_t *d_src, uint8_t *d_dst, BlurShape s,
                  gpuimg_launch_t *info)
{
  gpuimg_launch_env_t env = gpuimg_cuda_env(ctx);
  gpuimg_blur_launch(GPUIMG_VARIANT_NAIVE, GPUIMG_TILE_U8, s.r, s.w, s.h, C, &env, info);
  dim3 grid = gpuimg_launch_grid(info), block = gpuimg_launch_block(info);
  if (gpuimg_cuda_check_grid(ctx, grid, "blur_naive_kernel") < 0)
    return -1;
  blur_naive_kernel<C><<<grid, block, 0, ctx->stream>>>(d_src, d_dst, s);
  GPUIMG_CUDA_CHECK_LAUNCH("blur_naive_kernel");
  gpuimg_launch_measure(ctx, info, blur_naive_kernel<C>);
  return 0;
}

template <int C>
int enqueue_tiled(gpuimg_cuda_t *ctx, const uint8_t *d_src, uint8_t *d_dst, BlurShape s,
                  gpuimg_tile_t tile, gpuimg_launch_t *info)
{
  return tile == GPUIMG_TILE_FLOAT ? launch_tiled<C, float>(ctx, d_src, d_dst, s, tile, info)
                                   : launch_tiled<C, uchar4>(ctx, d_src, d_dst, s, tile, info);
}

template int enqueue_naive<1>(gpuimg_cuda_t *, const uint8_t *, uint8_t *, BlurShape,
                              gpuimg_launch_t *);
template int enqueue_naive<2>(gpuimg_cuda_t *, const uint8_t *, uint8_t *, BlurShape,
                              gpuimg_launch_t *);
template int enqueue_naive<3>(gpuimg_cuda_t *, const uint8_t *, uint8_t *, BlurShape,
                              gpuimg_launch_t *);
template int enqueue_naive<4>(gpuimg_cuda_t *, const uint8_t *, uint8_t *, BlurShape,
                              gpuimg_launch_t *);
template int enqueue_tiled<1>(gpuimg_cuda_t *, const uint8_t *, uint8_t *, BlurShape, gpuimg_tile_t,
                              gpuimg_launch_t *);
template int enqueue_tiled<2>(gpuimg_cuda_t *, const uint8_t *, uint8_t *, BlurShape, gpuimg_tile_t,
                              gpuimg_launch_t *);
template int enqueue_tiled<3>(gpuimg_cuda_t *, const uint8_t *, uint8_t *, BlurShape, gpuimg_tile_t,
                              gpuimg_launch_t *);
template int enqueue_tiled<4>(gpuimg_cuda_t *, const uint8_t *, uint8_t *, BlurShape, gpuimg_tile_t,
                              gpuimg_launch_t *);

} // namespace gpuimg_blur
