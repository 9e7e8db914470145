/* orientation.c: the CPU reference of the eight EXIF orientations: rows of the turned image. */
#include "orientation.h"

#include <string.h>

/* n pixels of c bytes to d, the first from s + at, each next one step bytes on (negative:
 * backwards); always inlined, so that each constant c gets its own loop of fixed-size copies. */
static inline __attribute__((always_inline)) void
move_row(uint8_t *d, const uint8_t *s, ptrdiff_t at, ptrdiff_t step, int n, size_t c)
{
  for (int x = 0; x < n; x++, d += c, at += step)
    memcpy(d, s + at, c);
}

/* Where the orientation swaps the axes, a row of the result is a column of the source: the
 * result is then made in blocks of BLOCK x BLOCK pixels, each reading BLOCK source rows that stay
 * in the cache for its next rows (about twice as fast as whole rows on a 4000x3000 image). */
enum { BLOCK = 32 };

void gpuimg_orientation_rows(int o, const gpuimg_image_t *src, gpuimg_image_t *dst, int y0, int y1)
{
  gpuimg_orientation_t t = gpuimg_orientation_make(o, src->width, src->height);
  size_t c = (size_t)src->channels;
  /* Along a row of the result the source moves one pixel (no swap) or one row (swap). */
  ptrdiff_t px = t.swap ? (ptrdiff_t)src->width : 1;
  ptrdiff_t step = (ptrdiff_t)c * ((t.swap ? t.mirror_y : t.mirror_x) ? -px : px);
  int block = t.swap ? BLOCK : t.out_w;
  for (int yb = y0; yb < y1; yb += BLOCK)
    for (int xb = 0; xb < t.out_w; xb += block) {
      int n = t.out_w - xb < block ? t.out_w - xb : block;
      for (int y = yb; y < y1 && y < yb + BLOCK; y++) {
        int sx, sy;
        gpuimg_orientation_source(t, xb, y, &sx, &sy);
        ptrdiff_t at = (ptrdiff_t)(((size_t)sy * (size_t)src->width + (size_t)sx) * c);
        uint8_t *d = dst->data + ((size_t)y * (size_t)t.out_w + (size_t)xb) * c;
        switch (c) {
        case 1:
          move_row(d, src->data, at, step, n, 1);
          break;
        case 2:
          move_row(d, src->data, at, step, n, 2);
          break;
        case 3:
          move_row(d, src->data, at, step, n, 3);
          break;
        default:
          move_row(d, src->data, at, step, n, 4);
          break;
        }
      }
    }
}
