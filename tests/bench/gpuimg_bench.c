/* gpuimg_bench.c: times the CUDA kernels (and NPP, if built in) against the copy bandwidth. */

/* What it measures, per image size (RGB8, deterministic noise with no zero bytes):
 *
 *   upload, download          pinned host <-> device, gpuimg_cuda_upload/_download
 *   gray-roundtrip            upload + gray + download as a caller sees it (host clock)
 *   gray                      RGB -> 1 channel
 *   checkerboard fast, naive  cell 1, amount 64
 *   blur fast, tiled, naive   every radius of --radii
 *   portrait fast, tiled      radius 16, an elliptic subject mask
 *   npp gray, npp blur        nppiRGBToGray_8u_C3C1R_Ctx, nppiFilterBoxBorder_8u_C3R_Ctx
 *                             (GPUIMG_HAVE_NPP builds only)
 *
 * Each configuration runs --warmup times (the first run is the probe: it decides whether the
 * configuration is too slow to time), then --runs times; every run is timed with CUDA events
 * (the launchers' own gpuimg_launch_t.ms) and the report keeps the median and the minimum.
 * "bytes" is the least traffic the operation needs (input read once, output written once,
 * plus the mask), so GB/s is an effective rate, comparable with the device-to-device copy
 * measured first (a cudaMemcpy of --copy-mib MiB, read + write counted), which gives
 * "% of copy". On the first size, 1024x768 unless --sizes says otherwise, every gpuimg
 * configuration is checked once, byte for byte, against the CPU reference; NPP's outputs
 * are only compared for information (NPP rounds differently).
 *
 * Configurations whose cost grows with r^2 (naive and tiled blur, NPP's box filter) are
 * skipped when a run is predicted, from the cost W*H*(2r+1)^2 and the last run measured,
 * to take longer than --max-run-ms, or when the probe run does; the whole program stops
 * timing new configurations after --budget-s seconds. Skips are reported, never silent.
 *
 * Output: one JSON object per line to --json (device, copy, result..., summary), read by
 * scripts/bench-plot.py; a markdown table per size on stdout; progress on stderr.
 * Exit status: 0, 1 when a check failed or a CUDA call did, 2 on misuse, 77 without a device.
 *
 * This is a benchmark, so unlike src/ it calls the CUDA runtime directly (copy bandwidth,
 * NPP's stream); those calls resolve to the cudart that nvcc links for the kernels. */
#define _POSIX_C_SOURCE 200809L

#include <cJSON.h>
#include <cuda_runtime.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if GPUIMG_HAVE_NPP
#include <npp.h>
#if defined(__has_include)
#if __has_include(<nppversion.h>)
#include <nppversion.h>
#endif
#endif
#endif

#include "blur.h"
#include "checkerboard.h"
#include "cuda_context.h"
#include "gray.h"
#include "portrait.h"
#include "blur_cpu.h"
#include "checkerboard_cpu.h"
#include "gray_cpu.h"
#include "ops.h"
#include "portrait_cpu.h"

#define BENCH_NAME "gpuimg_bench"
#define MAX_SIZES 8
#define MAX_RADII 16
#define MAX_RESULTS 1024
#define CHECKER_CELL 1
#define CHECKER_AMOUNT 64
#define PORTRAIT_RADIUS 16

/* Options, with their defaults in options_default(). */
typedef struct {
  int sizes[MAX_SIZES][2];
  int nsizes;
  int radii[MAX_RADII];
  int nradii;
  int runs, warmup;
  double max_run_ms; /* skip a configuration whose single run takes longer */
  double budget_s;   /* stop timing new configurations after this long */
  int copy_mib;
  int use_npp;
  const char *json_path;
} options_t;

typedef enum {
  CASE_UPLOAD,
  CASE_DOWNLOAD,
  CASE_ROUNDTRIP,
  CASE_GRAY,
  CASE_CHECKER,
  CASE_BLUR,
  CASE_PORTRAIT,
  CASE_NPP_GRAY,
  CASE_NPP_BLUR,
  CASE_KINDS
} case_kind_t;

/* One configuration to time. */
typedef struct {
  case_kind_t kind;
  gpuimg_variant_t variant; /* gpuimg kernels only */
  int radius;               /* -1: the operation has none */
} bench_case_t;

/* The buffers of one image size. h_* are pinned. */
typedef struct {
  int w, h;
  int check; /* compare with the CPU reference on this size */
  uint8_t *h_src, *h_out, *h_mask;
  uint8_t *d_src, *d_dst, *d_mask;
  /* Cost model per kind and variant: ms per unit of W*H*(2r+1)^2, from the last run measured. */
  double ms_per_cost[CASE_KINDS][3];
  int too_slow_from[CASE_KINDS][3]; /* radius whose probe exceeded the limit, or INT_MAX */
} size_state_t;

/* One row of the report. */
typedef struct {
  case_kind_t kind;
  const char *op, *variant, *impl;
  int w, h, radius;
  double ms, ms_min, events_ms; /* events_ms: gray-roundtrip's sum of event times */
  double bytes, gbps, pct_copy;
  const char *kernel;
  int launches;
  const char *check; /* "pass", "FAIL", "info", "" when not checked */
  long long diff_bytes;
  int max_diff;
  char skipped[160]; /* empty when timed */
} result_t;

typedef struct {
  options_t opt;
  gpuimg_cuda_t *ctx;
  size_state_t sizes[MAX_SIZES];
  result_t results[MAX_RESULTS];
  int nresults;
  double copy_gbps;
  int failures;
  double t0;
  FILE *json;
  float *samples, *samples2; /* runs floats each */
  cudaStream_t stream;       /* ours: the copy measurement and NPP */
  cudaEvent_t ev_start, ev_stop;
  int npp; /* NPP usable in this run */
#if GPUIMG_HAVE_NPP
  NppStreamContext npp_ctx;
#endif
} bench_t;

/* ---- small helpers ---------------------------------------------------------------------- */

static void progress(const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, BENCH_NAME ": ");
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

/* A failed CUDA runtime call becomes a gpuimg error naming the call and line. */
static int cuda_ok(cudaError_t err, const char *call, int line)
{
  if (err == cudaSuccess)
    return 0;
  gpuimg_error_set(GPUIMG_EXIT_DEVICE, "cuda", "%s failed (gpuimg_bench.c:%d): %s", call, line,
                   cudaGetErrorString(err));
  return -1;
}
#define CUDA_OK(call) cuda_ok((call), #call, __LINE__)

static int cmp_float(const void *a, const void *b)
{
  float x = *(const float *)a, y = *(const float *)b;
  return (x > y) - (x < y);
}

/* Median of n samples (sorts them in place). */
static double median(float *v, int n)
{
  qsort(v, (size_t)n, sizeof *v, cmp_float);
  return n % 2 ? v[n / 2] : 0.5 * ((double)v[n / 2 - 1] + v[n / 2]);
}

/* Deterministic noise, bytes 1..255: a zero-filled image could flatter a kernel (zeros can
 * take shortcuts in hardware and hide indexing bugs in a comparison). splitmix64 per 8 bytes. */
static void fill_noise(uint8_t *p, size_t n, uint64_t seed)
{
  uint64_t s = seed;
  for (size_t i = 0; i < n; i += 8) {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    for (size_t k = 0; k < 8 && i + k < n; k++) {
      uint8_t v = (uint8_t)(z >> (8 * k));
      p[i + k] = v ? v : 1;
    }
  }
}

/* The portrait subject: an ellipse in the middle (255 inside, 0 outside). */
static void fill_ellipse(uint8_t *m, int w, int h)
{
  double cx = 0.5 * w, cy = 0.5 * h, ax = 0.3 * w, ay = 0.4 * h;
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      double dx = (x + 0.5 - cx) / ax, dy = (y + 0.5 - cy) / ay;
      m[(size_t)y * w + x] = dx * dx + dy * dy <= 1.0 ? 255 : 0;
    }
}

static double elapsed_s(const bench_t *b)
{
  return (gpuimg_now_ms() - b->t0) / 1e3;
}

/* ---- cases ------------------------------------------------------------------------------ */

static const char *case_op(case_kind_t k)
{
  switch (k) {
  case CASE_UPLOAD:
    return "upload";
  case CASE_DOWNLOAD:
    return "download";
  case CASE_ROUNDTRIP:
    return "gray-roundtrip";
  case CASE_GRAY:
  case CASE_NPP_GRAY:
    return "gray";
  case CASE_CHECKER:
    return "checkerboard";
  case CASE_BLUR:
  case CASE_NPP_BLUR:
    return "blur";
  case CASE_PORTRAIT:
    return "portrait";
  default:
    return "?";
  }
}

static int case_is_npp(case_kind_t k)
{
  return k == CASE_NPP_GRAY || k == CASE_NPP_BLUR;
}

static const char *case_variant(const bench_case_t *c)
{
  if (case_is_npp(c->kind))
    return "npp";
  if (c->kind == CASE_UPLOAD || c->kind == CASE_DOWNLOAD)
    return "pinned";
  if (c->kind == CASE_GRAY || c->kind == CASE_ROUNDTRIP)
    return "fast";
  return gpuimg_variant_name(c->variant);
}

static int out_channels(case_kind_t k)
{
  return k == CASE_GRAY || k == CASE_ROUNDTRIP || k == CASE_NPP_GRAY ? 1 : 3;
}

/* The least traffic the operation needs: input once, output once, plus the mask. */
static double case_bytes(const bench_case_t *c, int w, int h)
{
  double px = (double)w * h;
  switch (c->kind) {
  case CASE_UPLOAD:
  case CASE_DOWNLOAD:
    return 3 * px;
  case CASE_PORTRAIT:
    return 3 * px + 3 * px + px;
  default:
    return 3 * px + out_channels(c->kind) * px;
  }
}

/* Cost grows with (2r+1)^2 per pixel: these are predicted and may be skipped. */
static int case_quadratic(const bench_case_t *c)
{
  if (c->kind == CASE_NPP_BLUR)
    return 1;
  return (c->kind == CASE_BLUR || c->kind == CASE_PORTRAIT) &&
         (c->variant == GPUIMG_VARIANT_NAIVE || c->variant == GPUIMG_VARIANT_TILED);
}

static double case_cost(const bench_case_t *c, int w, int h)
{
  double k = 2.0 * (c->radius > 0 ? c->radius : 0) + 1;
  return (double)w * h * k * k;
}

/* ---- NPP -------------------------------------------------------------------------------- */

#if GPUIMG_HAVE_NPP
/* NPP 13 has only the _Ctx functions and no nppGetStreamContext (deprecated in 12.9): the
 * context is filled in from the device's properties, as nppdefs.h documents field by field. */
static int npp_context_init(bench_t *b)
{
  NppStreamContext *nc = &b->npp_ctx;
  struct cudaDeviceProp prop;
  int dev = 0;
  unsigned flags = 0;
  memset(nc, 0, sizeof *nc);
  if (CUDA_OK(cudaGetDevice(&dev)) < 0 || CUDA_OK(cudaGetDeviceProperties(&prop, dev)) < 0 ||
      CUDA_OK(cudaStreamGetFlags(b->stream, &flags)) < 0)
    return -1;
  nc->hStream = b->stream;
  nc->nCudaDeviceId = dev;
  nc->nMultiProcessorCount = prop.multiProcessorCount;
  nc->nMaxThreadsPerMultiProcessor = prop.maxThreadsPerMultiProcessor;
  nc->nMaxThreadsPerBlock = prop.maxThreadsPerBlock;
  nc->nSharedMemPerBlock = prop.sharedMemPerBlock;
  nc->nCudaDevAttrComputeCapabilityMajor = prop.major;
  nc->nCudaDevAttrComputeCapabilityMinor = prop.minor;
  nc->nStreamFlags = flags;
  return 0;
}

static int npp_run(bench_t *b, const size_state_t *s, const bench_case_t *c)
{
  NppiSize roi = {s->w, s->h};
  NppStatus st;
  if (c->kind == CASE_NPP_GRAY) {
    st = nppiRGBToGray_8u_C3C1R_Ctx(s->d_src, 3 * s->w, s->d_dst, s->w, roi, b->npp_ctx);
  } else {
    NppiSize mask = {2 * c->radius + 1, 2 * c->radius + 1};
    NppiPoint offset = {0, 0}, anchor = {c->radius, c->radius};
    st = nppiFilterBoxBorder_8u_C3R_Ctx(s->d_src, 3 * s->w, roi, offset, s->d_dst, 3 * s->w, roi,
                                        mask, anchor, NPP_BORDER_REPLICATE, b->npp_ctx);
  }
  if (st < 0) { /* > 0 are warnings */
    gpuimg_error_set(GPUIMG_EXIT_DEVICE, "npp", "%s returned NppStatus %d",
                     c->kind == CASE_NPP_GRAY ? "nppiRGBToGray_8u_C3C1R_Ctx"
                                              : "nppiFilterBoxBorder_8u_C3R_Ctx",
                     (int)st);
    return -1;
  }
  return CUDA_OK(cudaGetLastError());
}
#endif

/* ---- one run ---------------------------------------------------------------------------- */

/* Runs c once; *ms is its event time (gray-roundtrip: the host clock, *ms2 the events' sum). */
static int run_once(bench_t *b, size_state_t *s, const bench_case_t *c, float *ms, float *ms2,
                    gpuimg_launch_t *info)
{
  size_t in_bytes = (size_t)s->w * s->h * 3;
  memset(info, 0, sizeof *info);
  *ms2 = 0;
  switch (c->kind) {
  case CASE_UPLOAD:
    return gpuimg_cuda_upload(b->ctx, s->d_dst, s->h_src, in_bytes, ms);
  case CASE_DOWNLOAD:
    return gpuimg_cuda_download(b->ctx, s->h_out, s->d_dst, in_bytes, ms);
  case CASE_ROUNDTRIP: {
    float up = 0, down = 0;
    double t = gpuimg_now_ms();
    if (gpuimg_cuda_upload(b->ctx, s->d_src, s->h_src, in_bytes, &up) < 0 ||
        gpuimg_gray_gpu(b->ctx, s->d_src, s->d_dst, s->w, s->h, 3, GPUIMG_VARIANT_FAST, info) < 0 ||
        gpuimg_cuda_download(b->ctx, s->h_out, s->d_dst, (size_t)s->w * s->h, &down) < 0)
      return -1;
    *ms = (float)(gpuimg_now_ms() - t);
    *ms2 = up + info->ms + down;
    return 0;
  }
  case CASE_GRAY:
    if (gpuimg_gray_gpu(b->ctx, s->d_src, s->d_dst, s->w, s->h, 3, GPUIMG_VARIANT_FAST, info) < 0)
      return -1;
    break;
  case CASE_CHECKER:
    if (gpuimg_checkerboard_gpu(b->ctx, s->d_src, s->d_dst, s->w, s->h, 3, CHECKER_CELL,
                                CHECKER_AMOUNT, c->variant, info) < 0)
      return -1;
    break;
  case CASE_BLUR:
    if (gpuimg_blur_gpu(b->ctx, s->d_src, s->d_dst, s->w, s->h, 3, c->radius, c->variant,
                        GPUIMG_TILE_U8, info) < 0)
      return -1;
    break;
  case CASE_PORTRAIT:
    if (gpuimg_portrait_gpu(b->ctx, s->d_src, s->d_mask, s->d_dst, s->w, s->h, 3, c->radius,
                            c->variant, GPUIMG_TILE_U8, info) < 0)
      return -1;
    break;
  case CASE_NPP_GRAY:
  case CASE_NPP_BLUR:
#if GPUIMG_HAVE_NPP
    if (CUDA_OK(cudaEventRecord(b->ev_start, b->stream)) < 0 || npp_run(b, s, c) < 0 ||
        CUDA_OK(cudaEventRecord(b->ev_stop, b->stream)) < 0 ||
        CUDA_OK(cudaEventSynchronize(b->ev_stop)) < 0 ||
        CUDA_OK(cudaEventElapsedTime(&info->ms, b->ev_start, b->ev_stop)) < 0)
      return -1;
    info->kernel =
        c->kind == CASE_NPP_GRAY ? "nppiRGBToGray_8u_C3C1R_Ctx" : "nppiFilterBoxBorder_8u_C3R_Ctx";
    break;
#else
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, "npp", "built without NPP");
    return -1;
#endif
  default:
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, "bench", "unknown case %d", (int)c->kind);
    return -1;
  }
  *ms = info->ms;
  return 0;
}

/* ---- correctness ------------------------------------------------------------------------ */

/* Before the checked run: the device output is filled with 0xA5, so a byte the kernel never
 * writes cannot pass; download instead gets the source image to bring back. cudaMemset and
 * cudaMemcpy run on the legacy stream, which does not order the context's non-blocking
 * stream: wait for them. */
static int prepare_check(const size_state_t *s, const bench_case_t *c)
{
  size_t n = (size_t)s->w * s->h * 3;
  cudaError_t err = c->kind == CASE_DOWNLOAD
                        ? cudaMemcpy(s->d_dst, s->d_src, n, cudaMemcpyDeviceToDevice)
                        : cudaMemset(s->d_dst, 0xA5, n);
  if (CUDA_OK(err) < 0 || CUDA_OK(cudaDeviceSynchronize()) < 0)
    return -1;
  return 0;
}

/* The CPU reference of c into ref (allocated by the caller, out_channels(c) channels). */
static int reference(const size_state_t *s, const bench_case_t *c, gpuimg_image_t *ref)
{
  gpuimg_image_t src = {.width = s->w, .height = s->h, .channels = 3, .data = s->h_src};
  gpuimg_image_t mask = {.width = s->w, .height = s->h, .channels = 1, .data = s->h_mask};
  switch (c->kind) {
  case CASE_GRAY:
  case CASE_ROUNDTRIP:
  case CASE_NPP_GRAY:
    return gpuimg_gray_cpu(&src, ref);
  case CASE_CHECKER:
    return gpuimg_checkerboard_cpu(&src, CHECKER_CELL, CHECKER_AMOUNT, ref);
  case CASE_BLUR:
  case CASE_NPP_BLUR:
    return gpuimg_blur_cpu(&src, c->radius, ref);
  case CASE_PORTRAIT:
    return gpuimg_portrait_cpu(&src, &mask, c->radius, ref);
  case CASE_UPLOAD:
  case CASE_DOWNLOAD:
    memcpy(ref->data, s->h_src, (size_t)s->w * s->h * 3); /* the bytes must come back */
    return 0;
  default:
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, "bench", "no reference for case %d", (int)c->kind);
    return -1;
  }
}

/* Compares the device output of the run just made with the CPU reference. */
static int check(bench_t *b, size_state_t *s, const bench_case_t *c, result_t *r)
{
  int oc = out_channels(c->kind);
  size_t n = (size_t)s->w * s->h * oc;
  gpuimg_image_t ref;
  if (gpuimg_image_alloc(&ref, s->w, s->h, oc) < 0)
    return -1;
  /* download and gray-roundtrip left their output in h_out; the others in d_dst. */
  int rc = reference(s, c, &ref);
  if (rc == 0 && c->kind != CASE_DOWNLOAD && c->kind != CASE_ROUNDTRIP)
    rc = gpuimg_cuda_download(b->ctx, s->h_out, s->d_dst, n, NULL);
  if (rc < 0) {
    gpuimg_image_free(&ref);
    return -1;
  }
  long long diff = 0;
  int max_diff = 0;
  size_t first = n;
  for (size_t i = 0; i < n; i++) {
    int d = abs((int)s->h_out[i] - (int)ref.data[i]);
    if (d) {
      if (first == n)
        first = i;
      diff++;
      if (d > max_diff)
        max_diff = d;
    }
  }
  r->diff_bytes = diff;
  r->max_diff = max_diff;
  if (case_is_npp(c->kind)) {
    r->check = "info";
  } else if (diff == 0) {
    r->check = "pass";
  } else {
    size_t px = first / (size_t)oc;
    r->check = "FAIL";
    b->failures++;
    printf("FAIL %s %s r=%d %dx%d: %lld bytes differ, first at x=%zu y=%zu ch=%zu: gpu %u cpu "
           "%u\n",
           r->op, r->variant, c->radius, s->w, s->h, diff, px % (size_t)s->w, px / (size_t)s->w,
           first % (size_t)oc, s->h_out[first], ref.data[first]);
  }
  gpuimg_image_free(&ref);
  return 0;
}

/* ---- measuring -------------------------------------------------------------------------- */

static void json_result(bench_t *b, const result_t *r)
{
  cJSON *o = cJSON_CreateObject();
  if (!o)
    return;
  cJSON_AddStringToObject(o, "type", "result");
  cJSON_AddStringToObject(o, "op", r->op);
  cJSON_AddStringToObject(o, "variant", r->variant);
  cJSON_AddStringToObject(o, "impl", r->impl);
  cJSON_AddNumberToObject(o, "width", r->w);
  cJSON_AddNumberToObject(o, "height", r->h);
  cJSON_AddNumberToObject(o, "channels", 3);
  if (r->radius >= 0)
    cJSON_AddNumberToObject(o, "radius", r->radius);
  else
    cJSON_AddNullToObject(o, "radius");
  cJSON_AddNumberToObject(o, "bytes", r->bytes);
  if (r->skipped[0]) {
    cJSON_AddStringToObject(o, "skipped", r->skipped);
  } else {
    cJSON_AddNumberToObject(o, "warmup", b->opt.warmup);
    cJSON_AddNumberToObject(o, "runs", b->opt.runs);
    cJSON_AddNumberToObject(o, "ms", r->ms);
    cJSON_AddNumberToObject(o, "ms_min", r->ms_min);
    if (r->kind == CASE_ROUNDTRIP) {
      cJSON_AddStringToObject(o, "clock", "host");
      cJSON_AddNumberToObject(o, "events_ms", r->events_ms);
    } else {
      cJSON_AddStringToObject(o, "clock", "events");
    }
    cJSON_AddNumberToObject(o, "gbps", r->gbps);
    cJSON_AddNumberToObject(o, "pct_copy", r->pct_copy);
    cJSON_AddStringToObject(o, "kernel", r->kernel ? r->kernel : "");
    cJSON_AddNumberToObject(o, "launches", r->launches);
  }
  if (r->check[0]) {
    cJSON_AddStringToObject(o, "check", r->check);
    cJSON_AddNumberToObject(o, "diff_bytes", (double)r->diff_bytes);
    cJSON_AddNumberToObject(o, "max_diff", r->max_diff);
  }
  char *text = cJSON_PrintUnformatted(o);
  if (text) {
    fprintf(b->json, "%s\n", text);
    fflush(b->json);
    cJSON_free(text);
  }
  cJSON_Delete(o);
}

static void skip(result_t *r, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(r->skipped, sizeof r->skipped, fmt, ap);
  va_end(ap);
}

/* Records the error in r's row. A gpuimg error is a failure of the run; an NPP error (a mask
 * size it refuses, say) is only reported: NPP is the yardstick, not the subject. */
static int run_failed(bench_t *b, result_t *r, const char *where)
{
  skip(r, "error: %s", gpuimg_error_message());
  if (strcmp(r->impl, "npp") != 0)
    b->failures++;
  progress("%s %s", where, r->skipped);
  json_result(b, r);
  return 0;
}

/* Times one configuration and appends its row. A failure of the operation is recorded in
 * the row and counted; -1 only when the report itself cannot go on. */
static int measure(bench_t *b, size_state_t *s, const bench_case_t *c)
{
  if (b->nresults == MAX_RESULTS) {
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, "bench", "more than %d results", MAX_RESULTS);
    return -1;
  }
  result_t *r = &b->results[b->nresults++];
  memset(r, 0, sizeof *r);
  r->kind = c->kind;
  r->op = case_op(c->kind);
  r->variant = case_variant(c);
  r->impl = case_is_npp(c->kind) ? "npp" : "gpuimg";
  r->w = s->w;
  r->h = s->h;
  r->radius = c->radius;
  r->bytes = case_bytes(c, s->w, s->h);
  r->check = "";
  int vi = case_is_npp(c->kind) ? 0 : (int)c->variant;
  double cost = case_cost(c, s->w, s->h);
  char where[96], rlabel[16] = "";
  if (c->radius >= 0)
    snprintf(rlabel, sizeof rlabel, "r=%d", c->radius);
  snprintf(where, sizeof where, "%dx%d %-14s %-6s %-5s", s->w, s->h, r->op, r->variant, rlabel);

  if (elapsed_s(b) > b->opt.budget_s) {
    skip(r, "time budget of %g s spent", b->opt.budget_s);
  } else if (c->radius >= s->too_slow_from[c->kind][vi]) {
    skip(r, "r=%d already took over %g ms per run", s->too_slow_from[c->kind][vi],
         b->opt.max_run_ms);
  } else if (case_quadratic(c) && c->radius > 0 && s->ms_per_cost[c->kind][vi] > 0) {
    /* The model fits naive and tiled closely; NPP's algorithm is unknown, so only an
     * extreme prediction skips it without a probe. */
    double predicted = s->ms_per_cost[c->kind][vi] * cost;
    double factor = c->kind == CASE_NPP_BLUR ? 8.0 : 1.5;
    if (predicted > factor * b->opt.max_run_ms)
      skip(r, "predicted %.3g ms per run (W*H*(2r+1)^2 model)", predicted);
  }
  if (r->skipped[0]) {
    progress("%s skipped: %s", where, r->skipped);
    json_result(b, r);
    return 0;
  }

  gpuimg_launch_t info;
  float ms = 0, ms2 = 0;
  if ((s->check && prepare_check(s, c) < 0) || run_once(b, s, c, &ms, &ms2, &info) < 0 ||
      (s->check && check(b, s, c, r) < 0))
    return run_failed(b, r, where);
  if (case_quadratic(c) && c->radius > 0)
    s->ms_per_cost[c->kind][vi] = ms / cost;
  if (ms > b->opt.max_run_ms) {
    skip(r, "one run took %.3g ms (limit %g ms)", ms, b->opt.max_run_ms);
    if (c->radius >= 0)
      s->too_slow_from[c->kind][vi] = c->radius;
    progress("%s skipped: %s", where, r->skipped);
    json_result(b, r);
    return 0;
  }

  int total = b->opt.warmup - 1 + b->opt.runs; /* the probe was the first warm-up */
  if (total < b->opt.runs)
    total = b->opt.runs;
  for (int i = 0; i < total; i++) {
    if (run_once(b, s, c, &ms, &ms2, &info) < 0)
      return run_failed(b, r, where);
    int k = i - (total - b->opt.runs);
    if (k >= 0) {
      b->samples[k] = ms;
      b->samples2[k] = ms2;
    }
  }
  r->ms = median(b->samples, b->opt.runs);
  r->ms_min = b->samples[0]; /* sorted by median() */
  r->events_ms = median(b->samples2, b->opt.runs);
  r->gbps = r->ms > 0 ? r->bytes / (r->ms * 1e6) : 0;
  r->pct_copy = b->copy_gbps > 0 ? 100.0 * r->gbps / b->copy_gbps : 0;
  r->kernel = info.kernel;
  r->launches = info.launches;
  if (case_quadratic(c) && c->radius > 0)
    s->ms_per_cost[c->kind][vi] = r->ms / cost;
  progress("%s %10.4f ms %9.1f GB/s %5.1f%% %s", where, r->ms, r->gbps, r->pct_copy, r->check);
  json_result(b, r);
  return 0;
}

/* Device-to-device copy bandwidth: the roofline every kernel here is compared with. */
static int measure_copy(bench_t *b)
{
  size_t bytes = (size_t)b->opt.copy_mib << 20;
  void *d_a = NULL, *d_b = NULL;
  while (bytes >= ((size_t)64 << 20)) {
    if (cudaMalloc(&d_a, bytes) == cudaSuccess && cudaMalloc(&d_b, bytes) == cudaSuccess)
      break;
    cudaFree(d_a);
    d_a = NULL;
    (void)cudaGetLastError();
    bytes /= 2;
  }
  if (!d_a)
    return CUDA_OK(cudaErrorMemoryAllocation);
  int rc = -1;
  int total = b->opt.warmup + b->opt.runs;
  if (CUDA_OK(cudaMemset(d_a, 0x5A, bytes)) < 0 || CUDA_OK(cudaDeviceSynchronize()) < 0)
    goto done;
  for (int i = 0; i < total; i++) {
    float ms = 0;
    if (CUDA_OK(cudaEventRecord(b->ev_start, b->stream)) < 0 ||
        CUDA_OK(cudaMemcpyAsync(d_b, d_a, bytes, cudaMemcpyDeviceToDevice, b->stream)) < 0 ||
        CUDA_OK(cudaEventRecord(b->ev_stop, b->stream)) < 0 ||
        CUDA_OK(cudaEventSynchronize(b->ev_stop)) < 0 ||
        CUDA_OK(cudaEventElapsedTime(&ms, b->ev_start, b->ev_stop)) < 0)
      goto done;
    if (i >= b->opt.warmup)
      b->samples[i - b->opt.warmup] = ms;
  }
  double ms = median(b->samples, b->opt.runs), ms_min = b->samples[0];
  double moved = 2.0 * (double)bytes; /* read + write */
  b->copy_gbps = moved / (ms * 1e6);
  progress("device-to-device copy of %zu MiB: %.4f ms, %.1f GB/s (read + write)", bytes >> 20, ms,
           b->copy_gbps);
  cJSON *o = cJSON_CreateObject();
  if (o) {
    cJSON_AddStringToObject(o, "type", "copy");
    cJSON_AddNumberToObject(o, "buffer_bytes", (double)bytes);
    cJSON_AddNumberToObject(o, "bytes", moved);
    cJSON_AddNumberToObject(o, "warmup", b->opt.warmup);
    cJSON_AddNumberToObject(o, "runs", b->opt.runs);
    cJSON_AddNumberToObject(o, "ms", ms);
    cJSON_AddNumberToObject(o, "ms_min", ms_min);
    cJSON_AddNumberToObject(o, "gbps", b->copy_gbps);
    cJSON_AddNumberToObject(o, "gbps_max", moved / (ms_min * 1e6));
    char *text = cJSON_PrintUnformatted(o);
    if (text) {
      fprintf(b->json, "%s\n", text);
      cJSON_free(text);
    }
    cJSON_Delete(o);
  }
  rc = 0;
done:
  cudaFree(d_a);
  cudaFree(d_b);
  return rc;
}

static void json_device(bench_t *b)
{
  int major = 0, minor = 0, rt = 0, drv = 0, dev = 0;
  struct cudaDeviceProp prop;
  gpuimg_cuda_device_cc(b->ctx, &major, &minor);
  (void)cudaRuntimeGetVersion(&rt);
  (void)cudaDriverGetVersion(&drv);
  memset(&prop, 0, sizeof prop);
  if (cudaGetDevice(&dev) != cudaSuccess || cudaGetDeviceProperties(&prop, dev) != cudaSuccess)
    (void)cudaGetLastError();
  char cc[32], npp_version[32] = "";
  snprintf(cc, sizeof cc, "%d.%d", major, minor);
#if GPUIMG_HAVE_NPP && defined(NPP_VERSION_MAJOR) && defined(NPP_VERSION_MINOR) &&                 \
    defined(NPP_VERSION_BUILD)
  snprintf(npp_version, sizeof npp_version, "%d.%d.%d", NPP_VERSION_MAJOR, NPP_VERSION_MINOR,
           NPP_VERSION_BUILD);
#endif
  cJSON *o = cJSON_CreateObject();
  if (!o)
    return;
  cJSON_AddStringToObject(o, "type", "device");
  cJSON_AddStringToObject(o, "name", gpuimg_cuda_device_name(b->ctx));
  cJSON_AddStringToObject(o, "compute_capability", cc);
  cJSON_AddNumberToObject(o, "sms", prop.multiProcessorCount);
  cJSON_AddNumberToObject(o, "memory_bytes", (double)prop.totalGlobalMem);
  cJSON_AddNumberToObject(o, "cuda_runtime", rt);
  cJSON_AddNumberToObject(o, "cuda_driver", drv);
  cJSON_AddBoolToObject(o, "npp", b->npp);
  if (b->npp && npp_version[0])
    cJSON_AddStringToObject(o, "npp_version", npp_version);
  cJSON_AddNumberToObject(o, "max_run_ms", b->opt.max_run_ms);
  cJSON_AddNumberToObject(o, "budget_s", b->opt.budget_s);
  char *text = cJSON_PrintUnformatted(o);
  if (text) {
    fprintf(b->json, "%s\n", text);
    cJSON_free(text);
  }
  cJSON_Delete(o);
  progress("device %s (sm_%d%d, %d SMs), CUDA runtime %d, driver %d, NPP %s",
           gpuimg_cuda_device_name(b->ctx), major, minor, prop.multiProcessorCount, rt, drv,
           b->npp ? (npp_version[0] ? npp_version : "yes") : "no");
}

/* ---- sizes ------------------------------------------------------------------------------ */

/* Allocates and fills the buffers of one size; the source and mask go to the device. */
static int size_init(bench_t *b, size_state_t *s, int w, int h, int check_it, uint64_t seed)
{
  size_t px = (size_t)w * h;
  memset(s, 0, sizeof *s);
  s->w = w;
  s->h = h;
  s->check = check_it;
  for (int k = 0; k < CASE_KINDS; k++)
    for (int v = 0; v < 3; v++)
      s->too_slow_from[k][v] = INT_MAX;
  if (!(s->h_src = gpuimg_cuda_host_alloc(3 * px)) ||
      !(s->h_out = gpuimg_cuda_host_alloc(3 * px)) || !(s->h_mask = gpuimg_cuda_host_alloc(px)) ||
      !(s->d_src = gpuimg_cuda_dev_alloc(3 * px)) || !(s->d_dst = gpuimg_cuda_dev_alloc(3 * px)) ||
      !(s->d_mask = gpuimg_cuda_dev_alloc(px)))
    return -1;
  fill_noise(s->h_src, 3 * px, seed);
  fill_ellipse(s->h_mask, w, h);
  if (gpuimg_cuda_upload(b->ctx, s->d_src, s->h_src, 3 * px, NULL) < 0 ||
      gpuimg_cuda_upload(b->ctx, s->d_mask, s->h_mask, px, NULL) < 0)
    return -1;
  return 0;
}

static void size_free(size_state_t *s)
{
  gpuimg_cuda_host_free(s->h_src);
  gpuimg_cuda_host_free(s->h_out);
  gpuimg_cuda_host_free(s->h_mask);
  gpuimg_cuda_dev_free(s->d_src);
  gpuimg_cuda_dev_free(s->d_dst);
  gpuimg_cuda_dev_free(s->d_mask);
  memset(s, 0, sizeof *s);
}

/* ---- the plan --------------------------------------------------------------------------- */

/* Phase 1, every size: what the targets need and what costs little. Phase 2, every size:
 * the configurations whose cost grows with r^2, which the time budget may cut short. */
static int run_phase1(bench_t *b, size_state_t *s)
{
  static const case_kind_t simple[] = {CASE_UPLOAD, CASE_DOWNLOAD, CASE_ROUNDTRIP, CASE_GRAY};
  for (size_t i = 0; i < sizeof simple / sizeof simple[0]; i++) {
    bench_case_t c = {simple[i], GPUIMG_VARIANT_FAST, -1};
    if (measure(b, s, &c) < 0)
      return -1;
  }
  bench_case_t checker_fast = {CASE_CHECKER, GPUIMG_VARIANT_FAST, -1};
  bench_case_t checker_naive = {CASE_CHECKER, GPUIMG_VARIANT_NAIVE, -1};
  if (measure(b, s, &checker_fast) < 0 || measure(b, s, &checker_naive) < 0)
    return -1;
  for (int k = 0; k < b->opt.nradii; k++) {
    bench_case_t c = {CASE_BLUR, GPUIMG_VARIANT_FAST, b->opt.radii[k]};
    if (measure(b, s, &c) < 0)
      return -1;
  }
  bench_case_t portrait_fast = {CASE_PORTRAIT, GPUIMG_VARIANT_FAST, PORTRAIT_RADIUS};
  bench_case_t portrait_tiled = {CASE_PORTRAIT, GPUIMG_VARIANT_TILED, PORTRAIT_RADIUS};
  if (measure(b, s, &portrait_fast) < 0 || measure(b, s, &portrait_tiled) < 0)
    return -1;
  if (b->npp) {
    bench_case_t c = {CASE_NPP_GRAY, GPUIMG_VARIANT_FAST, -1};
    if (measure(b, s, &c) < 0)
      return -1;
  }
  return 0;
}

static int run_phase2(bench_t *b, size_state_t *s)
{
  for (int k = 0; k < b->opt.nradii; k++) {
    bench_case_t c = {CASE_BLUR, GPUIMG_VARIANT_TILED, b->opt.radii[k]};
    if (measure(b, s, &c) < 0)
      return -1;
  }
  for (int k = 0; b->npp && k < b->opt.nradii; k++) {
    bench_case_t c = {CASE_NPP_BLUR, GPUIMG_VARIANT_FAST, b->opt.radii[k]};
    if (measure(b, s, &c) < 0)
      return -1;
  }
  for (int k = 0; k < b->opt.nradii; k++) {
    bench_case_t c = {CASE_BLUR, GPUIMG_VARIANT_NAIVE, b->opt.radii[k]};
    if (measure(b, s, &c) < 0)
      return -1;
  }
  return 0;
}

/* ---- markdown --------------------------------------------------------------------------- */

static void print_markdown(const bench_t *b)
{
  printf("\n## gpuimg benchmark: %s, device-to-device copy %.1f GB/s\n",
         gpuimg_cuda_device_name(b->ctx), b->copy_gbps);
  printf("\nMedian of %d event-timed runs after %d warm-up runs; gray-roundtrip is host-clock "
         "time. GB/s counts the least traffic (input once, output once, mask); %% copy compares "
         "it with the device-to-device copy.\n",
         b->opt.runs, b->opt.warmup);
  for (int i = 0; i < b->opt.nsizes; i++) {
    const size_state_t *s = &b->sizes[i];
    printf("\n### %dx%d RGB%s\n\n", s->w, s->h,
           s->check ? " (each gpuimg row checked against the CPU reference)" : "");
    printf("| op | variant | r | median ms | min ms | MB | GB/s | %% copy | check |\n");
    printf("|---|---|--:|--:|--:|--:|--:|--:|---|\n");
    for (int k = 0; k < b->nresults; k++) {
      const result_t *r = &b->results[k];
      if (r->w != s->w || r->h != s->h)
        continue;
      char radius[16] = "";
      if (r->radius >= 0)
        snprintf(radius, sizeof radius, "%d", r->radius);
      char checked[64] = "";
      if (strcmp(r->check, "info") == 0)
        snprintf(checked, sizeof checked, "%lld bytes differ (max %d)", r->diff_bytes, r->max_diff);
      else
        snprintf(checked, sizeof checked, "%s", r->check);
      if (r->skipped[0])
        printf("| %s | %s | %s | %s | | %.1f | | | %s |\n", r->op, r->variant, radius, r->skipped,
               r->bytes / 1e6, checked);
      else
        printf("| %s | %s | %s | %.4f | %.4f | %.1f | %.1f | %.1f | %s |\n", r->op, r->variant,
               radius, r->ms, r->ms_min, r->bytes / 1e6, r->gbps, r->pct_copy, checked);
    }
  }
  printf("\n%d failure%s\n", b->failures, b->failures == 1 ? "" : "s");
}

/* ---- options ---------------------------------------------------------------------------- */

static void usage(FILE *f)
{
  fprintf(f, "Usage: " BENCH_NAME " [OPTIONS]\n"
             "Times gpuimg's CUDA kernels (and NPP when built with it); a markdown table per size\n"
             "on stdout, one JSON object per line to --json, progress on stderr.\n"
             "\n"
             "  --json PATH          JSON lines output (default bench.jsonl)\n"
             "  --sizes WxH,...      image sizes, the first is checked against the CPU reference\n"
             "                       (default 1024x768,3840x2160,7680x4320)\n"
             "  --radii R,...        blur radii (default 0,1,2,4,8,16,32,64)\n"
             "  --runs N             timed runs per configuration, >= 1 (default 20)\n"
             "  --warmup N           warm-up runs, >= 1; the first is the probe (default 3)\n"
             "  --max-run-ms MS      skip configurations slower than this per run (default 600)\n"
             "  --budget-s S         time no new configuration after S seconds (default 240)\n"
             "  --copy-mib N         device-to-device copy buffer in MiB (default 1024)\n"
             "  --no-npp             leave NPP out even when built with it\n"
             "  -h, --help           this help\n"
             "\n"
             "Exit status: 0, 1 when a check or a CUDA call failed, 2 on misuse, 77 without a "
             "CUDA device.\n");
}

/* A whole decimal number in [lo, hi]; 0 or -1 with a message. */
static int parse_long(const char *opt, const char *s, long lo, long hi, long *out)
{
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno || end == s || *end || v < lo || v > hi) {
    fprintf(stderr, BENCH_NAME ": %s: '%s' is not a number in %ld..%ld\n", opt, s, lo, hi);
    return -1;
  }
  *out = v;
  return 0;
}

static int parse_double(const char *opt, const char *s, double lo, double hi, double *out)
{
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (errno || end == s || *end || !(v >= lo && v <= hi)) {
    fprintf(stderr, BENCH_NAME ": %s: '%s' is not a number in %g..%g\n", opt, s, lo, hi);
    return -1;
  }
  *out = v;
  return 0;
}

static int parse_sizes(const char *s, options_t *o)
{
  char buf[256];
  snprintf(buf, sizeof buf, "%s", s);
  o->nsizes = 0;
  for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    char *x = strchr(tok, 'x');
    long w, h;
    if (!x || o->nsizes == MAX_SIZES) {
      fprintf(stderr, BENCH_NAME ": --sizes: '%s' is not WxH (at most %d sizes)\n", tok, MAX_SIZES);
      return -1;
    }
    *x = '\0';
    if (parse_long("--sizes", tok, 1, 32768, &w) < 0 ||
        parse_long("--sizes", x + 1, 1, 32768, &h) < 0)
      return -1;
    o->sizes[o->nsizes][0] = (int)w;
    o->sizes[o->nsizes][1] = (int)h;
    o->nsizes++;
  }
  if (o->nsizes == 0) {
    fprintf(stderr, BENCH_NAME ": --sizes: no size given\n");
    return -1;
  }
  return 0;
}

static int parse_radii(const char *s, options_t *o)
{
  char buf[256];
  snprintf(buf, sizeof buf, "%s", s);
  o->nradii = 0;
  for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    long r;
    if (o->nradii == MAX_RADII) {
      fprintf(stderr, BENCH_NAME ": --radii: at most %d radii\n", MAX_RADII);
      return -1;
    }
    if (parse_long("--radii", tok, 0, GPUIMG_MAX_RADIUS, &r) < 0)
      return -1;
    o->radii[o->nradii++] = (int)r;
  }
  if (o->nradii == 0) {
    fprintf(stderr, BENCH_NAME ": --radii: no radius given\n");
    return -1;
  }
  return 0;
}

static void options_default(options_t *o)
{
  static const int radii[] = {0, 1, 2, 4, 8, 16, 32, 64};
  memset(o, 0, sizeof *o);
  o->sizes[0][0] = 1024;
  o->sizes[0][1] = 768;
  o->sizes[1][0] = 3840;
  o->sizes[1][1] = 2160;
  o->sizes[2][0] = 7680;
  o->sizes[2][1] = 4320;
  o->nsizes = 3;
  memcpy(o->radii, radii, sizeof radii);
  o->nradii = (int)(sizeof radii / sizeof radii[0]);
  o->runs = 20;
  o->warmup = 3;
  o->max_run_ms = 600;
  o->budget_s = 240;
  o->copy_mib = 1024;
  o->use_npp = 1;
  o->json_path = "bench.jsonl";
}

/* 0: go on; 1: --help done; -1: misuse (reported). */
static int parse_options(int argc, char **argv, options_t *o)
{
  options_default(o);
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    long n;
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      usage(stdout);
      return 1;
    }
    if (strcmp(a, "--no-npp") == 0) {
      o->use_npp = 0;
      continue;
    }
    if (strncmp(a, "--", 2) != 0 || !v) {
      fprintf(stderr, BENCH_NAME ": %s: %s\n", a,
              strncmp(a, "--", 2) != 0 ? "unexpected argument" : "needs a value");
      fprintf(stderr, "Usage: " BENCH_NAME " [OPTIONS]; --help lists them\n");
      return -1;
    }
    i++;
    if (strcmp(a, "--json") == 0) {
      o->json_path = v;
    } else if (strcmp(a, "--sizes") == 0) {
      if (parse_sizes(v, o) < 0)
        return -1;
    } else if (strcmp(a, "--radii") == 0) {
      if (parse_radii(v, o) < 0)
        return -1;
    } else if (strcmp(a, "--runs") == 0) {
      if (parse_long(a, v, 1, 100000, &n) < 0)
        return -1;
      o->runs = (int)n;
    } else if (strcmp(a, "--warmup") == 0) {
      if (parse_long(a, v, 1, 100000, &n) < 0)
        return -1;
      o->warmup = (int)n;
    } else if (strcmp(a, "--copy-mib") == 0) {
      if (parse_long(a, v, 64, 65536, &n) < 0)
        return -1;
      o->copy_mib = (int)n;
    } else if (strcmp(a, "--max-run-ms") == 0) {
      if (parse_double(a, v, 0.001, 1e7, &o->max_run_ms) < 0)
        return -1;
    } else if (strcmp(a, "--budget-s") == 0) {
      if (parse_double(a, v, 0, 1e7, &o->budget_s) < 0)
        return -1;
    } else {
      fprintf(stderr, BENCH_NAME ": %s: unknown option\n", a);
      fprintf(stderr, "Usage: " BENCH_NAME " [OPTIONS]; --help lists them\n");
      return -1;
    }
  }
  return 0;
}

/* ---- main ------------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
  static bench_t bench; /* large: not on the stack */
  bench_t *b = &bench;
  char reason[256];
  int rc = 1, nsizes = 0, finished = 0;

  int p = parse_options(argc, argv, &b->opt);
  if (p != 0)
    return p > 0 ? 0 : 2;
  if (gpuimg_cuda_probe(reason, sizeof reason) <= 0) {
    fprintf(stderr, BENCH_NAME ": no usable CUDA device: %s\n", reason);
    return 77;
  }
  b->t0 = gpuimg_now_ms();
  if (!(b->ctx = gpuimg_cuda_create(-1)))
    goto done;
  if (CUDA_OK(cudaStreamCreateWithFlags(&b->stream, cudaStreamNonBlocking)) < 0 ||
      CUDA_OK(cudaEventCreate(&b->ev_start)) < 0 || CUDA_OK(cudaEventCreate(&b->ev_stop)) < 0)
    goto done;
#if GPUIMG_HAVE_NPP
  if (b->opt.use_npp) {
    if (npp_context_init(b) < 0)
      goto done;
    b->npp = 1;
  }
#endif
  if (!(b->json = fopen(b->opt.json_path, "w"))) {
    gpuimg_error_set(GPUIMG_EXIT_OUTPUT, b->opt.json_path, "cannot write: %s", strerror(errno));
    goto done;
  }
  b->samples =
      malloc(sizeof(float) * (size_t)(b->opt.runs > b->opt.warmup ? b->opt.runs : b->opt.warmup));
  b->samples2 = malloc(sizeof(float) * (size_t)b->opt.runs);
  if (!b->samples || !b->samples2) {
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, "", "out of memory");
    goto done;
  }
  json_device(b);
  if (measure_copy(b) < 0)
    goto done;
  for (; nsizes < b->opt.nsizes; nsizes++) {
    int w = b->opt.sizes[nsizes][0], h = b->opt.sizes[nsizes][1];
    progress("preparing %dx%d", w, h);
    if (size_init(b, &b->sizes[nsizes], w, h, nsizes == 0, 0x6770756967ull + (uint64_t)w * h) < 0) {
      nsizes++; /* partly allocated: freed below */
      goto done;
    }
  }
  for (int i = 0; i < nsizes; i++)
    if (run_phase1(b, &b->sizes[i]) < 0)
      goto done;
  for (int i = 0; i < nsizes; i++)
    if (run_phase2(b, &b->sizes[i]) < 0)
      goto done;

  cJSON *o = cJSON_CreateObject();
  if (o) {
    cJSON_AddStringToObject(o, "type", "summary");
    cJSON_AddNumberToObject(o, "failures", b->failures);
    cJSON_AddNumberToObject(o, "elapsed_s", elapsed_s(b));
    char *text = cJSON_PrintUnformatted(o);
    if (text) {
      fprintf(b->json, "%s\n", text);
      cJSON_free(text);
    }
    cJSON_Delete(o);
  }
  print_markdown(b);
  progress("done in %.1f s, %d failure%s", elapsed_s(b), b->failures, b->failures == 1 ? "" : "s");
  rc = b->failures ? 1 : 0;
  finished = 1;
done:
  if (!finished)
    fprintf(stderr, BENCH_NAME ": %s\n", gpuimg_error_message());
  if (b->json && fclose(b->json) != 0 && rc == 0) {
    fprintf(stderr, BENCH_NAME ": %s: cannot write: %s\n", b->opt.json_path, strerror(errno));
    rc = 1;
  }
  for (int i = 0; i < nsizes; i++)
    size_free(&b->sizes[i]);
  free(b->samples);
  free(b->samples2);
  if (b->ev_start)
    (void)cudaEventDestroy(b->ev_start);
  if (b->ev_stop)
    (void)cudaEventDestroy(b->ev_stop);
  if (b->stream)
    (void)cudaStreamDestroy(b->stream);
  gpuimg_cuda_destroy(b->ctx);
  return rc;
}
