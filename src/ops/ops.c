/* ops.c: the registry's lookups and the pieces of declaration that operations share. */
#include "ops.h"

#include <stdio.h>
#include <string.h>

/* Options store ints into these enums. */
_Static_assert(sizeof(gpuimg_variant_t) == sizeof(int), "gpuimg_variant_t is not int-sized");
_Static_assert(sizeof(gpuimg_tile_t) == sizeof(int), "gpuimg_tile_t is not int-sized");

const char *const gpuimg_tile_names[] = {"u8", "float", NULL};

const gpuimg_op_t *gpuimg_ops_find(const char *name)
{
  for (int i = 0; gpuimg_ops[i]; i++)
    if (strcmp(gpuimg_ops[i]->name, name) == 0)
      return gpuimg_ops[i];
  return NULL;
}

void gpuimg_ops_names(char *buf, size_t size)
{
  int n = 0;
  while (gpuimg_ops[n])
    n++;
  buf[0] = '\0';
  for (int k = 0; k < n; k++) {
    const char *sep = k == 0 ? "" : k + 1 == n ? " or " : ", ";
    size_t used = strlen(buf);
    snprintf(buf + used, size - used, "%s%s", sep, gpuimg_ops[k]->name);
  }
}

void gpuimg_ops_init(const gpuimg_op_t *op, void *params)
{
  memset(params, 0, GPUIMG_PARAMS_SIZE);
  memcpy(params, op->defaults, op->params_size);
}

int gpuimg_ops_set(const gpuimg_op_t *op, void *params, const char *name, const char *value)
{
  const gpuimg_option_t *o = gpuimg_options_find(op->options, name, strlen(name), 0);
  char spelled[64];
  snprintf(spelled, sizeof spelled, "--%.40s", name);
  if (!o) {
    gpuimg_error_set(GPUIMG_EXIT_USAGE, op->name, "unknown option '%s'", spelled);
    return -1;
  }
  return gpuimg_options_apply(o, spelled, value, params);
}

const gpuimg_params_common_t *gpuimg_ops_common(const void *params)
{
  return params;
}

const char *gpuimg_variant_name(gpuimg_variant_t v)
{
  switch (v) {
  case GPUIMG_VARIANT_NAIVE:
    return "naive";
  case GPUIMG_VARIANT_TILED:
    return "tiled";
  default:
    return "fast";
  }
}

const char *gpuimg_ops_variant_name(const void *params)
{
  return gpuimg_variant_name(gpuimg_ops_common(params)->variant);
}

void gpuimg_ops_report_tile(const void *params, const gpuimg_report_sink_t *sink)
{
  const gpuimg_params_common_t *c = gpuimg_ops_common(params);
  if (c->variant == GPUIMG_VARIANT_TILED)
    sink->string(sink->ctx, "tile", gpuimg_tile_names[c->tile == GPUIMG_TILE_FLOAT]);
}

void gpuimg_ops_report_mask(const void *params, const gpuimg_report_sink_t *sink)
{
  const char *path = gpuimg_ops_common(params)->mask_path;
  sink->string(sink->ctx, "mask", path ? path : "(built-in sample mask)");
}

int gpuimg_op_takes_channels(const gpuimg_op_t *op, int in_channels)
{
  unsigned takes = op->channels ? op->channels : GPUIMG_CHANNELS_ANY;
  return in_channels >= 1 && in_channels <= 4 && (takes & GPUIMG_CHANNELS(in_channels));
}

int gpuimg_op_out_channels(const gpuimg_op_t *op, int in_channels)
{
  return op->out_channels ? op->out_channels(in_channels) : in_channels;
}

int gpuimg_op_out_size(const gpuimg_op_t *op, const void *params, int w, int h, int *out_w,
                       int *out_h)
{
  if (op->out_size)
    return op->out_size(params, w, h, out_w, out_h);
  *out_w = w;
  *out_h = h;
  return 0;
}

const char *gpuimg_op_variant_name(const gpuimg_op_t *op, const void *params)
{
  return op->variant_name ? op->variant_name(params) : gpuimg_ops_variant_name(params);
}

int gpuimg_op_run_cpu(const gpuimg_op_t *op, const void *params, const gpuimg_image_t *src,
                      const gpuimg_image_t *mask, gpuimg_image_t *dst)
{
  if (op->run_cpu)
    return op->run_cpu(params, src, mask, dst);
  return op->run_cpu_rows(params, src, mask, dst, 0, dst->height);
}
