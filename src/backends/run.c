/* run.c: the timing record of a run (its stages), shared by every backend, and the backend
 * registry's lookup. */
#include "backend.h"

#include <stdlib.h>
#include <string.h>

gpuimg_stage_t *gpuimg_run_stage(gpuimg_run_t *run, const char *name, int step, int device, int nms)
{
  if (run->nstages == GPUIMG_MAX_STAGES) {
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, "", "too many stages");
    return NULL;
  }
  gpuimg_stage_t *s = &run->stages[run->nstages];
  memset(s, 0, sizeof *s);
  s->ms = calloc((size_t)nms, sizeof *s->ms);
  if (!s->ms) {
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, "", "out of memory");
    return NULL;
  }
  run->nstages++;
  snprintf(s->name, sizeof s->name, "%s", name);
  s->step = step;
  s->device = device;
  s->nms = nms;
  s->pinned = -1;
  return s;
}

void gpuimg_run_free(gpuimg_run_t *run)
{
  for (int i = 0; i < run->nstages; i++)
    free(run->stages[i].ms);
  run->nstages = 0;
}

uint64_t gpuimg_step_bytes(const gpuimg_step_t *s, int w, int h, int cin)
{
  uint64_t px = (uint64_t)w * (uint64_t)h;
  return px * (uint64_t)cin + px * (uint64_t)gpuimg_op_out_channels(s->op, cin) +
         (s->op->needs_mask ? px : 0);
}

const gpuimg_backend_ops_t *gpuimg_backend_find(const char *name)
{
  for (int i = 0; gpuimg_backends[i]; i++)
    if (strcmp(gpuimg_backends[i]->name, name) == 0)
      return gpuimg_backends[i];
  return NULL;
}
