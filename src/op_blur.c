/* op_blur.c: the blur operation: options and the CPU reference (exact running box sums). */
#include "ops.h"

#include <stdlib.h>
#include <string.h>

/* floor(sum / count) for sum < 2^32, via a double reciprocal and one correction step:
 * exact, and several times faster than a 32-bit divide in the inner loop. */
static inline uint8_t div_exact(uint32_t sum, uint32_t count, double inv)
{
  uint32_t q = (uint32_t)((double)sum * inv);
  if ((uint64_t)q * count > sum)
    q--;
  else if ((uint64_t)(q + 1) * count <= sum)
    q++;
  return (uint8_t)q;
}

/* out[x] = sum of row[clamp(x + k)] for k in -r..r, per channel: O(w) whatever r is. */
static void hsum_row(const uint8_t *row, int w, int c, int r, uint32_t *out)
{
  int last = w - 1;
  for (int ch = 0; ch < c; ch++) {
    const uint8_t *p = row + ch;
    uint32_t *o = out + ch;
    uint32_t s = (uint32_t)r * p[0];
    int hi = r < last ? r : last;
    for (int k = 0; k <= hi; k++)
      s += p[(size_t)k * c];
    if (r > last)
      s += (uint32_t)(r - last) * p[(size_t)last * c];
    o[0] = s;
    for (int x = 1; x < w; x++) {
      int in = x + r < last ? x + r : last;
      int out_x = x - r - 1 > 0 ? x - r - 1 : 0;
      s += p[(size_t)in * c];
      s -= p[(size_t)out_x * c];
      o[(size_t)x * c] = s;
    }
  }
}

int gpuimg_blur_cpu(const gpuimg_image_t *src, int radius, gpuimg_image_t *dst)
{
  int w = src->width, h = src->height, c = src->channels, r = radius;
  size_t row_len = (size_t)w * (size_t)c;
  size_t stride = row_len;

  if (r == 0) {
    memcpy(dst->data, src->data, row_len * (size_t)h);
    return 0;
  }
  uint32_t *col = malloc(row_len * sizeof *col);
  uint32_t *h_in = malloc(row_len * sizeof *h_in);
  uint32_t *h_out = malloc(row_len * sizeof *h_out);
  if (!col || !h_in || !h_out) {
    free(col);
    free(h_in);
    free(h_out);
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, "blur", "out of memory");
    return -1;
  }

  /* col[i] = sum over the clamped rows y-r..y+r of the horizontal sums. */
  int last = h - 1;
  hsum_row(src->data, w, c, r, h_in);
  for (size_t i = 0; i < row_len; i++)
    col[i] = (uint32_t)r * h_in[i];
  int hi = r < last ? r : last;
  for (int k = 0; k <= hi; k++) {
    hsum_row(src->data + (size_t)k * stride, w, c, r, h_in);
    for (size_t i = 0; i < row_len; i++)
      col[i] += h_in[i];
  }
  if (r > last) {
    hsum_row(src->data + (size_t)last * stride, w, c, r, h_in);
    for (size_t i = 0; i < row_len; i++)
      col[i] += (uint32_t)(r - last) * h_in[i];
  }

  uint32_t count = (uint32_t)(2 * r + 1) * (uint32_t)(2 * r + 1);
  uint32_t half = count / 2;
  double inv = 1.0 / (double)count;
  for (int y = 0; y < h; y++) {
    if (y > 0) {
      int in = y + r < last ? y + r : last;
      int out_y = y - r - 1 > 0 ? y - r - 1 : 0;
      hsum_row(src->data + (size_t)in * stride, w, c, r, h_in);
      hsum_row(src->data + (size_t)out_y * stride, w, c, r, h_out);
      for (size_t i = 0; i < row_len; i++)
        col[i] += h_in[i] - h_out[i];
    }
    uint8_t *d = dst->data + (size_t)y * stride;
    for (size_t i = 0; i < row_len; i++)
      d[i] = div_exact(col[i] + half, count, inv);
  }
  free(col);
  free(h_in);
  free(h_out);
  return 0;
}

const char *gpuimg_blur_variant_name(gpuimg_blur_variant_t v)
{
  switch (v) {
  case GPUIMG_BLUR_NAIVE:
    return "naive";
  case GPUIMG_BLUR_TILED:
    return "tiled";
  default:
    return "fast";
  }
}

static void blur_defaults(gpuimg_params_t *p)
{
  p->radius = 2;
  p->variant = GPUIMG_BLUR_FAST;
}

static int blur_out_channels(int in)
{
  return in;
}

static int blur_cpu_step(const gpuimg_params_t *p, const gpuimg_image_t *src,
                         const gpuimg_image_t *mask, gpuimg_image_t *dst)
{
  (void)mask;
  return gpuimg_blur_cpu(src, p->radius, dst);
}

#ifdef GPUIMG_HAVE_CUDA
static int blur_gpu_step(gpuimg_cuda_t *ctx, const gpuimg_params_t *p, const uint8_t *d_src,
                         const uint8_t *d_mask, uint8_t *d_dst, int width, int height,
                         int channels, gpuimg_launch_t *info)
{
  (void)d_mask;
  return gpuimg_blur_gpu(ctx, d_src, d_dst, width, height, channels, p->radius, p->variant,
                         info);
}
#endif

static const char *blur_variant(const gpuimg_params_t *p)
{
  return gpuimg_blur_variant_name(p->variant);
}

const gpuimg_op_t gpuimg_op_blur = {
  .name = "blur",
  .summary = "box (mean) blur over the (2N+1)x(2N+1) window, edges clamped",
  .options_help = "-r, --radius N   window radius, 0..2047 (default 2)\n"
                  "--naive          naive CUDA kernel (global-memory window)\n"
                  "--tiled          tiled CUDA kernel (shared-memory tile + apron)\n",
  .options = GPUIMG_OPT_RADIUS | GPUIMG_OPT_NAIVE | GPUIMG_OPT_TILED,
  .defaults = blur_defaults,
  .out_channels = blur_out_channels,
  .run_cpu = blur_cpu_step,
#ifdef GPUIMG_HAVE_CUDA
  .run_gpu = blur_gpu_step,
#endif
  .variant_name = blur_variant,
};
