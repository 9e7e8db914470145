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
  case GPUIMG_VARIANT_GRID_STRIDE:
    return "grid-stride";
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
  return GPUIMG_LAUNCH_KERNEL;
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

/* The model's registers, occupancy and waves of l's shape on gpu; -1 when the resource table
 * has no row for l's kernel instance on gpu's architecture. */
static int model_occupancy(const gpuimg_gpu_t *gpu, gpuimg_launch_t *l)
{
  const gpuimg_kernel_resources_t *res =
      gpuimg_kernel_resources_find(gpuimg_model_arch(gpu->cc_major, gpu->cc_minor), l->instance);
  if (!res)
    return -1;
  gpuimg_occupancy_t o;
  int threads = (int)(l->block[0] * l->block[1] * l->block[2]);
  gpuimg_model_occupancy(gpu, threads, res->registers, (size_t)res->static_shared + l->shared_bytes,
                         &o);
  l->has_occupancy = 1;
  l->registers = res->registers;
  l->static_shared = (size_t)res->static_shared;
  l->active_blocks_per_sm = o.blocks_per_sm;
  l->occupancy_pct = o.occupancy_pct;
  l->limited_by = o.limited_by;
  l->resident_blocks = (long long)o.blocks_per_sm * gpu->sms;
  return GPUIMG_LAUNCH_KERNEL;
}

int gpuimg_op_predict(const gpuimg_op_t *op, const void *params, int w, int h, int c,
                      const gpuimg_launch_env_t *env, const gpuimg_image_t *mask,
                      gpuimg_launch_t *l)
{
  memset(l, 0, sizeof *l);
  if (!op->launch)
    return GPUIMG_LAUNCH_UNMODELLED;
  gpuimg_launch_env_t at = *env;
  at.resident = 0;
  int rc = op->launch(params, w, h, c, &at, l);
  if (rc != GPUIMG_LAUNCH_KERNEL)
    return rc;
  if (model_occupancy(env->gpu, l) < 0)
    return GPUIMG_LAUNCH_KERNEL; /* the shape alone: no registers for this architecture */
  if (l->grid_is_resident && l->resident_blocks > 0) { /* the grid follows the occupancy */
    gpuimg_launch_t shaped = *l;
    at.resident = l->resident_blocks;
    if (op->launch(params, w, h, c, &at, &shaped) != GPUIMG_LAUNCH_KERNEL)
      return GPUIMG_LAUNCH_IMPOSSIBLE;
    memcpy(l->grid, shaped.grid, sizeof l->grid);
  }
  double blocks = (double)l->grid[0] * l->grid[1] * l->grid[2];
  l->waves = l->resident_blocks > 0 ? blocks / (double)l->resident_blocks : 0.0;
  if (l->divergence_kernel && op->divergence) {
    uint64_t warps, divergent;
    op->divergence(params, mask, w, h, (int)l->block[0], (int)l->block[1], &warps, &divergent,
                   NULL);
    l->has_divergence = 1;
    l->warps = warps;
    l->divergent_warps = divergent;
  }
  return GPUIMG_LAUNCH_KERNEL;
}
