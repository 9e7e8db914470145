/* gray_cpu.h: the gray operation's CPU reference, for the tests. */
#ifndef GPUIMG_GRAY_CPU_H
#define GPUIMG_GRAY_CPU_H

#include "base.h"

/* Rec. 601 luma: dst has gray's output channels (1 for RGB, 2 for RGBA, else src's). */
int gpuimg_gray_cpu(const gpuimg_image_t *src, gpuimg_image_t *dst);
/* The same on rows y0 .. y1-1 of dst only. */
int gpuimg_gray_cpu_rows(const gpuimg_image_t *src, gpuimg_image_t *dst, int y0, int y1);

#endif
