/* divergence.c: host-side prediction of the warps that diverge in the teaching kernels. */
#include "ops.h"

/* Walks every warp of a bw x bh block grid over a w x h image the way CUDA forms warps
 * (consecutive thread indices tx + ty * bw, 32 at a time) and counts the warps with at
 * least one lane in the image, and those whose in-image lanes take both sides of the
 * branch side(x, y); map, when set, gets one byte per warp in launch order (1: divergent). */
void gpuimg_divergence_predict(int w, int h, int bw, int bh, int (*side)(const void *, int, int),
                               const void *arg, uint64_t *warps, uint64_t *divergent, uint8_t *map)
{
  int threads = bw * bh;
  int gx = (w + bw - 1) / bw, gy = (h + bh - 1) / bh;
  *warps = *divergent = 0;
  for (int by = 0; by < gy; by++)
    for (int bx = 0; bx < gx; bx++)
      for (int t0 = 0; t0 < threads; t0 += 32) {
        int seen = 0, any_true = 0, any_false = 0;
        for (int t = t0; t < t0 + 32 && t < threads; t++) {
          int x = bx * bw + t % bw, y = by * bh + t / bw;
          if (x >= w || y >= h)
            continue;
          seen = 1;
          if (side(arg, x, y))
            any_true = 1;
          else
            any_false = 1;
        }
        *warps += (uint64_t)seen;
        *divergent += (uint64_t)(any_true && any_false);
        if (map)
          *map++ = (uint8_t)(any_true && any_false);
      }
}

typedef struct {
  const uint8_t *mask;
  int w;
} mask_arg_t;

static int mask_side(const void *arg, int x, int y)
{
  const mask_arg_t *m = arg;
  return m->mask[(size_t)y * (size_t)m->w + (size_t)x] >= 128;
}

void gpuimg_divergence_mask(const gpuimg_image_t *mask, int bw, int bh, uint64_t *warps,
                            uint64_t *divergent, uint8_t *map)
{
  mask_arg_t m = {mask->data, mask->width};
  gpuimg_divergence_predict(mask->width, mask->height, bw, bh, mask_side, &m, warps, divergent,
                            map);
}
