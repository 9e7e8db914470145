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

const gpuimg_codec_t *gpuimg_codec_encoder(gpuimg_codec_choice_t choice, gpuimg_format_t fmt)
{
#ifdef GPUIMG_HAVE_LIBPNG
  if (fmt == GPUIMG_FORMAT_PNG && choice != GPUIMG_CODEC_STB)
    return &gpuimg_codec_libpng;
#endif
  (void)choice;
  (void)fmt;
  return &gpuimg_codec_stb;
}
