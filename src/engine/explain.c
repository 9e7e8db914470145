/* explain.c: --explain: the CUDA model of each kernel of a run, one plain line each. */
#include "report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *gpuimg_grouped(unsigned long long n, char *buf, size_t size)
{
  char digits[32];
  int len = snprintf(digits, sizeof digits, "%llu", n), o = 0;
  for (int i = 0; i < len && (size_t)o + 2 < size; i++) {
    if (i > 0 && (len - i) % 3 == 0)
      buf[o++] = ',';
    buf[o++] = digits[i];
  }
  buf[o] = '\0';
  return buf;
}

/* The median of all of a stage's samples (its first one if no memory for a copy). */
static double median_ms(const gpuimg_stage_t *s)
{
  double *v = malloc((size_t)s->nms * sizeof *v);
  if (!v)
    return s->ms[0];
  memcpy(v, s->ms, (size_t)s->nms * sizeof *v);
  double m = gpuimg_median(v, s->nms);
  free(v);
  return m;
}

/* The kernel's name (the step's main kernel, whose launch the rest of the line describes),
 * and the step's launches where there are several (the two passes' bands, the blur's window
 * sums ahead, stats' histogram). */
static void print_kernel(FILE *f, const gpuimg_launch_t *l)
{
  fprintf(f, "%s", l->kernel);
  if (l->launches > 1)
    fprintf(f, " (one of %d launches)", l->launches);
  fprintf(f, ", ");
}

/* The block shape, and the lanes a block leaves idle in its last warp (threads not a
 * multiple of 32). */
static void print_block(FILE *f, const gpuimg_launch_t *l)
{
  int threads = (int)(l->block[0] * l->block[1] * l->block[2]);
  fprintf(f, "%ux%u blocks", l->block[0], l->block[1]);
  int idle = gpuimg_model_idle_lanes(threads), warps = gpuimg_model_warps(threads);
  if (idle)
    fprintf(f, " of %d warps, %d of %d lanes idle (%.1f%%)", warps, idle, 32 * warps,
            100.0 * idle / (32.0 * warps));
}

/* Registers, blocks per SM and what limits them, occupancy, the grid in waves and the last
 * wave's fill. */
static void print_occupancy(FILE *f, const gpuimg_launch_t *l)
{
  char a[32], b[32];
  unsigned long long blocks = (unsigned long long)l->grid[0] * l->grid[1] * l->grid[2];
  size_t shared = l->shared_bytes + l->static_shared;
  if (shared)
    fprintf(f, ", %.1f KB shared each", (double)shared / 1024.0);
  fprintf(f, ", %d registers -> %d blocks/SM (limited by %s), %.0f%% occupancy", l->registers,
          l->active_blocks_per_sm, l->limited_by, l->occupancy_pct);
  if (l->active_blocks_per_sm == 0) {
    fprintf(f, ": no block fits an SM, the launch fails");
    return;
  }
  gpuimg_waves_t w;
  gpuimg_model_waves(blocks, l->resident_blocks, &w);
  fprintf(f, ", %s blocks in %.1f waves (%s resident)", gpuimg_grouped(blocks, a, sizeof a),
          w.waves, gpuimg_grouped((unsigned long long)l->resident_blocks, b, sizeof b));
  if (w.last_blocks < (unsigned long long)l->resident_blocks)
    fprintf(f, ", last wave %s blocks (%.1f%% full)", gpuimg_grouped(w.last_blocks, a, sizeof a),
            w.last_fill_pct);
}

/* Each declared access by the sector rule (global) or the bank rule (shared). */
static void print_accesses(FILE *f, const gpuimg_launch_t *l)
{
  int threads = (int)(l->block[0] * l->block[1] * l->block[2]);
  for (int i = 0; i < l->naccess; i++) {
    const gpuimg_access_t *a = &l->access[i];
    double used;
    int n = gpuimg_model_access(a, threads, &used);
    fprintf(f, "; %s %d B/lane %lld B apart: ", gpuimg_access_name(a->kind), a->bytes, a->stride);
    if (gpuimg_access_shared(a->kind))
      fprintf(f, "%d-way bank conflict", n);
    else /* whole percentages whole, others to a tenth: 12.5, 33.3 */
      fprintf(f, "%d sector%s/request (%.*f%% used)", n, n == 1 ? "" : "s",
              fabs(used - floor(used + 0.5)) < 0.05 ? 0 : 1, used);
  }
}

/* The warps a teaching kernel diverges in: counted on the device (with the host's prediction)
 * or predicted by the model. */
static void print_divergence(FILE *f, const gpuimg_launch_t *l, const gpuimg_stage_t *s)
{
  char a[32], b[32], c[32];
  if (!l->has_divergence || !l->warps)
    return;
  fprintf(f, "; %s of %s warps divergent (%.1f%%", gpuimg_grouped(l->divergent_warps, a, sizeof a),
          gpuimg_grouped(l->warps, b, sizeof b),
          100.0 * (double)l->divergent_warps / (double)l->warps);
  if (s)
    fprintf(f, ", predicted %s",
            s->has_prediction ? gpuimg_grouped(s->predicted_divergent, c, sizeof c) : "n/a");
  fputc(')', f);
}

/* The model's line for a step on plan's --device GPU. */
static void print_model(FILE *f, const gpuimg_plan_t *plan, const gpuimg_stage_t *s)
{
  const gpuimg_launch_t *l = &s->model;
  fprintf(f, "predicted for %s: ", plan->model_gpu->name);
  switch (s->model_rc) {
  case GPUIMG_LAUNCH_COPY:
    fprintf(f, "a device-to-device copy, no kernel\n");
    return;
  case GPUIMG_LAUNCH_UNMODELLED:
    fprintf(f, "not predicted: no launch of its own kernels to model (none declared, or a "
               "library's, as CUB's)\n");
    return;
  case GPUIMG_LAUNCH_NO_L2:
    fprintf(f, "not predicted: the launch depends on the GPU's L2 cache size, which the "
               "table lacks\n");
    return;
  case GPUIMG_LAUNCH_IMPOSSIBLE:
    fprintf(f, "no launch: the kernel does not fit this GPU's limits\n");
    return;
  }
  print_kernel(f, l);
  print_block(f, l);
  if (l->has_occupancy) {
    print_occupancy(f, l);
  } else {
    const gpuimg_gpu_t *g = plan->model_gpu;
    fprintf(f, "; no registers of %s for sm_%d%d in the resource table", l->instance, g->cc_major,
            g->cc_minor);
  }
  print_accesses(f, l);
  print_divergence(f, l, NULL);
  fputc('\n', f);
}

/* The GPU --device names, before the lines predicted for it. */
static void print_gpu(FILE *f, const gpuimg_gpu_t *g)
{
  int arch = gpuimg_model_arch(g->cc_major, g->cc_minor);
  fprintf(f,
          "model: %s (%s, compute capability %d.%d, %d SMs; per SM %d threads, %d blocks, %d "
          "registers, %d KB shared memory); registers from the compiler for sm_%d; predicted, "
          "not measured\n",
          g->name, g->product, g->cc_major, g->cc_minor, g->sms, g->max_threads_per_sm,
          g->max_blocks_per_sm, g->regs_per_sm, g->shared_per_sm / 1024, arch);
}

/* Where a measured launch and the model's for its device differ (nothing when they agree;
 * registers and blocks per SM only where the device ran the architecture the model prices). */
static void print_model_mismatch(FILE *f, const gpuimg_run_t *run, const gpuimg_stage_t *s)
{
  const gpuimg_launch_t *l = &s->launch, *m = &s->model;
  if (!s->has_model || s->model_rc != GPUIMG_LAUNCH_KERNEL || !m->has_occupancy)
    return;
  int priced = l->arch == gpuimg_model_arch(run->cc_major, run->cc_minor);
  if ((priced &&
       (m->active_blocks_per_sm != l->active_blocks_per_sm || m->registers != l->registers)) ||
      memcmp(m->grid, l->grid, sizeof m->grid) != 0 || m->shared_bytes != l->shared_bytes)
    fprintf(f,
            "; the model differs: %ux%u blocks, %zu B dynamic shared, %d registers -> %d "
            "blocks/SM",
            m->grid[0], m->grid[1], m->shared_bytes, m->registers, m->active_blocks_per_sm);
}

void gpuimg_explain_stage(FILE *f, const gpuimg_plan_t *plan, const gpuimg_run_t *run,
                          const gpuimg_stage_t *s)
{
  const gpuimg_step_t *st = &plan->steps[s->step];
  const char *variant = gpuimg_op_variant_name(st->op, st->params);
  double ms = median_ms(s);
  double gbps = ms > 0 ? (double)s->bytes / (ms * 1e6) : 0;
  char to[48] = ""; /* a step that changed its input's size says what it made */
  if (s->out_w != s->in_w || s->out_h != s->in_h)
    snprintf(to, sizeof to, " -> %dx%d", s->out_w, s->out_h);
  if (plan->model_gpu && s->has_model) {
    fprintf(f, "%s%s%s%s: ", s->name, variant[0] ? " " : "", variant, to);
    print_model(f, plan, s);
    return;
  }
  if (!s->has_launch) {
    fprintf(f, "%s%s: CPU backend, %.3f ms, %.2f GB/s\n", s->name, to, ms, gbps);
    return;
  }
  const gpuimg_launch_t *l = &s->launch;
  fprintf(f, "%s%s%s%s: ", s->name, variant[0] ? " " : "", variant, to);
  if (!l->has_occupancy) {
    fprintf(f, "%s, %.3f ms\n", l->kernel ? l->kernel : "copy", ms);
    return;
  }
  print_kernel(f, l);
  print_block(f, l);
  print_occupancy(f, l);
  fprintf(f, ", %.3f ms, %.2f TB/s", ms, gbps / 1000.0);
  if (run->copy_gbps > 0)
    fprintf(f, " = %.0f%% of copy bandwidth", 100.0 * gbps / run->copy_gbps);
  print_accesses(f, l);
  print_divergence(f, l, s);
  print_model_mismatch(f, run, s);
  fputc('\n', f);
}

void gpuimg_explain(FILE *f, const gpuimg_plan_t *plan, const gpuimg_run_t *run)
{
  if (run->has_choice) {
    fprintf(f, "backend: %s, by the cost model (cpu %.1f ms, cuda %.1f ms", run->backend,
            run->predicted_cpu_ms, run->predicted_cuda_ms);
    if (run->has_nvjpeg_choice)
      fprintf(f, ", cuda with nvjpeg %.1f ms", run->predicted_nvjpeg_ms);
    fprintf(f, "): %s\n", run->choice_reason ? run->choice_reason : "");
  }
  if (plan->model_gpu)
    print_gpu(f, plan->model_gpu);
  for (int i = 0; i < run->nstages; i++) {
    const gpuimg_stage_t *s = &run->stages[i];
    if (s->step >= 0 && strcmp(s->name, "upload-mask") != 0)
      gpuimg_explain_stage(f, plan, run, s);
  }
}
