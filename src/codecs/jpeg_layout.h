/* jpeg_layout.h: where a sequential JPEG's restart intervals lie in its file, read from its
 * markers alone, so that a decoder can start at any interval (libjpeg.c decodes in bands). */
#ifndef GPUIMG_JPEG_LAYOUT_H
#define GPUIMG_JPEG_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

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
