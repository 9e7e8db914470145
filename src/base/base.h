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

/* On x86-64 Linux with GCC or Clang, a function marked GPUIMG_CPU_CLONES is compiled twice,
 * for x86-64-v3 (AVX2, BMI2: variable shifts in one instruction, 32-byte vectors) and for the
 * build's baseline, and the dynamic loader picks the one the CPU runs (an ifunc): for the few
 * hot loops of the CPU backend and the host codecs, so that one binary runs anywhere and fast
 * where it can (docs/performance.md, "x86-64-v3 clones"). Elsewhere it is nothing. */
#if defined(__x86_64__) && defined(__linux__) && defined(__GNUC__) && !defined(GPUIMG_NO_CPU_CLONES)
#define GPUIMG_CPU_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define GPUIMG_CPU_CLONES
#endif

/* Copies s into dst (size bytes, NUL-terminated, cut short at a character) with control
 * characters escaped ("\n", "\t", "\r", "\x1b"), so that a name cannot start a line of its
 * own in a message. Returns the length written. */
size_t gpuimg_escape(char *dst, size_t size, const char *s);

/* gpuimg_image_alloc() for the image of what (a file name, "" for none), which the
 * "out of memory allocating N bytes" message names. */
int gpuimg_image_alloc_for(gpuimg_image_t *img, int width, int height, int channels,
                           const char *what);

/* Whether width x height x channels is an image gpuimg.h describes: sides from 1, 1 to 4
 * channels, its bytes within what one allocation can hold. 0, or -1 with the reason set
 * against what with exit_code. */
int gpuimg_image_check_shape(int width, int height, int channels, int exit_code, const char *what);
/* The same for an image's fields, and its data not NULL (whether data holds that many bytes
 * no one can tell: the caller's duty). */
int gpuimg_image_check(const gpuimg_image_t *img, int exit_code, const char *what);

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
