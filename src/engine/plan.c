/* plan.c: the settings of a run every client shares (backend, codecs, limits, repetitions),
 * as an option table over gpuimg_plan_t, and the plan's defaults. */
#include "plan.h"
#include "colour.h"

#include <stdlib.h>
#include <string.h>

void gpuimg_plan_init(gpuimg_plan_t *plan)
{
  memset(plan, 0, sizeof *plan);
  plan->backend = GPUIMG_BACKEND_AUTO;
  plan->repeat = 1;
  plan->quality = GPUIMG_DEFAULT_QUALITY;
  plan->png_level = GPUIMG_DEFAULT_PNG_LEVEL;
  plan->speed = GPUIMG_DEFAULT_SPEED;
  plan->codec = GPUIMG_CODEC_AUTO;
  plan->max_pixels = GPUIMG_DEFAULT_MAX_PIXELS;
}

static int parse_block(const gpuimg_option_t *o, const char *spelled, const char *s, void *target)
{
  gpuimg_plan_t *plan = target;
  long long w, h;
  (void)o;
  if (gpuimg_options_size(s, 1024, &w, &h) == 0 && w * h <= 1024) {
    plan->block_w = (int)w;
    plan->block_h = (int)h;
    return 0;
  }
  gpuimg_error_set(GPUIMG_EXIT_USAGE, spelled, "invalid value '%s' (expected WxH with W*H <= 1024)",
                   s);
  return -1;
}

/* --codec X for a library this build lacks. */
static int codec_built(const gpuimg_option_t *o, const char *spelled, const char *arg, void *target)
{
  (void)o, (void)target;
  const char *missing = gpuimg_codec_missing(arg);
  if (!missing)
    return 0;
  gpuimg_error_set(GPUIMG_EXIT_USAGE, spelled, "not available: this gpuimg was built without %s",
                   missing);
  return -1;
}

static const char *const backends[] = {"auto", "cpu", "cuda", NULL};

/* CHOICE options store ints into these enums. */
_Static_assert(sizeof(gpuimg_backend_t) == sizeof(int), "gpuimg_backend_t is not int-sized");
_Static_assert(sizeof(gpuimg_codec_choice_t) == sizeof(int), "codec choice is not int-sized");
/* The defaults the help below states. */
_Static_assert(GPUIMG_DEFAULT_QUALITY == 90 && GPUIMG_DEFAULT_PNG_LEVEL == 1 &&
                   GPUIMG_DEFAULT_SPEED == 6 && GPUIMG_DEFAULT_MAX_PIXELS == 268435456,
               "update the defaults in the options' help");

#define PLAN(field) offsetof(gpuimg_plan_t, field)
const gpuimg_option_t gpuimg_plan_options[] = {
    {.long_name = "backend",
     .kind = GPUIMG_OPTION_CHOICE,
     .offset = PLAN(backend),
     .choices = backends,
     .metavar = "B",
     .help = "auto (one image: the one the cost model predicts faster;\n"
             "batches: CUDA when a device is usable, starting on the CPU\n"
             "while it comes up), cpu or cuda"},
    {.long_name = "block",
     .kind = GPUIMG_OPTION_CUSTOM,
     .parse = parse_block,
     .metavar = "WxH",
     .help = "CUDA block shape for 2-D kernels (W*H <= 1024)"},
    {.long_name = "threads",
     .kind = GPUIMG_OPTION_INT,
     .offset = PLAN(threads),
     .min = 1,
     .max = 1024,
     .metavar = "N",
     .help = "CPU backend: threads, each operation split into row bands;\n"
             "also a large PNG's slices and a large JPEG's bands, encoded\n"
             "or (where its restart markers allow) decoded (default: the\n"
             "cores this process may use; in a batch, those cores divided\n"
             "by --jobs)"},
    {.long_name = "repeat",
     .kind = GPUIMG_OPTION_INT,
     .offset = PLAN(repeat),
     .min = 1,
     .max = 100000,
     .metavar = "N",
     .help = "run the processing N times; report median/min/max/noise (default 1)"},
    {.long_name = "warmup",
     .kind = GPUIMG_OPTION_INT,
     .offset = PLAN(warmup),
     .min = 0,
     .max = 10000,
     .metavar = "M",
     .help = "run it M more times first, unrecorded (default 0)"},
    {.long_name = "quality",
     .kind = GPUIMG_OPTION_INT,
     .offset = PLAN(quality),
     .min = 1,
     .max = 100,
     .metavar = "Q",
     .help = "JPEG, lossy WebP and AVIF quality 1..100 (default 90)"},
    {.long_name = "lossless",
     .kind = GPUIMG_OPTION_FLAG,
     .offset = PLAN(lossless),
     .value = 1,
     .help = "WebP outputs lossless (the pixels exactly), not lossy"},
    {.long_name = "compression",
     .kind = GPUIMG_OPTION_CHOICE,
     .offset = PLAN(compression),
     .choices = gpuimg_compression_names,
     .metavar = "C",
     .help = "TIFF outputs: deflate (default), lzw or none"},
    {.long_name = "speed",
     .kind = GPUIMG_OPTION_INT,
     .offset = PLAN(speed),
     .min = 0,
     .max = 9,
     .metavar = "N",
     .help = "AVIF outputs: encoder speed 0..9, 0 slowest and smallest,\n"
             "9 fastest (libaom's cpu-used; default 6)"},
    {.long_name = "codec",
     .kind = GPUIMG_OPTION_CHOICE,
     .offset = PLAN(codec),
     .choices = gpuimg_codec_choices,
     .parse = codec_built,
     .metavar = "C",
     .help = "image codecs: auto (the fastest built in: libjpeg decodes and\n"
             "encodes JPEG; fastpng reads most PNGs and encodes PNG at\n"
             "--png-level 0..1, libpng at 2..9; stb the rest), stb (stb for\n"
             "everything), fastpng, libpng or libjpeg (that one, stb the\n"
             "rest), nvjpeg (JPEG on the GPU with nvJPEG, auto's choice the\n"
             "rest; one image under --backend auto: only where the cost\n"
             "model predicts it pays)"},
    {.long_name = "png-level",
     .kind = GPUIMG_OPTION_INT,
     .offset = PLAN(png_level),
     .min = 0,
     .max = 9,
     .metavar = "N",
     .help = "PNG compression 0..9: 0 stores, 1 fast, 9 smallest (default 1)"},
    {.long_name = "max-pixels",
     .kind = GPUIMG_OPTION_U64,
     .offset = PLAN(max_pixels),
     .min = 1,
     .max = (long long)1 << 40,
     .metavar = "N",
     .help = "refuse larger images (default 268435456)"},
    {.long_name = "fsync",
     .kind = GPUIMG_OPTION_FLAG,
     .offset = PLAN(fsync),
     .value = 1,
     .help = "flush each output file to disk before it gets its name, and\n"
             "its directory after (survives a crash or power loss; slower)"},
    {.long_name = "no-autorotate",
     .kind = GPUIMG_OPTION_FLAG,
     .offset = PLAN(no_autorotate),
     .value = 1,
     .help = "keep the stored pixels: do not turn images and masks as\n"
             "their EXIF Orientation asks (JPEG APP1, PNG eXIf)"},
    {.long_name = "strip",
     .kind = GPUIMG_OPTION_FLAG,
     .offset = PLAN(strip),
     .value = 1,
     .help = "write no metadata: without it the input's ICC profile and\n"
             "EXIF go to JPEG, PNG, WebP and TIFF outputs (EXIF\n"
             "Orientation 1 once the pixels are turned, pixel dimensions\n"
             "the output's; no RGB profile on a gray output; XMP is never\n"
             "carried)"},
    {.long_name = "to-srgb",
     .kind = GPUIMG_OPTION_FLAG,
     .offset = PLAN(to_srgb),
     .value = 1,
     .help = "convert an input with an ICC profile (Display P3, Adobe RGB)\n"
             "to sRGB on decode (lcms2), the output then tagged sRGB"},
    {.long_name = "exact-decode",
     .kind = GPUIMG_OPTION_FLAG,
     .offset = PLAN(exact_decode),
     .value = 1,
     .help = "no shrink-on-load: decode every JPEG at its full size even\n"
             "when a first step that shrinks on load (e.g. resize) would\n"
             "decode it at 1/2, 1/4 or 1/8"},
    {.long_name = "quiet",
     .short_name = 'q',
     .kind = GPUIMG_OPTION_FLAG,
     .offset = PLAN(quiet),
     .value = 1,
     .help = "no notices or warnings on stderr"},
    {0},
};

int gpuimg_plan_add_step(gpuimg_plan_t *plan, const char *name)
{
  const gpuimg_op_t *op = gpuimg_ops_find(name);
  if (!op) {
    char names[256];
    gpuimg_ops_names(names, sizeof names);
    gpuimg_error_set(GPUIMG_EXIT_USAGE, "", "unknown operation '%s' (expected %s)", name, names);
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
  return gpuimg_options_apply(o, spelled, value, step->params);
}

int gpuimg_plan_check(const gpuimg_plan_t *plan)
{
  if (plan->to_srgb && !gpuimg_colour_available()) {
    gpuimg_error_set(GPUIMG_EXIT_USAGE, "--to-srgb", "gpuimg was built without lcms2");
    return -1;
  }
  for (int i = 0; i < plan->nsteps; i++) {
    const gpuimg_step_t *s = &plan->steps[i];
    if (s->op->check && s->op->check(s->params) < 0)
      return -1;
  }
  return 0;
}
