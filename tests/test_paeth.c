/* test_paeth.c: fastpng's Paeth filter (filter_row, with its 8-bit SIMD path) against the PNG
 * specification's predictor in plain integers: every (left, above, upper-left) triple, and
 * random rows of every length up to 100 bytes at 1 to 4 bytes per pixel. */
#include "fastpng.c" /* its static filter_row */

#include <stdio.h>

/* The specification's Paeth predictor (PNG 9.4). */
static int paeth(int a, int b, int c)
{
  int p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

/* The filtered row as the specification computes it (type byte 4 first). */
static void reference(const uint8_t *row, const uint8_t *prev, size_t len, size_t bpp, uint8_t *dst)
{
  dst[0] = 4;
  for (size_t i = 0; i < len; i++) {
    int a = i >= bpp ? row[i - bpp] : 0, c = i >= bpp ? prev[i - bpp] : 0;
    dst[1 + i] = (uint8_t)(row[i] - paeth(a, prev[i], c));
  }
}

/* All 2^24 triples: 16 bytes per pixel, so that each of a row's 16 lanes (the second pixel)
 * has its own left, above and upper-left byte. */
static long all_triples(void)
{
  uint8_t row[32], prev[32], got[33], want[33];
  long bad = 0;
  for (int a = 0; a < 256; a++)
    for (int b = 0; b < 256; b++)
      for (int c0 = 0; c0 < 256; c0 += 16) {
        for (int l = 0; l < 16; l++) {
          row[l] = (uint8_t)a;
          prev[l] = (uint8_t)(c0 + l);
          prev[16 + l] = (uint8_t)b;
          row[16 + l] = (uint8_t)(a + 17 * l);
        }
        filter_row(row, prev, 32, 16, 1, got);
        reference(row, prev, 32, 16, want);
        bad += memcmp(got + 17, want + 17, 16) != 0;
      }
  return bad;
}

static long random_rows(void)
{
  uint8_t row[100], prev[100], got[101], want[101];
  unsigned state = 12345;
  long bad = 0;
  for (int rep = 0; rep < 200; rep++)
    for (size_t len = 1; len <= 100; len++)
      for (size_t bpp = 1; bpp <= 4; bpp++) {
        for (size_t i = 0; i < len; i++) {
          state = state * 1103515245u + 12345u;
          row[i] = (uint8_t)(state >> 16);
          prev[i] = (uint8_t)(state >> 24);
        }
        filter_row(row, prev, len, (int)bpp, 1, got);
        reference(row, prev, len, bpp, want);
        bad += memcmp(got, want, len + 1) != 0;
      }
  return bad;
}

int main(void)
{
  long triples = all_triples(), rows = random_rows();
  printf("paeth: %ld of 1048576 sets of 16 triples differ, %ld of 80000 random rows differ\n",
         triples, rows);
  return triples || rows ? 1 : 0;
}
