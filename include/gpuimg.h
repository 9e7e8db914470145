/* gpuimg.h: libgpuimg's public interface: images, exit codes, errors and the version. */
#ifndef GPUIMG_H
#define GPUIMG_H

#include <stddef.h>
#include <stdint.h>

#define GPUIMG_VERSION_MAJOR 0
#define GPUIMG_VERSION_MINOR 1
#define GPUIMG_VERSION_PATCH 0

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
int gpuimg_image_alloc(gpuimg_image_t *img, int width, int height, int channels);
/* Frees img->data (allocated by gpuimg_image_alloc or a decoder) unless borrowed, and zeroes
 * img. */
void gpuimg_image_free(gpuimg_image_t *img);

/* The calling thread's last error: "<what>: <reason>" and its exit code (GPUIMG_EXIT_*).
 * Functions that fail return -1 (or NULL) after recording it. */
const char *gpuimg_error_message(void); /* "<what>: <reason>" or "<reason>" */
int gpuimg_error_code(void);
void gpuimg_error_clear(void);

#ifdef __cplusplus
}
#endif

#endif
