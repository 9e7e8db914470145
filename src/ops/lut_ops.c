/* lut_ops.c: what the two-phase histogram operations share (equalize, normalize): the CPU
 * reference around their table functions, the --histogram option and the map's launch. */
#include "lut_ops.h"
#include "stats_cpu.h"

#include <stdlib.h>
#include <string.h>

int gpuimg_lut_kernel_chosen(const gpuimg_option_t *o, const char *spelled, const char *arg,
                             void *target)
{
  (void)o, (void)spelled, (void)arg;
  ((gpuimg_lut_params_t *)target)->common.variant = GPUIMG_VARIANT_CHOSEN;
  return 0;
}

void gpuimg_lut_identity(int c, uint8_t *lut)
{
  for (int k = 0; k < c; k++)
    for (int v = 0; v < GPUIMG_STATS_BINS; v++)
      lut[k * GPUIMG_STATS_BINS + v] = (uint8_t)v;
}

/* n pixels of C channels through the tables. */
static void map_pixels(const uint8_t *s, uint8_t *d, size_t n, int c, const uint8_t *lut)
{
  for (size_t i = 0; i < n; i++, s += c, d += c)
    for (int k = 0; k < c; k++)
      d[k] = lut[k * GPUIMG_STATS_BINS + s[k]];
}

int gpuimg_lut_cpu(const gpuimg_image_t *src, gpuimg_image_t *dst, gpuimg_lut_fn *make,
                   const void *params)
{
  int c = src->channels;
  uint64_t hist[4 * GPUIMG_STATS_BINS];
  uint8_t lut[4 * GPUIMG_STATS_BINS];
  gpuimg_stats_t *s = malloc(sizeof *s);
  if (!s) {
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, "", "out of memory");
    return -1;
  }
  gpuimg_stats_cpu(src, s);
  for (int k = 0; k < c; k++)
    memcpy(hist + k * GPUIMG_STATS_BINS, s->ch[k].histogram, sizeof s->ch[k].histogram);
  free(s);
  make(hist, c, params, lut);
  map_pixels(src->data, dst->data, (size_t)src->width * (size_t)src->height, c, lut);
  return 0;
}

int gpuimg_lut_op_launch(const void *params, int w, int h, int c, const gpuimg_launch_env_t *env,
                         gpuimg_launch_t *l)
{
  (void)params;
  return gpuimg_lut_launch(w, h, c, env, l);
}

const char *gpuimg_lut_variant_name(const void *params)
{
  return gpuimg_histogram_names[((const gpuimg_lut_params_t *)params)->histogram];
}
