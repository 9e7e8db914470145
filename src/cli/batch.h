/* batch.h: batch mode's own types and the functions its files (batch.c, batch_names.c,
 * batch_report.c) share; private to the command. */
#ifndef GPUIMG_BATCH_H
#define GPUIMG_BATCH_H

#include <pthread.h>
#include <stdatomic.h>
#include <sys/stat.h>

#include <cJSON.h>

#include "cli.h"
#include "scheduler.h"

#define MAX_KEYS (GPUIMG_MAX_STEPS + 8)
#define PROGRESS_MS 100.0

/* SKIPPED: in another shard; EXISTING: its output was there (--skip-existing). */
typedef enum { ITEM_TODO, ITEM_OK, ITEM_FAILED, ITEM_SKIPPED, ITEM_EXISTING } item_status_t;

/* Host-clock intervals of one image: host work before and after the pipeline, and the
 * pipeline itself (device work on CUDA, host work on the CPU). start < 0: none. */
enum {
  IV_LOAD = GPUIMG_FLOW_LOAD,
  IV_PIPE = GPUIMG_FLOW_STEPS,
  IV_STORE = GPUIMG_FLOW_STORE,
  IV_COUNT = GPUIMG_FLOW_INTERVALS
};

typedef struct {
  const char *input; /* as given: argv, or a line of the list */
  char *output;      /* DIR/name (malloc'd) */
  const char *name;  /* its last component, inside output */
  gpuimg_format_t format;
  int selected; /* in this shard */
  int bad_name; /* no file name to derive an output name from ("dir/", ".", "..") */
  item_status_t status;
  int code;      /* exit code of a failure */
  char *error;   /* its message, "<file>: <reason>" (malloc'd) */
  int worker;    /* -1: never reached a worker */
  int done;      /* finished (under report_mu) */
  int on_cuda;   /* its worker ran it on CUDA */
  char *json;    /* its report line, until written (malloc'd) */
  char *results; /* its analysis steps' figures, until printed (malloc'd lines) */
  double iv[IV_COUNT][2];
} item_t;

typedef struct {
  dev_t dev;
  ino_t ino;
} file_id_t;

typedef struct {
  gpuimg_cli_t cli; /* a copy of the command line (--repeat and --warmup are refused) */
  const char *outdir;
  /* The inputs: the arguments (a directory's files in its place), then the list's lines
   * (owned: the strings malloc'd here). rel: 0, or where the name a file found with
   * --recursive has under DIR starts in it. */
  const char **inputs;
  size_t *rel;
  int ninputs, cap;
  char **owned;
  int nowned;
  item_t *items;
  int nitems;
  int *todo; /* indices of the items the workers process, in input order */
  int ntodo;
  atomic_int ndone; /* selected items finished (progress) */
  int nselected;
  /* The backend, devices and workers; the workers' stage totals by worker. */
  gpuimg_sched_t *sched;
  int nworkers, nall;         /* --jobs' workers; with a split's device-path workers */
  unsigned char *paths;       /* a split batch's: each work item's gpuimg_path_t */
  double (*totals)[MAX_KEYS]; /* by worker, nall of them */
  gpuimg_image_t masks[GPUIMG_MAX_STEPS];
  /* Stage names of the report's stage_ms and the summary's totals. */
  char keys[MAX_KEYS][48];
  int nkeys, key_first_op;
  /* stderr lines and the progress line. */
  int locks;
  pthread_mutex_t err_mu;
  int progress, progress_len;
  double t_start, cpu_start_ms; /* the monotonic clock and the process's CPU time at the start */
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
  /* The analysis steps (stats): their totals over the images (malloc'd, results[i] for step i,
   * NULL for another step) and the images added, under report_mu. */
  int analyses, print_results, results_err;
  void *results[GPUIMG_MAX_STEPS];
  int result_images[GPUIMG_MAX_STEPS];
} batch_t;

/* batch.c: calloc that sets the error (exit 1) when out of memory. */
void *batch_calloc(size_t n, size_t size);

/* batch_names.c: inputs, output names, shards. */

/* Collects the inputs: the arguments, then the lines of --from. 0, or -1 with the error set. */
int batch_read_inputs(batch_t *b);
/* Appends an input (owned: a string the batch frees, or NULL; rel: see batch_t); 0, or -1
 * with the error set (owned freed). */
int batch_add_input(batch_t *b, const char *input, char *owned, size_t rel);

/* batch_dirs.c: directories as inputs. */

/* Appends the PNG and JPEG files of dir, by name, and with --recursive those of its
 * subdirectories; says on stderr what it skipped. 0, or -1 with the error set. */
int batch_add_dir(batch_t *b, const char *dir);
/* Creates the directories of it's output name below DIR. 0, or -1 with the error set. */
int batch_make_parents(const item_t *it);
/* DIR exists as a writable directory, or is created. 0, or -1 with the error set. */
int batch_prepare_outdir(const char *dir);
/* Makes an item of every input: its shard, its output name, and the failures decided before
 * any work (no file name, an output name taken twice, an output that is an input). */
int batch_make_items(batch_t *b);
/* Whether st is one of the inputs or masks. */
int batch_is_input(batch_t *b, const struct stat *st);

/* batch_shard.c: --shard slurm and auto. */

/* Sets cli's shard_k and shard_n from the Slurm array variables as its shard_mode asks; 0, or
 * -1 with the error set (exit 2): a variable missing, malformed or inconsistent. */
int batch_shard_resolve(gpuimg_cli_t *cli);

/* batch_report.c: stderr and the report. */

/* Prints "gpuimg: <msg>" as one line, never mixed with another line or the progress. */
void batch_say(batch_t *b, const char *msg);
void batch_progress_show(batch_t *b);
/* Clears the progress line, if any. */
void batch_progress_end(batch_t *b);
/* Marks it failed with msg ("<file>: <reason>") and prints it. */
void batch_fail_item(batch_t *b, item_t *it, int code, const char *msg);
void batch_make_keys(batch_t *b);
/* Adds the milliseconds of every stage of run to totals, by key. */
void batch_add_totals(const batch_t *b, const gpuimg_run_t *run, double *totals);
/* The report line of an item, processed by worker wk (NULL: by none), or NULL. */
char *batch_item_json(batch_t *b, const gpuimg_worker_t *wk, item_t *it, int index,
                      const gpuimg_run_t *run);
/* Marks item i done (i < 0: none) and writes every finished line with none unfinished before. */
void batch_report_done(batch_t *b, int i);
/* Opens --report before any work; 0, or -1 with the error set. */
int batch_report_open(batch_t *b);
/* The items by outcome, for the summary. */
typedef struct {
  int converted, failed, skipped, existing;
} batch_counts_t;

/* Writes the summary line and commits the report; returns the new exit status. */
int batch_report_close(batch_t *b, const batch_counts_t *n, double wall_ms, int status);

/* batch_results.c: the analysis steps' figures. */

/* Makes the totals of the plan's analysis steps; 0, or -1 with the error set. */
int batch_results_open(batch_t *b);
/* Adds the figures of run (item it's, converted) to the totals and keeps its lines for stdout;
 * 0, or -1 with the error set (out of memory). */
int batch_results_add(batch_t *b, item_t *it, const gpuimg_run_t *run);
/* Prints it's lines, if any, as its turn in input order comes (report_mu held). */
void batch_results_emit(batch_t *b, item_t *it);
/* The totals as the summary line's "results" array; 0, or -1 (out of memory). */
int batch_results_summary(const batch_t *b, cJSON *summary);
/* The totals as the last lines on stdout; 0, or -1 with the error set (exit 4). */
int batch_results_finish(batch_t *b);
void batch_results_free(batch_t *b);

#endif
