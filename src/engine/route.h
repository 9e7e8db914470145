/* route.h: where an image runs: the one place that decides, per image, where its input is
 * decoded, where its steps run and where its output is encoded (and at which shrink-on-load
 * reduction), and, per batch, the share of its items the device's JPEG path takes. */
#ifndef GPUIMG_ROUTE_H
#define GPUIMG_ROUTE_H

#include "pipeline.h"

/* Where a stage runs: on the host (a host codec), or on the device (nvJPEG in device memory). */
typedef enum { GPUIMG_ON_HOST, GPUIMG_ON_DEVICE } gpuimg_place_t;

/* Where the steps run. */
typedef enum {
  GPUIMG_STEPS_RUNNER, /* the runner the flow was given (a batch worker's, a context's) */
  GPUIMG_STEPS_ASKED, /* a runner of the image's own, where --backend asks (gpuimg_pipeline_open) */
  GPUIMG_STEPS_CPU,   /* a runner of its own on the CPU: the cost model's choice, CUDA untouched */
  GPUIMG_STEPS_CUDA   /* a runner of its own on CUDA, whose start begins before the decode */
} gpuimg_steps_on_t;

/* A batch item's path, from a hash of its name (the same in every run, shard and -j). */
typedef enum {
  GPUIMG_PATH_WORKER,     /* as its worker runs (host codecs, or --codec nvjpeg's device JPEG) */
  GPUIMG_PATH_DEVICE,     /* a split batch's device JPEG path (gpuimg_route_device_share) */
  GPUIMG_PATH_HOST_DECODE /* decoded by the host, though its worker decodes JPEG on the device */
} gpuimg_path_t;

/* What one image's route is decided from. */
typedef struct {
  const gpuimg_plan_t *plan;
  const gpuimg_image_t *image; /* pixels in memory, or NULL: the input's bytes below */
  const uint8_t *bytes;
  size_t size;
  int from_file;   /* bytes are a file's (not the built-in sample's): the device may decode them */
  int orientation; /* the EXIF orientation the plan applies, 1..8 */
  gpuimg_format_t out; /* the output's format; GPUIMG_FORMAT_NONE: no image written */
  int device_jpeg;     /* the runner decodes and encodes JPEG on the device (the flow's) */
  gpuimg_path_t path;  /* a batch item's; GPUIMG_PATH_WORKER otherwise */
  int profiled;        /* --to-srgb and an ICC profile: the pixels are converted on the host */
  int choose;          /* a one-image run without a runner: the steps' backend is chosen here */
} gpuimg_route_ask_t;

/* One image's route. */
typedef struct {
  gpuimg_place_t decode; /* the input's decode (pixels in memory: host) */
  gpuimg_steps_on_t steps;
  gpuimg_place_t encode; /* the output's encode; see gpuimg_route_encode() */
  gpuimg_place_t jpeg;   /* where this image's JPEG is coded: the device's codec, or the host's */
  gpuimg_codec_choice_t codec;   /* the host codecs' choice: the plan's, or auto where the
                                    cost model left JPEG to the host */
  const gpuimg_codec_t *decoder; /* the host decoder (decode on the host from bytes), else NULL */
  int reduction;                 /* shrink-on-load: decoded at 1/reduction of its size (1: full) */
  /* reduction > 1: the first step's parameters for the reduced image (the steps then run a
   * copy of the plan with these) */
  _Alignas(16) unsigned char first_params[GPUIMG_PARAMS_SIZE];
} gpuimg_route_t;

/* Decides ask's image's route into route. A one-image run's choice under --backend auto
 * (ask->choose) is the cost model's: its predictions and reason go to run. Never fails: a
 * header it cannot read leaves the decode to say why. */
void gpuimg_route_image(const gpuimg_route_ask_t *ask, gpuimg_route_t *route, gpuimg_run_t *run);

/* Settles route->encode once the decoded input's channels are known (a host decode): the
 * device encodes where its JPEG is there, the output's format is the device codec's and the
 * result has 1 or 3 channels (a device decode's result always has). */
void gpuimg_route_encode(gpuimg_route_t *route, const gpuimg_plan_t *plan, gpuimg_format_t out,
                         int in_channels);

/* The host decoder of bytes under --codec codec; host 1 (a JPEG kept off the device path)
 * leaves a device codec's (nvjpeg's) JPEG to auto's choice, libjpeg. Never NULL. */
const gpuimg_codec_t *gpuimg_route_decoder(gpuimg_codec_choice_t codec, const uint8_t *bytes,
                                           size_t size, int host);

/* Whether every step runs its fast kernel and no --block is given (no teaching run: --naive,
 * --tiled and --block choose CUDA kernels, and such a run is about them). */
int gpuimg_route_fast(const gpuimg_plan_t *plan);

/* The share of a batch's n items that goes down the device's JPEG path beside the host codecs
 * (0: no split): only under --codec auto on a usable device (cuda_ok) without a --codec
 * nvjpeg batch's own JPEG threads (device_jpeg), with nvJPEG built in and the fast kernels; by
 * the cost model (gpuimg_cost_device_share) for inputs like the file first written as out, on
 * the cores this process may use (not --jobs, so that the same files come out at every -j),
 * their host decode at the reduction the flow would use; GPUIMG_JPEG_SPLIT=0 turns it off,
 * unset or =auto asks for the model's share, =<0..1> sets it (measurements). *model: 1 when
 * the share is the model's (it priced the hardware decoder). */
double gpuimg_route_device_share(const gpuimg_plan_t *plan, int cuda_ok, int device_jpeg,
                                 const char *first, gpuimg_format_t out, long n, int *model);

/* A batch item's path: GPUIMG_PATH_DEVICE when its name hashes under device_share (a split),
 * GPUIMG_PATH_HOST_DECODE when under host_share (--codec nvjpeg's GPUIMG_JPEG_HOST_SHARE). */
gpuimg_path_t gpuimg_route_path(const char *name, double device_share, double host_share);

#endif
