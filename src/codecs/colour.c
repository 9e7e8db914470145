/* colour.c: --to-srgb: an RGB or RGBA image's pixels converted from its ICC profile to sRGB
 * with lcms2, the profile then replaced by lcms2's sRGB. */
#include "colour.h"

#ifdef GPUIMG_HAVE_LCMS2
#include <lcms2.h>
#include <stdio.h>
#include <string.h>

/* Whether the transform (of pixels of c bytes) leaves every colour of a 16-step cube
 * (corners included) as it was: the profile is sRGB, or as good as it, and the pixels are
 * left alone. */
static int is_identity(cmsHTRANSFORM t, int c)
{
  uint8_t in[17 * 17 * 17 * 4], out[sizeof in];
  size_t n = 0;
  for (int r = 0; r <= 256; r += 16)
    for (int g = 0; g <= 256; g += 16)
      for (int b = 0; b <= 256; b += 16, n += (size_t)c) {
        in[n] = (uint8_t)(r > 255 ? 255 : r);
        in[n + 1] = (uint8_t)(g > 255 ? 255 : g);
        in[n + 2] = (uint8_t)(b > 255 ? 255 : b);
        if (c == 4)
          in[n + 3] = 255;
      }
  cmsDoTransform(t, in, out, (cmsUInt32Number)(n / (size_t)c));
  return memcmp(in, out, n) == 0;
}

/* The pixels of img through t, row by row (alpha copied). */
static void convert_rows(cmsHTRANSFORM t, gpuimg_image_t *img)
{
  size_t row = (size_t)img->width * (size_t)img->channels;
  for (int y = 0; y < img->height; y++)
    cmsDoTransform(t, img->data + (size_t)y * row, img->data + (size_t)y * row,
                   (cmsUInt32Number)img->width);
}

/* The ICC header's creation date (dateTimeNumber: year, month, day, hours, minutes, seconds,
 * each 16 bits big-endian, at byte 24), which lcms2 sets to the time the profile is made: fixed
 * at 2000-01-01 00:00:00 so that the same input gives the same bytes at any time. */
static void fix_date(uint8_t *header)
{
  static const uint8_t date[12] = {0x07, 0xd0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0};
  memcpy(header + 24, date, sizeof date);
}

/* lcms2's sRGB profile, serialized with a fixed creation date, into icc (replacing what it
 * held). */
static int srgb_profile(gpuimg_buf_t *icc)
{
  cmsHPROFILE p = cmsCreate_sRGBProfile();
  cmsUInt32Number n = 0;
  int rc = -1;
  icc->size = 0;
  if (p && cmsSaveProfileToMem(p, NULL, &n) && gpuimg_buf_reserve(icc, n) == 0 &&
      cmsSaveProfileToMem(p, icc->data, &n) && n >= 128) {
    fix_date(icc->data);
    icc->size = n;
    rc = 0;
  }
  if (p)
    cmsCloseProfile(p);
  return rc;
}

int gpuimg_colour_to_srgb(gpuimg_image_t *img, gpuimg_buf_t *icc, const char *what, char *warning,
                          size_t warning_size)
{
  if (!icc->size || img->channels < 3)
    return 0; /* no profile: taken as sRGB; gray: no colour to convert */
  cmsHPROFILE in = cmsOpenProfileFromMem(icc->data, (cmsUInt32Number)icc->size);
  if (!in || cmsGetColorSpace(in) != cmsSigRgbData) {
    snprintf(warning, warning_size, "ICC profile not converted to sRGB: %s",
             in ? "not an RGB profile" : "lcms2 cannot read it");
    if (in)
      cmsCloseProfile(in);
    return 0;
  }
  cmsHPROFILE out = cmsCreate_sRGBProfile();
  cmsUInt32Number type = img->channels == 4 ? TYPE_RGBA_8 : TYPE_RGB_8;
  cmsHTRANSFORM t = out ? cmsCreateTransform(in, type, out, type, INTENT_RELATIVE_COLORIMETRIC,
                                             cmsFLAGS_BLACKPOINTCOMPENSATION | cmsFLAGS_COPY_ALPHA)
                        : NULL;
  cmsCloseProfile(in);
  if (out)
    cmsCloseProfile(out);
  if (!t) {
    snprintf(warning, warning_size, "ICC profile not converted to sRGB: lcms2 cannot use it");
    return 0;
  }
  int rc = 0;
  if (!is_identity(t, img->channels)) {
    convert_rows(t, img);
    if (srgb_profile(icc) < 0) {
      gpuimg_error_set(GPUIMG_EXIT_FAILURE, what, "out of memory");
      rc = -1;
    }
  }
  cmsDeleteTransform(t);
  return rc;
}

int gpuimg_colour_available(void)
{
  return 1;
}
#else
int gpuimg_colour_to_srgb(gpuimg_image_t *img, gpuimg_buf_t *icc, const char *what, char *warning,
                          size_t warning_size)
{
  (void)img, (void)icc, (void)what, (void)warning, (void)warning_size;
  return 0;
}

int gpuimg_colour_available(void)
{
  return 0;
}
#endif
