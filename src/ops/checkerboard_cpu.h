/* checkerboard_cpu.h: the checkerboard operation's CPU reference and divergence prediction,
 * for the tests. */
#ifndef GPUIMG_CHECKERBOARD_CPU_H
#define GPUIMG_CHECKERBOARD_CPU_H

#include "base.h"

int gpuimg_checkerboard_cpu(const gpuimg_image_t *src, int cell, int amount, gpuimg_image_t *dst);
/* The same on rows y0 .. y1-1 of dst only. */
int gpuimg_checkerboard_cpu_rows(const gpuimg_image_t *src, int cell, int amount,
                                 gpuimg_image_t *dst, int y0, int y1);

/* The warps of a w x h image in bw x bh blocks, and those the per-pixel kernel's branch
 * (even or odd cell) splits; map as for gpuimg_divergence_predict() (NULL: counts only). */
void gpuimg_divergence_checkerboard(int w, int h, int cell, int bw, int bh, uint64_t *warps,
                                    uint64_t *divergent, uint8_t *map);

#endif
