// resize.cu: resize on the GPU: area and bilinear weights in exact integers (kernels/resize.h),
// the same bytes as the CPU reference in src/ops/resize.c.
#include "cuda_internal.cuh"
#include "resize.h"

namespace
{

// resize_kernel<C>: one thread per output pixel, in a 2-D grid of (by default) 32x8 blocks.
// Each thread walks its input area: the rows its y axis gives, and in each the pixels its
// x axis gives, summing weight_y * weight_x * value per channel in 64-bit integers (exact, so
// the order of the sums cannot change the result), then rounds once:
// floor((S + total / 2) / total). The weights are recomputed from the axes (a few integer
// operations) rather than read from tables. A warp's 32 threads read neighbouring input
// areas of the same rows: loads of one row are nearly contiguous and served by L1/L2, each
// input byte is read about once when shrinking, a few times when enlarging. ax, ay: the axes
// (input size n to output size m); src is ax.n x ay.n x C, dst ax.m x ay.m x C.
template <int C>
__global__ void resize_kernel(const uint8_t *__restrict__ src, uint8_t *__restrict__ dst,
                              gpuimg_resize_axis_t ax, gpuimg_resize_axis_t ay)
{
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= ax.m || y >= ay.m)
    return;
  int nx, ny;
  int fx = gpuimg_resize_first(&ax, x, &nx), fy = gpuimg_resize_first(&ay, y, &ny);
  uint64_t sum[C] = {};
  for (int j = fy; j < fy + ny; j++) {
    uint64_t wy = gpuimg_resize_weight(&ay, y, j);
    const uint8_t *row = src + ((size_t)j * (size_t)ax.n + (size_t)fx) * C;
    uint64_t part[C] = {};
    for (int i = 0; i < nx; i++) {
      uint64_t wx = gpuimg_resize_weight(&ax, x, fx + i);
#pragma unroll
      for (int ch = 0; ch < C; ch++)
        part[ch] += wx * __ldg(row + (size_t)i * C + ch);
    }
#pragma unroll
    for (int ch = 0; ch < C; ch++)
      sum[ch] += wy * part[ch];
  }
  uint64_t total = (uint64_t)ax.total * (uint64_t)ay.total;
  uint8_t *d = dst + ((size_t)y * (size_t)ax.m + (size_t)x) * C;
#pragma unroll
  for (int ch = 0; ch < C; ch++)
    d[ch] = (uint8_t)((sum[ch] + total / 2) / total);
}

template <int C>
int launch_resize(gpuimg_cuda_t *ctx, const uint8_t *d_src, uint8_t *d_dst,
                  const gpuimg_resize_axis_t &ax, const gpuimg_resize_axis_t &ay,
                  gpuimg_launch_t *info)
{
  dim3 block = gpuimg_block2d(ctx, 32, 8), grid = gpuimg_grid2d(block, (int)ax.m, (int)ay.m);
  if (gpuimg_cuda_check_grid(ctx, grid, "resize_kernel") < 0 || gpuimg_cuda_timer_start(ctx) < 0)
    return -1;
  resize_kernel<C><<<grid, block, 0, ctx->stream>>>(d_src, d_dst, ax, ay);
  GPUIMG_CUDA_CHECK_LAUNCH("resize_kernel");
  gpuimg_launch_record(ctx, info, resize_kernel<C>, "resize_kernel", grid, block, 0, 1);
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
  gpuimg_resize_axis_t ax = gpuimg_resize_axis(in_w, out_w, area_x);
  gpuimg_resize_axis_t ay = gpuimg_resize_axis(in_h, out_h, area_y);
  switch (channels) {
  case 1:
    return launch_resize<1>(ctx, d_src, d_dst, ax, ay, info);
  case 2:
    return launch_resize<2>(ctx, d_src, d_dst, ax, ay, info);
  case 3:
    return launch_resize<3>(ctx, d_src, d_dst, ax, ay, info);
  default:
    return launch_resize<4>(ctx, d_src, d_dst, ax, ay, info);
  }
}
