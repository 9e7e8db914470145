/* webp_layout.h: a WebP file's RIFF chunks: where its metadata lies, and the extended (VP8X)
 * form that carries an ICC profile and EXIF, written by hand so that no WebP library is
 * needed to read or write them. */
#ifndef GPUIMG_WEBP_LAYOUT_H
#define GPUIMG_WEBP_LAYOUT_H

#include "buf.h"

/* What a WebP's chunks say besides the image: each pointer into the file (NULL: none). */
typedef struct {
  const uint8_t *icc; /* the first ICCP chunk's payload */
  size_t icc_size;
  const uint8_t *exif; /* the first EXIF chunk's payload (its "Exif\0\0", if any, skipped) */
  size_t exif_size;
  int animated; /* the VP8X header's animation flag */
} gpuimg_webp_chunks_t;

/* Walks the chunks of a WebP file (b, n) that lie whole inside it, up to one that does not. */
void gpuimg_webp_chunks(const uint8_t *b, size_t n, gpuimg_webp_chunks_t *c);

/* Rewrites enc, a still WebP as libwebp writes it (a VP8 or VP8L chunk, or VP8X with ALPH and
 * VP8), into the extended form with an ICCP chunk holding icc (NULL: none) before the image
 * and an EXIF chunk holding exif (NULL: none) after it, the VP8X flags and canvas set. 1 when
 * done, 0 when enc is not such a file or has metadata already (left as it was), -1 out of
 * memory (enc as it was). */
int gpuimg_webp_add_chunks(gpuimg_buf_t *enc, const uint8_t *icc, size_t icc_size,
                           const uint8_t *exif, size_t exif_size);

#endif
