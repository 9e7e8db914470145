/* cost.h: the backend cost model: the predicted wall time of a one-image run on each backend,
 * from which --backend auto chooses. */
#ifndef GPUIMG_COST_H
#define GPUIMG_COST_H

#include "run.h"

/* What the model is told about the image: its size and channels (from the header), its file's
 * bytes and format, and the output's format (GPUIMG_FORMAT_NONE: no image written). */
typedef struct {
  int width, height, channels;
  size_t file_bytes;
  gpuimg_format_t in_format, out_format;
} gpuimg_cost_input_t;

/* Predicted wall time in ms of plan's steps on in, with the codecs, on the CPU backend (at
 * threads threads) and on CUDA (its start included, overlapped with the decode). */
void gpuimg_cost_predict(const gpuimg_plan_t *plan, int threads, const gpuimg_cost_input_t *in,
                         double *cpu_ms, double *cuda_ms);

#endif
