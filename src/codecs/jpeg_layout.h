/* jpeg_layout.h: a JPEG's layout read from its markers alone: its header's segments (the one
 * walk of them for the codecs and the metadata), and where a sequential JPEG's restart intervals
 * lie, so that a decoder can start at any interval (libjpeg.c decodes in bands). */
#ifndef GPUIMG_JPEG_LAYOUT_H
#define GPUIMG_JPEG_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

/* One marker segment of a JPEG's header. */
typedef struct {
  int marker;          /* the byte after 0xff */
  size_t at;           /* the offset of its 0xff */
  const uint8_t *body; /* what follows its length; NULL for a marker without one */
  size_t size;         /* body's bytes (0 without) */
} gpuimg_jpeg_segment_t;

/* The segment whose marker is at *pos in the JPEG d of size bytes (2, after SOI, to begin),
 * fill bytes (0xff) before the marker skipped: 1 with *pos moved past it; 0 when no marker is
 * there, or its length is under 2 or runs past size. RSTn, SOI, EOI, TEM (0x01) and 0xff 0x00
 * have no length: body NULL. */
int gpuimg_jpeg_segment(const uint8_t *d, size_t size, size_t *pos, gpuimg_jpeg_segment_t *seg);

/* A JPEG of one interleaved Huffman scan (SOF0 or SOF1, 8-bit, 1 or 3 components) whose
 * restart interval is a whole number of MCU rows, and each interval's entropy-coded bytes. */
typedef struct {
  int width, height, components;
  int mcu_w, mcu_h;    /* an MCU's size in pixels (8, or 8 x the largest sampling factors) */
  int interval_rows;   /* pixel rows per restart interval (the last may hold fewer) */
  int vertical_ctx;    /* a component is subsampled vertically: its upsampling reads the
                          rows of the neighbouring MCU rows */
  size_t sof;          /* the SOF marker's offset (its height is at sof + 5) */
  size_t data;         /* the first byte of entropy-coded data (after SOS) */
  int n;               /* restart intervals */
  size_t *start, *end; /* n each: interval k is bytes [start[k], end[k]); end[k] is its RST
                          marker (fill bytes included), or EOI for the last */
} gpuimg_jpeg_layout_t;

/* Reads the layout of the JPEG in d (size bytes) of at least min_pixels pixels (a smaller
 * one is not scanned for its markers). 1: it has one (free it with gpuimg_jpeg_layout_free());
 * 0: it is not such a file (smaller, no restart markers, not at whole MCU rows, progressive,
 * arithmetic, a header libjpeg would read otherwise, damaged, out of memory...): decode it
 * whole. */
int gpuimg_jpeg_layout(const uint8_t *d, size_t size, uint64_t min_pixels, gpuimg_jpeg_layout_t *l);

void gpuimg_jpeg_layout_free(gpuimg_jpeg_layout_t *l);

#endif
