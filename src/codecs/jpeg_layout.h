/* jpeg_layout.h: a JPEG's layout read from its markers alone: its header's segments (the one
 * walk of them for the codecs and the metadata), where a sequential JPEG's restart intervals
 * lie, so that a decoder can start at any interval (libjpeg.c decodes in bands), and the
 * decoding work its scans ask for, which both JPEG decoders bound before they start. */
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

/* Where a scan's entropy-coded data, from pos, ends: at the next marker, 0xff followed by
 * neither a stuffed 0, a fill byte nor a restart marker; size when there is none. */
size_t gpuimg_jpeg_scan_end(const uint8_t *d, size_t size, size_t pos);

/* A decoder passes over the blocks of a scan's components once per scan (a progressive one
 * keeps every coefficient and refines it scan after scan), so a few hundred bytes of scan
 * that code nothing but end-of-band runs can cost a pass over a whole large image. The
 * scans together may decode at most GPUIMG_JPEG_WORK_PER_BLOCK times the image's blocks
 * plus GPUIMG_JPEG_WORK_PER_BYTE blocks per byte of the file (libjpeg's progressive files
 * decode each block at most 6 times; one whose scans carry more data pays for them with its
 * bytes), and a file may hold at most GPUIMG_JPEG_MAX_SCANS scans (libjpeg-turbo's
 * TurboJPEG refuses more too): each scan also costs its set-up. */
#define GPUIMG_JPEG_WORK_PER_BLOCK 16
#define GPUIMG_JPEG_WORK_PER_BYTE 4
#define GPUIMG_JPEG_MAX_SCANS 500

typedef struct {
  int scans;       /* the scans read (SOS segments), up to GPUIMG_JPEG_MAX_SCANS + 1 */
  uint64_t blocks; /* the image's 8x8 blocks: every component's, in whole MCUs when there
                      are several (0 without a frame) */
  uint64_t work;   /* the blocks the scans decode: each scan's components' blocks, summed */
  uint64_t limit;  /* the most work allowed: see GPUIMG_JPEG_WORK_PER_BLOCK */
} gpuimg_jpeg_work_t;

/* Reads the work the scans of the JPEG d (size bytes) ask for into w, its markers read as
 * libjpeg reads them (the most lenient reader here: bytes between segments, 0xff 0x00 there
 * and a length under 2 are read past, so that no scan a decoder reads is missed), up to EOI,
 * a length past the end or the scan past GPUIMG_JPEG_MAX_SCANS. A scan's component counts
 * the blocks of the largest of the frame's components of its id, or of all of them when
 * none has it. */
void gpuimg_jpeg_work(const uint8_t *d, size_t size, gpuimg_jpeg_work_t *w);

/* 0 when w is within its limits; -1 with why set to the reason: "more than 500 scans (corrupt
 * or hostile file)", or the work and the limit. */
int gpuimg_jpeg_work_check(const gpuimg_jpeg_work_t *w, char *why, size_t why_size);

#endif
