/* run.h: a parsed command line, and one run of a pipeline with its timings. */
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

typedef enum { GPUIMG_BACKEND_AUTO, GPUIMG_BACKEND_CPU, GPUIMG_BACKEND_CUDA } gpuimg_backend_t;

typedef struct {
  const gpuimg_op_t *op;
  gpuimg_params_t params;
} gpuimg_step_t;

/* Everything the command line says; strings point into argv. */
typedef struct {
  gpuimg_step_t steps[GPUIMG_MAX_STEPS];
  int nsteps;
  const char *input;  /* NULL: the built-in sample */
  const char *output; /* NULL: no image written */
  gpuimg_format_t format;
  const char *report; /* NULL: no report; "-": stdout */
  gpuimg_backend_t backend;
  int repeat;
  int warmup; /* unrecorded runs before the repeat timed ones */
  int quality;
  int png_level;               /* --png-level, 0..9 (libpng encoder) */
  gpuimg_codec_choice_t codec; /* --codec: the library per format */
  int quiet;
  int explain;
  int block_w, block_h; /* 0: kernel defaults */
  uint64_t max_pixels;
  int help, version;
  /* Batch mode (-o DIR): every positional argument is an input. */
  const char *outdir;
  const char **inputs; /* the positional arguments (malloc'd array into argv) */
  int ninputs;
  const char *from;             /* --from LIST, "-" = stdin */
  gpuimg_format_t batch_format; /* --format, NONE = each input's own */
  int force;
  int jobs;             /* 0: online cores */
  const char *devices;  /* NULL: device 0; "all"; or "0,1,..." */
  int shard_k, shard_n; /* 0/0: no sharding */
} gpuimg_cli_t;

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

/* Runs cli's pipeline on src (masks[i] for portrait steps), repeat times.
 * dst receives the result (caller frees). Fills the run's stages. */
int gpuimg_pipeline_run(const gpuimg_cli_t *cli, const gpuimg_image_t *src,
                        const gpuimg_image_t *masks, gpuimg_image_t *dst, gpuimg_run_t *run);

/* A malloc'd copy of s that is valid UTF-8 (each invalid byte becomes U+FFFD), for JSON. */
char *gpuimg_utf8_clean(const char *s);

/* Serialises the report to JSON text (malloc'd, caller frees). NULL on failure. */
char *gpuimg_report_json(const gpuimg_cli_t *cli, const gpuimg_run_t *run);

/* --explain: one plain line per kernel of the run on f. */
void gpuimg_explain(FILE *f, const gpuimg_cli_t *cli, const gpuimg_run_t *run);

/* The built-in sample (assets/sample.png and its mask), compiled into the binary. */
extern const unsigned char gpuimg_sample_png[];
extern const size_t gpuimg_sample_png_size;
extern const unsigned char gpuimg_sample_mask_png[];
extern const size_t gpuimg_sample_mask_png_size;

#endif
