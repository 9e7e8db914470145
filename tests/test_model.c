/* test_model.c: the CUDA model without a device (kernels/cuda_model.c): the sector and bank
 * rules against their textbook cases, the occupancy calculator against hand counts, waves and
 * the last wave, idle lanes, the GPU table, and an operation's predicted launch. */
#define TEST_NAME "model"
#include "test_fail.h"

#include <math.h>
#include <string.h>

#include "cuda_model.h"
#include "ops.h"

static int gcd(int a, int b)
{
  while (b) {
    int t = a % b;
    a = b;
    b = t;
  }
  return a;
}

/* One warp's access: 32 lanes, bytes each, stride apart (one row). */
static int warp(gpuimg_access_kind_t kind, int bytes, long long stride, double *used)
{
  gpuimg_access_t a = {kind, bytes, stride, 0, 0, 0};
  return gpuimg_model_access(&a, 32, used);
}

static void expect_sectors(int bytes, long long stride, int want, double want_used)
{
  double used;
  int got = warp(GPUIMG_ACCESS_LOAD, bytes, stride, &used);
  if (got != want || fabs(used - want_used) > 0.05)
    fail("%d-byte lanes %lld bytes apart: %d sectors, %.1f%% used (want %d, %.1f%%)", bytes, stride,
         got, used, want, want_used);
}

static void sector_rule(void)
{
  expect_sectors(4, 4, 4, 100.0);  /* 32 consecutive words: 128 bytes, 4 sectors */
  expect_sectors(4, 32, 32, 12.5); /* one word a sector */
  expect_sectors(4, 4096, 32, 12.5);
  expect_sectors(4, 8, 8, 50.0);
  expect_sectors(1, 1, 1, 100.0); /* 32 bytes: one sector */
  expect_sectors(1, 3, 3, 33.3);  /* RGB bytes one channel at a time */
  expect_sectors(16, 16, 16, 100.0);
  expect_sectors(16, 48, 32, 50.0); /* 16-byte vectors of 48-byte (RGB) groups */
  expect_sectors(4, 0, 1, 12.5);    /* every lane the same word */
  /* Rows: 16 lanes a row, rows 4096 bytes apart: 2 sectors of 64 bytes each. */
  gpuimg_access_t rows = {GPUIMG_ACCESS_LOAD, 4, 4, 16, 4096, 0};
  double used;
  if (gpuimg_model_access(&rows, 256, &used) != 4 || used != 100.0)
    fail("16-lane rows of words: 4 sectors, 100%% used");
  /* A warp of fewer lanes (a 10-thread block): its lanes only. */
  gpuimg_access_t few = {GPUIMG_ACCESS_LOAD, 4, 4, 0, 0, 0};
  if (gpuimg_model_access(&few, 10, &used) != 2 || fabs(used - 62.5) > 0.01)
    fail("10 lanes of words: 2 sectors, 62.5%% used");
  uint64_t addr[32];
  for (int l = 0; l < 32; l++)
    addr[l] = 28 + 4 * (uint64_t)l; /* misaligned by 28: 5 sectors */
  if (gpuimg_model_sectors_of(addr, 32, 4) != 5)
    fail("misaligned words: 5 sectors");
  /* A row walked backwards from its last word (lane 0 at base): 4 sectors where the row ends on
   * a sector, 5 where lane 0's word starts one. */
  gpuimg_access_t back = {GPUIMG_ACCESS_STORE, 4, -4, 0, 0, 4092};
  if (gpuimg_model_access(&back, 32, &used) != 4 || used != 100.0)
    fail("a row backwards from a sector's end: 4 sectors");
  back.base = 4096;
  if (gpuimg_model_access(&back, 32, &used) != 5 || fabs(used - 80.0) > 0.01)
    fail("a row backwards from a sector's start: 5 sectors, 80%% used");
}

static void bank_rule(void)
{
  double used;
  for (int s = 0; s <= 96; s++) {
    int want = s == 0 ? 1 : gcd(s, 32); /* stride 0: one word, broadcast */
    int got = warp(GPUIMG_ACCESS_SHARED_LOAD, 4, 4LL * s, &used);
    if (got != want)
      fail("word stride %d: %d-way, want gcd(%d, 32) = %d", s, got, s, want);
  }
  /* The transpose tile's column walk: lane i reads tile[i][c]. */
  if (warp(GPUIMG_ACCESS_SHARED_LOAD, 4, 32 * 4, &used) != 32)
    fail("32x32 tile column: want 32-way");
  if (warp(GPUIMG_ACCESS_SHARED_LOAD, 4, 33 * 4, &used) != 1)
    fail("32x33 tile column: want 1-way");
  if (warp(GPUIMG_ACCESS_SHARED_LOAD, 1, 1, &used) != 1)
    fail("bytes of consecutive words: want 1-way");
  /* 8- and 16-byte accesses in phases of 16 and 8 lanes: consecutive ones are conflict-free. */
  if (warp(GPUIMG_ACCESS_SHARED_LOAD, 8, 8, &used) != 1 ||
      warp(GPUIMG_ACCESS_SHARED_LOAD, 16, 16, &used) != 1)
    fail("consecutive 8- and 16-byte shared accesses: want 1-way");
  if (warp(GPUIMG_ACCESS_SHARED_LOAD, 8, 16, &used) != 2)
    fail("8-byte accesses 16 bytes apart: want 2-way");
  /* A 16x16 block over an 18-word tile row (blur radius 1): rows overlap on 2 banks. */
  gpuimg_access_t tile = {GPUIMG_ACCESS_SHARED_LOAD, 4, 4, 16, 18 * 4, 0};
  if (gpuimg_model_access(&tile, 256, &used) != 2)
    fail("16-lane rows 18 words apart: want 2-way");
}

static const gpuimg_gpu_t *gpu(const char *name)
{
  const gpuimg_gpu_t *g = gpuimg_gpu_find(name);
  if (!g)
    fail("no GPU named %s", name);
  return g;
}

static void expect_occupancy(const char *name, int threads, int regs, size_t shared, int want,
                             const char *limit)
{
  gpuimg_occupancy_t o;
  int rc = gpuimg_model_occupancy(gpu(name), threads, regs, shared, &o);
  if (o.blocks_per_sm != want || strcmp(o.limited_by, limit) != 0 || (rc < 0) != (want == 0))
    fail("%s, %d threads, %d registers, %zu bytes shared: %d blocks/SM by %s (want %d by %s)", name,
         threads, regs, shared, o.blocks_per_sm, o.limited_by, want, limit);
}

static void occupancy(void)
{
  expect_occupancy("a100", 256, 12, 0, 8, "threads");
  expect_occupancy("h100", 256, 12, 0, 8, "threads");
  expect_occupancy("h100", 100, 12, 0, 16, "threads"); /* 4 warps a block */
  expect_occupancy("h100", 64, 12, 0, 32, "threads");  /* 64 warp slots, 32 block slots: tie */
  expect_occupancy("h100", 32, 12, 0, 32, "block slots");
  expect_occupancy("l4", 32, 12, 0, 24, "block slots");
  expect_occupancy("rtx3090", 64, 12, 0, 16, "block slots");
  /* 128 registers: 4096 a warp, 4 warps in each quarter's 16 K, 16 warps: 2 blocks of 8. */
  expect_occupancy("h100", 256, 128, 0, 2, "registers");
  /* 40 registers: 1280 a warp, 12 warps a quarter, 48: 6 blocks of 8 (not 65536/10240 = 6.4). */
  expect_occupancy("h100", 256, 40, 0, 6, "registers");
  expect_occupancy("h100", 256, 117, 0, 2, "registers"); /* 3840 a warp: 4 a quarter */
  /* 38160 bytes static + 1 KB reserved, in 128-byte units: 39296; 228 KB / 39296 = 5. */
  expect_occupancy("h100", 256, 32, 38160, 5, "shared memory");
  expect_occupancy("a100", 256, 32, 38160, 4, "shared memory"); /* 164 KB */
  expect_occupancy("l4", 256, 32, 38160, 2, "shared memory");   /* 100 KB */
  expect_occupancy("t4", 256, 32, 38160, 1, "shared memory");   /* 64 KB, no reserve */
  /* Past a block's limits: none. */
  expect_occupancy("h100", 1024, 255, 0, 0, "registers");
  expect_occupancy("h100", 256, 32, 300 * 1024, 0, "shared memory");
  expect_occupancy("h100", 2048, 12, 0, 0, "threads");
  /* Opted in past 48 KB: 100 KB a block fits 2 on an H100, 1 on an A100, none on an L4. */
  expect_occupancy("h100", 256, 32, 100 * 1024, 2, "shared memory");
  expect_occupancy("a100", 256, 32, 100 * 1024, 1, "shared memory");
  expect_occupancy("l4", 256, 32, 100 * 1024, 0, "shared memory");
  gpuimg_occupancy_t o;
  gpuimg_model_occupancy(gpu("h100"), 100, 12, 0, &o);
  if (o.occupancy_pct != 100.0)
    fail("16 blocks of 4 warps fill an H100 SM's 64 warp slots: %.1f%%", o.occupancy_pct);
}

static void waves_and_lanes(void)
{
  gpuimg_waves_t w;
  /* 2^24 elements in 256-thread blocks on an A100: 65,536 blocks, 864 resident. */
  gpuimg_model_waves(65536, 864, &w);
  if (fabs(w.waves - 75.85) > 0.005 || w.full_waves != 75 || w.last_blocks != 736 ||
      fabs(w.last_fill_pct - 85.19) > 0.01)
    fail("65,536 blocks on 864: %.3f waves, %llu full, last %llu (%.2f%%)", w.waves, w.full_waves,
         w.last_blocks, w.last_fill_pct);
  gpuimg_model_waves(1056, 1056, &w);
  if (w.waves != 1.0 || w.full_waves != 0 || w.last_blocks != 1056 || w.last_fill_pct != 100.0)
    fail("one whole wave: %.2f waves, last %llu", w.waves, w.last_blocks);
  gpuimg_model_waves(3072, 1056, &w);
  if (w.full_waves != 2 || w.last_blocks != 960)
    fail("3,072 blocks on 1,056: last wave %llu", w.last_blocks);
  if (gpuimg_model_warps(100) != 4 || gpuimg_model_idle_lanes(100) != 28 ||
      gpuimg_model_idle_lanes(256) != 0 || gpuimg_model_idle_lanes(1) != 31 ||
      gpuimg_model_warps(33) != 2)
    fail("warps and idle lanes");
}

static void table(void)
{
  if (gpuimg_gpu_find("A100") != gpu("a100") || gpuimg_gpu_find("a1000") || gpuimg_gpu_find(""))
    fail("GPU names: case-insensitive, whole names only");
  if (gpu("a100")->sms != 108 || gpu("h100")->sms != 132 || gpu("h200")->sms != 132 ||
      gpu("l4")->sms != 58 || gpu("rtx4090")->sms != 128)
    fail("SM counts");
  char names[512];
  gpuimg_gpu_names(names, sizeof names);
  if (!strstr(names, "a100, ") || !strstr(names, "h100") || !strstr(names, "rtx4090"))
    fail("names: %s", names);
  /* Every GPU has its architecture's registers in the resource table. */
  for (const gpuimg_gpu_t *g = gpuimg_gpus; g->name; g++)
    if (gpuimg_model_arch(g->cc_major, g->cc_minor) != g->cc_major * 10 + g->cc_minor)
      fail("%s: no resources for sm_%d%d", g->name, g->cc_major, g->cc_minor);
  if (gpuimg_model_arch(9, 9) != 90 || gpuimg_model_arch(3, 5) != 0)
    fail("architecture fallback");
}

/* gray --naive on a 4096x4096 RGB image, as an A100 runs it. */
static void predicted_launch(void)
{
  const gpuimg_op_t *op = gpuimg_ops_find("gray");
  _Alignas(16) unsigned char params[GPUIMG_PARAMS_SIZE];
  gpuimg_ops_init(op, params);
  if (gpuimg_ops_set(op, params, "naive", NULL) < 0)
    fail("gray --naive");
  gpuimg_launch_env_t env = {.gpu = gpu("a100")};
  gpuimg_launch_t l;
  if (gpuimg_op_predict(op, params, 4096, 4096, 3, &env, NULL, &l) != 0 || !l.has_occupancy)
    fail("gray --naive: no prediction");
  if (strcmp(l.instance, "gray_naive_kernel<3, false>") || l.grid[0] != 256 || l.grid[1] != 256 ||
      l.block[0] != 16 || l.active_blocks_per_sm != 8 || l.resident_blocks != 864 ||
      fabs(l.waves - 75.85) > 0.005 || strcmp(l.limited_by, "threads"))
    fail("gray --naive on an A100: %s %ux%u blocks, %d/SM, %lld resident, %.2f waves", l.instance,
         l.grid[0], l.grid[1], l.active_blocks_per_sm, l.resident_blocks, l.waves);
  /* The grid-stride variant: exactly the resident blocks, one wave. */
  gpuimg_ops_init(op, params);
  if (gpuimg_ops_set(op, params, "grid-stride", NULL) < 0 ||
      gpuimg_op_predict(op, params, 4096, 4096, 3, &env, NULL, &l) != 0 || l.grid[0] != 864 ||
      l.waves != 1.0)
    fail("gray --grid-stride on an A100: %u blocks, %.2f waves", l.grid[0], l.waves);
  /* Gray input is copied: no kernel. */
  if (gpuimg_op_predict(op, params, 64, 64, 1, &env, NULL, &l) != 1)
    fail("gray of gray: a copy");
}

int main(void)
{
  sector_rule();
  bank_rule();
  occupancy();
  waves_and_lanes();
  table();
  predicted_launch();
  printf("model: sector and bank rules, occupancy, waves, GPU table, predicted launch ok\n");
  return 0;
}
