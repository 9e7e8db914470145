/* cli.h: the gpuimg command: parsing its command line and its subcommands' entry points. */
#ifndef GPUIMG_CLI_H
#define GPUIMG_CLI_H

#include "flow.h"
#include "plan.h"
#include "report.h"
#include "sample.h"

/* Everything the command line says; strings point into argv. */
typedef struct {
  gpuimg_plan_t plan; /* what the engine is given */
  const char *input;  /* NULL: the built-in sample */
  const char *output; /* NULL: no image written */
  gpuimg_format_t format;
  const char *report; /* NULL: no report; "-": stdout */
  int explain;
  const char *explain_image; /* --explain-image FILE: NULL when not given */
  int device;                /* --device: the index of the GPU in gpuimg_gpus (plan.model_gpu) */
  int help, version;
  int completion; /* --completion bash: print the completion script */
  /* Batch mode (-o DIR): every positional argument is an input. */
  const char *outdir;
  const char **inputs; /* the positional arguments (malloc'd array into argv) */
  int ninputs;
  const char *from;             /* --from LIST, "-" = stdin */
  gpuimg_format_t batch_format; /* --format, NONE = each input's own */
  int force;
  int recursive;        /* --recursive: INPUT directories' subdirectories too */
  int jobs;             /* 0: the usable cores (affinity, cgroup quota) */
  const char *devices;  /* NULL: device 0; "all"; or "0,1,..." */
  int shard_k, shard_n; /* 0/0: no sharding */
  int shard_mode;       /* gpuimg_shard_mode_t: K/N as given, or from Slurm at batch start */
  int skip_existing;    /* --skip-existing: outputs already there are left alone */
} gpuimg_cli_t;

/* --shard K/N, slurm (the array variables, required) or auto (them when present). */
typedef enum { GPUIMG_SHARD_GIVEN, GPUIMG_SHARD_SLURM, GPUIMG_SHARD_AUTO } gpuimg_shard_mode_t;

/* The most shards --shard takes. */
#define GPUIMG_MAX_SHARDS 1000000

/* Parses argv; -1 with the error set: a usage error (exit 2), or exit 4 for an OUTPUT that
 * is a directory. */
int gpuimg_cli_parse(int argc, char **argv, gpuimg_cli_t *cli);
void gpuimg_cli_help(FILE *f);

/* The main command's global and batch-mode options (cli.c), after the operations' own. */
extern const gpuimg_option_t gpuimg_cli_options[];
extern const gpuimg_option_t gpuimg_cli_batch_options[];
/* Every table of options besides the operations': the plan's, the command's and batch
 * mode's, NULL-terminated. */
extern const gpuimg_option_t *const gpuimg_cli_tables[];

/* Prints a bash completion script made from the registry and the option tables. */
void gpuimg_cli_completion(FILE *f);
void gpuimg_cli_free(gpuimg_cli_t *cli);

/* Batch mode: converts every input into cli->outdir; returns the exit status. */
int gpuimg_batch_main(const gpuimg_cli_t *cli);
void gpuimg_cli_usage(FILE *f);

/* Subcommands with their own command lines (argv[0] is the subcommand's name). */
int gpuimg_compare_main(int argc, char **argv);
int gpuimg_info_main(int argc, char **argv);
int gpuimg_summary_main(int argc, char **argv);

#endif
