/* blur_cpu.h: the blur operation's CPU reference, radius limit and radius option, for
 * portrait and the tests. */
#ifndef GPUIMG_BLUR_CPU_H
#define GPUIMG_BLUR_CPU_H

#include "ops.h"

/* Largest blur radius: (2*2047+1)^2 * 255 + C/2 still fits in 32 bits, so every
 * backend sums exactly in uint32. */
#define GPUIMG_MAX_RADIUS 2047

/* The parameters of blur and of the operations built on it (portrait: its mask file is in
 * the common part). */
typedef struct {
  gpuimg_params_common_t common;
  int radius;
} gpuimg_radius_params_t;

/* The -r/--radius option of blur and of the operations built on it (portrait), for a
 * parameter struct Type with an int radius. */
#define GPUIMG_OPTION_RADIUS(Type, text)                                                           \
  {                                                                                                \
    .long_name = "radius", .short_name = 'r', .kind = GPUIMG_OPTION_INT,                           \
    .offset = offsetof(Type, radius), .min = 0, .max = GPUIMG_MAX_RADIUS, .metavar = "N",          \
    .help = (text)                                                                                 \
  }

/* Box blur over the (2 radius + 1)^2 window, edges clamped, rounded to nearest. */
int gpuimg_blur_cpu(const gpuimg_image_t *src, int radius, gpuimg_image_t *dst);
/* The same on rows y0 .. y1-1 of dst only (the window still reads the rows around them). */
int gpuimg_blur_cpu_rows(const gpuimg_image_t *src, int radius, gpuimg_image_t *dst, int y0,
                         int y1);

#endif
