/* stats.h: what the stats operation measures (gpuimg_stats_t), its launcher (kernels/stats.cu):
 * the reduction ladder and the histogram kernels, and the shape of their launches. */
#ifndef GPUIMG_STATS_H
#define GPUIMG_STATS_H

#include "cuda_context.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GPUIMG_STATS_BINS 256

/* One channel's figures, all exact integers (64-bit: an image of 2^31 or more values, or a
 * dataset's total, sums past 2^32; 255^2 * 2^34 still fits): count, sum and sum of squares
 * of its values, their smallest and largest (0 and 0 when count is 0), and how many take
 * each value 0..255. */
typedef struct {
  uint64_t count, sum, sum_squares;
  uint32_t min, max;
  uint64_t histogram[GPUIMG_STATS_BINS];
} gpuimg_channel_stats_t;

/* An image's (or a dataset's) figures per channel: ch[0 .. channels-1]. */
typedef struct {
  int channels;
  gpuimg_channel_stats_t ch[4];
} gpuimg_stats_t;

/* The reduction's kernels (--variant): the steps of M. Harris's "Optimizing Parallel Reduction
 * in CUDA" (1 to 7), its modern form (shuffle, the default) and CUB's device reduce. */
typedef enum {
  GPUIMG_REDUCE_INTERLEAVED = 0, /* 1: interleaved addressing, divergent branch */
  GPUIMG_REDUCE_STRIDED,         /* 2: strided index, bank conflicts */
  GPUIMG_REDUCE_SEQUENTIAL,      /* 3: sequential addressing */
  GPUIMG_REDUCE_FIRST_ADD,       /* 4: first add during load */
  GPUIMG_REDUCE_LAST_WARP,       /* 5: last warp unrolled (with __syncwarp) */
  GPUIMG_REDUCE_UNROLLED,        /* 6: completely unrolled (block size a template argument) */
  GPUIMG_REDUCE_MANY,            /* 7: many elements per thread (grid-stride) */
  GPUIMG_REDUCE_SHUFFLE,         /* grid-stride, warp shuffles, one atomic per block */
  GPUIMG_REDUCE_CUB,             /* cub::DeviceReduce::TransformReduce */
  GPUIMG_REDUCE_VARIANTS
} gpuimg_reduce_t;

/* The histogram's kernels (--histogram). */
typedef enum {
  GPUIMG_HISTOGRAM_SHARED = 0, /* per-block bins in shared memory, one atomic a bin a block */
  GPUIMG_HISTOGRAM_GLOBAL,     /* every value an atomic on the global bins */
  GPUIMG_HISTOGRAM_CUB,        /* cub::DeviceHistogram::MultiHistogramEven */
  GPUIMG_HISTOGRAM_VARIANTS
} gpuimg_histogram_t;

/* What gpuimg_stats_gpu() computes: the sums, minima and maxima, the histogram, or both. */
enum { GPUIMG_STATS_SUMS = 1, GPUIMG_STATS_HISTOGRAM = 2, GPUIMG_STATS_ALL = 3 };

/* The threads of a block of every stats kernel. */
#define GPUIMG_STATS_BLOCK 256

/* The figures of the width x height image of 1 to 4 interleaved channels at d_src, with
 * reduce's kernel for the sums and histogram's for the bins (what: GPUIMG_STATS_ flags; the
 * other fields are left zero), into *out: the numbers of the CPU reference, whichever
 * kernels. info: the reduction kernel's launch (or the histogram's alone), its ms every
 * kernel of the call. 0, or -1 with the error set. */
int gpuimg_stats_gpu(gpuimg_cuda_t *ctx, const uint8_t *d_src, int width, int height, int channels,
                     gpuimg_reduce_t reduce, gpuimg_histogram_t histogram, int what,
                     gpuimg_stats_t *out, gpuimg_launch_t *info);

/* Enqueues the histogram of the pixels at d_src (channels interleaved) into d_hist
 * (channels x 256 64-bit counters, zeroed here) on ctx's stream, without timing or waiting:
 * for the operations that map pixels through a histogram (equalize, normalize). Adds its
 * launches to info->launches. 0, or -1 with the error set. */
int gpuimg_histogram_enqueue(gpuimg_cuda_t *ctx, const uint8_t *d_src, size_t pixels, int channels,
                             gpuimg_histogram_t histogram, unsigned long long *d_hist,
                             gpuimg_launch_t *info);

/* The reduction's name for --variant and the report ("1" .. "7", "shuffle", "cub"), and the
 * histogram's ("shared", "global", "cub"); NULL-terminated, in the enums' order. */
extern const char *const gpuimg_reduce_names[];
extern const char *const gpuimg_histogram_names[];

/* The launch of the reduction kernel gpuimg_stats_gpu() makes of a width x height x channels
 * image in env, and the kernels the call launches in all (the model makes the same): a
 * GPUIMG_LAUNCH_ value (CUB's reduction: UNMODELLED, its kernels being CUB's own). Lane L of
 * warp 0 reads pixel L (its channel bytes one load each, channels bytes apart); the tree's
 * shared accesses are its first step's, on the 4-byte minimum-and-maximum words. */
static inline int gpuimg_stats_launch(gpuimg_reduce_t reduce, gpuimg_histogram_t histogram,
                                      int width, int height, int channels,
                                      const gpuimg_launch_env_t *env, gpuimg_launch_t *l)
{
  static const char *const kernels[] = {"reduce_interleaved_kernel", "reduce_strided_kernel",
                                        "reduce_sequential_kernel",  "reduce_first_add_kernel",
                                        "reduce_last_warp_kernel",   "reduce_unrolled_kernel",
                                        "reduce_many_kernel",        "reduce_shuffle_kernel"};
  long long pixels = (long long)width * height;
  const int b = GPUIMG_STATS_BLOCK;
  char args[16];
  if (reduce == GPUIMG_REDUCE_CUB)
    return GPUIMG_LAUNCH_UNMODELLED;
  snprintf(args, sizeof args, "%d, %d", channels, b);
  long long per_block = reduce >= GPUIMG_REDUCE_FIRST_ADD ? 2LL * b : b;
  long long grid = gpuimg_launch_blocks(pixels, (int)per_block);
  int resident = reduce == GPUIMG_REDUCE_MANY || reduce == GPUIMG_REDUCE_SHUFFLE;
  if (resident && env->resident > 0)
    grid = env->resident < grid ? env->resident : grid;
  gpuimg_launch_set(l, kernels[reduce], args, (unsigned)grid, 1, (unsigned)b, 1, 0);
  l->grid_is_resident = resident;
  /* The reduction, and the histogram's kernel unless CUB's (counted as one call). */
  l->launches = 2;
  (void)histogram;
  gpuimg_launch_access(l, GPUIMG_ACCESS_LOAD, 1, channels, 0, 0);
  if (reduce == GPUIMG_REDUCE_SHUFFLE)
    return GPUIMG_LAUNCH_KERNEL; /* registers and shuffles; shared memory once per warp */
  /* Step 1 of the tree: lane L writes word L; 2 (s = 1) reads word 2L: 8 bytes apart, a
   * 2-way conflict (4-way at s = 2, ...); 3 and later read word L + s: conflict-free. */
  gpuimg_launch_access(l, GPUIMG_ACCESS_SHARED_STORE, 4, 4, 0, 0);
  gpuimg_launch_access(l, GPUIMG_ACCESS_SHARED_LOAD, 4, reduce == GPUIMG_REDUCE_STRIDED ? 8 : 4, 0,
                       0);
  return GPUIMG_LAUNCH_KERNEL;
}

#ifdef __cplusplus
}
#endif

#endif
