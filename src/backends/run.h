/* run.h: the plan of a run (steps and settings) and one run of it with its timings. */
#ifndef GPUIMG_RUN_H
#define GPUIMG_RUN_H

#include <stdio.h>

#include "codec.h"
#include "files.h"
#include "ops.h"

#define GPUIMG_MAX_STEPS 32
#define GPUIMG_DEFAULT_MAX_PIXELS ((uint64_t)1 << 28)
#define GPUIMG_DEFAULT_QUALITY 90
#define GPUIMG_SAMPLE_INPUT "sample:"

/* One step: an operation and its parameters, the operation's own struct, which only the
 * operation's functions read (gpuimg_ops_init() sets its defaults). */
typedef struct {
  const gpuimg_op_t *op;
  _Alignas(16) unsigned char params[GPUIMG_PARAMS_SIZE];
} gpuimg_step_t;

/* What the engine is asked to do to every image: the steps and how to run them. The command
 * line (src/cli) builds it; it never sees the command line itself. */
typedef struct {
  gpuimg_step_t steps[GPUIMG_MAX_STEPS];
  int nsteps;
  gpuimg_backend_t backend;
  int repeat;
  int warmup; /* unrecorded runs before the repeat timed ones */
  int quality;
  int png_level;               /* PNG compression level, 0..9 */
  gpuimg_codec_choice_t codec; /* the library per format */
  int quiet;                   /* no notices on stderr */
  int measure; /* one-image runs: measure the copy bandwidth and divergence (for a report) */
  int block_w, block_h; /* 0: kernel defaults */
  uint64_t max_pixels;
} gpuimg_plan_t;

/* One timed stage of the report. */
#define GPUIMG_MAX_STAGES (GPUIMG_MAX_STEPS * 2 + 8)
typedef struct {
  char name[32];     /* read, decode, upload, <op>, download, encode, write, mask */
  const char *codec; /* decode/encode stages: the codec's name (static), else NULL */
  int step;          /* pipeline step index, -1 for I/O stages */
  int device;        /* 1: CUDA events, 0: host monotonic clock */
  double *ms;        /* one sample per repetition (malloc'd) */
  int nms;
  uint64_t bytes; /* bytes moved (read + written), 0 if not meaningful */
  int pinned;     /* upload/download: host buffer pinned; -1 otherwise */
  int has_launch;
  gpuimg_launch_t launch;
  int has_prediction; /* host-predicted divergence for launch's block shape */
  uint64_t predicted_warps, predicted_divergent;
} gpuimg_stage_t;

typedef struct {
  const char *backend; /* "cpu" or "cuda" */
  char device[256];    /* "none" on the CPU */
  int cc_major, cc_minor;
  int driver_version, runtime_version; /* CUDA, e.g. 13000; 0 on the CPU */
  double copy_gbps; /* device-to-device copy bandwidth measured in this run; 0 if not */
  const char *input_name;
  uint64_t input_bytes;
  int in_w, in_h, in_c;
  const char *output_name;
  gpuimg_format_t output_format; /* with output_name */
  uint64_t output_bytes;
  int out_w, out_h, out_c;
  gpuimg_stage_t stages[GPUIMG_MAX_STAGES];
  int nstages;
  double total_ms;
} gpuimg_run_t;

/* Adds a stage; returns it, or NULL with the error set. */
gpuimg_stage_t *gpuimg_run_stage(gpuimg_run_t *run, const char *name, int step, int device,
                                 int nms);
void gpuimg_run_free(gpuimg_run_t *run);

/* Runs plan's pipeline on src (masks[i] for the steps whose op needs a mask), repeat times.
 * dst receives the result (caller frees). Fills the run's stages. */
int gpuimg_pipeline_run(const gpuimg_plan_t *plan, const gpuimg_image_t *src,
                        const gpuimg_image_t *masks, gpuimg_image_t *dst, gpuimg_run_t *run);

/* A malloc'd copy of s that is valid UTF-8 (each invalid byte becomes U+FFFD), for JSON. */
char *gpuimg_utf8_clean(const char *s);

/* Serialises the report to JSON text (malloc'd, caller frees). NULL on failure. */
char *gpuimg_report_json(const gpuimg_plan_t *plan, const gpuimg_run_t *run);

/* --explain: one plain line per kernel of the run on f. */
void gpuimg_explain(FILE *f, const gpuimg_plan_t *plan, const gpuimg_run_t *run);

/* The built-in sample (assets/sample.png and its mask), compiled into the binary. */
extern const unsigned char gpuimg_sample_png[];
extern const size_t gpuimg_sample_png_size;
extern const unsigned char gpuimg_sample_mask_png[];
extern const size_t gpuimg_sample_mask_png_size;

#endif
