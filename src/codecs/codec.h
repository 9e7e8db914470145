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
  GPUIMG_FORMAT_WEBP,
  GPUIMG_FORMAT_TIFF,
  GPUIMG_FORMAT_HEIC, /* HEIF with HEVC: read only */
  GPUIMG_FORMAT_AVIF, /* HEIF with AV1 */
} gpuimg_format_t;

/* The last format: formats are GPUIMG_FORMAT_PNG..GPUIMG_FORMAT_LAST. */
#define GPUIMG_FORMAT_LAST GPUIMG_FORMAT_AVIF

/* Output format from a file name's extension; GPUIMG_FORMAT_NONE if not supported (HEIC,
 * which is read only, included). */
gpuimg_format_t gpuimg_format_from_name(const char *path);
/* The format whose signature (its first bytes, codec.c's table: PNG, JPEG, WebP, TIFF, HEIC,
 * AVIF) begins
 * bytes, whether or not a codec built in reads it; GPUIMG_FORMAT_NONE when none does. */
gpuimg_format_t gpuimg_format_of(const uint8_t *bytes, size_t size);
/* For bytes of a format this build reads with no codec (WebP, TIFF without their libraries):
 * its name as messages spell it ("TIFF"); else NULL. */
const char *gpuimg_format_unbuilt(const uint8_t *bytes, size_t size);
/* 1 while bytes, the first size bytes of a file, may still begin a format a codec built in
 * decodes: each is a prefix of one of its signatures, or begins with one. What keeps an input
 * being read (gpuimg_file_read()): a file that cannot be an image is refused unread. */
int gpuimg_codec_may_begin(const uint8_t *bytes, size_t size);
const char *gpuimg_format_name(gpuimg_format_t fmt);
/* The extension an output of fmt gets in a batch ("png", "jpg", ...). */
const char *gpuimg_format_extension(gpuimg_format_t fmt);
/* 0 when a codec compiled in writes fmt; else -1 with "gpuimg was built without <library>"
 * set (GPUIMG_EXIT_USAGE) against what. */
int gpuimg_format_check_writable(gpuimg_format_t fmt, const char *what);
/* The format an output file named path is written in, from its extension, into *fmt: 0, or -1
 * with a usage error set against path (GPUIMG_EXIT_USAGE): "unsupported output format (use
 * .png, ...)", the extensions of the formats a codec built in writes, or "gpuimg was built
 * without WebP" for a format this build knows but cannot write. */
int gpuimg_format_of_output(const char *path, gpuimg_format_t *fmt);

/* How gpuimg_format_list() spells a format. */
typedef enum {
  GPUIMG_SPELL_NAME,       /* the report's and --format's: "png", "jpeg", "webp" */
  GPUIMG_SPELL_UPPER,      /* messages': "PNG", "JPEG", "WebP" */
  GPUIMG_SPELL_EXTENSIONS, /* every extension of it, dotted: ".jpg", ".jpeg" */
} gpuimg_spelling_t;
/* The formats that a codec built in decodes (what GPUIMG_CODEC_DECODES) or encodes
 * (GPUIMG_CODEC_ENCODES), in the format table's order, spelled as spelling says, joined into
 * buf (cap bytes, truncated if short) by sep and the last two by last: ", " and " or " give
 * "png, jpeg or webp". The registry's own word on what this build reads and writes, for
 * help and messages. Returns buf. */
const char *gpuimg_format_list(int what, gpuimg_spelling_t spelling, const char *sep,
                               const char *last, char *buf, size_t cap);

/* What an encoder is told besides the pixels. Each codec reads the fields of its formats. */
typedef struct {
  int quality;     /* JPEG quality 1..100 */
  int png_level;   /* PNG compression level 0..9 (libpng's zlib level; fastpng: 0 stores,
                      1..9 its one setting; stb's level is fixed at 8) */
  int threads;     /* PNG (fastpng): the most threads for a large image's slices; 0 or 1: the
                      calling thread only. The bytes do not depend on it. */
  int lossless;    /* WebP: 1 lossless (--lossless), 0 lossy at quality */
  int compression; /* TIFF: a gpuimg_compression_t (--compression) */
  int speed;       /* AVIF: libaom's speed 0..9 (--speed): 0 slowest and smallest, 9 fastest;
                      GPUIMG_DEFAULT_SPEED is libheif's own */
  /* AVIF: the metadata its encoder puts into the file itself, as gpuimg_meta_give() hands it
   * over (NULL: none): the ICC profile, the EXIF block (a TIFF block), and the EXIF
   * Orientation the file's irot and imir say (1..8; 0 or 1: none). */
  const gpuimg_buf_t *icc, *exif;
  int orientation;
} gpuimg_encode_opts_t;

/* --compression: how a TIFF output's strips are compressed. */
typedef enum {
  GPUIMG_COMPRESSION_DEFLATE = 0, /* the default: zlib's deflate, horizontal predictor */
  GPUIMG_COMPRESSION_LZW,         /* LZW, horizontal predictor */
  GPUIMG_COMPRESSION_NONE,
} gpuimg_compression_t;
/* The --compression spellings, by gpuimg_compression_t, NULL-terminated. */
extern const char *const gpuimg_compression_names[];

#define GPUIMG_DEFAULT_PNG_LEVEL 1
#define GPUIMG_DEFAULT_SPEED 6

/* What every encoder checks first: fmt is the one format it writes (only), and img has 1..4
 * channels and a size. 0, or -1 with "cannot encode ..." set (exit 4) against what. */
int gpuimg_encode_check(const gpuimg_image_t *img, gpuimg_format_t fmt, gpuimg_format_t only,
                        const char *codec, const char *what);

/* A 16-bit sample reduced to 8 bits, the rule of every decoder: round(v / 257), exactly
 * (v * 255 + 32895) >> 16 (257 * v8 comes back as v8; no ties, 257 being odd). */
static inline uint8_t gpuimg_reduce16(uint32_t v)
{
  return (uint8_t)((v * 255u + 32895u) >> 16);
}

/* A set of formats: bit (1u << fmt) for each. */
#define GPUIMG_FORMAT_BIT(fmt) (1u << (unsigned)(fmt))

/* A codec declares what it can do; codec.c keeps the table of those compiled in and
 * chooses from it by capability and priority. decode turns file bytes into pixels: the data
 * is malloc'd (or borrowed, see gpuimg_codec_pixels()), the caller owns it and frees it with
 * gpuimg_image_free(); max_pixels bounds width*height before any pixel memory is allocated.
 * encode appends to out, which the caller owns and frees with gpuimg_buf_free() (also after
 * a failure). Both may run on several threads at once. */
typedef struct {
  const char *name;    /* its --codec spelling */
  const char *library; /* the library it needs, as messages name it ("nvJPEG"); NULL: none */
  unsigned decodes;    /* the formats it reads (GPUIMG_FORMAT_BIT); 0: an encoder only */
  unsigned encodes;    /* the formats it writes */
  /* 1 when bytes begin a file it decodes (its signature test); NULL: it decodes every file
   * of the formats it declares, told by their signatures (gpuimg_format_of()). */
  int (*recognises)(const uint8_t *bytes, size_t size);
  /* Under --codec auto, of the codecs that serve a job the one of highest priority wins; 0:
   * never chosen by auto, only by name. The lowest (1, stb) is the reference codec: it also
   * serves what a codec chosen by name does not. */
  int priority;
  /* The PNG levels (0..9) at which auto considers it for PNG output. */
  int png_level_min, png_level_max;
  /* 1: works from device memory (nvjpeg): the flow decodes and encodes its format on the
   * device when it is chosen; what it does not serve goes to auto's choice, not to stb. */
  int device;
  int (*decode)(const uint8_t *bytes, size_t size, const char *what, uint64_t max_pixels,
                gpuimg_image_t *out);
  /* decode at 1/reduction of the size (2, 4 or 8: each side ceil(side / reduction)), for
   * shrink-on-load; max_pixels bounds the full size. NULL: the codec decodes full size only. */
  int (*decode_reduced)(const uint8_t *bytes, size_t size, const char *what, uint64_t max_pixels,
                        int reduction, gpuimg_image_t *out);
  int (*encode)(const gpuimg_image_t *img, gpuimg_format_t fmt, const gpuimg_encode_opts_t *opts,
                const char *what, gpuimg_buf_t *out);
  /* The independent parts its encode cuts a width x height x channels image into, which run
   * on gpuimg_encode_opts_t.threads threads (the cost model's speed-up); NULL: one. */
  int (*encode_parts)(int width, int height, int channels);
  /* The ICC profile and EXIF block (a TIFF block) of a file it decodes, where they lie in a
   * container the metadata reader (meta.c) does not walk itself (HEIF), each appended when
   * no larger than limit; 0, or -1 out of memory. A file it cannot read gives none. NULL:
   * meta.c reads its formats. */
  int (*metadata)(const uint8_t *bytes, size_t size, size_t limit, gpuimg_buf_t *icc,
                  gpuimg_buf_t *exif);
} gpuimg_codec_t;

/* Every codec is defined whatever the build; one the build lacks declares no formats
 * (libpng.c, libjpeg.c, nvjpeg.c) and is not in the registry. */
/* PNG and JPEG decoding; PNG, JPEG, BMP and TGA encoding; the reference (stb.c). */
extern const gpuimg_codec_t gpuimg_codec_stb;
/* PNG encoding only: gpuimg's own fast writer, always built (fastpng.c). */
extern const gpuimg_codec_t gpuimg_codec_fastpng;
/* PNG encoding only, with libpng (libpng.c; -Dlibpng via the libpng dependency). */
extern const gpuimg_codec_t gpuimg_codec_libpng;
/* JPEG decoding and encoding with libjpeg(-turbo) (libjpeg.c; -Dlibjpeg). */
extern const gpuimg_codec_t gpuimg_codec_libjpeg;
/* WebP decoding (still images) and encoding with libwebp (libwebp.c; -Dwebp). */
extern const gpuimg_codec_t gpuimg_codec_libwebp;
/* TIFF decoding (the first page) and encoding with libtiff (libtiff.c; -Dtiff). */
extern const gpuimg_codec_t gpuimg_codec_libtiff;
/* HEIC and AVIF decoding, AVIF encoding with libheif (libheif.c; -Dheif). */
extern const gpuimg_codec_t gpuimg_codec_libheif;
/* JPEG decoding and encoding on the GPU with nvJPEG (nvjpeg.c; CUDA builds with nvJPEG). */
extern const gpuimg_codec_t gpuimg_codec_nvjpeg;

/* The JPEG signature, as stb recognises it (0xff 0xd8 0xff): the test of the JPEG codecs. */
int gpuimg_codec_is_jpeg(const uint8_t *bytes, size_t size);

/* 1 when the JPEG's frame is of the kind every JPEG decoder here takes alike: Huffman-coded
 * (SOF0, SOF1 or SOF2), 8-bit, and one component or three (Y, Cb, Cr) with the chroma
 * sampled 1x1 and the luma 1x1, 2x1, 1x2, 2x2, 4x1 or 4x2, not marked as RGB (Adobe's
 * transform 0, or component ids R, G, B); its header read marker by marker up to that frame.
 * 0 for anything else, a header it cannot follow there included (bytes between segments, a
 * damaged length): CMYK, RGB, arithmetic, lossless and 12-bit files, which nvJPEG refuses or
 * reads otherwise and libjpeg decodes; and a file whose scans ask for more decoding work
 * than the host decoders allow (gpuimg_jpeg_work_check()), which they refuse at once. */
int gpuimg_codec_jpeg_is_common(const uint8_t *bytes, size_t size);
/* 1 when a codec compiled in decodes files beginning with bytes (12 suffice: PNG, JPEG,
 * WebP, TIFF, HEIC, AVIF). */
int gpuimg_codec_recognised(const uint8_t *bytes, size_t size);
/* The PNG signature (its 8 bytes). */
int gpuimg_codec_is_png(const uint8_t *bytes, size_t size);

/* The threads a decoder may spread one image over, for the decodes on the calling thread
 * from now on (default 1; the flow sets its plan's --threads before each decode). */
void gpuimg_codec_set_threads(int n);
int gpuimg_codec_threads(void);

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
 * rest; nvjpeg uses nvJPEG for JPEG and otherwise what auto uses. A choice names a codec by
 * its index in gpuimg_codec_choice_name(). */
typedef enum {
  GPUIMG_CODEC_AUTO,
  GPUIMG_CODEC_STB,
  GPUIMG_CODEC_FASTPNG,
  GPUIMG_CODEC_LIBPNG,
  GPUIMG_CODEC_LIBJPEG,
  GPUIMG_CODEC_NVJPEG
} gpuimg_codec_choice_t;

/* The --codec spellings, indexed by gpuimg_codec_choice_t, NULL-terminated. */
extern const char *const gpuimg_codec_choices[];

/* The size and channels a PNG or JPEG file's header states, read without decoding (for the
 * backend's choice before the decode). 0, or -1 when the header cannot be read (no error is
 * set: the decode will say why). */
int gpuimg_codec_info(const uint8_t *bytes, size_t size, int *width, int *height, int *channels);

/* For a codec this build declares but lacks (its library was not found): that library's
 * name; else NULL. */
const char *gpuimg_codec_missing(const char *name);

/* 1 when choice names a codec built in that works from device memory (nvjpeg). */
int gpuimg_codec_choice_device(gpuimg_codec_choice_t choice);
/* 1 when a codec built in that works from device memory (nvjpeg) recognises these bytes as
 * its to decode: what a device JPEG path takes (the rest goes to a host decoder). */
int gpuimg_codec_device_recognises(const uint8_t *bytes, size_t size);
/* 1 when a codec built in that works from device memory (nvjpeg) writes fmt: the outputs a
 * device path encodes there (the others are copied down and encoded on the host). */
int gpuimg_codec_device_encodes(gpuimg_format_t fmt);

/* The --codec spelling of choice ("auto", "stb", ...). */
const char *gpuimg_codec_choice_name(gpuimg_codec_choice_t choice);

/* The codec compiled in under that name, NULL if there is none (an unknown name, "auto", or a
 * codec this build lacks). */
const gpuimg_codec_t *gpuimg_codec_find(const char *name);
/* The codecs compiled in, in the table's order: the i-th, NULL past the last. */
const gpuimg_codec_t *gpuimg_codec_at(int i);

/* What gpuimg_codec_list() and gpuimg_format_list() ask of a codec: that it decodes, encodes
 * or does either. */
enum { GPUIMG_CODEC_DECODES = 1, GPUIMG_CODEC_ENCODES = 2 };
/* The names of the codecs compiled in that decode and/or encode (what) fmt, in the table's
 * order, joined by ", " into buf (cap bytes, truncated if short); fmt GPUIMG_FORMAT_NONE:
 * every codec compiled in. Returns buf. */
const char *gpuimg_codec_list(gpuimg_format_t fmt, int what, char *buf, size_t cap);

/* The codec that decodes these file bytes under choice: the chosen codec when it is
 * compiled in and recognises the bytes; under auto (or after a device codec) the
 * recognising codec of highest priority; else the reference, stb (which also reports
 * unsupported formats). Never NULL. */
const gpuimg_codec_t *gpuimg_codec_decoder(gpuimg_codec_choice_t choice, const uint8_t *bytes,
                                           size_t size);
/* The codec that encodes fmt under choice at PNG level png_level (clamped to 0..9): the
 * chosen codec when it is compiled in and writes fmt; under auto (or after a device codec)
 * the codec of highest priority that writes fmt (for PNG: at that level); else stb. Never
 * NULL (the command line refuses a library the build lacks). */
const gpuimg_codec_t *gpuimg_codec_encoder(gpuimg_codec_choice_t choice, gpuimg_format_t fmt,
                                           int png_level);

#endif
