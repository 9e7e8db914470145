/* sample.h: the built-in sample (assets/sample.png and its mask), compiled into the command
 * and the tests that use it (assets/meson.build embeds them as sample_data.c). */
#ifndef GPUIMG_SAMPLE_H
#define GPUIMG_SAMPLE_H

#include <stddef.h>

extern const unsigned char gpuimg_sample_png[];
extern const size_t gpuimg_sample_png_size;
extern const unsigned char gpuimg_sample_mask_png[];
extern const size_t gpuimg_sample_mask_png_size;

#endif
