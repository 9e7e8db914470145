/* cuda_model.c: the CUDA model's arithmetic: occupancy as CUDA's calculator counts it, waves,
 * idle lanes, the sector and bank rules, and the lookups in the resource table. */
#include "cuda_model.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

const gpuimg_gpu_t *gpuimg_gpu_find(const char *name)
{
  for (const gpuimg_gpu_t *g = gpuimg_gpus; g->name; g++)
    if (strcasecmp(g->name, name) == 0)
      return g;
  return NULL;
}

void gpuimg_gpu_names(char *buf, size_t size)
{
  size_t o = 0;
  buf[0] = '\0';
  for (const gpuimg_gpu_t *g = gpuimg_gpus; g->name && o < size; g++) {
    int n = snprintf(buf + o, size - o, "%s%s", g == gpuimg_gpus ? "" : ", ", g->name);
    if (n < 0)
      break;
    o += (size_t)n;
  }
}

static int round_up(long long x, int unit)
{
  return (int)((x + unit - 1) / unit * unit);
}

/* The shared-memory carveouts (KB) an architecture offers (cuda_occupancy.h's
 * cudaOccAlignUpShmemSizeVoltaPlus): the SM's shared memory is the smallest at least bytes. */
static long long carveout(const gpuimg_gpu_t *gpu, long long bytes)
{
  static const int volta[] = {0, 8, 16, 32, 64, 96}, turing[] = {32, 64},
                   ga100[] = {0, 8, 16, 32, 64, 100, 132, 164}, ga10x[] = {0, 8, 16, 32, 64, 100},
                   hopper[] = {0, 8, 16, 32, 64, 100, 132, 164, 196, 228};
  const int *k = hopper;
  int n = 10;
  if (gpu->cc_major == 7)
    k = gpu->cc_minor == 5 ? turing : volta, n = gpu->cc_minor == 5 ? 2 : 6;
  else if (gpu->cc_major == 8)
    k = gpu->cc_minor == 0 || gpu->cc_minor == 7 ? ga100 : ga10x,
    n = gpu->cc_minor == 0 || gpu->cc_minor == 7 ? 8 : 6;
  else if (gpu->cc_major == 12)
    k = ga10x, n = 6;
  for (int i = 0; i < n; i++)
    if (bytes <= 1024LL * k[i])
      return 1024LL * k[i];
  return bytes;
}

/* Blocks by registers: allocated per warp in units of 256, in each of the SM's 4
 * sub-partitions; 0 when a block's registers exceed the block's limit (also counted as if its
 * warps filled all 4 sub-partitions, as the hardware checks). */
static int blocks_by_registers(const gpuimg_gpu_t *gpu, int warps, int registers)
{
  if (registers <= 0)
    return INT_MAX;
  int per_warp = round_up((long long)registers * 32, 256);
  if (registers > 255 || (long long)per_warp * warps > gpu->regs_per_block ||
      (long long)per_warp * round_up(warps, 4) > gpu->regs_per_block)
    return 0;
  return (gpu->regs_per_sm / 4 / per_warp) * 4 / warps;
}

/* Blocks by shared memory: static + dynamic + the driver's reserve, in units of 128 bytes
 * (256 before 8.0); 0 when more than a block may have (opted in past 48 KB, as the launchers
 * do). */
static int blocks_by_shared(const gpuimg_gpu_t *gpu, size_t shared)
{
  int unit = gpu->cc_major >= 8 ? 128 : 256;
  long long per_block = round_up((long long)shared + gpu->reserved_shared_per_block, unit);
  long long limit = (long long)(shared > (size_t)gpu->shared_per_block ? gpu->shared_per_block_optin
                                                                       : gpu->shared_per_block) +
                    gpu->reserved_shared_per_block;
  if (per_block > limit)
    return 0;
  if (per_block == 0)
    return INT_MAX;
  long long sm = carveout(gpu, gpu->shared_per_sm);
  if (sm < per_block)
    sm = carveout(gpu, per_block);
  return (int)(sm / per_block);
}

int gpuimg_model_occupancy(const gpuimg_gpu_t *gpu, int threads, int registers, size_t shared,
                           gpuimg_occupancy_t *o)
{
  int warps = gpuimg_model_warps(threads), max_warps = gpu->max_threads_per_sm / 32;
  memset(o, 0, sizeof *o);
  o->by_threads = threads > gpu->max_threads_per_block || warps == 0 ? 0 : max_warps / warps;
  o->by_slots = gpu->max_blocks_per_sm;
  o->by_registers = blocks_by_registers(gpu, warps, registers);
  o->by_shared = blocks_by_shared(gpu, shared);
  /* The smallest binds; on a tie the first named. */
  o->blocks_per_sm = o->by_threads;
  o->limited_by = "threads";
  if (o->by_slots < o->blocks_per_sm)
    o->blocks_per_sm = o->by_slots, o->limited_by = "block slots";
  if (o->by_registers < o->blocks_per_sm)
    o->blocks_per_sm = o->by_registers, o->limited_by = "registers";
  if (o->by_shared < o->blocks_per_sm)
    o->blocks_per_sm = o->by_shared, o->limited_by = "shared memory";
  o->occupancy_pct = max_warps ? 100.0 * o->blocks_per_sm * warps / max_warps : 0.0;
  return o->blocks_per_sm > 0 ? 0 : -1;
}

void gpuimg_model_waves(unsigned long long blocks, long long resident, gpuimg_waves_t *w)
{
  memset(w, 0, sizeof *w);
  if (resident <= 0 || blocks == 0)
    return;
  unsigned long long r = (unsigned long long)resident;
  w->waves = (double)blocks / (double)r;
  w->full_waves = (blocks - 1) / r;
  w->last_blocks = blocks - w->full_waves * r;
  w->last_fill_pct = 100.0 * (double)w->last_blocks / (double)r;
}

int gpuimg_model_warps(int threads)
{
  return threads > 0 ? (threads + 31) / 32 : 0;
}

int gpuimg_model_idle_lanes(int threads)
{
  return gpuimg_model_warps(threads) * 32 - (threads > 0 ? threads : 0);
}

const char *gpuimg_access_name(gpuimg_access_kind_t kind)
{
  switch (kind) {
  case GPUIMG_ACCESS_LOAD:
    return "loads";
  case GPUIMG_ACCESS_STORE:
    return "stores";
  case GPUIMG_ACCESS_SHARED_LOAD:
    return "shared loads";
  case GPUIMG_ACCESS_SHARED_STORE:
    return "shared stores";
  }
  return "";
}

/* Adds v to the set s of n values unless it is there; the new n. */
static int add_distinct(uint64_t *s, int n, uint64_t v)
{
  for (int i = 0; i < n; i++)
    if (s[i] == v)
      return n;
  s[n] = v;
  return n + 1;
}

int gpuimg_model_sectors_of(const uint64_t *addr, int lanes, int bytes)
{
  uint64_t sectors[32 * 2]; /* a lane's bytes (at most 16) span at most 2 sectors */
  int n = 0;
  for (int l = 0; l < lanes && l < 32; l++)
    for (uint64_t s = addr[l] / 32; s <= (addr[l] + (uint64_t)bytes - 1) / 32; s++)
      n = add_distinct(sectors, n, s);
  return n;
}

int gpuimg_model_conflict_of(const uint64_t *addr, int lanes, int bytes)
{
  int phase = bytes <= 4 ? 32 : 128 / bytes, worst = 0;
  for (int p0 = 0; p0 < lanes && p0 < 32; p0 += phase) {
    uint64_t words[32][32]; /* per bank, the distinct words asked for */
    int n[32] = {0};
    for (int l = p0; l < p0 + phase && l < lanes && l < 32; l++)
      for (uint64_t w = addr[l] / 4; w <= (addr[l] + (uint64_t)bytes - 1) / 4; w++) {
        int b = (int)(w % 32);
        n[b] = add_distinct(words[b], n[b], w);
      }
    for (int b = 0; b < 32; b++)
      if (n[b] > worst)
        worst = n[b];
  }
  return worst;
}

/* The bytes the lanes use, each counted once. */
static int distinct_bytes(const uint64_t *addr, int lanes, int bytes)
{
  uint64_t seen[32 * 16];
  int n = 0;
  for (int l = 0; l < lanes; l++)
    for (int b = 0; b < bytes; b++)
      n = add_distinct(seen, n, addr[l] + (uint64_t)b);
  return n;
}

int gpuimg_model_access(const gpuimg_access_t *a, int threads, double *used_pct)
{
  uint64_t addr[32];
  int lanes = threads < 32 ? threads : 32, row = a->row_lanes > 0 ? a->row_lanes : 32;
  for (int l = 0; l < lanes; l++)
    addr[l] = (uint64_t)(a->base + (l % row) * a->stride + (l / row) * a->row_stride);
  *used_pct = 100.0;
  if (gpuimg_access_shared(a->kind))
    return gpuimg_model_conflict_of(addr, lanes, a->bytes);
  int sectors = gpuimg_model_sectors_of(addr, lanes, a->bytes);
  if (sectors > 0)
    *used_pct = 100.0 * distinct_bytes(addr, lanes, a->bytes) / (32.0 * sectors);
  return sectors;
}

int gpuimg_model_arch(int cc_major, int cc_minor)
{
  int own = cc_major * 10 + cc_minor, best = 0;
  for (int i = 0; i < gpuimg_kernel_resources_count; i++) {
    int a = gpuimg_kernel_resources[i].arch;
    if (a / 10 == cc_major && a <= own && a > best)
      best = a;
  }
  return best;
}

const gpuimg_kernel_resources_t *gpuimg_kernel_resources_find(int arch, const char *kernel)
{
  for (int i = 0; i < gpuimg_kernel_resources_count; i++)
    if (gpuimg_kernel_resources[i].arch == arch &&
        strcmp(gpuimg_kernel_resources[i].kernel, kernel) == 0)
      return &gpuimg_kernel_resources[i];
  return NULL;
}
