/* test_stats.c: the stats operation's arithmetic past 32 bits: an image whose channel sums pass
 * 2^32 through the library (the report's figures), the figures of a histogram with counts past
 * 2^32, the standard deviation's formula, and a dataset's total. */
#define TEST_NAME "test_stats"
#include "test_fail.h"
#include "gpuimg.h"
#include "stats_cpu.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A 4096 x 4096 RGBA image of 255: each channel's sum is 255 * 2^24 = 4278190080 > 2^32 - 1, the
 * sum of all its values 4 times that; the engine's report must carry them whole. */
static void sums_past_32_bits(void)
{
  const int side = 4096;
  gpuimg_image_t src, dst;
  if (gpuimg_image_alloc(&src, side, side, 4) < 0)
    fail("cannot allocate the image: %s", gpuimg_error_message());
  memset(src.data, 255, gpuimg_image_bytes(side, side, 4));
  gpuimg_stats_t s;
  gpuimg_stats_cpu(&src, &s);
  const uint64_t n = (uint64_t)1 << 24;
  for (int k = 0; k < 4; k++)
    if (s.ch[k].count != n || s.ch[k].sum != 255 * n || s.ch[k].sum_squares != 65025 * n ||
        s.ch[k].min != 255 || s.ch[k].max != 255 || s.ch[k].histogram[255] != n ||
        gpuimg_stats_mean(&s.ch[k]) != 255.0 || gpuimg_stats_std(&s.ch[k]) != 0.0)
      fail("channel %d: count %llu sum %llu sum_squares %llu", k, (unsigned long long)s.ch[k].count,
           (unsigned long long)s.ch[k].sum, (unsigned long long)s.ch[k].sum_squares);
  gpuimg_context_t *ctx = gpuimg_context_create(GPUIMG_BACKEND_CPU);
  if (!ctx || gpuimg_context_add(ctx, "stats") < 0 || gpuimg_context_process(ctx, &src, &dst) < 0)
    fail("stats through the library: %s", gpuimg_error_message());
  if (memcmp(dst.data, src.data, gpuimg_image_bytes(side, side, 4)) != 0)
    fail("stats changed the image");
  char *rep = gpuimg_context_report(ctx);
  const char *want = "\"count\":16777216,\"sum\":4278190080,\"sum_squares\":1090938470400,"
                     "\"min\":255,\"max\":255,\"mean\":255,\"std\":0,";
  if (!rep || !strstr(rep, want))
    fail("the report lacks %s", want);
  free(rep);
  gpuimg_context_destroy(ctx);
  gpuimg_image_free(&dst);
  gpuimg_image_free(&src);
}

/* Counts a uint32_t cannot hold: 2^33 + 1 values of 255 and 3 * 2^32 of 1. */
static void histogram_past_32_bits(void)
{
  gpuimg_channel_stats_t ch;
  memset(&ch, 0, sizeof ch);
  uint64_t a = ((uint64_t)1 << 33) + 1, b = (uint64_t)3 << 32;
  ch.histogram[255] = a;
  ch.histogram[1] = b;
  gpuimg_stats_from_histogram(&ch);
  if (ch.count != a + b || ch.sum != 255 * a + b || ch.sum_squares != 65025 * a + b ||
      ch.min != 1 || ch.max != 255)
    fail("from a histogram: count %llu sum %llu sum_squares %llu min %u max %u",
         (unsigned long long)ch.count, (unsigned long long)ch.sum,
         (unsigned long long)ch.sum_squares, ch.min, ch.max);
  /* The variance's numerator, n * sumsq - sum^2, is past 2^64 here: 128-bit arithmetic. */
  double n = (double)(a + b), p = (double)a / n;
  double want = 254.0 * sqrt(p * (1 - p)); /* two values 254 apart, shares p and 1 - p */
  if (fabs(gpuimg_stats_std(&ch) - want) > 1e-9 * want)
    fail("std %.17g, expected %.17g", gpuimg_stats_std(&ch), want);
}

/* The population standard deviation of 2, 4, 4, 4, 5, 5, 7, 9 is 2 (mean 5). */
static void std_definition(void)
{
  gpuimg_channel_stats_t ch;
  memset(&ch, 0, sizeof ch);
  ch.histogram[2] = 1, ch.histogram[4] = 3, ch.histogram[5] = 2, ch.histogram[7] = 1;
  ch.histogram[9] = 1;
  gpuimg_stats_from_histogram(&ch);
  if (gpuimg_stats_mean(&ch) != 5.0 || gpuimg_stats_std(&ch) != 2.0)
    fail("mean %.17g std %.17g, expected 5 and 2", gpuimg_stats_mean(&ch), gpuimg_stats_std(&ch));
  memset(&ch, 0, sizeof ch);
  if (gpuimg_stats_mean(&ch) != 0.0 || gpuimg_stats_std(&ch) != 0.0)
    fail("the empty channel's mean and std are not 0");
}

/* A dataset's total: a gray image and an RGB one; channel 0 over both, 1 and 2 over the RGB. */
static void dataset_total(void)
{
  gpuimg_stats_t total, one;
  memset(&total, 0, sizeof total);
  memset(&one, 0, sizeof one);
  one.channels = 1;
  one.ch[0].histogram[10] = 4;
  gpuimg_stats_from_histogram(&one.ch[0]);
  gpuimg_stats_add(&total, &one);
  one.channels = 3;
  for (int k = 0; k < 3; k++) {
    memset(&one.ch[k], 0, sizeof one.ch[k]);
    one.ch[k].histogram[20 + k] = 2;
    gpuimg_stats_from_histogram(&one.ch[k]);
  }
  gpuimg_stats_add(&total, &one);
  if (total.channels != 3 || total.ch[0].count != 6 || total.ch[0].sum != 80 ||
      total.ch[0].min != 10 || total.ch[0].max != 20 || total.ch[1].count != 2 ||
      total.ch[2].min != 22 || total.ch[0].histogram[10] != 4 || total.ch[0].histogram[20] != 2)
    fail("dataset total: channels %d, channel 0 count %llu sum %llu", total.channels,
         (unsigned long long)total.ch[0].count, (unsigned long long)total.ch[0].sum);
}

int main(void)
{
  sums_past_32_bits();
  histogram_past_32_bits();
  std_definition();
  dataset_total();
  return 0;
}
