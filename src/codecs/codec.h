/* codec.h: image formats and the codecs that decode and encode them, chosen under --codec. */
#ifndef GPUIMG_CODEC_H
#define GPUIMG_CODEC_H

#include "buf.h"

typedef enum {
  GPUIMG_FORMAT_NONE = -1,
  GPUIMG_FORMAT_PNG = 0,
  GPUIMG_FORMAT_JPEG,
  GPUIMG_FORMAT_BMP,
  GPUIMG_FORMAT_TGA,
} gpuimg_format_t;

/* Output format from a file name's extension; GPUIMG_FORMAT_NONE if not supported. */
gpuimg_format_t gpuimg_format_from_name(const char *path);
const char *gpuimg_format_name(gpuimg_format_t fmt);

/* What an encoder is told besides the pixels. Each codec reads the fields of its formats. */
typedef struct {
  int quality;   /* JPEG quality 1..100 */
  int png_level; /* PNG compression level 0..9 (libpng's zlib level; fastpng: 0 stores,
                    1..9 its one setting; stb's level is fixed at 8) */
} gpuimg_encode_opts_t;

#define GPUIMG_DEFAULT_PNG_LEVEL 1

/* What every encoder checks first: fmt is the one format it writes (only), and img has 1..4
 * channels and a size. 0, or -1 with "cannot encode ..." set (exit 4) against what. */
int gpuimg_encode_check(const gpuimg_image_t *img, gpuimg_format_t fmt, gpuimg_format_t only,
                        const char *codec, const char *what);

/* A codec decodes file bytes into pixels and encodes pixels into file bytes.
 * Decoded data is malloc'd: the caller owns it and frees it with gpuimg_image_free().
 * max_pixels bounds width*height before any pixel memory is allocated. decode is NULL
 * for an encoder-only codec (libpng). encode appends to out, which the caller owns and
 * frees with gpuimg_buf_free() (also after a failure). Both may run on several threads at
 * once. */
typedef struct {
  const char *name;
  int (*decode)(const uint8_t *bytes, size_t size, const char *what, uint64_t max_pixels,
                gpuimg_image_t *out);
  int (*encode)(const gpuimg_image_t *img, gpuimg_format_t fmt, const gpuimg_encode_opts_t *opts,
                const char *what, gpuimg_buf_t *out);
} gpuimg_codec_t;

/* PNG and JPEG decoding; PNG, JPEG, BMP and TGA encoding (stb.c). */
extern const gpuimg_codec_t gpuimg_codec_stb;
/* PNG encoding only: gpuimg's own fast writer, always built (fastpng.c). */
extern const gpuimg_codec_t gpuimg_codec_fastpng;
#ifdef GPUIMG_HAVE_LIBPNG
/* PNG encoding only, with libpng (libpng.c). */
extern const gpuimg_codec_t gpuimg_codec_libpng;
#endif
#ifdef GPUIMG_HAVE_LIBJPEG
/* JPEG decoding and encoding with libjpeg(-turbo) (libjpeg.c). */
extern const gpuimg_codec_t gpuimg_codec_libjpeg;
#endif

#ifdef GPUIMG_HAVE_NVJPEG
/* JPEG decoding and encoding on the GPU with nvJPEG (codec_nvjpeg.c). */
extern const gpuimg_codec_t gpuimg_codec_nvjpeg;
#endif
/* Where the calling thread's decodes put their pixels (io.c). A decoder that can (libjpeg) asks
 * gpuimg_codec_pixels() for its pixel memory: from the thread's source when one is set and
 * it gives a buffer (the image is then marked borrowed: the source owns the memory, which
 * must outlive the image), else from malloc. CUDA batch workers point the source at their
 * runner's pinned staging buffer, so that a decoded image is uploaded from where it was
 * decoded, without a copy. fn NULL: no source. */
typedef uint8_t *(*gpuimg_pixel_source_t)(void *ctx, size_t bytes);
void gpuimg_codec_set_pixel_source(gpuimg_pixel_source_t fn, void *ctx);
/* bytes of pixel memory for a decoder: *borrowed 1 from the source, 0 from malloc (the
 * caller frees it then); NULL when out of memory. */
uint8_t *gpuimg_codec_pixels(size_t bytes, int *borrowed);

/* Frees what a codec keeps for the calling thread (nvJPEG's context, handle and device
 * buffer); a thread that used --codec nvjpeg calls it before it ends. No-op otherwise. */
void gpuimg_codec_thread_end(void);

/* --codec: auto uses the fastest codec this build has for each job (libjpeg for JPEG;
 * fastpng for PNG output at --png-level 0 and 1, libpng at 2..9); stb uses stb for
 * everything; fastpng, libpng and libjpeg use that codec for its format and stb for the
 * rest; nvjpeg uses nvJPEG for JPEG and otherwise what auto uses. */
typedef enum {
  GPUIMG_CODEC_AUTO,
  GPUIMG_CODEC_STB,
  GPUIMG_CODEC_FASTPNG,
  GPUIMG_CODEC_LIBPNG,
  GPUIMG_CODEC_LIBJPEG,
  GPUIMG_CODEC_NVJPEG
} gpuimg_codec_choice_t;

/* 1 when this build has libpng, libjpeg, nvJPEG (codec.c). */
int gpuimg_codec_have_libpng(void);
int gpuimg_codec_have_libjpeg(void);
int gpuimg_codec_have_nvjpeg(void);
/* The codec that decodes these file bytes under choice: libjpeg for a JPEG when chosen (or
 * under auto) and built in, stb otherwise (stb also reports unsupported formats). */
const gpuimg_codec_t *gpuimg_codec_decoder(gpuimg_codec_choice_t choice, const uint8_t *bytes,
                                           size_t size);
/* The codec that encodes fmt under choice at PNG level png_level: for PNG, fastpng when
 * chosen, or under auto at levels 0 and 1; libpng when chosen, or under auto at 2..9 when
 * built in; libjpeg for JPEG when chosen (or under auto) and built in; stb otherwise. Never
 * NULL (the command line refuses a library the build lacks). */
const gpuimg_codec_t *gpuimg_codec_encoder(gpuimg_codec_choice_t choice, gpuimg_format_t fmt,
                                           int png_level);

#endif
