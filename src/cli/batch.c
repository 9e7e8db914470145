/* batch.c: `gpuimg OP ... -o DIR INPUT...`: many files, host threads, CUDA streams. */
#define _XOPEN_SOURCE 700
#include "cli.h"

#include <cJSON.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#ifndef GPUIMG_VERSION
#define GPUIMG_VERSION "unknown"
#endif

/* How it works. The main thread reads the input list, names every output, and decides up
 * front, in input order, whatever does not depend on scheduling: which inputs belong to
 * this shard, which output names are taken twice (the first input keeps the name), and
 * which outputs would replace an input. Then --jobs workers (pthreads) take the remaining
 * images in input order from a shared atomic index; each reads, decodes, runs the pipeline,
 * encodes and writes (atomically: a temporary file renamed into place) one image at a time.
 * With CUDA each worker owns a gpuimg_pipeline_t: a context with its own non-blocking
 * stream on one of --devices (round-robin by worker number) and pinned and device buffers
 * kept from image to image. The copies and kernels of one worker run one after another, but
 * several workers per device keep several streams busy at once: while one uploads, another's
 * kernels run, a third downloads, and the others decode and encode on the host. Every image
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

#define MAX_DEVICES 64
#define MAX_KEYS (GPUIMG_MAX_STEPS + 8)
#define PROGRESS_MS 100.0

typedef enum { ITEM_TODO, ITEM_OK, ITEM_FAILED, ITEM_SKIPPED } item_status_t;

/* Host-clock intervals of one image: host work before and after the pipeline, and the
 * pipeline itself (device work on CUDA, host work on the CPU). start < 0: none. */
enum { IV_LOAD, IV_PIPE, IV_STORE, IV_COUNT };

typedef struct {
  const char *input; /* as given: argv, or a line of the list */
  char *output;      /* DIR/name (malloc'd) */
  const char *name;  /* its last component, inside output */
  gpuimg_format_t format;
  int selected; /* in this shard */
  int bad_name; /* no file name to derive an output name from ("dir/", ".", "..") */
  item_status_t status;
  int code;    /* exit code of a failure */
  char *error; /* its message, "<file>: <reason>" (malloc'd) */
  int worker;  /* -1: never reached a worker */
  int done;    /* finished (under report_mu) */
  int on_cuda; /* its worker ran it on CUDA */
  char *json;  /* its report line, until written (malloc'd) */
  double iv[IV_COUNT][2];
} item_t;

typedef struct batch batch_t;

typedef struct {
  batch_t *b;
  int index;
  int device;                /* CUDA device number, -1 on the CPU (so far: see hybrid) */
  gpuimg_jpeg_batch_t *jpeg; /* its device's shared JPEG decoder, or NULL */
  pthread_t thread;
  int started;
  gpuimg_pipeline_t *pipe;
  int init_code;
  char init_error[1100];
  int hybrid_done;  /* a hybrid worker that moved to CUDA, or tried */
  gpuimg_run_t *run;
  double totals[MAX_KEYS];
} worker_t;

typedef struct {
  dev_t dev;
  ino_t ino;
} file_id_t;

struct batch {
  gpuimg_cli_t cli; /* a copy of the command line (--repeat and --warmup are refused) */
  const char *outdir;
  item_t *items;
  int nitems;
  int *todo; /* indices of the items the workers process, in input order */
  int ntodo;
  atomic_int next;  /* next index into todo */
  atomic_int ndone; /* selected items finished (progress) */
  int nselected;
  int use_cuda;
  int devices[MAX_DEVICES], ndevices;
  /* --codec nvjpeg on CUDA: JPEG inputs are decoded, and JPEG outputs encoded, on the
   * device; jpeg[d] batches the decodes for devices[d] (NULL: each worker decodes alone). */
  int device_jpeg;
  gpuimg_jpeg_batch_t *jpeg[MAX_DEVICES];
  long jpeg_batches, jpeg_batch_images;
  double jpeg_batch_ms, jpeg_setup_ms, jpeg_teardown_ms;
  double go_ms; /* when the workers were told to go, from t_start */
  /* --backend auto on one device with host codecs: the device is brought up by the starter
   * thread while the workers begin on the CPU, each moving to CUDA at its next image once
   * the device is up (dev_state 1), or staying on the CPU if it is not (-1, dev_reason).
   * The outputs are the same bytes either way; the CPU works through CUDA's start-up (about
   * 0.25 s on an H200) instead of waiting for it. */
  int hybrid;
  pthread_t starter;
  int starter_started;
  atomic_int dev_state;
  atomic_int move_failed; /* a worker could not move (said once) */
  char dev_reason[256];
  double dev_ready_ms; /* when the device was up, from t_start; -1: never */
  gpuimg_image_t masks[GPUIMG_MAX_STEPS];
  /* Stage names of the report's stage_ms and the summary's totals. */
  char keys[MAX_KEYS][48];
  int nkeys, key_first_op;
  /* Worker start-up: each reports ready, then waits for go or stop. */
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int ready, running, go, stop;
  /* stderr lines and the progress line. */
  pthread_mutex_t err_mu;
  int progress, progress_len;
  double t_start;
  /* Inputs and masks by device and inode, built on the first existing output. */
  pthread_mutex_t ids_mu;
  int ids_built;
  file_id_t *ids;
  size_t nids;
  /* The report, written in input order as items finish. */
  pthread_mutex_t report_mu;
  int have_report;
  gpuimg_output_t report;
  int emit;       /* next item to write */
  int report_err; /* errno of a failed write, or -1 for out of memory */
};

static void *xcalloc(size_t n, size_t size)
{
  void *p = calloc(n ? n : 1, size);
  if (!p)
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, "", "out of memory");
  return p;
}

/* FNV-1a, 64 bits, over the bytes of s: the shard hash (documented in the man page). */
static uint64_t fnv1a64(const char *s)
{
  uint64_t h = 0xcbf29ce484222325ull;
  for (; *s; s++) {
    h ^= (unsigned char)*s;
    h *= 0x100000001b3ull;
  }
  return h;
}

static int add_string(cJSON *obj, const char *key, const char *value)
{
  char *clean = gpuimg_utf8_clean(value);
  cJSON *item = clean ? cJSON_AddStringToObject(obj, key, clean) : NULL;
  free(clean);
  return item ? 0 : -1;
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

/* Prints "gpuimg: <msg>" as one line, never mixed with another line or the progress. */
static void say(batch_t *b, const char *msg)
{
  pthread_mutex_lock(&b->err_mu);
  progress_clear(b);
  fprintf(stderr, "gpuimg: %s\n", msg);
  fflush(stderr);
  pthread_mutex_unlock(&b->err_mu);
}

static void progress_show(batch_t *b)
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

/* ---- inputs and output names ---- */

/* Appends the non-empty lines of the list (path, "-" = stdin) to *inputs. A trailing CR is
 * dropped, so lists written on Windows work. 0, or -1 with the error set (exit 3). */
static int read_list(const char *path, const char ***inputs, int *n, int *cap, char ***owned,
                     int *nowned)
{
  int is_stdin = strcmp(path, "-") == 0;
  const char *what = is_stdin ? "<stdin>" : path;
  FILE *f = is_stdin ? stdin : fopen(path, "r");
  char *line = NULL;
  size_t size = 0;
  ssize_t len;
  int rc = 0, lineno = 0;

  if (!f) {
    gpuimg_error_set(GPUIMG_EXIT_INPUT, what, "%s", strerror(errno));
    return -1;
  }
  while ((len = getline(&line, &size, f)) >= 0) {
    lineno++;
    if (len > 0 && line[len - 1] == '\n')
      line[--len] = '\0';
    if (len > 0 && line[len - 1] == '\r')
      line[--len] = '\0';
    if (len == 0)
      continue;
    if (strlen(line) != (size_t)len) {
      gpuimg_error_set(GPUIMG_EXIT_INPUT, what, "line %d holds a NUL byte", lineno);
      rc = -1;
      break;
    }
    if (*n == *cap || *nowned == *cap) {
      int ncap = *cap * 2;
      const char **ni = realloc(*inputs, (size_t)ncap * sizeof *ni);
      if (ni)
        *inputs = ni;
      char **no = realloc(*owned, (size_t)ncap * sizeof *no);
      if (no)
        *owned = no;
      if (!ni || !no) {
        gpuimg_error_set(GPUIMG_EXIT_FAILURE, what, "out of memory");
        rc = -1;
        break;
      }
      *cap = ncap;
    }
    (*owned)[(*nowned)++] = line;
    (*inputs)[(*n)++] = line;
    line = NULL;
    size = 0;
  }
  if (rc == 0 && ferror(f)) {
    gpuimg_error_set(GPUIMG_EXIT_INPUT, what, "%s", strerror(errno));
    rc = -1;
  }
  free(line);
  if (!is_stdin)
    fclose(f);
  return rc;
}

/* The output name of input: its last component with the extension of --format, or its own
 * extension when that names a format gpuimg writes (kept as spelled: .jpeg, .PNG), else
 * with .png. A leading dot does not start an extension (".hidden" -> ".hidden.png"). */
static int name_output(batch_t *b, item_t *it)
{
  static const char *const ext[] = {"png", "jpg", "bmp", "tga"};
  const char *slash = strrchr(it->input, '/');
  const char *base = slash ? slash + 1 : it->input;
  const char *dot = strrchr(base, '.');
  size_t stem = dot && dot != base ? (size_t)(dot - base) : strlen(base);
  const char *new_ext;

  if (b->cli.batch_format != GPUIMG_FORMAT_NONE) {
    it->format = b->cli.batch_format;
    new_ext = ext[it->format];
  } else if (dot && dot != base &&
             (it->format = gpuimg_format_from_name(base)) != GPUIMG_FORMAT_NONE) {
    new_ext = dot + 1;
  } else {
    it->format = GPUIMG_FORMAT_PNG;
    new_ext = "png";
  }
  size_t dlen = strlen(b->outdir);
  int sep = dlen > 0 && b->outdir[dlen - 1] != '/';
  size_t len = dlen + (size_t)sep + stem + 1 + strlen(new_ext) + 1;
  if (!(it->output = malloc(len))) {
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, "", "out of memory");
    return -1;
  }
  snprintf(it->output, len, "%s%s%.*s.%s", b->outdir, sep ? "/" : "", (int)stem, base, new_ext);
  it->name = it->output + dlen + (size_t)sep;
  return 0;
}

/* An open-addressing table of output names (all in DIR): index of the first item that
 * took each name. */
typedef struct {
  int *slot; /* -1: empty */
  size_t mask;
} name_table_t;

static int table_init(name_table_t *t, int n)
{
  size_t size = 16;
  while (size < (size_t)n * 2)
    size *= 2;
  if (!(t->slot = malloc(size * sizeof *t->slot))) {
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, "", "out of memory");
    return -1;
  }
  for (size_t i = 0; i < size; i++)
    t->slot[i] = -1;
  t->mask = size - 1;
  return 0;
}

/* The item holding name, or -1; with add >= 0, add takes the name when nobody has it. */
static int table_find(name_table_t *t, const item_t *items, const char *name, size_t len, int add)
{
  size_t h = (size_t)2166136261u;
  for (size_t i = 0; i < len; i++)
    h = (h ^ (unsigned char)name[i]) * 16777619u;
  for (size_t i = h & t->mask;; i = (i + 1) & t->mask) {
    int k = t->slot[i];
    if (k < 0) {
      if (add >= 0)
        t->slot[i] = add;
      return -1;
    }
    if (strlen(items[k].name) == len && memcmp(items[k].name, name, len) == 0)
      return k;
  }
}

/* Marks it failed with msg ("<file>: <reason>") and prints it. */
static void fail_item(batch_t *b, item_t *it, int code, const char *msg)
{
  it->status = ITEM_FAILED;
  it->code = code;
  free(it->error);
  it->error = strdup(msg);
  say(b, it->error ? it->error : msg);
}

/* Fails, before any work and in input order, the items whose output name an earlier item
 * already has, and those whose output is one of the inputs (by path: the input's directory
 * resolves to DIR). Decided over the whole list, not just this shard, so that shards of one
 * list never write the same file. */
static int check_names(batch_t *b)
{
  name_table_t t;
  char *canon_dir = realpath(b->outdir, NULL), *last_dir = NULL, *last_canon = NULL;
  int rc = -1;

  if (!canon_dir) {
    gpuimg_error_set(GPUIMG_EXIT_OUTPUT, b->outdir, "%s", strerror(errno));
    return -1;
  }
  if (table_init(&t, b->nitems) < 0)
    goto done;
  for (int i = 0; i < b->nitems; i++) {
    item_t *it = &b->items[i];
    if (it->bad_name)
      continue;
    int first = table_find(&t, b->items, it->name, strlen(it->name), i);
    if (first >= 0 && it->selected) {
      char msg[4096];
      snprintf(msg, sizeof msg, "%s: output %s is already the output of %s", it->input, it->output,
               b->items[first].input);
      fail_item(b, it, GPUIMG_EXIT_OUTPUT, msg);
    }
  }
  for (int i = 0; i < b->nitems; i++) {
    const item_t *in = &b->items[i];
    if (in->bad_name)
      continue;
    const char *slash = strrchr(in->input, '/');
    const char *base = slash ? slash + 1 : in->input;
    int k = table_find(&t, b->items, base, strlen(base), -1);
    if (k < 0 || !b->items[k].selected || b->items[k].status == ITEM_FAILED)
      continue;
    /* Same name: is the input's directory DIR? (cached: lists come grouped by directory) */
    size_t dlen = slash ? (size_t)(slash - in->input) + 1 : 0;
    if (!last_dir || strlen(last_dir) != dlen || memcmp(last_dir, in->input, dlen) != 0) {
      free(last_dir);
      free(last_canon);
      last_dir = slash ? strndup(in->input, dlen) : strdup("");
      last_canon = last_dir ? realpath(dlen ? last_dir : ".", NULL) : NULL;
      if (!last_dir)
        goto done;
    }
    if (last_canon && strcmp(last_canon, canon_dir) == 0) {
      char msg[4096];
      snprintf(msg, sizeof msg, "%s: is an input file (refusing to overwrite it)",
               b->items[k].output);
      fail_item(b, &b->items[k], GPUIMG_EXIT_OUTPUT, msg);
    }
  }
  rc = 0;
done:
  if (rc < 0 && gpuimg_error_code() == GPUIMG_EXIT_OK)
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, "", "out of memory");
  free(t.slot);
  free(canon_dir);
  free(last_dir);
  free(last_canon);
  return rc;
}

static int cmp_id(const void *a, const void *b)
{
  const file_id_t *x = a, *y = b;
  if (x->dev != y->dev)
    return x->dev < y->dev ? -1 : 1;
  return (x->ino > y->ino) - (x->ino < y->ino);
}

/* Whether st is one of the inputs or masks (the same file, also through a link). The set is
 * built on the first call: most batches write into a fresh directory and never need it. */
static int is_input(batch_t *b, const struct stat *st)
{
  pthread_mutex_lock(&b->ids_mu);
  if (!b->ids_built) {
    b->ids_built = 1;
    b->ids = calloc((size_t)b->nitems + GPUIMG_MAX_STEPS + 1, sizeof *b->ids);
    for (int i = 0; b->ids && i < b->nitems + b->cli.plan.nsteps; i++) {
      const char *path =
          i < b->nitems ? b->items[i].input
                        : gpuimg_ops_common(b->cli.plan.steps[i - b->nitems].params)->mask_path;
      struct stat s;
      if (path && strcmp(path, "-") && stat(path, &s) == 0) {
        b->ids[b->nids].dev = s.st_dev;
        b->ids[b->nids].ino = s.st_ino;
        b->nids++;
      }
    }
    if (b->ids)
      qsort(b->ids, b->nids, sizeof *b->ids, cmp_id);
  }
  pthread_mutex_unlock(&b->ids_mu);
  file_id_t key = {st->st_dev, st->st_ino};
  /* Without the set (out of memory) every existing output counts as an input: refuse. */
  return !b->ids || bsearch(&key, b->ids, b->nids, sizeof key, cmp_id) != NULL;
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

/* The report line of an item processed by worker wk (ok or failed), or NULL. */
static char *item_json(batch_t *b, worker_t *wk, item_t *it, int index, const gpuimg_run_t *run)
{
  cJSON *root = NULL;
  if (it->status == ITEM_OK) {
    char *text = gpuimg_report_json(&b->cli.plan, run);
    root = text ? cJSON_Parse(text) : NULL;
    free(text);
  } else {
    cJSON *in = NULL;
    if ((root = cJSON_CreateObject())) {
      cJSON_AddNumberToObject(root, "schema_version", 1);
      add_string(root, "tool", "gpuimg");
      add_string(root, "version", GPUIMG_VERSION);
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
             it->status == ITEM_OK       ? "ok"
             : it->status == ITEM_FAILED ? "failed"
                                         : "skipped");
  if (it->status == ITEM_FAILED) {
    add_string(root, "error", it->error ? it->error : "unknown error");
    cJSON_AddNumberToObject(root, "exit_code", it->code);
  }
  if (it->status == ITEM_SKIPPED) {
    char shard[32];
    snprintf(shard, sizeof shard, "%d/%d", b->cli.shard_k, b->cli.shard_n);
    add_string(root, "shard", shard);
  }
  if (wk) {
    if (it->status != ITEM_OK) {
      add_string(root, "backend", it->on_cuda ? "cuda" : "cpu");
      if (run && run->device[0])
        add_string(root, "device", run->device);
    }
    cJSON_AddNumberToObject(root, "worker", wk->index);
    if (wk->device >= 0) {
      cJSON_AddNumberToObject(root, "device_index", wk->device);
      /* pinned and device allocations of this worker so far: constant in steady state */
      cJSON_AddNumberToObject(root, "cuda_allocations", gpuimg_pipeline_allocations(wk->pipe));
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
  }
  char *line = cJSON_PrintUnformatted(root);
  cJSON_Delete(root);
  return line;
}

/* Marks item i done (its line, if any, in it->json) and writes every finished line that has
 * no unfinished one before it. */
static void report_done(batch_t *b, int i)
{
  pthread_mutex_lock(&b->report_mu);
  if (i >= 0)
    b->items[i].done = 1;
  while (b->emit < b->nitems && b->items[b->emit].done) {
    item_t *it = &b->items[b->emit];
    if (b->have_report && !b->report_err) {
      if (!it->json && it->status == ITEM_SKIPPED)
        it->json = item_json(b, NULL, it, b->emit, NULL);
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
    b->emit++;
  }
  pthread_mutex_unlock(&b->report_mu);
}

/* ---- workers ---- */

static double *stage_add(gpuimg_run_t *run, const char *name, double ms, uint64_t bytes)
{
  gpuimg_stage_t *s = gpuimg_run_stage(run, name, -1, 0, 1);
  if (!s)
    return NULL;
  s->ms[0] = ms;
  s->bytes = bytes;
  return s->ms;
}

/* Each step's mask must have the image's size. 0, or -1 with an input error. */
static int check_masks(const batch_t *b, const item_t *it, int width, int height)
{
  for (int i = 0; i < b->cli.plan.nsteps; i++) {
    const gpuimg_image_t *m = &b->masks[i];
    if (m->data && (m->width != width || m->height != height)) {
      char reason[512];
      snprintf(reason, sizeof reason, "mask %s is %dx%d but the image is %dx%d",
               gpuimg_ops_common(b->cli.plan.steps[i].params)->mask_path, m->width, m->height,
               width, height);
      gpuimg_error_set(GPUIMG_EXIT_INPUT, it->input, "%s", reason);
      return -1;
    }
  }
  return 0;
}

/* Writes the encoded image (atomically) and closes the item's timings; t0: when the store
 * interval's writing began. 0, or -1 with the error set (nothing left behind). */
static int store(item_t *it, gpuimg_run_t *run, const gpuimg_buf_t *encoded, double t0)
{
  gpuimg_output_t out = {0};
  out.fd = -1;
  /* No lock: the umask that gpuimg_output_open() needs was read before the workers started
   * (gpuimg_output_install_signal_cleanup()), and its list of temporary files is atomic. */
  if (gpuimg_output_open(&out, it->output, 1) < 0)
    return -1;
  if (gpuimg_output_commit(&out, encoded->data, encoded->size) < 0) {
    gpuimg_output_abort(&out);
    return -1;
  }
  double t1 = gpuimg_now_ms();
  if (!stage_add(run, "write", t1 - t0, encoded->size))
    return -1;
  it->iv[IV_STORE][1] = t1;
  run->output_name = it->output;
  run->output_format = it->format;
  run->output_bytes = encoded->size;
  run->total_ms = t1 - it->iv[IV_LOAD][0];
  return 0;
}

/* Encodes dst on the host with the --codec choice for the item's format, from t0 (the end
 * of the pipeline); *t1: when it finished. 0, or -1 with the error set. */
static int encode_host(const batch_t *b, const item_t *it, gpuimg_run_t *run,
                       const gpuimg_image_t *dst, gpuimg_buf_t *encoded, double t0, double *t1)
{
  const gpuimg_codec_t *codec = gpuimg_codec_encoder(b->cli.plan.codec, it->format, b->cli.plan.png_level);
  gpuimg_encode_opts_t eo = {.quality = b->cli.plan.quality, .png_level = b->cli.plan.png_level};
  if (codec->encode(dst, it->format, &eo, it->output, encoded) < 0)
    return -1;
  *t1 = gpuimg_now_ms();
  if (!stage_add(run, "encode", *t1 - t0,
                 gpuimg_image_bytes(dst->width, dst->height, dst->channels) + encoded->size))
    return -1;
  run->stages[run->nstages - 1].codec = codec->name;
  run->out_w = dst->width;
  run->out_h = dst->height;
  run->out_c = dst->channels;
  return 0;
}

/* convert() for a JPEG under --codec nvjpeg on CUDA: decoded on the device (in batches by
 * the device's nvJPEG thread), the pipeline run there, and a JPEG output encoded there
 * too; any other output is downloaded and encoded on the host. */
static int convert_on_device(batch_t *b, worker_t *wk, item_t *it, gpuimg_run_t *run,
                             const gpuimg_buf_t *file)
{
  const gpuimg_cli_t *cli = &b->cli;
  gpuimg_buf_t encoded = {0};
  gpuimg_image_t dst = {0};
  int rc = -1;
  double t0 = gpuimg_now_ms();

  it->iv[IV_LOAD][1] = it->iv[IV_PIPE][0] = t0;
  gpuimg_jpeg_io_t io = {file->data,   file->size,
                         it->input,    cli->plan.max_pixels,
                         wk->jpeg,     it->format == GPUIMG_FORMAT_JPEG ? &encoded : NULL,
                         cli->plan.quality, it->output};
  int prc = gpuimg_pipeline_process_jpeg(wk->pipe, &io, NULL, b->masks, &dst, run);
  it->iv[IV_PIPE][1] = t0 = gpuimg_now_ms();
  if (prc < 0)
    goto done;
  it->iv[IV_STORE][0] = t0;
  /* Encoded on the device (the run has the output's size), or here. */
  if (!io.out && encode_host(b, it, run, &dst, &encoded, t0, &t0) < 0)
    goto done;
  rc = store(it, run, &encoded, t0);
done:
  gpuimg_buf_free(&encoded);
  gpuimg_image_free(&dst);
  return rc;
}

/* Converts one item; 0, or -1 with the error set. */
static int convert(batch_t *b, worker_t *wk, item_t *it, gpuimg_run_t *run)
{
  gpuimg_buf_t file = {0}, encoded = {0};
  gpuimg_image_t src = {0}, dst = {0};
  const gpuimg_cli_t *cli = &b->cli;
  struct stat st;
  int rc = -1;
  double t0, t1;

  if (stat(it->output, &st) == 0) {
    if (S_ISDIR(st.st_mode)) {
      gpuimg_error_set(GPUIMG_EXIT_OUTPUT, it->output, "is a directory");
      return -1;
    }
    if (is_input(b, &st)) {
      gpuimg_error_set(GPUIMG_EXIT_OUTPUT, it->output,
                       "is an input file (refusing to overwrite it)");
      return -1;
    }
    if (!cli->force) {
      gpuimg_error_set(GPUIMG_EXIT_OUTPUT, it->output, "exists (use --force to replace it)");
      return -1;
    }
  }
  if (strcmp(it->input, "-") == 0) {
    gpuimg_error_set(GPUIMG_EXIT_INPUT, it->input,
                     "standard input cannot be a batch input (name a file)");
    return -1;
  }

  run->input_name = it->input;
  it->iv[IV_LOAD][0] = t0 = gpuimg_now_ms();
  if (gpuimg_file_read(it->input, &file) < 0)
    goto done;
  t1 = gpuimg_now_ms();
  run->input_bytes = file.size;
  if (!stage_add(run, "read", t1 - t0, file.size))
    goto done;
  static const uint8_t soi[3] = {0xff, 0xd8, 0xff};
  if (b->device_jpeg && file.size >= 3 && memcmp(file.data, soi, 3) == 0) {
    rc = convert_on_device(b, wk, it, run, &file);
    goto done;
  }
  const gpuimg_codec_t *decoder = gpuimg_codec_decoder(cli->plan.codec, file.data, file.size);
  if (decoder->decode(file.data, file.size, it->input, cli->plan.max_pixels, &src) < 0)
    goto done;
  t0 = gpuimg_now_ms();
  if (!stage_add(run, "decode", t0 - t1,
                 file.size + gpuimg_image_bytes(src.width, src.height, src.channels)))
    goto done;
  run->stages[run->nstages - 1].codec = decoder->name;
  gpuimg_buf_free(&file);
  run->in_w = src.width;
  run->in_h = src.height;
  run->in_c = src.channels;
  it->iv[IV_LOAD][1] = t0;
  if (check_masks(b, it, src.width, src.height) < 0)
    goto done;

  /* --codec nvjpeg on CUDA: a JPEG output of 1 or 3 channels is encoded on the device. */
  int out_c = src.channels;
  for (int i = 0; i < cli->plan.nsteps; i++)
    out_c = cli->plan.steps[i].op->out_channels(out_c);
  int device_out = b->device_jpeg && it->format == GPUIMG_FORMAT_JPEG && (out_c == 1 || out_c == 3);
  gpuimg_jpeg_io_t io = {NULL,     0,        it->input,    cli->plan.max_pixels,
                         wk->jpeg, &encoded, cli->plan.quality, it->output};
  it->iv[IV_PIPE][0] = gpuimg_now_ms();
  int prc = device_out ? gpuimg_pipeline_process_jpeg(wk->pipe, &io, &src, b->masks, &dst, run)
                       : gpuimg_pipeline_process(wk->pipe, &src, b->masks, &dst, run);
  it->iv[IV_PIPE][1] = gpuimg_now_ms();
  if (prc < 0)
    goto done;
  gpuimg_image_free(&src);
  it->iv[IV_STORE][0] = t1 = gpuimg_now_ms();
  /* Encoded on the device (the run has the output's size), or here. */
  if (!device_out && encode_host(b, it, run, &dst, &encoded, t1, &t1) < 0)
    goto done;
  rc = store(it, run, &encoded, t1);
done:
  /* Close the interval a failure left open. */
  for (int k = 0; k < IV_COUNT; k++)
    if (it->iv[k][0] >= 0 && it->iv[k][1] < 0)
      it->iv[k][1] = gpuimg_now_ms();
  gpuimg_buf_free(&file);
  gpuimg_buf_free(&encoded);
  gpuimg_image_free(&src);
  gpuimg_image_free(&dst);
  return rc;
}

static void process(batch_t *b, worker_t *wk, int i)
{
  item_t *it = &b->items[i];
  gpuimg_run_t *run = wk->run;

  gpuimg_run_free(run);
  memset(run, 0, sizeof *run);
  gpuimg_error_clear();
  it->worker = wk->index;
  it->on_cuda = wk->device >= 0;
  if (convert(b, wk, it, run) == 0) {
    it->status = ITEM_OK;
  } else {
    const char *msg = gpuimg_error_message();
    size_t li = strlen(it->input), lo = strlen(it->output);
    /* Messages name a file; those that do not (CUDA, out of memory) get the input's. */
    int named = (strncmp(msg, it->input, li) == 0 && strncmp(msg + li, ": ", 2) == 0) ||
                (strncmp(msg, it->output, lo) == 0 && strncmp(msg + lo, ": ", 2) == 0);
    char line[4096];
    snprintf(line, sizeof line, "%s%s%s", named ? "" : it->input, named ? "" : ": ", msg);
    fail_item(b, it, gpuimg_error_code(), line);
  }
  double ms[MAX_KEYS];
  int has[MAX_KEYS];
  stage_values(b, run, ms, has);
  for (int k = 0; k < b->nkeys; k++)
    wk->totals[k] += ms[k];
  if (b->have_report)
    it->json = item_json(b, wk, it, i, run);
  atomic_fetch_add(&b->ndone, 1);
  report_done(b, i);
}

/* The hybrid start's thread: brings device devices[0] up while the workers convert on the
 * CPU, then lets them move to it (or says, unless -q, that the batch stays on the CPU). The
 * context (the second half of the start-up) is not made once every image is taken. */
static int work_left(void *arg)
{
  batch_t *b = arg;
  return atomic_load(&b->next) < b->ntodo;
}

static void *device_starter(void *arg)
{
  batch_t *b = arg;
  const char *sync = getenv("GPUIMG_CUDA_SYNC");
  int ok = gpuimg_pipeline_device_start(b->devices[0], !(sync && strcmp(sync, "spin") == 0),
                                        work_left, b, b->dev_reason, sizeof b->dev_reason);
  b->dev_ready_ms = ok > 0 ? gpuimg_now_ms() - b->t_start : -1;
  atomic_store(&b->dev_state, ok > 0 ? 1 : -1);
  if (ok == 0 && !b->cli.plan.quiet) {
    char msg[512];
    snprintf(msg, sizeof msg, "no usable CUDA device (%s); using the CPU backend", b->dev_reason);
    say(b, msg);
  }
  return NULL;
}

/* A hybrid worker's move to CUDA, once the device is up: a CUDA runner instead of its CPU
 * one. A runner that cannot be made (out of device memory) leaves the worker on the CPU, with
 * a notice (once per batch). */
static void move_to_device(batch_t *b, worker_t *wk)
{
  wk->hybrid_done = 1;
  gpuimg_pipeline_t *p = gpuimg_pipeline_create(&b->cli.plan, b->devices[0]);
  if (!p) {
    if (!atomic_exchange(&b->move_failed, 1) && !b->cli.plan.quiet) {
      char msg[1200];
      snprintf(msg, sizeof msg,
               "CUDA device %d is up but a worker cannot use it (%s); it stays "
               "on the CPU backend",
               b->devices[0], gpuimg_error_message());
      say(b, msg);
    }
    gpuimg_error_clear();
    return;
  }
  gpuimg_pipeline_destroy(wk->pipe);
  wk->pipe = p;
  wk->device = b->devices[0];
  gpuimg_codec_set_pixel_source(gpuimg_pipeline_pixel_source, wk->pipe);
}

static void *worker_main(void *arg)
{
  worker_t *wk = arg;
  batch_t *b = wk->b;

  if (!(wk->run = calloc(1, sizeof *wk->run))) {
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, "", "out of memory");
  } else {
    wk->pipe = gpuimg_pipeline_create(&b->cli.plan, wk->device);
  }
  /* On CUDA, JPEGs decode straight into the runner's pinned staging buffer. */
  if (wk->pipe && wk->device >= 0)
    gpuimg_codec_set_pixel_source(gpuimg_pipeline_pixel_source, wk->pipe);
  if (!wk->pipe) {
    wk->init_code = gpuimg_error_code();
    snprintf(wk->init_error, sizeof wk->init_error, "%s", gpuimg_error_message());
  }
  pthread_mutex_lock(&b->mu);
  b->ready++;
  pthread_cond_broadcast(&b->cv);
  while (!b->go && !b->stop)
    pthread_cond_wait(&b->cv, &b->mu);
  int go = b->go && !b->stop;
  pthread_mutex_unlock(&b->mu);

  for (int k; go && (k = atomic_fetch_add(&b->next, 1)) < b->ntodo;) {
    if (b->hybrid && !wk->hybrid_done && atomic_load(&b->dev_state) == 1)
      move_to_device(b, wk);
    process(b, wk, b->todo[k]);
  }

  gpuimg_codec_set_pixel_source(NULL, NULL);
  gpuimg_pipeline_destroy(wk->pipe);
  wk->pipe = NULL;
  gpuimg_codec_thread_end();
  if (wk->run)
    gpuimg_run_free(wk->run);
  free(wk->run);
  wk->run = NULL;
  pthread_mutex_lock(&b->mu);
  b->running--;
  pthread_cond_broadcast(&b->cv);
  pthread_mutex_unlock(&b->mu);
  return NULL;
}

/* ---- setup ---- */

/* --devices: "all" or a list like "0,1"; count devices exist. 0, or -1 (exit 2). */
static int parse_devices(batch_t *b, const char *spec, int count)
{
  if (!spec) {
    b->devices[0] = 0;
    b->ndevices = 1;
  } else if (strcmp(spec, "all") == 0) {
    for (int i = 0; i < count && i < MAX_DEVICES; i++)
      b->devices[i] = i;
    b->ndevices = count < MAX_DEVICES ? count : MAX_DEVICES;
  } else {
    const char *p = spec;
    b->ndevices = 0;
    for (;;) {
      char *end;
      errno = 0;
      long v = strtol(p, &end, 10);
      if (errno || end == p || *p == '-' || *p == '+' || v < 0 || v >= 1000000 ||
          (*end && *end != ',') || b->ndevices == MAX_DEVICES) {
        gpuimg_error_set(GPUIMG_EXIT_USAGE, "--devices",
                         "invalid value '%s' (expected all, or device numbers like 0,1)", spec);
        return -1;
      }
      b->devices[b->ndevices++] = (int)v;
      if (!*end)
        break;
      p = end + 1;
    }
  }
  for (int i = 0; count >= 0 && i < b->ndevices; i++)
    if (b->devices[i] >= count) {
      gpuimg_error_set(GPUIMG_EXIT_USAGE, "--devices", "no CUDA device %d (%d present)",
                       b->devices[i], count);
      return -1;
    }
  return 0;
}

/* Loads each masked step's mask once for the whole batch: first channel only. */
static int load_masks(batch_t *b)
{
  for (int i = 0; i < b->cli.plan.nsteps; i++) {
    const char *path = gpuimg_ops_common(b->cli.plan.steps[i].params)->mask_path;
    if (!b->cli.plan.steps[i].op->needs_mask || !path)
      continue;
    gpuimg_buf_t buf;
    gpuimg_image_t m;
    if (gpuimg_file_read(path, &buf) < 0)
      return -1;
    const gpuimg_codec_t *decoder = gpuimg_codec_decoder(b->cli.plan.codec, buf.data, buf.size);
    int rc = decoder->decode(buf.data, buf.size, strcmp(path, "-") ? path : "<stdin>",
                             b->cli.plan.max_pixels, &m);
    gpuimg_buf_free(&buf);
    if (rc < 0)
      return -1;
    size_t n = (size_t)m.width * (size_t)m.height;
    for (size_t k = 1; k < n && m.channels > 1; k++)
      m.data[k] = m.data[k * (size_t)m.channels];
    m.channels = 1;
    b->masks[i] = m;
  }
  return 0;
}

/* DIR exists as a directory we can write into, or is created (one level: its parent must
 * exist, as with mkdir without -p). */
static int prepare_outdir(const char *dir)
{
  struct stat st;
  if (stat(dir, &st) < 0) {
    if (errno != ENOENT || (mkdir(dir, 0777) < 0 && errno != EEXIST)) {
      gpuimg_error_set(GPUIMG_EXIT_OUTPUT, dir, "cannot create directory: %s", strerror(errno));
      return -1;
    }
  } else if (!S_ISDIR(st.st_mode)) {
    gpuimg_error_set(GPUIMG_EXIT_OUTPUT, dir, "not a directory");
    return -1;
  }
  if (access(dir, W_OK | X_OK) < 0) {
    gpuimg_error_set(GPUIMG_EXIT_OUTPUT, dir, "cannot write into the directory: %s",
                     strerror(errno));
    return -1;
  }
  return 0;
}

/* The stage keys: read, decode, [upload-mask, upload,] one per step, [download,] encode,
 * write. A step is named by its operation, or "<op>#<step>" when the operation occurs twice. */
static void make_keys(batch_t *b)
{
  int has_mask = 0;
  b->nkeys = 0;
  snprintf(b->keys[b->nkeys++], sizeof b->keys[0], "read");
  snprintf(b->keys[b->nkeys++], sizeof b->keys[0], "decode");
  for (int i = 0; i < b->cli.plan.nsteps; i++)
    has_mask |= b->masks[i].data != NULL;
  if (b->use_cuda && has_mask)
    snprintf(b->keys[b->nkeys++], sizeof b->keys[0], "upload-mask");
  if (b->use_cuda)
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
  if (b->use_cuda)
    snprintf(b->keys[b->nkeys++], sizeof b->keys[0], "download");
  snprintf(b->keys[b->nkeys++], sizeof b->keys[0], "encode");
  snprintf(b->keys[b->nkeys++], sizeof b->keys[0], "write");
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

/* Over the batch's timeline: busy = time with device work in flight on some worker (the
 * pipeline intervals of the CUDA backend: upload, kernels, download), hidden = the part of
 * it during which another worker was doing host work (read, decode, encode, write). */
static void device_overlap(const batch_t *b, double *busy, double *hidden)
{
  edge_t *e = malloc((size_t)b->nitems * IV_COUNT * 2 * sizeof *e);
  size_t n = 0;
  *busy = *hidden = 0;
  if (!e || !b->use_cuda) {
    free(e);
    return;
  }
  for (int i = 0; i < b->nitems; i++)
    for (int k = 0; k < IV_COUNT; k++) {
      const double *iv = b->items[i].iv[k];
      if (iv[0] < 0 || iv[1] < iv[0])
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

static char *summary_json(batch_t *b, worker_t *workers, int nworkers, int converted, int failed,
                          int skipped, double wall_ms, int status)
{
  cJSON *root = cJSON_CreateObject(), *a, *t;
  char *text = NULL;
  if (!root)
    return NULL;
  cJSON_AddBoolToObject(root, "summary", 1);
  cJSON_AddNumberToObject(root, "schema_version", 1);
  add_string(root, "tool", "gpuimg");
  add_string(root, "version", GPUIMG_VERSION);
  cJSON_AddNumberToObject(root, "images", b->nitems);
  cJSON_AddNumberToObject(root, "converted", converted);
  cJSON_AddNumberToObject(root, "failed", failed);
  cJSON_AddNumberToObject(root, "skipped", skipped);
  cJSON_AddNumberToObject(root, "wall_ms", rnd4(wall_ms));
  cJSON_AddNumberToObject(root, "images_per_s",
                          rnd4(wall_ms > 0 ? converted / (wall_ms / 1000.0) : 0));
  cJSON_AddNumberToObject(root, "jobs", nworkers);
  add_string(root, "backend", b->use_cuda ? "cuda" : "cpu");
  if ((a = cJSON_AddArrayToObject(root, "devices")))
    for (int i = 0; b->use_cuda && i < b->ndevices; i++)
      cJSON_AddItemToArray(a, cJSON_CreateNumber(b->devices[i]));
  if (b->cli.shard_n) {
    char shard[32];
    snprintf(shard, sizeof shard, "%d/%d", b->cli.shard_k, b->cli.shard_n);
    add_string(root, "shard", shard);
  } else {
    cJSON_AddNullToObject(root, "shard");
  }
  if ((t = cJSON_AddObjectToObject(root, "stage_totals_ms")))
    for (int k = 0; k < b->nkeys; k++) {
      /* A hybrid batch that never reached the device has no CUDA stages. */
      if (b->hybrid && !b->use_cuda &&
          (!strcmp(b->keys[k], "upload-mask") || !strcmp(b->keys[k], "upload") ||
           !strcmp(b->keys[k], "download")))
        continue;
      double sum = 0;
      for (int w = 0; w < nworkers; w++)
        sum += workers[w].totals[k];
      cJSON_AddNumberToObject(t, b->keys[k], rnd4(sum));
    }
  double busy, hidden;
  device_overlap(b, &busy, &hidden);
  cJSON_AddNumberToObject(root, "device_busy_ms", rnd4(busy));
  cJSON_AddNumberToObject(root, "device_hidden_ms", rnd4(hidden));
  cJSON_AddNumberToObject(root, "device_hidden_pct", rnd4(busy > 0 ? 100.0 * hidden / busy : 0));
  /* --codec nvjpeg: calls to the shared hardware JPEG decoder and the images they took */
  cJSON_AddNumberToObject(root, "jpeg_batches", (double)b->jpeg_batches);
  cJSON_AddNumberToObject(root, "jpeg_batched_images", (double)b->jpeg_batch_images);
  cJSON_AddNumberToObject(root, "jpeg_batch_ms", rnd4(b->jpeg_batch_ms));
  /* where a batch's fixed costs go: nvJPEG's threads set up and torn down, workers ready */
  cJSON_AddNumberToObject(root, "jpeg_setup_ms", rnd4(b->jpeg_setup_ms));
  cJSON_AddNumberToObject(root, "jpeg_teardown_ms", rnd4(b->jpeg_teardown_ms));
  cJSON_AddNumberToObject(root, "workers_ready_ms", rnd4(b->go_ms));
  /* the hybrid start: when the device was up for the workers to move to it */
  if (b->hybrid && b->dev_ready_ms >= 0)
    cJSON_AddNumberToObject(root, "device_ready_ms", rnd4(b->dev_ready_ms));
  else
    cJSON_AddNullToObject(root, "device_ready_ms");
  cJSON_AddNumberToObject(root, "exit_status", status);
  text = cJSON_PrintUnformatted(root);
  cJSON_Delete(root);
  return text;
}

/* ---- main ---- */

/* --codec nvjpeg on CUDA: device-resident JPEG, with one nvJPEG thread per device doing
 * every worker's nvJPEG work, decoding in batches where the GPU has a hardware JPEG decoder
 * (GPUIMG_JPEG_BATCH=0: every image alone, for comparison). Worker threads then wait on the device
 * instead of spinning (GPUIMG_CUDA_SYNC=spin keeps CUDA's default), so that a waiting worker leaves
 * its core to the codecs of the others. */
static void start_device_jpeg(batch_t *b)
{
#ifdef GPUIMG_HAVE_CUDA
  const char *sync = getenv("GPUIMG_CUDA_SYNC");
  int blocking = !(sync && strcmp(sync, "spin") == 0);
  for (int d = 0; b->use_cuda && !b->hybrid && d < b->ndevices; d++)
    if (gpuimg_cuda_set_blocking_sync(b->devices[d], blocking) < 0)
      gpuimg_error_clear(); /* the default way of waiting is no failure */
#endif
  b->device_jpeg = b->use_cuda && b->cli.plan.codec == GPUIMG_CODEC_NVJPEG && gpuimg_codec_have_nvjpeg();
  const char *share = getenv("GPUIMG_JPEG_BATCH");
  if (!b->device_jpeg)
    return;
  for (int d = 0; d < b->ndevices; d++)
    if (!(b->jpeg[d] =
              gpuimg_jpeg_batch_create(b->devices[d], !(share && strcmp(share, "0") == 0))))
      gpuimg_error_clear(); /* no thread: each worker then makes its own nvJPEG handle */
}

/* Waits for the hybrid start's thread (safe to call twice); the batch then counts as a CUDA
 * one (backend, devices, the CUDA stages' totals) when an image was converted there. */
static void stop_starter(batch_t *b)
{
  if (b->starter_started)
    pthread_join(b->starter, NULL);
  b->starter_started = 0;
  if (!b->hybrid)
    return;
  b->use_cuda = 0;
  for (int i = 0; i < b->nitems; i++)
    b->use_cuda |= b->items[i].on_cuda && b->items[i].status == ITEM_OK;
}

static void stop_device_jpeg(batch_t *b)
{
  for (int d = 0; d < b->ndevices; d++) {
    long batches = 0, images = 0;
    double ms = 0, setup = 0;
    if (!b->jpeg[d])
      continue;
    gpuimg_jpeg_batch_counts(b->jpeg[d], &batches, &images, &ms, &setup);
    if (setup > b->jpeg_setup_ms)
      b->jpeg_setup_ms = setup;
    b->jpeg_batch_ms += ms;
    b->jpeg_batches += batches;
    b->jpeg_batch_images += images;
    double t0 = gpuimg_now_ms();
    gpuimg_jpeg_batch_destroy(b->jpeg[d]);
    b->jpeg_teardown_ms += gpuimg_now_ms() - t0;
    b->jpeg[d] = NULL;
  }
}

static int setup_error(void)
{
  int code = gpuimg_error_code();
  fprintf(stderr, "gpuimg: %s\n", gpuimg_error_message());
  if (code == GPUIMG_EXIT_USAGE)
    gpuimg_cli_usage(stderr);
  return code;
}

int gpuimg_batch_main(const gpuimg_cli_t *cli)
{
  batch_t *b = xcalloc(1, sizeof *b);
  const char **inputs = NULL;
  char **owned = NULL;
  worker_t *workers = NULL;
  int ninputs = 0, nowned = 0, cap, nworkers = 0, status = GPUIMG_EXIT_OK;
  int locks = 0;

  if (!b)
    return setup_error();
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
  b->t_start = gpuimg_now_ms();
  b->cli = *cli;
  b->outdir = cli->outdir;

  /* Options that make no sense for many files. */
  if (cli->plan.repeat != 1 || cli->plan.warmup != 0) {
    gpuimg_error_set(GPUIMG_EXIT_USAGE, cli->plan.repeat != 1 ? "--repeat" : "--warmup",
                     "not available with -o DIR");
    status = setup_error();
    goto out;
  }
  for (int i = 0; i < cli->ninputs; i++)
    if (strcmp(cli->inputs[i], "-") == 0) {
      gpuimg_error_set(GPUIMG_EXIT_USAGE, "-",
                       "standard input cannot be a batch input (--from - reads a list of "
                       "paths)");
      status = setup_error();
      goto out;
    }
  for (int i = 0; i < cli->plan.nsteps; i++) {
    const char *m = gpuimg_ops_common(cli->plan.steps[i].params)->mask_path;
    if (m && strcmp(m, "-") == 0 && cli->from && strcmp(cli->from, "-") == 0) {
      gpuimg_error_set(GPUIMG_EXIT_USAGE, GPUIMG_MASK_OPTION,
                       "the mask and --from cannot both be stdin");
      status = setup_error();
      goto out;
    }
  }
  if (cli->report && strcmp(cli->report, "-") && cli->from && strcmp(cli->from, "-") &&
      strcmp(cli->report, cli->from) == 0) {
    gpuimg_error_set(GPUIMG_EXIT_USAGE, cli->report, "the report and --from are the same file");
    status = setup_error();
    goto out;
  }

  /* The backend: CUDA when usable (and asked for or auto), else the CPU. */
  int count = 0;
  char reason[256] = "";
#ifdef GPUIMG_HAVE_CUDA
  /* auto on the default device with host codecs and the default block: hybrid, the device
   * found (or not) by the starter thread (GPUIMG_HYBRID=0: wait for it, as before). */
  const char *hybrid = getenv("GPUIMG_HYBRID");
  b->hybrid = cli->plan.backend == GPUIMG_BACKEND_AUTO && !cli->devices &&
              cli->plan.codec != GPUIMG_CODEC_NVJPEG && !cli->plan.block_w && !cli->plan.block_h &&
              !(hybrid && strcmp(hybrid, "0") == 0);
  /* --naive and --tiled choose CUDA kernels: such a batch is about them, all on CUDA. */
  for (int i = 0; i < cli->plan.nsteps; i++)
    b->hybrid &= gpuimg_ops_common(cli->plan.steps[i].params)->variant == GPUIMG_VARIANT_FAST;
  b->dev_ready_ms = -1;
  if (b->hybrid)
    count = 1; /* device 0, if the starter finds it usable */
  else if (cli->plan.backend != GPUIMG_BACKEND_CPU)
    count = gpuimg_cuda_probe(reason, sizeof reason);
#else
  snprintf(reason, sizeof reason, "this gpuimg was built without CUDA");
#endif
  b->use_cuda = count > 0;
  if (!b->use_cuda && cli->plan.backend == GPUIMG_BACKEND_CUDA) {
#ifdef GPUIMG_HAVE_CUDA
    gpuimg_error_set(GPUIMG_EXIT_DEVICE, "", "no usable CUDA device: %s", reason);
#else
    gpuimg_error_set(GPUIMG_EXIT_DEVICE, "", "%s", reason);
#endif
    status = setup_error();
    goto out;
  }
  if (parse_devices(b, cli->devices, b->use_cuda ? count : -1) < 0) {
    status = setup_error();
    goto out;
  }
  /* nvJPEG sets up while the inputs are read and named. */
  start_device_jpeg(b);

  /* The inputs: the arguments, then the list's lines. */
  cap = cli->ninputs + 64;
  if (!(inputs = xcalloc((size_t)cap, sizeof *inputs)) ||
      !(owned = xcalloc((size_t)cap, sizeof *owned))) {
    status = setup_error();
    goto out;
  }
  for (int i = 0; i < cli->ninputs; i++)
    inputs[ninputs++] = cli->inputs[i];
  if (cli->from && read_list(cli->from, &inputs, &ninputs, &cap, &owned, &nowned) < 0) {
    status = setup_error();
    goto out;
  }
  if (load_masks(b) < 0 || prepare_outdir(cli->outdir) < 0) {
    status = setup_error();
    goto out;
  }
  pthread_mutex_init(&b->mu, NULL);
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&b->cv, &ca);
  pthread_condattr_destroy(&ca);
  pthread_mutex_init(&b->err_mu, NULL);
  pthread_mutex_init(&b->ids_mu, NULL);
  pthread_mutex_init(&b->report_mu, NULL);
  locks = 1;
  b->progress = !cli->plan.quiet && isatty(STDERR_FILENO);
#ifdef GPUIMG_HAVE_CUDA
  if (!b->use_cuda && cli->plan.backend == GPUIMG_BACKEND_AUTO && !cli->plan.quiet) {
    char msg[512];
    snprintf(msg, sizeof msg, "no usable CUDA device (%s); using the CPU backend", reason);
    say(b, msg);
  }
#endif

  if (!(b->items = xcalloc((size_t)ninputs, sizeof *b->items)) ||
      !(b->todo = xcalloc((size_t)ninputs, sizeof *b->todo))) {
    status = setup_error();
    goto out;
  }
  b->nitems = ninputs;
  for (int i = 0; i < ninputs; i++) {
    item_t *it = &b->items[i];
    it->input = inputs[i];
    it->worker = -1;
    for (int k = 0; k < IV_COUNT; k++)
      it->iv[k][0] = it->iv[k][1] = -1;
    it->selected = !cli->shard_n ||
                   fnv1a64(it->input) % (uint64_t)cli->shard_n == (uint64_t)(cli->shard_k - 1);
    if (!it->selected)
      it->status = ITEM_SKIPPED;
    b->nselected += it->selected;
    if (name_output(b, it) < 0) {
      status = setup_error();
      goto out;
    }
    const char *slash = strrchr(it->input, '/');
    const char *base = slash ? slash + 1 : it->input;
    if (!base[0] || !strcmp(base, ".") || !strcmp(base, "..")) {
      it->bad_name = 1;
      if (it->selected) {
        char msg[4096];
        snprintf(msg, sizeof msg, "%s: not a file name (no output name can be made from it)",
                 it->input);
        fail_item(b, it, GPUIMG_EXIT_INPUT, msg);
      }
    }
  }
  if (check_names(b) < 0) {
    status = setup_error();
    goto out;
  }
  make_keys(b);

  /* The report: opened now, so that a bad destination fails before any work. */
  if (cli->report) {
    struct stat st;
    if (strcmp(cli->report, "-") != 0) {
      const char *slash = strrchr(cli->report, '/');
      const char *base = slash ? slash + 1 : cli->report;
      char *rdir = slash ? strndup(cli->report, (size_t)(slash - cli->report) + 1) : NULL;
      char *c1 = realpath(rdir ? rdir : ".", NULL), *c2 = realpath(cli->outdir, NULL);
      int clash = 0;
      for (int i = 0; c1 && c2 && !strcmp(c1, c2) && i < b->nitems && !clash; i++)
        clash = strcmp(b->items[i].name, base) == 0;
      free(rdir);
      free(c1);
      free(c2);
      if (clash) {
        gpuimg_error_set(GPUIMG_EXIT_USAGE, cli->report,
                         "the report and an output image are the same file");
        status = setup_error();
        goto out;
      }
      if (stat(cli->report, &st) == 0 && is_input(b, &st)) {
        gpuimg_error_set(GPUIMG_EXIT_OUTPUT, cli->report, "output is the same file as an input");
        status = setup_error();
        goto out;
      }
    }
    if (gpuimg_output_open(&b->report, cli->report, 0) < 0) {
      status = setup_error();
      goto out;
    }
    b->have_report = 1;
  }
  gpuimg_output_install_signal_cleanup();

  /* The work: the selected items that have not failed already. */
  for (int i = 0; i < b->nitems; i++) {
    if (b->items[i].status == ITEM_TODO)
      b->todo[b->ntodo++] = i;
    else if (b->items[i].selected)
      atomic_fetch_add(&b->ndone, 1);
  }
  nworkers = cli->jobs;
  if (nworkers <= 0) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    nworkers = n < 1 ? 1 : n > 1024 ? 1024 : (int)n;
  }
  if (nworkers > b->ntodo)
    nworkers = b->ntodo;
  /* Items finished before any work: their report lines can go now. */
  for (int i = 0; i < b->nitems; i++)
    if (b->items[i].status != ITEM_TODO) {
      if (b->have_report && b->items[i].status == ITEM_FAILED)
        b->items[i].json = item_json(b, NULL, &b->items[i], i, NULL);
      if (b->items[i].status == ITEM_FAILED && b->have_report && !b->items[i].json)
        b->report_err = -1;
      b->items[i].done = 1;
    }
  report_done(b, -1);

  if (nworkers > 0 && !(workers = xcalloc((size_t)nworkers, sizeof *workers))) {
    status = setup_error();
    nworkers = 0;
    goto finish;
  }
#ifdef GPUIMG_HAVE_CUDA
  /* Started last, when nothing can stop the batch before the workers run. */
  if (b->hybrid && nworkers > 0) {
    if (gpuimg_thread_start(&b->starter, device_starter, b) == 0)
      b->starter_started = 1;
    else
      device_starter(b); /* no thread: bring the device up before the workers, as before */
  }
#endif
  b->running = 0;
  /* Workers start with the cleanup signals blocked (gpuimg_thread_start). */
  for (int w = 0; w < nworkers; w++) {
    worker_t *wk = &workers[w];
    wk->b = b;
    wk->index = w;
    wk->device = b->use_cuda && !b->hybrid ? b->devices[w % b->ndevices] : -1;
    wk->jpeg = b->use_cuda ? b->jpeg[w % b->ndevices] : NULL;
    pthread_mutex_lock(&b->mu);
    b->running++;
    pthread_mutex_unlock(&b->mu);
    int err = gpuimg_thread_start(&wk->thread, worker_main, wk);
    if (err) {
      pthread_mutex_lock(&b->mu);
      b->running--;
      b->ready++; /* so the wait below does not count it */
      pthread_mutex_unlock(&b->mu);
      wk->init_code = GPUIMG_EXIT_FAILURE;
      snprintf(wk->init_error, sizeof wk->init_error, "cannot start a worker thread: %s",
               strerror(err));
      continue;
    }
    wk->started = 1;
  }
  /* Every worker ready (its CUDA context made): go, or stop at the first that failed. */
  pthread_mutex_lock(&b->mu);
  while (b->ready < nworkers)
    pthread_cond_wait(&b->cv, &b->mu);
  int bad = -1;
  for (int w = 0; w < nworkers && bad < 0; w++)
    if (workers[w].init_code)
      bad = w;
  if (bad >= 0)
    b->stop = 1;
  else
    b->go = 1;
  b->go_ms = gpuimg_now_ms() - b->t_start;
  pthread_cond_broadcast(&b->cv);
  if (b->progress && !b->stop) {
    while (b->running > 0) {
      struct timespec ts;
      clock_gettime(CLOCK_MONOTONIC, &ts);
      ts.tv_nsec += (long)(PROGRESS_MS * 1e6);
      if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
      }
      pthread_cond_timedwait(&b->cv, &b->mu, &ts);
      if (b->running > 0) {
        pthread_mutex_unlock(&b->mu);
        progress_show(b);
        pthread_mutex_lock(&b->mu);
      }
    }
  }
  pthread_mutex_unlock(&b->mu);
  for (int w = 0; w < nworkers; w++)
    if (workers[w].started)
      pthread_join(workers[w].thread, NULL);
  stop_starter(b);
  stop_device_jpeg(b);
  if (b->progress) {
    pthread_mutex_lock(&b->err_mu);
    progress_clear(b);
    pthread_mutex_unlock(&b->err_mu);
  }
  if (bad >= 0) {
    fprintf(stderr, "gpuimg: %s\n", workers[bad].init_error);
    status = workers[bad].init_code;
    if (status == GPUIMG_EXIT_USAGE)
      gpuimg_cli_usage(stderr);
    if (b->have_report)
      gpuimg_output_abort(&b->report);
    b->have_report = 0;
    goto out;
  }

finish:
  stop_starter(b);
  double wall_ms = gpuimg_now_ms() - b->t_start;
  int converted = 0, failed = 0, skipped = 0;
  for (int i = 0; i < b->nitems; i++) {
    const item_t *it = &b->items[i];
    if (it->status == ITEM_OK)
      converted++;
    else if (it->status == ITEM_SKIPPED)
      skipped++;
    else if (it->status == ITEM_FAILED) {
      failed++;
      if (it->code > status)
        status = it->code;
    }
  }
  if (b->have_report) {
    report_done(b, -1);
    char *sum = summary_json(b, workers, nworkers, converted, failed, skipped, wall_ms, status);
    if (b->report_err || !sum) {
      int err = b->report_err;
      if (err > 0)
        gpuimg_error_set(GPUIMG_EXIT_OUTPUT, strcmp(cli->report, "-") ? cli->report : "<stdout>",
                         "write failed: %s", strerror(err));
      else
        gpuimg_error_set(GPUIMG_EXIT_FAILURE, cli->report, "out of memory");
      gpuimg_output_abort(&b->report);
      fprintf(stderr, "gpuimg: %s\n", gpuimg_error_message());
      if (gpuimg_error_code() > status)
        status = gpuimg_error_code();
    } else {
      size_t n = strlen(sum);
      sum[n] = '\n';
      if (gpuimg_output_commit(&b->report, sum, n + 1) < 0) {
        fprintf(stderr, "gpuimg: %s\n", gpuimg_error_message());
        if (gpuimg_error_code() > status)
          status = gpuimg_error_code();
      }
    }
    free(sum);
    b->have_report = 0;
  }
  if (!cli->plan.quiet)
    fprintf(stderr,
            "gpuimg: %d converted, %d failed, %d skipped (shard) in %.2f s (%.1f images/s)\n",
            converted, failed, skipped, wall_ms / 1000.0,
            wall_ms > 0 ? converted / (wall_ms / 1000.0) : 0.0);

out:
  stop_starter(b);
  stop_device_jpeg(b); /* when an error came before the workers */
  if (b->have_report)
    gpuimg_output_abort(&b->report);
  for (int i = 0; i < nowned; i++)
    free(owned[i]);
  free(owned);
  free(inputs);
  for (int i = 0; i < b->nitems; i++) {
    free(b->items[i].output);
    free(b->items[i].error);
    free(b->items[i].json);
  }
  for (int i = 0; i < GPUIMG_MAX_STEPS; i++)
    gpuimg_image_free(&b->masks[i]);
  free(b->items);
  free(b->todo);
  free(b->ids);
  free(workers);
  if (locks) {
    pthread_mutex_destroy(&b->mu);
    pthread_cond_destroy(&b->cv);
    pthread_mutex_destroy(&b->err_mu);
    pthread_mutex_destroy(&b->ids_mu);
    pthread_mutex_destroy(&b->report_mu);
  }
  free(b);
  return status;
}
