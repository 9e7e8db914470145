/* batch.c: `gpuimg OP ... -o DIR INPUT...`: many files, host threads, CUDA streams; the batch's
 * steps from the command line to the exit status, and each image's conversion. */
#define _XOPEN_SOURCE 700
#include "batch.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

/* How it works. The main thread reads the input list, names every output, and decides up
 * front, in input order, whatever does not depend on scheduling: which inputs belong to
 * this shard, which output names are taken twice (the first input keeps the name), and
 * which outputs would replace an input. Then --jobs workers (pthreads, the engine's
 * scheduler) take the remaining images in input order from a shared atomic index; each
 * reads, decodes, runs the pipeline, encodes and writes (atomically: a temporary file
 * renamed into place) one image at a time, on the CPU or on one of --devices. Every image
 * is processed on its own, so the output bytes do not depend on --jobs or on scheduling.
 *
 * A failing image prints one line and the others go on. The exit status is the largest exit
 * code among the failed images (5 CUDA > 4 output > 3 input > 1 other), 0 when none failed;
 * errors found before any image is processed (bad options, unreadable list or mask, a DIR
 * that cannot be created, an unusable device) stop the batch with their own code.
 *
 * The report (--report FILE) is JSON Lines: one object per input in input order, written as
 * soon as every earlier input is done (into the temporary file, renamed into place at the
 * end), then a summary object. */

void *batch_calloc(size_t n, size_t size)
{
  void *p = calloc(n ? n : 1, size);
  if (!p)
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, "", "out of memory");
  return p;
}

static int setup_error(void)
{
  int code = gpuimg_error_code();
  fprintf(stderr, "gpuimg: %s\n", gpuimg_error_message());
  if (code == GPUIMG_EXIT_USAGE)
    gpuimg_cli_usage(stderr);
  return code;
}

/* ---- one image ---- */

/* Whether an output is a complete file to leave alone (--skip-existing): a regular
 * file under the final name (gpuimg's temporaries have names of their own), not an input. */
static int output_exists(batch_t *b, const struct stat *st)
{
  return b->cli.skip_existing && S_ISREG(st->st_mode) && !batch_is_input(b, st);
}

/* What is under an item's output name, checked before its input is read: 0 when it may be
 * written, 1 when it is a complete output to leave alone (--skip-existing), or -1 with the
 * error set. Whatever a link there points to is looked at (a link to a directory or a FIFO is
 * refused) and a dangling link counts as a file that exists. */
static int check_output(batch_t *b, const item_t *it)
{
  struct stat st;
  const char *why = NULL;
  if (lstat(it->output, &st) < 0)
    return 0; /* nothing there (or a path that cannot be: the write says why) */
  if (stat(it->output, &st) == 0) {
    if (output_exists(b, &st))
      return 1;
    if (S_ISDIR(st.st_mode))
      why = "is a directory";
    else if (batch_is_input(b, &st))
      why = "is an input file (refusing to overwrite it)";
    else if (!S_ISREG(st.st_mode))
      why = GPUIMG_NOT_REGULAR_OUT;
  }
  if (!why && !b->cli.force)
    why = "exists (use --force to replace it)";
  if (why)
    gpuimg_error_set(GPUIMG_EXIT_OUTPUT, it->output, "%s", why);
  return why ? -1 : 0;
}

/* Converts one item through the engine's flow; 0, 1 when its output is left alone
 * (--skip-existing: there before, or complete by the time the image was: another batch's),
 * or -1 with the error set. */
static int convert(batch_t *b, gpuimg_worker_t *wk, item_t *it, gpuimg_run_t *run)
{
  int rc = check_output(b, it);
  if (rc != 0)
    return rc;
  if (strcmp(it->input, "-") == 0) {
    gpuimg_error_set(GPUIMG_EXIT_INPUT, it->input,
                     "standard input cannot be a batch input (name a file)");
    return -1;
  }
  if (strchr(it->name, '/') && batch_make_parents(it) < 0)
    return -1;
  gpuimg_flow_t flow = {.plan = &b->cli.plan, .masks = b->masks};
  gpuimg_worker_flow(wk, &flow);
  gpuimg_job_t job = {.input = it->input,
                      .what = it->input,
                      .output = it->output,
                      .output_what = it->output,
                      .format = it->format,
                      .no_replace = !b->cli.force,
                      .regular = 1,
                      .path = gpuimg_sched_path(b->sched, it->name)};
  rc = gpuimg_flow_run(&flow, &job, run);
  memcpy(it->iv, job.intervals, sizeof it->iv);
  struct stat st;
  if (rc < 0 && job.taken && stat(it->output, &st) == 0 && output_exists(b, &st)) {
    gpuimg_error_clear();
    return 1;
  }
  return rc;
}

/* The scheduler's work item k on worker wk: the k-th item to do; 0 when it converted. */
static int process(void *ctx, gpuimg_worker_t *wk, int k)
{
  batch_t *b = ctx;
  int i = b->todo[k];
  item_t *it = &b->items[i];
  gpuimg_run_t *run = gpuimg_worker_run(wk);

  gpuimg_run_free(run);
  memset(run, 0, sizeof *run);
  gpuimg_error_clear();
  it->worker = gpuimg_worker_index(wk);
  it->on_cuda = gpuimg_worker_device(wk) >= 0;
  int rc = convert(b, wk, it, run);
  if (rc == 0 && batch_results_add(b, it, run) < 0)
    rc = -1;
  if (rc >= 0) {
    it->status = rc == 0 ? ITEM_OK : ITEM_EXISTING;
  } else {
    const char *msg = gpuimg_error_message();
    char in[2048], out[2048], line[4096];
    size_t li = gpuimg_escape(in, sizeof in, it->input);
    size_t lo = gpuimg_escape(out, sizeof out, it->output);
    /* Messages name a file; those that do not (CUDA, out of memory) get the input's. */
    int named = (strncmp(msg, in, li) == 0 && strncmp(msg + li, ": ", 2) == 0) ||
                (strncmp(msg, out, lo) == 0 && strncmp(msg + lo, ": ", 2) == 0);
    snprintf(line, sizeof line, "%s%s%s", named ? "" : in, named ? "" : ": ", msg);
    batch_fail_item(b, it, gpuimg_error_code(), line);
  }
  batch_add_totals(b, run, b->totals[it->worker]);
  if (b->have_report)
    it->json = batch_item_json(b, wk, it, i, run);
  atomic_fetch_add(&b->ndone, 1);
  batch_report_done(b, i);
  return it->status == ITEM_FAILED ? -1 : 0;
}

/* ---- setup ---- */

/* Options that make no sense for many files; 0, or -1 with the error set (exit 2). */
static int check_options(const gpuimg_cli_t *cli)
{
  if (cli->plan.repeat != 1 || cli->plan.warmup != 0) {
    gpuimg_error_set(GPUIMG_EXIT_USAGE, cli->plan.repeat != 1 ? "--repeat" : "--warmup",
                     "not available with -o DIR");
    return -1;
  }
  for (int i = 0; i < cli->ninputs; i++)
    if (strcmp(cli->inputs[i], "-") == 0) {
      gpuimg_error_set(GPUIMG_EXIT_USAGE, "-",
                       "standard input cannot be a batch input (--from - reads a list of "
                       "paths)");
      return -1;
    }
  for (int i = 0, takes; i < cli->plan.nsteps; i++) {
    const char *m = gpuimg_flow_mask_path(&cli->plan, i, &takes);
    if (m && strcmp(m, "-") == 0 && cli->from && strcmp(cli->from, "-") == 0) {
      gpuimg_error_set(GPUIMG_EXIT_USAGE, GPUIMG_MASK_OPTION,
                       "the mask and --from cannot both be stdin");
      return -1;
    }
  }
  if (cli->skip_existing && cli->force) {
    gpuimg_error_set(GPUIMG_EXIT_USAGE, "--skip-existing", "not available with --force");
    return -1;
  }
  if (cli->report && strcmp(cli->report, "-") && cli->from && strcmp(cli->from, "-") &&
      strcmp(cli->report, cli->from) == 0) {
    gpuimg_error_set(GPUIMG_EXIT_USAGE, cli->report, "the report and --from are the same file");
    return -1;
  }
  return 0;
}

/* Loads each step's mask once for the whole batch: first channel only. */
static int load_masks(batch_t *b)
{
  for (int i = 0; i < b->cli.plan.nsteps; i++) {
    int takes;
    const char *path = gpuimg_flow_mask_path(&b->cli.plan, i, &takes);
    if (takes && path && gpuimg_flow_load_mask(&b->cli.plan, path, NULL, 0, &b->masks[i], NULL) < 0)
      return -1;
  }
  return 0;
}

/* The locks of stderr, the input set and the report; the progress line; and the notice that
 * auto found no CUDA device. */
static void start_reporting(batch_t *b)
{
  pthread_mutex_init(&b->err_mu, NULL);
  pthread_mutex_init(&b->ids_mu, NULL);
  pthread_mutex_init(&b->report_mu, NULL);
  b->locks = 1;
  b->progress = !b->cli.plan.quiet && isatty(STDERR_FILENO);
  const char *reason = gpuimg_sched_fallback(b->sched);
  if (reason && !b->cli.plan.quiet) {
    char msg[512];
    snprintf(msg, sizeof msg, "no usable CUDA device (%s); using the CPU backend", reason);
    batch_say(b, msg);
  }
}

/* The work: the selected items that have not failed already. Items finished before any work
 * have their report lines written now. */
static void plan_work(batch_t *b)
{
  struct stat st;
  for (int i = 0; i < b->nitems; i++) {
    item_t *it = &b->items[i];
    if (it->status == ITEM_TODO && stat(it->output, &st) == 0 && output_exists(b, &st))
      it->status = ITEM_EXISTING;
    if (b->items[i].status == ITEM_TODO)
      b->todo[b->ntodo++] = i;
    else if (b->items[i].selected)
      atomic_fetch_add(&b->ndone, 1);
  }
  for (int i = 0; i < b->nitems; i++)
    if (b->items[i].status != ITEM_TODO) {
      if (b->have_report && b->items[i].status != ITEM_SKIPPED)
        b->items[i].json = batch_item_json(b, NULL, &b->items[i], i, NULL);
      if (b->items[i].status == ITEM_FAILED && b->have_report && !b->items[i].json)
        b->report_err = -1;
      b->items[i].done = 1;
    }
  batch_report_done(b, -1);
}

/* Everything setup: from the command line to the report opened; 0, or -1 with the error set. */
static int setup(batch_t *b)
{
  if (check_options(&b->cli) < 0 || batch_shard_resolve(&b->cli) < 0 ||
      !(b->sched = gpuimg_sched_create(b->t_start)) ||
      gpuimg_sched_open(b->sched, &b->cli.plan, b->cli.devices) < 0 || batch_read_inputs(b) < 0 ||
      load_masks(b) < 0 || batch_prepare_outdir(b->outdir) < 0)
    return -1;
  gpuimg_output_sweep(b->outdir, b->cli.plan.quiet); /* before any progress line */
  start_reporting(b);
  if (batch_make_items(b) < 0)
    return -1;
  batch_make_keys(b);
  if (batch_results_open(b) < 0 || batch_report_open(b) < 0)
    return -1;
  gpuimg_output_install_signal_cleanup();
  plan_work(b);
  return 0;
}

/* ---- the work and the end ---- */

static void say_cb(void *ctx, const char *msg)
{
  batch_say(ctx, msg);
}

static void progress_cb(void *ctx)
{
  batch_progress_show(ctx);
}

/* Splits the work between the host codecs and the device's JPEG path when the engine finds it
 * pays (gpuimg_sched_split, priced on the list's first input and length, so that a shard or a
 * resumed run gets the same share), each item by its name; 0, or -1 with the error set (out of
 * memory). */
static int split(batch_t *b)
{
  if (b->ntodo <= 0)
    return 0;
  const item_t *f = &b->items[0];
  if (!(gpuimg_sched_split(b->sched, f->input, f->format, b->nitems) > 0))
    return 0;
  if (!(b->paths = batch_calloc((size_t)b->ntodo, 1)))
    return -1;
  for (int k = 0; k < b->ntodo; k++)
    b->paths[k] = (unsigned char)gpuimg_sched_path(b->sched, b->items[b->todo[k]].name);
  gpuimg_sched_set_paths(b->sched, b->paths);
  return 0;
}

/* Runs the workers: 0 to go on to the summary (status set when nothing could start), or -1
 * when a worker could not start (status its exit code). */
static int run_workers(batch_t *b, int *status)
{
  gpuimg_sched_calls_t calls = {.ctx = b,
                                .process = process,
                                .say = say_cb,
                                .progress = b->progress ? progress_cb : NULL,
                                .progress_ms = PROGRESS_MS};
  int rc = -1;
  b->nworkers = gpuimg_sched_workers(b->sched, b->cli.jobs, b->ntodo);
  b->cli.plan.threads = gpuimg_sched_threads(b->cli.plan.threads, b->nworkers);
  if (split(b) < 0) {
    *status = setup_error();
    b->nworkers = 0;
    return 0;
  }
  b->nall = gpuimg_sched_total_workers(b->sched, b->nworkers);
  if (b->nall <= 0 || (b->totals = batch_calloc((size_t)b->nall, sizeof *b->totals)))
    rc = gpuimg_sched_run(b->sched, b->nworkers, b->ntodo, &calls);
  if (rc == -1) {
    *status = setup_error();
    b->nworkers = b->nall = 0;
    return 0;
  }
  batch_progress_end(b);
  if (rc == 0)
    return 0;
  fprintf(stderr, "gpuimg: %s\n", gpuimg_sched_failure(b->sched, status));
  if (*status == GPUIMG_EXIT_USAGE)
    gpuimg_cli_usage(stderr);
  if (b->have_report)
    gpuimg_output_abort(&b->report);
  b->have_report = 0;
  return -1;
}

/* Counts the items, writes the summary to the report and stderr; the exit status. */
static int finish(batch_t *b, int status)
{
  gpuimg_sched_stop_starter(b->sched);
  double wall_ms = gpuimg_now_ms() - b->t_start;
  batch_counts_t n = {0};
  for (int i = 0; i < b->nitems; i++) {
    const item_t *it = &b->items[i];
    if (it->status == ITEM_OK)
      n.converted++;
    else if (it->status == ITEM_SKIPPED)
      n.skipped++;
    else if (it->status == ITEM_EXISTING)
      n.existing++;
    else if (it->status == ITEM_FAILED) {
      n.failed++;
      if (it->code > status)
        status = it->code;
    }
  }
  status = batch_report_close(b, &n, wall_ms, status);
  if (batch_results_finish(b) < 0) {
    fprintf(stderr, "gpuimg: %s\n", gpuimg_error_message());
    status = status > GPUIMG_EXIT_OUTPUT ? status : GPUIMG_EXIT_OUTPUT;
  }
  if (!b->cli.plan.quiet) {
    char existing[48] = "";
    if (b->cli.skip_existing)
      snprintf(existing, sizeof existing, " %d existing,", n.existing);
    fprintf(stderr,
            "gpuimg: %d converted, %d failed,%s %d skipped (shard) in %.2f s (%.1f images/s)\n",
            n.converted, n.failed, existing, n.skipped, wall_ms / 1000.0,
            wall_ms > 0 ? n.converted / (wall_ms / 1000.0) : 0.0);
  }
  return status;
}

static void batch_free(batch_t *b)
{
  gpuimg_sched_free(b->sched);
  if (b->have_report)
    gpuimg_output_abort(&b->report);
  for (int i = 0; i < b->nowned; i++)
    free(b->owned[i]);
  free(b->owned);
  free(b->inputs);
  free(b->rel);
  for (int i = 0; i < b->nitems; i++) {
    free(b->items[i].output);
    free(b->items[i].error);
    free(b->items[i].json);
    free(b->items[i].results);
  }
  batch_results_free(b);
  for (int i = 0; i < GPUIMG_MAX_STEPS; i++)
    gpuimg_image_free(&b->masks[i]);
  free(b->items);
  free(b->todo);
  free(b->ids);
  free(b->totals);
  free(b->paths);
  if (b->locks) {
    pthread_mutex_destroy(&b->err_mu);
    pthread_mutex_destroy(&b->ids_mu);
    pthread_mutex_destroy(&b->report_mu);
  }
  free(b);
}

/* Keeps the big per-image buffers on the heap (glibc). */
static void keep_heap(void)
{
#ifdef __GLIBC__
  /* Every image allocates and frees the same few large buffers (the file, the decoded and
   * the result pixels, the encoded file: megabytes each). glibc serves such blocks with
   * fresh mmap()s and hands freed heap tops back to the kernel, so each image would fault
   * its pages in again, zeroed: about 1,200 faults per 1024x768 RGB image, a third of a
   * batch's CPU time (measured with perf stat on 200 JPEG -> JPEG conversions, 2-core
   * Debian 12: 236,000 faults and 1.6 s of CPU before, 2,800 and 1.0 s after). Keeping
   * blocks up to 32 MiB (glibc's most) on the heap and never trimming it lets each thread
   * reuse its memory. */
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
}

int gpuimg_batch_main(const gpuimg_cli_t *cli)
{
  batch_t *b = batch_calloc(1, sizeof *b);
  int status = GPUIMG_EXIT_OK;

  if (!b)
    return setup_error();
  keep_heap();
  b->t_start = gpuimg_now_ms();
  b->cpu_start_ms = gpuimg_cpu_time_ms();
  b->cli = *cli;
  b->cli.plan.measure = 0; /* per-image runs measure no bandwidth or divergence */
  b->outdir = cli->outdir;
  if (setup(b) < 0)
    status = setup_error();
  else if (run_workers(b, &status) == 0)
    status = finish(b, status);
  batch_free(b);
  return status;
}
