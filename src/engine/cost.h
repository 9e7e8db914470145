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

/* Predicted wall time in ms of the same run on CUDA with nvJPEG (--codec nvjpeg): its handle
 * created after the device's start, then the JPEG input decoded on the device when
 * device_decode (else decoded on the host, overlapped with the start, and copied up) and the
 * JPEG output encoded there when device_encode (else copied down and encoded on the host, on
 * threads threads);
 * 0 when the steps cannot run on in. */
double gpuimg_cost_predict_nvjpeg(const gpuimg_plan_t *plan, int threads,
                                  const gpuimg_cost_input_t *in, int device_decode,
                                  int device_encode);

/* The share of a batch's n JPEG inputs (like in, at full size) to send down the device's JPEG
 * path (the hardware decoder, the steps there, and nvJPEG's encoder when device_encode: the
 * codec registry's answer for the output's format) while the
 * host's `cores` cores convert the rest with the host codecs: the host takes what it converts
 * during the device path's set-up (each side slows the other while both run), the device path
 * the rest at its decoders' time per image or the host work it still needs (its read, write
 * and any host encode) spread over the cores; a host image is priced by its decode, steps
 * and encode. The host decodes at 1/reduction of the size (shrink-on-load,
 * priced as a full decode: the entropy decoding dominates) and runs host_plan's steps there
 * (the plan with its first step fixed for the reduced size, as the flow makes it; NULL:
 * plan's, for a reduction of 1). 0 to 1; 0 when the device's share would be too small to pay for
 * its set-up or the split not at least 10% sooner than the host alone. */
double gpuimg_cost_device_share(const gpuimg_plan_t *plan, const gpuimg_cost_input_t *in,
                                int device_encode, const gpuimg_plan_t *host_plan, int reduction,
                                int cores, long n);

#endif
