/* gpuimg_bench.c: times the CUDA kernels (and NPP, if built in) against the copy bandwidth. */

/* What it measures, per image size (8-bit RGB unless --channels says otherwise, deterministic
 * noise with no zero bytes; NPP's cases only for RGB):
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
 * bench/bench-plot.py; a markdown table per size on stdout; progress on stderr.
 * Exit status: 0, 1 when a check failed or a CUDA call did, 2 on misuse, 77 without a device.
 *
 * This is a benchmark, so unlike src/ it calls the CUDA runtime directly (copy bandwidth,
 * NPP's stream); those calls resolve to the cudart that nvcc links for the kernels.
 *
 * Files: this one has the plan and main; bench_cases.c the cases, their inputs, one run and
 * the CPU-reference check; bench_measure.c the timing loop, skips and statistics;
 * bench_npp.c NPP's side; bench_report.c the JSON lines and markdown; bench_options.c the
 * command line; bench.h what they share. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

/* ---- the plan --------------------------------------------------------------------------- */

/* Phase 1, every size: what the targets need and what costs little. Phase 2, every size:
 * the configurations whose cost grows with r^2, which the time budget may cut short. */
static int run_phase1(bench_t *b, size_state_t *s)
{
  static const case_kind_t simple[] = {CASE_UPLOAD, CASE_DOWNLOAD, CASE_ROUNDTRIP, CASE_GRAY};
  for (size_t i = 0; i < sizeof simple / sizeof simple[0]; i++) {
    bench_case_t c = {simple[i], GPUIMG_VARIANT_FAST, -1};
    if (bench_measure(b, s, &c) < 0)
      return -1;
  }
  bench_case_t checker_fast = {CASE_CHECKER, GPUIMG_VARIANT_FAST, -1};
  bench_case_t checker_naive = {CASE_CHECKER, GPUIMG_VARIANT_NAIVE, -1};
  if (bench_measure(b, s, &checker_fast) < 0 || bench_measure(b, s, &checker_naive) < 0)
    return -1;
  for (int k = 0; k < b->opt.nradii; k++) {
    bench_case_t c = {CASE_BLUR, GPUIMG_VARIANT_FAST, b->opt.radii[k]};
    if (bench_measure(b, s, &c) < 0)
      return -1;
  }
  bench_case_t portrait_fast = {CASE_PORTRAIT, GPUIMG_VARIANT_FAST, PORTRAIT_RADIUS};
  bench_case_t portrait_tiled = {CASE_PORTRAIT, GPUIMG_VARIANT_TILED, PORTRAIT_RADIUS};
  if (bench_measure(b, s, &portrait_fast) < 0 || bench_measure(b, s, &portrait_tiled) < 0)
    return -1;
  if (b->npp) {
    bench_case_t c = {CASE_NPP_GRAY, GPUIMG_VARIANT_FAST, -1};
    if (bench_measure(b, s, &c) < 0)
      return -1;
  }
  return 0;
}

static int run_phase2(bench_t *b, size_state_t *s)
{
  for (int k = 0; k < b->opt.nradii; k++) {
    bench_case_t c = {CASE_BLUR, GPUIMG_VARIANT_TILED, b->opt.radii[k]};
    if (bench_measure(b, s, &c) < 0)
      return -1;
  }
  for (int k = 0; b->npp && k < b->opt.nradii; k++) {
    bench_case_t c = {CASE_NPP_BLUR, GPUIMG_VARIANT_FAST, b->opt.radii[k]};
    if (bench_measure(b, s, &c) < 0)
      return -1;
  }
  for (int k = 0; k < b->opt.nradii; k++) {
    bench_case_t c = {CASE_BLUR, GPUIMG_VARIANT_NAIVE, b->opt.radii[k]};
    if (bench_measure(b, s, &c) < 0)
      return -1;
  }
  return 0;
}

/* ---- main ------------------------------------------------------------------------------- */

/* The context, our stream and events, NPP, the --json file and the sample buffers. */
static int bench_open(bench_t *b)
{
  if (!(b->ctx = gpuimg_cuda_create(-1)))
    return -1;
  if (CUDA_OK(cudaStreamCreateWithFlags(&b->stream, cudaStreamNonBlocking)) < 0 ||
      CUDA_OK(cudaEventCreate(&b->ev_start)) < 0 || CUDA_OK(cudaEventCreate(&b->ev_stop)) < 0)
    return -1;
  if (bench_npp_start(b) < 0)
    return -1;
  if (!(b->json = fopen(b->opt.json_path, "w"))) {
    gpuimg_error_set(GPUIMG_EXIT_OUTPUT, b->opt.json_path, "cannot write: %s", strerror(errno));
    return -1;
  }
  b->samples =
      malloc(sizeof(float) * (size_t)(b->opt.runs > b->opt.warmup ? b->opt.runs : b->opt.warmup));
  b->samples2 = malloc(sizeof(float) * (size_t)b->opt.runs);
  if (!b->samples || !b->samples2) {
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, "", "out of memory");
    return -1;
  }
  return 0;
}

/* The device, the copy, then every size's buffers and both phases. *nsizes: the sizes to
 * free afterwards, the last one perhaps partly allocated. */
static int bench_all(bench_t *b, int *nsizes)
{
  bench_json_device(b);
  if (bench_measure_copy(b) < 0)
    return -1;
  for (; *nsizes < b->opt.nsizes; (*nsizes)++) {
    int n = *nsizes, w = b->opt.sizes[n][0], h = b->opt.sizes[n][1];
    bench_progress("preparing %dx%d", w, h);
    if (bench_size_init(b, &b->sizes[n], w, h, n == 0, 0x6770756967ull + (uint64_t)w * h) < 0) {
      (*nsizes)++; /* partly allocated: freed by bench_close() */
      return -1;
    }
  }
  for (int i = 0; i < *nsizes; i++)
    if (run_phase1(b, &b->sizes[i]) < 0)
      return -1;
  for (int i = 0; i < *nsizes; i++)
    if (run_phase2(b, &b->sizes[i]) < 0)
      return -1;
  return 0;
}

/* Closes --json (a failure to write it turns rc 0 into 1) and frees everything. */
static int bench_close(bench_t *b, int nsizes, int rc)
{
  if (b->json && fclose(b->json) != 0 && rc == 0) {
    fprintf(stderr, BENCH_NAME ": %s: cannot write: %s\n", b->opt.json_path, strerror(errno));
    rc = 1;
  }
  for (int i = 0; i < nsizes; i++)
    bench_size_free(&b->sizes[i]);
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

int main(int argc, char **argv)
{
  static bench_t bench; /* large: not on the stack */
  bench_t *b = &bench;
  char reason[256];
  int rc = 1, nsizes = 0;

  int p = bench_parse_options(argc, argv, &b->opt);
  if (p != 0)
    return p > 0 ? 0 : 2;
  if (gpuimg_cuda_probe(reason, sizeof reason) <= 0) {
    fprintf(stderr, BENCH_NAME ": no usable CUDA device: %s\n", reason);
    return 77;
  }
  b->t0 = gpuimg_now_ms();
  if (bench_open(b) == 0 && bench_all(b, &nsizes) == 0) {
    bench_json_summary(b);
    bench_print_markdown(b);
    bench_progress("done in %.1f s, %d failure%s", bench_elapsed_s(b), b->failures,
                   b->failures == 1 ? "" : "s");
    rc = b->failures ? 1 : 0;
  } else {
    fprintf(stderr, BENCH_NAME ": %s\n", gpuimg_error_message());
  }
  return bench_close(b, nsizes, rc);
}
