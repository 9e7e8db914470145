/* portrait_cpu.h: the portrait operation's CPU reference, for the tests. */
#ifndef GPUIMG_PORTRAIT_CPU_H
#define GPUIMG_PORTRAIT_CPU_H

#include "base.h"

/* Keeps the pixels where mask >= 128 and blurs the colour of the others (alpha kept). */
int gpuimg_portrait_cpu(const gpuimg_image_t *src, const gpuimg_image_t *mask, int radius,
                        gpuimg_image_t *dst);
/* The same on rows y0 .. y1-1 of dst only. */
int gpuimg_portrait_cpu_rows(const gpuimg_image_t *src, const gpuimg_image_t *mask, int radius,
                             gpuimg_image_t *dst, int y0, int y1);

#endif
