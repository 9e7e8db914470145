// gray.cu: Rec. 601 luma (fixed point, the same integers as src/ops/gray.c) on the GPU.
#include "cuda_internal.cuh"
#include "gray.h"

namespace
{

constexpr uint32_t kWR = 19595, kWG = 38470, kWB = 7471; // sum 65536
constexpr int kPixelsPerThread = GPUIMG_GRAY_PIXELS_PER_THREAD;

__device__ __forceinline__ uint32_t luma(uint32_t r, uint32_t g, uint32_t b)
{
  return (kWR * r + kWG * g + kWB * b + 32768u) >> 16;
}

__device__ __forceinline__ uint32_t byte_of(const uint32_t *w, int k)
{
  return (w[k >> 2] >> (8 * (k & 3))) & 0xffu;
}

// gray_kernel<C>: each thread converts 16 consecutive pixels. It loads them as C
// 16-byte vectors (16 * C bytes, aligned since cudaMalloc is 256-byte aligned) and
// stores 16 (RGB) or 32 (RGBA -> gray+alpha) bytes as 16-byte vectors, so a warp
// reads and writes whole contiguous 512-byte spans: fully coalesced, few instructions
// per byte. groups = pixels / 16; the thread with index == groups finishes the last
// pixels % 16 one by one.
template <int C>
__global__ void gray_kernel(const uint8_t *__restrict__ src, uint8_t *__restrict__ dst,
                            size_t groups, size_t pixels)
{
  constexpr int OC = C == 4 ? 2 : 1;
  size_t g = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (g < groups) {
    const uint4 *s = reinterpret_cast<const uint4 *>(src + g * kPixelsPerThread * C);
    uint32_t w[4 * C];
#pragma unroll
    for (int i = 0; i < C; i++) {
      uint4 v = __ldg(s + i);
      w[4 * i] = v.x;
      w[4 * i + 1] = v.y;
      w[4 * i + 2] = v.z;
      w[4 * i + 3] = v.w;
    }
    uint32_t o[4 * OC] = {};
#pragma unroll
    for (int p = 0; p < kPixelsPerThread; p++) {
      uint32_t y = luma(byte_of(w, p * C), byte_of(w, p * C + 1), byte_of(w, p * C + 2));
      int k = p * OC;
      o[k >> 2] |= y << (8 * (k & 3));
      if (OC == 2) {
        k++;
        o[k >> 2] |= byte_of(w, p * C + 3) << (8 * (k & 3));
      }
    }
    uint4 *d = reinterpret_cast<uint4 *>(dst + g * kPixelsPerThread * OC);
#pragma unroll
    for (int i = 0; i < OC; i++)
      d[i] = make_uint4(o[4 * i], o[4 * i + 1], o[4 * i + 2], o[4 * i + 3]);
  } else if (g == groups) {
    for (size_t p = groups * kPixelsPerThread; p < pixels; p++) {
      const uint8_t *s = src + p * C;
      dst[p * OC] = (uint8_t)luma(s[0], s[1], s[2]);
      if (OC == 2)
        dst[p * OC + 1] = s[3];
    }
  }
}

// gray_naive_kernel<C, RECORD> (--naive): the teaching kernel: a 2-D grid of (by default)
// 16x16 blocks, one thread per pixel, each reading its C bytes and writing one (or two) byte
// loads/stores: a warp touches 32 neighbouring pixels of a row, so accesses coalesce, but
// each instruction moves only 1 byte per thread. With RECORD (--explain-image only), thread 0
// of each block writes its SM and start and end times into d_times (nullptr otherwise); thread
// 0's pixel is always in the image.
template <int C, bool RECORD>
__global__ void gray_naive_kernel(const uint8_t *__restrict__ src, uint8_t *__restrict__ dst, int w,
                                  int h, gpuimg_block_time_t *d_times)
{
  constexpr int OC = C == 4 ? 2 : 1;
  if (RECORD)
    gpuimg_block_clock(d_times, false);
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= w || y >= h)
    return;
  size_t p = (size_t)y * w + x;
  const uint8_t *s = src + p * C;
  dst[p * OC] = (uint8_t)luma(s[0], s[1], s[2]);
  if (OC == 2)
    dst[p * OC + 1] = s[3];
  if (RECORD)
    gpuimg_block_clock(d_times, true);
}

// gray_stride_kernel<C> (--grid-stride): the grid-stride loop: as many 256-thread blocks as
// the GPU holds at once (SMs x blocks per SM: one wave, no tail), each thread converting pixel
// i, then i + the grid's threads, and so on; neighbouring lanes take neighbouring pixels, so
// the byte accesses coalesce as the naive kernel's do.
template <int C>
__global__ void gray_stride_kernel(const uint8_t *__restrict__ src, uint8_t *__restrict__ dst,
                                   size_t pixels)
{
  constexpr int OC = C == 4 ? 2 : 1;
  size_t step = (size_t)gridDim.x * blockDim.x;
  for (size_t p = (size_t)blockIdx.x * blockDim.x + threadIdx.x; p < pixels; p += step) {
    const uint8_t *s = src + p * C;
    dst[p * OC] = (uint8_t)luma(s[0], s[1], s[2]);
    if (OC == 2)
      dst[p * OC + 1] = s[3];
  }
}

// Launches kernel on the shape gpuimg_gray_launch() gave info, timed, and records its
// occupancy.
template <typename K, typename... Args>
int launch_shaped(gpuimg_cuda_t *ctx, K kernel, gpuimg_launch_t *info, Args... args)
{
  dim3 grid = gpuimg_launch_grid(info), block = gpuimg_launch_block(info);
  if (gpuimg_cuda_check_grid(ctx, grid, info->kernel) < 0 || gpuimg_cuda_timer_start(ctx) < 0)
    return -1;
  kernel<<<grid, block, 0, ctx->stream>>>(args...);
  GPUIMG_CUDA_CHECK_LAUNCH(info->kernel);
  gpuimg_launch_measure(ctx, info, kernel);
  return gpuimg_cuda_timer_stop(ctx, &info->ms);
}

template <int C>
int launch_gray(gpuimg_cuda_t *ctx, const uint8_t *d_src, uint8_t *d_dst, int w, int h,
                gpuimg_variant_t variant, gpuimg_launch_t *info)
{
  size_t pixels = (size_t)w * (size_t)h;
  gpuimg_launch_env_t env = gpuimg_cuda_env(ctx);
  if (variant == GPUIMG_VARIANT_NAIVE) {
    gpuimg_gray_launch(variant, w, h, C, &env, info);
    unsigned long long blocks = (unsigned long long)info->grid[0] * info->grid[1];
    gpuimg_block_time_t *d_times;
    if (gpuimg_block_times_begin(ctx, blocks, &d_times) < 0)
      return -1;
    if (!d_times)
      return launch_shaped(ctx, gray_naive_kernel<C, false>, info, d_src, d_dst, w, h, d_times);
    // The recording instance runs; the record keeps the model's (the plain one's) occupancy.
    if (launch_shaped(ctx, gray_naive_kernel<C, true>, info, d_src, d_dst, w, h, d_times) < 0)
      return -1;
    gpuimg_launch_measure(ctx, info, gray_naive_kernel<C, false>);
    return gpuimg_block_times_end(ctx, blocks);
  }
  if (variant == GPUIMG_VARIANT_GRID_STRIDE) {
    if ((env.resident = gpuimg_cuda_resident(ctx, gray_stride_kernel<C>, 256, 0)) < 0)
      return -1;
    gpuimg_gray_launch(variant, w, h, C, &env, info);
    return launch_shaped(ctx, gray_stride_kernel<C>, info, d_src, d_dst, pixels);
  }
  gpuimg_gray_launch(variant, w, h, C, &env, info);
  return launch_shaped(ctx, gray_kernel<C>, info, d_src, d_dst, pixels / kPixelsPerThread, pixels);
}

} // namespace

extern "C" int gpuimg_gray_gpu(gpuimg_cuda_t *ctx, const uint8_t *d_src, uint8_t *d_dst, int width,
                               int height, int channels, gpuimg_variant_t variant,
                               gpuimg_launch_t *info)
{
  size_t pixels = (size_t)width * (size_t)height;
  switch (channels) {
  case 3:
    return launch_gray<3>(ctx, d_src, d_dst, width, height, variant, info);
  case 4:
    return launch_gray<4>(ctx, d_src, d_dst, width, height, variant, info);
  default:
    // Gray input is unchanged: a device-to-device copy.
    if (gpuimg_cuda_timer_start(ctx) < 0)
      return -1;
    GPUIMG_CUDA_CHECK(cudaMemcpyAsync(d_dst, d_src, pixels * (size_t)channels,
                                      cudaMemcpyDeviceToDevice, ctx->stream));
    gpuimg_launch_record(info, "cudaMemcpyAsync", dim3(0, 0, 0), dim3(0, 0, 0), 0, 0);
    return gpuimg_cuda_timer_stop(ctx, &info->ms);
  }
}
