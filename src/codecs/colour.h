/* colour.h: colour management (--to-srgb): an image's pixels converted from its ICC profile to
 * sRGB with lcms2 (colour.c; -Dlcms). */
#ifndef GPUIMG_COLOUR_H
#define GPUIMG_COLOUR_H

#include "buf.h"

/* Converts an RGB or RGBA img from the profile icc holds to sRGB (relative colorimetric
 * intent with black point compensation, alpha copied), in place, and puts lcms2's sRGB
 * profile in icc. Nothing is done without a profile, for a gray image, or when the profile
 * maps every colour to itself (sRGB); a profile lcms2 cannot read or use, or not RGB, is left
 * with a warning in warning (the pixels as they are). 0, or -1 with the error set (out of
 * memory). A build without lcms2 does nothing. */
int gpuimg_colour_to_srgb(gpuimg_image_t *img, gpuimg_buf_t *icc, const char *what, char *warning,
                          size_t warning_size);

/* 1 when this build converts colours (lcms2). */
int gpuimg_colour_available(void);

#endif
