/* flow.h: one image through the engine, the same for a one-image run and every batch worker:
 * read, decode, the steps (upload, kernels, download on CUDA), encode, write; each stage timed. */
#ifndef GPUIMG_FLOW_H
#define GPUIMG_FLOW_H

#include "route.h"

/* Host-clock intervals of one image (for a batch's overlap figures): the host work before
 * the steps, the steps, and the host work after them. */
enum { GPUIMG_FLOW_LOAD, GPUIMG_FLOW_STEPS, GPUIMG_FLOW_STORE, GPUIMG_FLOW_INTERVALS };

/* What stays the same from image to image. */
typedef struct {
  const gpuimg_plan_t *plan;
  /* The backend the steps run on, kept between images (a batch worker's); NULL: each image
   * opens one (gpuimg_pipeline_open()) once it is decoded, and closes it when done. */
  gpuimg_pipeline_t *runner;
  /* With no runner (one-image runs): each image's backend is chosen before its decode (its
   * route: gpuimg_route_image()), and CUDA is started on a thread while the input is decoded. */
  int choose;
  /* The runner does JPEG on the device: each image's route may decode a JPEG input there
   * and encode a JPEG output of 1 or 3 channels there, by the device's nvJPEG threads (jpeg)
   * or the runner's own handle (jpeg NULL). */
  int device_jpeg;
  gpuimg_jpeg_batch_t *jpeg;
  /* Each step's mask, loaded once for every image (data NULL: the step takes none); an image
   * of another size is an input error. NULL: each image loads its steps' masks after its
   * decode (stages mask-read and mask-decode), builtin_mask for a step that names none. */
  const gpuimg_image_t *masks;
  const uint8_t *builtin_mask;
  size_t builtin_mask_size;
} gpuimg_flow_t;

/* One image's input and output. */
typedef struct {
  const gpuimg_image_t *image; /* pixels already decoded (the library's in-memory runs), or
                                  NULL: the input below */
  const char *input;           /* the file to read ("-": stdin); NULL: the bytes below */
  const uint8_t *bytes;
  size_t size;
  const char *what;   /* the input's name in messages and the report */
  const char *output; /* NULL: no image written */
  const char *output_what;
  gpuimg_format_t format;
  /* An output opened before any work (a one-image run's), committed at the write stage;
   * NULL: output is created then, atomically. */
  gpuimg_output_t *out;
  /* The output is created by the flow (out NULL) and must not replace a file that exists by
   * the time it is complete (a batch without --force): the write fails with exit 4. */
  int no_replace;
  /* The input must be a regular file, and the output become one (a batch's): a FIFO, a
   * device or a socket is refused, never opened to wait on or written into. */
  int regular;
  /* Set by the flow when the write failed (no_replace) because the output existed by then. */
  int taken;
  /* A batch item's path (gpuimg_route_path()): GPUIMG_PATH_HOST_DECODE decodes a JPEG input
   * the flow would decode on the device (device_jpeg) with the host's decoder instead, its
   * result still encoded on the device (a batch's host share). */
  gpuimg_path_t path;
  gpuimg_image_t *result; /* NULL, or receives the resulting pixels (the caller frees them) */
  double intervals[GPUIMG_FLOW_INTERVALS][2]; /* filled in: start and end, -1 where none */
} gpuimg_job_t;

/* Runs the flow on one job, filling run's stages, sizes, names and total_ms. 0, or -1 with
 * the error set; on failure no output is left behind. */
int gpuimg_flow_run(const gpuimg_flow_t *flow, gpuimg_job_t *job, gpuimg_run_t *run);

/* Loads a mask as one channel: from path, or from the built-in bytes when path is NULL. Its
 * read and decode are timed into run as <prefix>read and <prefix>decode when run is set. */
int gpuimg_flow_load_mask(const gpuimg_plan_t *plan, const char *path, const uint8_t *builtin,
                          size_t builtin_size, gpuimg_image_t *mask, gpuimg_run_t *run);

/* The gpuimg_output_open() flags the plan asks of every output: GPUIMG_OUTPUT_FSYNC (--fsync),
 * GPUIMG_OUTPUT_QUIET (-q). */
int gpuimg_flow_output_flags(const gpuimg_plan_t *plan);

/* Step i's mask file (NULL: the built-in one); *takes 0 when the step takes no mask. */
const char *gpuimg_flow_mask_path(const gpuimg_plan_t *plan, int i, int *takes);

#endif
