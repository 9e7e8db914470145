// checkerboard.cu: the warp-divergence example: brighten even cells, darken odd ones.
#include "cuda_internal.cuh"

namespace {

// checkerboard_kernel<C>: one thread per pixel of a 2-D grid. Each thread takes one
// side of a branch on the parity of (x / cell + y / cell): with cell = 1 neighbouring
// lanes disagree, so every warp runs both sides one after the other (divergence); with
// a cell of 32 or more, whole warps agree. Colour channels are saturating add or
// subtract of amount; alpha (C = 2 or 4) is copied. Reads and writes are coalesced
// byte accesses along a row.
template <int C>
__global__ void checkerboard_kernel(const uint8_t *__restrict__ src, uint8_t *__restrict__ dst,
                                    int w, int h, int cell, int amount)
{
  constexpr int colour = (C == 2 || C == 4) ? C - 1 : C;
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= w || y >= h)
    return;
  size_t i = ((size_t)y * w + x) * C;
  if ((((x / cell) + (y / cell)) & 1) == 0) {
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

template <int C>
int launch(gpuimg_cuda_t *ctx, const uint8_t *d_src, uint8_t *d_dst, int w, int h, int cell,
           int amount, gpuimg_launch_t *info)
{
  dim3 block = gpuimg_block2d(ctx, 32, 8), grid = gpuimg_grid2d(block, w, h);
  if (gpuimg_cuda_check_grid(ctx, grid, "checkerboard_kernel") < 0 ||
      gpuimg_cuda_timer_start(ctx) < 0)
    return -1;
  checkerboard_kernel<C><<<grid, block, 0, ctx->stream>>>(d_src, d_dst, w, h, cell, amount);
  GPUIMG_CUDA_CHECK_LAUNCH("checkerboard_kernel");
  gpuimg_launch_record(info, "checkerboard_kernel", grid, block, 0, 1);
  return gpuimg_cuda_timer_stop(ctx, &info->ms);
}

} // namespace

extern "C" int gpuimg_checkerboard_gpu(gpuimg_cuda_t *ctx, const uint8_t *d_src, uint8_t *d_dst,
                                       int width, int height, int channels, int cell, int amount,
                                       gpuimg_launch_t *info)
{
  switch (channels) {
  case 1:
    return launch<1>(ctx, d_src, d_dst, width, height, cell, amount, info);
  case 2:
    return launch<2>(ctx, d_src, d_dst, width, height, cell, amount, info);
  case 3:
    return launch<3>(ctx, d_src, d_dst, width, height, cell, amount, info);
  case 4:
    return launch<4>(ctx, d_src, d_dst, width, height, cell, amount, info);
  }
  gpuimg_error_set(GPUIMG_EXIT_DEVICE, "checkerboard", "unsupported channel count %d", channels);
  return -1;
}
