/* util.c: error recording, image allocation and the monotonic clock. */
#define _POSIX_C_SOURCE 200809L
#include "base.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Per thread, so batch workers report their own errors. */
static _Thread_local char error_message[1024];
static _Thread_local int error_code = GPUIMG_EXIT_OK;

size_t gpuimg_escape(char *dst, size_t size, const char *s)
{
  static const char hex[] = "0123456789abcdef";
  size_t n = 0;
  for (; *s && size > 0; s++) {
    unsigned char c = (unsigned char)*s;
    char esc[5] = {(char)c, 0};
    if (c == '\n' || c == '\r' || c == '\t')
      snprintf(esc, sizeof esc, "\\%c", c == '\n' ? 'n' : c == '\r' ? 'r' : 't');
    else if (c < 0x20 || c == 0x7f)
      snprintf(esc, sizeof esc, "\\x%c%c", hex[c >> 4], hex[c & 15]);
    size_t len = strlen(esc);
    if (n + len >= size)
      break;
    memcpy(dst + n, esc, len);
    n += len;
  }
  if (size > 0)
    dst[n] = '\0';
  return n;
}

void gpuimg_error_set(int exit_code, const char *what, const char *fmt, ...)
{
  char reason[768], raw[sizeof error_message];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(reason, sizeof reason, fmt, ap);
  va_end(ap);
  if (reason[0] == '\0')
    snprintf(reason, sizeof reason, "unknown error");
  if (what && what[0])
    snprintf(raw, sizeof raw, "%s: %s", what, reason);
  else
    snprintf(raw, sizeof raw, "%s", reason);
  /* One line on a terminal whatever a file name holds: control characters escaped. */
  gpuimg_escape(error_message, sizeof error_message, raw);
  error_code = exit_code;
}

const char *gpuimg_error_message(void)
{
  return error_message[0] ? error_message : "unknown error";
}

int gpuimg_error_code(void)
{
  return error_code == GPUIMG_EXIT_OK ? GPUIMG_EXIT_FAILURE : error_code;
}

void gpuimg_error_clear(void)
{
  error_message[0] = '\0';
  error_code = GPUIMG_EXIT_OK;
}

int gpuimg_image_alloc(gpuimg_image_t *img, int width, int height, int channels)
{
  static const char fn[] = "gpuimg_image_alloc";
  if (!img) {
    gpuimg_error_set(GPUIMG_EXIT_USAGE, fn, "img is NULL");
    return -1;
  }
  memset(img, 0, sizeof *img);
  if (gpuimg_image_check_shape(width, height, channels, GPUIMG_EXIT_USAGE, fn) < 0)
    return -1;
  return gpuimg_image_alloc_for(img, width, height, channels, "");
}

int gpuimg_image_check_shape(int width, int height, int channels, int exit_code, const char *what)
{
  if (width < 1 || height < 1) {
    gpuimg_error_set(exit_code, what, "invalid size %dx%d (width and height must be 1 or more)",
                     width, height);
    return -1;
  }
  if (channels < 1 || channels > 4) {
    gpuimg_error_set(exit_code, what, "%d channels (expected 1 to 4)", channels);
    return -1;
  }
  /* Sides below 2^31 and 4 channels stay below 2^64: the product itself cannot wrap. */
  if (gpuimg_image_bytes(width, height, channels) > (size_t)PTRDIFF_MAX) {
    gpuimg_error_set(exit_code, what, "%dx%d with %d channels is too large to hold in memory",
                     width, height, channels);
    return -1;
  }
  return 0;
}

int gpuimg_image_check(const gpuimg_image_t *img, int exit_code, const char *what)
{
  if (gpuimg_image_check_shape(img->width, img->height, img->channels, exit_code, what) < 0)
    return -1;
  if (!img->data) {
    gpuimg_error_set(exit_code, what, "no pixel data (data is NULL)");
    return -1;
  }
  return 0;
}

int gpuimg_image_alloc_for(gpuimg_image_t *img, int width, int height, int channels,
                           const char *what)
{
  memset(img, 0, sizeof *img);
  /* The engine's own images have valid shapes: one that has not is an internal fault. */
  if (gpuimg_image_check_shape(width, height, channels, GPUIMG_EXIT_FAILURE, what) < 0)
    return -1;
  size_t bytes = gpuimg_image_bytes(width, height, channels);
  img->data = malloc(bytes);
  if (!img->data) {
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, what, "out of memory allocating %zu bytes", bytes);
    return -1;
  }
  img->width = width;
  img->height = height;
  img->channels = channels;
  return 0;
}

void gpuimg_image_free(gpuimg_image_t *img)
{
  if (!img)
    return;
  if (!img->borrowed)
    free(img->data);
  memset(img, 0, sizeof *img);
}

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int gpuimg_reduced_side(int side, int reduction)
{
  return reduction > 1 ? (int)(((int64_t)side + reduction - 1) / reduction) : side;
}

double gpuimg_median(double *v, int n)
{
  if (n <= 0)
    return 0.0;
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

static double clock_ms(clockid_t clock)
{
  struct timespec ts;
  if (clock_gettime(clock, &ts) < 0)
    return 0;
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

double gpuimg_now_ms(void)
{
  return clock_ms(CLOCK_MONOTONIC);
}

double gpuimg_cpu_time_ms(void)
{
  return clock_ms(CLOCK_PROCESS_CPUTIME_ID);
}
