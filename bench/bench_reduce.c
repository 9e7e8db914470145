/* bench_reduce.c: gpuimg_bench_reduce, the stats kernels timed: the reduction ladder (M. Harris's
 * steps 1 to 7, warp shuffles, CUB) on 2^22 and 2^25 values and an 8K RGB image, and the
 * histogram kernels on an image of one value (every atomic on the same bins) and a photo-like
 * one, as markdown tables on stdout (progress on stderr). Each figure is checked against the CPU
 * reference. Usage: gpuimg_bench_reduce [--runs N] (default 20; the median of N timed runs after
 * two unrecorded ones, CUDA events around each call's kernels). Exit 0, 1 on a wrong figure or a
 * failure, 77 without a device. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base.h"
#include "cuda_context.h"
#include "stats_cpu.h"

static int runs = 20;

/* A test image on the host and the device. */
typedef struct {
  const char *name;
  gpuimg_image_t h;
  uint8_t *d_src;
  gpuimg_stats_t want;
} image_t;

static uint32_t rng_state = 12345;
static uint32_t rng(void)
{
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 17;
  rng_state ^= rng_state << 5;
  return rng_state;
}

/* kind 0: random bytes; 1: one value everywhere; 2: photo-like, smooth gradients with noise. */
static int image_make(gpuimg_cuda_t *ctx, image_t *im, const char *name, int w, int h, int c,
                      int kind)
{
  im->name = name;
  if (gpuimg_image_alloc(&im->h, w, h, c) < 0)
    return -1;
  for (size_t y = 0; y < (size_t)h; y++)
    for (size_t x = 0; x < (size_t)w; x++)
      for (int k = 0; k < c; k++) {
        size_t i = (y * (size_t)w + x) * (size_t)c + (size_t)k;
        int v = kind == 0   ? (int)(rng() >> 24)
                : kind == 1 ? 128
                            : (int)((x * 160 / (size_t)w + y * 64 / (size_t)h + 16 * (size_t)k) +
                                    (int)(rng() >> 28));
        im->h.data[i] = (uint8_t)(v > 255 ? 255 : v);
      }
  gpuimg_stats_cpu(&im->h, &im->want);
  size_t bytes = gpuimg_image_bytes(w, h, c);
  return (im->d_src = gpuimg_cuda_dev_alloc(bytes)) &&
                 gpuimg_cuda_upload(ctx, im->d_src, im->h.data, bytes, NULL) == 0
             ? 0
             : -1;
}

static void image_free(image_t *im)
{
  gpuimg_cuda_dev_free(im->d_src);
  gpuimg_image_free(&im->h);
}

/* Whether got's figures of what are want's. */
static int same(const gpuimg_stats_t *got, const gpuimg_stats_t *want, int what)
{
  for (int k = 0; k < want->channels; k++) {
    const gpuimg_channel_stats_t *g = &got->ch[k], *w = &want->ch[k];
    if ((what & GPUIMG_STATS_SUMS) && (g->sum != w->sum || g->sum_squares != w->sum_squares ||
                                       g->min != w->min || g->max != w->max))
      return 0;
    if ((what & GPUIMG_STATS_HISTOGRAM) &&
        memcmp(g->histogram, w->histogram, sizeof g->histogram) != 0)
      return 0;
  }
  return 1;
}

/* The median ms of runs calls of the variant on im; -1 on a failure, -2 on a wrong figure. */
static double time_variant(gpuimg_cuda_t *ctx, const image_t *im, gpuimg_reduce_t r,
                           gpuimg_histogram_t hist, int what)
{
  double *ms = malloc((size_t)runs * sizeof *ms);
  gpuimg_stats_t got;
  int ok = ms != NULL;
  for (int i = -2; ok && i < runs; i++) {
    gpuimg_launch_t info;
    memset(&info, 0, sizeof info);
    ok = gpuimg_stats_gpu(ctx, im->d_src, im->h.width, im->h.height, im->h.channels, r, hist, what,
                          &got, &info) == 0;
    if (ok && i >= 0)
      ms[i] = info.ms;
  }
  double m = ok ? gpuimg_median(ms, runs) : -1;
  free(ms);
  if (!ok)
    fprintf(stderr, "gpuimg_bench_reduce: %s\n", gpuimg_error_message());
  return ok && !same(&got, &im->want, what) ? -2 : m;
}

static double gbps(const image_t *im, double ms)
{
  return (double)gpuimg_image_bytes(im->h.width, im->h.height, im->h.channels) / (ms * 1e6);
}

/* The ladder on im: a row per variant. */
static int ladder(gpuimg_cuda_t *ctx, const image_t *im, double copy_gbps)
{
  static const char *const what[] = {
      "interleaved, divergent", "strided index, bank conflicts",   "sequential addressing",
      "first add during load",  "last warp unrolled (__syncwarp)", "completely unrolled",
      "many pixels a thread",   "grid-stride, warp shuffles",      "CUB TransformReduce"};
  printf("\n### Reduction: %s (%d x %d x %d = %zu values)\n\n", im->name, im->h.width, im->h.height,
         im->h.channels, gpuimg_image_bytes(im->h.width, im->h.height, im->h.channels));
  printf("| variant | kernel | ms | GB/s | of copy | step speed-up | cumulative |\n"
         "|---|---|---:|---:|---:|---:|---:|\n");
  double first = 0, prev = 0;
  for (int r = 0; r < GPUIMG_REDUCE_VARIANTS; r++) {
    double ms =
        time_variant(ctx, im, (gpuimg_reduce_t)r, GPUIMG_HISTOGRAM_SHARED, GPUIMG_STATS_SUMS);
    if (ms < 0) {
      printf("| %s | %s | %s | | | | |\n", gpuimg_reduce_names[r], what[r],
             ms == -2 ? "WRONG FIGURES" : "failed");
      return -1;
    }
    if (r == 0)
      first = prev = ms;
    double g = gbps(im, ms);
    printf("| %s | %s | %.4f | %.1f | %.1f%% | %.2fx | %.2fx |\n", gpuimg_reduce_names[r], what[r],
           ms, g, copy_gbps > 0 ? 100.0 * g / copy_gbps : 0.0, prev / ms, first / ms);
    prev = ms;
  }
  return 0;
}

/* The histogram kernels on im. */
static int histograms(gpuimg_cuda_t *ctx, const image_t *im, double copy_gbps)
{
  printf("\n### Histogram: %s (%d x %d x %d)\n\n| histogram | ms | GB/s | of copy |\n"
         "|---|---:|---:|---:|\n",
         im->name, im->h.width, im->h.height, im->h.channels);
  for (int h = 0; h < GPUIMG_HISTOGRAM_VARIANTS; h++) {
    double ms =
        time_variant(ctx, im, GPUIMG_REDUCE_SHUFFLE, (gpuimg_histogram_t)h, GPUIMG_STATS_HISTOGRAM);
    if (ms < 0) {
      printf("| %s | %s | | |\n", gpuimg_histogram_names[h], ms == -2 ? "WRONG FIGURES" : "failed");
      return -1;
    }
    double g = gbps(im, ms);
    printf("| %s | %.4f | %.1f | %.1f%% |\n", gpuimg_histogram_names[h], ms, g,
           copy_gbps > 0 ? 100.0 * g / copy_gbps : 0.0);
  }
  return 0;
}

int main(int argc, char **argv)
{
  char reason[256];
  if (argc == 3 && strcmp(argv[1], "--runs") == 0 && atoi(argv[2]) > 0)
    runs = atoi(argv[2]);
  else if (argc != 1) {
    fprintf(stderr, "usage: gpuimg_bench_reduce [--runs N]\n");
    return 2;
  }
  if (gpuimg_cuda_probe(reason, sizeof reason) <= 0) {
    printf("SKIP: no usable CUDA device: %s\n", reason);
    return 77;
  }
  gpuimg_cuda_t *ctx = gpuimg_cuda_create(-1);
  double copy_gbps = 0;
  if (!ctx || gpuimg_cuda_copy_bandwidth(ctx, (size_t)256 << 20, &copy_gbps) < 0) {
    fprintf(stderr, "gpuimg_bench_reduce: %s\n", gpuimg_error_message());
    return 1;
  }
  printf("## stats kernels on %s\n\n%d runs each (median, CUDA events: the kernels and the "
         "zeroing of the total); device-to-device copy: %.1f GB/s (read + written); GB/s here: "
         "bytes read.\n",
         gpuimg_cuda_device_name(ctx), runs, copy_gbps);
  image_t im[5];
  memset(im, 0, sizeof im);
  int rc = image_make(ctx, &im[0], "2^22 values", 2048, 2048, 1, 0) < 0 ||
                   image_make(ctx, &im[1], "2^25 values", 8192, 4096, 1, 0) < 0 ||
                   image_make(ctx, &im[2], "8K RGB", 7680, 4320, 3, 0) < 0 ||
                   image_make(ctx, &im[3], "8K RGB of one value", 7680, 4320, 3, 1) < 0 ||
                   image_make(ctx, &im[4], "8K RGB photo-like", 7680, 4320, 3, 2) < 0
               ? -1
               : 0;
  if (rc < 0)
    fprintf(stderr, "gpuimg_bench_reduce: %s\n", gpuimg_error_message());
  for (int i = 0; rc == 0 && i < 3; i++)
    rc = ladder(ctx, &im[i], copy_gbps);
  for (int i = 3; rc == 0 && i < 5; i++)
    rc = histograms(ctx, &im[i], copy_gbps);
  for (int i = 0; i < 5; i++)
    image_free(&im[i]);
  gpuimg_cuda_destroy(ctx);
  return rc < 0 ? 1 : 0;
}
