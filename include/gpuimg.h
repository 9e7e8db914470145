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

/* Exit codes: few, fixed, documented in man/gpuimg.1 and README.md; a library function's
 * error has one too (gpuimg_error_code()). */
enum {
  GPUIMG_EXIT_OK = 0,
  GPUIMG_EXIT_FAILURE = 1, /* processing failed: out of memory, internal error */
  GPUIMG_EXIT_USAGE = 2,   /* bad command line; in the library, a caller's misuse: a NULL
                              pointer, an out-of-range enum or index, an unknown operation or
                              option, a malformed option value, no run to report */
  GPUIMG_EXIT_INPUT = 3,   /* input or mask cannot be read or decoded, or mismatched; in the
                              library also an image in memory it cannot take (its fields, its
                              size over "max-pixels", channels a step does not take) */
  GPUIMG_EXIT_OUTPUT = 4,  /* output image or report cannot be written */
  GPUIMG_EXIT_DEVICE = 5,  /* CUDA backend asked for but unusable, or a CUDA error */
};

/* ---- The contract. Every function checks what it can of its arguments and refuses the
 * rest with -1 (or NULL), the error's message and code set, never a crash: NULL where a
 * pointer is required, enum values and indices out of range, option values (as strictly as
 * the command line: decimal digits only, no blank, sign or anything after them; a flag takes
 * NULL), and an image's fields. What no function can check is the caller's duty:
 *  - an image's data points to width * height * channels readable bytes (and stays valid for
 *    the call);
 *  - a context and the images it is given are not used by two threads at once;
 *  - pointers are NULL or valid (strings NUL-terminated): the library cannot tell a dangling
 *    pointer from a live one;
 *  - images returned by the library are freed once, with gpuimg_image_free().
 * Each function's own checks are said below. */

/* An 8-bit image, row-major and tightly packed, 1..4 interleaved channels: a valid image has
 * width and height of 1 or more, channels 1 to 4 and data not NULL, pointing to
 * gpuimg_image_bytes(width, height, channels) bytes. */
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

/* Allocates data for img (fields set); 0 or -1 with the error set. Checks: img not NULL,
 * width and height 1 or more, channels 1 to 4, the size within what one allocation can hold
 * (GPUIMG_EXIT_USAGE), memory (GPUIMG_EXIT_FAILURE). On failure img (when not NULL) is
 * zeroed, an image every function refuses. */
GPUIMG_API int gpuimg_image_alloc(gpuimg_image_t *img, int width, int height, int channels);
/* Frees img->data (allocated by gpuimg_image_alloc or returned by the library) unless
 * borrowed, and zeroes img; NULL or a zeroed image: nothing. Caller's duty: data was not freed
 * already, nor belongs to someone else without borrowed set. */
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

/* A context with no steps on backend (its device is brought up at the first run). Checks:
 * backend is one of gpuimg_backend_t's values (GPUIMG_EXIT_USAGE). */
GPUIMG_API gpuimg_context_t *gpuimg_context_create(gpuimg_backend_t backend);
/* Frees ctx and what it holds; NULL: nothing. */
GPUIMG_API void gpuimg_context_destroy(gpuimg_context_t *ctx);

/* In every function below, ctx NULL is refused with GPUIMG_EXIT_USAGE and the message
 * "gpuimg_context_FUNCTION: ctx is NULL". */

/* Appends the operation named op ("gray", "blur", ...) with its default options. Checks: op
 * not NULL, an operation of that name, at most 32 steps (GPUIMG_EXIT_USAGE). */
GPUIMG_API int gpuimg_context_add(gpuimg_context_t *ctx, const char *op);
/* Sets an option by its long name as on the command line ("radius", "tiled", "quality"):
 * the last added step's, else a setting of the whole run (backend, quality, png-level,
 * codec, max-pixels, repeat, warmup, block, threads), or "device", the CUDA device number the
 * context runs on (default: CUDA's default device). value is NULL for a flag. A context
 * runs one image at a time (on the CPU, each step over "threads" threads, default: the usable
 * cores; a large PNG output's slices too, on either backend): several contexts run images in
 * parallel. Checks (GPUIMG_EXIT_USAGE, the message as the command line's, "--radius: ..."):
 * option not NULL and known; a flag ("tiled", "strip") given NULL, any other option a value;
 * the value as the command line takes it: numbers in decimal digits alone (a point in
 * "scale"; no blank, sign, exponent or trailing character) within the option's range, names
 * from the option's list. A file name ("mask") is copied: value need not outlive the call. */
GPUIMG_API int gpuimg_context_set(gpuimg_context_t *ctx, const char *option, const char *value);

/* Runs the steps on src; dst receives a new image (free it with gpuimg_image_free()). src is
 * read in full before dst is written, so dst may be src: its fields then describe the result
 * and its old data pointer is overwritten, not freed (keep it to free it). On failure dst is
 * zeroed, unless it is src, which is left as it was. Checks: src and dst not NULL, a step
 * added (GPUIMG_EXIT_USAGE); src a valid image (above), width * height within "max-pixels"
 * (default 268435456), its channels (and each step's input channels) ones the step's
 * operation takes (GPUIMG_EXIT_INPUT, the message "(image in memory): ..." or the
 * operation's name first). The caller's duty: src->data holds the image's bytes. */
GPUIMG_API int gpuimg_context_process(gpuimg_context_t *ctx, const gpuimg_image_t *src,
                                      gpuimg_image_t *dst);
/* Reads, decodes, runs, encodes and writes (atomically; the format from output's
 * extension). output NULL: nothing is written; "-" reads standard input or writes standard
 * output. Checks: input not NULL, output's extension (GPUIMG_EXIT_USAGE); output not the same
 * file as input or a step's mask (by device and inode, or by path before it exists, also
 * through links: GPUIMG_EXIT_OUTPUT, "OUTPUT: output is the same file as the input"), then the
 * files as the command does (exit codes as its). */
GPUIMG_API int gpuimg_context_convert(gpuimg_context_t *ctx, const char *input, const char *output);

/* The timing record of the last run: its stages in order (read, decode, upload, each
 * step, download, encode, write as they ran), each with its median time. The last run is the
 * last gpuimg_context_process() or gpuimg_context_convert() if it succeeded: there is none
 * before the first and after one that failed (0 stages, backend "", no report). */
typedef struct {
  const char *name; /* "decode", "blur", ... */
  int device;       /* 1: timed by CUDA events on the device; 0: by the host clock */
  double ms;        /* the median over the repetitions */
} gpuimg_stage_time_t;

/* The number of stages (-1: ctx NULL), and stage i of them into *out (name valid until the
 * next run or destroy). Checks: out not NULL, 0 <= i < count (GPUIMG_EXIT_USAGE). */
GPUIMG_API int gpuimg_context_stage_count(const gpuimg_context_t *ctx);
GPUIMG_API int gpuimg_context_stage(const gpuimg_context_t *ctx, int i, gpuimg_stage_time_t *out);
/* "cpu" or "cuda": where the last run's steps ran ("" without one); NULL for ctx NULL. */
GPUIMG_API const char *gpuimg_context_backend(const gpuimg_context_t *ctx);
/* The last run as the JSON report of `gpuimg --report` (malloc'd; free() it); an analysis
 * step's figures (stats) are its stage's "result". Without a last run: NULL, GPUIMG_EXIT_USAGE
 * ("gpuimg_context_report: no run to report (...)"). */
GPUIMG_API char *gpuimg_context_report(const gpuimg_context_t *ctx);

/* The library's version, "0.1.0". */
GPUIMG_API const char *gpuimg_version(void);

#ifdef __cplusplus
}
#endif

#endif
