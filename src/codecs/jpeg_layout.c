/* jpeg_layout.c: walks a JPEG's header segment by segment, and finds a sequential JPEG's
 * restart intervals in its bytes (the frame, the restart interval, the scan's start, then
 * every RST marker up to EOI). */
#include "jpeg_layout.h"

#include <stdlib.h>
#include <string.h>

static unsigned be16(const uint8_t *p)
{
  return (unsigned)p[0] << 8 | p[1];
}

int gpuimg_jpeg_segment(const uint8_t *d, size_t size, size_t *pos, gpuimg_jpeg_segment_t *seg)
{
  size_t p = *pos;
  while (p + 1 < size && d[p] == 0xff && d[p + 1] == 0xff)
    p++; /* fill bytes before the marker */
  if (p + 2 > size || d[p] != 0xff)
    return 0;
  int m = d[p + 1];
  *seg = (gpuimg_jpeg_segment_t){.marker = m, .at = p};
  if (m == 0x00 || m == 0x01 || (m >= 0xd0 && m <= 0xd9)) {
    *pos = p + 2;
    return 1;
  }
  size_t len = p + 4 <= size ? be16(d + p + 2) : 0;
  if (len < 2 || len > size - p - 2)
    return 0;
  seg->body = d + p + 4;
  seg->size = len - 2;
  *pos = p + 2 + len;
  return 1;
}

/* The frame header (SOF0 or SOF1) of segment length len at p: the size, the components and
 * the MCU. 0 when it is not one this layout serves. */
static int read_frame(const uint8_t *d, size_t p, size_t len, gpuimg_jpeg_layout_t *l)
{
  if (len < 8 || d[p + 4] != 8)
    return 0; /* 12-bit samples */
  l->height = (int)be16(d + p + 5);
  l->width = (int)be16(d + p + 7);
  l->components = d[p + 9];
  int nc = l->components, maxh = 1, maxv = 1, minv = 4;
  if ((nc != 1 && nc != 3) || len != 8 + 3 * (size_t)nc || !l->width || !l->height)
    return 0;
  for (int i = 0; i < nc; i++) {
    int h = d[p + 11 + 3 * i] >> 4, v = d[p + 11 + 3 * i] & 15;
    if (h < 1 || h > 4 || v < 1 || v > 4)
      return 0;
    maxh = h > maxh ? h : maxh;
    maxv = v > maxv ? v : maxv;
    minv = v < minv ? v : minv;
  }
  if (nc == 1) /* one component is not interleaved: its MCU is one 8x8 block */
    maxh = maxv = minv = 1;
  l->mcu_w = 8 * maxh;
  l->mcu_h = 8 * maxv;
  l->vertical_ctx = minv < maxv;
  l->sof = p;
  return 1;
}

/* Walks the header to the scan: its frame, its restart interval (returned; 0 for none) and
 * the offset of its entropy-coded data. 0 for a file this layout does not serve. */
static unsigned read_header(const uint8_t *d, size_t size, gpuimg_jpeg_layout_t *l)
{
  unsigned dri = 0;
  int frame = 0;
  gpuimg_jpeg_segment_t s;
  for (size_t p = 2;;) {
    /* A marker without a length (RSTn, SOI, EOI, TEM) or FF 00, which libjpeg skips as junk
     * and reads on from: not a header this layout can follow. */
    if (!gpuimg_jpeg_segment(d, size, &p, &s) || !s.body)
      return 0;
    int m = s.marker;
    if (m == 0xc0 || m == 0xc1) {
      if (frame++ || !read_frame(d, s.at, s.size + 2, l))
        return 0;
    } else if ((m >= 0xc2 && m <= 0xcf && m != 0xc4) || (m == 0xdd && s.size != 2)) {
      return 0; /* progressive, lossless, arithmetic or hierarchical; a bad DRI */
    } else if (m == 0xdd) {
      dri = be16(s.body);
    } else if (m == 0xda) {
      l->data = p;
      return frame && s.size >= 1 && s.body[0] == l->components ? dri : 0;
    }
  }
}

/* Finds the RST markers in the scan, in order, and EOI after the last interval. */
static int find_intervals(const uint8_t *d, size_t size, gpuimg_jpeg_layout_t *l)
{
  int k = 0;
  size_t i = l->data;
  l->start[0] = i;
  for (;;) {
    const uint8_t *ff = memchr(d + i, 0xff, size - i);
    if (!ff)
      return 0;
    size_t at = (size_t)(ff - d), j = at + 1;
    while (j < size && d[j] == 0xff)
      j++;
    if (j >= size)
      return 0;
    if (d[j] == 0x00) { /* a stuffed 0xff data byte */
      i = j + 1;
      continue;
    }
    if (d[j] == 0xd9 && k == l->n - 1) {
      l->end[k] = at;
      return 1;
    }
    if (d[j] != 0xd0 + (k & 7) || k + 1 >= l->n)
      return 0; /* another marker, an RST out of order, or too many intervals */
    l->end[k++] = at;
    l->start[k] = i = j + 1;
  }
}

int gpuimg_jpeg_layout(const uint8_t *d, size_t size, uint64_t min_pixels, gpuimg_jpeg_layout_t *l)
{
  memset(l, 0, sizeof *l);
  if (size < 4 || d[0] != 0xff || d[1] != 0xd8)
    return 0;
  unsigned dri = read_header(d, size, l);
  if (!dri || (uint64_t)l->width * (uint64_t)l->height < min_pixels)
    return 0;
  unsigned per_row = ((unsigned)l->width + (unsigned)l->mcu_w - 1) / (unsigned)l->mcu_w;
  if (dri % per_row)
    return 0; /* intervals that start inside a row of MCUs */
  l->interval_rows = (int)(dri / per_row) * l->mcu_h;
  l->n = (l->height + l->interval_rows - 1) / l->interval_rows;
  if (l->n < 2)
    return 0;
  l->start = malloc(2 * (size_t)l->n * sizeof *l->start);
  if (!l->start)
    return 0;
  l->end = l->start + l->n;
  if (!find_intervals(d, size, l)) {
    gpuimg_jpeg_layout_free(l);
    return 0;
  }
  return 1;
}

void gpuimg_jpeg_layout_free(gpuimg_jpeg_layout_t *l)
{
  free(l->start);
  l->start = l->end = NULL;
}
