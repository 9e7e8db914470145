/* bench.h: gpuimg_bench's private types and the functions its files share. */
#ifndef GPUIMG_BENCH_H
#define GPUIMG_BENCH_H

#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>

#if GPUIMG_HAVE_NPP
#include <npp.h>
#endif

#include "cuda_context.h"
#include "ops.h"

#define BENCH_NAME "gpuimg_bench"
#define MAX_SIZES 8
#define MAX_RADII 16
#define MAX_RESULTS 1024
#define CHECKER_CELL 1
#define CHECKER_AMOUNT 64
#define PORTRAIT_RADIUS 16

/* Options, with their defaults in options_default() (bench_options.c). */
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
  int channels; /* of every image: 1 to 4 (NPP's cases need 3) */
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
  int w, h, c; /* c: channels */
  int check;   /* compare with the CPU reference on this size */
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

/* bench_measure.c: helpers, the timing loop and its statistics. */
void bench_progress(const char *fmt, ...);
/* A failed CUDA runtime call becomes a gpuimg error naming the call, file and line. */
int bench_cuda_ok(cudaError_t err, const char *call, const char *file, int line);
#define CUDA_OK(call) bench_cuda_ok((call), #call, __FILE__, __LINE__)
double bench_elapsed_s(const bench_t *b);
int bench_measure(bench_t *b, size_state_t *s, const bench_case_t *c);
int bench_measure_copy(bench_t *b);

/* bench_cases.c: what each case is, its inputs, one run of it and its CPU-reference check. */
const char *bench_case_op(case_kind_t k);
int bench_case_is_npp(case_kind_t k);
const char *bench_case_variant(const bench_case_t *c);
double bench_case_bytes(const bench_case_t *c, int w, int h, int channels);
int bench_case_quadratic(const bench_case_t *c);
double bench_case_cost(const bench_case_t *c, int w, int h);
int bench_size_init(bench_t *b, size_state_t *s, int w, int h, int check_it, uint64_t seed);
void bench_size_free(size_state_t *s);
int bench_run_once(bench_t *b, size_state_t *s, const bench_case_t *c, float *ms, float *ms2,
                   gpuimg_launch_t *info);
int bench_prepare_check(const size_state_t *s, const bench_case_t *c);
int bench_check(bench_t *b, size_state_t *s, const bench_case_t *c, result_t *r);

/* bench_npp.c: NPP's side (stubs in a build without NPP). */
int bench_npp_start(bench_t *b);
int bench_npp_time(bench_t *b, const size_state_t *s, const bench_case_t *c, gpuimg_launch_t *info);
void bench_npp_version(char *buf, size_t size);

/* bench_report.c: the JSON lines and the markdown tables. */
void bench_json_device(bench_t *b);
void bench_json_copy(bench_t *b, size_t buffer_bytes, double moved, double ms, double ms_min);
void bench_json_result(bench_t *b, const result_t *r);
void bench_json_summary(bench_t *b);
void bench_print_markdown(const bench_t *b);

/* bench_options.c: the command line. 0: go on; 1: --help done; -1: misuse (reported). */
int bench_parse_options(int argc, char **argv, options_t *o);

#endif
