/* bench_report.c: the benchmark's output, JSON lines to --json and the markdown tables. */
#define _POSIX_C_SOURCE 200809L

#include <cJSON.h>
#include <string.h>

#include "bench.h"

/* Writes o as one line of --json and deletes it. */
static void json_emit(bench_t *b, cJSON *o, int flush)
{
  char *text = cJSON_PrintUnformatted(o);
  if (text) {
    fprintf(b->json, "%s\n", text);
    if (flush)
      fflush(b->json);
    cJSON_free(text);
  }
  cJSON_Delete(o);
}

/* ---- JSON lines ------------------------------------------------------------------------- */

void bench_json_device(bench_t *b)
{
  int major = 0, minor = 0, rt = 0, drv = 0, dev = 0;
  struct cudaDeviceProp prop;
  gpuimg_cuda_device_cc(b->ctx, &major, &minor);
  (void)cudaRuntimeGetVersion(&rt);
  (void)cudaDriverGetVersion(&drv);
  memset(&prop, 0, sizeof prop);
  if (cudaGetDevice(&dev) != cudaSuccess || cudaGetDeviceProperties(&prop, dev) != cudaSuccess)
    (void)cudaGetLastError();
  char cc[32], npp_version[32];
  snprintf(cc, sizeof cc, "%d.%d", major, minor);
  bench_npp_version(npp_version, sizeof npp_version);
  cJSON *o = cJSON_CreateObject();
  if (!o)
    return;
  cJSON_AddStringToObject(o, "type", "device");
  cJSON_AddStringToObject(o, "name", gpuimg_cuda_device_name(b->ctx));
  cJSON_AddStringToObject(o, "compute_capability", cc);
  cJSON_AddNumberToObject(o, "sms", prop.multiProcessorCount);
  cJSON_AddNumberToObject(o, "memory_bytes", (double)prop.totalGlobalMem);
  cJSON_AddNumberToObject(o, "cuda_runtime", rt);
  cJSON_AddNumberToObject(o, "cuda_driver", drv);
  cJSON_AddBoolToObject(o, "npp", b->npp);
  if (b->npp && npp_version[0])
    cJSON_AddStringToObject(o, "npp_version", npp_version);
  cJSON_AddNumberToObject(o, "max_run_ms", b->opt.max_run_ms);
  cJSON_AddNumberToObject(o, "budget_s", b->opt.budget_s);
  json_emit(b, o, 0);
  bench_progress("device %s (sm_%d%d, %d SMs), CUDA runtime %d, driver %d, NPP %s",
                 gpuimg_cuda_device_name(b->ctx), major, minor, prop.multiProcessorCount, rt, drv,
                 b->npp ? (npp_version[0] ? npp_version : "yes") : "no");
}

/* The device-to-device copy: the buffer, the bytes moved (read + write), the times. */
void bench_json_copy(bench_t *b, size_t buffer_bytes, double moved, double ms, double ms_min)
{
  cJSON *o = cJSON_CreateObject();
  if (!o)
    return;
  cJSON_AddStringToObject(o, "type", "copy");
  cJSON_AddNumberToObject(o, "buffer_bytes", (double)buffer_bytes);
  cJSON_AddNumberToObject(o, "bytes", moved);
  cJSON_AddNumberToObject(o, "warmup", b->opt.warmup);
  cJSON_AddNumberToObject(o, "runs", b->opt.runs);
  cJSON_AddNumberToObject(o, "ms", ms);
  cJSON_AddNumberToObject(o, "ms_min", ms_min);
  cJSON_AddNumberToObject(o, "gbps", b->copy_gbps);
  cJSON_AddNumberToObject(o, "gbps_max", moved / (ms_min * 1e6));
  json_emit(b, o, 0);
}

void bench_json_result(bench_t *b, const result_t *r)
{
  cJSON *o = cJSON_CreateObject();
  if (!o)
    return;
  cJSON_AddStringToObject(o, "type", "result");
  cJSON_AddStringToObject(o, "op", r->op);
  cJSON_AddStringToObject(o, "variant", r->variant);
  cJSON_AddStringToObject(o, "impl", r->impl);
  cJSON_AddNumberToObject(o, "width", r->w);
  cJSON_AddNumberToObject(o, "height", r->h);
  cJSON_AddNumberToObject(o, "channels", b->opt.channels);
  if (r->radius >= 0)
    cJSON_AddNumberToObject(o, "radius", r->radius);
  else
    cJSON_AddNullToObject(o, "radius");
  cJSON_AddNumberToObject(o, "bytes", r->bytes);
  if (r->skipped[0]) {
    cJSON_AddStringToObject(o, "skipped", r->skipped);
  } else {
    cJSON_AddNumberToObject(o, "warmup", b->opt.warmup);
    cJSON_AddNumberToObject(o, "runs", b->opt.runs);
    cJSON_AddNumberToObject(o, "ms", r->ms);
    cJSON_AddNumberToObject(o, "ms_min", r->ms_min);
    if (r->kind == CASE_ROUNDTRIP) {
      cJSON_AddStringToObject(o, "clock", "host");
      cJSON_AddNumberToObject(o, "events_ms", r->events_ms);
    } else {
      cJSON_AddStringToObject(o, "clock", "events");
    }
    cJSON_AddNumberToObject(o, "gbps", r->gbps);
    cJSON_AddNumberToObject(o, "pct_copy", r->pct_copy);
    cJSON_AddStringToObject(o, "kernel", r->kernel ? r->kernel : "");
    cJSON_AddNumberToObject(o, "launches", r->launches);
  }
  if (r->check[0]) {
    cJSON_AddStringToObject(o, "check", r->check);
    cJSON_AddNumberToObject(o, "diff_bytes", (double)r->diff_bytes);
    cJSON_AddNumberToObject(o, "max_diff", r->max_diff);
  }
  json_emit(b, o, 1);
}

void bench_json_summary(bench_t *b)
{
  cJSON *o = cJSON_CreateObject();
  if (!o)
    return;
  cJSON_AddStringToObject(o, "type", "summary");
  cJSON_AddNumberToObject(o, "failures", b->failures);
  cJSON_AddNumberToObject(o, "elapsed_s", bench_elapsed_s(b));
  json_emit(b, o, 0);
}

/* ---- markdown --------------------------------------------------------------------------- */

void bench_print_markdown(const bench_t *b)
{
  printf("\n## gpuimg benchmark: %s, device-to-device copy %.1f GB/s\n",
         gpuimg_cuda_device_name(b->ctx), b->copy_gbps);
  printf("\nMedian of %d event-timed runs after %d warm-up runs; gray-roundtrip is host-clock "
         "time. GB/s counts the least traffic (input once, output once, mask); %% copy compares "
         "it with the device-to-device copy.\n",
         b->opt.runs, b->opt.warmup);
  for (int i = 0; i < b->opt.nsizes; i++) {
    const size_state_t *s = &b->sizes[i];
    static const char *const layout[] = {"", "gray", "gray+alpha", "RGB", "RGBA"};
    printf("\n### %dx%d %s%s\n\n", s->w, s->h, layout[s->c],
           s->check ? " (each gpuimg row checked against the CPU reference)" : "");
    printf("| op | variant | r | median ms | min ms | MB | GB/s | %% copy | check |\n");
    printf("|---|---|--:|--:|--:|--:|--:|--:|---|\n");
    for (int k = 0; k < b->nresults; k++) {
      const result_t *r = &b->results[k];
      if (r->w != s->w || r->h != s->h)
        continue;
      char radius[16] = "";
      if (r->radius >= 0)
        snprintf(radius, sizeof radius, "%d", r->radius);
      char checked[64] = "";
      if (strcmp(r->check, "info") == 0)
        snprintf(checked, sizeof checked, "%lld bytes differ (max %d)", r->diff_bytes, r->max_diff);
      else
        snprintf(checked, sizeof checked, "%s", r->check);
      if (r->skipped[0])
        printf("| %s | %s | %s | %s | | %.1f | | | %s |\n", r->op, r->variant, radius, r->skipped,
               r->bytes / 1e6, checked);
      else
        printf("| %s | %s | %s | %.4f | %.4f | %.1f | %.1f | %.1f | %s |\n", r->op, r->variant,
               radius, r->ms, r->ms_min, r->bytes / 1e6, r->gbps, r->pct_copy, checked);
    }
  }
  printf("\n%d failure%s\n", b->failures, b->failures == 1 ? "" : "s");
}
