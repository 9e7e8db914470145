/* cuda_context.h: the CUDA runtime for C: context, variants, launch records, memory, copies. */
#ifndef GPUIMG_CUDA_CONTEXT_H
#define GPUIMG_CUDA_CONTEXT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cuda_model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Kernel variants; the CPU backend has one algorithm per operation that all must match. */
typedef enum {
  GPUIMG_VARIANT_FAST = 0,    /* the default: fastest available */
  GPUIMG_VARIANT_NAIVE,       /* the teaching kernel: one thread per pixel, global memory */
  GPUIMG_VARIANT_TILED,       /* blur: tile plus apron staged in shared memory */
  GPUIMG_VARIANT_GRID_STRIDE, /* gray: as many blocks as the GPU holds, each thread looping */
  GPUIMG_VARIANT_CHOSEN,      /* an operation's own kernel option given (stats --variant) */
} gpuimg_variant_t;

/* Opaque CUDA context: device, one non-blocking stream, timing events. */
typedef struct gpuimg_cuda gpuimg_cuda_t;

/* What a launcher ran, for the report: filled by every *_gpu launcher (kernels/<op>.h).
 * The launchers take images tightly packed width x height x channels on the device,
 * d_dst never aliasing d_src, and wait for their kernels before they return. The shape part
 * (kernel to accesses) comes from the operation's launch function in its header, which the
 * model without a GPU calls too; the rest is measured, or the model's prediction. */
typedef struct {
  const char *kernel;    /* kernel function name */
  char instance[48];     /* its template instance, as the resource table names it */
  int grid_is_resident;  /* the grid is the blocks the GPU holds at once (a grid-stride loop) */
  int divergence_kernel; /* the kernel can count its divergent warps (teaching kernels) */
  int naccess;           /* its memory accesses, the sector and bank rules' input */
  gpuimg_access_t access[GPUIMG_MAX_ACCESSES];
  unsigned grid[3];
  unsigned block[3];
  size_t shared_bytes; /* dynamic shared memory per block */
  int launches;        /* kernels launched for this step */
  float ms;            /* event-timed, all launches of the step */
  /* The CUDA model, for the report and --explain (main kernel of the step). */
  int has_occupancy;
  int registers;             /* per thread (cudaFuncGetAttributes) */
  int arch;                  /* the machine code's architecture (90: sm_90); 0 in the model */
  size_t static_shared;      /* per block */
  int active_blocks_per_sm;  /* cudaOccupancyMaxActiveBlocksPerMultiprocessor */
  double occupancy_pct;      /* active warps / the SM's warp slots */
  const char *limited_by;    /* "threads", "block slots", "registers" or "shared memory" */
  long long resident_blocks; /* active_blocks_per_sm * SMs */
  double waves;              /* grid blocks / resident blocks */
  /* Warp divergence counted on the device with warp votes (teaching kernels only). */
  int has_divergence;
  unsigned long long warps, divergent_warps;
} gpuimg_launch_t;

/* Tile storage of the tiled blur: 4-byte pixels (uchar4) or one float per channel. */
typedef enum { GPUIMG_TILE_U8 = 0, GPUIMG_TILE_FLOAT } gpuimg_tile_t;

/* What an operation's launch function returns: its main kernel's shape; a copy (no kernel); no
 * launch at all on this GPU (its launcher fails: too much shared memory...); or, for the model,
 * a launch that depends on the GPU's L2 cache size where the GPU table lacks it.
 * gpuimg_op_predict() also returns UNMODELLED for an operation without a launch function. */
enum {
  GPUIMG_LAUNCH_KERNEL = 0,
  GPUIMG_LAUNCH_COPY = 1,
  GPUIMG_LAUNCH_UNMODELLED = 2,
  GPUIMG_LAUNCH_NO_L2 = 3,
  GPUIMG_LAUNCH_IMPOSSIBLE = -1
};

/* Where an operation's launch function shapes its launch: the GPU's limits, --block (0x0: each
 * kernel's default) and, for a grid-stride kernel, the blocks the GPU holds at once (0 while
 * unknown: the grid is then a placeholder). */
typedef struct {
  const gpuimg_gpu_t *gpu;
  int block_w, block_h;
  long long resident;
} gpuimg_launch_env_t;

/* Launch-shape helpers for the operations' launch functions (C and CUDA alike). Starts l's shape:
 * kernel (its instance "kernel<args>", or "kernel" for NULL args), grid, block, dynamic shared
 * memory, one launch, no accesses yet. */
static inline void gpuimg_launch_set(gpuimg_launch_t *l, const char *kernel, const char *args,
                                     unsigned gx, unsigned gy, unsigned bx, unsigned by,
                                     size_t shared)
{
  l->kernel = kernel;
  if (args)
    snprintf(l->instance, sizeof l->instance, "%s<%s>", kernel, args);
  else
    snprintf(l->instance, sizeof l->instance, "%s", kernel);
  l->grid_is_resident = l->divergence_kernel = l->naccess = 0;
  l->grid[0] = gx, l->grid[1] = gy, l->grid[2] = 1;
  l->block[0] = bx, l->block[1] = by, l->block[2] = 1;
  l->shared_bytes = shared;
  l->launches = 1;
}

/* Declares an access of l's kernel (gpuimg_access_t), lane 0 at base bytes into its buffer. */
static inline void gpuimg_launch_access_at(gpuimg_launch_t *l, gpuimg_access_kind_t kind, int bytes,
                                           long long base, long long stride, int row_lanes,
                                           long long row_stride)
{
  if (l->naccess < GPUIMG_MAX_ACCESSES) {
    gpuimg_access_t a = {kind, bytes, stride, row_lanes, row_stride, base};
    l->access[l->naccess++] = a;
  }
}

/* The same with lane 0 at the buffer's start. */
static inline void gpuimg_launch_access(gpuimg_launch_t *l, gpuimg_access_kind_t kind, int bytes,
                                        long long stride, int row_lanes, long long row_stride)
{
  gpuimg_launch_access_at(l, kind, bytes, 0, stride, row_lanes, row_stride);
}

static inline unsigned gpuimg_launch_blocks(long long n, int per_block)
{
  return (unsigned)((n + per_block - 1) / per_block);
}

/* Device description for `gpuimg info`: the model's limits (gpu, read as a context reads
 * them; gpu.product points to name, so a copy of the struct must not outlive the original)
 * and what only the description shows. */
typedef struct {
  char name[256];
  gpuimg_gpu_t gpu;
  int max_warps_per_sm;
  int max_block[3], max_grid[3];
  int warp_size;
  size_t memory_bytes;
  int driver_version, runtime_version;
  int clock_khz, memory_bus_bits;
} gpuimg_device_info_t;

/* Device and properties; returns the device count (> 0), or 0 and a reason. */
int gpuimg_cuda_probe(char *reason, size_t reason_size);

/* How host threads wait for device's work: blocking = 1 sleeps on an OS primitive (the
 * core is free for other threads: batch mode, where workers' codecs need every core),
 * 0 = CUDA's default (spin while there are fewer busy threads than cores, else yield).
 * Takes effect for work after it; -1 with the error set (exit 5). */
int gpuimg_cuda_set_blocking_sync(int device, int blocking);

/* Creates a context on device (-1 = current default). NULL with the error set. */
gpuimg_cuda_t *gpuimg_cuda_create(int device);
void gpuimg_cuda_destroy(gpuimg_cuda_t *ctx);

/* Device description for the report. */
const char *gpuimg_cuda_device_name(const gpuimg_cuda_t *ctx);
void gpuimg_cuda_device_cc(const gpuimg_cuda_t *ctx, int *major, int *minor);

/* CUDA driver and runtime versions (1000 * major + 10 * minor); 0 when unknown. */
void gpuimg_cuda_versions(int *driver, int *runtime);

/* Fills info for device (-1: current). 0, or -1 with the error set. */
int gpuimg_cuda_device_info(int device, gpuimg_device_info_t *info);

/* The context's device's limits for the model (product: its name, valid while ctx lives). */
void gpuimg_cuda_gpu(const gpuimg_cuda_t *ctx, gpuimg_gpu_t *gpu);

/* Device-to-device copy bandwidth (bytes read + written per second / 1e9), measured with
 * events as the median of a few copies of bytes. 0 or -1. */
int gpuimg_cuda_copy_bandwidth(gpuimg_cuda_t *ctx, size_t bytes, double *gbps);

/* Count divergent warps in the teaching kernels (costs a few atomics per block). */
void gpuimg_cuda_set_count_divergence(gpuimg_cuda_t *ctx, int on);

/* One block of a recorded launch: the SM it ran on and the GPU's global timer (ns) when its
 * thread 0 began and when it finished. */
typedef struct {
  unsigned sm, reserved;
  unsigned long long start_ns, end_ns;
} gpuimg_block_time_t;

/* Record the blocks of the teaching kernels (gray --naive, checkerboard --naive and portrait's
 * composite) from now on (on = 1; --explain-image): each block's thread 0 writes its SM and
 * times into a device buffer, read back after the launch. Off (0) by default: the kernels that
 * record are their own instances, never launched otherwise. */
void gpuimg_cuda_set_record_blocks(gpuimg_cuda_t *ctx, int on);
/* The blocks the last recording launch wrote, in launch order (blockIdx.x + blockIdx.y *
 * gridDim.x), handed over: *blocks malloc'd (the caller frees it) and *n of them; NULL and 0
 * when the steps since the last call recorded none. */
void gpuimg_cuda_take_block_times(gpuimg_cuda_t *ctx, gpuimg_block_time_t **blocks,
                                  unsigned long long *n);

/* Block shape used by 2-D kernels; 0x0 = each kernel's default. 0 or -1. */
int gpuimg_cuda_set_block(gpuimg_cuda_t *ctx, int bw, int bh);

/* Pinned host memory (cudaMallocHost) and device memory. NULL on failure. */
void *gpuimg_cuda_host_alloc(size_t bytes);
void gpuimg_cuda_host_free(void *h_ptr);
void *gpuimg_cuda_dev_alloc(size_t bytes);
void gpuimg_cuda_dev_free(void *d_ptr);

/* Event-timed copies on the context's stream; they complete before return. */
int gpuimg_cuda_upload(gpuimg_cuda_t *ctx, void *d_dst, const void *h_src, size_t bytes, float *ms);
int gpuimg_cuda_download(gpuimg_cuda_t *ctx, void *h_dst, const void *d_src, size_t bytes,
                         float *ms);
/* An identity step on the device: bytes copied from d_src to d_dst (no kernel), event-timed
 * into info->ms and recorded as the launch "cudaMemcpyAsync". 0, or -1 with the error set. */
int gpuimg_cuda_copy(gpuimg_cuda_t *ctx, void *d_dst, const void *d_src, size_t bytes,
                     gpuimg_launch_t *info);

#ifdef __cplusplus
}
#endif

#endif
