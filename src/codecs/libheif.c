/* libheif.c: the libheif codec: the primary image of a HEIC (libde265) or AVIF (dav1d, libaom)
 * file decoded upright (its irot and imir applied), its ICC profile and EXIF read; AVIF
 * encoded with libaom at --quality and --speed, with the profile, EXIF and orientation it is
 * given. */
#include "codec.h"

#ifdef GPUIMG_HAVE_LIBHEIF
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <libheif/heif.h>

static int heif_fail(const char *what, const char *reason, struct heif_error err)
{
  if (err.code == heif_error_Memory_allocation_error) {
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, what, "out of memory");
    return -1;
  }
  gpuimg_error_set(GPUIMG_EXIT_INPUT, what, "cannot decode HEIF: %s (%s)", reason,
                   err.message && err.message[0] ? err.message : "libheif gave no reason");
  return -1;
}

/* A context holding the file (bytes, not copied: they outlive it), and its primary image;
 * 0, or -1 with the error set. */
static int heif_open(const uint8_t *bytes, size_t size, const char *what, uint64_t max_pixels,
                     struct heif_context **ctx, struct heif_image_handle **handle)
{
  *handle = NULL;
  if (!(*ctx = heif_context_alloc())) {
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, what, "out of memory");
    return -1;
  }
  /* libheif's limit is a square: twice the side of --max-pixels', so that the check below
   * names the size of an image just over it, while an absurd one is refused on reading. */
  double side = 2 * ceil(sqrt((double)max_pixels));
  heif_context_set_maximum_image_size_limit(*ctx, side < 1 << 30 ? (int)side : 1 << 30);
  struct heif_error err = heif_context_read_from_memory_without_copy(*ctx, bytes, size, NULL);
  if (err.subcode == heif_suberror_Security_limit_exceeded) { /* the limit above, or another */
    gpuimg_error_set(GPUIMG_EXIT_INPUT, what,
                     "cannot decode HEIF: image over libheif's limits or the limit of %llu "
                     "pixels (see --max-pixels)",
                     (unsigned long long)max_pixels);
    return -1;
  }
  if (err.code != heif_error_Ok)
    return heif_fail(what, "damaged or unsupported file", err);
  err = heif_context_get_primary_image_handle(*ctx, handle);
  if (err.code != heif_error_Ok)
    return heif_fail(what, "no primary image", err);
  return 0;
}

static void heif_close(struct heif_context *ctx, struct heif_image_handle *handle)
{
  if (handle)
    heif_image_handle_release(handle);
  heif_context_free(ctx);
}

/* The primary image decoded upright as RGB or RGBA into out (pixels from
 * gpuimg_codec_pixels()). */
static int heif_pixels(struct heif_image_handle *handle, const char *what, uint64_t max_pixels,
                       gpuimg_image_t *out)
{
  int w = heif_image_handle_get_width(handle), h = heif_image_handle_get_height(handle);
  if (w < 1 || h < 1) {
    gpuimg_error_set(GPUIMG_EXIT_INPUT, what, "cannot decode HEIF: damaged header");
    return -1;
  }
  if ((uint64_t)w * (uint64_t)h > max_pixels) {
    gpuimg_error_set(GPUIMG_EXIT_INPUT, what,
                     "image is %dx%d, over the limit of %llu pixels (see --max-pixels)", w, h,
                     (unsigned long long)max_pixels);
    return -1;
  }
  int c = heif_image_handle_has_alpha_channel(handle) ? 4 : 3;
  struct heif_image *img = NULL;
  struct heif_error err =
      heif_decode_image(handle, &img, heif_colorspace_RGB,
                        c == 4 ? heif_chroma_interleaved_RGBA : heif_chroma_interleaved_RGB, NULL);
  if (err.code != heif_error_Ok)
    return heif_fail(what, "truncated or damaged image data", err);
  int stride = 0, iw = heif_image_get_width(img, heif_channel_interleaved),
      ih = heif_image_get_height(img, heif_channel_interleaved);
  const uint8_t *plane = heif_image_get_plane_readonly(img, heif_channel_interleaved, &stride);
  int borrowed = 0;
  uint8_t *px = NULL;
  if (plane && iw >= 1 && ih >= 1 && (uint64_t)iw * (uint64_t)ih <= max_pixels &&
      stride >= iw * c && (px = gpuimg_codec_pixels(gpuimg_image_bytes(iw, ih, c), &borrowed)))
    for (int y = 0; y < ih; y++)
      memcpy(px + (size_t)y * (size_t)iw * (size_t)c, plane + (size_t)y * (size_t)stride,
             (size_t)iw * (size_t)c);
  heif_image_release(img);
  if (!px) {
    gpuimg_error_set(plane ? GPUIMG_EXIT_FAILURE : GPUIMG_EXIT_INPUT, what,
                     plane ? "out of memory" : "cannot decode HEIF: no image data");
    return -1;
  }
  *out = (gpuimg_image_t){iw, ih, c, px, borrowed};
  return 0;
}

static int heif_decode_file(const uint8_t *bytes, size_t size, const char *what,
                            uint64_t max_pixels, gpuimg_image_t *out)
{
  struct heif_context *ctx;
  struct heif_image_handle *handle;
  memset(out, 0, sizeof *out);
  int rc = heif_open(bytes, size, what, max_pixels, &ctx, &handle) < 0
               ? -1
               : heif_pixels(handle, what, max_pixels, out);
  heif_close(ctx, handle);
  return rc;
}

/* The primary image's first Exif block, without the 4-byte offset libheif keeps before the
 * TIFF header (and the "Exif\0\0" some writers put there), into exif. */
static int heif_exif(struct heif_image_handle *handle, size_t limit, gpuimg_buf_t *exif)
{
  heif_item_id id;
  if (heif_image_handle_get_list_of_metadata_block_IDs(handle, "Exif", &id, 1) != 1)
    return 0;
  size_t n = heif_image_handle_get_metadata_size(handle, id);
  if (n < 4 || n > limit)
    return 0;
  uint8_t *d = malloc(n);
  if (!d)
    return -1;
  int rc = 0;
  if (heif_image_handle_get_metadata(handle, id, d).code == heif_error_Ok) {
    size_t skip = 4 + ((size_t)d[0] << 24 | (size_t)d[1] << 16 | (size_t)d[2] << 8 | d[3]);
    if (skip < n)
      rc = gpuimg_buf_append(exif, d + skip, n - skip);
  }
  free(d);
  return rc;
}

/* The primary image's raw ICC profile (a colr box of type prof or rICC) into icc. */
static int heif_icc(struct heif_image_handle *handle, size_t limit, gpuimg_buf_t *icc)
{
  size_t n = heif_image_handle_get_raw_color_profile_size(handle);
  if (n == 0 || n > limit || gpuimg_buf_reserve(icc, n) < 0)
    return n == 0 || n > limit ? 0 : -1;
  if (heif_image_handle_get_raw_color_profile(handle, icc->data).code == heif_error_Ok)
    icc->size = n;
  return 0;
}

static int heif_metadata(const uint8_t *bytes, size_t size, size_t limit, gpuimg_buf_t *icc,
                         gpuimg_buf_t *exif)
{
  struct heif_context *ctx;
  struct heif_image_handle *handle;
  int rc = heif_open(bytes, size, "", UINT64_MAX, &ctx, &handle);
  gpuimg_error_clear(); /* a file libheif cannot read: the decode says why */
  if (rc == 0)
    rc = heif_icc(handle, limit, icc) < 0 || heif_exif(handle, limit, exif) < 0 ? -1 : 0;
  else
    rc = 0;
  heif_close(ctx, handle);
  return rc;
}

/* ---- Encoding -------------------------------------------------------------------------- */

static struct heif_error heif_append(struct heif_context *ctx, const void *data, size_t size,
                                     void *userdata)
{
  (void)ctx;
  struct heif_error ok = {heif_error_Ok, heif_suberror_Unspecified, "ok"};
  struct heif_error oom = {heif_error_Memory_allocation_error, heif_suberror_Unspecified,
                           "out of memory"};
  return gpuimg_buf_append(userdata, data, size) < 0 ? oom : ok;
}

/* img as an interleaved RGB or RGBA heif_image (gray spread to RGB, as libaom codes colour
 * only through libheif's RGB input); NULL out of memory. */
static struct heif_image *heif_rgb(const gpuimg_image_t *img)
{
  int c = img->channels, oc = c == 2 || c == 4 ? 4 : 3, stride;
  struct heif_image *out = NULL;
  if (heif_image_create(img->width, img->height, heif_colorspace_RGB,
                        oc == 4 ? heif_chroma_interleaved_RGBA : heif_chroma_interleaved_RGB, &out)
              .code != heif_error_Ok ||
      heif_image_add_plane(out, heif_channel_interleaved, img->width, img->height, 8).code !=
          heif_error_Ok) {
    heif_image_release(out);
    return NULL;
  }
  uint8_t *plane = heif_image_get_plane(out, heif_channel_interleaved, &stride);
  for (int y = 0; y < img->height; y++)
    for (int x = 0; x < img->width; x++) {
      const uint8_t *s = img->data + ((size_t)y * (size_t)img->width + (size_t)x) * (size_t)c;
      uint8_t *d = plane + (size_t)y * (size_t)stride + (size_t)x * (size_t)oc;
      d[0] = s[0], d[1] = s[c >= 3 ? 1 : 0], d[2] = s[c >= 3 ? 2 : 0];
      if (oc == 4)
        d[3] = s[c - 1];
    }
  return out;
}

/* The encoder for AV1 at opts' quality and speed. An AV1 encoder other than libaom (rav1e,
 * SVT-AV1, where libheif prefers one) may refuse libaom's speed: then the default speed is left
 * to it, and another one is an error that says so. */
static struct heif_error heif_av1_encoder(struct heif_context *ctx,
                                          const gpuimg_encode_opts_t *opts,
                                          struct heif_encoder **enc)
{
  struct heif_error err = heif_context_get_encoder_for_format(ctx, heif_compression_AV1, enc);
  if (err.code == heif_error_Ok)
    err = heif_encoder_set_lossy_quality(*enc, opts->quality);
  if (err.code == heif_error_Ok) {
    err = heif_encoder_set_parameter_integer(*enc, "speed", opts->speed);
    if (err.code != heif_error_Ok && opts->speed == GPUIMG_DEFAULT_SPEED)
      err = (struct heif_error){heif_error_Ok, heif_suberror_Unspecified, "ok"};
    else if (err.code != heif_error_Ok)
      err.message = "the AV1 encoder takes no --speed (libaom's 0..9)";
  }
  return err;
}

/* im encoded into ctx as its primary image, with opts' profile (a colr box of type prof),
 * EXIF block (an Exif item: libheif puts the 4-byte offset of its TIFF header before it) and
 * orientation (irot and imir). */
static struct heif_error heif_add(struct heif_context *ctx, struct heif_image *im,
                                  struct heif_encoder *enc, const gpuimg_encode_opts_t *opts)
{
  struct heif_error err = {heif_error_Ok, heif_suberror_Unspecified, "ok"};
  if (opts->icc && opts->icc->size)
    err = heif_image_set_raw_color_profile(im, "prof", opts->icc->data, opts->icc->size);
  struct heif_encoding_options *eo = heif_encoding_options_alloc();
  if (!eo)
    return (struct heif_error){heif_error_Memory_allocation_error, heif_suberror_Unspecified,
                               "out of memory"};
  if (opts->orientation >= 1 && opts->orientation <= 8)
    eo->image_orientation = (enum heif_orientation)opts->orientation;
  struct heif_image_handle *handle = NULL;
  if (err.code == heif_error_Ok)
    err = heif_context_encode_image(ctx, im, enc, eo, &handle);
  heif_encoding_options_free(eo);
  if (err.code == heif_error_Ok && opts->exif && opts->exif->size) {
    if (opts->exif->size > INT_MAX) /* meta.c carries no such block; libheif takes an int */
      err = (struct heif_error){heif_error_Usage_error, heif_suberror_Unspecified,
                                "EXIF block too large"};
    else
      err = heif_context_add_exif_metadata(ctx, handle, opts->exif->data, (int)opts->exif->size);
  }
  if (handle)
    heif_image_handle_release(handle);
  return err;
}

static int heif_encode_avif(const gpuimg_image_t *img, gpuimg_format_t fmt,
                            const gpuimg_encode_opts_t *opts, const char *what, gpuimg_buf_t *out)
{
  if (gpuimg_encode_check(img, fmt, GPUIMG_FORMAT_AVIF, "libheif", what) < 0)
    return -1;
  struct heif_context *ctx = heif_context_alloc();
  struct heif_encoder *enc = NULL;
  struct heif_image *im = ctx ? heif_rgb(img) : NULL;
  struct heif_writer writer = {1, heif_append};
  struct heif_error err = {heif_error_Memory_allocation_error, heif_suberror_Unspecified,
                           "out of memory"};
  if (im && (err = heif_av1_encoder(ctx, opts, &enc)).code == heif_error_Ok &&
      (err = heif_add(ctx, im, enc, opts)).code == heif_error_Ok)
    err = heif_context_write(ctx, &writer, out);
  if (enc)
    heif_encoder_release(enc);
  heif_image_release(im);
  heif_context_free(ctx);
  if (err.code == heif_error_Ok)
    return 0;
  if (err.code == heif_error_Memory_allocation_error)
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, what, "out of memory");
  else
    gpuimg_error_set(GPUIMG_EXIT_OUTPUT, what, "cannot encode AVIF: %s", err.message);
  return -1;
}

const gpuimg_codec_t gpuimg_codec_libheif = {
    .name = "libheif",
    .library = "libheif",
    .decodes = GPUIMG_FORMAT_BIT(GPUIMG_FORMAT_HEIC) | GPUIMG_FORMAT_BIT(GPUIMG_FORMAT_AVIF),
    .encodes = GPUIMG_FORMAT_BIT(GPUIMG_FORMAT_AVIF),
    .priority = 2,
    .decode = heif_decode_file,
    .encode = heif_encode_avif,
    .metadata = heif_metadata,
};
#else
/* Built without libheif: no formats, so not in the registry. */
const gpuimg_codec_t gpuimg_codec_libheif = {.name = "libheif", .library = "libheif"};
#endif
