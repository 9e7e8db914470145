/* test_encoders.c: every encoder compiled in leaves the image it encodes as it was (libtiff's
 * predictor differences a row in place: the encoder must give it a copy), and what it writes
 * of a lossless format decodes back to the same pixels. */
#define TEST_NAME "test_encoders"
#include "test_fail.h"

#include "codec.h"

#include <string.h>

/* One encode of img by c as fmt (TIFF: under compression), checked as the file says. */
static void check_encode(const gpuimg_codec_t *c, gpuimg_format_t fmt, int compression,
                         const gpuimg_image_t *img, const uint8_t *copy)
{
  size_t n = gpuimg_image_bytes(img->width, img->height, img->channels);
  gpuimg_buf_t out = {0};
  gpuimg_encode_opts_t opts = {
      .quality = 90, .png_level = 6, .lossless = 1, .compression = compression};
  if (c->encode(img, fmt, &opts, "test", &out) < 0)
    fail("%s could not encode %s: %s", c->name, gpuimg_format_name(fmt), gpuimg_error_message());
  if (memcmp(img->data, copy, n) != 0)
    fail("%s changed the image it encoded as %s (compression %d)", c->name, gpuimg_format_name(fmt),
         compression);
  const gpuimg_codec_t *d = gpuimg_codec_decoder(GPUIMG_CODEC_AUTO, out.data, out.size);
  gpuimg_image_t back;
  if ((fmt == GPUIMG_FORMAT_PNG || fmt == GPUIMG_FORMAT_TIFF) &&
      (d->decode(out.data, out.size, "test", 1 << 20, &back) < 0 || back.width != img->width ||
       back.height != img->height || back.channels != img->channels ||
       memcmp(back.data, copy, n) != 0))
    fail("%s's %s (compression %d) does not decode to its pixels", c->name, gpuimg_format_name(fmt),
         compression);
  if (fmt == GPUIMG_FORMAT_PNG || fmt == GPUIMG_FORMAT_TIFF)
    gpuimg_image_free(&back);
  gpuimg_buf_free(&out);
}

int main(void)
{
  int checked = 0;
  for (int channels = 1; channels <= 4; channels++) {
    gpuimg_image_t img;
    if (gpuimg_image_alloc(&img, 37, 19, channels) < 0)
      fail("out of memory");
    size_t n = gpuimg_image_bytes(37, 19, channels);
    for (size_t i = 0; i < n; i++) /* rows that differ from pixel to pixel, as a predictor sees */
      img.data[i] = (uint8_t)(i * 7919 >> 3);
    uint8_t *copy = malloc(n);
    if (!copy)
      fail("out of memory");
    memcpy(copy, img.data, n);
    const gpuimg_codec_t *c;
    for (int k = 0; (c = gpuimg_codec_at(k)); k++)
      for (int f = GPUIMG_FORMAT_PNG; f <= GPUIMG_FORMAT_LAST; f++) {
        if (!(c->encodes & GPUIMG_FORMAT_BIT(f)) || c->device)
          continue;
        for (int comp = 0; comp < (f == GPUIMG_FORMAT_TIFF ? 3 : 1); comp++, checked++)
          check_encode(c, (gpuimg_format_t)f, comp, &img, copy);
      }
    free(copy);
    gpuimg_image_free(&img);
  }
  printf("test_encoders: %d encodes left their image as it was\n", checked);
  return 0;
}
