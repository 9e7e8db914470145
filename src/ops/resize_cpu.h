/* resize_cpu.h: the resize operation's CPU reference, for the tests. */
#ifndef GPUIMG_RESIZE_CPU_H
#define GPUIMG_RESIZE_CPU_H

#include "base.h"

/* Resizes src to dst's size (each axis by area weights when area_x / area_y, else
 * bilinear; kernels/resize.h defines the integers), rows y0 .. y1-1 of dst only. */
int gpuimg_resize_cpu_rows(const gpuimg_image_t *src, gpuimg_image_t *dst, int area_x, int area_y,
                           int y0, int y1);

#endif
