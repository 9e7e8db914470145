/* batch_shard.c: --shard slurm and --shard auto: this task's K/N from a Slurm job array's
 * SLURM_ARRAY_TASK_ID, _MIN, _MAX and _STEP, for any array spec (0-based, 1-based, stepped). */
#define _XOPEN_SOURCE 700
#include "batch.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define WHAT "--shard slurm"

/* The Slurm variable name as a number (digits only) into *v; 0 unset, 1 read, -1 with the
 * error set (exit 2). */
static int slurm_number(const char *name, long *v)
{
  const char *s = getenv(name);
  char *end;
  if (!s)
    return 0;
  errno = 0;
  *v = strtol(s, &end, 10);
  if (!isdigit((unsigned char)s[0]) || *end || errno || *v > 100000000) {
    gpuimg_error_set(GPUIMG_EXIT_USAGE, WHAT, "%s: invalid value '%s' (expected a task number)",
                     name, s);
    return -1;
  }
  return 1;
}

/* A variable the array task must have; 0, or -1 with the error set. */
static int required(const char *name, long *v)
{
  int rc = slurm_number(name, v);
  if (rc == 0)
    gpuimg_error_set(GPUIMG_EXIT_USAGE, WHAT,
                     "%s is not set (not a Slurm array task? give --shard K/N)", name);
  return rc == 1 ? 0 : -1;
}

/* Task id of the array min-max:step is shard (id - min) / step + 1 of (max - min) / step + 1.
 * A re-submitted subset (sbatch --array=3) is an array of its own, shard 1 of 1: all inputs
 * (with --skip-existing, what is missing); --shard K/N names a shard of the original count. */
static int from_slurm(gpuimg_cli_t *cli)
{
  long id, min, max, step, count;
  if (required("SLURM_ARRAY_TASK_ID", &id) < 0 || required("SLURM_ARRAY_TASK_MIN", &min) < 0 ||
      required("SLURM_ARRAY_TASK_MAX", &max) < 0 || required("SLURM_ARRAY_TASK_STEP", &step) < 0)
    return -1;
  if (step < 1 || id < min || id > max || (id - min) % step || (max - min) % step) {
    gpuimg_error_set(GPUIMG_EXIT_USAGE, WHAT,
                     "task %ld is not in the array %ld-%ld:%ld (SLURM_ARRAY_TASK_ID, _MIN, "
                     "_MAX, _STEP)",
                     id, min, max, step);
    return -1;
  }
  long n = (max - min) / step + 1;
  int have_count = slurm_number("SLURM_ARRAY_TASK_COUNT", &count);
  if (have_count < 0)
    return -1;
  if (have_count && count != n) {
    gpuimg_error_set(GPUIMG_EXIT_USAGE, WHAT,
                     "the array %ld-%ld:%ld has %ld tasks, SLURM_ARRAY_TASK_COUNT says %ld (an "
                     "irregular --array list? give --shard K/N)",
                     min, max, step, n, count);
    return -1;
  }
  if (n > GPUIMG_MAX_SHARDS) {
    gpuimg_error_set(GPUIMG_EXIT_USAGE, WHAT, "the array has %ld tasks (at most %d shards)", n,
                     GPUIMG_MAX_SHARDS);
    return -1;
  }
  cli->shard_k = (int)((id - min) / step + 1);
  cli->shard_n = (int)n;
  return 0;
}

int batch_shard_resolve(gpuimg_cli_t *cli)
{
  if (cli->shard_mode == GPUIMG_SHARD_AUTO && !getenv("SLURM_ARRAY_TASK_ID"))
    return 0; /* not an array task: every input */
  if (cli->shard_mode == GPUIMG_SHARD_SLURM || cli->shard_mode == GPUIMG_SHARD_AUTO)
    return from_slurm(cli);
  return 0;
}
