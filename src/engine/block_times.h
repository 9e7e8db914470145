/* block_times.h: a recorded launch's blocks (--explain-image on a device) summed up: the blocks
 * each SM ran, each block's measured wave and the launch's span. */
#ifndef GPUIMG_BLOCK_TIMES_H
#define GPUIMG_BLOCK_TIMES_H

#include "run.h"

typedef struct {
  int sms;          /* SMs: the highest SM index a block ran on + 1 */
  unsigned *per_sm; /* blocks each SM ran (sms of them; malloc'd) */
  /* Each block's wave: its rank among its SM's blocks by start, over the blocks an SM holds
   * at once (malloc'd, one per block). */
  unsigned *wave;
  unsigned *slot; /* each block's rank among its SM's blocks modulo the blocks an SM holds */
  unsigned waves; /* the measured waves: the most an SM ran */
  unsigned long long t0, t1;       /* the first start and the last end (ns) */
  unsigned long long last_start;   /* the last block's start (ns) */
  unsigned per_sm_min, per_sm_max; /* the fewest and most blocks an SM ran (of those that ran) */
} gpuimg_block_stats_t;

/* The stats of n blocks b, an SM holding blocks_per_sm at once (0: unknown, taken as 1): 0; 1
 * when the records are not usable (a block without both times, an end before its start, an
 * SM index over 4095), the stats then empty; -1 with the error set (out of memory). Free with
 * gpuimg_block_stats_free(). */
int gpuimg_block_stats(const gpuimg_block_time_t *b, uint64_t n, int blocks_per_sm,
                       gpuimg_block_stats_t *st);
void gpuimg_block_stats_free(gpuimg_block_stats_t *st);

#endif
