/* explain.c: --explain: the CUDA model of each kernel of a run, one plain line each. */
#include "report.h"

#include <stdlib.h>
#include <string.h>

/* n with thousands separators ("3,072"). */
static const char *grouped(unsigned long long n, char *buf, size_t size)
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

void gpuimg_explain(FILE *f, const gpuimg_plan_t *plan, const gpuimg_run_t *run)
{
  char a[32], b[32];
  if (run->has_choice) {
    fprintf(f, "backend: %s, by the cost model (cpu %.1f ms, cuda %.1f ms", run->backend,
            run->predicted_cpu_ms, run->predicted_cuda_ms);
    if (run->has_nvjpeg_choice)
      fprintf(f, ", cuda with nvjpeg %.1f ms", run->predicted_nvjpeg_ms);
    fprintf(f, "): %s\n", run->choice_reason ? run->choice_reason : "");
  }
  for (int i = 0; i < run->nstages; i++) {
    const gpuimg_stage_t *s = &run->stages[i];
    if (s->step < 0 || strcmp(s->name, "upload-mask") == 0)
      continue;
    const gpuimg_step_t *st = &plan->steps[s->step];
    const char *variant = gpuimg_op_variant_name(st->op, st->params);
    double ms = median_ms(s);
    double gbps = ms > 0 ? (double)s->bytes / (ms * 1e6) : 0;
    char to[48] = ""; /* a step that changed its input's size says what it made */
    if (s->out_w != s->in_w || s->out_h != s->in_h)
      snprintf(to, sizeof to, " -> %dx%d", s->out_w, s->out_h);
    if (!s->has_launch) {
      fprintf(f, "%s%s: CPU backend, %.3f ms, %.2f GB/s\n", s->name, to, ms, gbps);
      continue;
    }
    const gpuimg_launch_t *l = &s->launch;
    fprintf(f, "%s%s%s%s: ", s->name, variant[0] ? " " : "", variant, to);
    if (!l->has_occupancy) {
      fprintf(f, "%s, %.3f ms\n", l->kernel ? l->kernel : "copy", ms);
      continue;
    }
    unsigned long long blocks = (unsigned long long)l->grid[0] * l->grid[1] * l->grid[2];
    fprintf(f, "%s, %ux%u blocks", l->kernel, l->block[0], l->block[1]);
    size_t shared = l->shared_bytes + l->static_shared;
    if (shared)
      fprintf(f, ", %.1f KB shared each", (double)shared / 1024.0);
    fprintf(f,
            ", %d registers -> %d blocks/SM (limited by %s), %.0f%% occupancy, %s blocks in "
            "%.1f waves (%s resident)",
            l->registers, l->active_blocks_per_sm, l->limited_by, l->occupancy_pct,
            grouped(blocks, a, sizeof a), l->waves,
            grouped((unsigned long long)l->resident_blocks, b, sizeof b));
    fprintf(f, ", %.3f ms, %.2f TB/s", ms, gbps / 1000.0);
    if (run->copy_gbps > 0)
      fprintf(f, " = %.0f%% of copy bandwidth", 100.0 * gbps / run->copy_gbps);
    if (l->has_divergence && l->warps)
      fprintf(f, "; %s of %s warps divergent (%.1f%%, predicted %s)",
              grouped(l->divergent_warps, a, sizeof a), grouped(l->warps, b, sizeof b),
              100.0 * (double)l->divergent_warps / (double)l->warps,
              s->has_prediction ? grouped(s->predicted_divergent, (char[32]){0}, 32) : "n/a");
    fputc('\n', f);
  }
}
