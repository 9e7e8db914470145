/* codec.c: formats by name, where decoders put pixels, and which codec serves under --codec. */
#include "codec.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

int gpuimg_codec_have_libpng(void)
{
#ifdef GPUIMG_HAVE_LIBPNG
  return 1;
#else
  return 0;
#endif
}

int gpuimg_codec_have_libjpeg(void)
{
#ifdef GPUIMG_HAVE_LIBJPEG
  return 1;
#else
  return 0;
#endif
}

int gpuimg_codec_have_nvjpeg(void)
{
#ifdef GPUIMG_HAVE_NVJPEG
  return 1;
#else
  return 0;
#endif
}

const gpuimg_codec_t *gpuimg_codec_decoder(gpuimg_codec_choice_t choice, const uint8_t *bytes,
                                           size_t size)
{
#ifdef GPUIMG_HAVE_NVJPEG
  if (choice == GPUIMG_CODEC_NVJPEG) {
    if (size >= 3 && bytes[0] == 0xff && bytes[1] == 0xd8 && bytes[2] == 0xff)
      return &gpuimg_codec_nvjpeg;
    choice = GPUIMG_CODEC_AUTO;
  }
#endif
#ifdef GPUIMG_HAVE_LIBJPEG
  /* The JPEG signature, as stb recognises it: anything else (PNG, or a file stb refuses
   * with its own message) goes to stb. */
  if ((choice == GPUIMG_CODEC_AUTO || choice == GPUIMG_CODEC_LIBJPEG) && size >= 3 &&
      bytes[0] == 0xff && bytes[1] == 0xd8 && bytes[2] == 0xff)
    return &gpuimg_codec_libjpeg;
#else
  (void)choice;
  (void)bytes;
  (void)size;
#endif
  return &gpuimg_codec_stb;
}

const gpuimg_codec_t *gpuimg_codec_encoder(gpuimg_codec_choice_t choice, gpuimg_format_t fmt,
                                           int png_level)
{
#ifdef GPUIMG_HAVE_NVJPEG
  if (choice == GPUIMG_CODEC_NVJPEG) {
    if (fmt == GPUIMG_FORMAT_JPEG)
      return &gpuimg_codec_nvjpeg;
    choice = GPUIMG_CODEC_AUTO;
  }
#endif
  if (fmt == GPUIMG_FORMAT_PNG &&
      (choice == GPUIMG_CODEC_FASTPNG || (choice == GPUIMG_CODEC_AUTO && png_level <= 1)))
    return &gpuimg_codec_fastpng;
#ifdef GPUIMG_HAVE_LIBPNG
  if (fmt == GPUIMG_FORMAT_PNG && (choice == GPUIMG_CODEC_AUTO || choice == GPUIMG_CODEC_LIBPNG))
    return &gpuimg_codec_libpng;
#endif
#ifdef GPUIMG_HAVE_LIBJPEG
  if (fmt == GPUIMG_FORMAT_JPEG && (choice == GPUIMG_CODEC_AUTO || choice == GPUIMG_CODEC_LIBJPEG))
    return &gpuimg_codec_libjpeg;
#endif
  return &gpuimg_codec_stb;
}

static _Thread_local gpuimg_pixel_source_t pixel_source;
static _Thread_local void *pixel_source_ctx;

void gpuimg_codec_set_pixel_source(gpuimg_pixel_source_t fn, void *ctx)
{
  pixel_source = fn;
  pixel_source_ctx = ctx;
}

uint8_t *gpuimg_codec_pixels(size_t bytes, int *borrowed)
{
  uint8_t *p = pixel_source ? pixel_source(pixel_source_ctx, bytes) : NULL;
  *borrowed = p != NULL;
  return p ? p : malloc(bytes ? bytes : 1);
}

/* Whether bytes can begin an image the codec reads: a PNG or a JPEG signature (see
 * stb.c), or a prefix of one. */

gpuimg_format_t gpuimg_format_from_name(const char *path)
{
  const char *dot = strrchr(path, '.');
  const char *slash = strrchr(path, '/');
  if (!dot || (slash && dot < slash))
    return GPUIMG_FORMAT_NONE;
  dot++;
  if (strcasecmp(dot, "png") == 0)
    return GPUIMG_FORMAT_PNG;
  if (strcasecmp(dot, "jpg") == 0 || strcasecmp(dot, "jpeg") == 0)
    return GPUIMG_FORMAT_JPEG;
  if (strcasecmp(dot, "bmp") == 0)
    return GPUIMG_FORMAT_BMP;
  if (strcasecmp(dot, "tga") == 0)
    return GPUIMG_FORMAT_TGA;
  return GPUIMG_FORMAT_NONE;
}

const char *gpuimg_format_name(gpuimg_format_t fmt)
{
  static const char *const names[] = {"png", "jpeg", "bmp", "tga"};
  return fmt >= GPUIMG_FORMAT_PNG && fmt <= GPUIMG_FORMAT_TGA ? names[fmt] : "none";
}

int gpuimg_encode_check(const gpuimg_image_t *img, gpuimg_format_t fmt, gpuimg_format_t only,
                        const char *codec, const char *what)
{
  static const char *const upper[] = {"PNG", "JPEG", "BMP", "TGA"};
  if (fmt != only) {
    gpuimg_error_set(GPUIMG_EXIT_OUTPUT, what, "cannot encode %s with %s (%s only)",
                     gpuimg_format_name(fmt), codec, upper[only]);
    return -1;
  }
  if (img->channels < 1 || img->channels > 4 || img->width < 1 || img->height < 1) {
    gpuimg_error_set(GPUIMG_EXIT_OUTPUT, what,
                     "cannot encode %s: unsupported %dx%d image of %d channels", upper[only],
                     img->width, img->height, img->channels);
    return -1;
  }
  return 0;
}
