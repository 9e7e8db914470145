/* gpu_specs.c: the GPUs --device knows, by their published limits (the model without a GPU).
 *
 * Per compute capability (CUDA C++ Programming Guide, "Compute Capabilities", the technical
 * specifications per compute capability; resident blocks per SM as the toolkit's own occupancy
 * calculator, cuda_occupancy.h of CUDA 13.0, counts them, 24 for 8.9 and 12.x):
 *
 *   cc    threads/SM  blocks/SM  registers/SM  shared/SM  shared/block opt-in  reserved/block
 *   7.5   1024        16         64 K          64 KB      64 KB                0
 *   8.0   2048        32         64 K          164 KB     163 KB               1 KB
 *   8.6   1536        16         64 K          100 KB     99 KB                1 KB
 *   8.9   1536        24         64 K          100 KB     99 KB                1 KB
 *   9.0   2048        32         64 K          228 KB     227 KB               1 KB
 *   10.0  2048        32         64 K          228 KB     227 KB               1 KB
 *   12.0  1536        24         64 K          100 KB     99 KB                1 KB
 *
 * Every one: 64 K registers and 1024 threads per block, 48 KB of shared memory per block
 * without opting in, grids up to 2^31 - 1 x 65535 blocks. The SMs and the L2 cache of each
 * product from NVIDIA's architecture whitepapers and datasheets (CUDA cores / cores per SM
 * where only those are given: 64 per SM on Turing, 128 on GA10x, Ada and GB20x); the B200's
 * L2 is left unknown (published figures disagree), which only the fast blur's two-pass
 * design reads. */
#include "cuda_model.h"

#define KB 1024
#define SPEC(cc_major_, cc_minor_, threads, blocks, shared, optin, reserved)                       \
  .cc_major = cc_major_, .cc_minor = cc_minor_, .max_threads_per_sm = threads,                     \
  .max_blocks_per_sm = blocks, .regs_per_sm = 65536, .regs_per_block = 65536,                      \
  .max_threads_per_block = 1024, .shared_per_sm = (shared)*KB, .shared_per_block = 48 * KB,        \
  .shared_per_block_optin = (optin)*KB, .reserved_shared_per_block = reserved,                     \
  .max_grid_x = 2147483647, .max_grid_y = 65535
#define CC75 SPEC(7, 5, 1024, 16, 64, 64, 0)
#define CC80 SPEC(8, 0, 2048, 32, 164, 163, KB)
#define CC86 SPEC(8, 6, 1536, 16, 100, 99, KB)
#define CC89 SPEC(8, 9, 1536, 24, 100, 99, KB)
#define CC90 SPEC(9, 0, 2048, 32, 228, 227, KB)
#define CC100 SPEC(10, 0, 2048, 32, 228, 227, KB)
#define CC120 SPEC(12, 0, 1536, 24, 100, 99, KB)

/* name, product, SMs, L2 cache (MB; 0: no published figure), compute capability's limits */
#define GPUIMG_GPUS(X)                                                                             \
  X("t4", "NVIDIA T4", 40, 4, CC75)               /* 2560 cores */                                 \
  X("a10", "NVIDIA A10", 72, 6, CC86)             /* 9216 cores */                                 \
  X("a100", "NVIDIA A100", 108, 40, CC80)         /* SXM4 and PCIe */                              \
  X("rtx3090", "GeForce RTX 3090", 82, 6, CC86)   /* 10496 cores */                                \
  X("l4", "NVIDIA L4", 58, 48, CC89)              /* 7424 cores */                                 \
  X("l40s", "NVIDIA L40S", 142, 96, CC89)         /* 18176 cores */                                \
  X("rtx4090", "GeForce RTX 4090", 128, 72, CC89) /* 16384 cores */                                \
  X("h100", "NVIDIA H100 SXM5", 132, 50, CC90)                                                     \
  X("h100-pcie", "NVIDIA H100 PCIe", 114, 50, CC90)                                                \
  X("h200", "NVIDIA H200", 132, 60, CC90) /* L2: gpuimg info on one, docs/performance.md */        \
  X("b200", "NVIDIA B200", 148, 0, CC100)                                                          \
  X("rtx5090", "GeForce RTX 5090", 170, 96, CC120) /* 21760 cores */

#define ROW(name_, product_, sms_, l2_mb, cc)                                                      \
  {.name = name_, .product = product_, .sms = sms_, .l2_bytes = (l2_mb)*1048576LL, cc},
#define NAME(name_, product_, sms_, l2_mb, cc) name_,

const gpuimg_gpu_t gpuimg_gpus[] = {GPUIMG_GPUS(ROW){.name = NULL}};
const char *const gpuimg_gpu_choices[] = {GPUIMG_GPUS(NAME) NULL};
