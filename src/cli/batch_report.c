/* batch_report.c: what batch mode says: its failure lines, notices and progress line on stderr,
 * and the report (--report): one JSON line per input in input order, then the summary. */
#define _XOPEN_SOURCE 700
#include "batch.h"
#include "pool.h"

#include <cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifndef GPUIMG_VERSION
#define GPUIMG_VERSION "unknown"
#endif

static int add_string(cJSON *obj, const char *key, const char *value)
{
  char *clean = gpuimg_utf8_clean(value);
  cJSON *item = clean ? cJSON_AddStringToObject(obj, key, clean) : NULL;
  free(clean);
  return item ? 0 : -1;
}

/* The fields that open every report line. */
static void add_tool(cJSON *root)
{
  cJSON_AddNumberToObject(root, "schema_version", 1);
  add_string(root, "tool", "gpuimg");
  add_string(root, "version", GPUIMG_VERSION);
}

/* "shard": "K/N", or null without --shard. */
static void add_shard(cJSON *root, const batch_t *b)
{
  if (b->cli.shard_n) {
    char shard[32];
    snprintf(shard, sizeof shard, "%d/%d", b->cli.shard_k, b->cli.shard_n);
    add_string(root, "shard", shard);
  } else {
    cJSON_AddNullToObject(root, "shard");
  }
}

/* v rounded to 4 decimals (0.1 us for milliseconds), never NaN or infinite. */
static double rnd4(double v)
{
  return isfinite(v) ? round(v * 1e4) / 1e4 : 0.0;
}

/* ---- stderr: failure lines, notices and the progress line ---- */

/* Clears the progress line; err_mu held. */
static void progress_clear(batch_t *b)
{
  if (b->progress_len > 0)
    fprintf(stderr, "\r%*s\r", b->progress_len, "");
  b->progress_len = 0;
}

void batch_say(batch_t *b, const char *msg)
{
  pthread_mutex_lock(&b->err_mu);
  progress_clear(b);
  fprintf(stderr, "gpuimg: %s\n", msg);
  fflush(stderr);
  pthread_mutex_unlock(&b->err_mu);
}

void batch_progress_show(batch_t *b)
{
  int done = atomic_load(&b->ndone), total = b->nselected;
  double s = (gpuimg_now_ms() - b->t_start) / 1000.0;
  double rate = s > 0 ? done / s : 0;
  char line[128];
  if (rate > 0)
    snprintf(line, sizeof line, "[%d/%d] %.1f img/s ETA %.0fs", done, total, rate,
             (total - done) / rate);
  else
    snprintf(line, sizeof line, "[%d/%d]", done, total);
  pthread_mutex_lock(&b->err_mu);
  int len = (int)strlen(line);
  fprintf(stderr, "\r%s%*s", line, b->progress_len > len ? b->progress_len - len : 0, "");
  fflush(stderr);
  b->progress_len = len > b->progress_len ? len : b->progress_len;
  pthread_mutex_unlock(&b->err_mu);
}

void batch_progress_end(batch_t *b)
{
  if (!b->progress)
    return;
  pthread_mutex_lock(&b->err_mu);
  progress_clear(b);
  pthread_mutex_unlock(&b->err_mu);
}

void batch_fail_item(batch_t *b, item_t *it, int code, const char *msg)
{
  it->status = ITEM_FAILED;
  it->code = code;
  free(it->error);
  it->error = strdup(msg);
  batch_say(b, it->error ? it->error : msg);
}

/* The stage keys: read, decode, [upload-mask, upload,] one per step, [download,] encode,
 * write. A step is named by its operation, or "<op>#<step>" when the operation occurs twice. */
void batch_make_keys(batch_t *b)
{
  int has_mask = 0;
  b->nkeys = 0;
  snprintf(b->keys[b->nkeys++], sizeof b->keys[0], "read");
  snprintf(b->keys[b->nkeys++], sizeof b->keys[0], "decode");
  for (int i = 0; i < b->cli.plan.nsteps; i++)
    has_mask |= b->masks[i].data != NULL;
  int cuda = gpuimg_sched_uses_cuda(b->sched);
  if (cuda && has_mask)
    snprintf(b->keys[b->nkeys++], sizeof b->keys[0], "upload-mask");
  if (cuda)
    snprintf(b->keys[b->nkeys++], sizeof b->keys[0], "upload");
  b->key_first_op = b->nkeys;
  for (int i = 0; i < b->cli.plan.nsteps; i++) {
    const char *name = b->cli.plan.steps[i].op->name;
    int twice = 0;
    for (int k = 0; k < b->cli.plan.nsteps; k++)
      twice |= k != i && b->cli.plan.steps[k].op == b->cli.plan.steps[i].op;
    if (twice)
      snprintf(b->keys[b->nkeys++], sizeof b->keys[0], "%s#%d", name, i);
    else
      snprintf(b->keys[b->nkeys++], sizeof b->keys[0], "%s", name);
  }
  if (cuda)
    snprintf(b->keys[b->nkeys++], sizeof b->keys[0], "download");
  snprintf(b->keys[b->nkeys++], sizeof b->keys[0], "encode");
  snprintf(b->keys[b->nkeys++], sizeof b->keys[0], "write");
}

/* ---- the report ---- */

/* Milliseconds of every stage of run under its key (has[k]: the stage ran). */
static void stage_values(const batch_t *b, const gpuimg_run_t *run, double *ms, int *has)
{
  for (int k = 0; k < b->nkeys; k++) {
    ms[k] = 0;
    has[k] = 0;
  }
  for (int i = 0; run && i < run->nstages; i++) {
    const gpuimg_stage_t *s = &run->stages[i];
    int k = -1;
    if (s->step >= 0 && strcmp(s->name, "upload-mask") != 0) {
      k = b->key_first_op + s->step;
    } else {
      for (int j = 0; j < b->nkeys && k < 0; j++)
        if (strcmp(b->keys[j], s->name) == 0)
          k = j;
    }
    if (k < 0 || s->nms < 1)
      continue;
    ms[k] += s->ms[0];
    has[k] = 1;
  }
}

void batch_add_totals(const batch_t *b, const gpuimg_run_t *run, double *totals)
{
  double ms[MAX_KEYS];
  int has[MAX_KEYS];
  stage_values(b, run, ms, has);
  for (int k = 0; k < b->nkeys; k++)
    totals[k] += ms[k];
}

/* Whether an image's interval [start, end] ran (start < 0: it did not). */
static int iv_ran(const double *iv)
{
  return iv[0] >= 0 && iv[1] >= iv[0];
}

/* The image's host-clock intervals since the batch began (load: read and host decode; steps:
 * the pipeline, device decode and encode included; store: host encode and write), each a
 * [start, end] pair in ms, or null where the image had none. */
static void add_timeline(cJSON *root, const batch_t *b, const item_t *it)
{
  static const char *const names[IV_COUNT] = {
      [IV_LOAD] = "load", [IV_PIPE] = "steps", [IV_STORE] = "store"};
  cJSON *o = cJSON_AddObjectToObject(root, "timeline_ms");
  for (int k = 0; o && k < IV_COUNT; k++) {
    const double *iv = it->iv[k];
    if (!iv_ran(iv)) {
      cJSON_AddNullToObject(o, names[k]);
      continue;
    }
    double pair[2] = {rnd4(iv[0] - b->t_start), rnd4(iv[1] - b->t_start)};
    cJSON_AddItemToObject(o, names[k], cJSON_CreateDoubleArray(pair, 2));
  }
}

char *batch_item_json(batch_t *b, const gpuimg_worker_t *wk, item_t *it, int index,
                      const gpuimg_run_t *run)
{
  cJSON *root = NULL;
  if (it->status == ITEM_OK) {
    char *text = gpuimg_report_json(&b->cli.plan, run);
    root = text ? cJSON_Parse(text) : NULL;
    free(text);
  } else {
    cJSON *in = NULL;
    if ((root = cJSON_CreateObject())) {
      add_tool(root);
      in = cJSON_AddObjectToObject(root, "input");
    }
    if (in) {
      add_string(in, "name", it->input);
      if (run && run->in_w) {
        cJSON_AddNumberToObject(in, "bytes", (double)run->input_bytes);
        cJSON_AddNumberToObject(in, "width", run->in_w);
        cJSON_AddNumberToObject(in, "height", run->in_h);
        cJSON_AddNumberToObject(in, "channels", run->in_c);
      }
    }
  }
  if (!root)
    return NULL;
  cJSON *out = cJSON_GetObjectItemCaseSensitive(root, "output");
  if (it->status != ITEM_OK) {
    if ((out = cJSON_AddObjectToObject(root, "output"))) {
      add_string(out, "name", it->output);
      add_string(out, "format", gpuimg_format_name(it->format));
    }
  }
  cJSON_AddNumberToObject(root, "index", index);
  add_string(root, "status",
             it->status == ITEM_OK         ? "ok"
             : it->status == ITEM_FAILED   ? "failed"
             : it->status == ITEM_EXISTING ? "existing"
                                           : "skipped");
  if (it->status == ITEM_FAILED) {
    add_string(root, "error", it->error ? it->error : "unknown error");
    cJSON_AddNumberToObject(root, "exit_code", it->code);
  }
  if (it->status == ITEM_SKIPPED)
    add_shard(root, b);
  if (wk) {
    if (it->status != ITEM_OK) {
      add_string(root, "backend", it->on_cuda ? "cuda" : "cpu");
      if (run && run->device[0])
        add_string(root, "device", run->device);
    }
    cJSON_AddNumberToObject(root, "worker", gpuimg_worker_index(wk));
    if (gpuimg_worker_device(wk) >= 0) {
      cJSON_AddNumberToObject(root, "device_index", gpuimg_worker_device(wk));
      /* pinned and device allocations of this worker so far: constant in steady state */
      cJSON_AddNumberToObject(root, "cuda_allocations", gpuimg_worker_allocations(wk));
    } else {
      cJSON_AddNullToObject(root, "device_index");
    }
    double ms[MAX_KEYS];
    int has[MAX_KEYS];
    stage_values(b, run, ms, has);
    cJSON *sm = cJSON_AddObjectToObject(root, "stage_ms");
    for (int k = 0; sm && k < b->nkeys; k++)
      if (has[k])
        cJSON_AddNumberToObject(sm, b->keys[k], rnd4(ms[k]));
    add_timeline(root, b, it);
  }
  char *line = cJSON_PrintUnformatted(root);
  cJSON_Delete(root);
  return line;
}

/* Item i's line, if any, waits in it->json. */
void batch_report_done(batch_t *b, int i)
{
  pthread_mutex_lock(&b->report_mu);
  if (i >= 0)
    b->items[i].done = 1;
  while (b->emit < b->nitems && b->items[b->emit].done) {
    item_t *it = &b->items[b->emit];
    if (b->have_report && !b->report_err) {
      if (!it->json && it->status == ITEM_SKIPPED)
        it->json = batch_item_json(b, NULL, it, b->emit, NULL);
      if (!it->json) {
        b->report_err = -1;
      } else {
        size_t n = strlen(it->json);
        it->json[n] = '\n'; /* cJSON's NUL becomes the line's end */
        if (gpuimg_write_all(b->report.fd, it->json, n + 1) < 0)
          b->report_err = errno ? errno : EIO;
      }
    }
    free(it->json);
    it->json = NULL;
    batch_results_emit(b, it);
    b->emit++;
  }
  pthread_mutex_unlock(&b->report_mu);
}

/* ---- the summary ---- */

typedef struct {
  double t;
  int delta; /* +1 start, -1 end */
  int device;
} edge_t;

static int cmp_edge(const void *a, const void *b)
{
  const edge_t *x = a, *y = b;
  if (x->t != y->t)
    return x->t < y->t ? -1 : 1;
  return x->delta - y->delta; /* ends first: touching intervals do not overlap */
}

/* What bounds the run: the percent of the wall time that each resource was busy (the
 * hardware JPEG decoder's thread and an nvJPEG encoder thread: of the time from their set-up
 * to their stop, averages over the devices and threads; the device, a worker; the host's
 * cores: the process's CPU time since the batch began over the wall time of every online
 * core), and the busiest. */
static void add_busy_shares(cJSON *root, const batch_t *b, const gpuimg_sched_figures_t *f,
                            double wall_ms, double device_ms)
{
  double worker_ms = 0; /* the --jobs workers' (not a split's device-path workers') */
  for (int i = 0; i < b->nitems; i++)
    for (int k = 0; k < IV_COUNT && b->items[i].worker < b->nworkers; k++) {
      const double *iv = b->items[i].iv[k];
      if (iv_ran(iv))
        worker_ms += iv[1] - iv[0];
    }
  int nd = f->use_cuda && f->ndevices > 0 ? f->ndevices : 1;
  double cpu_ms = gpuimg_cpu_time_ms() - b->cpu_start_ms;
  cJSON_AddNumberToObject(root, "cpu_ms", rnd4(cpu_ms));
  const char *names[] = {"hw_decoder", "jpeg_encoder", "device", "worker", "host_cpu"};
  double ms[] = {f->jpeg.batch_ms / nd, f->jpeg.encode_ms / nd, device_ms / nd,
                 b->nworkers > 0 ? worker_ms / b->nworkers : 0, cpu_ms / gpuimg_cpu_cores()};
  double of[] = {f->jpeg.serving_ms[0] / nd, f->jpeg.serving_ms[1] / nd, wall_ms, wall_ms, wall_ms};
  double pct[5];
  cJSON *o = cJSON_AddObjectToObject(root, "busy_pct");
  int top = 3;
  for (int i = 0; i < 5; i++) {
    pct[i] = of[i] > 0 ? 100.0 * ms[i] / of[i] : 0;
    cJSON_AddNumberToObject(o, names[i], rnd4(pct[i]));
    if (pct[i] > pct[top])
      top = i;
  }
  add_string(root, "bound", names[top]);
}

/* Over the batch's timeline: busy = time with device work in flight on some worker (the
 * pipeline intervals of the CUDA backend: upload, kernels, download), hidden = the part of
 * it during which another worker was doing host work (read, decode, encode, write). */
static void device_overlap(const batch_t *b, int use_cuda, double *busy, double *hidden)
{
  edge_t *e = malloc((size_t)b->nitems * IV_COUNT * 2 * sizeof *e);
  size_t n = 0;
  *busy = *hidden = 0;
  if (!e || !use_cuda) {
    free(e);
    return;
  }
  for (int i = 0; i < b->nitems; i++)
    for (int k = 0; k < IV_COUNT; k++) {
      const double *iv = b->items[i].iv[k];
      if (!iv_ran(iv))
        continue;
      int device = k == IV_PIPE && b->items[i].on_cuda;
      e[n++] = (edge_t){iv[0], +1, device};
      e[n++] = (edge_t){iv[1], -1, device};
    }
  qsort(e, n, sizeof *e, cmp_edge);
  int dev = 0, host = 0;
  for (size_t i = 0; i < n; i++) {
    if (i > 0 && dev > 0) {
      double len = e[i].t - e[i - 1].t;
      *busy += len;
      if (host > 0)
        *hidden += len;
    }
    if (e[i].device)
      dev += e[i].delta;
    else
      host += e[i].delta;
  }
  free(e);
}

/* The JPEG threads' requests, per request on average: ms queued, served and until the
 * requester woke, for decodes and encodes (0 without requests). */
static void add_request_waits(cJSON *root, const gpuimg_sched_jpeg_t *jf)
{
  static const char *const kinds[2] = {"decode", "encode"};
  static const char *const parts[3] = {"queued", "served", "woken"};
  cJSON *o = cJSON_AddObjectToObject(root, "jpeg_request_ms");
  for (int k = 0; o && k < 2; k++) {
    cJSON *kind = cJSON_AddObjectToObject(o, kinds[k]);
    long n = jf->requests[k];
    for (int j = 0; kind && j < 3; j++)
      cJSON_AddNumberToObject(kind, parts[j], rnd4(n > 0 ? jf->wait_ms[k][j] / n : 0));
  }
}

static char *summary_json(const batch_t *b, const batch_counts_t *n, double wall_ms, int status)
{
  int converted = n->converted;
  cJSON *root = cJSON_CreateObject(), *a, *t;
  char *text = NULL;
  gpuimg_sched_figures_t f;
  if (!root)
    return NULL;
  gpuimg_sched_figures(b->sched, &f);
  cJSON_AddBoolToObject(root, "summary", 1);
  add_tool(root);
  /* images: this shard's (converted + failed + existing); inputs: the whole list's */
  cJSON_AddNumberToObject(root, "images", b->nselected);
  cJSON_AddNumberToObject(root, "inputs", b->nitems);
  cJSON_AddNumberToObject(root, "converted", converted);
  cJSON_AddNumberToObject(root, "failed", n->failed);
  cJSON_AddNumberToObject(root, "skipped", n->skipped);
  cJSON_AddNumberToObject(root, "existing", n->existing);
  cJSON_AddNumberToObject(root, "wall_ms", rnd4(wall_ms));
  cJSON_AddNumberToObject(root, "images_per_s",
                          rnd4(wall_ms > 0 ? converted / (wall_ms / 1000.0) : 0));
  cJSON_AddNumberToObject(root, "jobs", b->nworkers);
  cJSON_AddNumberToObject(root, "threads", b->cli.plan.threads);
  add_string(root, "backend", f.use_cuda ? "cuda" : "cpu");
  if ((a = cJSON_AddArrayToObject(root, "devices")))
    for (int i = 0; f.use_cuda && i < f.ndevices; i++)
      cJSON_AddItemToArray(a, cJSON_CreateNumber(f.devices[i]));
  add_shard(root, b);
  if ((t = cJSON_AddObjectToObject(root, "stage_totals_ms")))
    for (int k = 0; k < b->nkeys; k++) {
      /* A hybrid batch that never reached the device has no CUDA stages. */
      if (f.hybrid && !f.use_cuda &&
          (!strcmp(b->keys[k], "upload-mask") || !strcmp(b->keys[k], "upload") ||
           !strcmp(b->keys[k], "download")))
        continue;
      double sum = 0;
      for (int w = 0; w < b->nall; w++)
        sum += b->totals[w][k];
      cJSON_AddNumberToObject(t, b->keys[k], rnd4(sum));
    }
  double busy, hidden;
  device_overlap(b, f.use_cuda, &busy, &hidden);
  cJSON_AddNumberToObject(root, "device_busy_ms", rnd4(busy));
  cJSON_AddNumberToObject(root, "device_hidden_ms", rnd4(hidden));
  cJSON_AddNumberToObject(root, "device_hidden_pct", rnd4(busy > 0 ? 100.0 * hidden / busy : 0));
  /* --codec nvjpeg: calls to the shared hardware JPEG decoder and the images they took */
  /* A split batch: the share of the inputs sent down the device's JPEG path, its workers */
  cJSON_AddNumberToObject(root, "device_share", rnd4(b->paths ? f.device_share : 0));
  cJSON_AddNumberToObject(root, "device_workers", b->paths ? f.device_workers : 0);
  cJSON_AddNumberToObject(root, "host_decode_share", rnd4(f.device_jpeg ? f.host_share : 0));
  cJSON_AddNumberToObject(root, "jpeg_batches", (double)f.jpeg.batches);
  cJSON_AddNumberToObject(root, "jpeg_batched_images", (double)f.jpeg.batch_images);
  cJSON_AddNumberToObject(root, "jpeg_batch_ms", rnd4(f.jpeg.batch_ms));
  cJSON_AddNumberToObject(root, "jpeg_encode_ms", rnd4(f.jpeg.encode_ms));
  /* where a batch's fixed costs go: nvJPEG's threads set up and torn down, workers ready */
  cJSON_AddNumberToObject(root, "jpeg_setup_ms", rnd4(f.jpeg.setup_ms));
  cJSON_AddNumberToObject(root, "jpeg_teardown_ms", rnd4(f.jpeg.teardown_ms));
  add_request_waits(root, &f.jpeg);
  cJSON_AddNumberToObject(root, "workers_ready_ms", rnd4(f.go_ms));
  /* the hybrid start: when the device was up for the workers to move to it */
  if (f.hybrid && f.dev_ready_ms >= 0)
    cJSON_AddNumberToObject(root, "device_ready_ms", rnd4(f.dev_ready_ms));
  else
    cJSON_AddNullToObject(root, "device_ready_ms");
  add_busy_shares(root, b, &f, wall_ms, busy);
  cJSON_AddNumberToObject(root, "exit_status", status);
  if (batch_results_summary(b, root) < 0) {
    cJSON_Delete(root);
    return NULL;
  }
  text = cJSON_PrintUnformatted(root);
  cJSON_Delete(root);
  return text;
}

/* Whether the report (not "-") would be written where an output image goes: DIR/name. */
static int report_clashes(const batch_t *b, const char *report)
{
  const char *slash = strrchr(report, '/');
  const char *base = slash ? slash + 1 : report;
  char *rdir = slash ? strndup(report, (size_t)(slash - report) + 1) : NULL;
  char *c1 = realpath(rdir ? rdir : ".", NULL), *c2 = realpath(b->outdir, NULL);
  int clash = 0;
  for (int i = 0; c1 && c2 && !strcmp(c1, c2) && i < b->nitems && !clash; i++)
    clash = strcmp(b->items[i].name, base) == 0;
  free(rdir);
  free(c1);
  free(c2);
  return clash;
}

int batch_report_open(batch_t *b)
{
  const char *report = b->cli.report;
  struct stat st;
  if (!report)
    return 0;
  if (strcmp(report, "-") != 0) {
    if (report_clashes(b, report)) {
      gpuimg_error_set(GPUIMG_EXIT_USAGE, report,
                       "the report and an output image are the same file");
      return -1;
    }
    if (stat(report, &st) == 0 && batch_is_input(b, &st)) {
      gpuimg_error_set(GPUIMG_EXIT_OUTPUT, report, "output is the same file as an input");
      return -1;
    }
    /* An earlier run's report (a shard re-run into the same place) is kept: a re-run names
     * its report apart (the README's recipe uses the Slurm job id), or says --force. */
    if (!b->cli.force && stat(report, &st) == 0 && S_ISREG(st.st_mode)) {
      gpuimg_error_set(GPUIMG_EXIT_OUTPUT, report, "exists (use --force to replace it)");
      return -1;
    }
  }
  int flags =
      gpuimg_flow_output_flags(&b->cli.plan) | (b->cli.force ? 0 : GPUIMG_OUTPUT_NO_REPLACE);
  if (gpuimg_output_open(&b->report, report, flags) < 0)
    return -1;
  b->have_report = 1;
  return 0;
}

/* Prints the error set, and returns the larger of its exit code and status. */
static int report_error(int status)
{
  fprintf(stderr, "gpuimg: %s\n", gpuimg_error_message());
  return gpuimg_error_code() > status ? gpuimg_error_code() : status;
}

int batch_report_close(batch_t *b, const batch_counts_t *n, double wall_ms, int status)
{
  const char *report = b->cli.report;
  if (!b->have_report)
    return status;
  batch_report_done(b, -1);
  char *sum = summary_json(b, n, wall_ms, status);
  if (b->report_err || !sum) {
    int err = b->report_err;
    if (err > 0)
      gpuimg_error_set(GPUIMG_EXIT_OUTPUT, strcmp(report, "-") ? report : "<stdout>",
                       "write failed: %s", strerror(err));
    else
      gpuimg_error_set(GPUIMG_EXIT_FAILURE, report, "out of memory");
    gpuimg_output_abort(&b->report);
    status = report_error(status);
  } else {
    size_t n = strlen(sum);
    sum[n] = '\n';
    if (gpuimg_output_commit(&b->report, sum, n + 1) < 0)
      status = report_error(status);
  }
  free(sum);
  b->have_report = 0;
  return status;
}
