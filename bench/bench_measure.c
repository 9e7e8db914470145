/* bench_measure.c: the timing loop, its skips and statistics, and the copy bandwidth. */
#define _POSIX_C_SOURCE 200809L

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

void bench_progress(const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, BENCH_NAME ": ");
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

int bench_cuda_ok(cudaError_t err, const char *call, const char *file, int line)
{
  if (err == cudaSuccess)
    return 0;
  const char *base = strrchr(file, '/');
  gpuimg_error_set(GPUIMG_EXIT_DEVICE, "cuda", "%s failed (%s:%d): %s", call,
                   base ? base + 1 : file, line, cudaGetErrorString(err));
  return -1;
}

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

double bench_elapsed_s(const bench_t *b)
{
  return (gpuimg_now_ms() - b->t0) / 1e3;
}

static void skip(result_t *r, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(r->skipped, sizeof r->skipped, fmt, ap);
  va_end(ap);
}

/* Reports r's skip and writes its row. */
static int skipped(bench_t *b, const result_t *r, const char *where)
{
  bench_progress("%s skipped: %s", where, r->skipped);
  bench_json_result(b, r);
  return 0;
}

/* Records the error in r's row. A gpuimg error is a failure of the run; an NPP error (a mask
 * size it refuses, say) is only reported: NPP is the yardstick, not the subject. */
static int run_failed(bench_t *b, result_t *r, const char *where)
{
  skip(r, "error: %s", gpuimg_error_message());
  if (strcmp(r->impl, "npp") != 0)
    b->failures++;
  bench_progress("%s %s", where, r->skipped);
  bench_json_result(b, r);
  return 0;
}

/* The next row, filled in with what c is; NULL (error set) when the table is full. */
static result_t *new_row(bench_t *b, const size_state_t *s, const bench_case_t *c)
{
  if (b->nresults == MAX_RESULTS) {
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, "bench", "more than %d results", MAX_RESULTS);
    return NULL;
  }
  result_t *r = &b->results[b->nresults++];
  memset(r, 0, sizeof *r);
  r->kind = c->kind;
  r->op = bench_case_op(c->kind);
  r->variant = bench_case_variant(c);
  r->impl = bench_case_is_npp(c->kind) ? "npp" : "gpuimg";
  r->w = s->w;
  r->h = s->h;
  r->radius = c->radius;
  r->bytes = bench_case_bytes(c, s->w, s->h, s->c);
  r->check = "";
  return r;
}

/* Before any run: skips c (in r->skipped) when the time budget is spent, a smaller radius
 * was already too slow, or the cost model predicts too long a run. */
static void skip_before(const bench_t *b, const size_state_t *s, const bench_case_t *c, result_t *r,
                        int vi, double cost)
{
  if (bench_elapsed_s(b) > b->opt.budget_s) {
    skip(r, "time budget of %g s spent", b->opt.budget_s);
  } else if (c->radius >= s->too_slow_from[c->kind][vi]) {
    skip(r, "r=%d already took over %g ms per run", s->too_slow_from[c->kind][vi],
         b->opt.max_run_ms);
  } else if (bench_case_quadratic(c) && c->radius > 0 && s->ms_per_cost[c->kind][vi] > 0) {
    /* The model fits naive and tiled closely; NPP's algorithm is unknown, so only an
     * extreme prediction skips it without a probe. */
    double predicted = s->ms_per_cost[c->kind][vi] * cost;
    double factor = c->kind == CASE_NPP_BLUR ? 8.0 : 1.5;
    if (predicted > factor * b->opt.max_run_ms)
      skip(r, "predicted %.3g ms per run (W*H*(2r+1)^2 model)", predicted);
  }
}

/* The runs after the probe: the rest of the warm-up, then the timed ones, whose median and
 * minimum go to r. -1 when a run failed. */
static int time_runs(bench_t *b, size_state_t *s, const bench_case_t *c, result_t *r,
                     gpuimg_launch_t *info)
{
  float ms = 0, ms2 = 0;
  int total = b->opt.warmup - 1 + b->opt.runs; /* the probe was the first warm-up */
  if (total < b->opt.runs)
    total = b->opt.runs;
  for (int i = 0; i < total; i++) {
    if (bench_run_once(b, s, c, &ms, &ms2, info) < 0)
      return -1;
    int k = i - (total - b->opt.runs);
    if (k >= 0) {
      b->samples[k] = ms;
      b->samples2[k] = ms2;
    }
  }
  r->ms = median(b->samples, b->opt.runs);
  r->ms_min = b->samples[0]; /* sorted by median() */
  r->events_ms = median(b->samples2, b->opt.runs);
  return 0;
}

/* Times one configuration and appends its row. A failure of the operation is recorded in
 * the row and counted; -1 only when the report itself cannot go on. */
int bench_measure(bench_t *b, size_state_t *s, const bench_case_t *c)
{
  result_t *r = new_row(b, s, c);
  if (!r)
    return -1;
  int vi = bench_case_is_npp(c->kind) ? 0 : (int)c->variant;
  double cost = bench_case_cost(c, s->w, s->h);
  char where[96], rlabel[16] = "";
  if (c->radius >= 0)
    snprintf(rlabel, sizeof rlabel, "r=%d", c->radius);
  snprintf(where, sizeof where, "%dx%d %-14s %-6s %-5s", s->w, s->h, r->op, r->variant, rlabel);

  skip_before(b, s, c, r, vi, cost);
  if (r->skipped[0])
    return skipped(b, r, where);

  gpuimg_launch_t info;
  float ms = 0, ms2 = 0;
  if ((s->check && bench_prepare_check(s, c) < 0) ||
      bench_run_once(b, s, c, &ms, &ms2, &info) < 0 || (s->check && bench_check(b, s, c, r) < 0))
    return run_failed(b, r, where);
  if (bench_case_quadratic(c) && c->radius > 0)
    s->ms_per_cost[c->kind][vi] = ms / cost;
  if (ms > b->opt.max_run_ms) {
    skip(r, "one run took %.3g ms (limit %g ms)", ms, b->opt.max_run_ms);
    if (c->radius >= 0)
      s->too_slow_from[c->kind][vi] = c->radius;
    return skipped(b, r, where);
  }

  if (time_runs(b, s, c, r, &info) < 0)
    return run_failed(b, r, where);
  r->gbps = r->ms > 0 ? r->bytes / (r->ms * 1e6) : 0;
  r->pct_copy = b->copy_gbps > 0 ? 100.0 * r->gbps / b->copy_gbps : 0;
  r->kernel = info.kernel;
  r->launches = info.launches;
  if (bench_case_quadratic(c) && c->radius > 0)
    s->ms_per_cost[c->kind][vi] = r->ms / cost;
  bench_progress("%s %10.4f ms %9.1f GB/s %5.1f%% %s", where, r->ms, r->gbps, r->pct_copy,
                 r->check);
  bench_json_result(b, r);
  return 0;
}

/* Device-to-device copy bandwidth: the roofline every kernel here is compared with. */
int bench_measure_copy(bench_t *b)
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
  bench_progress("device-to-device copy of %zu MiB: %.4f ms, %.1f GB/s (read + write)", bytes >> 20,
                 ms, b->copy_gbps);
  bench_json_copy(b, bytes, moved, ms, ms_min);
  rc = 0;
done:
  cudaFree(d_a);
  cudaFree(d_b);
  return rc;
}
