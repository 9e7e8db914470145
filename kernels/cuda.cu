// cuda.cu: the CUDA context: device choice, stream, events, pinned and device memory, copies.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_internal.cuh"

int gpuimg_cuda_fail(cudaError_t err, const char *call, const char *file, int line)
{
  const char *base = strrchr(file, '/');
  gpuimg_error_set(GPUIMG_EXIT_DEVICE, "cuda", "%s failed (%s:%d): %s", call,
                   base ? base + 1 : file, line, cudaGetErrorString(err));
  return -1;
}

extern "C" int gpuimg_cuda_probe(char *reason, size_t reason_size)
{
  int n = 0;
  cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess) {
    snprintf(reason, reason_size, "%s", cudaGetErrorString(err));
    cudaGetLastError(); // clear the sticky-free error state for later calls
    return 0;
  }
  if (n == 0)
    snprintf(reason, reason_size, "no CUDA device found");
  return n;
}

extern "C" gpuimg_cuda_t *gpuimg_cuda_create(int device)
{
  gpuimg_cuda_t *ctx = (gpuimg_cuda_t *)calloc(1, sizeof *ctx);
  if (!ctx) {
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, "cuda", "out of memory");
    return NULL;
  }
  int rc = [&]() -> int {
    if (device < 0)
      GPUIMG_CUDA_CHECK(cudaGetDevice(&device));
    GPUIMG_CUDA_CHECK(cudaSetDevice(device));
    GPUIMG_CUDA_CHECK(cudaGetDeviceProperties(&ctx->prop, device));
    GPUIMG_CUDA_CHECK(cudaStreamCreateWithFlags(&ctx->stream, cudaStreamNonBlocking));
    GPUIMG_CUDA_CHECK(cudaEventCreate(&ctx->start));
    GPUIMG_CUDA_CHECK(cudaEventCreate(&ctx->stop));
    return 0;
  }();
  ctx->device = device;
  if (rc < 0) {
    gpuimg_cuda_destroy(ctx);
    return NULL;
  }
  return ctx;
}

extern "C" void gpuimg_cuda_destroy(gpuimg_cuda_t *ctx)
{
  if (!ctx)
    return;
  // Teardown errors cannot be acted on; the work's own errors were already checked.
  if (ctx->d_scratch)
    (void)cudaFree(ctx->d_scratch);
  if (ctx->start)
    (void)cudaEventDestroy(ctx->start);
  if (ctx->stop)
    (void)cudaEventDestroy(ctx->stop);
  if (ctx->stream)
    (void)cudaStreamDestroy(ctx->stream);
  free(ctx);
}

extern "C" const char *gpuimg_cuda_device_name(const gpuimg_cuda_t *ctx)
{
  return ctx->prop.name;
}

extern "C" void gpuimg_cuda_device_cc(const gpuimg_cuda_t *ctx, int *major, int *minor)
{
  *major = ctx->prop.major;
  *minor = ctx->prop.minor;
}

extern "C" int gpuimg_cuda_set_block(gpuimg_cuda_t *ctx, int bw, int bh)
{
  if (bw == 0 && bh == 0) {
    ctx->block_w = ctx->block_h = 0;
    return 0;
  }
  if (bw < 1 || bh < 1 || bw * bh > ctx->prop.maxThreadsPerBlock ||
      bw > ctx->prop.maxThreadsDim[0] || bh > ctx->prop.maxThreadsDim[1]) {
    gpuimg_error_set(GPUIMG_EXIT_USAGE, "--block", "%dx%d is not a valid block on %s", bw, bh,
                     ctx->prop.name);
    return -1;
  }
  ctx->block_w = bw;
  ctx->block_h = bh;
  return 0;
}

extern "C" void *gpuimg_cuda_host_alloc(size_t bytes)
{
  void *p = NULL;
  cudaError_t err = cudaMallocHost(&p, bytes ? bytes : 1);
  if (err != cudaSuccess) {
    gpuimg_cuda_fail(err, "cudaMallocHost", __FILE__, __LINE__);
    return NULL;
  }
  return p;
}

extern "C" void gpuimg_cuda_host_free(void *h_ptr)
{
  if (h_ptr)
    (void)cudaFreeHost(h_ptr);
}

extern "C" void *gpuimg_cuda_dev_alloc(size_t bytes)
{
  void *p = NULL;
  cudaError_t err = cudaMalloc(&p, bytes ? bytes : 1);
  if (err != cudaSuccess) {
    gpuimg_cuda_fail(err, "cudaMalloc", __FILE__, __LINE__);
    return NULL;
  }
  return p;
}

extern "C" void gpuimg_cuda_dev_free(void *d_ptr)
{
  if (d_ptr)
    (void)cudaFree(d_ptr);
}

int gpuimg_cuda_scratch(gpuimg_cuda_t *ctx, size_t bytes, void **d_ptr)
{
  if (bytes > ctx->scratch_bytes) {
    if (ctx->d_scratch) {
      GPUIMG_CUDA_CHECK(cudaStreamSynchronize(ctx->stream));
      GPUIMG_CUDA_CHECK(cudaFree(ctx->d_scratch));
      ctx->d_scratch = NULL;
      ctx->scratch_bytes = 0;
    }
    GPUIMG_CUDA_CHECK(cudaMalloc(&ctx->d_scratch, bytes));
    ctx->scratch_bytes = bytes;
  }
  *d_ptr = ctx->d_scratch;
  return 0;
}

int gpuimg_cuda_timer_start(gpuimg_cuda_t *ctx)
{
  GPUIMG_CUDA_CHECK(cudaEventRecord(ctx->start, ctx->stream));
  return 0;
}

int gpuimg_cuda_timer_stop(gpuimg_cuda_t *ctx, float *ms)
{
  GPUIMG_CUDA_CHECK(cudaEventRecord(ctx->stop, ctx->stream));
  GPUIMG_CUDA_CHECK(cudaEventSynchronize(ctx->stop));
  float t = 0;
  GPUIMG_CUDA_CHECK(cudaEventElapsedTime(&t, ctx->start, ctx->stop));
  if (ms)
    *ms = t;
  return 0;
}

int gpuimg_cuda_check_grid(const gpuimg_cuda_t *ctx, dim3 grid, const char *kernel)
{
  if (grid.x > (unsigned)ctx->prop.maxGridSize[0] || grid.y > (unsigned)ctx->prop.maxGridSize[1] ||
      grid.z > (unsigned)ctx->prop.maxGridSize[2]) {
    gpuimg_error_set(GPUIMG_EXIT_DEVICE, kernel, "image too large for one grid (%ux%ux%u blocks)",
                     grid.x, grid.y, grid.z);
    return -1;
  }
  return 0;
}

extern "C" int gpuimg_cuda_upload(gpuimg_cuda_t *ctx, void *d_dst, const void *h_src,
                                  size_t bytes, float *ms)
{
  if (gpuimg_cuda_timer_start(ctx) < 0)
    return -1;
  GPUIMG_CUDA_CHECK(cudaMemcpyAsync(d_dst, h_src, bytes, cudaMemcpyHostToDevice, ctx->stream));
  return gpuimg_cuda_timer_stop(ctx, ms);
}

extern "C" int gpuimg_cuda_download(gpuimg_cuda_t *ctx, void *h_dst, const void *d_src,
                                    size_t bytes, float *ms)
{
  if (gpuimg_cuda_timer_start(ctx) < 0)
    return -1;
  GPUIMG_CUDA_CHECK(cudaMemcpyAsync(h_dst, d_src, bytes, cudaMemcpyDeviceToHost, ctx->stream));
  return gpuimg_cuda_timer_stop(ctx, ms);
}
