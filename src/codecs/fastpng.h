/* fastpng.h: fastpng's PNG reader (fastpng_read.c), which the fastpng codec (fastpng.c)
 * declares as its decoder. */
#ifndef GPUIMG_FASTPNG_H
#define GPUIMG_FASTPNG_H

#include "codec.h"

/* 1 when bytes are a PNG the reader decodes itself: 8-bit, not interlaced, gray, gray+alpha,
 * RGB or RGBA, without PLTE, tRNS or an unknown critical chunk, its chunks whole up to IEND. */
int gpuimg_fastpng_reads(const uint8_t *bytes, size_t size);

/* Decodes such a PNG (the codec's decode); any other bytes, and one it finds corrupt or over
 * max_pixels, get stb's decode and verdict. */
int gpuimg_fastpng_read(const uint8_t *bytes, size_t size, const char *what, uint64_t max_pixels,
                        gpuimg_image_t *out);

#endif
