/* base.h: what every layer of libgpuimg shares: the public types, error recording, time. */
#ifndef GPUIMG_BASE_H
#define GPUIMG_BASE_H

#include "gpuimg.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Error recording: the last error's "what: reason" message and its exit code.
 * Functions that fail return -1 (or NULL) after calling gpuimg_error_set();
 * only main() prints it. what is usually a file name ("" for none). */
void gpuimg_error_set(int exit_code, const char *what, const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Copies s into dst (size bytes, NUL-terminated, cut short at a character) with control
 * characters escaped ("\n", "\t", "\r", "\x1b"), so that a name cannot start a line of its
 * own in a message. Returns the length written. */
size_t gpuimg_escape(char *dst, size_t size, const char *s);

/* gpuimg_image_alloc() for the image of what (a file name, "" for none), which the
 * "out of memory allocating N bytes" message names. */
int gpuimg_image_alloc_for(gpuimg_image_t *img, int width, int height, int channels,
                           const char *what);

/* A side of side pixels decoded at 1/reduction of its size (shrink-on-load: libjpeg's DCT
 * scaling), which rounds up: ceil(side / reduction); side itself for a reduction below 2. */
int gpuimg_reduced_side(int side, int reduction);

/* The median of v[0..n-1] (0 for n = 0); sorts v in place. */
double gpuimg_median(double *v, int n);

/* Monotonic clock in milliseconds. */
double gpuimg_now_ms(void);

/* The CPU time of the whole process (every thread, user and system) in milliseconds. */
double gpuimg_cpu_time_ms(void);

#ifdef __cplusplus
}
#endif

#endif
