/* blur.h: the box blur launcher (kernels/blur*.cu) and the shape of its teaching kernels'
 * launches. */
#ifndef GPUIMG_BLUR_H
#define GPUIMG_BLUR_H

#include <stdlib.h>
#include <string.h>

#include "cuda_context.h"
#include "options.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Box blur of radius; tile is the tiled variant's shared-memory storage (the other
 * variants ignore it). 0, or -1 with the error set. */
int gpuimg_blur_gpu(gpuimg_cuda_t *ctx, const uint8_t *d_src, uint8_t *d_dst, int width, int height,
                    int channels, int radius, gpuimg_variant_t variant, gpuimg_tile_t tile,
                    gpuimg_launch_t *info);

/* A row of the tiled blur's shared tile: bw + 2r pixels of 4 bytes (u8: uchar4) or C floats. */
static inline size_t gpuimg_blur_tile_row_bytes(int bw, int r, int channels, gpuimg_tile_t tile)
{
  return ((size_t)bw + 2 * (size_t)r) * (tile == GPUIMG_TILE_FLOAT ? 4 * (size_t)channels : 4);
}

/* The separable tiled kernel's shared memory: the whole (bh + 2r)-row tile (to 16 bytes) and a
 * uint32 plane per channel of its rows' horizontal sums. */
static inline size_t gpuimg_blur_tiled_sep_bytes(int bw, int bh, int r, int channels,
                                                 gpuimg_tile_t tile)
{
  size_t tile_h = (size_t)bh + 2 * (size_t)r;
  return (tile_h * gpuimg_blur_tile_row_bytes(bw, r, channels, tile) + 15) / 16 * 16 +
         (size_t)channels * tile_h * (size_t)bw * 4;
}

static inline int gpuimg_blur_launch(gpuimg_variant_t variant, gpuimg_tile_t tile, int radius,
                                     int width, int height, int channels,
                                     const gpuimg_launch_env_t *env, gpuimg_launch_t *l);

/* The fast blur's designs (blur_fast.cu's choice) and their kernels' constants. */
typedef enum {
  GPUIMG_BLUR_STRIP,
  GPUIMG_BLUR_FUSED,
  GPUIMG_BLUR_TWOPASS,
  GPUIMG_BLUR_TILED,
  GPUIMG_BLUR_CHUNK,
  GPUIMG_BLUR_PAIR
} gpuimg_blur_design_t;

#define GPUIMG_BLUR_CHUNK_PX 8        /* chunk kernel: pixels a thread owns */
#define GPUIMG_BLUR_CHUNK_THREADS 256 /* chunk kernel: threads a block */
#define GPUIMG_BLUR_STRIP_WIDTH 128   /* strip kernel: pixels a warp walks down */
#define GPUIMG_BLUR_FUSED_WORDS 2     /* fused kernel: row words a thread keeps sums for */
#define GPUIMG_BLUR_FUSED_THREADS 256 /* fused kernel: threads a block */
#define GPUIMG_BLUR_ROW_THREADS 256   /* two passes: threads of a row-sum block */
#define GPUIMG_BLUR_ROW_SEGMENT 1024  /* two passes: pixels of a row-sum block's segment */

/* The chunk kernel's output pixels a block makes: its 2048-pixel row span holds them, the
 * r-pixel aprons on both sides, the up to 7 pixels the span's start is moved left to a
 * multiple of 8, and one prefix sum past the last window; a multiple of 8 so that output
 * chunks are whole chunks. */
static inline int gpuimg_blur_chunk_tile(int r)
{
  return (GPUIMG_BLUR_CHUNK_PX * GPUIMG_BLUR_CHUNK_THREADS - 2 * r - 8) & ~7;
}

/* Output pixels a fused block makes: its span must hold them, the 2r apron and 3 alignment
 * bytes, and its scan one pixel more (a multiple of 4). */
static inline int gpuimg_blur_fused_tile(int r, int channels)
{
  int span = GPUIMG_BLUR_FUSED_WORDS * 4 * GPUIMG_BLUR_FUSED_THREADS;
  int chunk_px = (span / channels + GPUIMG_BLUR_FUSED_THREADS - 1) / GPUIMG_BLUR_FUSED_THREADS;
  int a = (span - 3) / channels, b = chunk_px * GPUIMG_BLUR_FUSED_THREADS - 1;
  return ((a < b ? a : b) - 2 * r) & ~3;
}

/* Rows per block for a design whose blocks walk down runs of rows in `tiles` columns of
 * blocks: from `rows`, halved while the grid has fewer than per_sm blocks an SM, down to
 * min_rows; then raised where the image would need more than 65535 rows of blocks. */
static inline int gpuimg_blur_band_rows(int sms, long long tiles, int h, int rows, int min_rows,
                                        int per_sm)
{
  while (rows > min_rows && tiles * ((h + rows - 1) / rows) < (long long)per_sm * sms)
    rows = rows / 2 > min_rows ? rows / 2 : min_rows;
  if ((h + rows - 1) / rows > 65535)
    rows = (h + 65534) / 65535;
  return rows;
}

/* The pair kernel's runs of rows (blur_pair.cu): from the chunk kernel's (rows), shortened so
 * that its blocks fill whole waves of the slots resident blocks the GPU holds (8K RGB: one
 * wave of 55 rows at r = 127 where 128 rows gave 1.3 blocks per SM; two of 22 rows at r = 1),
 * to a quarter of rows (8 at least) at most: its window's set-up, loaded several rows at a
 * time, costs less than the chunk kernel's, which sets the runs' floor at r + 1 rows. */
static inline int gpuimg_blur_pair_rows(int h, long long tiles, int rows, long long slots)
{
  long long waves = (tiles * ((h + rows - 1) / rows) + slots - 1) / (slots > 0 ? slots : 1);
  long long gy = waves * slots / tiles;
  int least = rows / 4 > 8 ? rows / 4 : 8, even;
  if (gy < 1)
    return rows;
  even = (int)((h + gy - 1) / gy);
  even = even > least ? even : least;
  return even < rows ? even : rows;
}

/* Whether the two passes beat the designs that walk down runs of rows. Those pay 2r + 1
 * set-up rows per run, and a small image gives short runs (to fill the GPU), so their time
 * grows with r; the two passes' does not, while the image and its row sums stay in L2. On
 * the H200 (gray, RGB and RGBA, 640x480 to 7680x4320, r = 16 to 127; docs/performance.md)
 * the crossover lay within one measured radius of r = 1.8 (C + 2) Mpx (r >= 16, the
 * tiled kernel's rule first): 1024x768 RGB from r = 16 (0.026 ms against the chunk kernel's
 * 0.045), 3840x2160 RGB from r = 75 by the rule (measured faster at 96, slower at 64), never
 * at 8K. Two channels were not measured. */
static inline int gpuimg_blur_twopass_faster(int w, int h, int r, int channels)
{
  long long px = (long long)w * h;
  return r >= 16 && (long long)r * 1000000 * 10 >= px * (channels + 2) * 18;
}

/* GPUIMG_FAST_BLUR: the design a benchmark or test forces ("chunk", "pair", "strip", "fused",
 * "twopass"; NULL: none, as for any other value), and for chunk2, chunk3, pair2 and pair4 the
 * chunk or pair kernel's resident blocks per SM (*blocks; 0: its own choice). */
static inline const char *gpuimg_blur_forced(int *blocks)
{
  static const char *const value[] = {"chunk", "chunk2", "chunk3", "pair",   "pair2",
                                      "pair4", "strip",  "fused",  "twopass"};
  static const char *const design[] = {"chunk", "chunk", "chunk", "pair",   "pair",
                                       "pair",  "strip", "fused", "twopass"};
  static const int forced_blocks[] = {0, 2, 3, 0, 2, 4, 0, 0, 0};
  const char *v = getenv("GPUIMG_FAST_BLUR");
  *blocks = 0;
  for (int i = 0; v && i < (int)(sizeof value / sizeof value[0]); i++)
    if (strcmp(v, value[i]) == 0) {
      *blocks = forced_blocks[i];
      return design[i];
    }
  return NULL;
}

/* Whether the chunk kernel takes this blur: r <= 127, a width of a multiple of 8 pixels,
 * 16-byte aligned buffers. */
static inline int gpuimg_blur_chunk_fits(int w, int r, int channels, int aligned)
{
  return r <= 127 && w % GPUIMG_BLUR_CHUNK_PX == 0 && aligned &&
         (long long)w * channels < (1LL << 31) && gpuimg_blur_chunk_tile(r) >= 256;
}

/* The pair kernel's blocks an SM of gpu holds by their shared memory (two rows of padded
 * per-channel prefix sums, *shared bytes of them dynamic, and the warps' totals): 0 where one
 * block exceeds what a block may have (RGBA on a T4: 72.3 KB). */
static inline long long gpuimg_blur_pair_resident(int channels, const gpuimg_gpu_t *gpu,
                                                  size_t *shared)
{
  int span = GPUIMG_BLUR_CHUNK_PX * GPUIMG_BLUR_CHUNK_THREADS;
  *shared = 2 * (size_t)channels * (size_t)(span + 1 + span / 8) * 4;
  size_t per_block = *shared + 2 * (size_t)channels * 8 * 4 + /* the warps' totals */
                     (size_t)gpu->reserved_shared_per_block;
  if (per_block - (size_t)gpu->reserved_shared_per_block > (size_t)gpu->shared_per_block_optin)
    return 0;
  return (long long)gpu->shared_per_sm / (long long)per_block;
}

/* Five designs, all O(1) per pixel in r: the pair kernel and the chunk kernel it grew from
 * (blur_pair.cu, blur_chunk.cu: widths of a multiple of 8 pixels, r <= 127), the single-pass
 * strip kernel (r <= 64), the fused single-pass kernel (4-byte aligned rows, r <= 127) and row
 * sums + column walk. By default the pair kernel at 2 blocks per SM serves what it takes
 * where an SM's shared memory holds 2 of its blocks (H100, H200, A100: every layout; L4, T4:
 * gray and two channels), else the chunk kernel: on the H100 at 8K the pair kernel was within
 * 1% of the chunk kernel for RGB and RGBA at r = 1 and 1.04x to 2.1x faster at every other
 * radius and layout measured (RGB r = 127: 0.30 ms against 0.55; docs/performance.md), and
 * the chunk kernel was the fastest of the other four on the H200 (0.17 ms at r = 1
 * against the strip kernel's 0.29, 0.39 at r = 64 against the fused kernel's 0.69); then the
 * strip kernel blur (not portrait) with r <= 16 on images that give it enough blocks, the
 * fused kernel the rest it takes, the two passes what is left.
 * GPUIMG_FAST_BLUR (gpuimg_blur_forced()) overrides the choice, for benchmarks and tests, falling
 * back to the two passes where the kernel cannot serve (*blocks: the chunk or pair kernel's
 * resident blocks per SM it asks for, 0 for the launcher's own). On a small image at a small radius
 * none of them fills the GPU as well as the tiled kernel, one block per 16x16 pixels
 * (H200, docs/performance.md: 1024x768 up to r = 8, 640x480 up to r = 15, and gray at 16), so a
 * blur (not portrait: the tiled kernel has no composite) takes it; at a larger radius the two
 * passes (gpuimg_blur_twopass_faster()) take what they were measured faster on.
 * has_mask: portrait (its composite folded in); aligned: every buffer 16-byte aligned. */
static inline gpuimg_blur_design_t gpuimg_blur_choose(int w, int h, int r, int channels,
                                                      int has_mask, int aligned,
                                                      const gpuimg_launch_env_t *env, int *blocks)
{
  const char *impl = gpuimg_blur_forced(blocks);
  int chunk = gpuimg_blur_chunk_fits(w, r, channels, aligned);
  if (impl && strcmp(impl, "chunk") == 0)
    return chunk ? GPUIMG_BLUR_CHUNK : GPUIMG_BLUR_TWOPASS;
  size_t pair_shared;
  long long pair_resident = gpuimg_blur_pair_resident(channels, env->gpu, &pair_shared);
  if (impl && strcmp(impl, "pair") == 0) /* the chunk kernel's shapes */
    return chunk && pair_resident > 0 ? GPUIMG_BLUR_PAIR : GPUIMG_BLUR_TWOPASS;
  long long px = (long long)w * h;
  /* The tiled kernel at its own 16x16 blocks (not a --block, which shapes the teaching
   * kernels), on an image its grid can cover (a very tall one cannot: 65535 block rows). */
  int tiled_fits = !env->block_w && (h + 15LL) / 16 <= env->gpu->max_grid_y &&
                   (w + 15LL) / 16 <= env->gpu->max_grid_x;
  if (!impl && !has_mask && tiled_fits &&
      ((r <= 8 && px <= (1LL << 20)) || (px <= 400000 && (r < 16 || (r == 16 && channels <= 2)))))
    return GPUIMG_BLUR_TILED;
  if (!impl && gpuimg_blur_twopass_faster(w, h, r, channels))
    return GPUIMG_BLUR_TWOPASS;
  if (!impl && chunk && pair_resident >= 2) {
    *blocks = 2;
    return GPUIMG_BLUR_PAIR;
  }
  if (!impl && chunk)
    return GPUIMG_BLUR_CHUNK;
  int strip = impl ? strcmp(impl, "strip") == 0 && r <= 64 : r <= 16 && !has_mask;
  if (strip && !impl) {
    /* The strip kernel needs tall runs of rows per warp; a small image then gives too few
     * blocks to fill the GPU (1024x768 at r = 16: 12 blocks). */
    long long strips = (w + GPUIMG_BLUR_STRIP_WIDTH - 1) / GPUIMG_BLUR_STRIP_WIDTH;
    long long runs = (h + 4LL * r + 1) / (4LL * r + 2);
    if ((strips + 7) / 8 * runs < 2LL * env->gpu->sms)
      strip = 0;
  }
  int fused = !strip && (!impl || strcmp(impl, "fused") == 0) && (long long)w * channels % 4 == 0 &&
              (long long)w * channels < (1LL << 30) && r <= 127 &&
              gpuimg_blur_fused_tile(r, channels) >= 64;
  return fused ? GPUIMG_BLUR_FUSED : strip ? GPUIMG_BLUR_STRIP : GPUIMG_BLUR_TWOPASS;
}

/* The pair kernel's window sums computed ahead (blur_heads_kernel, blur_pair.cu). A run of
 * rows rows starting at row y0 = b * rows needs the column sums of rows [y0 - r, y0 + r]; the
 * rows b * rows - r and b * rows + r + 1 (over every b) fall at two offsets of each period of
 * rows rows, o0 <= o1, and cut the image into segments, segment j from boundary j to j + 1:
 * boundary 2k + i at row k * rows + (i ? o1 : o0), clamped to [0, h]. One kernel sums each
 * segment once (each row read once); a run's set-up then adds its window's few segments
 * instead of loading its 2r + 1 rows. */
typedef struct {
  int kmin;     /* the period of run 0's first window row, b = 0's boundary 0 */
  int kr;       /* periods from a run's first row to the row past its first window */
  int o0, o1;   /* the boundaries' offsets in a period */
  int sa, sc;   /* run b's window: segments 2b + sa to 2(b + kr - kmin) + sc, end excluded */
  int segments; /* segments summed (the heads kernel's grid height) */
  int chunks;   /* chunks of 8 pixels a segment, from pixel -128 to past w + 127 */
} gpuimg_blur_heads_t;

/* The segments for runs of rows rows of an image w x h at radius r in g; 0 where their 16-bit
 * sums could overflow (runs over 256 rows) or the grid be too tall, else 1. */
static inline int gpuimg_blur_heads_plan(int w, int h, int r, int rows, gpuimg_blur_heads_t *g)
{
  long long gy = (h + (long long)rows - 1) / rows;
  g->kmin = -((r + rows - 1) / rows);
  g->kr = (r + 1) / rows;
  int a = -r - g->kmin * rows, c = r + 1 - g->kr * rows; /* both in [0, rows) */
  g->o0 = a <= c ? a : c;
  g->o1 = a <= c ? c : a;
  g->sa = a <= c ? 0 : 1;
  g->sc = 1 - g->sa;
  long long segments = 2 * (gy - 1 + g->kr - g->kmin) + g->sc; /* the last run's end */
  g->chunks = w / GPUIMG_BLUR_CHUNK_PX + 32;
  g->segments = rows <= 256 && segments <= 65535 ? (int)segments : 0;
  return g->segments > 0;
}

/* What the fast blur launches besides l's shape: its design and the numbers its kernel takes. */
typedef struct {
  gpuimg_blur_design_t design;
  int tile;  /* chunk, pair, fused: output pixels of a block's row span */
  int rows;  /* chunk, pair, fused, strip: rows a block walks down */
  int minb;  /* chunk (2 or 3), pair (2, 3 or 4): the resident blocks per SM its registers
                are capped for */
  int band;  /* two passes: rows a band */
  int wide;  /* two passes: 32-bit row sums (r > 128), else 16-bit */
  int ahead; /* pair: its window sums computed ahead, as heads says (a launch before it) */
  gpuimg_blur_heads_t heads;
} gpuimg_blur_fast_t;

/* Two passes: a row-sum block's shared memory (its segment and 2r apron, 4 bytes a value), and
 * the rows of the column walk's strips for a band of rows rows over cols columns of blocks:
 * tall enough to amortise each thread's window set-up, short enough to give every SM several
 * blocks. */
static inline size_t gpuimg_blur_row_shared(int w, int r, int channels)
{
  int seg = w < GPUIMG_BLUR_ROW_SEGMENT ? w : GPUIMG_BLUR_ROW_SEGMENT;
  return (size_t)channels * ((size_t)seg + 2 * (size_t)r) * 4;
}

static inline int gpuimg_blur_strip_rows(int sms, unsigned cols, int rows)
{
  int want = sms * 8, strips = (want + (int)cols - 1) / (int)cols;
  int strip = (rows + strips - 1) / strips;
  return strip < 32 ? 32 : strip;
}

/* The fast variant's launch (gpuimg_blur_enqueue() on the device, the model alike): the
 * design, its numbers in f and its main kernel's shape in l; the launch the report shows is
 * the last (two passes: the last band's column walk, two launches a band). A GPUIMG_LAUNCH_
 * value: NO_L2 where the two passes need an L2 size the GPU table lacks, IMPOSSIBLE where a
 * row-sum block's shared memory exceeds the GPU's. */
static inline int gpuimg_blur_fast_launch(int w, int h, int r, int channels, int has_mask,
                                          int aligned, const gpuimg_launch_env_t *env,
                                          gpuimg_launch_t *l, gpuimg_blur_fast_t *f)
{
  char args[24];
  int sms = env->gpu->sms;
  f->design = gpuimg_blur_choose(w, h, r, channels, has_mask, aligned, env, &f->minb);
  f->tile = f->rows = f->band = f->wide = f->ahead = 0;
  memset(&f->heads, 0, sizeof f->heads);
  switch (f->design) {
  case GPUIMG_BLUR_CHUNK: {
    /* As few tiles as the span allows, of equal width (a multiple of 8 pixels); runs of rows
     * halved from 128 while the grid has fewer than 4 blocks per SM, down to r + 1 (at least
     * 8). Registers capped for 3 resident blocks per SM for RGB on a grid of more than 2 blocks
     * per SM (blur_chunk.cu says why), else 2. */
    long long tiles = (w + gpuimg_blur_chunk_tile(r) - 1) / gpuimg_blur_chunk_tile(r);
    f->tile = (int)((w + tiles - 1) / tiles + 7) & ~7;
    f->rows = gpuimg_blur_band_rows(sms, tiles, h, 128, r + 1 < 8 ? 8 : r + 1, 4);
    unsigned gy = (unsigned)((h + f->rows - 1) / f->rows);
    if (f->minb == 0)
      f->minb = channels == 3 && (long long)tiles * gy > 2LL * sms ? 3 : 2;
    snprintf(args, sizeof args, "%d, %d", channels, f->minb);
    gpuimg_launch_set(l, "blur_chunk_kernel", args, (unsigned)tiles, gy, GPUIMG_BLUR_CHUNK_THREADS,
                      1, 0);
    return GPUIMG_LAUNCH_KERNEL;
  }
  case GPUIMG_BLUR_PAIR: {
    /* The chunk kernel's tiles and runs of rows, the runs then shortened to fill whole waves
     * of resident blocks (gpuimg_blur_pair_rows(); GPUIMG_PAIR_ROWS sets them, for
     * measurements); registers capped for the resident blocks per SM asked for (the default
     * choice asks for 2, GPUIMG_FAST_BLUR=pair for 3); two rows of per-channel prefix sums in
     * dynamic shared memory (55 KiB for RGB). */
    long long tiles = (w + gpuimg_blur_chunk_tile(r) - 1) / gpuimg_blur_chunk_tile(r);
    size_t shared;
    long long resident = gpuimg_blur_pair_resident(channels, env->gpu, &shared);
    if (f->minb == 0)
      f->minb = 3;
    resident = resident < f->minb ? resident : f->minb;
    f->tile = (int)((w + tiles - 1) / tiles + 7) & ~7;
    f->rows = gpuimg_blur_band_rows(sms, tiles, h, 128, r + 1 < 8 ? 8 : r + 1, 4);
    f->rows = gpuimg_blur_pair_rows(h, tiles, f->rows, resident * sms);
    f->rows = gpuimg_env_int("GPUIMG_PAIR_ROWS", f->rows, 1, 1 << 20);
    if ((h + f->rows - 1) / f->rows > 65535)
      f->rows = (h + 65534) / 65535;
    snprintf(args, sizeof args, "%d, %d", channels, f->minb);
    gpuimg_launch_set(l, "blur_pair_kernel", args, (unsigned)tiles,
                      (unsigned)((h + f->rows - 1) / f->rows), GPUIMG_BLUR_CHUNK_THREADS, 1,
                      shared);
    /* The window sums ahead where the window has more than twice a run's rows: on the H100
     * at 8K RGB, at 2 blocks per SM, they cost 0.017 ms at r = 16 (33 rows, runs of 22) and
     * saved 0.07 at r = 64 (129 rows, runs of 42), 0.12 at r = 127 (GPUIMG_BLUR_AHEAD = 0
     * or 1 decides, for measurements). */
    f->ahead = gpuimg_env_int("GPUIMG_BLUR_AHEAD", 2 * r + 1 > 2 * f->rows, 0, 1) &&
               gpuimg_blur_heads_plan(w, h, r, f->rows, &f->heads);
    l->launches = 1 + f->ahead;
    return GPUIMG_LAUNCH_KERNEL;
  }
  case GPUIMG_BLUR_FUSED: {
    /* Runs of rows long enough to amortise each block's window set-up (2r + 1 row loads,
     * much cheaper than a row of output), short enough to give every SM several blocks: halved
     * from 64 down to r + 1 rows (at least 2, at most 16). Measured on the H200 (1024x768 and
     * 640x480, docs/performance.md): r + 1 halves the time at r = 1 against a floor of 16, and
     * below 16 rows for r >= 16 the GPU's fill outweighs the longer window set-up. */
    f->tile = gpuimg_blur_fused_tile(r, channels);
    long long tiles = (w + f->tile - 1) / f->tile;
    int min_rows = r + 1 < 2 ? 2 : r + 1 > 16 ? 16 : r + 1;
    min_rows = gpuimg_env_int("GPUIMG_FUSED_MIN_ROWS", min_rows, 1, 1 << 20); /* measurements */
    f->rows = gpuimg_blur_band_rows(sms, tiles, h, 64, min_rows, 8);
    snprintf(args, sizeof args, "%d", channels);
    gpuimg_launch_set(l, "blur_fused_kernel", args, (unsigned)tiles,
                      (unsigned)((h + f->rows - 1) / f->rows), GPUIMG_BLUR_FUSED_THREADS, 1, 0);
    return GPUIMG_LAUNCH_KERNEL;
  }
  case GPUIMG_BLUR_STRIP: {
    /* Strips of 128 pixels, 8 per block; runs of rows long enough to amortise each warp's
     * window set-up (2r + 1 rows), short enough to give every SM many warps; the instance
     * built for the smallest of r <= 4, 16, 64, its warps' shared slices sized by it. */
    unsigned strips = (unsigned)((w + GPUIMG_BLUR_STRIP_WIDTH - 1) / GPUIMG_BLUR_STRIP_WIDTH);
    int want_warps = sms * 48, rmax = r <= 4 ? 4 : r <= 16 ? 16 : 64;
    f->rows = (int)(((long long)h * strips + want_warps - 1) / want_warps);
    if (f->rows < 4 * r + 2)
      f->rows = 4 * r + 2;
    if (f->rows < 32)
      f->rows = 32;
    snprintf(args, sizeof args, "%d, %d", channels, rmax);
    gpuimg_launch_set(l, "blur_strip_kernel", args, (strips + 7) / 8,
                      (unsigned)((h + f->rows - 1) / f->rows), 256, 1,
                      8 * ((size_t)(GPUIMG_BLUR_STRIP_WIDTH + 2 * rmax) * channels + channels) * 4);
    return GPUIMG_LAUNCH_KERNEL;
  }
  case GPUIMG_BLUR_TILED:
    return gpuimg_blur_launch(GPUIMG_VARIANT_TILED, GPUIMG_TILE_U8, r, w, h, channels, env, l);
  case GPUIMG_BLUR_TWOPASS:
    break;
  }
  /* Row sums into scratch in bands whose rows (halo included) fit in half the L2 cache, so the
   * column walk reads them from L2 (at least 256 rows a band); 16-bit sums while 255 (2r + 1)
   * fits. */
  if (env->gpu->l2_bytes <= 0)
    return GPUIMG_LAUNCH_NO_L2;
  if (gpuimg_blur_row_shared(w, r, channels) > (size_t)env->gpu->shared_per_block_optin)
    return GPUIMG_LAUNCH_IMPOSSIBLE;
  f->wide = r > 128;
  long long row_bytes = (long long)w * channels * (f->wide ? 4 : 2);
  long long fit = env->gpu->l2_bytes / 2 / row_bytes - 2LL * r;
  f->band = fit < 256 ? 256 : fit > h ? h : (int)fit;
  int bands = (h + f->band - 1) / f->band, last = h - (bands - 1) * f->band;
  unsigned cols = gpuimg_launch_blocks((long long)w * channels, 256);
  int strip = gpuimg_blur_strip_rows(sms, cols, last);
  snprintf(args, sizeof args, "%d, %s", channels, f->wide ? "unsigned int" : "unsigned short");
  gpuimg_launch_set(l, "blur_columns_kernel", args, cols, (unsigned)((last + strip - 1) / strip),
                    256, 1, 0);
  l->launches = 2 * bands;
  return GPUIMG_LAUNCH_KERNEL;
}

/* The launch gpuimg_blur_gpu() makes of a width x height x channels image in env (the model
 * makes the same): a GPUIMG_LAUNCH_ value (radius 0: a copy; the fast variant as
 * gpuimg_blur_fast_launch() says; a tiled row past the GPU's shared memory: impossible). */
static inline int gpuimg_blur_launch(gpuimg_variant_t variant, gpuimg_tile_t tile, int radius,
                                     int width, int height, int channels,
                                     const gpuimg_launch_env_t *env, gpuimg_launch_t *l)
{
  char args[16];
  unsigned bw = env->block_w ? (unsigned)env->block_w : 16;
  unsigned bh = env->block_w ? (unsigned)env->block_h : 16;
  long long row = (long long)width * channels; /* an image row's bytes */
  if (radius == 0)
    return GPUIMG_LAUNCH_COPY;
  if (variant == GPUIMG_VARIANT_NAIVE) {
    /* One thread per pixel sums its window from global memory, a byte a channel: neighbouring
     * lanes C bytes apart, a block row narrower than 32 lanes wrapping to the next image row. */
    snprintf(args, sizeof args, "%d", channels);
    gpuimg_launch_set(l, "blur_naive_kernel", args, gpuimg_launch_blocks(width, (int)bw),
                      gpuimg_launch_blocks(height, (int)bh), bw, bh, 0);
    gpuimg_launch_access(l, GPUIMG_ACCESS_LOAD, 1, channels, (int)bw, row);
    gpuimg_launch_access(l, GPUIMG_ACCESS_STORE, 1, channels, (int)bw, row);
    return GPUIMG_LAUNCH_KERNEL;
  }
  if (variant != GPUIMG_VARIANT_TILED) { /* device buffers are 256-byte aligned */
    gpuimg_blur_fast_t f;
    return gpuimg_blur_fast_launch(width, height, radius, channels, 0, 1, env, l, &f);
  }
  /* The tile plus apron staged in shared memory, loaded a byte a channel by consecutive threads
   * along tile rows of bw + 2r pixels; each pixel one 4-byte word (u8) or C floats. */
  int fl = tile == GPUIMG_TILE_FLOAT, px = fl ? 4 * channels : 4;
  int tile_w = (int)bw + 2 * radius, tile_h = (int)bh + 2 * radius;
  size_t row_bytes = gpuimg_blur_tile_row_bytes((int)bw, radius, channels, tile);
  size_t sep = gpuimg_blur_tiled_sep_bytes((int)bw, (int)bh, radius, channels, tile);
  size_t optin = (size_t)env->gpu->shared_per_block_optin;
  unsigned gx = gpuimg_launch_blocks(width, (int)bw), gy = gpuimg_launch_blocks(height, (int)bh);
  snprintf(args, sizeof args, "%d, %s", channels, fl ? "float" : "uchar4");
  if (sep <= optin) {
    /* The whole tile and a plane of row sums: the separable kernel. */
    gpuimg_launch_set(l, "blur_tiled_kernel", NULL, gx, gy, bw, bh, sep);
    snprintf(l->instance, sizeof l->instance, "blur_tiled_sep_kernel<%s>", args);
  } else {
    /* Bands of the tile's rows, summed window by window. */
    size_t band = optin / row_bytes;
    if (band < 1)
      return GPUIMG_LAUNCH_IMPOSSIBLE;
    if (band > (size_t)tile_h)
      band = (size_t)tile_h;
    gpuimg_launch_set(l, "blur_tiled_banded_kernel", NULL, gx, gy, bw, bh, band * row_bytes);
    snprintf(l->instance, sizeof l->instance, "blur_tiled_kernel<%s>", args);
  }
  gpuimg_launch_access(l, GPUIMG_ACCESS_LOAD, 1, channels, tile_w, row);
  gpuimg_launch_access(l, GPUIMG_ACCESS_SHARED_STORE, 4, px, 0, 0);
  /* The window: lane (tx, ty) reads tile row ty from column tx on. */
  gpuimg_launch_access(l, GPUIMG_ACCESS_SHARED_LOAD, 4, px, (int)bw, (long long)tile_w * px);
  if (sep <= optin) /* the row sums: plane rows of bw words */
    gpuimg_launch_access(l, GPUIMG_ACCESS_SHARED_LOAD, 4, 4, (int)bw, 4LL * bw);
  gpuimg_launch_access(l, GPUIMG_ACCESS_STORE, 1, channels, (int)bw, row);
  return GPUIMG_LAUNCH_KERNEL;
}

#ifdef __cplusplus
}
#endif

#endif
