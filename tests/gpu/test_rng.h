/* test_rng.h: the gpu test programs' deterministic pseudo-random numbers (xorshift64), one
 * stream per program, so a failing case can be replayed. */
#ifndef GPUIMG_TEST_RNG_H
#define GPUIMG_TEST_RNG_H

#include <stdint.h>

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static inline uint32_t rng(void)
{
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (uint32_t)(rng_state >> 11);
}

#endif
