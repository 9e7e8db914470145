/* nvjpeg-bench.h: the clock and the status check shared by the stand-alone nvJPEG benchmark
 * programs (nvjpeg-rate.c, nvjpeg-setup.c); each defines BENCH_NAME, its name in messages,
 * before including it, and _POSIX_C_SOURCE (clock_gettime() under -std=c11) before any
 * system header. */
#ifndef NVJPEG_BENCH_H
#define NVJPEG_BENCH_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* Monotonic clock in milliseconds. */
static double now_ms(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* Exits with a message when a CUDA or nvJPEG status st (0: success) of what is not 0. */
static void check(int st, const char *what)
{
  if (st != 0) {
    fprintf(stderr, "%s: %s failed: status %d\n", BENCH_NAME, what, st);
    exit(1);
  }
}

#endif
