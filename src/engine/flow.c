/* flow.c: one image through the engine (read, decode, steps, encode, write), for one-image
 * runs and batch workers alike; where each stage runs is the runner's and the codecs' choice. */
#define _XOPEN_SOURCE 700
#include "flow.h"

#include "cost.h"
#include "exif.h"
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

/* Reads a file ("-": stdin) whole as the stage <prefix>read. */
static int read_timed(const char *path, const char *prefix, gpuimg_buf_t *buf, gpuimg_run_t *run)
{
  char name[32];
  double t0 = gpuimg_now_ms();
  if (gpuimg_file_read(path, buf) < 0)
    return -1;
  snprintf(name, sizeof name, "%sread", prefix);
  return run ? stage_add(run, name, gpuimg_now_ms() - t0, buf->size, NULL) : 0;
}

/* The EXIF orientation the plan applies to these bytes: 1 with --no-autorotate. */
static int orientation(const gpuimg_plan_t *plan, const uint8_t *bytes, size_t size)
{
  return plan->no_autorotate ? 1 : gpuimg_exif_orientation(bytes, size);
}

/* Decodes bytes with the codec the plan picks for them, then turns the pixels as their EXIF
 * orientation asks (unless --no-autorotate), as the stage <prefix>decode. */
static int decode_timed(const gpuimg_plan_t *plan, const uint8_t *bytes, size_t size,
                        const char *what, const char *prefix, gpuimg_image_t *img,
                        gpuimg_run_t *run)
{
  char name[32];
  double t0 = gpuimg_now_ms();
  const gpuimg_codec_t *codec = gpuimg_codec_decoder(plan->codec, bytes, size);
  int o = orientation(plan, bytes, size);
  if (codec->decode(bytes, size, what, plan->max_pixels, img) < 0 ||
      gpuimg_image_orient(img, o, what) < 0)
    return -1;
  if (run && !*prefix)
    run->orientation = o;
  snprintf(name, sizeof name, "%sdecode", prefix);
  uint64_t px = gpuimg_image_bytes(img->width, img->height, img->channels);
  return run ? stage_add(run, name, gpuimg_now_ms() - t0, size + px, codec->name) : 0;
}

int gpuimg_flow_load_mask(const gpuimg_plan_t *plan, const char *path, const uint8_t *builtin,
                          size_t builtin_size, gpuimg_image_t *mask, gpuimg_run_t *run)
{
  gpuimg_buf_t buf = {0};
  const char *what = path ? (strcmp(path, "-") ? path : "<stdin>") : BUILTIN_MASK_NAME;
  if (path && read_timed(path, "mask-", &buf, run) < 0)
    return -1;
  int rc = decode_timed(plan, path ? buf.data : builtin, path ? buf.size : builtin_size, what,
                        "mask-", mask, run);
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

/* Loads every step's mask for this image (src NULL: of any size, for the device decode to
 * check once it knows the image's size). */
static int load_masks(const gpuimg_flow_t *flow, const gpuimg_image_t *src, gpuimg_image_t *masks,
                      gpuimg_run_t *run)
{
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
    if (gpuimg_flow_load_mask(flow->plan, path, flow->builtin_mask, flow->builtin_mask_size, m,
                              run) < 0)
      return -1;
    if (src && (m->width != src->width || m->height != src->height)) {
      gpuimg_error_set(GPUIMG_EXIT_INPUT, path ? path : BUILTIN_MASK_NAME,
                       "mask is %dx%d but the image is %dx%d", m->width, m->height, src->width,
                       src->height);
      return -1;
    }
  }
  return 0;
}

/* The batch's shared masks must have the image's size. */
static int check_masks(const gpuimg_flow_t *flow, const char *what, int width, int height)
{
  for (int i = 0; i < flow->plan->nsteps; i++) {
    const gpuimg_image_t *m = &flow->masks[i];
    int takes;
    const char *path = gpuimg_flow_mask_path(flow->plan, i, &takes);
    if (m->data && (m->width != width || m->height != height)) {
      gpuimg_error_set(GPUIMG_EXIT_INPUT, what, "mask %s is %dx%d but the image is %dx%d", path,
                       m->width, m->height, width, height);
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
  gpuimg_image_t src, dst;
  gpuimg_image_t masks[GPUIMG_MAX_STEPS]; /* this image's own (flow->masks NULL) */
  int on_device;                          /* the input is decoded on the device */
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

/* The cost model's choice for --backend auto: 1 when the CPU is predicted faster (or as
 * fast), 0 when CUDA is, -1 when it cannot tell (a header it cannot read). bytes: the input
 * file, or NULL for pixels in memory (src). */
static int cpu_is_faster(image_t *im, const uint8_t *bytes, size_t size)
{
  const gpuimg_plan_t *plan = im->flow->plan;
  gpuimg_cost_input_t in = {.file_bytes = size,
                            .in_format = GPUIMG_FORMAT_NONE,
                            .out_format = im->job->output ? im->job->format : GPUIMG_FORMAT_NONE};
  if (bytes) {
    if (gpuimg_codec_info(bytes, size, &in.width, &in.height, &in.channels) < 0)
      return -1;
    in.in_format = gpuimg_codec_is_jpeg(bytes, size) ? GPUIMG_FORMAT_JPEG : GPUIMG_FORMAT_PNG;
  } else {
    in.width = im->src.width, in.height = im->src.height, in.channels = im->src.channels;
  }
  gpuimg_run_t *run = im->run;
  int threads = plan->threads > 0 ? plan->threads : gpuimg_cpu_cores();
  gpuimg_cost_predict(plan, threads, &in, &run->predicted_cpu_ms, &run->predicted_cuda_ms);
  run->has_choice = 1;
  return run->predicted_cpu_ms <= run->predicted_cuda_ms;
}

/* A one-image run's backend (flow->choose), decided before the decode: the CPU when asked
 * for, in a build without CUDA, or (--backend auto) when the cost model predicts it faster,
 * the driver then never touched; else CUDA, started on a thread while the input is decoded. */
static void choose_backend(image_t *im, const uint8_t *bytes, size_t size)
{
  const gpuimg_flow_t *flow = im->flow;
  const gpuimg_plan_t *plan = flow->plan;
  if (!flow->choose || flow->runner || plan->backend == GPUIMG_BACKEND_CPU ||
      !gpuimg_pipeline_have_cuda())
    return;
  if (plan->backend == GPUIMG_BACKEND_AUTO && !flow->device_jpeg && !teaching(plan) &&
      cpu_is_faster(im, bytes, size) == 1) {
    im->on_cpu = 1;
    return;
  }
  im->prestart = gpuimg_pipeline_prestart(plan);
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
    choose_backend(im, NULL, 0);
    return 0;
  }
  if (!job->input) {
    im->run->input_bytes = job->size;
    choose_backend(im, job->bytes, job->size);
    return decode_timed(flow->plan, job->bytes, job->size, job->what, "", &im->src, im->run);
  }
  if (read_timed(job->input, "", &im->file, im->run) < 0)
    return -1;
  im->run->input_bytes = im->file.size;
  /* A JPEG whose pixels must be turned is decoded here: the device decode keeps them. */
  im->on_device = flow->device_jpeg && gpuimg_codec_is_jpeg(im->file.data, im->file.size) &&
                  orientation(flow->plan, im->file.data, im->file.size) == 1;
  choose_backend(im, im->file.data, im->file.size);
  if (im->on_device)
    return 0;
  int rc = decode_timed(flow->plan, im->file.data, im->file.size, job->what, "", &im->src, im->run);
  gpuimg_buf_free(&im->file);
  return rc;
}

/* Whether the result is JPEG-encoded on the device: a JPEG output of 1 or 3 channels when
 * the flow does JPEG there. */
static int encode_on_device(const image_t *im, int in_channels)
{
  const gpuimg_plan_t *plan = im->flow->plan;
  int c = in_channels;
  for (int i = 0; i < plan->nsteps; i++)
    c = gpuimg_op_out_channels(plan->steps[i].op, c);
  return im->flow->device_jpeg && im->job->output && im->job->format == GPUIMG_FORMAT_JPEG &&
         (c == 1 || c == 3);
}

/* The masks, the runner, and the steps on it. */
static int steps(image_t *im)
{
  const gpuimg_flow_t *flow = im->flow;
  gpuimg_job_t *job = im->job;
  gpuimg_run_t *run = im->run;
  const gpuimg_image_t *masks = flow->masks ? flow->masks : im->masks;
  if (!im->on_device) {
    run->in_w = im->src.width;
    run->in_h = im->src.height;
    run->in_c = im->src.channels;
  }
  if (flow->masks ? !im->on_device && check_masks(flow, job->what, run->in_w, run->in_h) < 0
                  : load_masks(flow, im->on_device ? NULL : &im->src, im->masks, run) < 0)
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
  im->encoded_on_device = im->on_device ? job->output && job->format == GPUIMG_FORMAT_JPEG
                                        : encode_on_device(im, im->src.channels);
  gpuimg_jpeg_io_t io = {im->on_device ? im->file.data : NULL,
                         im->file.size,
                         job->what,
                         flow->plan->max_pixels,
                         flow->jpeg,
                         im->encoded_on_device ? &im->encoded : NULL,
                         flow->plan->quality,
                         job->output_what};
  int rc = im->on_device || im->encoded_on_device
               ? gpuimg_pipeline_process_jpeg(runner, &io, im->on_device ? NULL : &im->src, masks,
                                              &im->dst, run)
               : gpuimg_pipeline_process(runner, &im->src, masks, &im->dst, run);
  mark(im, GPUIMG_FLOW_STEPS, 1);
  gpuimg_image_free(&im->src);
  gpuimg_buf_free(&im->file);
  return rc;
}

/* Encodes the result here unless the device did, then writes it atomically. */
static int store(image_t *im)
{
  const gpuimg_plan_t *plan = im->flow->plan;
  gpuimg_job_t *job = im->job;
  gpuimg_run_t *run = im->run;
  double t0 = gpuimg_now_ms();
  job->intervals[GPUIMG_FLOW_STORE][0] = t0;
  if (!im->encoded_on_device) {
    const gpuimg_image_t *d = &im->dst;
    const gpuimg_codec_t *codec = gpuimg_codec_encoder(plan->codec, job->format, plan->png_level);
    gpuimg_encode_opts_t eo = {.quality = plan->quality,
                               .png_level = plan->png_level,
                               .threads = plan->threads > 0 ? plan->threads : gpuimg_cpu_cores()};
    if (codec->encode(d, job->format, &eo, job->output_what, &im->encoded) < 0)
      return -1;
    double t1 = gpuimg_now_ms();
    if (stage_add(run, "encode", t1 - t0,
                  gpuimg_image_bytes(d->width, d->height, d->channels) + im->encoded.size,
                  codec->name) < 0)
      return -1;
    run->out_w = d->width;
    run->out_h = d->height;
    run->out_c = d->channels;
    t0 = t1;
  }
  gpuimg_output_t own = {.fd = -1}, *out = job->out ? job->out : &own;
  int flags = GPUIMG_OUTPUT_BINARY | gpuimg_flow_output_flags(plan) |
              (job->no_replace ? GPUIMG_OUTPUT_NO_REPLACE : 0);
  if (!job->out && gpuimg_output_open(out, job->output, flags) < 0)
    return -1;
  if (gpuimg_output_commit(out, im->encoded.data, im->encoded.size) < 0) {
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
  gpuimg_image_free(&im.src);
  gpuimg_image_free(&im.dst);
  for (int i = 0; i < GPUIMG_MAX_STEPS; i++)
    gpuimg_image_free(&im.masks[i]);
  gpuimg_pipeline_destroy(im.own);
  gpuimg_pipeline_prestart_free(im.prestart); /* a start no runner was opened after */
  return rc;
}
