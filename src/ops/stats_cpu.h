/* stats_cpu.h: the stats operation's CPU reference and the arithmetic of its figures (means,
 * standard deviations, totals over images), for the engine's clients and the tests. */
#ifndef GPUIMG_STATS_CPU_H
#define GPUIMG_STATS_CPU_H

#include "base.h"
#include "stats.h"

/* src's figures per channel into *out (every field). 0 (it cannot fail on a valid image). */
int gpuimg_stats_cpu(const gpuimg_image_t *src, gpuimg_stats_t *out);

/* A channel's count, sum, sum of squares, minimum and maximum from its histogram alone (all
 * 64-bit: exact for any count a uint64_t holds with its sums). */
void gpuimg_stats_from_histogram(gpuimg_channel_stats_t *ch);

/* The mean, sum / count, and the population standard deviation,
 * sqrt((count * sum_squares - sum^2) / count^2), the numerator exact in 128-bit integers, then
 * one rounding to double, one division and one square root (IEEE, round to nearest); 0 for
 * count 0. */
double gpuimg_stats_mean(const gpuimg_channel_stats_t *ch);
double gpuimg_stats_std(const gpuimg_channel_stats_t *ch);

/* Adds one image's figures to a total (a dataset's): counts, sums and bins added, minimum and
 * maximum kept; channel k over the images that have it (total->channels the most seen). A
 * zeroed total is the empty one. */
void gpuimg_stats_add(gpuimg_stats_t *total, const gpuimg_stats_t *one);

/* The figures as a JSON object {"channels": [{"count", "sum", "sum_squares", "min", "max",
 * "mean", "std", "histogram": [256]}, ...]}: integers in full (decimal), mean and std with the
 * digits that give the same double back. malloc'd text; NULL when out of memory. */
char *gpuimg_stats_json(const gpuimg_stats_t *s);

/* The figures back from gpuimg_stats_json()'s text: each channel's histogram (integers up to
 * 2^53, which a JSON reader holds exactly), the rest computed from it again. 0, or -1 when the
 * text is not such an object. */
int gpuimg_stats_parse(const char *json, gpuimg_stats_t *s);

#endif
