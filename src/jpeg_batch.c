/* jpeg_batch.c: one thread per GPU that does all of batch mode's nvJPEG work, decoding in batches.
 *
 * nvJPEG reaches the hardware decoder only through its batched API, and one call on many
 * images keeps the decoder's engines busy where many calls of one image each queue behind
 * each other: on an H200, 0.50 ms for one 1024x768 image, 1.7 ms for 16. Requests wait in a
 * list; the thread takes everything waiting, answers header requests, decodes what the
 * hardware decoder takes in one call per channel count (up to GPUIMG_NVJPEG_MAX_BATCH
 * images), the rest one by one with nvJPEG's single-image path (which also finds which
 * image of a failed batch is bad, and why), then encodes, and wakes the requesters. No
 * timer: a batch is whatever arrived while the previous one was being worked on. */
#include "jpeg_batch.h"

#ifdef GPUIMG_HAVE_NVJPEG
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuimg_kernels.h"

typedef enum { REQ_INFO, REQ_DECODE, REQ_ENCODE } req_kind_t;

typedef struct request {
  req_kind_t kind;
  const uint8_t *jpeg; /* info, decode */
  size_t size;
  const char *what;
  uint64_t max_pixels; /* info */
  uint8_t *d_img;      /* decode: destination; encode: source */
  int width, height, channels;
  int quality;  /* encode */
  uint8_t *out; /* encode: the file's bytes (malloc'd) */
  size_t out_size;
  int rc; /* 0, or -1 with code and msg */
  int code;
  char msg[1024];
  int done;
  struct request *next;
} request_t;

struct gpuimg_jpeg_batch {
  int device;
  int batching; /* asked for; and the device has the hardware decoder (after set-up) */
  pthread_t thread;
  pthread_mutex_t mu;
  pthread_cond_t work; /* a request arrived, or stop */
  pthread_cond_t done; /* requests finished, or the set-up */
  request_t *head, *tail;
  int stop;
  int started; /* the thread has set up (ok says how) */
  int ok;      /* 1: serving; 0: set-up failed (error_code, error) or stopped */
  int error_code;
  char error[1024];
  long batches, images;
  double busy_ms;
};

/* The thread's error, now the request's. */
static void fail(request_t *r)
{
  r->rc = -1;
  r->code = gpuimg_error_code();
  snprintf(r->msg, sizeof r->msg, "%s", gpuimg_error_message());
  gpuimg_error_clear();
}

static void do_info(gpuimg_nvjpeg_t *nj, request_t *r)
{
  if (gpuimg_nvjpeg_info(nj, r->jpeg, r->size, r->what, &r->width, &r->height, &r->channels) < 0)
    return fail(r);
  if ((uint64_t)r->width * (uint64_t)r->height > r->max_pixels) {
    gpuimg_error_set(GPUIMG_EXIT_INPUT, r->what, "image is %dx%d, over the limit of %llu pixels",
                     r->width, r->height, (unsigned long long)r->max_pixels);
    fail(r);
  }
}

static void do_decode_alone(gpuimg_nvjpeg_t *nj, request_t *r)
{
  int w, h, c;
  /* The header again: the caller's sizes must be this JPEG's (its buffer was sized so). */
  if (gpuimg_nvjpeg_info(nj, r->jpeg, r->size, r->what, &w, &h, &c) < 0)
    return fail(r);
  if (w != r->width || h != r->height) {
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, r->what, "JPEG is %dx%d, not the %dx%d asked for", w, h,
                     r->width, r->height);
    return fail(r);
  }
  if (gpuimg_nvjpeg_decode_device(nj, r->jpeg, r->size, r->what, r->d_img, r->channels, NULL) < 0)
    fail(r);
}

/* Decodes n requests of one channel count in one call to the hardware decoder; a failed
 * call is retried image by image. */
static void do_decode_call(gpuimg_jpeg_batch_t *jb, gpuimg_nvjpeg_t *nj, request_t **rs, int n)
{
  const uint8_t *jpegs[GPUIMG_NVJPEG_MAX_BATCH] = {0};
  size_t sizes[GPUIMG_NVJPEG_MAX_BATCH] = {0};
  uint8_t *dsts[GPUIMG_NVJPEG_MAX_BATCH] = {0};
  int widths[GPUIMG_NVJPEG_MAX_BATCH] = {0};
  for (int i = 0; i < n; i++) {
    jpegs[i] = rs[i]->jpeg;
    sizes[i] = rs[i]->size;
    dsts[i] = rs[i]->d_img;
    widths[i] = rs[i]->width;
  }
  if (gpuimg_nvjpeg_decode_batch(nj, n, jpegs, sizes, dsts, widths, rs[0]->channels) == 0) {
    jb->batches++; /* only the thread writes the counts; read under mu after it stops */
    jb->images += n;
    return;
  }
  gpuimg_error_clear();
  for (int i = 0; i < n; i++)
    do_decode_alone(nj, rs[i]);
}

/* Decodes n requests in calls of 32, 16, 8, 4, 2 and 1 images: nvJPEG's batch state is
 * made for one batch size, and making one costs tens of milliseconds, so the thread keeps
 * one per power of two instead of one per size. */
static void do_decode_batch(gpuimg_jpeg_batch_t *jb, gpuimg_nvjpeg_t *nj, request_t **rs, int n)
{
  for (int size = GPUIMG_NVJPEG_MAX_BATCH; n > 0; size /= 2)
    while (n >= size) {
      do_decode_call(jb, nj, rs, size);
      rs += size;
      n -= size;
    }
}

static void do_encode(gpuimg_nvjpeg_t *nj, request_t *r)
{
  if (gpuimg_nvjpeg_encode_device(nj, r->d_img, r->width, r->height, r->channels, r->quality,
                                  r->what, &r->out, &r->out_size, NULL) < 0)
    fail(r);
}

/* Everything taken off the list at once: headers, then decodes, then encodes. */
static void serve(gpuimg_jpeg_batch_t *jb, gpuimg_nvjpeg_t *nj, request_t *list)
{
  request_t *batch[2][GPUIMG_NVJPEG_MAX_BATCH];
  int nbatch[2] = {0, 0};
  for (request_t *r = list; r; r = r->next)
    if (r->kind == REQ_INFO)
      do_info(nj, r);
  for (request_t *r = list; r; r = r->next) {
    if (r->kind != REQ_DECODE)
      continue;
    int k = r->channels == 3;
    if (!jb->batching || !gpuimg_nvjpeg_hw_supported(nj, r->jpeg, r->size)) {
      do_decode_alone(nj, r);
      continue;
    }
    batch[k][nbatch[k]++] = r;
    if (nbatch[k] == GPUIMG_NVJPEG_MAX_BATCH) {
      do_decode_batch(jb, nj, batch[k], nbatch[k]);
      nbatch[k] = 0;
    }
  }
  for (int k = 0; k < 2; k++)
    if (nbatch[k])
      do_decode_batch(jb, nj, batch[k], nbatch[k]);
  for (request_t *r = list; r; r = r->next)
    if (r->kind == REQ_ENCODE)
      do_encode(nj, r);
}

static void *service_main(void *arg)
{
  gpuimg_jpeg_batch_t *jb = arg;
  gpuimg_cuda_t *ctx = gpuimg_cuda_create(jb->device);
  gpuimg_nvjpeg_t *nj = ctx ? gpuimg_nvjpeg_create(ctx, GPUIMG_NVJPEG_AUTO) : NULL;

  pthread_mutex_lock(&jb->mu);
  jb->started = 1;
  jb->ok = nj != NULL;
  jb->batching = jb->batching && nj && gpuimg_nvjpeg_hardware(nj, NULL);
  if (!nj) {
    jb->error_code = gpuimg_error_code();
    snprintf(jb->error, sizeof jb->error, "%s", gpuimg_error_message());
  }
  pthread_cond_broadcast(&jb->done);
  while (jb->ok) {
    while (!jb->head && !jb->stop)
      pthread_cond_wait(&jb->work, &jb->mu);
    if (!jb->head)
      break; /* stopping, with nothing waiting */
    request_t *list = jb->head;
    jb->head = jb->tail = NULL;
    pthread_mutex_unlock(&jb->mu);

    double t0 = gpuimg_now_ms();
    serve(jb, nj, list);
    double t1 = gpuimg_now_ms();

    pthread_mutex_lock(&jb->mu);
    jb->busy_ms += t1 - t0;
    for (request_t *r = list; r; r = r->next)
      r->done = 1; /* requesters look under mu: r stays valid until it is released */
    pthread_cond_broadcast(&jb->done);
  }
  jb->ok = 0;
  pthread_mutex_unlock(&jb->mu);
  gpuimg_nvjpeg_destroy(nj);
  gpuimg_cuda_destroy(ctx);
  return NULL;
}

gpuimg_jpeg_batch_t *gpuimg_jpeg_batch_create(int device, int batching)
{
  gpuimg_jpeg_batch_t *jb = calloc(1, sizeof *jb);
  if (!jb) {
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, "", "out of memory");
    return NULL;
  }
  jb->device = device;
  jb->batching = batching;
  pthread_mutex_init(&jb->mu, NULL);
  pthread_cond_init(&jb->work, NULL);
  pthread_cond_init(&jb->done, NULL);
  if (pthread_create(&jb->thread, NULL, service_main, jb) != 0) {
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, "", "cannot start the nvJPEG thread");
    pthread_mutex_destroy(&jb->mu);
    pthread_cond_destroy(&jb->work);
    pthread_cond_destroy(&jb->done);
    free(jb);
    return NULL;
  }
  pthread_mutex_lock(&jb->mu);
  while (!jb->started)
    pthread_cond_wait(&jb->done, &jb->mu);
  int ok = jb->ok;
  pthread_mutex_unlock(&jb->mu);
  if (!ok) {
    int code = jb->error_code;
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", jb->error);
    gpuimg_jpeg_batch_destroy(jb);
    gpuimg_error_set(code, "", "%s", msg);
    return NULL;
  }
  return jb;
}

/* Queues r, waits for it, and sets its error in this thread. */
static int submit(gpuimg_jpeg_batch_t *jb, request_t *r)
{
  r->next = NULL;
  r->done = 0;
  pthread_mutex_lock(&jb->mu);
  if (!jb->ok) {
    pthread_mutex_unlock(&jb->mu);
    gpuimg_error_set(GPUIMG_EXIT_DEVICE, r->what, "the nvJPEG thread has stopped");
    return -1;
  }
  if (jb->tail)
    jb->tail->next = r;
  else
    jb->head = r;
  jb->tail = r;
  pthread_cond_signal(&jb->work);
  while (!r->done)
    pthread_cond_wait(&jb->done, &jb->mu);
  pthread_mutex_unlock(&jb->mu);
  if (r->rc < 0) {
    gpuimg_error_set(r->code, "", "%s", r->msg);
    return -1;
  }
  return 0;
}

int gpuimg_jpeg_batch_info(gpuimg_jpeg_batch_t *jb, const uint8_t *jpeg, size_t n, const char *what,
                           uint64_t max_pixels, int *width, int *height, int *channels)
{
  request_t r;
  memset(&r, 0, sizeof r);
  r.kind = REQ_INFO;
  r.jpeg = jpeg;
  r.size = n;
  r.what = what;
  r.max_pixels = max_pixels;
  if (submit(jb, &r) < 0)
    return -1;
  *width = r.width;
  *height = r.height;
  *channels = r.channels;
  return 0;
}

int gpuimg_jpeg_batch_decode(gpuimg_jpeg_batch_t *jb, const uint8_t *jpeg, size_t n,
                             const char *what, uint8_t *d_dst, int width, int height, int channels)
{
  request_t r;
  memset(&r, 0, sizeof r);
  r.kind = REQ_DECODE;
  r.jpeg = jpeg;
  r.size = n;
  r.what = what;
  r.d_img = d_dst;
  r.width = width;
  r.height = height;
  r.channels = channels;
  return submit(jb, &r);
}

int gpuimg_jpeg_batch_encode(gpuimg_jpeg_batch_t *jb, const uint8_t *d_src, int width, int height,
                             int channels, int quality, const char *what, uint8_t **out,
                             size_t *out_size)
{
  request_t r;
  memset(&r, 0, sizeof r);
  r.kind = REQ_ENCODE;
  r.what = what;
  r.d_img = (uint8_t *)d_src; /* read only */
  r.width = width;
  r.height = height;
  r.channels = channels;
  r.quality = quality;
  *out = NULL;
  *out_size = 0;
  if (submit(jb, &r) < 0)
    return -1;
  *out = r.out;
  *out_size = r.out_size;
  return 0;
}

void gpuimg_jpeg_batch_counts(gpuimg_jpeg_batch_t *jb, long *batches, long *images, double *busy_ms)
{
  pthread_mutex_lock(&jb->mu);
  *batches = jb->batches;
  *images = jb->images;
  *busy_ms = jb->busy_ms;
  pthread_mutex_unlock(&jb->mu);
}

void gpuimg_jpeg_batch_destroy(gpuimg_jpeg_batch_t *jb)
{
  if (!jb)
    return;
  pthread_mutex_lock(&jb->mu);
  jb->stop = 1;
  pthread_cond_broadcast(&jb->work);
  pthread_mutex_unlock(&jb->mu);
  pthread_join(jb->thread, NULL);
  pthread_mutex_destroy(&jb->mu);
  pthread_cond_destroy(&jb->work);
  pthread_cond_destroy(&jb->done);
  free(jb);
}
#else
static int no_nvjpeg(void)
{
  gpuimg_error_set(GPUIMG_EXIT_DEVICE, "", "this gpuimg was built without nvJPEG");
  return -1;
}

gpuimg_jpeg_batch_t *gpuimg_jpeg_batch_create(int device, int batching)
{
  (void)device, (void)batching;
  no_nvjpeg();
  return NULL;
}

int gpuimg_jpeg_batch_info(gpuimg_jpeg_batch_t *jb, const uint8_t *jpeg, size_t n, const char *what,
                           uint64_t max_pixels, int *width, int *height, int *channels)
{
  (void)jb, (void)jpeg, (void)n, (void)what, (void)max_pixels, (void)width, (void)height,
      (void)channels;
  return no_nvjpeg();
}

int gpuimg_jpeg_batch_decode(gpuimg_jpeg_batch_t *jb, const uint8_t *jpeg, size_t n,
                             const char *what, uint8_t *d_dst, int width, int height, int channels)
{
  (void)jb, (void)jpeg, (void)n, (void)what, (void)d_dst, (void)width, (void)height, (void)channels;
  return no_nvjpeg();
}

int gpuimg_jpeg_batch_encode(gpuimg_jpeg_batch_t *jb, const uint8_t *d_src, int width, int height,
                             int channels, int quality, const char *what, uint8_t **out,
                             size_t *out_size)
{
  (void)jb, (void)d_src, (void)width, (void)height, (void)channels, (void)quality, (void)what;
  *out = NULL;
  *out_size = 0;
  return no_nvjpeg();
}

void gpuimg_jpeg_batch_counts(gpuimg_jpeg_batch_t *jb, long *batches, long *images, double *busy_ms)
{
  (void)jb;
  *batches = *images = 0;
  *busy_ms = 0;
}

void gpuimg_jpeg_batch_destroy(gpuimg_jpeg_batch_t *jb)
{
  (void)jb;
}
#endif
