/* cuda_model.h: the CUDA model without a device: GPUs' published limits, the occupancy
 * calculator, waves and idle lanes, the sector and bank rules of a warp's memory accesses, and
 * each kernel's registers and static shared memory as the compiler gave them. Plain C, in
 * every build: the launchers declare their accesses with it, --explain predicts with it. */
#ifndef GPUIMG_CUDA_MODEL_H
#define GPUIMG_CUDA_MODEL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A GPU's limits: a row of the table of published figures (gpu_specs.c) or the device's own
 * properties (gpuimg_cuda_gpu()). */
typedef struct {
  const char *name;    /* --device's spelling ("h100"); "" for a device's own */
  const char *product; /* "NVIDIA H100 SXM5" */
  int cc_major, cc_minor;
  int sms;
  int max_threads_per_sm;
  int max_blocks_per_sm;
  int regs_per_sm;
  int regs_per_block;
  int max_threads_per_block;
  int shared_per_sm;             /* bytes: the largest shared-memory carveout */
  int shared_per_block;          /* bytes a block may use without opting in (48 KB) */
  int shared_per_block_optin;    /* bytes a block may opt in to */
  int reserved_shared_per_block; /* bytes the driver keeps per block (1 KB from 8.0) */
  int max_grid_x, max_grid_y;
  long long l2_bytes; /* the L2 cache; 0 where no figure is published */
} gpuimg_gpu_t;

/* The table of GPUs, in --device's order, ending with a row whose name is NULL, and their
 * names (NULL-terminated, the same order: an option's choices). */
extern const gpuimg_gpu_t gpuimg_gpus[];
extern const char *const gpuimg_gpu_choices[];
/* The row named name (case-insensitive); NULL when there is none. */
const gpuimg_gpu_t *gpuimg_gpu_find(const char *name);
/* The table's names for messages, "a100, h100, ..." into buf (truncated to size). */
void gpuimg_gpu_names(char *buf, size_t size);

/* Blocks of one kernel an SM holds at once, as CUDA's occupancy calculator counts them
 * (cuda_occupancy.h): each resource's limit, the smallest binding. */
typedef struct {
  int blocks_per_sm;
  const char *limited_by; /* "threads", "block slots", "registers" or "shared memory" */
  double occupancy_pct;   /* resident warps / the SM's warp slots */
  int by_threads, by_slots, by_registers, by_shared;
} gpuimg_occupancy_t;

/* For blocks of threads threads using registers registers each and shared bytes of shared
 * memory (static and dynamic). 0; -1 when such a block cannot run on gpu at all (o's
 * blocks_per_sm is 0 and limited_by the resource that forbids it). */
int gpuimg_model_occupancy(const gpuimg_gpu_t *gpu, int threads, int registers, size_t shared,
                           gpuimg_occupancy_t *o);

/* A grid's blocks in waves of resident blocks: the whole waves, and the last one, which holds
 * blocks - full_waves * resident blocks (a whole wave when that is 0). */
typedef struct {
  double waves;                  /* blocks / resident */
  unsigned long long full_waves; /* waves before the last */
  unsigned long long last_blocks;
  double last_fill_pct; /* last_blocks / resident */
} gpuimg_waves_t;
void gpuimg_model_waves(unsigned long long blocks, long long resident, gpuimg_waves_t *w);

/* The warps of a block of threads threads, and the lanes of its last warp that hold no
 * thread. */
int gpuimg_model_warps(int threads);
int gpuimg_model_idle_lanes(int threads);

/* A memory access of one instruction, declared by a kernel's launcher: lane L of warp 0 is
 * thread (tx, ty) = (L % row_lanes, L / row_lanes) and touches `bytes` bytes at
 * base + tx * stride + ty * row_stride (strides may be negative: a walk backwards). Global:
 * counted in 32-byte sectors; shared: in the 32 banks of 4-byte words. */
typedef enum {
  GPUIMG_ACCESS_LOAD,
  GPUIMG_ACCESS_STORE,
  GPUIMG_ACCESS_SHARED_LOAD,
  GPUIMG_ACCESS_SHARED_STORE
} gpuimg_access_kind_t;

typedef struct {
  gpuimg_access_kind_t kind;
  int bytes;            /* per lane: 1, 2, 4, 8 or 16 */
  long long stride;     /* bytes between neighbouring lanes of a row */
  int row_lanes;        /* lanes per row (the block's or the tile's width); 0: all 32 */
  long long row_stride; /* bytes from a row's first lane to the next row's */
  long long base;       /* lane 0's byte offset from the buffer's (aligned) start */
} gpuimg_access_t;

#define GPUIMG_MAX_ACCESSES 6

/* "loads", "stores", "shared loads", "shared stores". */
const char *gpuimg_access_name(gpuimg_access_kind_t kind);
static inline int gpuimg_access_shared(gpuimg_access_kind_t kind)
{
  return kind == GPUIMG_ACCESS_SHARED_LOAD || kind == GPUIMG_ACCESS_SHARED_STORE;
}

/* The sector rule: the 32-byte sectors the lanes' `bytes` at addr[0..lanes) touch. */
int gpuimg_model_sectors_of(const uint64_t *addr, int lanes, int bytes);
/* The bank rule: the most distinct 4-byte words any of the 32 banks is asked for at once (1:
 * conflict-free; lanes reading one word share it). 8- and 16-byte accesses go in phases of 16
 * and 8 lanes (128 bytes each); the worst phase counts. */
int gpuimg_model_conflict_of(const uint64_t *addr, int lanes, int bytes);

/* An access of warp 0 of a block of threads threads (its first min(threads, 32) lanes): the
 * sectors of one request and the share of their bytes the lanes use (global), or its conflict
 * degree (shared; *used_pct 100). */
int gpuimg_model_access(const gpuimg_access_t *a, int threads, double *used_pct);

/* A kernel instance's registers per thread and static shared memory per block on an
 * architecture (90 = sm_90), as the compiler reported them (kernel_resources.tsv, checked
 * against the build's objects by tests/check_kernel_resources.py). */
typedef struct {
  int arch;
  const char *kernel; /* "gray_naive_kernel<3, false>" */
  int registers;
  int static_shared;
} gpuimg_kernel_resources_t;

extern const gpuimg_kernel_resources_t gpuimg_kernel_resources[];
extern const int gpuimg_kernel_resources_count;

/* The architecture whose machine code a GPU of compute capability major.minor runs among the
 * table's: its own, else the highest of the same major below it; 0 when the table has none. */
int gpuimg_model_arch(int cc_major, int cc_minor);
/* kernel's row for arch; NULL when the table has none. */
const gpuimg_kernel_resources_t *gpuimg_kernel_resources_find(int arch, const char *kernel);

#ifdef __cplusplus
}
#endif

#endif
