/* fuzz_decode.c: libFuzzer harness: untrusted bytes through the metadata reader and writer (EXIF,
 * ICC), libwebp's, libtiff's and libheif's decoders (where built), the stb codec (fastpng's PNG
 * reader against it; libjpeg's, where built with it, at full size and reduced, then resized, and in
 * bands of restart intervals against its whole decode; its count of the scans' work against the
 * marker walk's), the EXIF orientation, then every CPU operation. */
#include "codec.h"
#include "exif.h"
#include "jpeg_layout.h"
#include "meta.h"
#include "blur_cpu.h"
#include "checkerboard_cpu.h"
#include "gray_cpu.h"
#include "ops.h"
#include "portrait_cpu.h"
#include "resize_cpu.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Small enough that no input costs more than a few milliseconds, large enough to reach every
 * decoder path; the codec's size checks run against it exactly as against --max-pixels. */
#define FUZZ_MAX_PIXELS ((uint64_t)1 << 22)
/* The operations run on images up to this size; their loops do not change with size. */
#define FUZZ_OP_PIXELS ((uint64_t)1 << 18)
/* The brute-force references (and the encode round trip) only on tiny images. */
#define FUZZ_REF_WORK ((uint64_t)1 << 17)

static void must(int ok, const char *what)
{
  if (!ok) {
    fprintf(stderr, "fuzz_decode: %s (last error: %s)\n", what, gpuimg_error_message());
    abort();
  }
}

/* Parameters come from a hash of the whole input, so every input picks its own radius,
 * cell size, amount and mask without bytes the decoder would see as image data. */
static uint32_t fnv1a(const uint8_t *p, size_t n)
{
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < n; i++)
    h = (h ^ p[i]) * 16777619u;
  return h;
}

static int clampi(int v, int lo, int hi)
{
  return v < lo ? lo : v > hi ? hi : v;
}

/* SEMANTICS.md's box blur, one window at a time. */
static uint8_t ref_blur_at(const gpuimg_image_t *s, int x, int y, int ch, int r)
{
  uint32_t sum = 0, count = (uint32_t)(2 * r + 1) * (uint32_t)(2 * r + 1);
  for (int dy = -r; dy <= r; dy++)
    for (int dx = -r; dx <= r; dx++) {
      int xx = clampi(x + dx, 0, s->width - 1), yy = clampi(y + dy, 0, s->height - 1);
      sum +=
          s->data[((size_t)yy * (size_t)s->width + (size_t)xx) * (size_t)s->channels + (size_t)ch];
    }
  return (uint8_t)((sum + count / 2) / count);
}

static void check_blur(const gpuimg_image_t *s, const gpuimg_image_t *d, int r)
{
  for (int y = 0; y < s->height; y++)
    for (int x = 0; x < s->width; x++)
      for (int ch = 0; ch < s->channels; ch++)
        must(d->data[((size_t)y * (size_t)s->width + (size_t)x) * (size_t)s->channels +
                     (size_t)ch] == ref_blur_at(s, x, y, ch, r),
             "blur differs from the brute-force reference");
}

static void run_ops(const gpuimg_image_t *img, uint32_t h)
{
  int w = img->width, ht = img->height, c = img->channels;
  size_t n = (size_t)w * (size_t)ht;
  uint64_t work;
  gpuimg_image_t dst, mask;

  /* gray */
  int oc = gpuimg_op_out_channels(gpuimg_ops_find("gray"), c);
  must(gpuimg_image_alloc(&dst, w, ht, oc) == 0, "alloc");
  must(gpuimg_gray_cpu(img, &dst) == 0, "gray failed");
  if (c <= 2)
    must(memcmp(dst.data, img->data, n * (size_t)c) == 0, "gray changed a gray image");
  else
    for (size_t i = 0; i < n; i++) {
      const uint8_t *p = img->data + i * (size_t)c;
      double y = 0.299 * p[0] + 0.587 * p[1] + 0.114 * p[2];
      int got = dst.data[i * (size_t)dst.channels];
      must(fabs(got - y) <= 1.0, "gray is not within 1 of Rec. 601 luma");
      if (c == 4)
        must(dst.data[i * 2 + 1] == p[3], "gray lost the alpha");
    }
  gpuimg_image_free(&dst);

  /* blur: small radii, radii past the image, sometimes the largest allowed */
  int r = (h & 7) == 0 ? GPUIMG_MAX_RADIUS : (int)((h >> 3) % 40);
  must(gpuimg_image_alloc(&dst, w, ht, c) == 0, "alloc");
  must(gpuimg_blur_cpu(img, r, &dst) == 0, "blur failed");
  work = (uint64_t)n * (uint64_t)c * (uint64_t)(2 * r + 1) * (uint64_t)(2 * r + 1);
  if (work <= FUZZ_REF_WORK)
    check_blur(img, &dst, r);
  gpuimg_image_free(&dst);

  /* checkerboard: cell 1..16 or one larger than the image, any amount */
  int cell = (h & 0x100) ? 1 + (int)((h >> 9) % 16) : 0x7fffffff;
  int amount = (int)((h >> 13) & 255);
  must(gpuimg_image_alloc(&dst, w, ht, c) == 0, "alloc");
  must(gpuimg_checkerboard_cpu(img, cell, amount, &dst) == 0, "checkerboard failed");
  int colour = (c == 2 || c == 4) ? c - 1 : c;
  for (int y = 0; y < ht; y++)
    for (int x = 0; x < w; x++) {
      size_t o = ((size_t)y * (size_t)w + (size_t)x) * (size_t)c;
      int even = ((x / cell + y / cell) & 1) == 0;
      for (int ch = 0; ch < c; ch++) {
        int v = img->data[o + ch];
        int want = ch >= colour ? v : clampi(even ? v + amount : v - amount, 0, 255);
        must(dst.data[o + ch] == want, "checkerboard differs from its definition");
      }
    }
  gpuimg_image_free(&dst);

  /* portrait with a synthetic mask: the image's first channel mixed with the hash */
  int pr = (int)((h >> 21) % 24);
  must(gpuimg_image_alloc(&mask, w, ht, 1) == 0, "alloc");
  for (size_t i = 0; i < n; i++)
    mask.data[i] = (uint8_t)(img->data[i * (size_t)c] ^ (uint8_t)(h >> (i % 24)));
  must(gpuimg_image_alloc(&dst, w, ht, c) == 0, "alloc");
  must(gpuimg_portrait_cpu(img, &mask, pr, &dst) == 0, "portrait failed");
  work = (uint64_t)n * (uint64_t)c * (uint64_t)(2 * pr + 1) * (uint64_t)(2 * pr + 1);
  if (work <= FUZZ_REF_WORK)
    for (size_t i = 0; i < n; i++)
      for (int ch = 0; ch < c; ch++) {
        int keep = mask.data[i] >= 128 || ((c == 2 || c == 4) && ch == c - 1);
        int want = keep ? img->data[i * (size_t)c + ch]
                        : ref_blur_at(img, (int)(i % (size_t)w), (int)(i / (size_t)w), ch, pr);
        must(dst.data[i * (size_t)c + ch] == want, "portrait differs from its definition");
      }
  gpuimg_image_free(&dst);
  gpuimg_image_free(&mask);
}

/* Encoders on the decoded image; a PNG must decode back to the same pixels. */
static void round_trip(const gpuimg_image_t *img, uint32_t h)
{
  gpuimg_buf_t enc = {0};
  gpuimg_image_t back;
  must(gpuimg_codec_stb.encode(img, GPUIMG_FORMAT_PNG,
                               &(gpuimg_encode_opts_t){.quality = 90, .png_level = 1}, "fuzz.png",
                               &enc) == 0,
       "PNG encode failed");
  must(gpuimg_codec_stb.decode(enc.data, enc.size, "fuzz.png", FUZZ_MAX_PIXELS, &back) == 0,
       "our own PNG does not decode");
  must(back.width == img->width && back.height == img->height && back.channels == img->channels &&
           memcmp(back.data, img->data,
                  gpuimg_image_bytes(img->width, img->height, img->channels)) == 0,
       "PNG round trip changed the image");
  gpuimg_image_free(&back);
  gpuimg_buf_free(&enc);
  gpuimg_format_t other = (h >> 30) == 0   ? GPUIMG_FORMAT_JPEG
                          : (h >> 30) == 1 ? GPUIMG_FORMAT_BMP
                                           : GPUIMG_FORMAT_TGA;
  must(gpuimg_codec_stb.encode(img, other, &(gpuimg_encode_opts_t){1 + (int)((h >> 4) % 100), 1},
                               "fuzz.out", &enc) == 0,
       "encode failed");
  if (other == GPUIMG_FORMAT_JPEG) {
    must(gpuimg_codec_stb.decode(enc.data, enc.size, "fuzz.jpg", FUZZ_MAX_PIXELS, &back) == 0,
         "our own JPEG does not decode");
    must(back.width == img->width && back.height == img->height, "JPEG changed the size");
    gpuimg_image_free(&back);
  }
  gpuimg_buf_free(&enc);
}

/* A refusal must be a clean one: exit code 3 and `fuzz: <reason>` on one line. */
static void check_refusal(void)
{
  const char *msg = gpuimg_error_message();
  must(gpuimg_error_code() == GPUIMG_EXIT_INPUT, "a decode failure without exit code 3");
  must(strncmp(msg, "fuzz: ", 6) == 0 && strlen(msg) > 6 + 5 && !strchr(msg, '\n'),
       "a decode failure without a one-line reason");
}

/* resize of img to a size from the hash (0.5x to 2x each side, so shrinking and enlarging):
 * every output value lies within its channel's input range (area means and bilinear samples
 * are convex combinations), and the same size is the identity. */
static void check_resize(const gpuimg_image_t *img, uint32_t h)
{
  int ow = 1 + (int)((h >> 11) % (uint32_t)(2 * img->width));
  int oh = 1 + (int)((h >> 19) % (uint32_t)(2 * img->height));
  int c = img->channels;
  uint8_t lo[4] = {255, 255, 255, 255}, hi[4] = {0};
  gpuimg_image_t dst;
  if ((uint64_t)ow * (uint64_t)oh > FUZZ_OP_PIXELS)
    return;
  if (h & 0x40) { /* sometimes the same size */
    ow = img->width;
    oh = img->height;
  }
  must(gpuimg_image_alloc(&dst, ow, oh, c) == 0, "alloc");
  must(gpuimg_resize_cpu_rows(img, &dst, ow < img->width, oh < img->height, 0, oh) == 0,
       "resize failed");
  size_t in_bytes = gpuimg_image_bytes(img->width, img->height, c);
  for (size_t i = 0; i < in_bytes; i++) {
    uint8_t v = img->data[i];
    lo[i % (size_t)c] = v < lo[i % (size_t)c] ? v : lo[i % (size_t)c];
    hi[i % (size_t)c] = v > hi[i % (size_t)c] ? v : hi[i % (size_t)c];
  }
  for (size_t i = 0; i < gpuimg_image_bytes(ow, oh, c); i++)
    must(dst.data[i] >= lo[i % (size_t)c] && dst.data[i] <= hi[i % (size_t)c],
         "resize left its input's range");
  if (ow == img->width && oh == img->height)
    must(memcmp(dst.data, img->data, in_bytes) == 0, "resize to the same size changed the image");
  gpuimg_image_free(&dst);
}

#ifdef GPUIMG_HAVE_LIBJPEG
/* libjpeg's reduced decode (shrink-on-load) at 1/2, 1/4 or 1/8 by the hash: a clean refusal or
 * an image of the full decode's size divided and rounded up (full: the full-size decode, or
 * NULL when it failed), which is then resized. */
static void check_reduced(const uint8_t *data, size_t size, uint32_t h, const gpuimg_image_t *full)
{
  int r = 2 << ((h >> 27) % 3);
  gpuimg_image_t img;
  gpuimg_error_clear();
  if (gpuimg_codec_libjpeg.decode_reduced(data, size, "fuzz", FUZZ_MAX_PIXELS, r, &img) < 0) {
    check_refusal();
    return;
  }
  must(img.width >= 1 && img.height >= 1 && (img.channels == 1 || img.channels == 3) && img.data,
       "libjpeg's reduced decode returned an impossible image");
  must(!full || (img.width == (full->width + r - 1) / r &&
                 img.height == (full->height + r - 1) / r && img.channels == full->channels),
       "libjpeg's reduced decode is not the full size divided, rounded up");
  if ((uint64_t)img.width * (uint64_t)img.height <= FUZZ_OP_PIXELS)
    check_resize(&img, h);
  gpuimg_image_free(&img);
}

/* libjpeg's decode in bands of restart intervals (on 2 to 6 threads by the hash; any size in
 * this harness's build) against its decode of the whole file: the same verdict, message and
 * pixels. */
static void check_bands(const uint8_t *data, size_t size, uint32_t h)
{
  gpuimg_image_t whole, banded;
  char msg[512];
  int r = (h >> 5) % 4 ? 1 : 2 << ((h >> 7) % 3);
  gpuimg_codec_set_threads(1);
  gpuimg_error_clear();
  int rw = gpuimg_codec_libjpeg.decode_reduced(data, size, "fuzz", FUZZ_MAX_PIXELS, r, &whole);
  snprintf(msg, sizeof msg, "%s", rw < 0 ? gpuimg_error_message() : "");
  gpuimg_codec_set_threads(2 + (int)((h >> 9) % 5));
  gpuimg_error_clear();
  int rb = gpuimg_codec_libjpeg.decode_reduced(data, size, "fuzz", FUZZ_MAX_PIXELS, r, &banded);
  gpuimg_codec_set_threads(1);
  must(rw == rb, "the bands and the whole decode disagree on decoding");
  if (rw < 0) {
    must(strcmp(msg, gpuimg_error_message()) == 0, "the bands fail with another message");
    return;
  }
  must(whole.width == banded.width && whole.height == banded.height &&
           whole.channels == banded.channels &&
           memcmp(whole.data, banded.data,
                  gpuimg_image_bytes(whole.width, whole.height, whole.channels)) == 0,
       "the bands decode other pixels");
  gpuimg_image_free(&whole);
  gpuimg_image_free(&banded);
}

/* A refusal for the scans' work is the marker walk's, made before libjpeg decodes: libjpeg's
 * own count of its scans (its progress monitor) stops only a file whose scans the walk read
 * otherwise, a scan the walk missed. */
static void check_scan_work(const uint8_t *data, size_t size)
{
  const char *msg = gpuimg_error_message();
  gpuimg_jpeg_work_t w;
  char why[256];
  if (!strstr(msg, "scans decode") && !strstr(msg, "more than 500 scans"))
    return;
  gpuimg_jpeg_work(data, size, &w);
  must(gpuimg_jpeg_work_check(&w, why, sizeof why) < 0,
       "libjpeg counted more scan work than the marker walk");
}

/* libjpeg's decoder on the same bytes when they start like a JPEG: a clean refusal or an image
 * within the limits; on small images, libjpeg's encoder must write a JPEG both decoders read
 * back at the same size. */
static void check_libjpeg(const uint8_t *data, size_t size, uint32_t h)
{
  gpuimg_image_t img, back;
  gpuimg_buf_t enc = {0};
  if (size < 3 || data[0] != 0xff || data[1] != 0xd8 || data[2] != 0xff)
    return;
  check_bands(data, size, h);
  gpuimg_error_clear();
  if (gpuimg_codec_libjpeg.decode(data, size, "fuzz", FUZZ_MAX_PIXELS, &img) < 0) {
    check_refusal();
    check_scan_work(data, size);
    check_reduced(data, size, h, NULL);
    return;
  }
  check_reduced(data, size, h, &img);
  must(img.width >= 1 && img.height >= 1 && (img.channels == 1 || img.channels == 3) && img.data,
       "libjpeg returned an impossible image");
  must((uint64_t)img.width * (uint64_t)img.height <= FUZZ_MAX_PIXELS,
       "libjpeg returned an image over the pixel limit");
  if ((uint64_t)img.width * (uint64_t)img.height * (uint64_t)img.channels <= FUZZ_REF_WORK) {
    gpuimg_encode_opts_t opts = {.quality = 1 + (int)((h >> 7) % 100), .png_level = 1};
    must(gpuimg_codec_libjpeg.encode(&img, GPUIMG_FORMAT_JPEG, &opts, "fuzz.jpg", &enc) == 0,
         "libjpeg encode failed");
    for (int k = 0; k < 2; k++) {
      const gpuimg_codec_t *dec = k ? &gpuimg_codec_libjpeg : &gpuimg_codec_stb;
      must(dec->decode(enc.data, enc.size, "fuzz.jpg", FUZZ_MAX_PIXELS, &back) == 0,
           "libjpeg's own JPEG does not decode");
      must(back.width == img.width && back.height == img.height && back.channels == img.channels,
           "libjpeg's JPEG changed the size or layout");
      gpuimg_image_free(&back);
    }
    gpuimg_buf_free(&enc);
  }
  gpuimg_image_free(&img);
}
#endif

/* The metadata of the input (data), turned upright, put into enc (a file of fmt an encoder
 * wrote) reads back from it the same, with orientation 1. */
static void check_meta_into(gpuimg_format_t fmt, gpuimg_buf_t *enc, const uint8_t *data,
                            size_t size)
{
  gpuimg_meta_t meta = {0}, got = {0};
  char warning[256] = "";
  int carried = -1;
  must(gpuimg_meta_read(data, size, 1, "fuzz", &meta) == 0, "metadata read failed");
  gpuimg_meta_upright(&meta); /* as the flow does once the pixels are turned */
  must((carried = gpuimg_meta_insert(enc, fmt, &meta, "fuzz.out", warning, sizeof warning)) >= 0 &&
           gpuimg_meta_read(enc->data, enc->size, 1, "fuzz.out", &got) == 0,
       "metadata into a TIFF or WebP failed");
  must(got.tags.orientation == 1, "metadata written turned the image");
  must(!(carried & GPUIMG_META_ICC) ||
           (got.icc.size == meta.icc.size && !memcmp(got.icc.data, meta.icc.data, meta.icc.size)),
       "a profile read back differs");
  must(!(carried & GPUIMG_META_EXIF) || (got.exif.size == meta.exif.size &&
                                         !memcmp(got.exif.data, meta.exif.data, meta.exif.size)),
       "an EXIF block read back differs");
  gpuimg_meta_free(&meta);
  gpuimg_meta_free(&got);
}

#if defined(GPUIMG_HAVE_LIBWEBP) || defined(GPUIMG_HAVE_LIBTIFF)
/* img encoded losslessly by codec as fmt (opts), the input's metadata (data) put into it and
 * read back, then decoded back to the same pixels; name: the codec's, for the messages. */
static void check_lossless(const gpuimg_codec_t *codec, gpuimg_format_t fmt,
                           const gpuimg_encode_opts_t *opts, const gpuimg_image_t *img,
                           const uint8_t *data, size_t size, const char *name)
{
  gpuimg_buf_t enc = {0};
  gpuimg_image_t back;
  char what[96];
  snprintf(what, sizeof what, "%s encode failed", name);
  must(codec->encode(img, fmt, opts, "fuzz.out", &enc) == 0, what);
  check_meta_into(fmt, &enc, data, size);
  snprintf(what, sizeof what, "%s's own file does not decode", name);
  must(codec->decode(enc.data, enc.size, "fuzz.out", FUZZ_MAX_PIXELS, &back) == 0, what);
  snprintf(what, sizeof what, "a lossless %s round trip changed the pixels", name);
  must(back.width == img->width && back.height == img->height && back.channels == img->channels &&
           memcmp(back.data, img->data,
                  gpuimg_image_bytes(img->width, img->height, img->channels)) == 0,
       what);
  gpuimg_image_free(&back);
  gpuimg_buf_free(&enc);
}
#endif

#ifdef GPUIMG_HAVE_LIBWEBP
/* A WebP: libwebp's decode refuses it with exit code 3 and a one-line reason, or gives an
 * image within the limits; on small images, a lossless encode decodes back to the same
 * pixels. */
static void check_libwebp(const uint8_t *data, size_t size)
{
  gpuimg_image_t img;
  if (size < 12 || memcmp(data, "RIFF", 4) != 0 || memcmp(data + 8, "WEBP", 4) != 0)
    return;
  gpuimg_error_clear();
  if (gpuimg_codec_libwebp.decode(data, size, "fuzz", FUZZ_MAX_PIXELS, &img) < 0) {
    check_refusal();
    return;
  }
  must(img.width >= 1 && img.height >= 1 && (img.channels == 3 || img.channels == 4) && img.data,
       "libwebp returned an impossible image");
  must((uint64_t)img.width * (uint64_t)img.height <= FUZZ_MAX_PIXELS,
       "libwebp returned an image over the pixel limit");
  if ((uint64_t)img.width * (uint64_t)img.height * (uint64_t)img.channels <= FUZZ_REF_WORK) {
    gpuimg_encode_opts_t opts = {.quality = 90, .lossless = 1};
    check_lossless(&gpuimg_codec_libwebp, GPUIMG_FORMAT_WEBP, &opts, &img, data, size, "libwebp");
  }
  gpuimg_image_free(&img);
}
#endif

#ifdef GPUIMG_HAVE_LIBTIFF
/* A TIFF: libtiff's decode refuses it with exit code 3 and a one-line reason, or gives an
 * image within the limits; on small images, each compression's encode decodes back to the
 * same pixels, and the image's metadata (an ICC profile from the file) goes into it and reads
 * back. */
static void check_libtiff(const uint8_t *data, size_t size, uint32_t h)
{
  gpuimg_image_t img;
  if (gpuimg_format_of(data, size) != GPUIMG_FORMAT_TIFF)
    return;
  gpuimg_error_clear();
  if (gpuimg_codec_libtiff.decode(data, size, "fuzz", FUZZ_MAX_PIXELS, &img) < 0) {
    check_refusal();
    return;
  }
  must(img.width >= 1 && img.height >= 1 && img.channels >= 1 && img.channels <= 4 && img.data,
       "libtiff returned an impossible image");
  must((uint64_t)img.width * (uint64_t)img.height <= FUZZ_MAX_PIXELS,
       "libtiff returned an image over the pixel limit");
  if ((uint64_t)img.width * (uint64_t)img.height * (uint64_t)img.channels <= FUZZ_REF_WORK) {
    gpuimg_encode_opts_t opts = {.compression = (int)(h % 3)};
    check_lossless(&gpuimg_codec_libtiff, GPUIMG_FORMAT_TIFF, &opts, &img, data, size, "libtiff");
  }
  gpuimg_image_free(&img);
}
#endif

#ifdef GPUIMG_HAVE_LIBHEIF
/* The metadata handed to the AVIF encoder (meta, the set given) reads back from its file
 * (enc) the same. */
static void check_given(const gpuimg_buf_t *enc, const gpuimg_meta_t *meta, int given)
{
  gpuimg_meta_t got = {0};
  must(gpuimg_meta_read(enc->data, enc->size, 1, "fuzz.avif", &got) == 0 && !got.warning[0],
       "metadata in an AVIF does not read back");
  const gpuimg_buf_t *want_icc = given & GPUIMG_META_ICC ? &meta->icc : NULL;
  const gpuimg_buf_t *want_exif = given & GPUIMG_META_EXIF ? &meta->exif : NULL;
  must(got.icc.size == (want_icc ? want_icc->size : 0) &&
           (!want_icc || !memcmp(got.icc.data, want_icc->data, want_icc->size)),
       "the AVIF's profile read back differs");
  must(got.exif.size == (want_exif ? want_exif->size : 0) &&
           (!want_exif || !memcmp(got.exif.data, want_exif->data, want_exif->size)),
       "the AVIF's EXIF read back differs");
  gpuimg_meta_free(&got);
}

/* A HEIC or AVIF: libheif's decode refuses it with exit code 3 and a one-line reason, or gives
 * an RGB or RGBA image within the limits, whose AVIF (small images) decodes to its size. */
static void check_libheif(const uint8_t *data, size_t size)
{
  gpuimg_image_t img, back;
  gpuimg_format_t f = gpuimg_format_of(data, size);
  if (f != GPUIMG_FORMAT_HEIC && f != GPUIMG_FORMAT_AVIF)
    return;
  gpuimg_error_clear();
  if (gpuimg_codec_libheif.decode(data, size, "fuzz", FUZZ_MAX_PIXELS, &img) < 0) {
    check_refusal();
    return;
  }
  must(img.width >= 1 && img.height >= 1 && (img.channels == 3 || img.channels == 4) && img.data,
       "libheif returned an impossible image");
  must((uint64_t)img.width * (uint64_t)img.height <= FUZZ_MAX_PIXELS,
       "libheif returned an image over the pixel limit");
  if ((uint64_t)img.width * (uint64_t)img.height * (uint64_t)img.channels <= FUZZ_REF_WORK / 16) {
    gpuimg_buf_t enc = {0};
    gpuimg_encode_opts_t opts = {.quality = 50, .speed = 9};
    gpuimg_meta_t meta = {0};
    must(gpuimg_meta_read(data, size, 1, "fuzz", &meta) == 0, "metadata read failed");
    int given = gpuimg_meta_give(GPUIMG_FORMAT_AVIF, &meta, &opts);
    must(gpuimg_codec_libheif.encode(&img, GPUIMG_FORMAT_AVIF, &opts, "fuzz.avif", &enc) == 0,
         "AVIF encode failed");
    must(gpuimg_codec_libheif.decode(enc.data, enc.size, "fuzz.avif", FUZZ_MAX_PIXELS, &back) == 0,
         "libheif's own AVIF does not decode");
    must(back.width == img.width && back.height == img.height && back.channels == img.channels,
         "an AVIF round trip changed the size or layout");
    check_given(&enc, &meta, given);
    gpuimg_meta_free(&meta);
    gpuimg_image_free(&back);
    gpuimg_buf_free(&enc);
  }
  gpuimg_image_free(&img);
}
#endif

/* The values the flow rewrites lie inside the EXIF block, apart from each other (a
 * dimension's whole 4-byte value field: a SHORT may become a LONG). */
static void check_tags(const gpuimg_meta_t *meta)
{
  const gpuimg_exif_tags_t *t = &meta->tags;
  size_t at[3] = {t->orientation_at, t->size_at[0], t->size_at[1]};
  size_t len[3] = {2, 4, 4};
  must(t->orientation >= 1 && t->orientation <= 8, "an EXIF orientation outside 1..8");
  for (int k = 0; k < 3; k++) {
    must(!at[k] || (at[k] >= 8 && at[k] + len[k] <= meta->exif.size), "a tag outside the block");
    for (int j = 0; j < k; j++)
      must(!at[k] || !at[j] || at[k] >= at[j] + len[j] || at[j] >= at[k] + len[k],
           "two rewritten tags overlap");
  }
}

/* The metadata reader on untrusted bytes: an orientation 1..8, blocks within their limits,
 * and what it read put into a PNG and a JPEG (turned upright, resized to a size from the hash
 * h) reads back the same. Returns the orientation. */
static int check_meta(const uint8_t *data, size_t size, uint32_t h)
{
  gpuimg_meta_t meta = {0}, back;
  must(gpuimg_meta_read(data, size, 1, "fuzz", &meta) == 0, "metadata read failed");
  must(meta.icc.size <= GPUIMG_META_MAX_ICC, "an ICC profile over the limit");
  check_tags(&meta);
  int o = meta.tags.orientation;
  gpuimg_meta_upright(&meta);
  gpuimg_meta_set_size(&meta, 1 + (int)(h % 70000), 1 + (int)((h >> 8) % (1 << 24)));
  static const uint8_t tiny_rgb[3] = {1, 2, 3};
  gpuimg_image_t px = {.width = 1, .height = 1, .channels = 3, .data = (uint8_t *)tiny_rgb};
  for (int k = 0; k < 2 && meta.icc.size + meta.exif.size; k++) {
    gpuimg_format_t fmt = k ? GPUIMG_FORMAT_JPEG : GPUIMG_FORMAT_PNG;
    gpuimg_buf_t enc = {0};
    char warning[256] = "";
    int carried = -1;
    must(gpuimg_codec_stb.encode(&px, fmt, &(gpuimg_encode_opts_t){.quality = 90, .png_level = 1},
                                 "fuzz.out", &enc) == 0 &&
             (carried =
                  gpuimg_meta_insert(&enc, fmt, &meta, "fuzz.out", warning, sizeof warning)) >= 0,
         "metadata insert failed");
    memset(&back, 0, sizeof back);
    must(gpuimg_meta_read(enc.data, enc.size, 1, "fuzz.out", &back) == 0 && !back.warning[0],
         "metadata written does not read back");
    const gpuimg_exif_tags_t *t = &meta.tags, *bt = &back.tags;
    must(!(carried & GPUIMG_META_EXIF) ||
             (bt->orientation == 1 && bt->orientation_at == t->orientation_at &&
              bt->size_at[0] == t->size_at[0] && bt->size_at[1] == t->size_at[1]),
         "the EXIF tags read back elsewhere");
    const gpuimg_buf_t *want_exif = carried & GPUIMG_META_EXIF ? &meta.exif : NULL;
    const gpuimg_buf_t *want_icc = carried & GPUIMG_META_ICC ? &meta.icc : NULL;
    must(back.exif.size == (want_exif ? want_exif->size : 0) &&
             (!want_exif || !memcmp(back.exif.data, want_exif->data, want_exif->size)),
         "the EXIF read back differs");
    must(back.icc.size == (want_icc ? want_icc->size : 0) &&
             (!want_icc || !memcmp(back.icc.data, want_icc->data, want_icc->size)),
         "the ICC profile read back differs");
    gpuimg_meta_free(&back);
    gpuimg_buf_free(&enc);
  }
  gpuimg_meta_free(&meta);
  return o;
}

/* fastpng's reader (auto's PNG decoder) against stb on the same bytes: the same verdict and,
 * when both decode, the same pixels. */
static void check_fastpng(const uint8_t *data, size_t size)
{
  gpuimg_image_t a, b;
  int ra = gpuimg_codec_fastpng.decode(data, size, "fuzz", FUZZ_MAX_PIXELS, &a);
  gpuimg_error_clear();
  int rb = gpuimg_codec_stb.decode(data, size, "fuzz", FUZZ_MAX_PIXELS, &b);
  gpuimg_error_clear();
  must(ra == rb, "fastpng's reader and stb disagree on whether the file decodes");
  if (ra < 0)
    return;
  must(a.width == b.width && a.height == b.height && a.channels == b.channels &&
           !memcmp(a.data, b.data, gpuimg_image_bytes(a.width, a.height, a.channels)),
       "fastpng's reader and stb decode other pixels");
  gpuimg_image_free(&a);
  gpuimg_image_free(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  gpuimg_image_t img;
#ifdef GPUIMG_HAVE_LIBJPEG
  check_libjpeg(data, size, fnv1a(data, size));
#endif
#ifdef GPUIMG_HAVE_LIBWEBP
  check_libwebp(data, size);
#endif
#ifdef GPUIMG_HAVE_LIBTIFF
  check_libtiff(data, size, fnv1a(data, size));
#endif
#ifdef GPUIMG_HAVE_LIBHEIF
  check_libheif(data, size);
#endif
  /* The header read the backend's choice makes before any decode: never a crash, and a size
   * only when it states one. */
  int iw, ih, ic;
  int orient = check_meta(data, size, fnv1a(data, size)); /* the EXIF and ICC blocks */
  if (orient == 1)
    orient = 0; /* none: pick a move from the hash below */
  if (gpuimg_codec_info(data, size, &iw, &ih, &ic) == 0)
    must(iw >= 1 && ih >= 1 && ic >= 1 && ic <= 4, "info returned an impossible header");
  gpuimg_error_clear();
  check_fastpng(data, size);
  if (gpuimg_codec_stb.decode(data, size, "fuzz", FUZZ_MAX_PIXELS, &img) < 0) {
    check_refusal();
    return 0;
  }
  must(img.width >= 1 && img.height >= 1 && img.channels >= 1 && img.channels <= 4 && img.data,
       "decode returned an impossible image");
  must((uint64_t)img.width * (uint64_t)img.height <= FUZZ_MAX_PIXELS,
       "decode returned an image over the pixel limit");
  uint32_t h = fnv1a(data, size);
  uint64_t px = (uint64_t)img.width * (uint64_t)img.height;
  if (px <= FUZZ_OP_PIXELS) { /* the moves the flow makes; any of the 8 on this image */
    int w = img.width, ht = img.height, o = orient ? orient : 1 + (int)(h % 8);
    must(gpuimg_image_orient(&img, o, "fuzz") == 0, "orient failed");
    must(img.width == (o >= 5 ? ht : w) && img.height == (o >= 5 ? w : ht),
         "orient gave the wrong size");
  }
  if (px <= FUZZ_OP_PIXELS) {
    run_ops(&img, h);
    check_resize(&img, h);
  }
  if (px * (uint64_t)img.channels <= FUZZ_REF_WORK)
    round_trip(&img, h);
  gpuimg_image_free(&img);
  return 0;
}
