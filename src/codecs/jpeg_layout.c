/* jpeg_layout.c: walks a JPEG's header segment by segment, finds a sequential JPEG's restart
 * intervals in its bytes (the frame, the restart interval, the scan's start, then every RST
 * marker up to EOI), and counts the blocks its scans decode. */
#include "jpeg_layout.h"

#include <stdio.h>
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

size_t gpuimg_jpeg_scan_end(const uint8_t *d, size_t size, size_t pos)
{
  /* memchr() finds each 0xff (in coded data about one byte in 256): most of a JPEG's bytes
   * walked several times faster than one by one. */
  while (pos < size) {
    const uint8_t *ff = memchr(d + pos, 0xff, size - pos);
    if (!ff)
      return size;
    pos = (size_t)(ff - d) + 1; /* the byte after the 0xff */
    if (pos < size && d[pos] != 0 && d[pos] != 0xff && !(d[pos] >= 0xd0 && d[pos] <= 0xd7))
      return pos - 1;
  }
  return size;
}

/* The frame's components as the work counts them: their ids and blocks. */
typedef struct {
  int n;
  uint8_t id[255];
  uint64_t blocks[255];
  uint64_t largest;
} work_frame_t;

static int clamp_factor(int f)
{
  return f < 1 ? 1 : f > 4 ? 4 : f;
}

/* A start of frame's body b (n bytes): each component's 8x8 blocks; one component's are
 * its own (its scans are never interleaved), several components' in whole MCUs, as an
 * interleaved scan decodes them. Sampling factors outside 1..4 (which every decoder
 * refuses) count as the nearest. */
static void work_frame(const uint8_t *b, size_t n, work_frame_t *f, gpuimg_jpeg_work_t *w)
{
  uint64_t height = be16(b + 1), width = be16(b + 3), hmax = 1, vmax = 1;
  uint64_t h[255], v[255];
  f->n = b[5] < (n - 6) / 3 ? b[5] : (int)((n - 6) / 3);
  for (int i = 0; i < f->n; i++) {
    h[i] = f->n == 1 ? 1 : (uint64_t)clamp_factor(b[7 + 3 * i] >> 4);
    v[i] = f->n == 1 ? 1 : (uint64_t)clamp_factor(b[7 + 3 * i] & 15);
    hmax = h[i] > hmax ? h[i] : hmax;
    vmax = v[i] > vmax ? v[i] : vmax;
  }
  uint64_t mcu_x = (width + 8 * hmax - 1) / (8 * hmax),
           mcu_y = (height + 8 * vmax - 1) / (8 * vmax);
  for (int i = 0; i < f->n; i++) {
    f->id[i] = b[6 + 3 * i];
    f->blocks[i] = mcu_x * h[i] * mcu_y * v[i];
    f->largest = f->blocks[i] > f->largest ? f->blocks[i] : f->largest;
    w->blocks += f->blocks[i];
  }
}

/* A scan header's body b (n bytes): the blocks its components decode. A component counts as
 * the largest of the frame's of its id (ids should be unique; where they are not, decoders
 * match them each their own way), or as the largest of all when none has it. */
static uint64_t work_scan(const uint8_t *b, size_t n, const work_frame_t *f)
{
  uint64_t sum = 0;
  for (size_t k = 0; n >= 1 && k < b[0] && 2 + 2 * k <= n; k++) {
    uint64_t most = 0;
    int named = 0;
    for (int i = 0; i < f->n; i++)
      if (f->id[i] == b[1 + 2 * k]) {
        named = 1;
        most = f->blocks[i] > most ? f->blocks[i] : most;
      }
    sum += named ? most : f->largest;
  }
  return sum;
}

/* The offset of the next marker's code byte from pos, as libjpeg finds it: bytes other than
 * 0xff skipped, fill bytes swallowed, 0xff 0x00 skipped as data; size when there is none. */
static size_t next_marker(const uint8_t *d, size_t size, size_t pos)
{
  for (;;) {
    const uint8_t *ff = pos < size ? memchr(d + pos, 0xff, size - pos) : NULL;
    if (!ff)
      return size;
    pos = (size_t)(ff - d);
    while (pos < size && d[pos] == 0xff)
      pos++;
    if (pos >= size || d[pos] != 0)
      return pos;
    pos++;
  }
}

void gpuimg_jpeg_work(const uint8_t *d, size_t size, gpuimg_jpeg_work_t *w)
{
  work_frame_t f = {0};
  int framed = 0;
  memset(w, 0, sizeof *w);
  for (size_t p = next_marker(d, size, 2); p < size && w->scans <= GPUIMG_JPEG_MAX_SCANS;
       p = next_marker(d, size, p)) {
    int m = d[p++];
    if (m == 0xd9) /* EOI */
      break;
    if (m == 0x01 || (m >= 0xd0 && m <= 0xd8)) /* TEM, RSTn, SOI: no length */
      continue;
    size_t len = size - p >= 2 ? be16(d + p) : 0;
    if (size - p < 2 || len > size - p)
      break;       /* a decoder reads no further */
    if (len < 2) { /* libjpeg skips such a segment's length and reads on */
      p += 2;
      continue;
    }
    const uint8_t *b = d + p + 2;
    size_t n = len - 2;
    p += len;
    if (m >= 0xc0 && m <= 0xcf && m != 0xc4 && m != 0xc8 && m != 0xcc && !framed && n >= 6) {
      framed = 1;
      work_frame(b, n, &f, w);
    } else if (m == 0xda) {
      w->scans++;
      w->work += work_scan(b, n, &f);
      p = gpuimg_jpeg_scan_end(d, size, p);
    }
  }
  w->limit = GPUIMG_JPEG_WORK_PER_BLOCK * w->blocks + GPUIMG_JPEG_WORK_PER_BYTE * (uint64_t)size;
}

int gpuimg_jpeg_work_check(const gpuimg_jpeg_work_t *w, char *why, size_t why_size)
{
  if (w->scans > GPUIMG_JPEG_MAX_SCANS)
    snprintf(why, why_size, "more than %d scans (corrupt or hostile file)", GPUIMG_JPEG_MAX_SCANS);
  else if (w->work > w->limit)
    snprintf(why, why_size,
             "its %d scans decode %llu 8x8 blocks, over the limit of %llu (%d per block of the "
             "image and %d per byte of the file; corrupt or hostile file)",
             w->scans, (unsigned long long)w->work, (unsigned long long)w->limit,
             GPUIMG_JPEG_WORK_PER_BLOCK, GPUIMG_JPEG_WORK_PER_BYTE);
  else
    return 0;
  return -1;
}
