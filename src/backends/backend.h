/* backend.h: what a backend declares (its name, its devices, and open, process and close)
 * and the registry of the backends built in, which the engine's runners choose from. */
#ifndef GPUIMG_BACKEND_H
#define GPUIMG_BACKEND_H

#include "jpeg_batch.h"
#include "run.h"

/* Runner devices besides CUDA device numbers: the CPU backend, and CUDA's default device. */
#define GPUIMG_DEVICE_CPU (-1)
#define GPUIMG_DEVICE_DEFAULT (-2)

/* Device-resident JPEG: a JPEG file's bytes decoded by nvJPEG straight into the runner's
 * device memory (and turned upright there, as its EXIF orientation asks), and the result, when
 * out is set, encoded by nvJPEG from device memory, so that no pixels cross the host (a CUDA
 * runner in a build with nvJPEG). */
typedef struct {
  const uint8_t *jpeg; /* the input file's bytes and name; NULL: the input is src */
  size_t size;
  const char *what;
  uint64_t max_pixels;        /* a larger image is an input error (exit 3) */
  gpuimg_jpeg_batch_t *batch; /* the device's nvJPEG threads do the work, or NULL: the runner */
  gpuimg_buf_t *out;          /* NULL: the pixels come back in dst; else the JPEG file here */
  int quality;
  const char *out_what;
  int orientation; /* the EXIF orientation the decoded pixels are turned by there, 1..8 */
} gpuimg_jpeg_io_t;

/* A backend. Its state (from open) belongs to the thread that opened it. */
typedef struct {
  const char *name; /* "cpu", "cuda" */
  /* Devices usable now: 1 for the CPU; 0 with why in reason. */
  int (*probe)(char *reason, size_t reason_size);
  /* Brings device up ahead of its runners (the engine's device start, gpuimg_device_start_t):
   * the driver, its primary context and its way of waiting (blocking: a thread sleeps while the
   * device works); wanted (or NULL) is asked once the driver is up whether the device is
   * still wanted. 1 usable, 0 not (why in reason), -1 no longer wanted (no context made).
   * NULL for a backend with nothing to bring up. */
  int (*start)(int device, int blocking, int (*wanted)(void *), void *arg, char *reason,
               size_t reason_size);
  /* Makes the device's threads wait for it by sleeping (blocking 1) or spinning; -1 with the
   * error set. NULL: nothing to choose. */
  int (*wait_mode)(int device, int blocking);
  /* A runner's state for plan (which outlives it) on device, as gpuimg_pipeline_create()
   * says; once: the runner serves one image and is then closed (buffers kept for a next
   * image would not pay for their set-up). NULL with the error set. */
  void *(*open)(const gpuimg_plan_t *plan, int device, int once);
  /* Runs plan's steps on src, or, with io and io->jpeg, on a JPEG decoded on the device (with
   * io->out the result is encoded there); as gpuimg_pipeline_process_jpeg() says. */
  int (*process)(void *state, const gpuimg_plan_t *plan, const gpuimg_image_t *src,
                 const gpuimg_jpeg_io_t *io, const gpuimg_image_t *masks, gpuimg_image_t *dst,
                 gpuimg_run_t *run);
  /* Memory a decoder may put an image of bytes into, uploaded from there without a copy;
   * NULL: none (NULL function: never). */
  uint8_t *(*pixels)(void *state, size_t bytes);
  int (*allocations)(const void *state); /* pinned and device allocations so far */
  void (*close)(void *state);
  int device_jpeg; /* process() decodes and encodes JPEG on the device (nvJPEG built in) */
} gpuimg_backend_ops_t;

/* The backends built in, NULL-terminated (registry.c, generated from src/backends/
 * meson.build's list); the CPU backend is always first. */
extern const gpuimg_backend_ops_t *const gpuimg_backends[];

/* The backend called name, or NULL when this build has none of that name. */
const gpuimg_backend_ops_t *gpuimg_backend_find(const char *name);

/* The CPU backend's row bands for a width x height step at threads threads (cpu.c says the
 * rule): the steps' parallelism. */
int gpuimg_cpu_bands(int threads, int width, int height);

/* Step i's stage, of nms samples (device: CUDA events): its name, the bytes it must move at
 * least (its input, its output and its mask, from shapes) and the size it makes. NULL with
 * the error set. */
gpuimg_stage_t *gpuimg_run_step_stage(gpuimg_run_t *run, const gpuimg_plan_t *plan, int i,
                                      const gpuimg_shape_t *shapes, int device, int nms);

#endif
