// lut.cu: the two-phase histogram operations (equalize, normalize) on the GPU: the histogram by
// stats's kernels, the tables made on the host from it by the operation's own function (the CPU
// reference's), the pixels mapped through them.
#include "cuda_internal.cuh"
#include "lut.h"

namespace
{

constexpr int kBins = GPUIMG_STATS_BINS;

// lut_map_kernel<C>: each block copies the C x 256 tables into shared memory, then maps bytes
// in a grid-stride loop (as many blocks as the GPU holds at once): byte i, of channel i % C,
// becomes lut[(i % C) * 256 + src[i]]. Global memory: lane L loads and stores byte L of each
// span (coalesced). Shared memory: the table reads go where the pixel values send them (a
// conflict only where lanes hit different words of one bank; lanes reading one word share it).
template <int C>
__global__ void lut_map_kernel(const uint8_t *__restrict__ src, uint8_t *__restrict__ dst,
                               size_t bytes, const uint8_t *__restrict__ d_lut)
{
  __shared__ uint8_t lut[C * kBins];
  for (int i = threadIdx.x; i < C * kBins; i += blockDim.x)
    lut[i] = d_lut[i];
  __syncthreads();
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < bytes;
       i += (size_t)blockDim.x * gridDim.x)
    dst[i] = lut[(i % C) * kBins + src[i]];
}

// The histogram, the tables, the map; d_hist and d_lut come from the stream-ordered allocator.
template <int C>
int lut_gpu(gpuimg_cuda_t *ctx, const uint8_t *d_src, uint8_t *d_dst, int w, int h,
            gpuimg_histogram_t histogram, gpuimg_lut_fn *make, const void *params,
            gpuimg_launch_t *info, unsigned long long *d_hist, uint8_t *d_lut)
{
  size_t pixels = (size_t)w * (size_t)h;
  unsigned long long hist[C * kBins];
  uint8_t lut[C * kBins];
  gpuimg_launch_env_t env = gpuimg_cuda_env(ctx);
  if ((env.resident = gpuimg_cuda_resident(ctx, lut_map_kernel<C>, 256, 0)) < 0)
    return -1;
  gpuimg_lut_launch(w, h, C, &env, info);
  info->launches = 0;
  if (gpuimg_histogram_enqueue(ctx, d_src, pixels, C, histogram, d_hist, info) < 0)
    return -1;
  GPUIMG_CUDA_CHECK(
      cudaMemcpyAsync(hist, d_hist, sizeof hist, cudaMemcpyDeviceToHost, ctx->stream));
  GPUIMG_CUDA_CHECK(cudaStreamSynchronize(ctx->stream));
  uint64_t h64[C * kBins];
  for (int i = 0; i < C * kBins; i++)
    h64[i] = hist[i];
  make(h64, C, params, lut);
  GPUIMG_CUDA_CHECK(cudaMemcpyAsync(d_lut, lut, sizeof lut, cudaMemcpyHostToDevice, ctx->stream));
  dim3 grid = gpuimg_launch_grid(info), block = gpuimg_launch_block(info);
  if (gpuimg_cuda_check_grid(ctx, grid, info->kernel) < 0)
    return -1;
  lut_map_kernel<C><<<grid, block, 0, ctx->stream>>>(d_src, d_dst, pixels * C, d_lut);
  GPUIMG_CUDA_CHECK_LAUNCH(info->kernel);
  info->launches++;
  gpuimg_launch_measure(ctx, info, lut_map_kernel<C>);
  // The table's host copy must outlive its upload.
  GPUIMG_CUDA_CHECK(cudaStreamSynchronize(ctx->stream));
  return 0;
}

} // namespace

extern "C" int gpuimg_lut_gpu(gpuimg_cuda_t *ctx, const uint8_t *d_src, uint8_t *d_dst, int width,
                              int height, int channels, gpuimg_histogram_t histogram,
                              gpuimg_lut_fn *make, const void *params, gpuimg_launch_t *info)
{
  if (width < 1 || height < 1 || channels < 1 || channels > 4) {
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, "lut", "no map of a %dx%d image of %d channels", width,
                     height, channels);
    return -1;
  }
  void *d_mem = nullptr;
  const size_t hist_bytes = sizeof(unsigned long long) * 4 * kBins;
  if (gpuimg_cuda_timer_start(ctx) < 0)
    return -1;
  GPUIMG_CUDA_CHECK(cudaMallocAsync(&d_mem, hist_bytes + 4 * kBins, ctx->stream));
  auto *d_hist = static_cast<unsigned long long *>(d_mem);
  uint8_t *d_lut = static_cast<uint8_t *>(d_mem) + hist_bytes;
  int rc;
  switch (channels) {
  case 1:
    rc = lut_gpu<1>(ctx, d_src, d_dst, width, height, histogram, make, params, info, d_hist, d_lut);
    break;
  case 2:
    rc = lut_gpu<2>(ctx, d_src, d_dst, width, height, histogram, make, params, info, d_hist, d_lut);
    break;
  case 3:
    rc = lut_gpu<3>(ctx, d_src, d_dst, width, height, histogram, make, params, info, d_hist, d_lut);
    break;
  default:
    rc = lut_gpu<4>(ctx, d_src, d_dst, width, height, histogram, make, params, info, d_hist, d_lut);
    break;
  }
  cudaError_t freed = cudaFreeAsync(d_mem, ctx->stream);
  if (rc < 0)
    return -1;
  GPUIMG_CUDA_CHECK(freed);
  return gpuimg_cuda_timer_stop(ctx, &info->ms);
}
