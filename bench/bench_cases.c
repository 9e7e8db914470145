/* bench_cases.c: the cases, their inputs, one run of each and its CPU-reference check. */
#define _POSIX_C_SOURCE 200809L

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "blur.h"
#include "blur_cpu.h"
#include "checkerboard.h"
#include "checkerboard_cpu.h"
#include "gray.h"
#include "gray_cpu.h"
#include "portrait.h"
#include "portrait_cpu.h"

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

/* ---- cases ------------------------------------------------------------------------------ */

const char *bench_case_op(case_kind_t k)
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

int bench_case_is_npp(case_kind_t k)
{
  return k == CASE_NPP_GRAY || k == CASE_NPP_BLUR;
}

const char *bench_case_variant(const bench_case_t *c)
{
  if (bench_case_is_npp(c->kind))
    return "npp";
  if (c->kind == CASE_UPLOAD || c->kind == CASE_DOWNLOAD)
    return "pinned";
  if (c->kind == CASE_GRAY || c->kind == CASE_ROUNDTRIP)
    return "fast";
  return gpuimg_variant_name(c->variant);
}

/* The output's channels for an input of c: gray makes RGB 1 channel and RGBA 2 (gray and
 * alpha), and leaves 1 and 2 as they are; the others keep c. */
static int out_channels(case_kind_t k, int c)
{
  int gray = k == CASE_GRAY || k == CASE_ROUNDTRIP || k == CASE_NPP_GRAY;
  return gray && c >= 3 ? c - 2 : c;
}

/* The least traffic the operation needs: input once, output once, plus the mask. */
double bench_case_bytes(const bench_case_t *c, int w, int h, int channels)
{
  double px = (double)w * h, in = channels * px;
  switch (c->kind) {
  case CASE_UPLOAD:
  case CASE_DOWNLOAD:
    return in;
  case CASE_PORTRAIT:
    return in + in + px;
  default:
    return in + out_channels(c->kind, channels) * px;
  }
}

/* Cost grows with (2r+1)^2 per pixel: these are predicted and may be skipped. */
int bench_case_quadratic(const bench_case_t *c)
{
  if (c->kind == CASE_NPP_BLUR)
    return 1;
  return (c->kind == CASE_BLUR || c->kind == CASE_PORTRAIT) &&
         (c->variant == GPUIMG_VARIANT_NAIVE || c->variant == GPUIMG_VARIANT_TILED);
}

double bench_case_cost(const bench_case_t *c, int w, int h)
{
  double k = 2.0 * (c->radius > 0 ? c->radius : 0) + 1;
  return (double)w * h * k * k;
}

/* ---- sizes ------------------------------------------------------------------------------ */

/* Allocates and fills the buffers of one size; the source and mask go to the device. */
int bench_size_init(bench_t *b, size_state_t *s, int w, int h, int check_it, uint64_t seed)
{
  size_t px = (size_t)w * h, n = px * (size_t)b->opt.channels;
  memset(s, 0, sizeof *s);
  s->w = w;
  s->h = h;
  s->c = b->opt.channels;
  s->check = check_it;
  for (int k = 0; k < CASE_KINDS; k++)
    for (int v = 0; v < 3; v++)
      s->too_slow_from[k][v] = INT_MAX;
  if (!(s->h_src = gpuimg_cuda_host_alloc(n)) || !(s->h_out = gpuimg_cuda_host_alloc(n)) ||
      !(s->h_mask = gpuimg_cuda_host_alloc(px)) || !(s->d_src = gpuimg_cuda_dev_alloc(n)) ||
      !(s->d_dst = gpuimg_cuda_dev_alloc(n)) || !(s->d_mask = gpuimg_cuda_dev_alloc(px)))
    return -1;
  fill_noise(s->h_src, n, seed);
  fill_ellipse(s->h_mask, w, h);
  if (gpuimg_cuda_upload(b->ctx, s->d_src, s->h_src, n, NULL) < 0 ||
      gpuimg_cuda_upload(b->ctx, s->d_mask, s->h_mask, px, NULL) < 0)
    return -1;
  return 0;
}

void bench_size_free(size_state_t *s)
{
  gpuimg_cuda_host_free(s->h_src);
  gpuimg_cuda_host_free(s->h_out);
  gpuimg_cuda_host_free(s->h_mask);
  gpuimg_cuda_dev_free(s->d_src);
  gpuimg_cuda_dev_free(s->d_dst);
  gpuimg_cuda_dev_free(s->d_mask);
  memset(s, 0, sizeof *s);
}

/* ---- one run ---------------------------------------------------------------------------- */

/* Runs c once; *ms is its event time (gray-roundtrip: the host clock, *ms2 the events' sum). */
int bench_run_once(bench_t *b, size_state_t *s, const bench_case_t *c, float *ms, float *ms2,
                   gpuimg_launch_t *info)
{
  size_t in_bytes = (size_t)s->w * s->h * s->c;
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
        gpuimg_gray_gpu(b->ctx, s->d_src, s->d_dst, s->w, s->h, s->c, GPUIMG_VARIANT_FAST, info) <
            0 ||
        gpuimg_cuda_download(b->ctx, s->h_out, s->d_dst,
                             (size_t)s->w * s->h * out_channels(c->kind, s->c), &down) < 0)
      return -1;
    *ms = (float)(gpuimg_now_ms() - t);
    *ms2 = up + info->ms + down;
    return 0;
  }
  case CASE_GRAY:
    if (gpuimg_gray_gpu(b->ctx, s->d_src, s->d_dst, s->w, s->h, s->c, GPUIMG_VARIANT_FAST, info) <
        0)
      return -1;
    break;
  case CASE_CHECKER:
    if (gpuimg_checkerboard_gpu(b->ctx, s->d_src, s->d_dst, s->w, s->h, s->c, CHECKER_CELL,
                                CHECKER_AMOUNT, c->variant, info) < 0)
      return -1;
    break;
  case CASE_BLUR:
    if (gpuimg_blur_gpu(b->ctx, s->d_src, s->d_dst, s->w, s->h, s->c, c->radius, c->variant,
                        GPUIMG_TILE_U8, info) < 0)
      return -1;
    break;
  case CASE_PORTRAIT:
    if (gpuimg_portrait_gpu(b->ctx, s->d_src, s->d_mask, s->d_dst, s->w, s->h, s->c, c->radius,
                            c->variant, GPUIMG_TILE_U8, info) < 0)
      return -1;
    break;
  case CASE_NPP_GRAY:
  case CASE_NPP_BLUR:
    if (bench_npp_time(b, s, c, info) < 0)
      return -1;
    break;
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
int bench_prepare_check(const size_state_t *s, const bench_case_t *c)
{
  size_t n = (size_t)s->w * s->h * s->c;
  cudaError_t err = c->kind == CASE_DOWNLOAD
                        ? cudaMemcpy(s->d_dst, s->d_src, n, cudaMemcpyDeviceToDevice)
                        : cudaMemset(s->d_dst, 0xA5, n);
  if (CUDA_OK(err) < 0 || CUDA_OK(cudaDeviceSynchronize()) < 0)
    return -1;
  return 0;
}

/* The CPU reference of c into ref (allocated by the caller, out_channels() channels). */
static int reference(const size_state_t *s, const bench_case_t *c, gpuimg_image_t *ref)
{
  gpuimg_image_t src = {.width = s->w, .height = s->h, .channels = s->c, .data = s->h_src};
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
    memcpy(ref->data, s->h_src, (size_t)s->w * s->h * s->c); /* the bytes must come back */
    return 0;
  default:
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, "bench", "no reference for case %d", (int)c->kind);
    return -1;
  }
}

/* Compares the device output of the run just made with the CPU reference. */
int bench_check(bench_t *b, size_state_t *s, const bench_case_t *c, result_t *r)
{
  int oc = out_channels(c->kind, s->c);
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
  if (bench_case_is_npp(c->kind)) {
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
