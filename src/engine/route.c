/* route.c: where an image runs: its decode, steps and encode on the host or the device, its
 * shrink-on-load reduction, the cost model's choice for a one-image run, and a batch's split. */
#include "route.h"

#include "cost.h"
#include "files.h"
#include "options.h"
#include "pool.h"

#include <string.h>

const gpuimg_codec_t *gpuimg_route_decoder(gpuimg_codec_choice_t codec, const uint8_t *bytes,
                                           size_t size, int host)
{
  int device = host && gpuimg_codec_choice_device(codec);
  return gpuimg_codec_decoder(device ? GPUIMG_CODEC_AUTO : codec, bytes, size);
}

int gpuimg_route_fast(const gpuimg_plan_t *plan)
{
  int fast = !plan->block_w && !plan->block_h;
  for (int i = 0; i < plan->nsteps; i++)
    fast &= gpuimg_ops_common(plan->steps[i].params)->variant == GPUIMG_VARIANT_FAST;
  return fast;
}

/* Shrink-on-load: the reduction at which decoder decodes a w x h input stored in EXIF
 * orientation o, when the plan's first step declares one and allows it (no --exact-decode),
 * with that step's parameters for the reduced image in fixed; 1: a full-size decode. */
static int reduction(const gpuimg_plan_t *plan, const gpuimg_codec_t *decoder, int w, int h, int o,
                     void *fixed)
{
  int upright_w = o >= 5 ? h : w, upright_h = w + h - upright_w;
  int r = gpuimg_plan_load_reduction(plan, decoder, upright_w, upright_h, fixed);
  return r > 1 ? r : 1;
}

/* The output's format is one the device's codec writes, and the steps make 1 or 3 channels of
 * in_channels. */
static int device_writes(const gpuimg_plan_t *plan, gpuimg_format_t out, int in_channels)
{
  int c = in_channels;
  for (int i = 0; i < plan->nsteps; i++)
    c = gpuimg_op_out_channels(plan->steps[i].op, c);
  return gpuimg_codec_device_encodes(out) && (c == 1 || c == 3);
}

/* Where the decode goes: the device's JPEG decoder for a JPEG file the device codec takes on
 * a runner that decodes JPEG there, unless it is kept on the host: to be turned as its EXIF
 * orientation asks off the device path (--codec nvjpeg on the CPU backend: nvJPEG as a host
 * codec would bring its pixels back to be turned), one of a batch's host share, or one the
 * device codec does not declare it takes (CMYK, 12-bit...), which auto's host decoder takes,
 * or one whose profile --to-srgb converts (on the host). *host: a JPEG kept on the host. */
static gpuimg_place_t decode_place(const gpuimg_route_ask_t *a, int *host)
{
  int jpeg = a->device_jpeg && gpuimg_codec_is_jpeg(a->bytes, a->size);
  int device_takes = jpeg && gpuimg_codec_device_recognises(a->bytes, a->size);
  *host = (a->orientation > 1 && !a->device_jpeg) || a->path == GPUIMG_PATH_HOST_DECODE ||
          (jpeg && !device_takes) || a->profiled;
  return a->from_file && device_takes && !*host ? GPUIMG_ON_DEVICE : GPUIMG_ON_HOST;
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

/* The cost model's choice (a RUN_ value; the CPU when as fast as CUDA, the host codecs when as
 * fast as nvJPEG), recorded with both or all three predictions in run; -1 when it cannot tell
 * (a header it cannot read). r: the reduction the steps and decode are priced at (the decode
 * on the device's: the full size), with the first step's parameters fixed for it. */
static int cheapest(const gpuimg_route_ask_t *a, const gpuimg_route_t *route, int r,
                    gpuimg_run_t *run)
{
  gpuimg_plan_t fixed;
  const gpuimg_plan_t *plan = a->plan;
  if (r > 1) {
    fixed = *plan;
    memcpy(fixed.steps[0].params, route->first_params, sizeof route->first_params);
    plan = &fixed;
  }
  gpuimg_cost_input_t in = {
      .file_bytes = a->size, .in_format = GPUIMG_FORMAT_NONE, .out_format = a->out};
  if (a->image) {
    in.width = a->image->width, in.height = a->image->height, in.channels = a->image->channels;
  } else {
    if (gpuimg_codec_info(a->bytes, a->size, &in.width, &in.height, &in.channels) < 0)
      return -1;
    in.in_format = gpuimg_codec_is_jpeg(a->bytes, a->size) ? GPUIMG_FORMAT_JPEG : GPUIMG_FORMAT_PNG;
    in.width = gpuimg_reduced_side(in.width, r);
    in.height = gpuimg_reduced_side(in.height, r);
  }
  int threads = plan->threads > 0 ? plan->threads : gpuimg_cpu_cores();
  gpuimg_cost_predict(plan, threads, &in, &run->predicted_cpu_ms, &run->predicted_cuda_ms);
  run->has_choice = 1;
  int best = run->predicted_cpu_ms <= run->predicted_cuda_ms ? RUN_CPU : RUN_CUDA;
  int decode = route->decode == GPUIMG_ON_DEVICE;
  int encode = route->jpeg == GPUIMG_ON_DEVICE && device_writes(plan, a->out, in.channels);
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

/* A one-image run's backend, decided before the decode: as --backend asks for cpu and in a
 * build without CUDA; under auto the CPU when the cost model predicts it faster (the driver
 * then never touched), CUDA for the teaching kernels; else CUDA, whose start begins at once.
 * Under auto, --codec nvjpeg's device path is taken only where the model predicts it pays;
 * else JPEG goes to the host codecs (--codec auto's, libjpeg). host_r: the reduction of a
 * decode on the host. */
static void choose_steps(const gpuimg_route_ask_t *a, gpuimg_route_t *route, int host_r,
                         gpuimg_run_t *run)
{
  const gpuimg_plan_t *plan = a->plan;
  if (plan->backend == GPUIMG_BACKEND_CPU || !gpuimg_pipeline_have_cuda()) {
    route->steps = GPUIMG_STEPS_ASKED;
    return;
  }
  int r = route->decode == GPUIMG_ON_DEVICE ? 1 : host_r;
  int choice = plan->backend == GPUIMG_BACKEND_AUTO && gpuimg_route_fast(plan)
                   ? cheapest(a, route, r, run)
                   : -1;
  if ((choice == RUN_CPU || choice == RUN_CUDA) && route->jpeg == GPUIMG_ON_DEVICE) {
    route->codec = GPUIMG_CODEC_AUTO;
    route->jpeg = route->decode = GPUIMG_ON_HOST;
  }
  route->steps =
      choice == RUN_CPU && route->jpeg == GPUIMG_ON_HOST ? GPUIMG_STEPS_CPU : GPUIMG_STEPS_CUDA;
}

void gpuimg_route_encode(gpuimg_route_t *route, const gpuimg_plan_t *plan, gpuimg_format_t out,
                         int in_channels)
{
  int there = route->jpeg == GPUIMG_ON_DEVICE && out != GPUIMG_FORMAT_NONE &&
              (route->decode == GPUIMG_ON_DEVICE ? gpuimg_codec_device_encodes(out)
                                                 : device_writes(plan, out, in_channels));
  route->encode = there ? GPUIMG_ON_DEVICE : GPUIMG_ON_HOST;
}

void gpuimg_route_image(const gpuimg_route_ask_t *a, gpuimg_route_t *route, gpuimg_run_t *run)
{
  const gpuimg_plan_t *plan = a->plan;
  int host = 0, host_r = 1, w = 0, h = 0, c = a->image ? a->image->channels : 0;
  memset(route, 0, sizeof *route);
  route->steps = GPUIMG_STEPS_RUNNER;
  route->jpeg = a->device_jpeg ? GPUIMG_ON_DEVICE : GPUIMG_ON_HOST;
  route->codec = plan->codec;
  if (!a->image) {
    route->decode = decode_place(a, &host);
    /* shrink-on-load, priced and done once: by the host decoder, or the one a device decode
     * would leave JPEG to (auto's) */
    const gpuimg_codec_t *decoder = gpuimg_route_decoder(plan->codec, a->bytes, a->size,
                                                         host || route->decode == GPUIMG_ON_DEVICE);
    if (gpuimg_codec_info(a->bytes, a->size, &w, &h, &c) < 0)
      c = 0;
    else if (gpuimg_plan_may_reduce(plan) && decoder->decode_reduced)
      host_r = reduction(plan, decoder, w, h, a->orientation, route->first_params);
  }
  if (a->choose)
    choose_steps(a, route, host_r, run);
  if (!a->image && route->decode == GPUIMG_ON_HOST)
    route->decoder = gpuimg_route_decoder(route->codec, a->bytes, a->size, host);
  route->reduction = route->decode == GPUIMG_ON_HOST ? host_r : 1;
  gpuimg_route_encode(route, plan, a->out, c);
}

/* The cost model's share for n inputs like the file first (0 when it is no JPEG): the host's
 * images priced at the reduction their decode gets (the flow's, EXIF orientation aside). */
static double model_share(const gpuimg_plan_t *plan, const char *first, gpuimg_format_t out, long n)
{
  gpuimg_buf_t buf = {0};
  gpuimg_cost_input_t in = {.in_format = GPUIMG_FORMAT_JPEG, .out_format = out};
  double share = 0;
  if (gpuimg_file_read(first, gpuimg_codec_may_begin, &buf) == 0 &&
      gpuimg_codec_is_jpeg(buf.data, buf.size) &&
      gpuimg_codec_info(buf.data, buf.size, &in.width, &in.height, &in.channels) == 0) {
    gpuimg_plan_t host = *plan;
    const gpuimg_codec_t *decoder = gpuimg_route_decoder(GPUIMG_CODEC_AUTO, buf.data, buf.size, 1);
    int r = reduction(plan, decoder, in.width, in.height, 1, host.steps[0].params);
    in.file_bytes = buf.size;
    share = gpuimg_cost_device_share(plan, &in, gpuimg_codec_device_encodes(out),
                                     r > 1 ? &host : plan, r, gpuimg_cpu_cores(), n);
  }
  gpuimg_error_clear(); /* the run itself reports a bad first input */
  gpuimg_buf_free(&buf);
  return share;
}

double gpuimg_route_device_share(const gpuimg_plan_t *plan, int cuda_ok, int device_jpeg,
                                 const char *first, gpuimg_format_t out, long n, int *model)
{
  /* unset, auto or anything but a number: the model's share (-1 here) */
  double forced = gpuimg_env_fraction("GPUIMG_JPEG_SPLIT", -1);
  *model = forced < 0;
  if (!cuda_ok || device_jpeg || plan->codec != GPUIMG_CODEC_AUTO || !first || n <= 0 ||
      !gpuimg_pipeline_has_device_jpeg() || !gpuimg_route_fast(plan) || forced == 0)
    return 0;
  double share = *model ? model_share(plan, first, out, n) : forced;
  return share > 0 ? (share < 1 ? share : 1) : 0;
}

/* Whether a hash of name falls under share (0..1): the same answer in every run, shard and -j. */
static int name_under(const char *name, double share)
{
  uint64_t h = 14695981039346656037ULL; /* FNV-1a */
  for (const unsigned char *p = (const unsigned char *)name; *p; p++)
    h = (h ^ *p) * 1099511628211ULL;
  return (double)(h % 1000000) < share * 1e6;
}

gpuimg_path_t gpuimg_route_path(const char *name, double device_share, double host_share)
{
  if (name_under(name, device_share))
    return GPUIMG_PATH_DEVICE;
  return name_under(name, host_share) ? GPUIMG_PATH_HOST_DECODE : GPUIMG_PATH_WORKER;
}
