/* exif.h: an EXIF block's structure and Orientation tag, and the 8 exact pixel moves it names. */
#ifndef GPUIMG_EXIF_H
#define GPUIMG_EXIF_H

#include "base.h"

#include <stddef.h>
#include <stdint.h>

/* Checks the TIFF block p[0..n-1] of an EXIF segment or chunk (without "Exif\0\0"): NULL when
 * it is well formed, else why not (static text). Well formed: a TIFF header ("II" or "MM", 42);
 * IFD0 inside the block with all its entries and its next-IFD pointer; every value stored
 * outside an entry, and that pointer, inside the block; an Orientation (tag 0x0112), if any,
 * one SHORT 1..8. Only IFD0 is read: IFD pointers are never followed. *orientation gets the
 * Orientation (1 when none or malformed), *at the offset of its value in p (0 when none). */
const char *gpuimg_exif_check(const uint8_t *p, size_t n, int *orientation, size_t *at);

/* Writes Orientation o at offset at (from gpuimg_exif_check()) in the block's byte order. */
void gpuimg_exif_set_orientation(uint8_t *p, size_t at, int o);

/* Turns img in place so that it shows as EXIF orientation o (1..8) asks: 2 mirror, 3 rotate
 * 180, 4 flip, 5 transpose, 6 rotate 90 clockwise, 7 transverse, 8 rotate 270 clockwise
 * (5..8 swap width and height). Exact moves of 1..4-channel pixels; 1 (or any value outside
 * 2..8) leaves img as it is. img keeps owning its (new) pixels. 0, or -1 with the error set
 * (out of memory; img unchanged then). what names the image in the message. */
int gpuimg_image_orient(gpuimg_image_t *img, int o, const char *what);

#endif
