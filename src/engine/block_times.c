/* block_times.c: a recorded launch's blocks summed up: blocks per SM, measured waves, span. */
#include "block_times.h"

#include <stdlib.h>
#include <string.h>

#define MAX_SMS 4096

/* A block in its SM's order. */
typedef struct {
  unsigned sm;
  unsigned long long start;
  uint64_t index;
} ranked_t;

static int by_sm_then_start(const void *pa, const void *pb)
{
  const ranked_t *a = pa, *b = pb;
  if (a->sm != b->sm)
    return a->sm < b->sm ? -1 : 1;
  if (a->start != b->start)
    return a->start < b->start ? -1 : 1;
  return a->index < b->index ? -1 : a->index > b->index;
}

/* Whether every record has a start, an end not before it and a plausible SM; the SMs. */
static int usable(const gpuimg_block_time_t *b, uint64_t n, gpuimg_block_stats_t *st)
{
  st->t0 = ~0ULL;
  for (uint64_t i = 0; i < n; i++) {
    if (!b[i].start_ns || b[i].end_ns < b[i].start_ns || b[i].sm >= MAX_SMS)
      return 0;
    if ((int)b[i].sm + 1 > st->sms)
      st->sms = (int)b[i].sm + 1;
    st->t0 = b[i].start_ns < st->t0 ? b[i].start_ns : st->t0;
    st->t1 = b[i].end_ns > st->t1 ? b[i].end_ns : st->t1;
    st->last_start = b[i].start_ns > st->last_start ? b[i].start_ns : st->last_start;
  }
  return n > 0;
}

int gpuimg_block_stats(const gpuimg_block_time_t *b, uint64_t n, int blocks_per_sm,
                       gpuimg_block_stats_t *st)
{
  memset(st, 0, sizeof *st);
  if (!usable(b, n, st)) {
    memset(st, 0, sizeof *st);
    return 1;
  }
  unsigned per = blocks_per_sm > 0 ? (unsigned)blocks_per_sm : 1;
  ranked_t *r = malloc((size_t)n * sizeof *r);
  st->per_sm = calloc((size_t)st->sms, sizeof *st->per_sm);
  st->wave = malloc((size_t)n * sizeof *st->wave);
  st->slot = malloc((size_t)n * sizeof *st->slot);
  if (!r || !st->per_sm || !st->wave || !st->slot) {
    free(r);
    gpuimg_block_stats_free(st);
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, "", "out of memory");
    return -1;
  }
  for (uint64_t i = 0; i < n; i++)
    r[i] = (ranked_t){b[i].sm, b[i].start_ns, i};
  qsort(r, (size_t)n, sizeof *r, by_sm_then_start);
  for (uint64_t i = 0; i < n; i++) {
    unsigned rank = st->per_sm[r[i].sm]++;
    st->wave[r[i].index] = rank / per;
    st->slot[r[i].index] = rank % per;
    if (rank / per + 1 > st->waves)
      st->waves = rank / per + 1;
  }
  free(r);
  st->per_sm_min = ~0u;
  for (int s = 0; s < st->sms; s++)
    if (st->per_sm[s]) {
      st->per_sm_min = st->per_sm[s] < st->per_sm_min ? st->per_sm[s] : st->per_sm_min;
      st->per_sm_max = st->per_sm[s] > st->per_sm_max ? st->per_sm[s] : st->per_sm_max;
    }
  return 0;
}

void gpuimg_block_stats_free(gpuimg_block_stats_t *st)
{
  free(st->per_sm);
  free(st->wave);
  free(st->slot);
  memset(st, 0, sizeof *st);
}
