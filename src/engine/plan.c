/* plan.c: the settings of a run every client shares (backend, codecs, limits, repetitions),
 * as an option table over gpuimg_plan_t, and the plan's defaults. */
#include "plan.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void gpuimg_plan_init(gpuimg_plan_t *plan)
{
  memset(plan, 0, sizeof *plan);
  plan->backend = GPUIMG_BACKEND_AUTO;
  plan->repeat = 1;
  plan->quality = GPUIMG_DEFAULT_QUALITY;
  plan->png_level = GPUIMG_DEFAULT_PNG_LEVEL;
  plan->codec = GPUIMG_CODEC_AUTO;
  plan->max_pixels = GPUIMG_DEFAULT_MAX_PIXELS;
}

static int parse_block(const gpuimg_option_t *o, const char *spelled, const char *s, void *target)
{
  gpuimg_plan_t *plan = target;
  char *end;
  (void)o, (void)spelled;
  errno = 0;
  long w = strtol(s, &end, 10);
  if (!errno && end != s && (*end == 'x' || *end == 'X')) {
    const char *hs = end + 1;
    long h = strtol(hs, &end, 10);
    if (!errno && end != hs && !*end && w >= 1 && h >= 1 && w <= 1024 && h <= 1024 &&
        w * h <= 1024) {
      plan->block_w = (int)w;
      plan->block_h = (int)h;
      return 0;
    }
  }
  gpuimg_error_set(GPUIMG_EXIT_USAGE, "--block", "invalid value '%s' (expected WxH with W*H <= 1024)",
                   s);
  return -1;
}

/* --codec X for a library this build lacks. */
static int codec_built(const gpuimg_option_t *o, const char *spelled, const char *arg,
                       void *target)
{
  (void)o, (void)target;
  const char *missing = !strcmp(arg, "libpng") && !gpuimg_codec_have_libpng()     ? "libpng"
                        : !strcmp(arg, "libjpeg") && !gpuimg_codec_have_libjpeg() ? "libjpeg"
                        : !strcmp(arg, "nvjpeg") && !gpuimg_codec_have_nvjpeg()   ? "nvJPEG"
                                                                                  : NULL;
  if (!missing)
    return 0;
  gpuimg_error_set(GPUIMG_EXIT_USAGE, spelled, "not available: this gpuimg was built without %s",
                   missing);
  return -1;
}

static const char *const backends[] = {"auto", "cpu", "cuda", NULL};
static const char *const codecs[] = {"auto", "stb", "fastpng", "libpng", "libjpeg", "nvjpeg", NULL};

#define PLAN(field) offsetof(gpuimg_plan_t, field)
const gpuimg_option_t gpuimg_plan_options[] = {
    {"backend", 0, GPUIMG_OPTION_CHOICE, PLAN(backend), 0, 0, 0, backends, "B", NULL, NULL, NULL},
    {"block", 0, GPUIMG_OPTION_CUSTOM, 0, 0, 0, 0, NULL, "WxH", NULL, NULL, parse_block},
    {"repeat", 0, GPUIMG_OPTION_INT, PLAN(repeat), 1, 100000, 0, NULL, "N", NULL, NULL, NULL},
    {"warmup", 0, GPUIMG_OPTION_INT, PLAN(warmup), 0, 10000, 0, NULL, "M", NULL, NULL, NULL},
    {"quality", 0, GPUIMG_OPTION_INT, PLAN(quality), 1, 100, 0, NULL, "Q", NULL, NULL, NULL},
    {"codec", 0, GPUIMG_OPTION_CHOICE, PLAN(codec), 0, 0, 0, codecs, "C", NULL, NULL, codec_built},
    {"png-level", 0, GPUIMG_OPTION_INT, PLAN(png_level), 0, 9, 0, NULL, "N", NULL, NULL, NULL},
    {"max-pixels", 0, GPUIMG_OPTION_U64, PLAN(max_pixels), 1, (long long)1 << 40, 0, NULL, "N",
     NULL, NULL, NULL},
    {"quiet", 'q', GPUIMG_OPTION_FLAG, PLAN(quiet), 0, 0, 1, NULL, NULL, NULL, NULL, NULL},
    {NULL, 0, 0, 0, 0, 0, 0, NULL, NULL, NULL, NULL, NULL},
};

int gpuimg_plan_add_step(gpuimg_plan_t *plan, const char *name)
{
  const gpuimg_op_t *op = gpuimg_ops_find(name);
  if (!op) {
    gpuimg_error_set(GPUIMG_EXIT_USAGE, "", "unknown operation '%s'", name);
    return -1;
  }
  if (plan->nsteps == GPUIMG_MAX_STEPS) {
    gpuimg_error_set(GPUIMG_EXIT_USAGE, "", "too many operations (at most %d)", GPUIMG_MAX_STEPS);
    return -1;
  }
  gpuimg_step_t *s = &plan->steps[plan->nsteps++];
  memset(s, 0, sizeof *s);
  s->op = op;
  gpuimg_ops_init(op, s->params);
  return 0;
}

int gpuimg_step_set(gpuimg_step_t *step, const char *name, const char *spelled, const char *value)
{
  const gpuimg_option_t *o = gpuimg_options_find(step->op->options, name, strlen(name), 0);
  if (!o)
    return 1;
  if (!value && o->kind != GPUIMG_OPTION_FLAG) {
    gpuimg_error_set(GPUIMG_EXIT_USAGE, spelled, "missing value");
    return -1;
  }
  return gpuimg_options_apply(o, spelled, value, step->params);
}
