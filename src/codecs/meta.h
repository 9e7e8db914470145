/* meta.h: the metadata an image file carries besides its pixels (ICC profile, EXIF), read from a
 * JPEG's or PNG's bytes whatever decoder ran, and put into an encoded JPEG or PNG whatever
 * encoder wrote it. */
#ifndef GPUIMG_META_H
#define GPUIMG_META_H

#include "codec.h"
#include "exif.h"

/* The largest ICC profile carried: 1 MiB (a PNG's iCCP is inflated no further). Real RGB and
 * gray profiles take a few KiB to a few hundred; a larger one would only inflate the output
 * (a PNG of a few KiB can hold a deflated profile of megabytes of zeros). */
#define GPUIMG_META_MAX_ICC ((size_t)1 << 20)
/* Why a larger one is dropped. */
#define GPUIMG_META_ICC_TOO_LARGE "it is larger than 1 MiB (the largest profile carried)"

/* The notice for an input of 16-bit samples, reduced to 8 bits on decode. */
#define GPUIMG_META_16BIT "16-bit samples reduced to 8 bits (round(v / 257))"

/* What gpuimg_meta_insert() carried: a set of these bits. */
enum { GPUIMG_META_ICC = 1, GPUIMG_META_EXIF = 2 };

/* An input's metadata. Zeroed before gpuimg_meta_read(); freed with gpuimg_meta_free(). */
typedef struct {
  gpuimg_buf_t icc;        /* the ICC profile, whole (size 0: none) */
  char icc_name[80];       /* its name in a PNG's iCCP ("" from a JPEG) */
  gpuimg_buf_t exif;       /* the EXIF TIFF block, without "Exif\0\0" (size 0: none) */
  gpuimg_exif_tags_t tags; /* exif's Orientation (tags.orientation: 1..8, 1 when none) and
                              pixel dimensions, where they lie */
  char warning[256];       /* why blocks were ignored, and notices about the input (16-bit
                              samples, pages not read), "; "-separated ("" when none) */
} gpuimg_meta_t;

/* Reads the first EXIF block (JPEG APP1 "Exif\0\0", PNG eXIf) and, when want_icc, the ICC
 * profile (JPEG APP2 "ICC_PROFILE\0" markers joined by their sequence numbers, PNG iCCP
 * inflated) of a JPEG or PNG file's bytes, before its image data; of a TIFF file, the
 * Orientation and profile of its first directory and its Exif IFD as a block
 * (gpuimg_tiff_exif()). meta->warning says when a PNG
 * or TIFF has 16-bit samples and when a TIFF has more pages. A malformed block
 * (gpuimg_exif_check(); a profile's markers missing, repeated or inconsistent, a bad CRC or
 * deflate stream, a profile without its header) or a profile over GPUIMG_META_MAX_ICC
 * is left out and said in meta->warning; other formats have none. 0, or -1 with the error set
 * against what (out of memory). */
int gpuimg_meta_read(const uint8_t *bytes, size_t size, int want_icc, const char *what,
                     gpuimg_meta_t *meta);

/* Sets the carried EXIF's Orientation to 1: the pixels were turned upright. */
void gpuimg_meta_upright(gpuimg_meta_t *meta);

/* Sets the carried EXIF's PixelXDimension and PixelYDimension (where gpuimg_exif_check() found
 * them) to the output's size (a SHORT too small for it becomes a LONG). */
void gpuimg_meta_set_size(gpuimg_meta_t *meta, int width, int height);

/* Puts meta into enc, a whole JPEG or PNG as an encoder wrote it: after SOI and a JFIF APP0,
 * an APP1 Exif and the profile over as many APP2 markers as it needs; after IHDR, an iCCP and
 * an eXIf chunk. The profile goes only where its colour space fits the file: "GRAY" a gray
 * PNG or a one-component JPEG, "RGB " any other. A WebP takes both in its chunks, a TIFF the
 * profile in IFD0 and the EXIF's Orientation as its own; other formats take nothing here
 * (AVIF: gpuimg_meta_give()). What does not fit (an
 * EXIF block over one APP1, a profile over 255 APP2) is left out and said in warning. Returns the
 * set carried (GPUIMG_META_*), or -1 with the error set against what (out of memory). */
int gpuimg_meta_insert(gpuimg_buf_t *enc, gpuimg_format_t fmt, const gpuimg_meta_t *meta,
                       const char *what, char *warning, size_t warning_size);

/* For a format whose encoder puts the metadata into the file itself (AVIF: libheif writes
 * the container), points opts->icc and opts->exif at meta's blocks that fit (the profile when
 * its colour space is "RGB ": AVIF is written as RGB) and sets opts->orientation to the
 * EXIF's Orientation, which the encoder writes as the file's irot and imir, and which becomes
 * 1 in meta's EXIF (HEIF readers turn the pixels by irot and imir). Returns the set the
 * encoder is given (GPUIMG_META_*); other formats: 0, opts and meta untouched
 * (gpuimg_meta_insert() puts theirs in after encoding). meta must outlive the encoding. */
int gpuimg_meta_give(gpuimg_format_t fmt, gpuimg_meta_t *meta, gpuimg_encode_opts_t *opts);

void gpuimg_meta_free(gpuimg_meta_t *meta);

#endif
