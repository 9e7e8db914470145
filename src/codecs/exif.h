/* exif.h: the EXIF Orientation tag of a JPEG or PNG file, and the 8 exact pixel moves it names. */
#ifndef GPUIMG_EXIF_H
#define GPUIMG_EXIF_H

#include "base.h"

#include <stddef.h>
#include <stdint.h>

/* The Orientation (tag 0x0112) in IFD0 of a JPEG's first APP1 "Exif\0\0" segment or a PNG's
 * eXIf chunk (before IDAT): 1..8. 1 when there is none, or when the block is malformed
 * (offsets or counts past its end, a wrong type, a value out of range): such a block is
 * ignored, never read past its end. Reads only IFD0: IFD pointers are never followed. */
int gpuimg_exif_orientation(const uint8_t *bytes, size_t size);

/* Turns img in place so that it shows as EXIF orientation o (1..8) asks: 2 mirror, 3 rotate
 * 180, 4 flip, 5 transpose, 6 rotate 90 clockwise, 7 transverse, 8 rotate 270 clockwise
 * (5..8 swap width and height). Exact moves of 1..4-channel pixels; 1 (or any value outside
 * 2..8) leaves img as it is. img keeps owning its (new) pixels. 0, or -1 with the error set
 * (out of memory; img unchanged then). what names the image in the message. */
int gpuimg_image_orient(gpuimg_image_t *img, int o, const char *what);

#endif
