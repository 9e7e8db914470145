/* flow.c: one image through the engine (read, decode, steps, encode, write), for one-image
 * runs and batch workers alike; where each stage runs is the image's route (route.c). */
#define _XOPEN_SOURCE 700
#include "flow.h"

#include "exif.h"
#include "meta.h"
#include "colour.h"
#include "pool.h"

#include <stdlib.h>
#include <string.h>

#define BUILTIN_MASK_NAME "(built-in sample)"

/* Adds a host-timed stage; 0, or -1 with the error set. */
static int stage_add(gpuimg_run_t *run, const char *name, double ms, uint64_t bytes,
                     const char *codec)
{
  gpuimg_stage_t *s = gpuimg_run_stage(run, name, -1, 0, 1);
  if (!s)
    return -1;
  s->ms[0] = ms;
  s->bytes = bytes;
  s->codec = codec;
  return 0;
}

/* Reads a file ("-": stdin) whole as the stage <prefix>read; regular: a regular file only. */
static int read_timed(const char *path, const char *prefix, int regular, gpuimg_buf_t *buf,
                      gpuimg_run_t *run)
{
  char name[32];
  double t0 = gpuimg_now_ms();
  if ((regular ? gpuimg_file_read_regular(path, gpuimg_codec_may_begin, buf)
               : gpuimg_file_read(path, gpuimg_codec_may_begin, buf)) < 0)
    return -1;
  snprintf(name, sizeof name, "%sread", prefix);
  return run ? stage_add(run, name, gpuimg_now_ms() - t0, buf->size, NULL) : 0;
}

/* A warning about a file (what) on stderr, unless it is empty or the plan is quiet. */
static void warn(const gpuimg_plan_t *plan, const char *what, const char *warning)
{
  if (warning[0] && !plan->quiet)
    fprintf(stderr, "gpuimg: %s: warning: %s\n", what, warning);
}

/* Reads the metadata of an input's bytes: its EXIF, and its ICC profile when carry asks for
 * it and --strip does not forbid it (why a block was ignored is said once the input decoded:
 * a file refused gets one line). Returns the orientation the plan applies (1 with
 * --no-autorotate), or -1 with the error set. */
static int read_meta(const gpuimg_plan_t *plan, const uint8_t *bytes, size_t size, const char *what,
                     int carry, gpuimg_meta_t *meta)
{
  if (gpuimg_meta_read(bytes, size, (carry && !plan->strip) || plan->to_srgb, what, meta) < 0)
    return -1;
  return plan->no_autorotate ? 1 : meta->tags.orientation;
}

/* Decodes bytes with codec (at 1/reduction of their size, which only a codec that decodes
 * reduced is given), then turns the pixels as EXIF orientation o asks, as the stage
 * <prefix>decode. */
static int decode_timed(const gpuimg_plan_t *plan, const gpuimg_codec_t *codec,
                        const uint8_t *bytes, size_t size, const char *what, const char *prefix,
                        int o, int reduction, gpuimg_image_t *img, gpuimg_run_t *run)
{
  char name[32];
  double t0 = gpuimg_now_ms();
  gpuimg_codec_set_threads(plan->threads > 0 ? plan->threads : gpuimg_cpu_cores());
  if ((reduction > 1 ? codec->decode_reduced(bytes, size, what, plan->max_pixels, reduction, img)
                     : codec->decode(bytes, size, what, plan->max_pixels, img)) < 0 ||
      gpuimg_image_orient(img, o, what) < 0)
    return -1;
  if (run && !*prefix) {
    run->orientation = o;
    run->reduction = reduction;
  }
  snprintf(name, sizeof name, "%sdecode", prefix);
  uint64_t px = gpuimg_image_bytes(img->width, img->height, img->channels);
  return run ? stage_add(run, name, gpuimg_now_ms() - t0, size + px, codec->name) : 0;
}

int gpuimg_flow_load_mask(const gpuimg_plan_t *plan, const char *path, const uint8_t *builtin,
                          size_t builtin_size, gpuimg_image_t *mask, gpuimg_run_t *run)
{
  gpuimg_buf_t buf = {0};
  gpuimg_meta_t meta = {0};
  const char *what = path ? (strcmp(path, "-") ? path : "<stdin>") : BUILTIN_MASK_NAME;
  if (path && read_timed(path, "mask-", 0, &buf, run) < 0)
    return -1;
  const uint8_t *bytes = path ? buf.data : builtin;
  size_t size = path ? buf.size : builtin_size;
  int o = read_meta(plan, bytes, size, what, 0, &meta);
  /* a mask to turn goes to a host decoder, as an image does (gpuimg_route_image) */
  const gpuimg_codec_t *codec = gpuimg_route_decoder(plan->codec, bytes, size, o > 1);
  int rc = o < 0 ? -1 : decode_timed(plan, codec, bytes, size, what, "mask-", o, 1, mask, run);
  if (rc == 0)
    warn(plan, what, meta.warning);
  gpuimg_meta_free(&meta);
  gpuimg_buf_free(&buf);
  if (rc < 0)
    return -1;
  /* Keep the first channel only, in place. */
  size_t n = (size_t)mask->width * (size_t)mask->height;
  for (size_t k = 1; k < n && mask->channels > 1; k++)
    mask->data[k] = mask->data[k * (size_t)mask->channels];
  mask->channels = 1;
  return 0;
}

int gpuimg_flow_output_flags(const gpuimg_plan_t *plan)
{
  return (plan->fsync ? GPUIMG_OUTPUT_FSYNC : 0) | (plan->quiet ? GPUIMG_OUTPUT_QUIET : 0);
}

const char *gpuimg_flow_mask_path(const gpuimg_plan_t *plan, int i, int *takes)
{
  const gpuimg_step_t *s = &plan->steps[i];
  *takes = s->op->needs_mask;
  return gpuimg_ops_common(s->params)->mask_path;
}

/* Loads every step's mask for this image (shapes NULL: of any size, for the device decode to
 * check once it knows the image's size). */
static int load_masks(const gpuimg_flow_t *flow, const gpuimg_plan_t *plan,
                      const gpuimg_shape_t *shapes, gpuimg_image_t *masks, gpuimg_run_t *run)
{
  char why[160];
  for (int i = 0; i < flow->plan->nsteps; i++) {
    int takes;
    const char *path = gpuimg_flow_mask_path(flow->plan, i, &takes);
    if (!takes)
      continue;
    gpuimg_image_t *m = &masks[i];
    if (!path && !flow->builtin_mask) {
      gpuimg_error_set(GPUIMG_EXIT_USAGE, flow->plan->steps[i].op->name, "no mask file given");
      return -1;
    }
    if (gpuimg_flow_load_mask(plan, path, flow->builtin_mask, flow->builtin_mask_size, m, run) < 0)
      return -1;
    if (shapes && !gpuimg_plan_mask_fits(plan, i, m, shapes, why, sizeof why)) {
      gpuimg_error_set(GPUIMG_EXIT_INPUT, path ? path : BUILTIN_MASK_NAME, "mask %s", why);
      return -1;
    }
  }
  return 0;
}

/* The batch's shared masks must have the size of their step's input. */
static int check_masks(const gpuimg_flow_t *flow, const gpuimg_plan_t *plan, const char *what,
                       const gpuimg_shape_t *shapes)
{
  char why[160];
  for (int i = 0; i < plan->nsteps; i++) {
    int takes;
    const char *path = gpuimg_flow_mask_path(plan, i, &takes);
    if (!gpuimg_plan_mask_fits(plan, i, &flow->masks[i], shapes, why, sizeof why)) {
      gpuimg_error_set(GPUIMG_EXIT_INPUT, what, "mask %s %s", path, why);
      return -1;
    }
  }
  return 0;
}

/* What one image holds while it goes through the flow. */
typedef struct {
  const gpuimg_flow_t *flow;
  gpuimg_job_t *job;
  gpuimg_run_t *run;
  gpuimg_pipeline_t *own; /* a runner opened for this image only */
  gpuimg_buf_t file, encoded;
  gpuimg_meta_t meta; /* the input's, carried to the output */
  gpuimg_image_t src, dst;
  gpuimg_image_t masks[GPUIMG_MAX_STEPS]; /* this image's own (flow->masks NULL) */
  const gpuimg_plan_t *plan;              /* flow->plan, or own_plan */
  gpuimg_plan_t own_plan;                 /* flow->plan as the route changes it (route()) */
  gpuimg_route_t route;                   /* where it is decoded, its steps run and it is encoded */
  int orientation;              /* its EXIF orientation as the plan applies it (1: none), 1..8 */
  gpuimg_device_start_t *start; /* CUDA starting while it is decoded (GPUIMG_STEPS_CUDA) */
} image_t;

static void mark(image_t *im, int interval, int end)
{
  im->job->intervals[interval][end] = gpuimg_now_ms();
}

/* Decides the image's route (from its bytes, or from the pixels in src) before its decode;
 * its runner's start begins now when it goes to CUDA. With shrink-on-load, or JPEG left to the
 * host codecs, the image gets its own copy of the plan: the first step fixed for the reduced
 * size, the codec choice the route's. */
static void route(image_t *im, const uint8_t *bytes, size_t size)
{
  const gpuimg_flow_t *flow = im->flow;
  const gpuimg_job_t *job = im->job;
  gpuimg_route_ask_t ask = {.plan = flow->plan,
                            .image = job->image ? &im->src : NULL,
                            .bytes = bytes,
                            .size = size,
                            .from_file = job->input != NULL,
                            .orientation = im->orientation,
                            .out = job->output ? job->format : GPUIMG_FORMAT_NONE,
                            .device_jpeg = flow->device_jpeg,
                            .path = job->path,
                            .profiled = flow->plan->to_srgb && im->meta.icc.size,
                            .choose = flow->choose && !flow->runner};
  gpuimg_route_image(&ask, &im->route, im->run);
  if (im->route.steps == GPUIMG_STEPS_CUDA)
    im->start = gpuimg_device_start_plan(flow->plan);
  if (im->route.reduction > 1 || im->route.codec != flow->plan->codec) {
    im->own_plan = *flow->plan;
    im->own_plan.codec = im->route.codec; /* the masks' decoder too */
    if (im->route.reduction > 1)
      memcpy(im->own_plan.steps[0].params, im->route.first_params, sizeof im->route.first_params);
    im->plan = &im->own_plan;
  }
}

/* --to-srgb: the decoded pixels converted from the input's profile to sRGB, which becomes the
 * profile carried. */
static int to_srgb(image_t *im)
{
  char warning[160] = "";
  if (!im->flow->plan->to_srgb)
    return 0;
  int rc = gpuimg_colour_to_srgb(&im->src, &im->meta.icc, im->job->what, warning, sizeof warning);
  warn(im->flow->plan, im->job->what, warning);
  return rc;
}

/* Reads the input; a JPEG goes to the device when its route says so, anything else is
 * decoded here. The load interval ends where the steps begin. */
static int load(image_t *im)
{
  const gpuimg_flow_t *flow = im->flow;
  gpuimg_job_t *job = im->job;
  mark(im, GPUIMG_FLOW_LOAD, 0);
  im->run->input_name = job->what;
  im->orientation = 1;
  if (job->image) { /* a copy: the steps free their input as soon as they are done */
    const gpuimg_image_t *in = job->image;
    if (gpuimg_image_alloc_for(&im->src, in->width, in->height, in->channels, job->what) < 0)
      return -1;
    memcpy(im->src.data, in->data, gpuimg_image_bytes(in->width, in->height, in->channels));
    route(im, NULL, 0);
    return 0;
  }
  if (job->input && read_timed(job->input, "", job->regular, &im->file, im->run) < 0)
    return -1;
  const uint8_t *bytes = job->input ? im->file.data : job->bytes;
  size_t size = job->input ? im->file.size : job->size;
  im->run->input_bytes = size;
  int o = read_meta(flow->plan, bytes, size, job->what, job->output != NULL, &im->meta);
  if (o < 0)
    return -1;
  if (o > 1) /* the output shows the turned pixels as they are */
    gpuimg_meta_upright(&im->meta);
  im->orientation = o;
  route(im, bytes, size);
  if (im->route.decode == GPUIMG_ON_DEVICE) /* the device turns what it decodes */
    return 0;
  int rc = decode_timed(im->plan, im->route.decoder, bytes, size, job->what, "", o,
                        im->route.reduction, &im->src, im->run);
  gpuimg_buf_free(&im->file);
  return rc < 0 ? -1 : to_srgb(im);
}

/* The masks, the runner, and the steps on it. */
static int steps(image_t *im)
{
  const gpuimg_flow_t *flow = im->flow;
  gpuimg_job_t *job = im->job;
  gpuimg_run_t *run = im->run;
  const gpuimg_image_t *masks = flow->masks ? flow->masks : im->masks;
  gpuimg_shape_t shapes[GPUIMG_MAX_STEPS + 1];
  int on_device = im->route.decode == GPUIMG_ON_DEVICE;
  if (!on_device) {
    run->in_w = im->src.width;
    run->in_h = im->src.height;
    run->in_c = im->src.channels;
    if (gpuimg_plan_shapes(im->plan, run->in_w, run->in_h, run->in_c, shapes) < 0)
      return -1;
  }
  if (flow->masks ? !on_device && check_masks(flow, im->plan, job->what, shapes) < 0
                  : load_masks(flow, im->plan, on_device ? NULL : shapes, im->masks, run) < 0)
    return -1;
  gpuimg_pipeline_t *runner = flow->runner;
  if (!runner) {
    gpuimg_device_start_t *start = im->start;
    im->start = NULL;
    runner = im->own = im->route.steps == GPUIMG_STEPS_CPU
                           ? gpuimg_pipeline_create(flow->plan, GPUIMG_DEVICE_CPU)
                           : gpuimg_pipeline_open_started(flow->plan, start, run);
    if (!runner)
      return -1;
  }
  mark(im, GPUIMG_FLOW_LOAD, 1);
  mark(im, GPUIMG_FLOW_STEPS, 0);
  gpuimg_route_encode(&im->route, im->plan, job->output ? job->format : GPUIMG_FORMAT_NONE,
                      im->src.channels);
  int encode_there = im->route.encode == GPUIMG_ON_DEVICE;
  gpuimg_jpeg_io_t io = {on_device ? im->file.data : NULL,
                         im->file.size,
                         job->what,
                         flow->plan->max_pixels,
                         flow->jpeg,
                         encode_there ? &im->encoded : NULL,
                         flow->plan->quality,
                         job->output_what,
                         on_device ? im->orientation : 1};
  int rc = on_device || encode_there
               ? gpuimg_pipeline_process_jpeg(runner, im->plan, &io, on_device ? NULL : &im->src,
                                              masks, &im->dst, run)
               : gpuimg_pipeline_process(runner, im->plan, &im->src, masks, &im->dst, run);
  mark(im, GPUIMG_FLOW_STEPS, 1);
  if (rc == 0) /* decoded, here or on the device */
    warn(flow->plan, job->what, im->meta.warning);
  gpuimg_image_free(&im->src);
  gpuimg_buf_free(&im->file);
  return rc;
}

/* Hands the input's metadata to an encoder that writes it itself (AVIF; not with --strip),
 * its EXIF pixel dimensions set to the output's size (run->out_w, out_h), and records what
 * the encoder is given. */
static void give_meta(image_t *im, gpuimg_encode_opts_t *eo)
{
  im->run->metadata = 0;
  if (im->flow->plan->strip)
    return;
  gpuimg_meta_set_size(&im->meta, im->run->out_w, im->run->out_h);
  im->run->metadata = gpuimg_meta_give(im->job->format, &im->meta, eo);
}

/* Puts the input's metadata into the encoded output (not with --strip), its EXIF pixel
 * dimensions set to the output's size (run->out_w, out_h), and records what it carried,
 * with what give_meta() handed the encoder. */
static int carry_meta(image_t *im, int given)
{
  char warning[256] = "";
  im->run->metadata = given;
  if (im->flow->plan->strip)
    return 0;
  gpuimg_meta_set_size(&im->meta, im->run->out_w, im->run->out_h);
  int carried = gpuimg_meta_insert(&im->encoded, im->job->format, &im->meta, im->job->output_what,
                                   warning, sizeof warning);
  if (carried < 0)
    return -1;
  im->run->metadata |= carried;
  warn(im->flow->plan, im->job->output_what, warning);
  return 0;
}

/* Encodes the result here unless the device did, then writes it atomically. */
static int store(image_t *im)
{
  const gpuimg_plan_t *plan = im->plan; /* the flow's, but the codecs may be this image's own */
  gpuimg_job_t *job = im->job;
  gpuimg_run_t *run = im->run;
  double t0 = gpuimg_now_ms();
  job->intervals[GPUIMG_FLOW_STORE][0] = t0;
  if (im->route.encode == GPUIMG_ON_HOST) {
    const gpuimg_image_t *d = &im->dst;
    const gpuimg_codec_t *codec =
        gpuimg_codec_encoder(im->route.codec, job->format, plan->png_level);
    gpuimg_encode_opts_t eo = {.quality = plan->quality,
                               .png_level = plan->png_level,
                               .lossless = plan->lossless,
                               .compression = plan->compression,
                               .speed = plan->speed,
                               .threads = plan->threads > 0 ? plan->threads : gpuimg_cpu_cores()};
    run->out_w = d->width;
    run->out_h = d->height;
    run->out_c = d->channels;
    give_meta(im, &eo);
    if (codec->encode(d, job->format, &eo, job->output_what, &im->encoded) < 0 ||
        carry_meta(im, run->metadata) < 0)
      return -1;
    double t1 = gpuimg_now_ms();
    if (stage_add(run, "encode", t1 - t0,
                  gpuimg_image_bytes(d->width, d->height, d->channels) + im->encoded.size,
                  codec->name) < 0)
      return -1;
    t0 = t1;
  } else if (carry_meta(im, 0) < 0) {
    return -1;
  }
  gpuimg_output_t own = {.fd = -1}, *out = job->out ? job->out : &own;
  int flags = GPUIMG_OUTPUT_BINARY | gpuimg_flow_output_flags(plan) |
              (job->no_replace ? GPUIMG_OUTPUT_NO_REPLACE : 0) |
              (job->regular ? GPUIMG_OUTPUT_REGULAR : 0);
  if (!job->out && gpuimg_output_open(out, job->output, flags) < 0)
    return -1;
  if (gpuimg_output_commit(out, im->encoded.data, im->encoded.size) < 0) {
    job->taken = out->taken;
    gpuimg_output_abort(out);
    return -1;
  }
  double t1 = gpuimg_now_ms();
  job->intervals[GPUIMG_FLOW_STORE][1] = t1;
  run->output_name = job->output_what;
  run->output_format = job->format;
  run->output_bytes = im->encoded.size;
  return stage_add(run, "write", t1 - t0, im->encoded.size, NULL);
}

/* Hands the result to the caller: a copy when it is lent by the runner. */
static int take_result(image_t *im, gpuimg_image_t *out)
{
  const gpuimg_image_t *d = &im->dst;
  if (!d->borrowed) {
    *out = *d;
    memset(&im->dst, 0, sizeof im->dst);
    return 0;
  }
  if (gpuimg_image_alloc_for(out, d->width, d->height, d->channels, im->job->what) < 0)
    return -1;
  memcpy(out->data, d->data, gpuimg_image_bytes(d->width, d->height, d->channels));
  return 0;
}

int gpuimg_flow_run(const gpuimg_flow_t *flow, gpuimg_job_t *job, gpuimg_run_t *run)
{
  image_t im;
  memset(&im, 0, sizeof im);
  im.flow = flow;
  im.job = job;
  im.run = run;
  im.plan = flow->plan;
  for (int k = 0; k < GPUIMG_FLOW_INTERVALS; k++)
    job->intervals[k][0] = job->intervals[k][1] = -1;
  int rc = load(&im) < 0 || steps(&im) < 0 || (job->output && store(&im) < 0) ||
                   (job->result && take_result(&im, job->result) < 0)
               ? -1
               : 0;
  double now = gpuimg_now_ms();
  for (int k = 0; k < GPUIMG_FLOW_INTERVALS; k++) /* close what a failure left open */
    if (job->intervals[k][0] >= 0 && job->intervals[k][1] < 0)
      job->intervals[k][1] = now;
  run->total_ms = now - job->intervals[GPUIMG_FLOW_LOAD][0];
  gpuimg_buf_free(&im.file);
  gpuimg_buf_free(&im.encoded);
  gpuimg_meta_free(&im.meta);
  gpuimg_image_free(&im.src);
  gpuimg_image_free(&im.dst);
  for (int i = 0; i < GPUIMG_MAX_STEPS; i++)
    gpuimg_image_free(&im.masks[i]);
  gpuimg_pipeline_destroy(im.own);
  gpuimg_device_start_end(im.start, NULL, NULL, 0); /* a start no runner was opened after */
  return rc;
}
