/* gpu_compare.c: every CUDA variant, byte for byte against the CPU reference (suite gpu; 77 = no
 * device). */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blur.h"
#include "checkerboard.h"
#include "cuda_context.h"
#include "gray.h"
#include "portrait.h"
#include "blur_cpu.h"
#include "checkerboard_cpu.h"
#include "gray_cpu.h"
#include "ops.h"
#include "pool.h"
#include "test_rng.h"

static int failures, checks;
static int verbose; /* a line for every comparison (--huge, where each takes seconds) */
/* --huge OP...: only these operations (NULL: all), to finish a run that a time limit stopped. */
static char **only_ops;

static int skipped(const gpuimg_op_t *op)
{
  if (!only_ops)
    return 0;
  for (char **o = only_ops; *o; o++)
    if (strcmp(*o, op->name) == 0)
      return 0;
  return 1;
}

static void progress(const char *op, const char *label, int w, int h, int c)
{
  if (verbose)
    printf("compared %s %s %dx%dx%d\n", op, label, w, h, c);
}

/* The CPU reference over bands of rows on every core (--huge: a single thread takes minutes
 * on an image of 2^31 bytes); the bands compute exactly their rows, so the bytes are the same. */
static gpuimg_pool_t *pool;
static int pool_threads;

typedef struct {
  const gpuimg_op_t *op;
  const void *p;
  const gpuimg_image_t *src, *mask;
  gpuimg_image_t *dst;
  int n;
} bands_t;

static int band(void *arg, int i)
{
  const bands_t *b = arg;
  int64_t h = b->dst->height;
  return b->op->run_cpu_rows(b->p, b->src, b->mask, b->dst, (int)(h * i / b->n),
                             (int)(h * (i + 1) / b->n));
}

static int reference(const gpuimg_op_t *op, const void *p, const gpuimg_image_t *src,
                     const gpuimg_image_t *mask, gpuimg_image_t *dst)
{
  if (!pool || op->run_cpu || !op->run_cpu_rows)
    return gpuimg_op_run_cpu(op, p, src, mask, dst);
  bands_t b = {op, p, src, mask, dst, pool_threads};
  return gpuimg_pool_run(pool, b.n, band, &b);
}
/* The block shape the context has (gpuimg_cuda_set_block()), for the model. */
static int block_w, block_h;

static int set_block(gpuimg_cuda_t *ctx, int w, int h)
{
  block_w = w;
  block_h = h;
  return gpuimg_cuda_set_block(ctx, w, h);
}

/* The model's launch for this very device (kernels/cuda_model.c, the resource table, the
 * operation's launch function) must be the launch the device ran: kernel instance, grid, block,
 * shared memory, launches and, where the table holds the architecture the device ran, the
 * registers and blocks per SM the occupancy API gave. */
static void check_model(gpuimg_cuda_t *ctx, const gpuimg_op_t *op, const void *p, int w, int h,
                        int c, const gpuimg_image_t *mask, const gpuimg_launch_t *got,
                        const char *label)
{
  gpuimg_gpu_t gpu;
  gpuimg_cuda_gpu(ctx, &gpu);
  gpuimg_launch_env_t env = {&gpu, block_w, block_h, 0};
  gpuimg_launch_t m;
  int rc = gpuimg_op_predict(op, p, w, h, c, &env, mask, &m);
  if (rc == GPUIMG_LAUNCH_UNMODELLED || rc == GPUIMG_LAUNCH_NO_L2)
    return;
  checks++;
  if (rc == GPUIMG_LAUNCH_COPY) {
    if (got->launches != 0) {
      printf("FAIL model %s %s %dx%dx%d: a copy predicted, %s ran\n", op->name, label, w, h, c,
             got->kernel);
      failures++;
    }
    return;
  }
  if (rc != GPUIMG_LAUNCH_KERNEL || strcmp(m.instance, got->instance) != 0 ||
      memcmp(m.grid, got->grid, sizeof m.grid) != 0 ||
      memcmp(m.block, got->block, sizeof m.block) != 0 || m.shared_bytes != got->shared_bytes ||
      m.launches != got->launches) {
    printf("FAIL model %s %s %dx%dx%d: predicted %s %ux%u grid of %ux%u, %zu B, %d launches; ran "
           "%s %ux%u of %ux%u, %zu B, %d launches\n",
           op->name, label, w, h, c, m.instance, m.grid[0], m.grid[1], m.block[0], m.block[1],
           m.shared_bytes, m.launches, got->instance, got->grid[0], got->grid[1], got->block[0],
           got->block[1], got->shared_bytes, got->launches);
    failures++;
    return;
  }
  if (!got->has_occupancy || gpuimg_model_arch(gpu.cc_major, gpu.cc_minor) != got->arch)
    return; /* the device ran machine code of an architecture the model does not price */
  if (!m.has_occupancy || m.registers != got->registers || m.static_shared != got->static_shared ||
      m.active_blocks_per_sm != got->active_blocks_per_sm) {
    printf("FAIL model %s %s %dx%dx%d (%s): predicted %d registers, %zu B static, %d blocks/SM; "
           "ran %d, %zu B, %d\n",
           op->name, label, w, h, c, m.instance, m.registers, m.static_shared,
           m.active_blocks_per_sm, got->registers, got->static_shared, got->active_blocks_per_sm);
    failures++;
  }
}

static void fill_random(uint8_t *p, size_t n)
{
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    uint32_t v = rng();
    memcpy(p + i, &v, 4);
  }
  for (; i < n; i++)
    p[i] = (uint8_t)rng();
}

/* The option values of a test case; compare() gives an operation those it has. */
typedef struct {
  int radius, cell, amount, clip;
  gpuimg_variant_t variant;
  gpuimg_tile_t tile;
  const char *const *sizing; /* resize: option name, value, ... NULL */
} values_t;

/* op's parameters from v, set through its options as the command line sets them. */
static int make_params(const gpuimg_op_t *op, const values_t *v, void *params)
{
  char num[4][16];
  snprintf(num[0], sizeof num[0], "%d", v->radius);
  snprintf(num[1], sizeof num[1], "%d", v->cell);
  snprintf(num[2], sizeof num[2], "%d", v->amount);
  snprintf(num[3], sizeof num[3], "%d", v->clip);
  const char *set[][2] = {{"radius", num[0]},
                          {"cell", num[1]},
                          {"amount", num[2]},
                          {"clip", num[3]},
                          {"tile", gpuimg_tile_names[v->tile]},
                          {gpuimg_variant_name(v->variant), NULL}};
  gpuimg_ops_init(op, params);
  for (size_t k = 0; k < sizeof set / sizeof set[0]; k++)
    if (gpuimg_options_find(op->options, set[k][0], strlen(set[k][0]), 0) &&
        gpuimg_ops_set(op, params, set[k][0], set[k][1]) < 0)
      return -1;
  for (int k = 0; v->sizing && v->sizing[k]; k += 2)
    if (gpuimg_ops_set(op, params, v->sizing[k], v->sizing[k + 1]) < 0)
      return -1;
  return 0;
}

/* An analysis (stats): its result on the GPU against the CPU reference's, byte for byte (both
 * zero every byte of it first: gpuimg_stats_t's figures are integers, and the doubles derived
 * from them are not part of it). */
static int compare_measure(gpuimg_cuda_t *ctx, const gpuimg_op_t *op, const void *p,
                           const gpuimg_image_t *src, const char *label)
{
  int w = src->width, h = src->height, c = src->channels;
  size_t in_bytes = gpuimg_image_bytes(w, h, c);
  gpuimg_launch_t info;
  uint8_t *d_src = NULL;
  void *ref = malloc(op->result_size), *got = malloc(op->result_size);
  int rc = -1;
  memset(&info, 0, sizeof info);
  if (!ref || !got || op->measure_cpu(p, src, ref) < 0)
    goto done;
  memset(got, 0xA5, op->result_size); /* a figure left unwritten cannot pass */
  if (!(d_src = gpuimg_cuda_dev_alloc(in_bytes)) ||
      gpuimg_cuda_upload(ctx, d_src, src->data, in_bytes, NULL) < 0 ||
      op->measure_gpu(ctx, p, d_src, w, h, c, got, &info) < 0)
    goto done;
  rc = 0;
  checks++;
  check_model(ctx, op, p, w, h, c, NULL, &info, label);
  if (memcmp(got, ref, op->result_size) != 0) {
    char *g = op->result_json(got), *r = op->result_json(ref);
    printf("FAIL %s %s %dx%dx%d (%s): gpu %.300s cpu %.300s\n", op->name, label, w, h, c,
           info.kernel ? info.kernel : "?", g ? g : "?", r ? r : "?");
    free(g);
    free(r);
    failures++;
  }
  progress(op->name, label, w, h, c);
done:
  if (rc < 0)
    printf("ERROR %s %s %dx%dx%d: %s\n", op->name, label, w, h, c, gpuimg_error_message());
  gpuimg_cuda_dev_free(d_src);
  free(ref);
  free(got);
  return rc;
}

/* Runs op under the parameters p on the CPU and on the GPU and compares every output byte (an
 * analysis: its result). */
static int compare_params(gpuimg_cuda_t *ctx, const gpuimg_op_t *op, const void *p,
                          const gpuimg_image_t *src, const gpuimg_image_t *mask, const char *label)
{
  if (skipped(op))
    return 0;
  if (op->measure_gpu)
    return compare_measure(ctx, op, p, src, label);
  int w = src->width, h = src->height, c = src->channels, oc = gpuimg_op_out_channels(op, c);
  int ow = w, oh = h;
  if (gpuimg_op_out_size(op, p, w, h, &ow, &oh) < 0) {
    printf("ERROR %s %s: %s\n", op->name, label, gpuimg_error_message());
    return -1;
  }
  size_t in_bytes = gpuimg_image_bytes(w, h, c), out_bytes = gpuimg_image_bytes(ow, oh, oc);
  gpuimg_image_t ref, got;
  gpuimg_launch_t info;
  uint8_t *d_src = NULL, *d_dst = NULL, *d_mask = NULL;
  int rc = -1;

  memset(&info, 0, sizeof info);
  if (gpuimg_image_alloc(&ref, ow, oh, oc) < 0)
    return -1;
  if (gpuimg_image_alloc(&got, ow, oh, oc) < 0) {
    gpuimg_image_free(&ref);
    return -1;
  }
  if (reference(op, p, src, mask, &ref) < 0)
    goto done;
  if (!(d_src = gpuimg_cuda_dev_alloc(in_bytes)) || !(d_dst = gpuimg_cuda_dev_alloc(out_bytes)))
    goto done;
  if (mask && (!(d_mask = gpuimg_cuda_dev_alloc((size_t)w * h)) ||
               gpuimg_cuda_upload(ctx, d_mask, mask->data, (size_t)w * h, NULL) < 0))
    goto done;
  /* Poison the output so an unwritten byte cannot pass. */
  memset(got.data, 0xA5, out_bytes);
  if (gpuimg_cuda_upload(ctx, d_dst, got.data, out_bytes, NULL) < 0 ||
      gpuimg_cuda_upload(ctx, d_src, src->data, in_bytes, NULL) < 0 ||
      op->run_gpu(ctx, p, d_src, d_mask, d_dst, w, h, c, &info) < 0 ||
      gpuimg_cuda_download(ctx, got.data, d_dst, out_bytes, NULL) < 0)
    goto done;
  rc = 0;
  checks++;
  check_model(ctx, op, p, w, h, c, mask, &info, label);
  for (size_t i = 0; i < out_bytes; i++)
    if (got.data[i] != ref.data[i]) {
      size_t px = i / (size_t)oc;
      printf("FAIL %s %s %dx%dx%d (%s): byte %zu (x=%zu y=%zu ch=%zu) gpu %u cpu %u\n", op->name,
             label, w, h, c, info.kernel ? info.kernel : "?", i, px % (size_t)ow, px / (size_t)ow,
             i % (size_t)oc, got.data[i], ref.data[i]);
      failures++;
      break;
    }
  progress(op->name, label, w, h, c);
done:
  if (rc < 0)
    printf("ERROR %s %s %dx%dx%d: %s\n", op->name, label, w, h, c, gpuimg_error_message());
  gpuimg_cuda_dev_free(d_src);
  gpuimg_cuda_dev_free(d_dst);
  gpuimg_cuda_dev_free(d_mask);
  gpuimg_image_free(&ref);
  gpuimg_image_free(&got);
  return rc;
}

/* Runs the operation named op_name on the CPU and on the GPU and compares every output byte. */
static int compare(gpuimg_cuda_t *ctx, const char *op_name, const values_t *v,
                   const gpuimg_image_t *src, const gpuimg_image_t *mask, const char *label)
{
  const gpuimg_op_t *op = gpuimg_ops_find(op_name);
  _Alignas(16) unsigned char p[GPUIMG_PARAMS_SIZE];
  if (!op || make_params(op, v, p) < 0) {
    printf("ERROR %s %s: %s\n", op_name, label, op ? gpuimg_error_message() : "no such operation");
    return -1;
  }
  return compare_params(ctx, op, p, src, mask, label);
}

/* The registry's cases compared so far, per operation (run_registry()). */
static int registry_cases[64];

/* op with its defaults, then option (NULL: none) set to value, then the variant flag (NULL:
 * none) into p; 0, or 1 when op's check refuses them (an option it requires: resize's size),
 * or -1. label gets the case as the command line spells it. */
static int registry_case(const gpuimg_op_t *op, const char *option, const char *value,
                         const char *flag, void *p, char *label, size_t size)
{
  gpuimg_ops_init(op, p);
  if ((option && gpuimg_ops_set(op, p, option, value) < 0) ||
      (flag && gpuimg_ops_set(op, p, flag, NULL) < 0)) {
    printf("ERROR %s: %s\n", op->name, gpuimg_error_message());
    return -1;
  }
  snprintf(label, size, "registry%s%s%s%s%s%s", option ? " --" : "", option ? option : "",
           option ? " " : "", option ? value : "", flag ? " --" : "", flag ? flag : "");
  if (op->check && op->check(p) < 0) {
    gpuimg_error_clear();
    return 1;
  }
  return 0;
}

/* Which registry cases run_registry() compares: all, the default variant only, or only those
 * that swap the width and the height. */
enum { CASES_ALL, CASES_FAST, CASES_SWAPPING };

/* Whether op under p makes a 2x3 image of a 3x2 one. */
static int swaps_sides(const gpuimg_op_t *op, const void *p)
{
  int w, h;
  return gpuimg_op_out_size(op, p, 3, 2, &w, &h) == 0 && w == 2 && h == 3;
}

/* registry_case() in each variant op offers (the default, --naive, --tiled), as cases says,
 * compared on src (and mask, for an operation that takes one). */
static int registry_variants(gpuimg_cuda_t *ctx, int i, const char *option, const char *value,
                             const gpuimg_image_t *src, const gpuimg_image_t *mask, int cases)
{
  static const char *const flags[] = {NULL, "naive", "tiled"};
  const gpuimg_op_t *op = gpuimg_ops[i];
  for (int f = 0; f < (cases == CASES_FAST ? 1 : 3); f++) {
    _Alignas(16) unsigned char p[GPUIMG_PARAMS_SIZE];
    char label[96];
    if (flags[f] && !gpuimg_options_find(op->options, flags[f], strlen(flags[f]), 0))
      continue;
    int rc = registry_case(op, option, value, flags[f], p, label, sizeof label);
    if (rc == 0 && cases == CASES_SWAPPING && !swaps_sides(op, p))
      rc = 1;
    if (rc < 0 ||
        (rc == 0 && compare_params(ctx, op, p, src, op->needs_mask ? mask : NULL, label) < 0))
      return -1;
    registry_cases[i] += rc == 0 && !skipped(op);
  }
  return 0;
}

/* Every operation of the registry in every variant it offers, with its defaults and with each
 * value of each of its choice options (rotate's --angle, blur's --tile, ...): an operation added
 * to the registry is compared here without being named. main() says how many cases each had;
 * one that needs an option of its own (resize's size) has none here and its own cases above. */
static int run_registry(gpuimg_cuda_t *ctx, const gpuimg_image_t *src, const gpuimg_image_t *mask,
                        int cases)
{
  for (int i = 0; gpuimg_ops[i] && i < 64; i++) {
    if (registry_variants(ctx, i, NULL, NULL, src, mask, cases) < 0)
      return -1;
    for (const gpuimg_option_t *o = gpuimg_ops[i]->options; o->long_name; o++)
      for (int k = 0; o->kind == GPUIMG_OPTION_CHOICE && o->choices[k]; k++)
        if (registry_variants(ctx, i, o->long_name, o->choices[k], src, mask, cases) < 0)
          return -1;
  }
  return 0;
}

/* resize on src: shrink and enlarge, whole and non-integer factors, each filter (all: every
 * case; else the first two, for the largest images). */
static int run_resize(gpuimg_cuda_t *ctx, const gpuimg_image_t *src, int all)
{
  static const char *const cases[][5] = {
      {"width", "256", NULL},
      {"scale", "0.5", NULL},
      {"scale", "2.3", NULL},
      {"fit", "13x11", NULL},
      {"scale", "0.37", NULL},
      {"width", "3", "filter", "bilinear", NULL},
      {"height", "5", "filter", "area", NULL},
      {"width", "40", "height", "2", NULL},
  };
  for (size_t k = 0; k < (all ? sizeof cases / sizeof cases[0] : 2); k++) {
    values_t p;
    char label[96];
    memset(&p, 0, sizeof p);
    p.sizing = cases[k];
    snprintf(label, sizeof label, "--%s %s%s%s%s%s", cases[k][0], cases[k][1],
             cases[k][2] ? " --" : "", cases[k][2] ? cases[k][2] : "", cases[k][2] ? " " : "",
             cases[k][2] ? cases[k][3] : "");
    if (compare(ctx, "resize", &p, src, NULL, label) < 0)
      return -1;
  }
  return 0;
}

/* resize at the extremes: a 3000x2000 image to 1x1 and 7x5 (one output pixel sums a whole
 * axis), with the largest block; a 3x5 image to 2x600000 (more rows than 65535 blocks of 8). */
static int run_resize_extremes(gpuimg_cuda_t *ctx)
{
  static const char *const shrink[][7] = {
      {"width", "1", "height", "1", NULL},
      {"width", "7", "height", "5", NULL},
      {"width", "7", "height", "5", "filter", "bilinear", NULL},
  };
  static const char *const tall[] = {"width", "2", "height", "600000", NULL};
  gpuimg_image_t big, small;
  values_t p;
  memset(&p, 0, sizeof p);
  if (gpuimg_image_alloc(&big, 3000, 2000, 3) < 0 || gpuimg_image_alloc(&small, 3, 5, 4) < 0)
    return -1;
  fill_random(big.data, gpuimg_image_bytes(3000, 2000, 3));
  fill_random(small.data, gpuimg_image_bytes(3, 5, 4));
  for (int b = 0; b < 2; b++) {
    if (set_block(ctx, b ? 32 : 0, b ? 32 : 0) < 0)
      return -1;
    for (size_t k = 0; k < sizeof shrink / sizeof shrink[0]; k++) {
      p.sizing = shrink[k];
      if (compare(ctx, "resize", &p, &big, NULL,
                  b ? "extreme shrink, block 32x32" : "extreme shrink") < 0)
        return -1;
    }
    p.sizing = tall;
    if (compare(ctx, "resize", &p, &small, NULL, b ? "2x600000, block 32x32" : "2x600000") < 0)
      return -1;
  }
  gpuimg_image_free(&big);
  gpuimg_image_free(&small);
  return set_block(ctx, 0, 0);
}

static const gpuimg_variant_t variants[] = {GPUIMG_VARIANT_FAST, GPUIMG_VARIANT_NAIVE,
                                            GPUIMG_VARIANT_TILED};

/* level 0: every layout, radius and variant; 1: RGB only, small radii; 2: RGBA, fast only. */
static int run_size(gpuimg_cuda_t *ctx, int w, int h, int level)
{
  char label[64];
  int big = level > 0;
  int c0 = level == 0 ? 1 : level == 1 ? 3 : 4;
  for (int c = c0; c <= 4; c++) {
    gpuimg_image_t src, mask;
    values_t p;
    if (gpuimg_image_alloc(&src, w, h, c) < 0 || gpuimg_image_alloc(&mask, w, h, 1) < 0)
      return -1;
    fill_random(src.data, gpuimg_image_bytes(w, h, c));
    fill_random(mask.data, (size_t)w * h);

    memset(&p, 0, sizeof p);
    if (compare(ctx, "gray", &p, &src, NULL, "fast") < 0)
      return -1;
    p.variant = GPUIMG_VARIANT_NAIVE;
    if (compare(ctx, "gray", &p, &src, NULL, "naive") < 0)
      return -1;
    p.variant = GPUIMG_VARIANT_GRID_STRIDE;
    if (compare(ctx, "gray", &p, &src, NULL, "grid-stride") < 0)
      return -1;
    static const int clips[] = {1, 5, 49};
    for (int k = 0; k < 3; k++) {
      p.clip = clips[k];
      snprintf(label, sizeof label, "--clip %d", p.clip);
      if (compare(ctx, "normalize", &p, &src, NULL, label) < 0)
        return -1;
    }
    p.clip = 0;
    static const int cells[] = {1, 8, 3, 1000};
    for (int k = 0; k < 4; k++)
      for (int v = 0; v < 2; v++) {
        p.cell = cells[k];
        p.amount = 64 + 50 * v;
        p.variant = v ? GPUIMG_VARIANT_NAIVE : GPUIMG_VARIANT_FAST;
        snprintf(label, sizeof label, "%s cell=%d", gpuimg_variant_name(p.variant), p.cell);
        if (compare(ctx, "checkerboard", &p, &src, NULL, label) < 0)
          return -1;
      }
    int maxdim = w > h ? w : h;
    int radii[] = {0, 1, 2, 5, 16, maxdim + 3};
    int nradii = big ? 3 : 6;
    int nvariants = level == 2 ? 1 : 3;
    if (level == 2)
      nradii = 2;
    for (int v = 0; v < nvariants; v++)
      for (int k = 0; k < nradii; k++) {
        p.radius = radii[k] > GPUIMG_MAX_RADIUS ? GPUIMG_MAX_RADIUS : radii[k];
        p.variant = variants[v];
        /* The naive kernel is O(r^2) per pixel: keep it to sizes it finishes quickly. */
        if (p.variant == GPUIMG_VARIANT_NAIVE &&
            (double)w * h * (2.0 * p.radius + 1) * (2.0 * p.radius + 1) > 4e10)
          continue;
        snprintf(label, sizeof label, "%s r=%d", gpuimg_variant_name(p.variant), p.radius);
        if (compare(ctx, "blur", &p, &src, NULL, label) < 0)
          return -1;
        if (p.variant == GPUIMG_VARIANT_TILED && k < 5) {
          p.tile = GPUIMG_TILE_FLOAT;
          snprintf(label, sizeof label, "tiled float r=%d", p.radius);
          int rc = compare(ctx, "blur", &p, &src, NULL, label);
          p.tile = GPUIMG_TILE_U8;
          if (rc < 0)
            return -1;
        }
        if (k < 5 && compare(ctx, "portrait", &p, &src, &mask, label) < 0)
          return -1;
      }
    if (run_resize(ctx, &src, !big) < 0 ||
        run_registry(ctx, &src, &mask, level == 2 ? CASES_FAST : CASES_ALL) < 0)
      return -1;
    gpuimg_image_free(&src);
    gpuimg_image_free(&mask);
    if (big)
      break; /* one layout is enough for the largest sizes */
  }
  return 0;
}

/* An operation that swaps the width and the height turns a wide image into a tall one, so it
 * must take both at any length: 1 x 2100000 and 2100000 x 1 images, 1 and 3 channels, in every
 * variant: more rows of 32 or 8 pixels than a grid has rows of blocks (65535), on both sides. */
static int run_sides(gpuimg_cuda_t *ctx)
{
  static const int shapes[][2] = {{1, 2100000}, {2100000, 1}};
  for (int s = 0; s < 2; s++)
    for (int c = 1; c <= 3; c += 2) {
      gpuimg_image_t src;
      if (gpuimg_image_alloc(&src, shapes[s][0], shapes[s][1], c) < 0)
        return -1;
      fill_random(src.data, gpuimg_image_bytes(src.width, src.height, c));
      int rc = run_registry(ctx, &src, NULL, CASES_SWAPPING);
      gpuimg_image_free(&src);
      if (rc < 0)
        return -1;
    }
  return 0;
}

/* Images of one value: every histogram atomic on the same bins (the global kernel's worst
 * contention) and every minimum equal to its maximum, for every registry case (stats's every
 * --variant and --histogram among them). */
static int run_flat(gpuimg_cuda_t *ctx)
{
  static const int shapes[][4] = {{1999, 1001, 4, 255}, {3001, 7, 1, 0}, {257, 255, 3, 128}};
  for (int k = 0; k < 3; k++) {
    gpuimg_image_t src, mask;
    if (gpuimg_image_alloc(&src, shapes[k][0], shapes[k][1], shapes[k][2]) < 0 ||
        gpuimg_image_alloc(&mask, shapes[k][0], shapes[k][1], 1) < 0)
      return -1;
    memset(src.data, shapes[k][3], gpuimg_image_bytes(src.width, src.height, src.channels));
    memset(mask.data, 200, gpuimg_image_bytes(src.width, src.height, 1));
    int rc = run_registry(ctx, &src, &mask, CASES_ALL);
    gpuimg_image_free(&src);
    gpuimg_image_free(&mask);
    if (rc < 0)
      return -1;
  }
  return 0;
}

/* gray -> blur on the device equals the CPU pipeline (the intermediate stays on the GPU). */
static int run_pipeline(gpuimg_cuda_t *ctx)
{
  int w = 333, h = 211;
  gpuimg_image_t src, g, ref;
  gpuimg_launch_t info;
  if (gpuimg_image_alloc(&src, w, h, 4) < 0 || gpuimg_image_alloc(&g, w, h, 2) < 0 ||
      gpuimg_image_alloc(&ref, w, h, 2) < 0)
    return -1;
  fill_random(src.data, gpuimg_image_bytes(w, h, 4));
  gpuimg_gray_cpu(&src, &g);
  gpuimg_blur_cpu(&g, 7, &ref);
  uint8_t *d_a = gpuimg_cuda_dev_alloc(gpuimg_image_bytes(w, h, 4));
  uint8_t *d_b = gpuimg_cuda_dev_alloc(gpuimg_image_bytes(w, h, 4));
  if (!d_a || !d_b ||
      gpuimg_cuda_upload(ctx, d_a, src.data, gpuimg_image_bytes(w, h, 4), NULL) < 0 ||
      gpuimg_gray_gpu(ctx, d_a, d_b, w, h, 4, GPUIMG_VARIANT_FAST, &info) < 0 ||
      gpuimg_blur_gpu(ctx, d_b, d_a, w, h, 2, 7, GPUIMG_VARIANT_TILED, GPUIMG_TILE_U8, &info) < 0 ||
      gpuimg_cuda_download(ctx, g.data, d_a, gpuimg_image_bytes(w, h, 2), NULL) < 0) {
    printf("ERROR pipeline: %s\n", gpuimg_error_message());
    return -1;
  }
  checks++;
  if (memcmp(g.data, ref.data, gpuimg_image_bytes(w, h, 2)) != 0) {
    printf("FAIL pipeline gray -> blur -r 7 --tiled\n");
    failures++;
  }
  gpuimg_cuda_dev_free(d_a);
  gpuimg_cuda_dev_free(d_b);
  gpuimg_image_free(&src);
  gpuimg_image_free(&g);
  gpuimg_image_free(&ref);
  return 0;
}

/* The fast blur's banded two-pass path on a wide image: several bands of rows, radii whose
 * halo reaches the band ends (an 8K-wide r = 64 blur once read past its row-sum buffer). */
static int run_bands(gpuimg_cuda_t *ctx)
{
  static const int radii[] = {64, 40, 17, 100};
  gpuimg_image_t src, mask;
  values_t p;
  int w = 7680, h = 1500;
  if (gpuimg_image_alloc(&src, w, h, 3) < 0 || gpuimg_image_alloc(&mask, w, h, 1) < 0)
    return -1;
  fill_random(src.data, gpuimg_image_bytes(w, h, 3));
  fill_random(mask.data, (size_t)w * h);
  memset(&p, 0, sizeof p);
  for (int k = 0; k < 4; k++) {
    char label[64];
    p.radius = radii[k];
    p.variant = GPUIMG_VARIANT_FAST;
    snprintf(label, sizeof label, "fast bands r=%d", p.radius);
    if (compare(ctx, "blur", &p, &src, NULL, label) < 0 ||
        (k == 0 && compare(ctx, "portrait", &p, &src, &mask, label) < 0))
      return -1;
  }
  gpuimg_image_free(&src);
  gpuimg_image_free(&mask);
  return 0;
}

/* Each design of the fast blur (GPUIMG_FAST_BLUR: the fused single pass, the strip kernel,
 * the two passes, the chunk kernel at 2 and 3 blocks per SM, the pair kernel at 3, 2 and 4,
 * pair2 with runs of 3 rows: odd runs, a set-up every 3 rows, from the window sums computed
 * ahead (GPUIMG_BLUR_AHEAD: up to 170 segments a window), pair4 without them, pair at its own
 * choice) on multi-block widths, every
 * layout, radii up to the fused and chunk kernels' limit; the widths of a multiple of 8 pixels
 * are the chunk and pair kernels' (the others fall back to the two passes under chunk2,
 * chunk3 and pair*), down to 8 pixels wide and 1 row high; with quick, one radius set on
 * smaller images (for the sanitizers). */
static int run_impls(gpuimg_cuda_t *ctx, int quick)
{
  static const char *impls[] = {"fused",  "strip", "twopass", "chunk2",
                                "chunk3", "pair",  "pair2",   "pair4"};
  static const int radii[] = {1, 3, 16, 33, 64, 127};
  static const int shapes[][3] = {{2400, 97, 3}, {1001, 77, 4}, {1500, 301, 3}, {640, 480, 1},
                                  {333, 200, 2}, {1998, 65, 2}, {700, 120, 3},  {1608, 61, 4},
                                  {2056, 50, 1}, {1000, 40, 2}, {8, 1, 4},      {16, 2, 1},
                                  {24, 3, 2}};
  int nshapes = quick ? 2 : 13, nradii = quick ? 3 : 6;
  for (int i = 0; i < nshapes; i++) {
    int w = shapes[i][0] / (quick ? 3 : 1), h = shapes[i][1] / (quick ? 4 : 1), c = shapes[i][2];
    gpuimg_image_t src, mask;
    if (gpuimg_image_alloc(&src, w, h, c) < 0 || gpuimg_image_alloc(&mask, w, h, 1) < 0)
      return -1;
    fill_random(src.data, gpuimg_image_bytes(w, h, c));
    fill_random(mask.data, (size_t)w * h);
    for (size_t m = 0; m < sizeof impls / sizeof impls[0]; m++) {
      setenv("GPUIMG_FAST_BLUR", impls[m], 1);
      if (strcmp(impls[m], "pair2") == 0)
        setenv("GPUIMG_PAIR_ROWS", "3", 1);
      else
        unsetenv("GPUIMG_PAIR_ROWS");
      if (strncmp(impls[m], "pair", 4) == 0 && impls[m][4]) /* pair: its own choice */
        setenv("GPUIMG_BLUR_AHEAD", impls[m][4] == '2' ? "1" : "0", 1);
      else
        unsetenv("GPUIMG_BLUR_AHEAD");
      for (int k = 0; k < nradii; k++) {
        values_t p;
        char label[96];
        memset(&p, 0, sizeof p);
        p.radius = radii[quick ? 2 * k : k];
        p.variant = GPUIMG_VARIANT_FAST;
        snprintf(label, sizeof label, "fast %s %dx%dx%d r=%d", impls[m], w, h, c, p.radius);
        if (compare(ctx, "blur", &p, &src, NULL, label) < 0 ||
            (k % 2 == 0 && compare(ctx, "portrait", &p, &src, &mask, label) < 0))
          return -1;
      }
    }
    unsetenv("GPUIMG_FAST_BLUR");
    unsetenv("GPUIMG_PAIR_ROWS");
    unsetenv("GPUIMG_BLUR_AHEAD");
    gpuimg_image_free(&src);
    gpuimg_image_free(&mask);
  }
  return 0;
}

/* Device-counted divergent warps equal the host prediction: checkerboard cells 1, 2, 8,
 * 32 and a portrait mask, with the default block and an odd one. */
static int run_divergence(gpuimg_cuda_t *ctx)
{
  int w = 1024, h = 768;
  gpuimg_image_t src, dst, mask;
  gpuimg_launch_t info;
  if (gpuimg_image_alloc(&src, w, h, 3) < 0 || gpuimg_image_alloc(&mask, w, h, 1) < 0 ||
      gpuimg_image_alloc(&dst, w, h, 3) < 0)
    return -1;
  fill_random(src.data, gpuimg_image_bytes(w, h, 3));
  for (int y = 0; y < h; y++) /* an ellipse: only the warps on its outline diverge */
    for (int x = 0; x < w; x++) {
      double dx = (x - 500.0) / 300.0, dy = (y - 400.0) / 250.0;
      mask.data[(size_t)y * w + x] = dx * dx + dy * dy <= 1.0 ? 255 : 0;
    }
  uint8_t *d_src = gpuimg_cuda_dev_alloc(gpuimg_image_bytes(w, h, 3));
  uint8_t *d_dst = gpuimg_cuda_dev_alloc(gpuimg_image_bytes(w, h, 3));
  uint8_t *d_mask = gpuimg_cuda_dev_alloc((size_t)w * h);
  if (!d_src || !d_dst || !d_mask ||
      gpuimg_cuda_upload(ctx, d_src, src.data, gpuimg_image_bytes(w, h, 3), NULL) < 0 ||
      gpuimg_cuda_upload(ctx, d_mask, mask.data, (size_t)w * h, NULL) < 0)
    return -1;
  gpuimg_cuda_set_count_divergence(ctx, 1);
  static const int blocks[][2] = {{0, 0}, {16, 16}, {24, 5}};
  for (int b = 0; b < 3; b++) {
    if (set_block(ctx, blocks[b][0], blocks[b][1]) < 0)
      return -1;
    static const int cells[] = {1, 2, 8, 32};
    for (int k = 0; k < 5; k++) {
      uint64_t warps, div;
      memset(&info, 0, sizeof info);
      if (k < 4) {
        if (gpuimg_checkerboard_gpu(ctx, d_src, d_dst, w, h, 3, cells[k], 10, GPUIMG_VARIANT_NAIVE,
                                    &info) < 0)
          return -1;
        gpuimg_divergence_checkerboard(w, h, cells[k], (int)info.block[0], (int)info.block[1],
                                       &warps, &div, NULL);
      } else {
        if (gpuimg_portrait_gpu(ctx, d_src, d_mask, d_dst, w, h, 3, 2, GPUIMG_VARIANT_TILED,
                                GPUIMG_TILE_U8, &info) < 0)
          return -1;
        gpuimg_divergence_mask(&mask, (int)info.block[0], (int)info.block[1], &warps, &div, NULL);
      }
      checks++;
      printf("divergence %s block %ux%u: device %llu of %llu warps, host %llu of %llu\n",
             k < 4 ? "checkerboard" : "portrait", info.block[0], info.block[1],
             info.divergent_warps, info.warps, (unsigned long long)div, (unsigned long long)warps);
      if (!info.has_divergence || info.warps != warps || info.divergent_warps != div) {
        printf("FAIL divergence count differs from the prediction\n");
        failures++;
      }
    }
  }
  gpuimg_cuda_set_count_divergence(ctx, 0);
  set_block(ctx, 0, 0);
  gpuimg_cuda_dev_free(d_src);
  gpuimg_cuda_dev_free(d_dst);
  gpuimg_cuda_dev_free(d_mask);
  gpuimg_image_free(&src);
  gpuimg_image_free(&dst);
  gpuimg_image_free(&mask);
  return 0;
}

/* The run's summary: the cases each operation of the registry had, the comparisons and the
 * failures; the exit status (1 where rc < 0 or any comparison failed). */
static int finish(gpuimg_cuda_t *ctx, int rc)
{
  gpuimg_cuda_destroy(ctx);
  for (int i = 0; gpuimg_ops[i] && i < 64; i++)
    printf("registry: %s: %d cases%s\n", gpuimg_ops[i]->name, registry_cases[i],
           registry_cases[i] ? "" : " (it needs options of its own: compared above)");
  printf("%d comparisons, %d failures\n", checks, failures);
  return rc < 0 || failures ? 1 : 0;
}

int main(int argc, char **argv)
{
  char reason[256];
  int huge = argc > 1 && strcmp(argv[1], "--huge") == 0;
  int quick = argc > 1 && strcmp(argv[1], "--quick") == 0; /* for the sanitizers */
  if (gpuimg_cuda_probe(reason, sizeof reason) <= 0) {
    printf("SKIP: no usable CUDA device: %s\n", reason);
    return 77;
  }
  gpuimg_cuda_t *ctx = gpuimg_cuda_create(-1);
  if (!ctx) {
    printf("ERROR: %s\n", gpuimg_error_message());
    return 1;
  }
  setvbuf(stdout, NULL, _IOLBF, 0); /* each line in the log, even if it is stopped */
  printf("device: %s\n", gpuimg_cuda_device_name(ctx));
  if (huge) { /* only the image over 2^31 bytes (23200 x 23200 x 4): the suite has the rest */
    verbose = 1;
    if (argc > 2)
      only_ops = argv + 2; /* argv[argc] is NULL */
    for (char **o = only_ops; o && *o; o++)
      if (!gpuimg_ops_find(*o)) {
        printf("ERROR --huge %s: no such operation\n", *o);
        return finish(ctx, -1);
      }
    pool_threads = gpuimg_cpu_cores();
    if (!(pool = gpuimg_pool_create(pool_threads)))
      return finish(ctx, -1);
    int rc = run_size(ctx, 23200, 23200, 2);
    gpuimg_pool_free(pool);
    return finish(ctx, rc);
  }
  static const int sizes[][2] = {{1, 1}, {1, 7}, {7, 1}, {33, 17}, {200, 150}, {1024, 768}};
  size_t nsizes = sizeof sizes / sizeof sizes[0] - (quick ? 1 : 0);
  for (size_t i = 0; i < nsizes; i++)
    if (run_size(ctx, sizes[i][0], sizes[i][1], 0) < 0)
      return 1;
  /* A non-default block shape for the 2-D kernels. */
  if (set_block(ctx, 8, 32) < 0 || run_size(ctx, 45, 29, 0) < 0 || set_block(ctx, 0, 0) < 0)
    return 1;
  if ((!quick && run_size(ctx, 4000, 3000, 1) < 0) || run_flat(ctx) < 0 || run_pipeline(ctx) < 0 ||
      run_divergence(ctx) < 0 || run_sides(ctx) < 0 || run_impls(ctx, quick) < 0 ||
      (!quick && run_bands(ctx) < 0) || run_resize_extremes(ctx) < 0)
    return 1;
  return finish(ctx, 0);
}
