/* libwebp.c: the libwebp WebP codec: still images decoded (lossy, lossless, alpha), an
 * animation's first frame (libwebpdemux), encoded lossy at --quality or lossless under
 * --lossless. */
#include "codec.h"

#ifdef GPUIMG_HAVE_LIBWEBP
#include <stdlib.h>
#include <string.h>

#include <webp/decode.h>
#include <webp/demux.h>
#include <webp/encode.h>

/* WebP's largest side (VP8 and VP8L store 14 bits). */
#define WEBP_MAX_SIDE 16383

static int webp_recognises(const uint8_t *bytes, size_t size)
{
  return size >= 12 && memcmp(bytes, "RIFF", 4) == 0 && memcmp(bytes + 8, "WEBP", 4) == 0;
}

static int webp_fail(const char *what, const char *reason)
{
  gpuimg_error_set(GPUIMG_EXIT_INPUT, what, "cannot decode WebP: %s", reason);
  return -1;
}

/* The header's checks, before any pixel memory: a still image within --max-pixels. The
 * size is checked first, whatever the status: libwebp reports an extended header's canvas
 * (VP8X, sides up to 2^24) from that chunk alone, with no image data after it. */
static int webp_check_header(const uint8_t *bytes, size_t size, const char *what,
                             uint64_t max_pixels, WebPBitstreamFeatures *f)
{
  memset(f, 0, sizeof *f);
  VP8StatusCode st = WebPGetFeatures(bytes, size, f);
  if (f->width > 0 && f->height > 0 && (uint64_t)f->width * (uint64_t)f->height > max_pixels) {
    gpuimg_error_set(GPUIMG_EXIT_INPUT, what,
                     "image is %dx%d, over the limit of %llu pixels (see --max-pixels)", f->width,
                     f->height, (unsigned long long)max_pixels);
    return -1;
  }
  if (st == VP8_STATUS_NOT_ENOUGH_DATA)
    return webp_fail(what, "truncated file");
  if (st != VP8_STATUS_OK || f->width < 1 || f->height < 1)
    return webp_fail(what, "damaged header");
  return 0;
}

/* An animation's first frame, composed on its canvas (transparent where the frame does not
 * cover it), into px as RGB or RGBA; libwebp's status. The demuxer checks the whole file's
 * chunks first. */
static VP8StatusCode webp_first_frame(const uint8_t *bytes, size_t size, uint8_t *px, int width,
                                      int height, int channels)
{
  WebPAnimDecoderOptions o;
  if (!WebPAnimDecoderOptionsInit(&o))
    return VP8_STATUS_INVALID_PARAM;
  o.color_mode = MODE_RGBA;
  o.use_threads = 0;
  WebPData data = {bytes, size};
  WebPAnimDecoder *dec = WebPAnimDecoderNew(&data, &o);
  WebPAnimInfo info;
  uint8_t *canvas;
  int ts;
  VP8StatusCode st = VP8_STATUS_BITSTREAM_ERROR;
  if (dec && WebPAnimDecoderGetInfo(dec, &info) && info.canvas_width == (uint32_t)width &&
      info.canvas_height == (uint32_t)height && WebPAnimDecoderGetNext(dec, &canvas, &ts)) {
    size_t n = (size_t)width * (size_t)height;
    for (size_t i = 0; i < n; i++)
      memcpy(px + i * (size_t)channels, canvas + 4 * i, (size_t)channels);
    st = VP8_STATUS_OK;
  }
  WebPAnimDecoderDelete(dec);
  return st;
}

/* Decodes bytes into px (n bytes, rows of stride bytes) as RGB or RGBA; libwebp's status. */
static VP8StatusCode webp_decode_into(const uint8_t *bytes, size_t size, uint8_t *px, size_t n,
                                      size_t stride, int channels)
{
  WebPDecoderConfig config;
  if (!WebPInitDecoderConfig(&config))
    return VP8_STATUS_INVALID_PARAM;
  config.output.colorspace = channels == 4 ? MODE_RGBA : MODE_RGB;
  config.output.is_external_memory = 1;
  config.output.u.RGBA.rgba = px;
  config.output.u.RGBA.stride = (int)stride;
  config.output.u.RGBA.size = n;
  VP8StatusCode st = WebPDecode(bytes, size, &config);
  WebPFreeDecBuffer(&config.output);
  return st;
}

static int webp_decode(const uint8_t *bytes, size_t size, const char *what, uint64_t max_pixels,
                       gpuimg_image_t *out)
{
  WebPBitstreamFeatures f;
  memset(out, 0, sizeof *out);
  if (webp_check_header(bytes, size, what, max_pixels, &f) < 0)
    return -1;
  int channels = f.has_alpha ? 4 : 3;
  size_t stride = (size_t)f.width * (size_t)channels;
  size_t n = stride * (size_t)f.height;
  int borrowed;
  uint8_t *px = gpuimg_codec_pixels(n, &borrowed);
  if (!px) {
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, what, "out of memory");
    return -1;
  }
  VP8StatusCode st = f.has_animation
                         ? webp_first_frame(bytes, size, px, f.width, f.height, channels)
                         : webp_decode_into(bytes, size, px, n, stride, channels);
  if (st != VP8_STATUS_OK) {
    if (!borrowed)
      free(px);
    /* The header was whole: a failure now is a short or damaged bitstream. */
    return webp_fail(what, "truncated or damaged image data");
  }
  *out = (gpuimg_image_t){f.width, f.height, channels, px, borrowed};
  return 0;
}

/* img as RGB or RGBA for libwebp (which takes no gray): 3 or 4 channels as they are, gray
 * and gray+alpha spread; *tmp holds a copy to free (NULL when img's data is used). */
static const uint8_t *webp_rgb(const gpuimg_image_t *img, uint8_t **tmp, int *channels)
{
  *tmp = NULL;
  *channels = img->channels;
  if (img->channels >= 3)
    return img->data;
  *channels = img->channels == 2 ? 4 : 3;
  size_t px = (size_t)img->width * (size_t)img->height;
  uint8_t *d = malloc(px * (size_t)*channels);
  if (!d)
    return NULL;
  for (size_t i = 0; i < px; i++) {
    const uint8_t *s = img->data + i * (size_t)img->channels;
    uint8_t *o = d + i * (size_t)*channels;
    o[0] = o[1] = o[2] = s[0];
    if (*channels == 4)
      o[3] = s[1];
  }
  *tmp = d;
  return d;
}

/* Imports rgb into pic and encodes it under config into w; 0 or -1 (pic's error_code). */
static int webp_run(WebPConfig *config, WebPPicture *pic, const uint8_t *rgb, int channels,
                    WebPMemoryWriter *w)
{
  int stride = pic->width * channels;
  int ok = channels == 4 ? WebPPictureImportRGBA(pic, rgb, stride)
                         : WebPPictureImportRGB(pic, rgb, stride);
  pic->writer = WebPMemoryWrite;
  pic->custom_ptr = w;
  return ok && WebPEncode(config, pic) ? 0 : -1;
}

static int webp_encode(const gpuimg_image_t *img, gpuimg_format_t fmt,
                       const gpuimg_encode_opts_t *opts, const char *what, gpuimg_buf_t *out)
{
  if (gpuimg_encode_check(img, fmt, GPUIMG_FORMAT_WEBP, "libwebp", what) < 0)
    return -1;
  if (img->width > WEBP_MAX_SIDE || img->height > WEBP_MAX_SIDE) {
    gpuimg_error_set(GPUIMG_EXIT_OUTPUT, what,
                     "cannot encode WebP: image is %dx%d, over WebP's largest side of %d pixels",
                     img->width, img->height, WEBP_MAX_SIDE);
    return -1;
  }
  WebPConfig config;
  WebPPicture pic;
  WebPMemoryWriter w;
  uint8_t *tmp;
  int channels;
  if (!WebPConfigInit(&config) || !WebPPictureInit(&pic)) {
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, what, "cannot encode WebP: libwebp version mismatch");
    return -1;
  }
  config.quality = (float)opts->quality;
  config.lossless = opts->lossless != 0;
  config.exact = opts->lossless != 0; /* keep the colour of transparent pixels */
  pic.use_argb = opts->lossless != 0;
  pic.width = img->width;
  pic.height = img->height;
  WebPMemoryWriterInit(&w);
  const uint8_t *rgb = webp_rgb(img, &tmp, &channels);
  int rc = rgb ? webp_run(&config, &pic, rgb, channels, &w) : -1;
  if (rc == 0 && gpuimg_buf_append(out, w.mem, w.size) < 0)
    rc = -1;
  if (rc < 0) {
    if (!rgb || pic.error_code == VP8_ENC_ERROR_OUT_OF_MEMORY || pic.error_code == VP8_ENC_OK)
      gpuimg_error_set(GPUIMG_EXIT_FAILURE, what, "out of memory");
    else
      gpuimg_error_set(GPUIMG_EXIT_OUTPUT, what, "cannot encode WebP: libwebp error %d",
                       (int)pic.error_code);
  }
  free(tmp);
  WebPPictureFree(&pic);
  WebPMemoryWriterClear(&w);
  return rc;
}

const gpuimg_codec_t gpuimg_codec_libwebp = {
    .name = "libwebp",
    .library = "libwebp",
    .decodes = GPUIMG_FORMAT_BIT(GPUIMG_FORMAT_WEBP),
    .encodes = GPUIMG_FORMAT_BIT(GPUIMG_FORMAT_WEBP),
    .recognises = webp_recognises,
    .priority = 2,
    .decode = webp_decode,
    .encode = webp_encode,
};
#else
/* Built without libwebp: no formats, so not in the registry. */
const gpuimg_codec_t gpuimg_codec_libwebp = {.name = "libwebp", .library = "libwebp"};
#endif
