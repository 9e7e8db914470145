// resize.cu: resize on the GPU in two passes over tap tables (kernels/resize.h): the same
// exact integers, so the same bytes, as the CPU reference in src/ops/resize.c.
#include "cuda_internal.cuh"
#include "resize.h"

#include <stdlib.h>

namespace
{

// Grid rows: gridDim.y is capped at 65535, the kernels stride over the rest.
constexpr unsigned kMaxGridY = 65535;

// resize_cols_kernel (pass 1, vertical): thread (i, y) makes cols[y - y_lo][i], the exact
// 64-bit sum over output row y's taps j of weight_j * src[first + j][i], i running over the
// in_w * C bytes of a row. Threads of a warp read consecutive bytes of the same input rows
// (coalesced) and write consecutive sums; every thread of a block row reads the same taps
// (a broadcast). Each input row is read once per output row whose taps include it: O(in_h +
// out_h) row reads in all when shrinking. ty, wy: the y axis's taps and weights.
__global__ void __launch_bounds__(1024)
    resize_cols_kernel(const uint8_t *__restrict__ src, uint64_t *__restrict__ cols, size_t row_len,
                       const gpuimg_resize_tap_t *__restrict__ ty, const uint32_t *__restrict__ wy,
                       int y_lo, int y_hi)
{
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= row_len)
    return;
  for (int y = y_lo + (int)(blockIdx.y * blockDim.y + threadIdx.y); y < y_hi;
       y += (int)(gridDim.y * blockDim.y)) {
    const gpuimg_resize_tap_t t = ty[y];
    const uint8_t *s = src + (size_t)t.first * row_len + i;
    uint64_t sum = 0;
    for (int j = 0; j < t.count; j++)
      sum += (uint64_t)__ldg(wy + t.off + j) * __ldg(s + (size_t)j * row_len);
    cols[(size_t)(y - y_lo) * row_len + i] = sum;
  }
}

// resize_rows_kernel<C> (pass 2, horizontal): thread (x, y) makes output pixel (x, y) from
// band row y - y_lo of the column sums: S = the sum over x's taps k of weight_k *
// cols[first + k] per channel, exact in 64 bits (below 255 * 2^55), then floor((S + D/2) / D),
// D = total. Neighbouring threads read neighbouring, overlapping runs of the same band row
// (L1/L2 hits); each output pixel reads its own taps only: O(in_w + out_w) per output row.
template <int C>
__global__ void __launch_bounds__(1024)
    resize_rows_kernel(const uint64_t *__restrict__ cols, uint8_t *__restrict__ dst, int in_w,
                       int out_w, const gpuimg_resize_tap_t *__restrict__ tx,
                       const uint32_t *__restrict__ wx, uint64_t total, int y_lo, int y_hi)
{
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  if (x >= out_w)
    return;
  const gpuimg_resize_tap_t t = tx[x];
  for (int y = y_lo + (int)(blockIdx.y * blockDim.y + threadIdx.y); y < y_hi;
       y += (int)(gridDim.y * blockDim.y)) {
    const uint64_t *s = cols + ((size_t)(y - y_lo) * (size_t)in_w + (size_t)t.first) * C;
    uint64_t sum[C] = {};
    for (int k = 0; k < t.count; k++) {
      uint64_t w = __ldg(wx + t.off + k);
#pragma unroll
      for (int ch = 0; ch < C; ch++)
        sum[ch] += w * __ldg(s + (size_t)k * C + ch);
    }
    uint8_t *d = dst + ((size_t)y * (size_t)out_w + (size_t)x) * C;
#pragma unroll
    for (int ch = 0; ch < C; ch++)
      d[ch] = (uint8_t)((sum[ch] + total / 2) / total);
  }
}

// The grid for a band of rows rows, x threads wide: rows beyond 65535 blocks are strided.
dim3 band_grid(dim3 block, size_t x, int rows)
{
  size_t gy = ((size_t)rows + block.y - 1) / block.y;
  return dim3((unsigned)((x + block.x - 1) / block.x), (unsigned)(gy > kMaxGridY ? kMaxGridY : gy));
}

// Where a resize's device data lives: the two tables, then the band of column sums (scratch).
struct Plan {
  gpuimg_resize_axis_t ax, ay;
  const gpuimg_resize_tap_t *d_tx, *d_ty;
  uint64_t *d_cols;
  size_t row_len;
  int band; // output rows per band
};

// Builds both tables on the host and uploads them to the front of the context's scratch.
int plan_make(gpuimg_cuda_t *ctx, int in_w, int channels, Plan *p)
{
  size_t bx = gpuimg_resize_taps_bytes(&p->ax), by = gpuimg_resize_taps_bytes(&p->ay);
  p->row_len = (size_t)in_w * (size_t)channels;
  p->band = gpuimg_resize_band(in_w, channels, (int)p->ay.m);
  void *d_scratch = NULL, *h_tables = malloc(bx + by);
  if (!h_tables) {
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, "resize", "out of memory");
    return -1;
  }
  gpuimg_resize_taps_fill(&p->ax, h_tables);
  gpuimg_resize_taps_fill(&p->ay, (char *)h_tables + bx);
  size_t cols_bytes = (size_t)p->band * p->row_len * sizeof(uint64_t);
  int rc = gpuimg_cuda_scratch(ctx, bx + by + cols_bytes, &d_scratch) < 0 ||
                   gpuimg_cuda_upload(ctx, d_scratch, h_tables, bx + by, NULL) < 0
               ? -1
               : 0;
  free(h_tables);
  p->d_tx = (const gpuimg_resize_tap_t *)d_scratch;
  p->d_ty = (const gpuimg_resize_tap_t *)((char *)d_scratch + bx);
  p->d_cols = (uint64_t *)((char *)d_scratch + bx + by);
  return rc;
}

// Both passes over output rows [y_lo, y_hi), on the context's stream.
template <int C>
int run_band(gpuimg_cuda_t *ctx, const Plan &p, const uint8_t *d_src, uint8_t *d_dst, int y_lo,
             int y_hi, dim3 block)
{
  dim3 g1 = band_grid(block, p.row_len, y_hi - y_lo), g2 = band_grid(block, p.ax.m, y_hi - y_lo);
  if (gpuimg_cuda_check_grid(ctx, g1, "resize_cols_kernel") < 0 ||
      gpuimg_cuda_check_grid(ctx, g2, "resize_rows_kernel") < 0)
    return -1;
  resize_cols_kernel<<<g1, block, 0, ctx->stream>>>(
      d_src, p.d_cols, p.row_len, p.d_ty, gpuimg_resize_taps_weights(p.d_ty, p.ay.m), y_lo, y_hi);
  GPUIMG_CUDA_CHECK_LAUNCH("resize_cols_kernel");
  resize_rows_kernel<C><<<g2, block, 0, ctx->stream>>>(
      p.d_cols, d_dst, (int)p.ax.n, (int)p.ax.m, p.d_tx, gpuimg_resize_taps_weights(p.d_tx, p.ax.m),
      (uint64_t)p.ax.total * (uint64_t)p.ay.total, y_lo, y_hi);
  GPUIMG_CUDA_CHECK_LAUNCH("resize_rows_kernel");
  return 0;
}

template <int C>
int launch_resize(gpuimg_cuda_t *ctx, const uint8_t *d_src, uint8_t *d_dst, Plan &p,
                  gpuimg_launch_t *info)
{
  dim3 block = gpuimg_block2d(ctx, 32, 8);
  if (plan_make(ctx, (int)p.ax.n, C, &p) < 0 || gpuimg_cuda_timer_start(ctx) < 0)
    return -1;
  for (int y = 0; y < (int)p.ay.m; y += p.band)
    if (run_band<C>(ctx, p, d_src, d_dst, y, y + p.band < p.ay.m ? y + p.band : (int)p.ay.m,
                    block) < 0)
      return -1;
  // The report shows the row pass of a band (the bands, the launches).
  gpuimg_launch_env_t env = gpuimg_cuda_env(ctx);
  gpuimg_resize_launch((int)p.ax.n, C, (int)p.ax.m, (int)p.ay.m, &env, info);
  gpuimg_launch_measure(ctx, info, resize_rows_kernel<C>);
  return gpuimg_cuda_timer_stop(ctx, &info->ms);
}

} // namespace

extern "C" int gpuimg_resize_gpu(gpuimg_cuda_t *ctx, const uint8_t *d_src, uint8_t *d_dst, int in_w,
                                 int in_h, int channels, int out_w, int out_h, int area_x,
                                 int area_y, gpuimg_launch_t *info)
{
  if (in_w < 1 || in_h < 1 || out_w < 1 || out_h < 1 || channels < 1 || channels > 4) {
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, "resize", "bad shape %dx%dx%d to %dx%d", in_w, in_h,
                     channels, out_w, out_h);
    return -1;
  }
  Plan p = {};
  p.ax = gpuimg_resize_axis(in_w, out_w, area_x);
  p.ay = gpuimg_resize_axis(in_h, out_h, area_y);
  switch (channels) {
  case 1:
    return launch_resize<1>(ctx, d_src, d_dst, p, info);
  case 2:
    return launch_resize<2>(ctx, d_src, d_dst, p, info);
  case 3:
    return launch_resize<3>(ctx, d_src, d_dst, p, info);
  default:
    return launch_resize<4>(ctx, d_src, d_dst, p, info);
  }
}
