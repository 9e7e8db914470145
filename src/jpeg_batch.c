/* jpeg_batch.c: one GPU's hardware JPEG decoder shared by batch workers, fed in batches.
 *
 * nvJPEG reaches the hardware decoder only through its batched API, and one call on a
 * batch of many images keeps the decoder's engines busy where many calls of one image each
 * (one per worker) queue behind each other. Requests wait in a list; the thread takes
 * everything of one channel count that is waiting, decodes it in one call and wakes the
 * requesters. No timer: a batch is whatever arrived while the previous one was decoding.
 * The thread's nvJPEG handle is also the parent of the workers' (gpuimg_nvjpeg_create_shared):
 * nvJPEG's library handles are made once per device, not once per worker. */
#include "jpeg_batch.h"

#ifdef GPUIMG_HAVE_NVJPEG
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuimg_kernels.h"

typedef struct request {
  const uint8_t *jpeg;
  size_t size;
  uint8_t *d_dst;
  int width, channels;
  int result; /* 0 decoded, 1 batch failed */
  int images; /* size of its batch */
  int done;
  struct request *next;
} request_t;

struct gpuimg_jpeg_batch {
  int device;
  int batching;       /* asked for; and the decoder has the hardware (after set-up) */
  gpuimg_nvjpeg_t *nj; /* the thread's handle: the parent of the workers' */
  pthread_t thread;
  pthread_mutex_t mu;
  pthread_cond_t work; /* a request arrived, or stop */
  pthread_cond_t done; /* a batch finished */
  request_t *head, *tail;
  int stop;
  int started;      /* the thread has set up (ok says how) */
  int ok;           /* 1: decoding; 0: set-up failed (error_code, error) */
  int error_code;
  char error[512];
  long batches, images;
  double busy_ms; /* inside the decoder's calls */
};

/* Takes up to GPUIMG_NVJPEG_MAX_BATCH waiting requests with the first one's channel count,
 * in arrival order, off the list (under mu). */
static int take_batch(gpuimg_jpeg_batch_t *jb, request_t **batch)
{
  int n = 0, channels = jb->head->channels;
  request_t **link = &jb->head;
  while (*link && n < GPUIMG_NVJPEG_MAX_BATCH) {
    request_t *r = *link;
    if (r->channels == channels) {
      batch[n++] = r;
      *link = r->next;
    } else {
      link = &r->next;
    }
  }
  jb->tail = NULL; /* the list is a few workers long */
  for (request_t *r = jb->head; r; r = r->next)
    jb->tail = r;
  return n;
}

static void *decoder_main(void *arg)
{
  gpuimg_jpeg_batch_t *jb = arg;
  gpuimg_cuda_t *ctx = gpuimg_cuda_create(jb->device);
  gpuimg_nvjpeg_t *nj = ctx ? gpuimg_nvjpeg_create(ctx, GPUIMG_NVJPEG_AUTO) : NULL;

  pthread_mutex_lock(&jb->mu);
  jb->started = 1;
  jb->ok = nj != NULL;
  jb->nj = nj;
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
      break; /* stop, with nothing waiting */
    request_t *batch[GPUIMG_NVJPEG_MAX_BATCH];
    int n = take_batch(jb, batch);
    pthread_mutex_unlock(&jb->mu);

    const uint8_t *jpegs[GPUIMG_NVJPEG_MAX_BATCH];
    size_t sizes[GPUIMG_NVJPEG_MAX_BATCH];
    uint8_t *dsts[GPUIMG_NVJPEG_MAX_BATCH];
    int widths[GPUIMG_NVJPEG_MAX_BATCH];
    for (int i = 0; i < n; i++) {
      jpegs[i] = batch[i]->jpeg;
      sizes[i] = batch[i]->size;
      dsts[i] = batch[i]->d_dst;
      widths[i] = batch[i]->width;
    }
    /* A failed batch is decoded again image by image by its requesters, each with its own
     * handle, which also says which image is bad and why. */
    double t0 = gpuimg_now_ms();
    int rc = gpuimg_nvjpeg_decode_batch(nj, n, jpegs, sizes, dsts, widths, batch[0]->channels);
    double t1 = gpuimg_now_ms();

    pthread_mutex_lock(&jb->mu);
    jb->batches++;
    jb->images += n;
    jb->busy_ms += t1 - t0;
    for (int i = 0; i < n; i++) {
      batch[i]->result = rc < 0 ? 1 : 0;
      batch[i]->images = n;
      batch[i]->done = 1;
    }
    pthread_cond_broadcast(&jb->done);
  }
  /* Set-up failed or stopping: no request may wait for ever. */
  for (request_t *r = jb->head; r; r = r->next) {
    r->result = 1;
    r->done = 1;
  }
  jb->head = jb->tail = NULL;
  jb->ok = 0;
  pthread_cond_broadcast(&jb->done);
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
  if (pthread_create(&jb->thread, NULL, decoder_main, jb) != 0) {
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, "", "cannot start the JPEG decoder thread");
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
    char msg[512];
    snprintf(msg, sizeof msg, "%s", jb->error);
    gpuimg_jpeg_batch_destroy(jb);
    gpuimg_error_set(code, "", "%s", msg);
    return NULL;
  }
  return jb;
}

int gpuimg_jpeg_batch_batching(const gpuimg_jpeg_batch_t *jb)
{
  return jb->batching;
}

gpuimg_nvjpeg_t *gpuimg_jpeg_batch_parent(gpuimg_jpeg_batch_t *jb)
{
  return jb->nj;
}

int gpuimg_jpeg_batch_decode(gpuimg_jpeg_batch_t *jb, const uint8_t *jpeg, size_t n,
                             uint8_t *d_dst, int width, int channels, int *images)
{
  request_t r = {jpeg, n, d_dst, width, channels, 0, 0, 0, NULL};
  pthread_mutex_lock(&jb->mu);
  if (!jb->ok) {
    pthread_mutex_unlock(&jb->mu);
    gpuimg_error_set(GPUIMG_EXIT_DEVICE, "", "the batch JPEG decoder has stopped");
    return -1;
  }
  if (jb->tail)
    jb->tail->next = &r;
  else
    jb->head = &r;
  jb->tail = &r;
  pthread_cond_signal(&jb->work);
  while (!r.done)
    pthread_cond_wait(&jb->done, &jb->mu);
  pthread_mutex_unlock(&jb->mu);
  if (images)
    *images = r.images;
  return r.result;
}

void gpuimg_jpeg_batch_counts(gpuimg_jpeg_batch_t *jb, long *batches, long *images,
                              double *busy_ms)
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
gpuimg_jpeg_batch_t *gpuimg_jpeg_batch_create(int device, int batching)
{
  (void)device, (void)batching;
  gpuimg_error_set(GPUIMG_EXIT_DEVICE, "", "this gpuimg was built without nvJPEG");
  return NULL;
}

int gpuimg_jpeg_batch_decode(gpuimg_jpeg_batch_t *jb, const uint8_t *jpeg, size_t n,
                             uint8_t *d_dst, int width, int channels, int *images)
{
  (void)jb, (void)jpeg, (void)n, (void)d_dst, (void)width, (void)channels, (void)images;
  gpuimg_error_set(GPUIMG_EXIT_DEVICE, "", "this gpuimg was built without nvJPEG");
  return -1;
}

int gpuimg_jpeg_batch_batching(const gpuimg_jpeg_batch_t *jb)
{
  (void)jb;
  return 0;
}

void gpuimg_jpeg_batch_counts(gpuimg_jpeg_batch_t *jb, long *batches, long *images,
                              double *busy_ms)
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
