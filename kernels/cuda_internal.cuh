// cuda_internal.cuh: what the .cu files share: the context, error checks, timing, shape helpers.
#ifndef GPUIMG_CUDA_INTERNAL_CUH
#define GPUIMG_CUDA_INTERNAL_CUH

#include <cuda_runtime.h>
#include <stdint.h>

#include "base.h"
#include "cuda_context.h"

struct gpuimg_cuda {
  int device;
  cudaDeviceProp prop;
  gpuimg_gpu_t gpu; // prop's limits for the model and the operations' launch functions
  cudaStream_t stream;
  cudaEvent_t start, stop;
  int block_w, block_h; // 0: kernel defaults
  void *d_scratch;      // intermediate buffer reused across steps (fast blur)
  size_t scratch_bytes;
  int count_divergence;               // teaching kernels count divergent warps
  unsigned long long *d_counts;       // kDivSlots (warps, divergent) pairs
  int record_blocks;                  // teaching kernels record their blocks (--explain-image)
  gpuimg_block_time_t *d_block_times; // room for block_times_cap blocks
  unsigned long long block_times_cap;
  gpuimg_block_time_t *h_block_times; // the last recording launch's, malloc'd
  unsigned long long n_block_times;
};

// Divergence counters: blocks add into one of kDivSlots pairs (spread to avoid every
// block hitting one address), the host sums them.
constexpr int kDivSlots = 64;

// Zeroes the counters before a counting launch / reads and sums them after it.
int gpuimg_div_begin(gpuimg_cuda_t *ctx);
int gpuimg_div_end(gpuimg_cuda_t *ctx, gpuimg_launch_t *info);

// In a counting kernel: every thread of the block calls this with whether it is in the
// image and which side of the branch it takes; warps with lanes on both sides count as
// divergent. smem: two block-shared counters zeroed by the caller before a __syncthreads.
__device__ __forceinline__ void gpuimg_div_vote(bool inside, bool side, unsigned *s_warps,
                                                unsigned *s_div)
{
  // All threads of the block reach this point (no early return), so the active mask is
  // the warp's existing lanes: the last warp of a block may be partial.
  unsigned lanes = __activemask();
  unsigned in_mask = __ballot_sync(lanes, inside);
  unsigned side_mask = __ballot_sync(lanes, inside && side);
  if ((threadIdx.x + threadIdx.y * blockDim.x) % 32 == 0 && in_mask) {
    atomicAdd(s_warps, 1u);
    if (side_mask != 0 && side_mask != in_mask)
      atomicAdd(s_div, 1u);
  }
}

__device__ __forceinline__ void gpuimg_div_flush(unsigned long long *d_counts, unsigned s_warps,
                                                 unsigned s_div)
{
  unsigned slot = (blockIdx.x + blockIdx.y * 7u) % kDivSlots;
  atomicAdd(&d_counts[2 * slot], (unsigned long long)s_warps);
  atomicAdd(&d_counts[2 * slot + 1], (unsigned long long)s_div);
}

// Block records (--explain-image): before a launch of blocks blocks, *d_times is the zeroed
// device buffer they write (nullptr when the context does not record); after it, the records
// are copied back to the host (waiting for the stream). Each: 0, or -1 with the error set.
int gpuimg_block_times_begin(gpuimg_cuda_t *ctx, unsigned long long blocks,
                             gpuimg_block_time_t **d_times);
int gpuimg_block_times_end(gpuimg_cuda_t *ctx, unsigned long long blocks);

// The SM this thread runs on and the GPU's global nanosecond timer (PTX special registers).
__device__ __forceinline__ unsigned gpuimg_smid()
{
  unsigned sm;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
  return sm;
}

__device__ __forceinline__ unsigned long long gpuimg_globaltimer()
{
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// In a recording kernel, thread 0 of each block at its start (end = false) and at its end:
// the block's SM and start, then its end, at its launch-order index.
__device__ __forceinline__ void gpuimg_block_clock(gpuimg_block_time_t *d_times, bool end)
{
  if (threadIdx.x != 0 || threadIdx.y != 0 || threadIdx.z != 0)
    return;
  gpuimg_block_time_t *b = d_times + blockIdx.x + (size_t)blockIdx.y * gridDim.x;
  if (end) {
    b->end_ns = gpuimg_globaltimer();
  } else {
    b->sm = gpuimg_smid();
    b->start_ns = gpuimg_globaltimer();
  }
}

// A failed CUDA call becomes a gpuimg error naming the call, file and line; the
// caller returns -1. cudaError_t never leaves kernels/.
int gpuimg_cuda_fail(cudaError_t err, const char *call, const char *file, int line);

#define GPUIMG_CUDA_CHECK(call)                                                                    \
  do {                                                                                             \
    cudaError_t gpuimg_err_ = (call);                                                              \
    if (gpuimg_err_ != cudaSuccess)                                                                \
      return gpuimg_cuda_fail(gpuimg_err_, #call, __FILE__, __LINE__);                             \
  } while (0)

// After every launch: configuration errors show up here.
#define GPUIMG_CUDA_CHECK_LAUNCH(name) GPUIMG_CUDA_CHECK(cudaGetLastError())

// Event timing around the kernels of one step on the context's stream.
int gpuimg_cuda_timer_start(gpuimg_cuda_t *ctx);
int gpuimg_cuda_timer_stop(gpuimg_cuda_t *ctx, float *ms);

// Scratch memory of at least bytes, kept for later steps.
int gpuimg_cuda_scratch(gpuimg_cuda_t *ctx, size_t bytes, void **d_ptr);

// The 2-D block shape: the user's --block, else def_w x def_h.
static inline dim3 gpuimg_block2d(const gpuimg_cuda_t *ctx, int def_w, int def_h)
{
  return ctx->block_w ? dim3(ctx->block_w, ctx->block_h) : dim3(def_w, def_h);
}

static inline dim3 gpuimg_grid2d(dim3 block, int width, int height)
{
  return dim3((unsigned)((width + block.x - 1) / block.x),
              (unsigned)((height + block.y - 1) / block.y));
}

// Checks a grid against the device's limits before launching.
int gpuimg_cuda_check_grid(const gpuimg_cuda_t *ctx, dim3 grid, const char *kernel);

// Occupancy of kernel at this launch shape, from the occupancy API and the attributes.
int gpuimg_occupancy(const gpuimg_cuda_t *ctx, const void *kernel, dim3 grid, dim3 block,
                     size_t shared, gpuimg_launch_t *info);

// Where the operations' launch functions (kernels/<op>.h) shape a launch on ctx's device.
static inline gpuimg_launch_env_t gpuimg_cuda_env(const gpuimg_cuda_t *ctx)
{
  gpuimg_launch_env_t env = {&ctx->gpu, ctx->block_w, ctx->block_h, 0};
  return env;
}

static inline dim3 gpuimg_launch_grid(const gpuimg_launch_t *l)
{
  return dim3(l->grid[0], l->grid[1], l->grid[2]);
}

static inline dim3 gpuimg_launch_block(const gpuimg_launch_t *l)
{
  return dim3(l->block[0], l->block[1], l->block[2]);
}

// The occupancy of kernel at the shape info holds (informational: a failing query leaves
// has_occupancy at 0).
template <typename K>
static inline void gpuimg_launch_measure(gpuimg_cuda_t *ctx, gpuimg_launch_t *info, K kernel)
{
  gpuimg_occupancy(ctx, (const void *)kernel, gpuimg_launch_grid(info), gpuimg_launch_block(info),
                   info->shared_bytes, info);
}

// The blocks of kernel in blocks of threads threads with shared bytes of dynamic shared
// memory the device holds at once (SMs x blocks per SM, the occupancy API's): a grid-stride
// kernel's grid. -1 with the error set.
template <typename K>
static inline long long gpuimg_cuda_resident(const gpuimg_cuda_t *ctx, K kernel, int threads,
                                             size_t shared)
{
  int active = 0;
  cudaError_t err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&active, kernel, threads, shared);
  if (err != cudaSuccess)
    return gpuimg_cuda_fail(err, "cudaOccupancyMaxActiveBlocksPerMultiprocessor", __FILE__,
                            __LINE__);
  return (long long)(active > 0 ? active : 1) * ctx->prop.multiProcessorCount;
}

template <typename K>
static inline void gpuimg_launch_record(gpuimg_cuda_t *ctx, gpuimg_launch_t *info, K kernel,
                                        const char *name, dim3 grid, dim3 block, size_t shared,
                                        int launches);

// A launch whose shape the launcher computed itself (no launch function in its header: no
// instance named for the model, no accesses declared).
static inline void gpuimg_launch_record(gpuimg_launch_t *info, const char *kernel, dim3 grid,
                                        dim3 block, size_t shared, int launches)
{
  gpuimg_launch_set(info, kernel, NULL, grid.x, grid.y, block.x, block.y, shared);
  info->instance[0] = '\0';
  info->grid[2] = grid.z;
  info->block[2] = block.z;
  info->launches = launches;
}

template <typename K>
static inline void gpuimg_launch_record(gpuimg_cuda_t *ctx, gpuimg_launch_t *info, K kernel,
                                        const char *name, dim3 grid, dim3 block, size_t shared,
                                        int launches)
{
  gpuimg_launch_record(info, name, grid, block, shared, launches);
  // Informational: a failing query leaves has_occupancy at 0 (the fields are omitted).
  gpuimg_occupancy(ctx, (const void *)kernel, grid, block, shared, info);
}

// floor(sum / count) for sum < 2^32: float estimate, then one exact correction step
// (the CPU reference computes the same integer).
__device__ __forceinline__ uint32_t gpuimg_div_exact(uint32_t sum, uint32_t count, float inv)
{
  uint32_t q = (uint32_t)__fmul_rn((float)sum, inv);
  if ((uint64_t)q * count > sum)
    q--;
  else if ((uint64_t)(q + 1) * count <= sum)
    q++;
  return q;
}

__device__ __forceinline__ int gpuimg_clampi(int v, int lo, int hi)
{
  return v < lo ? lo : v > hi ? hi : v;
}

// Enqueues a blur on ctx's stream without timing it (blur.cu); tile as for gpuimg_blur_gpu().
// With d_mask and the fast variant, pixels whose mask byte is >= 128, and alpha, get d_src's
// value (portrait).
int gpuimg_blur_enqueue(gpuimg_cuda_t *ctx, const uint8_t *d_src, uint8_t *d_dst, int width,
                        int height, int channels, int radius, gpuimg_variant_t variant,
                        gpuimg_tile_t tile, const uint8_t *d_mask, gpuimg_launch_t *info);

#endif
