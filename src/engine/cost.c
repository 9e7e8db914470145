/* cost.c: the backend cost model and its constants, measured with scripts/calibrate-cost on
 * the H200 machine (16 cores, persistence mode) on 2026-12-01; re-measure them there with
 * `source .gpu/setup.sh && scripts/calibrate-cost` after changing a codec, a kernel or the
 * CPU backend. Each operation declares its own work relative to blur's (gpuimg_op_t.work). */
#include "cost.h"

#include "backend.h"

/* The host codecs, in ns per byte they move (the file's bytes plus the pixels'): the same on
 * both backends, but the decode is what CUDA's start overlaps. */
#define DECODE_PNG_NS 9.91
#define DECODE_JPEG_NS 1.34
#define ENCODE_PNG_NS 4.48
#define ENCODE_JPEG_NS 0.95
/* An operation of work 1 on the CPU backend, one thread, in ns per byte moved; several threads
 * speed it up by this much per thread past the first (7.5x to 13.7x on 16 threads, by
 * operation: docs/performance.md). */
#define CPU_STEP_NS 0.66
#define CPU_PARALLEL 0.75
/* CUDA: its start (driver and primary context, a thread while the input is decoded), what a
 * one-image run costs besides (device allocations, and the runtime's teardown as the process
 * ends: its wall time was 93-172 ms over its report's total on the H200, 2026-12-01, where a
 * CPU run's is about 10), the copies from and into ordinary memory (7 and 1.7 GB/s: the
 * result's pages are new), and a step of work 1. */
#define CUDA_START_MS 220.0
#define CUDA_RUNNER_MS 110.0
#define CUDA_UP_NS 0.14
#define CUDA_DOWN_NS 0.60
#define CUDA_STEP_NS 0.003
/* nvJPEG on CUDA (--codec nvjpeg, one image): the runner's first JPEG creates nvJPEG's handle
 * and states, 0.15-0.3 s on the H200 (0.3 s on one thread: docs/performance.md, "nvJPEG"),
 * after the device's start; then the hardware decoder takes 0.51 ms and the encoder 0.15 ms
 * (RGB 4:2:0, quality 90) per 1024x768 RGB image (nvjpeg_test --bench 50, 2026-11-30), in ns
 * per byte of pixels; no copy of those pixels. */
#define NVJPEG_HANDLE_MS 225.0
#define NVJPEG_DECODE_NS 0.22
#define NVJPEG_ENCODE_NS 0.064

/* A batch split between the host codecs and the device's JPEG path (gpuimg_cost_device_share,
 * H200, 16 cores, 1024x768 JPEGs, bench/bench-batch-bound with TIMELINE, 2026-12-02): while
 * both run, each goes at about half its speed alone (blur -> JPEG, img/s: the device path
 * 3,100-4,300 beside the host's workers, 6,300-7,300 alone; the host's 16 workers 900-1,400
 * beside it, 1,700-2,200 alone; gray -> PNG and thumbnails alike), so the host takes
 * the images it converts while nvJPEG sets up and the device path the rest. The set-up took
 * 0.75-1.56 s beside busy host workers (median 1.18 s, 49 runs); 1.25 s stands for it and for the
 * device path's first slower images. The device path alone, per image: its hardware decoders (2,
 * with 4 encoders: 0.146 ms per 1024x768 RGB image, in ns per byte of pixels) or its host
 * work spread over the cores, whichever is longer; that host work: a device image's read,
 * header, write and waits (1.36 ms of process CPU time per image with --codec nvjpeg, set-up
 * included) and, for output other than JPEG, the host encode; and a host image's own read,
 * header and write. */
#define SPLIT_SETUP_MS 1250.0
#define SPLIT_HW_DECODE_NS 0.062
#define SPLIT_DEVICE_HOST_MS 1.0
#define SPLIT_HOST_IMAGE_MS 0.4
/* Every core busy, a host image takes longer than the model's one-thread figures: about 1.2x
 * (16 workers of the host codecs on the H200 machine, in ms of a core per image: blur -> JPEG
 * 11.0, gray -> PNG 10.0, 256-pixel thumbnails decoded at 1/2 5.4, against 9.1, 8.2 and 4.4
 * for one thread here; until 2026-12-02 the host's steps were left out, and blur's share came
 * out at 0.49 where 0.65-0.8 ran fastest). */
#define SPLIT_HOST_LOADED 1.2
/* A share that would give the device fewer images than this is not worth its set-up, nor one
 * predicted to finish less than 10% sooner than the host alone (the set-up varies by a
 * quarter from run to run). */
#define SPLIT_MIN_IMAGES 64
#define SPLIT_MIN_GAIN 0.9

static double codec_ms(gpuimg_format_t fmt, double bytes, int decode)
{
  if (fmt == GPUIMG_FORMAT_NONE)
    return 0;
  int png = fmt == GPUIMG_FORMAT_PNG;
  return bytes *
         (decode ? (png ? DECODE_PNG_NS : DECODE_JPEG_NS)
                 : (png ? ENCODE_PNG_NS : ENCODE_JPEG_NS)) *
         1e-6;
}

/* How much faster than one thread the host encodes res on threads threads: the encoder the
 * plan picks declares the independent parts it cuts the image into (encode_parts), which run
 * on the threads, each past the first adding CPU_PARALLEL of one. */
static double encode_parallel(const gpuimg_plan_t *plan, gpuimg_format_t fmt,
                              const gpuimg_shape_t *res, int threads)
{
  const gpuimg_codec_t *c = fmt == GPUIMG_FORMAT_NONE || res->w < 1 || res->h < 1
                                ? NULL
                                : gpuimg_codec_encoder(plan->codec, fmt, plan->png_level);
  int parts = c && c->encode_parts ? c->encode_parts(res->w, res->h, res->c) : 1;
  int n = parts < threads ? parts : threads;
  return n > 1 ? 1 + (n - 1) * CPU_PARALLEL : 1;
}

/* A run's parts in ms: the host decode and encode, the steps on the CPU and on CUDA, the
 * copies up and down, and the decoded and resulting pixels' bytes. */
typedef struct {
  double decode, encode, cpu, gpu, up, down, in_bytes, out_bytes;
} parts_t;

/* 0, or -1 when plan's steps cannot run on the image (the run will say why). */
static int predict_parts(const gpuimg_plan_t *plan, int threads, const gpuimg_cost_input_t *in,
                         parts_t *p)
{
  gpuimg_shape_t sh[GPUIMG_MAX_STEPS + 1];
  if (gpuimg_plan_shapes(plan, in->width, in->height, in->channels, sh) < 0) {
    gpuimg_error_clear();
    return -1;
  }
  p->cpu = p->gpu = 0;
  for (int i = 0; i < plan->nsteps; i++) {
    const gpuimg_op_t *op = plan->steps[i].op;
    const gpuimg_shape_t *si = &sh[i], *so = &sh[i + 1];
    double in_px = (double)si->w * si->h, out_px = (double)so->w * so->h;
    double bytes = in_px * (si->c + (op->needs_mask ? 1 : 0)) + out_px * so->c;
    double work = op->work > 0 ? op->work : 1.0;
    int bands = gpuimg_cpu_bands(threads, so->w, so->h);
    p->cpu += bytes * work * CPU_STEP_NS * 1e-6 / (1 + (bands - 1) * CPU_PARALLEL);
    p->gpu += bytes * work * CUDA_STEP_NS * 1e-6;
  }
  const gpuimg_shape_t *res = &sh[plan->nsteps];
  p->in_bytes = (double)in->width * in->height * in->channels;
  p->out_bytes = (double)res->w * res->h * res->c;
  p->decode = codec_ms(in->in_format, (double)in->file_bytes + p->in_bytes, 1);
  p->encode = codec_ms(in->out_format, p->out_bytes, 0) /
              encode_parallel(plan, in->out_format, res, threads);
  p->up = p->in_bytes * CUDA_UP_NS * 1e-6;
  p->down = p->out_bytes * CUDA_DOWN_NS * 1e-6;
  return 0;
}

/* A one-image CUDA run of parts p: JPEG decoded (device_decode) and encoded (device_encode)
 * by nvJPEG on the device, else by the host codecs, the device starting during the decode. */
static double device_run_ms(const parts_t *p, int device_decode, int device_encode)
{
  double load = device_decode ? CUDA_START_MS + p->in_bytes * NVJPEG_DECODE_NS * 1e-6
                              : (p->decode > CUDA_START_MS ? p->decode : CUDA_START_MS) + p->up;
  double store = device_encode ? p->out_bytes * NVJPEG_ENCODE_NS * 1e-6 : p->down + p->encode;
  double handle = device_decode || device_encode ? NVJPEG_HANDLE_MS : 0;
  return load + CUDA_RUNNER_MS + handle + p->gpu + store;
}

void gpuimg_cost_predict(const gpuimg_plan_t *plan, int threads, const gpuimg_cost_input_t *in,
                         double *cpu_ms, double *cuda_ms)
{
  parts_t p;
  if (predict_parts(plan, threads, in, &p) < 0) {
    *cpu_ms = *cuda_ms = 0; /* the CPU is predicted to win until the run says why it fails */
    return;
  }
  *cpu_ms = p.decode + p.cpu + p.encode;
  *cuda_ms = device_run_ms(&p, 0, 0);
}

double gpuimg_cost_predict_nvjpeg(const gpuimg_plan_t *plan, int threads,
                                  const gpuimg_cost_input_t *in, int device_decode,
                                  int device_encode)
{
  parts_t p;
  return predict_parts(plan, threads, in, &p) < 0 ? 0
                                                  : device_run_ms(&p, device_decode, device_encode);
}

double gpuimg_cost_device_share(const gpuimg_plan_t *plan, const gpuimg_cost_input_t *in,
                                int device_encode, const gpuimg_plan_t *host_plan, int reduction,
                                int cores, long n)
{
  parts_t p, h;
  gpuimg_cost_input_t reduced = *in;
  reduced.width = gpuimg_reduced_side(in->width, reduction);
  reduced.height = gpuimg_reduced_side(in->height, reduction);
  if (in->in_format != GPUIMG_FORMAT_JPEG || n <= 0 || cores <= 0 ||
      predict_parts(plan, 1, in, &p) < 0 ||
      predict_parts(host_plan ? host_plan : plan, 1, &reduced, &h) < 0)
    return 0;
  /* ms of one core per image */
  double host = (p.decode + h.cpu + h.encode + SPLIT_HOST_IMAGE_MS) * SPLIT_HOST_LOADED;
  double dev_host = SPLIT_DEVICE_HOST_MS + (device_encode ? 0 : p.encode * SPLIT_HOST_LOADED);
  /* wall ms per image of the device path alone */
  double dev = p.in_bytes * SPLIT_HW_DECODE_NS * 1e-6;
  if (dev < dev_host / cores)
    dev = dev_host / cores;
  /* The host converts what it can during the set-up, the device path the rest after it; none
   * when the host converts the whole batch by then, or not clearly later than that split. */
  double early = SPLIT_SETUP_MS * cores / host;
  if (early >= (double)n ||
      SPLIT_SETUP_MS + ((double)n - early) * dev >= SPLIT_MIN_GAIN * (double)n * host / cores)
    return 0;
  double share = 1 - early / (double)n;
  if (!(share > 0) || share * (double)n < SPLIT_MIN_IMAGES)
    return 0;
  return share < 1 ? share : 1;
}
