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
    // The runtime's words for the common cases name its own view ("CUDA driver version is
    // insufficient for CUDA runtime version" also when no driver is installed at all): say
    // what the user has to do instead.
    int driver = 0, runtime = 0;
    cudaDriverGetVersion(&driver); // 0: no driver (libcuda) found
    cudaRuntimeGetVersion(&runtime);
    if (err == cudaErrorInsufficientDriver && driver == 0)
      snprintf(reason, reason_size, "no NVIDIA driver found");
    else if (err == cudaErrorInsufficientDriver)
      snprintf(reason, reason_size,
               "the NVIDIA driver supports CUDA %d.%d, older than this build's runtime (%d.%d)",
               driver / 1000, driver % 1000 / 10, runtime / 1000, runtime % 1000 / 10);
    else if (err == cudaErrorNoDevice)
      snprintf(reason, reason_size, "no CUDA device found");
    else
      snprintf(reason, reason_size, "%s", cudaGetErrorString(err));
    cudaGetLastError(); // clear the sticky-free error state for later calls
    return 0;
  }
  if (n == 0)
    snprintf(reason, reason_size, "no CUDA device found");
  return n;
}

extern "C" int gpuimg_cuda_set_blocking_sync(int device, int blocking)
{
  GPUIMG_CUDA_CHECK(cudaSetDevice(device));
  GPUIMG_CUDA_CHECK(
      cudaSetDeviceFlags(blocking ? cudaDeviceScheduleBlockingSync : cudaDeviceScheduleAuto));
  return 0;
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
    gpuimg_cuda_gpu(ctx, &ctx->gpu);
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
  if (ctx->d_counts)
    (void)cudaFree(ctx->d_counts);
  if (ctx->d_block_times)
    (void)cudaFree(ctx->d_block_times);
  free(ctx->h_block_times);
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

extern "C" void gpuimg_cuda_versions(int *driver, int *runtime)
{
  // Informational only: a failure leaves 0, which the report shows as unknown.
  if (cudaDriverGetVersion(driver) != cudaSuccess)
    *driver = 0;
  if (cudaRuntimeGetVersion(runtime) != cudaSuccess)
    *runtime = 0;
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

// Pinned or device memory from alloc (cudaMallocHost, cudaMalloc), named in a failure.
static void *checked_alloc(cudaError_t (*alloc)(void **, size_t), const char *call, size_t bytes)
{
  void *p = NULL;
  cudaError_t err = alloc(&p, bytes ? bytes : 1);
  if (err != cudaSuccess) {
    gpuimg_cuda_fail(err, call, __FILE__, __LINE__);
    return NULL;
  }
  return p;
}

static cudaError_t malloc_host(void **p, size_t bytes)
{
  return cudaMallocHost(p, bytes);
}

static cudaError_t malloc_dev(void **p, size_t bytes)
{
  return cudaMalloc(p, bytes);
}

extern "C" void *gpuimg_cuda_host_alloc(size_t bytes)
{
  return checked_alloc(malloc_host, "cudaMallocHost", bytes);
}

extern "C" void gpuimg_cuda_host_free(void *h_ptr)
{
  if (h_ptr)
    (void)cudaFreeHost(h_ptr);
}

extern "C" void *gpuimg_cuda_dev_alloc(size_t bytes)
{
  return checked_alloc(malloc_dev, "cudaMalloc", bytes);
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

extern "C" int gpuimg_cuda_upload(gpuimg_cuda_t *ctx, void *d_dst, const void *h_src, size_t bytes,
                                  float *ms)
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

extern "C" int gpuimg_cuda_copy(gpuimg_cuda_t *ctx, void *d_dst, const void *d_src, size_t bytes,
                                gpuimg_launch_t *info)
{
  if (gpuimg_cuda_timer_start(ctx) < 0)
    return -1;
  GPUIMG_CUDA_CHECK(cudaMemcpyAsync(d_dst, d_src, bytes, cudaMemcpyDeviceToDevice, ctx->stream));
  gpuimg_launch_record(info, "cudaMemcpyAsync", dim3(0, 0, 0), dim3(0, 0, 0), 0, 0);
  return gpuimg_cuda_timer_stop(ctx, &info->ms);
}

extern "C" void gpuimg_cuda_set_count_divergence(gpuimg_cuda_t *ctx, int on)
{
  ctx->count_divergence = on;
}

extern "C" void gpuimg_cuda_set_record_blocks(gpuimg_cuda_t *ctx, int on)
{
  ctx->record_blocks = on;
}

int gpuimg_block_times_begin(gpuimg_cuda_t *ctx, unsigned long long blocks,
                             gpuimg_block_time_t **d_times)
{
  *d_times = nullptr;
  if (!ctx->record_blocks)
    return 0;
  if (blocks > ctx->block_times_cap) {
    if (ctx->d_block_times)
      GPUIMG_CUDA_CHECK(cudaFree(ctx->d_block_times));
    ctx->d_block_times = nullptr;
    ctx->block_times_cap = 0;
    GPUIMG_CUDA_CHECK(cudaMalloc(&ctx->d_block_times, blocks * sizeof(gpuimg_block_time_t)));
    ctx->block_times_cap = blocks;
  }
  GPUIMG_CUDA_CHECK(
      cudaMemsetAsync(ctx->d_block_times, 0, blocks * sizeof(gpuimg_block_time_t), ctx->stream));
  *d_times = ctx->d_block_times;
  return 0;
}

int gpuimg_block_times_end(gpuimg_cuda_t *ctx, unsigned long long blocks)
{
  if (!ctx->record_blocks)
    return 0;
  free(ctx->h_block_times);
  ctx->n_block_times = 0;
  ctx->h_block_times = (gpuimg_block_time_t *)malloc(blocks * sizeof(gpuimg_block_time_t));
  if (!ctx->h_block_times) {
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, "", "out of memory");
    return -1;
  }
  GPUIMG_CUDA_CHECK(cudaMemcpyAsync(ctx->h_block_times, ctx->d_block_times,
                                    blocks * sizeof(gpuimg_block_time_t), cudaMemcpyDeviceToHost,
                                    ctx->stream));
  GPUIMG_CUDA_CHECK(cudaStreamSynchronize(ctx->stream));
  ctx->n_block_times = blocks;
  return 0;
}

extern "C" void gpuimg_cuda_take_block_times(gpuimg_cuda_t *ctx, gpuimg_block_time_t **blocks,
                                             unsigned long long *n)
{
  *blocks = ctx->h_block_times;
  *n = ctx->n_block_times;
  ctx->h_block_times = nullptr;
  ctx->n_block_times = 0;
}

int gpuimg_div_begin(gpuimg_cuda_t *ctx)
{
  size_t bytes = 2 * kDivSlots * sizeof(unsigned long long);
  if (!ctx->d_counts)
    GPUIMG_CUDA_CHECK(cudaMalloc(&ctx->d_counts, bytes));
  GPUIMG_CUDA_CHECK(cudaMemsetAsync(ctx->d_counts, 0, bytes, ctx->stream));
  return 0;
}

int gpuimg_div_end(gpuimg_cuda_t *ctx, gpuimg_launch_t *info)
{
  unsigned long long h_counts[2 * kDivSlots];
  GPUIMG_CUDA_CHECK(cudaMemcpyAsync(h_counts, ctx->d_counts, sizeof h_counts,
                                    cudaMemcpyDeviceToHost, ctx->stream));
  GPUIMG_CUDA_CHECK(cudaStreamSynchronize(ctx->stream));
  info->warps = info->divergent_warps = 0;
  for (int i = 0; i < kDivSlots; i++) {
    info->warps += h_counts[2 * i];
    info->divergent_warps += h_counts[2 * i + 1];
  }
  info->has_divergence = 1;
  return 0;
}

int gpuimg_occupancy(const gpuimg_cuda_t *ctx, const void *kernel, dim3 grid, dim3 block,
                     size_t shared, gpuimg_launch_t *info)
{
  cudaFuncAttributes attr;
  int active = 0;
  int threads = (int)(block.x * block.y * block.z);
  if (cudaFuncGetAttributes(&attr, kernel) != cudaSuccess ||
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&active, kernel, threads, shared) !=
          cudaSuccess) {
    cudaGetLastError(); // informational only: clear and leave the fields out
    return -1;
  }
  // The blocks per SM are the occupancy API's; which resource binds, the model's calculator
  // says (the same rules: kernels/cuda_model.c).
  gpuimg_occupancy_t model;
  gpuimg_model_occupancy(&ctx->gpu, threads, attr.numRegs, attr.sharedSizeBytes + shared, &model);
  int warps = gpuimg_model_warps(threads);
  info->has_occupancy = 1;
  info->registers = attr.numRegs;
  info->arch = attr.binaryVersion;
  info->static_shared = attr.sharedSizeBytes;
  info->active_blocks_per_sm = active;
  info->occupancy_pct = 100.0 * active * warps / (ctx->prop.maxThreadsPerMultiProcessor / 32);
  info->limited_by = model.limited_by;
  info->resident_blocks = (long long)active * ctx->prop.multiProcessorCount;
  double blocks = (double)grid.x * grid.y * grid.z;
  info->waves = info->resident_blocks > 0 ? blocks / (double)info->resident_blocks : 0.0;
  return 0;
}

// The one reading of a device's properties into the model's limits (gpu->product points
// into p, valid while p lives): a context's and `gpuimg info`'s.
static void gpu_of_prop(const cudaDeviceProp &p, gpuimg_gpu_t *gpu)
{
  memset(gpu, 0, sizeof *gpu);
  gpu->name = "";
  gpu->product = p.name;
  gpu->cc_major = p.major;
  gpu->cc_minor = p.minor;
  gpu->sms = p.multiProcessorCount;
  gpu->max_threads_per_sm = p.maxThreadsPerMultiProcessor;
  gpu->max_blocks_per_sm = p.maxBlocksPerMultiProcessor;
  gpu->regs_per_sm = p.regsPerMultiprocessor;
  gpu->regs_per_block = p.regsPerBlock;
  gpu->max_threads_per_block = p.maxThreadsPerBlock;
  gpu->shared_per_sm = (int)p.sharedMemPerMultiprocessor;
  gpu->shared_per_block = (int)p.sharedMemPerBlock;
  gpu->shared_per_block_optin = (int)p.sharedMemPerBlockOptin;
  gpu->reserved_shared_per_block = (int)p.reservedSharedMemPerBlock;
  gpu->max_grid_x = p.maxGridSize[0];
  gpu->max_grid_y = p.maxGridSize[1];
  gpu->l2_bytes = p.l2CacheSize;
}

extern "C" void gpuimg_cuda_gpu(const gpuimg_cuda_t *ctx, gpuimg_gpu_t *gpu)
{
  gpu_of_prop(ctx->prop, gpu);
}

extern "C" int gpuimg_cuda_device_info(int device, gpuimg_device_info_t *info)
{
  cudaDeviceProp p;
  memset(info, 0, sizeof *info);
  if (device < 0)
    GPUIMG_CUDA_CHECK(cudaGetDevice(&device));
  GPUIMG_CUDA_CHECK(cudaGetDeviceProperties(&p, device));
  gpu_of_prop(p, &info->gpu);
  snprintf(info->name, sizeof info->name, "%s", p.name);
  info->gpu.product = info->name; // not p's, which this function owns
  info->max_warps_per_sm = p.maxThreadsPerMultiProcessor / p.warpSize;
  for (int i = 0; i < 3; i++) {
    info->max_block[i] = p.maxThreadsDim[i];
    info->max_grid[i] = p.maxGridSize[i];
  }
  info->warp_size = p.warpSize;
  info->memory_bytes = p.totalGlobalMem;
  int v;
  if (cudaDeviceGetAttribute(&v, cudaDevAttrClockRate, device) == cudaSuccess)
    info->clock_khz = v;
  if (cudaDeviceGetAttribute(&v, cudaDevAttrGlobalMemoryBusWidth, device) == cudaSuccess)
    info->memory_bus_bits = v;
  cudaGetLastError();
  gpuimg_cuda_versions(&info->driver_version, &info->runtime_version);
  return 0;
}

extern "C" int gpuimg_cuda_copy_bandwidth(gpuimg_cuda_t *ctx, size_t bytes, double *gbps)
{
  void *a = NULL, *b = NULL;
  float t[7];
  int rc = -1;
  if (cudaMalloc(&a, bytes) != cudaSuccess || cudaMalloc(&b, bytes) != cudaSuccess) {
    cudaGetLastError();
    gpuimg_error_set(GPUIMG_EXIT_DEVICE, "cuda", "not enough device memory to measure bandwidth");
    goto done;
  }
  // Defined bytes to copy (compute-sanitizer's initcheck reports a copy of unset memory).
  if (cudaMemsetAsync(a, 0x5a, bytes, ctx->stream) != cudaSuccess) {
    gpuimg_cuda_fail(cudaGetLastError(), "cudaMemsetAsync", __FILE__, __LINE__);
    goto done;
  }
  for (int i = -2; i < 7; i++) { // two warm-up copies
    float ms;
    if (gpuimg_cuda_timer_start(ctx) < 0)
      goto done;
    if (cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, ctx->stream) != cudaSuccess) {
      gpuimg_cuda_fail(cudaGetLastError(), "cudaMemcpyAsync", __FILE__, __LINE__);
      goto done;
    }
    if (gpuimg_cuda_timer_stop(ctx, &ms) < 0)
      goto done;
    if (i >= 0)
      t[i] = ms;
  }
  for (int i = 1; i < 7; i++) // insertion sort for the median
    for (int k = i; k > 0 && t[k] < t[k - 1]; k--) {
      float x = t[k];
      t[k] = t[k - 1];
      t[k - 1] = x;
    }
  *gbps = t[3] > 0 ? 2.0 * (double)bytes / (t[3] * 1e6) : 0.0;
  rc = 0;
done:
  if (a)
    (void)cudaFree(a);
  if (b)
    (void)cudaFree(b);
  return rc;
}
