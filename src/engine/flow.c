/* flow.c: one image through the engine (read, decode, steps, encode, write), for one-image
 * runs and batch workers alike; where each stage runs is the runner's and the codecs' choice. */
#define _XOPEN_SOURCE 700
#include "flow.h"

#include "cost.h"
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

/* The host decoder of bytes under the plan's --codec; host 1 (a JPEG to turn as its EXIF
 * orientation asks off the device path, whose pixels nvJPEG would decode on the device only to
 * bring them back to be turned, or one of a batch's host share) leaves a device codec's
 * (nvjpeg's) JPEG to auto's choice, libjpeg. */
static const gpuimg_codec_t *host_decoder(const gpuimg_plan_t *plan, const uint8_t *bytes,
                                          size_t size, int host)
{
  int device = host && gpuimg_codec_choice_device(plan->codec);
  return gpuimg_codec_decoder(device ? GPUIMG_CODEC_AUTO : plan->codec, bytes, size);
}

/* Decodes bytes with the codec the plan picks for them (host: as host_decoder(); at
 * 1/reduction of their size, which only a codec that decodes reduced is given), then turns
 * the pixels as EXIF orientation o asks, as the stage <prefix>decode. */
static int decode_timed(const gpuimg_plan_t *plan, const uint8_t *bytes, size_t size,
                        const char *what, const char *prefix, int o, int host, int reduction,
                        gpuimg_image_t *img, gpuimg_run_t *run)
{
  char name[32];
  double t0 = gpuimg_now_ms();
  const gpuimg_codec_t *codec = host_decoder(plan, bytes, size, host);
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
  int rc = o < 0 ? -1 : decode_timed(plan, bytes, size, what, "mask-", o, o > 1, 1, mask, run);
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
  /* flow->plan changed for this image: its first step fixed (shrink-on-load), the host codecs
   * instead of nvJPEG (the cost model's choice) */
  gpuimg_plan_t *own_plan;
  int device_jpeg; /* flow->device_jpeg, unless the cost model left JPEG to the host */
  int on_device;   /* the input is decoded on the device */
  int orientation; /* its EXIF orientation as the plan applies it (1: none), 1..8 */
  int host_jpeg;   /* a JPEG input decoded on the host even under a device codec */
  int encoded_on_device;
  int on_cpu;                  /* the backend chosen for it is the CPU (flow->choose) */
  gpuimg_prestart_t *prestart; /* CUDA starting while it is decoded (flow->choose) */
} image_t;

static void mark(image_t *im, int interval, int end)
{
  im->job->intervals[interval][end] = gpuimg_now_ms();
}

/* --naive, --tiled and --block choose CUDA kernels: such a run is about them. */
static int teaching(const gpuimg_plan_t *plan)
{
  int any = plan->block_w || plan->block_h;
  for (int i = 0; i < plan->nsteps; i++)
    any |= gpuimg_ops_common(plan->steps[i].params)->variant != GPUIMG_VARIANT_FAST;
  return any;
}

/* What --backend auto can choose for one image: the CPU backend, CUDA, CUDA with nvJPEG doing
 * the JPEG decode and encode (--codec nvjpeg); the run's reason for each (the report's
 * backend_choice, --explain). */
enum { RUN_CPU, RUN_CUDA, RUN_NVJPEG };
static const char *const choice_reason[] = {
    "cpu predicted as fast as cuda or faster",
    "cuda predicted faster than cpu",
    "cuda with nvjpeg predicted faster than the host codecs",
};
static const char *const nvjpeg_declined[] = {
    "nvjpeg predicted slower than the host codecs (its handle's creation): JPEG on the host; "
    "cpu predicted as fast as cuda or faster",
    "nvjpeg predicted slower than the host codecs (its handle's creation): JPEG on the host; "
    "cuda predicted faster than cpu",
};

/* Whether the result is JPEG-encoded on the device: a JPEG output of 1 or 3 channels when
 * the flow does JPEG there. */
static int encode_on_device(const image_t *im, int in_channels)
{
  const gpuimg_plan_t *plan = im->plan;
  int c = in_channels;
  for (int i = 0; i < plan->nsteps; i++)
    c = gpuimg_op_out_channels(plan->steps[i].op, c);
  return im->device_jpeg && im->job->output && gpuimg_codec_device_encodes(im->job->format) &&
         (c == 1 || c == 3);
}

/* The cost model's choice for --backend auto (a RUN_ value; the CPU when as fast as CUDA,
 * the host codecs when as fast as nvJPEG), recorded with both or all three predictions in
 * the run; -1 when it cannot tell (a header it cannot read). bytes: the input file, or NULL
 * for pixels in memory (src); r: shrink-on-load's reduction (the decode and the steps are
 * priced at the reduced size, with im->plan's fixed first step). */
static int cheapest(image_t *im, const uint8_t *bytes, size_t size, int r)
{
  const gpuimg_plan_t *plan = im->plan;
  gpuimg_cost_input_t in = {.file_bytes = size,
                            .in_format = GPUIMG_FORMAT_NONE,
                            .out_format = im->job->output ? im->job->format : GPUIMG_FORMAT_NONE};
  if (bytes) {
    if (gpuimg_codec_info(bytes, size, &in.width, &in.height, &in.channels) < 0)
      return -1;
    in.in_format = gpuimg_codec_is_jpeg(bytes, size) ? GPUIMG_FORMAT_JPEG : GPUIMG_FORMAT_PNG;
    in.width = gpuimg_reduced_side(in.width, r);
    in.height = gpuimg_reduced_side(in.height, r);
  } else {
    in.width = im->src.width, in.height = im->src.height, in.channels = im->src.channels;
  }
  gpuimg_run_t *run = im->run;
  int threads = plan->threads > 0 ? plan->threads : gpuimg_cpu_cores();
  gpuimg_cost_predict(plan, threads, &in, &run->predicted_cpu_ms, &run->predicted_cuda_ms);
  run->has_choice = 1;
  int best = run->predicted_cpu_ms <= run->predicted_cuda_ms ? RUN_CPU : RUN_CUDA;
  int decode = im->on_device, encode = encode_on_device(im, in.channels);
  run->choice_reason = choice_reason[best];
  if (!decode && !encode)
    return best; /* nvJPEG would have nothing to do */
  double host = best == RUN_CPU ? run->predicted_cpu_ms : run->predicted_cuda_ms;
  run->predicted_nvjpeg_ms = gpuimg_cost_predict_nvjpeg(plan, threads, &in, decode, encode);
  run->has_nvjpeg_choice = 1;
  if (run->predicted_nvjpeg_ms < host) {
    run->choice_reason = choice_reason[RUN_NVJPEG];
    return RUN_NVJPEG;
  }
  run->choice_reason = nvjpeg_declined[best];
  return best;
}

/* im->plan made this image's own copy, to change; NULL without memory for it. */
static gpuimg_plan_t *own_plan(image_t *im)
{
  if (!im->own_plan && (im->own_plan = malloc(sizeof *im->own_plan))) {
    *im->own_plan = *im->plan;
    im->plan = im->own_plan;
  }
  return im->own_plan;
}

/* Leaves JPEG to the host codecs, --codec auto's choice (libjpeg), for this image; without
 * memory for the plan's copy, nvJPEG as asked. */
static void host_codecs(image_t *im)
{
  gpuimg_plan_t *plan = own_plan(im);
  if (!plan)
    return;
  plan->codec = GPUIMG_CODEC_AUTO;
  im->device_jpeg = im->on_device = 0;
}

/* A one-image run's backend (flow->choose), decided before the decode: the CPU when asked
 * for, in a build without CUDA, or (--backend auto) when the cost model predicts it faster,
 * the driver then never touched; else CUDA, started on a thread while the input is decoded.
 * Under auto, --codec nvjpeg's device path is taken only where the model predicts it pays;
 * else JPEG goes to the host codecs. r: the image's shrink-on-load reduction (1: none), which
 * the cost model prices. */
static void choose_backend(image_t *im, const uint8_t *bytes, size_t size, int r)
{
  const gpuimg_flow_t *flow = im->flow;
  const gpuimg_plan_t *plan = flow->plan;
  if (!flow->choose || flow->runner || plan->backend == GPUIMG_BACKEND_CPU ||
      !gpuimg_pipeline_have_cuda())
    return;
  int choice =
      plan->backend == GPUIMG_BACKEND_AUTO && !teaching(plan) ? cheapest(im, bytes, size, r) : -1;
  if ((choice == RUN_CPU || choice == RUN_CUDA) && im->device_jpeg)
    host_codecs(im);
  if (choice == RUN_CPU && !im->device_jpeg) {
    im->on_cpu = 1;
    return;
  }
  im->prestart = gpuimg_pipeline_prestart(plan);
}

/* Shrink-on-load: when the first step declares a load reduction, the codec for these bytes
 * decodes reduced and the plan allows it (no --exact-decode), the reduction the step asks for
 * this image's full size, upright after EXIF orientation o; above 1, im->plan becomes this
 * image's own copy whose first step makes the full size's result from the reduced image. 1: a
 * full-size decode. */
static int shrink_on_load(image_t *im, const uint8_t *bytes, size_t size, int o)
{
  const gpuimg_plan_t *plan = im->plan;
  const gpuimg_codec_t *decoder;
  int w, h, c;
  if (!gpuimg_plan_may_reduce(plan) ||
      !(decoder = host_decoder(plan, bytes, size, im->host_jpeg))->decode_reduced ||
      gpuimg_codec_info(bytes, size, &w, &h, &c) < 0)
    return 1;
  int upright_w = o >= 5 ? h : w, upright_h = w + h - upright_w;
  _Alignas(16) unsigned char fixed[GPUIMG_PARAMS_SIZE];
  int r = gpuimg_plan_load_reduction(plan, decoder, upright_w, upright_h, fixed);
  gpuimg_plan_t *own = r > 1 ? own_plan(im) : NULL;
  if (!own)
    return 1; /* without memory for the copy, the full size is decoded */
  memcpy(own->steps[0].params, fixed, sizeof fixed);
  return r;
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

/* Reads the input; a JPEG goes to the device when the flow decodes JPEG there, anything
 * else is decoded here. The load interval ends where the steps begin. */
static int load(image_t *im)
{
  const gpuimg_flow_t *flow = im->flow;
  gpuimg_job_t *job = im->job;
  mark(im, GPUIMG_FLOW_LOAD, 0);
  im->run->input_name = job->what;
  if (job->image) { /* a copy: the steps free their input as soon as they are done */
    const gpuimg_image_t *in = job->image;
    if (gpuimg_image_alloc_for(&im->src, in->width, in->height, in->channels, job->what) < 0)
      return -1;
    memcpy(im->src.data, in->data, gpuimg_image_bytes(in->width, in->height, in->channels));
    choose_backend(im, NULL, 0, 1);
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
  /* A JPEG whose pixels must be turned is decoded here off the device path (nvJPEG as a host
   * codec would bring its pixels back to be turned), as is one of a batch's host share, and
   * one the device codec does not declare it takes (CMYK, 12-bit...: its recognises), which
   * auto's host decoder takes. On the device path the device turns what it decoded. */
  int jpeg = im->device_jpeg && gpuimg_codec_is_jpeg(bytes, size);
  int device_takes = jpeg && gpuimg_codec_device_recognises(bytes, size);
  im->host_jpeg = (o > 1 && !im->device_jpeg) || job->host_decode || (jpeg && !device_takes) ||
                  (flow->plan->to_srgb && im->meta.icc.size); /* converted on the host */
  im->on_device = job->input && device_takes && !im->host_jpeg;
  im->orientation = o;
  int was_on_device = im->on_device;
  int r = im->on_device ? 1 : shrink_on_load(im, bytes, size, o);
  choose_backend(im, bytes, size, r);
  if (im->on_device)
    return 0;
  if (was_on_device) /* the model left nvJPEG for the host codecs, which may decode reduced */
    r = shrink_on_load(im, bytes, size, o);
  int rc =
      decode_timed(im->plan, bytes, size, job->what, "", o, im->host_jpeg, r, &im->src, im->run);
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
  if (!im->on_device) {
    run->in_w = im->src.width;
    run->in_h = im->src.height;
    run->in_c = im->src.channels;
    if (gpuimg_plan_shapes(im->plan, run->in_w, run->in_h, run->in_c, shapes) < 0)
      return -1;
  }
  if (flow->masks ? !im->on_device && check_masks(flow, im->plan, job->what, shapes) < 0
                  : load_masks(flow, im->plan, im->on_device ? NULL : shapes, im->masks, run) < 0)
    return -1;
  gpuimg_pipeline_t *runner = flow->runner;
  if (!runner) {
    gpuimg_prestart_t *ps = im->prestart;
    im->prestart = NULL;
    runner = im->own = im->on_cpu ? gpuimg_pipeline_create(flow->plan, GPUIMG_DEVICE_CPU)
                                  : gpuimg_pipeline_open_started(flow->plan, ps, run);
    if (!runner)
      return -1;
  }
  mark(im, GPUIMG_FLOW_LOAD, 1);
  mark(im, GPUIMG_FLOW_STEPS, 0);
  im->encoded_on_device = im->on_device ? job->output && gpuimg_codec_device_encodes(job->format)
                                        : encode_on_device(im, im->src.channels);
  gpuimg_jpeg_io_t io = {im->on_device ? im->file.data : NULL,
                         im->file.size,
                         job->what,
                         flow->plan->max_pixels,
                         flow->jpeg,
                         im->encoded_on_device ? &im->encoded : NULL,
                         flow->plan->quality,
                         job->output_what,
                         im->on_device ? im->orientation : 1};
  int rc = im->on_device || im->encoded_on_device
               ? gpuimg_pipeline_process_jpeg(runner, im->plan, &io,
                                              im->on_device ? NULL : &im->src, masks, &im->dst, run)
               : gpuimg_pipeline_process(runner, im->plan, &im->src, masks, &im->dst, run);
  mark(im, GPUIMG_FLOW_STEPS, 1);
  if (rc == 0) /* decoded, here or on the device */
    warn(flow->plan, job->what, im->meta.warning);
  gpuimg_image_free(&im->src);
  gpuimg_buf_free(&im->file);
  return rc;
}

/* Puts the input's metadata into the encoded output (not with --strip), its EXIF pixel
 * dimensions set to the output's size (run->out_w, out_h), and records what it carried. */
static int carry_meta(image_t *im)
{
  char warning[256] = "";
  im->run->metadata = 0;
  if (im->flow->plan->strip)
    return 0;
  gpuimg_meta_set_size(&im->meta, im->run->out_w, im->run->out_h);
  int carried = gpuimg_meta_insert(&im->encoded, im->job->format, &im->meta, im->job->output_what,
                                   warning, sizeof warning);
  if (carried < 0)
    return -1;
  im->run->metadata = carried;
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
  if (!im->encoded_on_device) {
    const gpuimg_image_t *d = &im->dst;
    const gpuimg_codec_t *codec = gpuimg_codec_encoder(plan->codec, job->format, plan->png_level);
    gpuimg_encode_opts_t eo = {.quality = plan->quality,
                               .png_level = plan->png_level,
                               .lossless = plan->lossless,
                               .compression = plan->compression,
                               .threads = plan->threads > 0 ? plan->threads : gpuimg_cpu_cores()};
    run->out_w = d->width;
    run->out_h = d->height;
    run->out_c = d->channels;
    if (codec->encode(d, job->format, &eo, job->output_what, &im->encoded) < 0 ||
        carry_meta(im) < 0)
      return -1;
    double t1 = gpuimg_now_ms();
    if (stage_add(run, "encode", t1 - t0,
                  gpuimg_image_bytes(d->width, d->height, d->channels) + im->encoded.size,
                  codec->name) < 0)
      return -1;
    t0 = t1;
  } else if (carry_meta(im) < 0) {
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
  im.device_jpeg = flow->device_jpeg;
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
  free(im.own_plan);
  gpuimg_pipeline_destroy(im.own);
  gpuimg_pipeline_prestart_free(im.prestart); /* a start no runner was opened after */
  return rc;
}
