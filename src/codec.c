/* codec.c: which codec decodes an input and encodes an output under --codec. */
#include "codec.h"

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
