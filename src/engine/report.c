/* report.c: the JSON timing report (schema in man/gpuimg-report.5). */
#include "report.h"

#include "block_times.h"

#include "meta.h"

#include <cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifndef GPUIMG_VERSION
#define GPUIMG_VERSION "unknown"
#endif
#ifndef GPUIMG_BUILD_TYPE
#define GPUIMG_BUILD_TYPE "unknown"
#endif

#define GPUIMG_REPORT_SCHEMA 1

/* A copy of s that is valid UTF-8: each invalid byte becomes U+FFFD. Caller frees. */
char *gpuimg_utf8_clean(const char *s)
{
  size_t n = strlen(s);
  char *out = malloc(n * 3 + 1);
  size_t o = 0;
  if (!out)
    return NULL;
  for (size_t i = 0; i < n;) {
    unsigned char c = (unsigned char)s[i];
    size_t len = c < 0x80             ? 1
                 : (c & 0xe0) == 0xc0 ? 2
                 : (c & 0xf0) == 0xe0 ? 3
                 : (c & 0xf8) == 0xf0 ? 4
                                      : 0;
    int ok = len > 0 && i + len <= n;
    for (size_t k = 1; ok && k < len; k++)
      ok = ((unsigned char)s[i + k] & 0xc0) == 0x80;
    if (ok && len > 1) {
      /* Reject overlong forms, surrogates and values past U+10FFFF. */
      uint32_t cp = c & (0x7f >> len);
      for (size_t k = 1; k < len; k++)
        cp = (cp << 6) | ((unsigned char)s[i + k] & 0x3f);
      static const uint32_t min_cp[5] = {0, 0, 0x80, 0x800, 0x10000};
      ok = cp >= min_cp[len] && cp <= 0x10ffff && (cp < 0xd800 || cp > 0xdfff);
    }
    if (ok) {
      memcpy(out + o, s + i, len);
      o += len;
      i += len;
    } else {
      memcpy(out + o, "\xef\xbf\xbd", 3);
      o += 3;
      i += 1;
    }
  }
  out[o] = '\0';
  return out;
}

static int add_string(cJSON *obj, const char *key, const char *value)
{
  char *clean = gpuimg_utf8_clean(value);
  if (!clean)
    return -1;
  cJSON *item = cJSON_AddStringToObject(obj, key, clean);
  free(clean);
  return item ? 0 : -1;
}

/* Numbers are finite by construction; this keeps NaN/Inf out whatever happens. */
static void add_number(cJSON *obj, const char *key, double v)
{
  cJSON_AddNumberToObject(obj, key, isfinite(v) ? v : 0.0);
}

/* v rounded to the given number of decimals (ms to 0.1 us, GB/s to 1 MB/s). */
static double rnd(double v, int decimals)
{
  double scale = pow(10.0, decimals);
  return round(v * scale) / scale;
}

/* An operation's report options, into the stage's `options` object. */
static void report_number(void *ctx, const char *key, double value)
{
  add_number(ctx, key, value);
}

static void report_string(void *ctx, const char *key, const char *value)
{
  add_string(ctx, key, value);
}

/* A step's stage: the operation's options and its variant. */
static int add_step(cJSON *o, const gpuimg_step_t *st)
{
  cJSON *op = cJSON_AddObjectToObject(o, "options");
  if (!op)
    return -1;
  if (st->op->report)
    st->op->report(st->params, &(gpuimg_report_sink_t){report_number, report_string, op});
  const char *variant = gpuimg_op_variant_name(st->op, st->params);
  if (variant[0])
    add_string(o, "variant", variant);
  return 0;
}

/* A launch's declared memory accesses with the sector or bank rule's count. */
static int add_accesses(cJSON *lo_, const gpuimg_launch_t *l)
{
  if (!l->naccess)
    return 0;
  cJSON *arr = cJSON_AddArrayToObject(lo_, "accesses");
  if (!arr)
    return -1;
  int threads = (int)(l->block[0] * l->block[1] * l->block[2]);
  for (int i = 0; i < l->naccess; i++) {
    const gpuimg_access_t *a = &l->access[i];
    cJSON *x = cJSON_CreateObject();
    if (!x || !cJSON_AddItemToArray(arr, x))
      return -1;
    double used;
    int n = gpuimg_model_access(a, threads, &used);
    add_string(x, "kind", gpuimg_access_name(a->kind));
    add_number(x, "bytes", a->bytes);
    add_number(x, "stride", (double)a->stride);
    if (gpuimg_access_shared(a->kind)) {
      add_number(x, "conflict_ways", n);
    } else {
      add_number(x, "sectors_per_request", n);
      add_number(x, "used_pct", rnd(used, 1));
    }
  }
  return 0;
}

/* A kernel's stage: its launch shape and occupancy, under key (the measured "launch", or the
 * model's). */
static int add_launch(cJSON *o, const char *key, const gpuimg_launch_t *l)
{
  cJSON *lo_ = cJSON_AddObjectToObject(o, key);
  if (!lo_)
    return -1;
  add_string(lo_, "kernel", l->kernel ? l->kernel : "");
  if (l->instance[0])
    add_string(lo_, "instance", l->instance);
  int grid[3] = {(int)l->grid[0], (int)l->grid[1], (int)l->grid[2]};
  int block[3] = {(int)l->block[0], (int)l->block[1], (int)l->block[2]};
  cJSON_AddItemToObject(lo_, "grid", cJSON_CreateIntArray(grid, 3));
  cJSON_AddItemToObject(lo_, "block", cJSON_CreateIntArray(block, 3));
  add_number(lo_, "shared_bytes", (double)l->shared_bytes);
  add_number(lo_, "launches", l->launches);
  if (l->has_occupancy) {
    add_number(lo_, "registers", l->registers);
    add_number(lo_, "static_shared_bytes", (double)l->static_shared);
    add_number(lo_, "active_blocks_per_sm", l->active_blocks_per_sm);
    add_number(lo_, "occupancy_pct", rnd(l->occupancy_pct, 1));
    add_string(lo_, "limited_by", l->limited_by);
    add_number(lo_, "resident_blocks", (double)l->resident_blocks);
    unsigned long long blocks = (unsigned long long)l->grid[0] * l->grid[1] * l->grid[2];
    add_number(lo_, "blocks", (double)blocks);
    add_number(lo_, "waves", rnd(l->waves, 2));
    gpuimg_waves_t w;
    gpuimg_model_waves(blocks, l->resident_blocks, &w);
    add_number(lo_, "last_wave_blocks", (double)w.last_blocks);
    add_number(lo_, "last_wave_pct", rnd(w.last_fill_pct, 1));
  }
  add_number(lo_, "idle_lanes",
             gpuimg_model_idle_lanes((int)(l->block[0] * l->block[1] * l->block[2])));
  return add_accesses(lo_, l);
}

/* The model's launch of a step: for --device's GPU or the device the step ran on. */
static int add_model(cJSON *o, const gpuimg_plan_t *plan, const gpuimg_run_t *run,
                     const gpuimg_stage_t *s)
{
  static const char *const none[] = {"", "copy", "unmodelled", "no-l2-size"};
  const char *gpu = plan->model_gpu ? plan->model_gpu->name : run->device;
  if (s->model_rc == GPUIMG_LAUNCH_KERNEL) {
    if (add_launch(o, "model", &s->model) < 0)
      return -1;
    add_string(cJSON_GetObjectItem(o, "model"), "gpu", gpu);
    return 0;
  }
  cJSON *m = cJSON_AddObjectToObject(o, "model");
  if (!m)
    return -1;
  add_string(m, "gpu", gpu);
  add_string(m, "none", s->model_rc > 0 ? none[s->model_rc] : "impossible");
  return 0;
}

/* An analysis step's result (stats: its figures) as its operation writes it. */
static int add_result(cJSON *o, const gpuimg_step_t *st, const void *result)
{
  char *json = st->op->result_json(result);
  cJSON *item = json ? cJSON_AddRawToObject(o, "result", json) : NULL;
  free(json);
  return item ? 0 : -1;
}

/* A recorded launch's blocks (--explain-image on a device): how many each SM ran, the measured
 * waves and the span; nothing when the records are not usable. */
static int add_blocks_measured(cJSON *o, const gpuimg_stage_t *s)
{
  gpuimg_block_stats_t st;
  int rc = gpuimg_block_stats(s->blocks, s->nblocks, s->launch.active_blocks_per_sm, &st);
  if (rc != 0)
    return rc < 0 ? -1 : 0;
  cJSON *m = cJSON_AddObjectToObject(o, "blocks_measured");
  int *per_sm = malloc((size_t)st.sms * sizeof *per_sm);
  if (m && per_sm) {
    for (int i = 0; i < st.sms; i++)
      per_sm[i] = (int)st.per_sm[i];
    add_number(m, "blocks", (double)s->nblocks);
    add_number(m, "sms", st.sms);
    cJSON_AddItemToObject(m, "blocks_per_sm", cJSON_CreateIntArray(per_sm, st.sms));
    add_number(m, "waves", st.waves);
    add_number(m, "span_us", rnd((double)(st.t1 - st.t0) / 1000.0, 3));
    add_number(m, "last_start_us", rnd((double)(st.last_start - st.t0) / 1000.0, 3));
  }
  free(per_sm);
  gpuimg_block_stats_free(&st);
  return m && per_sm ? 0 : -1;
}

static int add_stage(cJSON *stages, const gpuimg_plan_t *plan, const gpuimg_run_t *run,
                     const gpuimg_stage_t *s)
{
  cJSON *o = cJSON_CreateObject();
  if (!o || !cJSON_AddItemToArray(stages, o))
    return -1;
  double *sorted = malloc((size_t)s->nms * sizeof *sorted);
  if (!sorted)
    return -1;
  memcpy(sorted, s->ms, (size_t)s->nms * sizeof *sorted);
  double median = gpuimg_median(sorted, s->nms);
  double lo = sorted[0], hi = sorted[s->nms - 1];
  /* Noise: the median absolute deviation from the median, in % of the median. */
  for (int i = 0; i < s->nms; i++)
    sorted[i] = fabs(s->ms[i] - median);
  double mad = gpuimg_median(sorted, s->nms);
  double mad_pct = median > 0 ? 100.0 * mad / median : 0.0;
  free(sorted);

  add_string(o, "name", s->name);
  if (s->codec)
    add_string(o, "codec", s->codec);
  if (s->step >= 0)
    add_number(o, "step", s->step);
  add_string(o, "clock", s->device ? "cuda-event" : "host");
  add_number(o, "ms", rnd(median, 4));
  add_number(o, "ms_min", rnd(lo, 4));
  add_number(o, "ms_max", rnd(hi, 4));
  add_number(o, "samples", s->nms);
  add_number(o, "mad_pct", rnd(mad_pct, 2));
  if (s->bytes) {
    add_number(o, "bytes", (double)s->bytes);
    if (median > 0)
      add_number(o, "gbps", rnd((double)s->bytes / (median * 1e6), 3));
  }
  if (s->pinned >= 0)
    cJSON_AddBoolToObject(o, "pinned", s->pinned);
  if (s->step >= 0 && strcmp(s->name, "upload-mask") != 0) {
    if (add_step(o, &plan->steps[s->step]) < 0)
      return -1;
    add_number(o, "output_width", s->out_w);
    add_number(o, "output_height", s->out_h);
  }
  if (s->result && add_result(o, &plan->steps[s->step], s->result) < 0)
    return -1;
  if (s->has_model && add_model(o, plan, run, s) < 0)
    return -1;
  if (s->has_launch) {
    const gpuimg_launch_t *l = &s->launch;
    if (add_launch(o, "launch", l) < 0 || (s->blocks && add_blocks_measured(o, s) < 0))
      return -1;
    if (run->copy_gbps > 0 && median > 0 && s->bytes)
      add_number(o, "copy_bw_pct",
                 rnd(100.0 * (double)s->bytes / (median * 1e6) / run->copy_gbps, 1));
    if (l->has_divergence) {
      cJSON *d = cJSON_AddObjectToObject(o, "divergence");
      if (!d)
        return -1;
      add_number(d, "warps", (double)l->warps);
      add_number(d, "divergent_warps", (double)l->divergent_warps);
      add_number(d, "divergent_pct",
                 l->warps ? rnd(100.0 * (double)l->divergent_warps / (double)l->warps, 2) : 0);
      if (s->has_prediction) {
        add_number(d, "predicted_warps", (double)s->predicted_warps);
        add_number(d, "predicted_divergent_warps", (double)s->predicted_divergent);
      }
    }
  }
  return 0;
}

static cJSON *image_object(const char *name, uint64_t bytes, int w, int h, int c)
{
  cJSON *o = cJSON_CreateObject();
  if (!o)
    return NULL;
  add_string(o, "name", name);
  add_number(o, "bytes", (double)bytes);
  add_number(o, "width", w);
  add_number(o, "height", h);
  add_number(o, "channels", c);
  return o;
}

/* The output's "metadata": what it carries of the input's, ["icc", "exif"] or one of them. */
static int add_metadata(cJSON *out, int carried)
{
  cJSON *a = cJSON_AddArrayToObject(out, "metadata");
  if (!a)
    return -1;
  if (carried & GPUIMG_META_ICC)
    cJSON_AddItemToArray(a, cJSON_CreateString("icc"));
  if (carried & GPUIMG_META_EXIF)
    cJSON_AddItemToArray(a, cJSON_CreateString("exif"));
  return 0;
}

/* "backend_choice": what --backend auto predicted for each backend (and CUDA with nvJPEG),
 * in ms, and why it chose. */
static int add_choice(cJSON *root, const gpuimg_run_t *run)
{
  cJSON *o = cJSON_AddObjectToObject(root, "backend_choice");
  if (!o)
    return -1;
  add_number(o, "cpu_ms", rnd(run->predicted_cpu_ms, 3));
  add_number(o, "cuda_ms", rnd(run->predicted_cuda_ms, 3));
  if (run->has_nvjpeg_choice)
    add_number(o, "nvjpeg_ms", rnd(run->predicted_nvjpeg_ms, 3));
  add_string(o, "reason", run->choice_reason ? run->choice_reason : "");
  return 0;
}

char *gpuimg_report_json(const gpuimg_plan_t *plan, const gpuimg_run_t *run)
{
  cJSON *root = cJSON_CreateObject();
  char *text = NULL;
  if (!root)
    goto fail;
  add_number(root, "schema_version", GPUIMG_REPORT_SCHEMA);
  add_string(root, "tool", "gpuimg");
  add_string(root, "version", GPUIMG_VERSION);
  add_string(root, "backend", run->backend ? run->backend : "none");
  add_string(root, "device", run->device[0] ? run->device : "none");
  if (run->threads > 0)
    add_number(root, "threads", run->threads);
  if (run->has_choice && add_choice(root, run) < 0)
    goto fail;
  if (run->cc_major) {
    char cc[16];
    snprintf(cc, sizeof cc, "%d.%d", run->cc_major, run->cc_minor);
    add_string(root, "compute_capability", cc);
  }
  add_string(root, "build_type", GPUIMG_BUILD_TYPE);
  if (run->driver_version || run->runtime_version) {
    char v[32];
    snprintf(v, sizeof v, "%d.%d", run->driver_version / 1000, run->driver_version % 1000 / 10);
    add_string(root, "cuda_driver", v);
    snprintf(v, sizeof v, "%d.%d", run->runtime_version / 1000, run->runtime_version % 1000 / 10);
    add_string(root, "cuda_runtime", v);
  }
  if (run->copy_gbps > 0)
    add_number(root, "copy_bandwidth_gbps", rnd(run->copy_gbps, 1));
  add_number(root, "repeat", plan->repeat);
  add_number(root, "warmup", plan->warmup);
  cJSON *in = image_object(run->input_name, run->input_bytes, run->in_w, run->in_h, run->in_c);
  if (in && run->orientation > 1)
    add_number(in, "orientation", run->orientation);
  if (in && run->reduction > 1)
    add_number(in, "decoded_at_1_in", run->reduction);
  cJSON_AddItemToObject(root, "input", in);
  if (run->output_name) {
    cJSON *out =
        image_object(run->output_name, run->output_bytes, run->out_w, run->out_h, run->out_c);
    if (!out)
      goto fail;
    add_string(out, "format", gpuimg_format_name(run->output_format));
    if (run->metadata && add_metadata(out, run->metadata) < 0)
      goto fail;
    cJSON_AddItemToObject(root, "output", out);
  } else {
    cJSON_AddNullToObject(root, "output");
  }
  cJSON *stages = cJSON_AddArrayToObject(root, "stages");
  if (!stages)
    goto fail;
  for (int i = 0; i < run->nstages; i++)
    if (add_stage(stages, plan, run, &run->stages[i]) < 0)
      goto fail;
  add_number(root, "total_ms", rnd(run->total_ms, 4));
  text = cJSON_Print(root);
fail:
  cJSON_Delete(root);
  if (!text)
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, "report", "out of memory");
  return text;
}

char *gpuimg_report_results(const gpuimg_run_t *run, const gpuimg_plan_t *plan)
{
  gpuimg_buf_t out = {0};
  int i;
  for (i = 0; i < run->nstages; i++) {
    const gpuimg_stage_t *s = &run->stages[i];
    if (!s->result)
      continue;
    cJSON *o = cJSON_CreateObject();
    char *line = NULL;
    if (o && add_string(o, "input", run->input_name ? run->input_name : "") == 0) {
      add_number(o, "width", s->in_w);
      add_number(o, "height", s->in_h);
      add_number(o, "step", s->step);
      add_string(o, "operation", s->name);
      if (add_result(o, &plan->steps[s->step], s->result) == 0)
        line = cJSON_PrintUnformatted(o);
    }
    cJSON_Delete(o);
    int rc = line ? gpuimg_buf_append(&out, line, strlen(line)) : -1;
    free(line);
    if (rc < 0 || gpuimg_buf_append(&out, "\n", 1) < 0)
      break;
  }
  if (i < run->nstages || gpuimg_buf_append(&out, "", 1) < 0) { /* out of memory */
    gpuimg_buf_free(&out);
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, "", "out of memory");
    return NULL;
  }
  return (char *)out.data;
}
