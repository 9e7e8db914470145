/* gpuimg.h: libgpuimg's public interface: images, errors, and a context that runs a pipeline. */
#ifndef GPUIMG_H
#define GPUIMG_H

#include <stddef.h>
#include <stdint.h>

#define GPUIMG_VERSION_MAJOR 0
#define GPUIMG_VERSION_MINOR 1
#define GPUIMG_VERSION_PATCH 0

/* What libgpuimg exports: the functions below and nothing else. */
#if defined(__GNUC__)
#define GPUIMG_API __attribute__((visibility("default")))
#else
#define GPUIMG_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Exit codes: few, fixed, documented in man/gpuimg.1 and README.md. */
enum {
  GPUIMG_EXIT_OK = 0,
  GPUIMG_EXIT_FAILURE = 1, /* processing failed: out of memory, internal error */
  GPUIMG_EXIT_USAGE = 2,   /* bad command line */
  GPUIMG_EXIT_INPUT = 3,   /* input or mask cannot be read or decoded, or mismatched */
  GPUIMG_EXIT_OUTPUT = 4,  /* output image or report cannot be written */
  GPUIMG_EXIT_DEVICE = 5,  /* CUDA backend asked for but unusable, or a CUDA error */
};

/* An 8-bit image, row-major and tightly packed, 1..4 interleaved channels. */
typedef struct {
  int width;
  int height;
  int channels;
  uint8_t *data; /* owned by whoever created the image */
  int borrowed;  /* data belongs to someone else (a runner's pinned staging buffer): freeing
                    the image only forgets it */
} gpuimg_image_t;

/* Bytes of pixel data of a width x height x channels image (64-bit). */
static inline size_t gpuimg_image_bytes(int width, int height, int channels)
{
  return (size_t)width * (size_t)height * (size_t)channels;
}

/* Allocates data for img (fields set); 0 or -1 with the error set. */
GPUIMG_API int gpuimg_image_alloc(gpuimg_image_t *img, int width, int height, int channels);
/* Frees img->data (allocated by gpuimg_image_alloc or a decoder) unless borrowed, and zeroes
 * img. */
GPUIMG_API void gpuimg_image_free(gpuimg_image_t *img);

/* The calling thread's last error: "<what>: <reason>" and its exit code (GPUIMG_EXIT_*).
 * Functions that fail return -1 (or NULL) after recording it. */
GPUIMG_API const char *gpuimg_error_message(void); /* "<what>: <reason>" or "<reason>" */
GPUIMG_API int gpuimg_error_code(void);
GPUIMG_API void gpuimg_error_clear(void);

/* Backends: auto picks CUDA when a device is usable, else the CPU. */
typedef enum { GPUIMG_BACKEND_AUTO, GPUIMG_BACKEND_CPU, GPUIMG_BACKEND_CUDA } gpuimg_backend_t;

/* ---- The engine: a context holds a pipeline of operations and runs it on images. ----
 * A context belongs to one thread at a time; several contexts may run at once. Every
 * function that can fail returns -1 (or NULL) with the error set (gpuimg_error_message()).
 *
 *   gpuimg_context_t *ctx = gpuimg_context_create(GPUIMG_BACKEND_AUTO);
 *   gpuimg_context_add(ctx, "gray");
 *   gpuimg_context_add(ctx, "blur");
 *   gpuimg_context_set(ctx, "radius", "4");
 *   gpuimg_context_convert(ctx, "in.jpg", "out.png");
 *   gpuimg_context_destroy(ctx);
 */
typedef struct gpuimg_context gpuimg_context_t;

/* A context with no steps on backend (its device is brought up at the first run). */
GPUIMG_API gpuimg_context_t *gpuimg_context_create(gpuimg_backend_t backend);
GPUIMG_API void gpuimg_context_destroy(gpuimg_context_t *ctx);

/* Appends the operation named op ("gray", "blur", ...) with its default options. */
GPUIMG_API int gpuimg_context_add(gpuimg_context_t *ctx, const char *op);
/* Sets an option by its long name as on the command line ("radius", "tiled", "quality"):
 * the last added step's, else a setting of the whole run (backend, quality, png-level,
 * codec, max-pixels, repeat, warmup, block, threads), or "device", the CUDA device number the
 * context runs on (default: CUDA's default device). value is NULL for a flag. A context
 * runs one image at a time (on the CPU, each step over "threads" threads, default: the usable
 * cores; a large PNG output's slices too, on either backend): several contexts run images in
 * parallel. */
GPUIMG_API int gpuimg_context_set(gpuimg_context_t *ctx, const char *option, const char *value);

/* Runs the steps on src; dst receives a new image (free it with gpuimg_image_free()). */
GPUIMG_API int gpuimg_context_process(gpuimg_context_t *ctx, const gpuimg_image_t *src,
                                      gpuimg_image_t *dst);
/* Reads, decodes, runs, encodes and writes (atomically; the format from output's
 * extension). output NULL: nothing is written. */
GPUIMG_API int gpuimg_context_convert(gpuimg_context_t *ctx, const char *input, const char *output);

/* The timing record of the last run: its stages in order (read, decode, upload, each
 * step, download, encode, write as they ran), each with its median time. */
typedef struct {
  const char *name; /* "decode", "blur", ... */
  int device;       /* 1: timed by CUDA events on the device; 0: by the host clock */
  double ms;        /* the median over the repetitions */
} gpuimg_stage_time_t;

GPUIMG_API int gpuimg_context_stage_count(const gpuimg_context_t *ctx);
GPUIMG_API int gpuimg_context_stage(const gpuimg_context_t *ctx, int i, gpuimg_stage_time_t *out);
/* "cpu" or "cuda": where the last run's steps ran ("" before any run). */
GPUIMG_API const char *gpuimg_context_backend(const gpuimg_context_t *ctx);
/* The last run as the JSON report of `gpuimg --report` (malloc'd; free() it). */
GPUIMG_API char *gpuimg_context_report(const gpuimg_context_t *ctx);

/* The library's version, "0.1.0". */
GPUIMG_API const char *gpuimg_version(void);

#ifdef __cplusplus
}
#endif

#endif
