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
 * runner costs besides (context use, pinned and device allocations, teardown), the copy of
 * the decoded image into pinned memory, each way over PCIe, and a step of work 1. */
#define CUDA_START_MS 220.0
#define CUDA_RUNNER_MS 35.0
#define CUDA_STAGE_NS 0.10
#define CUDA_COPY_NS 0.018
#define CUDA_STEP_NS 0.003

static double codec_ms(gpuimg_format_t fmt, double bytes, int decode)
{
  if (fmt == GPUIMG_FORMAT_NONE)
    return 0;
  int png = fmt == GPUIMG_FORMAT_PNG;
  return bytes * (decode ? (png ? DECODE_PNG_NS : DECODE_JPEG_NS)
                         : (png ? ENCODE_PNG_NS : ENCODE_JPEG_NS)) * 1e-6;
}

void gpuimg_cost_predict(const gpuimg_plan_t *plan, int threads, const gpuimg_cost_input_t *in,
                         double *cpu_ms, double *cuda_ms)
{
  double px = (double)in->width * (double)in->height;
  gpuimg_shape_t sh[GPUIMG_MAX_STEPS + 1];
  if (gpuimg_plan_shapes(plan, in->width, in->height, in->channels, sh) < 0) {
    gpuimg_error_clear(); /* the run says why; the CPU is predicted to win until then */
    *cpu_ms = *cuda_ms = 0;
    return;
  }
  double cpu = 0, gpu = 0;
  for (int i = 0; i < plan->nsteps; i++) {
    const gpuimg_op_t *op = plan->steps[i].op;
    const gpuimg_shape_t *si = &sh[i], *so = &sh[i + 1];
    double in_px = (double)si->w * si->h, out_px = (double)so->w * so->h;
    double bytes = in_px * (si->c + (op->needs_mask ? 1 : 0)) + out_px * so->c;
    double work = op->work > 0 ? op->work : 1.0;
    int bands = gpuimg_cpu_bands(threads, so->w, so->h);
    cpu += bytes * work * CPU_STEP_NS * 1e-6 / (1 + (bands - 1) * CPU_PARALLEL);
    gpu += bytes * work * CUDA_STEP_NS * 1e-6;
  }
  const gpuimg_shape_t *res = &sh[plan->nsteps];
  double out = (double)res->w * res->h * res->c;
  double decode = codec_ms(in->in_format, (double)in->file_bytes + px * in->channels, 1);
  double encode = codec_ms(in->out_format, out, 0);
  double copies = px * in->channels * (CUDA_STAGE_NS + CUDA_COPY_NS) + out * CUDA_COPY_NS;
  *cpu_ms = decode + cpu + encode;
  *cuda_ms = (decode > CUDA_START_MS ? decode : CUDA_START_MS) + CUDA_RUNNER_MS +
             copies * 1e-6 + gpu + encode;
}
