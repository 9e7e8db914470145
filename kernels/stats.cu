// stats.cu: an image's per-channel count, sum, sum of squares, minimum, maximum and histogram on
// the GPU: the reduction ladder of M. Harris's "Optimizing Parallel Reduction in CUDA" (steps 1
// to 7), its modern form with warp shuffles, CUB's device reduce, and the histogram with global
// atomics, per-block shared-memory bins or CUB's. Every figure is an integer: sums in 64 bits,
// so any order of additions (blocks finishing in any order, atomics) gives the same numbers as
// the CPU reference (src/ops/stats.c).
#include <cub/device/device_histogram.cuh>
#include <cub/device/device_reduce.cuh>

#include "cuda_internal.cuh"
#include "stats.h"

namespace
{

constexpr int kB = GPUIMG_STATS_BLOCK;
constexpr int kBins = GPUIMG_STATS_BINS;

// One thread's (or block's) figures of C channels. mm packs a channel's minimum and maximum as
// (255 - min) << 16 | max, so that one __vmaxu2 (a maximum of each 16-bit half) merges both;
// 0 is the empty set's value.
template <int C> struct Acc {
  unsigned long long sum[C], sq[C];
  unsigned mm[C];
};

// The figures the host reads back, whatever the kernel: sums, and (255 - min) and max, each a
// word of its own so that atomicMax can merge them.
struct Total {
  unsigned long long sum[4], sq[4];
  unsigned inv_min[4], max[4];
};

template <int C> __host__ __device__ __forceinline__ Acc<C> acc_zero()
{
  Acc<C> a;
  for (int k = 0; k < C; k++)
    a.sum[k] = a.sq[k] = 0, a.mm[k] = 0;
  return a;
}

template <int C> __device__ __forceinline__ void acc_add_pixel(Acc<C> &a, const uint8_t *p)
{
#pragma unroll
  for (int k = 0; k < C; k++) {
    unsigned v = p[k];
    a.sum[k] += v;
    a.sq[k] += v * v;
    a.mm[k] = __vmaxu2(a.mm[k], (255u - v) << 16 | v);
  }
}

template <int C> __host__ __device__ __forceinline__ void acc_merge(Acc<C> &a, const Acc<C> &b)
{
  for (int k = 0; k < C; k++) {
    a.sum[k] += b.sum[k];
    a.sq[k] += b.sq[k];
#ifdef __CUDA_ARCH__
    a.mm[k] = __vmaxu2(a.mm[k], b.mm[k]);
#else
    unsigned lo = max(a.mm[k] & 0xffffu, b.mm[k] & 0xffffu), hi = max(a.mm[k] >> 16, b.mm[k] >> 16);
    a.mm[k] = hi << 16 | lo;
#endif
  }
}

// A block's tree in shared memory, one array per figure and channel (structure of arrays:
// neighbouring threads, neighbouring words).
template <int C> struct Tree {
  unsigned long long sum[C][kB], sq[C][kB];
  unsigned mm[C][kB];
};

template <int C> __device__ __forceinline__ void tree_store(Tree<C> &t, int i, const Acc<C> &a)
{
#pragma unroll
  for (int k = 0; k < C; k++)
    t.sum[k][i] = a.sum[k], t.sq[k][i] = a.sq[k], t.mm[k][i] = a.mm[k];
}

template <int C> __device__ __forceinline__ Acc<C> tree_load(const Tree<C> &t, int i)
{
  Acc<C> a;
#pragma unroll
  for (int k = 0; k < C; k++)
    a.sum[k] = t.sum[k][i], a.sq[k] = t.sq[k][i], a.mm[k] = t.mm[k][i];
  return a;
}

// t[i] += t[j].
template <int C> __device__ __forceinline__ void tree_merge(Tree<C> &t, int i, int j)
{
  Acc<C> a = tree_load(t, i);
  acc_merge(a, tree_load(t, j));
  tree_store(t, i, a);
}

// The block's figures (thread 0's) into the total: one atomic per figure and channel a block,
// so the grid needs no second pass; integer atomics, so the order of the blocks cannot change
// the result.
template <int C> __device__ __forceinline__ void total_add(Total *total, const Acc<C> &a)
{
#pragma unroll
  for (int k = 0; k < C; k++) {
    atomicAdd(&total->sum[k], a.sum[k]);
    atomicAdd(&total->sq[k], a.sq[k]);
    atomicMax(&total->inv_min[k], a.mm[k] >> 16);
    atomicMax(&total->max[k], a.mm[k] & 0xffffu);
  }
}

// The pixel p's figures, or the empty set's past the last pixel.
template <int C>
__device__ __forceinline__ Acc<C> load_pixel(const uint8_t *src, size_t p, size_t pixels)
{
  Acc<C> a = acc_zero<C>();
  if (p < pixels)
    acc_add_pixel<C>(a, src + p * C);
  return a;
}

// The ladder's kernels share their layout: a block of B threads (256), one pixel per thread
// (two from step 4, many in step 7) loaded into the tree, the tree halved until thread 0 holds
// the block's figures, which one atomic per figure adds to the total. Global loads: lane L
// reads pixel L of the block's span, its C bytes one load each: a warp's loads of one channel
// touch 32 * C contiguous bytes (coalesced, a C-th of each sector's bytes used per
// instruction, the rest by the next channel's). Shared memory: 64-bit sums and 32-bit
// minimum-maximum words, indexed by thread: what each step changes is which threads work and
// which words they touch.

// Step 1, interleaved addressing: at stride s, the threads whose index is a multiple of 2s add
// word tid + s into word tid. tid % (2s) scatters the working threads over every warp: each
// warp diverges (half its lanes idle at s = 1, then 3/4, ...), and % is slow.
template <int C, int B>
__global__ void reduce_interleaved_kernel(const uint8_t *__restrict__ src, size_t pixels,
                                          Total *total)
{
  __shared__ Tree<C> t;
  unsigned tid = threadIdx.x;
  tree_store(t, tid, load_pixel<C>(src, (size_t)blockIdx.x * B + tid, pixels));
  __syncthreads();
  for (unsigned s = 1; s < B; s *= 2) {
    if (tid % (2 * s) == 0)
      tree_merge(t, tid, tid + s);
    __syncthreads();
  }
  if (tid == 0)
    total_add(total, tree_load(t, 0));
}

// Step 2, strided index: thread tid works on word 2 * s * tid, so the working threads are the
// first ones (whole warps work or idle: no divergence), but neighbouring lanes touch words 2s
// apart: a 2-way bank conflict on the 4-byte words at s = 1, 4-way at s = 2, ...
template <int C, int B>
__global__ void reduce_strided_kernel(const uint8_t *__restrict__ src, size_t pixels, Total *total)
{
  __shared__ Tree<C> t;
  unsigned tid = threadIdx.x;
  tree_store(t, tid, load_pixel<C>(src, (size_t)blockIdx.x * B + tid, pixels));
  __syncthreads();
  for (unsigned s = 1; s < B; s *= 2) {
    unsigned i = 2 * s * tid;
    if (i < B)
      tree_merge(t, i, i + s);
    __syncthreads();
  }
  if (tid == 0)
    total_add(total, tree_load(t, 0));
}

// Step 3, sequential addressing: the stride starts at B/2 and halves; thread tid < s adds word
// tid + s: contiguous words (no bank conflict) and the first threads (no divergence). Half
// the threads idle from the first step on.
template <int C, int B>
__global__ void reduce_sequential_kernel(const uint8_t *__restrict__ src, size_t pixels,
                                         Total *total)
{
  __shared__ Tree<C> t;
  unsigned tid = threadIdx.x;
  tree_store(t, tid, load_pixel<C>(src, (size_t)blockIdx.x * B + tid, pixels));
  __syncthreads();
  for (unsigned s = B / 2; s > 0; s >>= 1) {
    if (tid < s)
      tree_merge(t, tid, tid + s);
    __syncthreads();
  }
  if (tid == 0)
    total_add(total, tree_load(t, 0));
}

// The first add during the load (step 4 on): each thread loads pixels i and i + B of its
// block's 2B and adds them before the tree: half the blocks, no thread idle at the load.
template <int C, int B>
__device__ __forceinline__ Acc<C> load_two(const uint8_t *src, size_t pixels)
{
  size_t i = (size_t)blockIdx.x * (2 * B) + threadIdx.x;
  Acc<C> a = load_pixel<C>(src, i, pixels);
  acc_merge(a, load_pixel<C>(src, i + B, pixels));
  return a;
}

template <int C, int B>
__global__ void reduce_first_add_kernel(const uint8_t *__restrict__ src, size_t pixels,
                                        Total *total)
{
  __shared__ Tree<C> t;
  unsigned tid = threadIdx.x;
  tree_store(t, tid, load_two<C, B>(src, pixels));
  __syncthreads();
  for (unsigned s = B / 2; s > 0; s >>= 1) {
    if (tid < s)
      tree_merge(t, tid, tid + s);
    __syncthreads();
  }
  if (tid == 0)
    total_add(total, tree_load(t, 0));
}

// The last warp's steps (s = 32 down to 1) without __syncthreads: the 32 threads of warp 0
// alone work. Harris's version relied on the lanes of a warp running in lockstep (a volatile
// pointer and no synchronisation); since compute capability 7.0 (Volta's independent thread
// scheduling) lanes may run apart, so a lane could read its neighbour's word before the
// neighbour has written it: the result would be wrong, sometimes. The safe form: every lane
// reads its operand into registers, __syncwarp() (all reads done), writes, __syncwarp() (all
// writes visible) before the next step. volatile keeps the compiler from holding words in
// registers across the steps.
template <int C> __device__ __forceinline__ void warp_tree(Tree<C> &t, unsigned tid)
{
  volatile Tree<C> &v = t;
#pragma unroll
  for (unsigned s = 32; s > 0; s >>= 1) {
    Acc<C> a, b;
#pragma unroll
    for (int k = 0; k < C; k++) {
      a.sum[k] = v.sum[k][tid], a.sq[k] = v.sq[k][tid], a.mm[k] = v.mm[k][tid];
      b.sum[k] = v.sum[k][tid + s], b.sq[k] = v.sq[k][tid + s], b.mm[k] = v.mm[k][tid + s];
    }
    __syncwarp();
    acc_merge(a, b);
#pragma unroll
    for (int k = 0; k < C; k++)
      v.sum[k][tid] = a.sum[k], v.sq[k][tid] = a.sq[k], v.mm[k][tid] = a.mm[k];
    __syncwarp();
  }
}

// Step 5, last warp unrolled: the tree with __syncthreads down to s = 64, then warp_tree.
template <int C, int B>
__global__ void reduce_last_warp_kernel(const uint8_t *__restrict__ src, size_t pixels,
                                        Total *total)
{
  __shared__ Tree<C> t;
  unsigned tid = threadIdx.x;
  tree_store(t, tid, load_two<C, B>(src, pixels));
  __syncthreads();
  for (unsigned s = B / 2; s > 32; s >>= 1) {
    if (tid < s)
      tree_merge(t, tid, tid + s);
    __syncthreads();
  }
  if (tid < 32)
    warp_tree(t, tid);
  if (tid == 0)
    total_add(total, tree_load(t, 0));
}

// Step 6, complete unroll: the block size is a template argument, so each step's test on B
// is decided when compiling and the loop disappears (B = 256: steps 128 and 64, then the warp).
template <int C, int B>
__global__ void reduce_unrolled_kernel(const uint8_t *__restrict__ src, size_t pixels, Total *total)
{
  __shared__ Tree<C> t;
  unsigned tid = threadIdx.x;
  tree_store(t, tid, load_two<C, B>(src, pixels));
  __syncthreads();
  if (B >= 1024) {
    if (tid < 512)
      tree_merge(t, tid, tid + 512);
    __syncthreads();
  }
  if (B >= 512) {
    if (tid < 256)
      tree_merge(t, tid, tid + 256);
    __syncthreads();
  }
  if (B >= 256) {
    if (tid < 128)
      tree_merge(t, tid, tid + 128);
    __syncthreads();
  }
  if (B >= 128) {
    if (tid < 64)
      tree_merge(t, tid, tid + 64);
    __syncthreads();
  }
  if (tid < 32)
    warp_tree(t, tid);
  if (tid == 0)
    total_add(total, tree_load(t, 0));
}

// Step 7, many elements per thread: as many blocks as the GPU holds at once, each thread
// adding pixels i, i + B, then i + 2B * grid, ... (two a round, the grid's span apart) in
// registers before the unrolled tree of step 6: the tree's cost is paid once per thread for
// many pixels. Loads of a warp stay contiguous.
template <int C, int B>
__global__ void reduce_many_kernel(const uint8_t *__restrict__ src, size_t pixels, Total *total)
{
  __shared__ Tree<C> t;
  unsigned tid = threadIdx.x;
  Acc<C> a = acc_zero<C>();
  size_t step = (size_t)2 * B * gridDim.x;
  for (size_t i = (size_t)blockIdx.x * 2 * B + tid; i < pixels; i += step) {
    acc_add_pixel<C>(a, src + i * C);
    if (i + B < pixels)
      acc_add_pixel<C>(a, src + (i + B) * C);
  }
  tree_store(t, tid, a);
  __syncthreads();
  if (B >= 512) {
    if (tid < 256)
      tree_merge(t, tid, tid + 256);
    __syncthreads();
  }
  if (B >= 256) {
    if (tid < 128)
      tree_merge(t, tid, tid + 128);
    __syncthreads();
  }
  if (B >= 128) {
    if (tid < 64)
      tree_merge(t, tid, tid + 64);
    __syncthreads();
  }
  if (tid < 32)
    warp_tree(t, tid);
  if (tid == 0)
    total_add(total, tree_load(t, 0));
}

// A warp's figures into lane 0 by shuffles: each step, lane L takes lane L + offset's
// registers (__shfl_down_sync, all 32 lanes named in the mask: every lane takes part, so the
// exchange is synchronised by the instruction itself, no shared memory).
template <int C> __device__ __forceinline__ void warp_shuffle(Acc<C> &a)
{
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) {
    Acc<C> b;
#pragma unroll
    for (int k = 0; k < C; k++) {
      b.sum[k] = __shfl_down_sync(0xffffffffu, a.sum[k], offset);
      b.sq[k] = __shfl_down_sync(0xffffffffu, a.sq[k], offset);
      b.mm[k] = __shfl_down_sync(0xffffffffu, a.mm[k], offset);
    }
    acc_merge(a, b);
  }
}

// The modern form: a grid-stride loop (as many blocks as the GPU holds at once; lane L reads
// pixel L of each span: coalesced), a warp's figures merged by shuffles, each warp's lane 0
// writing them to shared memory (8 slots), warp 0 merging those by shuffles again, and one
// atomic per figure a block.
template <int C, int B>
__global__ void reduce_shuffle_kernel(const uint8_t *__restrict__ src, size_t pixels, Total *total)
{
  __shared__ Acc<C> warps[B / 32];
  unsigned tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  Acc<C> a = acc_zero<C>();
  for (size_t i = (size_t)blockIdx.x * B + tid; i < pixels; i += (size_t)B * gridDim.x)
    acc_add_pixel<C>(a, src + i * C);
  warp_shuffle(a);
  if (lane == 0)
    warps[warp] = a;
  __syncthreads();
  if (warp == 0) {
    a = lane < B / 32 ? warps[lane] : acc_zero<C>();
    warp_shuffle(a);
    if (lane == 0)
      total_add(total, a);
  }
}

// CUB's reduction reads pixels of C bytes and makes each an Acc.
template <int C> struct Pixel {
  uint8_t v[C];
};

template <int C> struct PixelToAcc {
  __host__ __device__ Acc<C> operator()(const Pixel<C> &p) const
  {
    Acc<C> a = acc_zero<C>();
    for (int k = 0; k < C; k++) {
      unsigned v = p.v[k];
      a.sum[k] = v;
      a.sq[k] = v * v;
      a.mm[k] = (255u - v) << 16 | v;
    }
    return a;
  }
};

template <int C> struct MergeAcc {
  __host__ __device__ Acc<C> operator()(Acc<C> a, const Acc<C> &b) const
  {
    acc_merge(a, b);
    return a;
  }
};

// histogram_global_kernel<C>: every value one atomicAdd on its 64-bit bin in global memory
// (bins channel-major: hist[k * 256 + v]), in a grid-stride loop over pixels. Atomics on one
// address serialise: an image of one colour sends every thread of the GPU to the same C bins
// (the worst contention); a photo spreads them.
template <int C>
__global__ void histogram_global_kernel(const uint8_t *__restrict__ src, size_t pixels,
                                        unsigned long long *hist)
{
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < pixels;
       i += (size_t)blockDim.x * gridDim.x)
#pragma unroll
    for (int k = 0; k < C; k++)
      atomicAdd(&hist[k * kBins + src[i * C + k]], 1ull);
}

// histogram_shared_kernel<C>: each block counts its pixels (grid-stride) into C x 256 32-bit
// bins of its own in shared memory (atomics there are cheap and contend only within the
// block), then adds each bin it used to the global 64-bit bins: one atomic per bin and block.
// A block sees at most pixels / grid of them (the launcher keeps that below 2^32).
template <int C>
__global__ void histogram_shared_kernel(const uint8_t *__restrict__ src, size_t pixels,
                                        unsigned long long *hist)
{
  __shared__ unsigned bins[C * kBins];
  for (int b = threadIdx.x; b < C * kBins; b += blockDim.x)
    bins[b] = 0;
  __syncthreads();
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < pixels;
       i += (size_t)blockDim.x * gridDim.x)
#pragma unroll
    for (int k = 0; k < C; k++)
      atomicAdd(&bins[k * kBins + src[i * C + k]], 1u);
  __syncthreads();
  for (int b = threadIdx.x; b < C * kBins; b += blockDim.x)
    if (bins[b])
      atomicAdd(&hist[b], (unsigned long long)bins[b]);
}

// The device memory of a call: the total, the bins, CUB's output and temporary storage,
// carved from the context's scratch buffer.
struct Scratch {
  Total *total;
  unsigned long long *hist;
  void *cub_out;
  void *cub_temp;
  size_t cub_temp_bytes;
};

constexpr size_t align256(size_t n)
{
  return (n + 255) / 256 * 256;
}

// The grid of a grid-stride kernel: the blocks the GPU holds at once, fewer for a small image,
// and at least pixels / 2^31 (a shared-memory bin counts at most 2^32 - 1).
template <typename K> long long stride_grid(gpuimg_cuda_t *ctx, K kernel, size_t pixels)
{
  long long resident = gpuimg_cuda_resident(ctx, kernel, kB, 0);
  if (resident < 0)
    return -1;
  long long need = (long long)((pixels + kB - 1) / kB), floor_ = (long long)(pixels >> 31) + 1;
  long long grid = resident < need ? resident : need;
  return grid < floor_ ? floor_ : grid;
}

template <int C>
int histogram_enqueue(gpuimg_cuda_t *ctx, const uint8_t *d_src, size_t pixels,
                      gpuimg_histogram_t method, unsigned long long *d_hist, void *d_temp,
                      size_t temp_bytes, gpuimg_launch_t *info)
{
  GPUIMG_CUDA_CHECK(cudaMemsetAsync(d_hist, 0, sizeof *d_hist * C * kBins, ctx->stream));
  if (method == GPUIMG_HISTOGRAM_CUB) {
    ::cuda::std::array<unsigned long long *, C> bins;
    ::cuda::std::array<int, C> levels, lower, upper;
    for (int k = 0; k < C; k++)
      bins[k] = d_hist + k * kBins, levels[k] = kBins + 1, lower[k] = 0, upper[k] = kBins;
    GPUIMG_CUDA_CHECK((cub::DeviceHistogram::MultiHistogramEven<C, C>(
        d_temp, temp_bytes, d_src, bins, levels, lower, upper, (long long)pixels, ctx->stream)));
    info->launches++;
    return 0;
  }
  auto kernel =
      method == GPUIMG_HISTOGRAM_GLOBAL ? histogram_global_kernel<C> : histogram_shared_kernel<C>;
  long long grid = stride_grid(ctx, kernel, pixels);
  if (grid < 0 || gpuimg_cuda_check_grid(ctx, dim3((unsigned)grid), "histogram") < 0)
    return -1;
  kernel<<<(unsigned)grid, kB, 0, ctx->stream>>>(d_src, pixels, d_hist);
  GPUIMG_CUDA_CHECK_LAUNCH("histogram");
  info->launches++;
  return 0;
}

// CUB's temporary storage for a C-channel image of pixels (the larger of its reduce's and its
// histogram's needs).
template <int C> int cub_temp_bytes(size_t pixels, size_t *bytes)
{
  size_t r = 0, h = 0;
  const Pixel<C> *px = nullptr;
  Acc<C> *out = nullptr;
  GPUIMG_CUDA_CHECK(cub::DeviceReduce::TransformReduce(
      nullptr, r, px, out, (long long)pixels, MergeAcc<C>(), PixelToAcc<C>(), acc_zero<C>()));
  ::cuda::std::array<unsigned long long *, C> bins{};
  ::cuda::std::array<int, C> levels, lower, upper;
  for (int k = 0; k < C; k++)
    levels[k] = kBins + 1, lower[k] = 0, upper[k] = kBins;
  GPUIMG_CUDA_CHECK((cub::DeviceHistogram::MultiHistogramEven<C, C>(
      nullptr, h, (const uint8_t *)nullptr, bins, levels, lower, upper, (long long)pixels)));
  *bytes = r > h ? r : h;
  return 0;
}

template <int C> int scratch_for(gpuimg_cuda_t *ctx, size_t pixels, int cub, Scratch *s)
{
  size_t temp = 0;
  if (cub && cub_temp_bytes<C>(pixels, &temp) < 0)
    return -1;
  size_t total = align256(sizeof(Total)), hist = align256(sizeof(unsigned long long) * 4 * kBins),
         out = align256(sizeof(Acc<4>));
  void *base;
  if (gpuimg_cuda_scratch(ctx, total + hist + out + temp, &base) < 0)
    return -1;
  uint8_t *p = static_cast<uint8_t *>(base);
  s->total = reinterpret_cast<Total *>(p);
  s->hist = reinterpret_cast<unsigned long long *>(p + total);
  s->cub_out = p + total + hist;
  s->cub_temp = temp ? p + total + hist + out : nullptr;
  s->cub_temp_bytes = temp;
  return 0;
}

// Launches the reduction kernel on the shape gpuimg_stats_launch() gave info.
template <typename K>
int launch_reduce(gpuimg_cuda_t *ctx, K kernel, const uint8_t *d_src, size_t pixels, Total *total,
                  gpuimg_launch_t *info)
{
  dim3 grid = gpuimg_launch_grid(info), block = gpuimg_launch_block(info);
  if (gpuimg_cuda_check_grid(ctx, grid, info->kernel) < 0)
    return -1;
  kernel<<<grid, block, 0, ctx->stream>>>(d_src, pixels, total);
  GPUIMG_CUDA_CHECK_LAUNCH(info->kernel);
  gpuimg_launch_measure(ctx, info, kernel);
  return 0;
}

template <int C>
int reduce_enqueue(gpuimg_cuda_t *ctx, const uint8_t *d_src, int w, int h, gpuimg_reduce_t reduce,
                   gpuimg_histogram_t histogram, const Scratch &s, gpuimg_launch_t *info)
{
  size_t pixels = (size_t)w * (size_t)h;
  gpuimg_launch_env_t env = gpuimg_cuda_env(ctx);
  GPUIMG_CUDA_CHECK(cudaMemsetAsync(s.total, 0, sizeof(Total), ctx->stream));
  if (reduce == GPUIMG_REDUCE_CUB) {
    gpuimg_launch_record(info, "cub::DeviceReduce::TransformReduce", dim3(0, 0, 0), dim3(0, 0, 0),
                         0, 1);
    size_t temp = s.cub_temp_bytes;
    GPUIMG_CUDA_CHECK(cub::DeviceReduce::TransformReduce(
        s.cub_temp, temp, reinterpret_cast<const Pixel<C> *>(d_src),
        static_cast<Acc<C> *>(s.cub_out), (long long)pixels, MergeAcc<C>(), PixelToAcc<C>(),
        acc_zero<C>(), ctx->stream));
    return 0;
  }
  void (*kernels[])(const uint8_t *, size_t,
                    Total *) = {reduce_interleaved_kernel<C, kB>, reduce_strided_kernel<C, kB>,
                                reduce_sequential_kernel<C, kB>,  reduce_first_add_kernel<C, kB>,
                                reduce_last_warp_kernel<C, kB>,   reduce_unrolled_kernel<C, kB>,
                                reduce_many_kernel<C, kB>,        reduce_shuffle_kernel<C, kB>};
  auto kernel = kernels[reduce];
  if (reduce == GPUIMG_REDUCE_MANY || reduce == GPUIMG_REDUCE_SHUFFLE)
    if ((env.resident = gpuimg_cuda_resident(ctx, kernel, kB, 0)) < 0)
      return -1;
  gpuimg_stats_launch(reduce, histogram, w, h, C, &env, info);
  info->launches = 1;
  return launch_reduce(ctx, kernel, d_src, pixels, s.total, info);
}

// Total (or CUB's Acc) and the bins to the host, into out.
template <int C>
int read_back(gpuimg_cuda_t *ctx, const Scratch &s, gpuimg_reduce_t reduce, int what, size_t pixels,
              gpuimg_stats_t *out)
{
  Total t = {};
  Acc<C> a = acc_zero<C>();
  memset(out, 0, sizeof *out);
  out->channels = C;
  if (what & GPUIMG_STATS_SUMS) {
    if (reduce == GPUIMG_REDUCE_CUB)
      GPUIMG_CUDA_CHECK(
          cudaMemcpyAsync(&a, s.cub_out, sizeof a, cudaMemcpyDeviceToHost, ctx->stream));
    else
      GPUIMG_CUDA_CHECK(
          cudaMemcpyAsync(&t, s.total, sizeof t, cudaMemcpyDeviceToHost, ctx->stream));
  }
  unsigned long long bins[4 * kBins];
  if (what & GPUIMG_STATS_HISTOGRAM)
    GPUIMG_CUDA_CHECK(cudaMemcpyAsync(bins, s.hist, sizeof(unsigned long long) * C * kBins,
                                      cudaMemcpyDeviceToHost, ctx->stream));
  GPUIMG_CUDA_CHECK(cudaStreamSynchronize(ctx->stream));
  for (int k = 0; k < C; k++) {
    gpuimg_channel_stats_t *ch = &out->ch[k];
    ch->count = pixels;
    if (what & GPUIMG_STATS_SUMS) {
      unsigned inv_min = reduce == GPUIMG_REDUCE_CUB ? a.mm[k] >> 16 : t.inv_min[k];
      ch->sum = reduce == GPUIMG_REDUCE_CUB ? a.sum[k] : t.sum[k];
      ch->sum_squares = reduce == GPUIMG_REDUCE_CUB ? a.sq[k] : t.sq[k];
      ch->min = 255u - inv_min;
      ch->max = reduce == GPUIMG_REDUCE_CUB ? a.mm[k] & 0xffffu : t.max[k];
    }
    if (what & GPUIMG_STATS_HISTOGRAM)
      for (int v = 0; v < kBins; v++)
        ch->histogram[v] = bins[k * kBins + v];
  }
  return 0;
}

template <int C>
int stats_gpu(gpuimg_cuda_t *ctx, const uint8_t *d_src, int w, int h, gpuimg_reduce_t reduce,
              gpuimg_histogram_t histogram, int what, gpuimg_stats_t *out, gpuimg_launch_t *info)
{
  size_t pixels = (size_t)w * (size_t)h;
  Scratch s;
  int cub = reduce == GPUIMG_REDUCE_CUB || histogram == GPUIMG_HISTOGRAM_CUB;
  if (scratch_for<C>(ctx, pixels, cub, &s) < 0 || gpuimg_cuda_timer_start(ctx) < 0)
    return -1;
  info->launches = 0;
  if (what & GPUIMG_STATS_SUMS) {
    if (reduce_enqueue<C>(ctx, d_src, w, h, reduce, histogram, s, info) < 0)
      return -1;
  } else {
    gpuimg_launch_record(info, "histogram", dim3(0, 0, 0), dim3(0, 0, 0), 0, 0);
  }
  if ((what & GPUIMG_STATS_HISTOGRAM) &&
      histogram_enqueue<C>(ctx, d_src, pixels, histogram, s.hist, s.cub_temp, s.cub_temp_bytes,
                           info) < 0)
    return -1;
  if (gpuimg_cuda_timer_stop(ctx, &info->ms) < 0)
    return -1;
  return read_back<C>(ctx, s, reduce, what, pixels, out);
}

} // namespace

extern "C" int gpuimg_stats_gpu(gpuimg_cuda_t *ctx, const uint8_t *d_src, int width, int height,
                                int channels, gpuimg_reduce_t reduce, gpuimg_histogram_t histogram,
                                int what, gpuimg_stats_t *out, gpuimg_launch_t *info)
{
  if (width < 1 || height < 1 || channels < 1 || channels > 4 ||
      (unsigned)reduce >= GPUIMG_REDUCE_VARIANTS ||
      (unsigned)histogram >= GPUIMG_HISTOGRAM_VARIANTS) {
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, "stats", "no reduction of a %dx%d image of %d channels",
                     width, height, channels);
    return -1;
  }
  switch (channels) {
  case 1:
    return stats_gpu<1>(ctx, d_src, width, height, reduce, histogram, what, out, info);
  case 2:
    return stats_gpu<2>(ctx, d_src, width, height, reduce, histogram, what, out, info);
  case 3:
    return stats_gpu<3>(ctx, d_src, width, height, reduce, histogram, what, out, info);
  default:
    return stats_gpu<4>(ctx, d_src, width, height, reduce, histogram, what, out, info);
  }
}

extern "C" int gpuimg_histogram_enqueue(gpuimg_cuda_t *ctx, const uint8_t *d_src, size_t pixels,
                                        int channels, gpuimg_histogram_t histogram,
                                        unsigned long long *d_hist, gpuimg_launch_t *info)
{
  void *temp = nullptr;
  size_t temp_bytes = 0;
  if (histogram == GPUIMG_HISTOGRAM_CUB) {
    // CUB's temporary storage in the scratch buffer (the caller's d_hist lies elsewhere).
    int rc = channels == 1   ? cub_temp_bytes<1>(pixels, &temp_bytes)
             : channels == 2 ? cub_temp_bytes<2>(pixels, &temp_bytes)
             : channels == 3 ? cub_temp_bytes<3>(pixels, &temp_bytes)
                             : cub_temp_bytes<4>(pixels, &temp_bytes);
    if (rc < 0 || gpuimg_cuda_scratch(ctx, temp_bytes, &temp) < 0)
      return -1;
  }
  switch (channels) {
  case 1:
    return histogram_enqueue<1>(ctx, d_src, pixels, histogram, d_hist, temp, temp_bytes, info);
  case 2:
    return histogram_enqueue<2>(ctx, d_src, pixels, histogram, d_hist, temp, temp_bytes, info);
  case 3:
    return histogram_enqueue<3>(ctx, d_src, pixels, histogram, d_hist, temp, temp_bytes, info);
  default:
    return histogram_enqueue<4>(ctx, d_src, pixels, histogram, d_hist, temp, temp_bytes, info);
  }
}
