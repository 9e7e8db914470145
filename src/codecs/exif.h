/* exif.h: an EXIF block's structure, the tags gpuimg rewrites, and the 8 exact pixel moves. */
#ifndef GPUIMG_EXIF_H
#define GPUIMG_EXIF_H

#include "base.h"
#include "buf.h"

#include <stddef.h>
#include <stdint.h>

/* Where the values gpuimg rewrites lie in an EXIF block: offsets of their value fields in it
 * (0: none), inside the entries of IFD0 and of the Exif IFD. */
typedef struct {
  int orientation;       /* the Orientation, 1..8 (1: none) */
  size_t orientation_at; /* its value (one SHORT) */
  size_t size_at[2];     /* PixelXDimension (0xA002), PixelYDimension (0xA003) */
} gpuimg_exif_tags_t;

/* Checks the TIFF block p[0..n-1] of an EXIF segment or chunk (without "Exif\0\0"): NULL when
 * it is well formed, else why not (static text). Well formed: a TIFF header ("II" or "MM", 42);
 * IFD0 inside the block with all its entries and its next-IFD pointer; every value stored
 * outside an entry, and that pointer, inside the block; an Orientation (tag 0x0112), if any,
 * one SHORT 1..8. tags gets where the Orientation lies (1 and 0 when none or malformed) and,
 * from the Exif IFD that IFD0's tag 0x8769 (one LONG or IFD) points to, where the pixel dimensions
 * lie (each one SHORT or LONG). The Exif IFD is the one pointer followed, once: it is read
 * when it passes IFD0's checks and is IFD0 itself or overlaps no byte of it; else (and for a
 * dimension of another type or count) the dimensions are not found, which is no fault of
 * the block. */
const char *gpuimg_exif_check(const uint8_t *p, size_t n, gpuimg_exif_tags_t *tags);

/* What a TIFF file's first directory (IFD0) says besides its pixels, for the metadata. */
typedef struct {
  size_t icc_at, icc_size; /* its ICC profile (tag 0x8773, BYTE or UNDEFINED) in the file;
                              icc_size 0: none */
  int bits;                /* its first BitsPerSample (1 when absent) */
  int more_pages;          /* its next-directory pointer is not 0: more pages follow */
} gpuimg_tiff_ifd0_t;

/* Reads a TIFF file's IFD0 as gpuimg_exif_check() checks an EXIF block (the same rules: a
 * whole TIFF file is one), into tags (its Orientation: where it lies is of no use, so
 * orientation_at and the pixel dimensions are left 0) and ifd0. NULL, or why it is malformed
 * (static text; ifd0 zeroed then, tags as none). */
const char *gpuimg_tiff_ifd0(const uint8_t *p, size_t n, gpuimg_exif_tags_t *tags,
                             gpuimg_tiff_ifd0_t *ifd0);

/* Adds to a TIFF file (enc, classic TIFF as an encoder wrote it) an ICC profile: the profile
 * and a copy of IFD0 with the InterColorProfile entry among its own are appended, and the
 * header points to the copy. *gray gets whether the file's PhotometricInterpretation is gray
 * (0 or 1), so that the caller can tell whether the profile fits; with check only, nothing
 * is added. 1 when added (or, with check, when it could be), 0 when enc is not such a file
 * or has a profile, -1 out of memory. */
int gpuimg_tiff_add_icc(gpuimg_buf_t *enc, const uint8_t *icc, size_t n, int check, int *gray);

/* Sets the Orientation entry (one SHORT) of a TIFF file's IFD0 (enc, as an encoder wrote it)
 * to o (1..8); 1 when set, 0 when enc has none or is not such a file. */
int gpuimg_tiff_set_orientation(gpuimg_buf_t *enc, int o);

/* The EXIF of a TIFF file (p[0..n-1]) as an EXIF block, appended to out: a TIFF block in the
 * file's byte order whose IFD0 holds the descriptive tags IFD0 shares with Exif
 * (ImageDescription, Make, Model, Orientation, Software, DateTime, Artist, Copyright) and
 * pointers to copies of the Exif IFD (IFD0's tag 0x8769) and of the GPS IFD (0x8825, when well
 * formed), with their values; pointers to further directories (Interoperability) are left
 * out, a MakerNote is copied as it is. Nothing when the file has no Exif IFD or is not read
 * by gpuimg_tiff_ifd0(); *why says why none was made from a malformed Exif IFD or one whose
 * block would be over limit bytes (static text; NULL otherwise). 0, or -1 out of memory. */
int gpuimg_tiff_exif(const uint8_t *p, size_t n, size_t limit, gpuimg_buf_t *out, const char **why);

/* Writes Orientation o where tags found it (nothing when none), in the block's byte order. */
void gpuimg_exif_set_orientation(uint8_t *p, const gpuimg_exif_tags_t *tags, int o);

/* Writes width and height into the pixel dimensions tags found, in the block's byte order;
 * a SHORT too small for its new value becomes a LONG (Exif allows either; the entry's 4
 * value bytes hold it). */
void gpuimg_exif_set_size(uint8_t *p, const gpuimg_exif_tags_t *tags, int width, int height);

/* Turns img in place so that it shows as EXIF orientation o (1..8) asks: 2 mirror, 3 rotate
 * 180, 4 flip, 5 transpose, 6 rotate 90 clockwise, 7 transverse, 8 rotate 270 clockwise
 * (5..8 swap width and height). Exact moves of 1..4-channel pixels; 1 (or any value outside
 * 2..8) leaves img as it is. img keeps owning its (new) pixels. 0, or -1 with the error set
 * (out of memory; img unchanged then). what names the image in the message. */
int gpuimg_image_orient(gpuimg_image_t *img, int o, const char *what);

#endif
