/* jpeg_batch.c: per GPU, the threads that do all of batch mode's nvJPEG work, decoding in batches.
 *
 * nvJPEG reaches the hardware decoder only through its batched API, and one call on many
 * images keeps the decoder's engines busy where many calls of one image each queue behind
 * each other: on an H200, 0.50 ms for one 1024x768 image, 1.7 ms for 16. And nvJPEG's
 * handles and states are slow to create (0.3-1.2 s, serialised across threads), so a few
 * threads per device serve every worker: decoders, each with its own hardware-decoder handle
 * (and nvJPEG's DEFAULT handle only once a JPEG needs the CUDA decoder), and encoders sharing
 * one DEFAULT handle, each thread with its own CUDA stream and nvJPEG states, so that encodes
 * do not wait behind decodes.
 * GPUIMG_JPEG_DECODERS and GPUIMG_JPEG_ENCODERS (1..8, default 2 decoders and 4 encoders) set how
 * many of each: on an H200 one encoder thread takes about 0.29 ms per 1024x768 image, and with
 * the host's workers idle the device path ran blur -> JPEG at 6,300-7,300 img/s with 2 and 4,
 * 4,800-5,900 with 1 and 2 (2026-12-02). Requests wait in each thread's list;
 * a request goes to the thread of its kind, among those set up, with the fewest waiting; the
 * thread takes everything waiting, works through it and wakes each requester. The
 * decoder reads every header, decodes what the hardware decoder takes in calls of up to 32 images
 * per channel count, and the rest one by one with nvJPEG's single-image path (which also finds
 * which image of a failed batch is bad, and why). No timer: a batch is whatever arrived while the
 * previous one was being worked on.
 */
#include "jpeg_batch.h"

#include "codec.h"
#include "files.h"
#include "options.h"

#ifdef GPUIMG_HAVE_NVJPEG
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_context.h"
#include "nvjpeg_gpu.h"

typedef enum { REQ_DECODE, REQ_ENCODE } req_kind_t;

typedef struct request {
  req_kind_t kind;
  const uint8_t *jpeg; /* decode */
  size_t size;
  const char *what;
  uint64_t max_pixels; /* decode */
  uint8_t *d_img;      /* decode: destination (cap bytes); encode: source */
  size_t cap;
  int width, height, channels;
  int quality;  /* encode */
  uint8_t *out; /* encode: the file's bytes (malloc'd) */
  size_t out_size;
  int rc; /* 0; 1: decode needs a larger buffer; -1 with code and msg */
  int code;
  char msg[1024];
  int done;
  pthread_cond_t cv; /* done */
  struct request *next;
  double t_submit, t_taken, t_done; /* queued, taken by its thread, finished (gpuimg_now_ms) */
} request_t;

/* One thread, its list and its nvJPEG handle. */
typedef struct lane {
  gpuimg_jpeg_batch_t *jb;
  gpuimg_nvjpeg_backend_t backend;
  pthread_t thread;
  int created;
  pthread_mutex_t mu;
  pthread_cond_t work; /* a request arrived, stop, or (to the creator) set up */
  request_t *head, *tail;
  int stop;
  int queued;  /* requests in its list */
  int started; /* the thread has set up (ok says how); set under mu, also read atomically */
  /* The lane whose set-up this one's waits for (NULL: the first): they set up one at a
   * time, the first decoder, the first encoder, then the others in turns (decoder, encoder,
   * ...), so that the first decode and the first encode wait for two set-ups, not for every
   * decoder's. */
  struct lane *after;
  /* 1: serving; 0: set-up failed (error_code, error) or stopped; set under mu before started,
   * also read atomically */
  int ok;
  int hardware;
  gpuimg_nvjpeg_t *nj; /* while serving; the first encoder's, for the others to share (under mu) */
  int error_code;
  char error[1024];
  double busy_ms, setup_ms;
  double t_ready; /* when it set up (gpuimg_now_ms), and serving if ok */
  /* A decoder's work by kind, in ms (GPUIMG_JPEG_DEBUG's last line): reading headers and
   * asking whether the hardware takes each JPEG, calls of the batched hardware decoder,
   * single-image decodes; its own thread's, no lock. */
  double header_ms, call_ms, alone_ms;
  /* Over its requests: waiting in its list, being served, and from done until the requester
   * ran again (its wake-up), in ms; and how many. */
  double queued_ms, served_ms, woken_ms;
  long requests;
} lane_t;

/* Lanes 0 .. ndecoders-1 decode, the others encode. */
enum { LANE_DECODE, MAX_DECODERS = 8, MAX_ENCODERS = 8, MAX_LANES = MAX_DECODERS + MAX_ENCODERS };

struct gpuimg_jpeg_batch {
  int device;
  int batching; /* asked for */
  int nlanes, ndecoders;
  lane_t lanes[MAX_LANES];
  long batches, images; /* under lanes[LANE_DECODE].mu */
};

/* The thread's error, now the request's. */
static void fail(request_t *r)
{
  r->rc = -1;
  r->code = gpuimg_error_code();
  snprintf(r->msg, sizeof r->msg, "%s", gpuimg_error_message());
  gpuimg_error_clear();
}

/* The header: sizes into r, and whether r->cap holds the pixels (rc 1 if not). */
static int do_header(gpuimg_nvjpeg_t *nj, request_t *r)
{
  if (gpuimg_nvjpeg_info(nj, r->jpeg, r->size, r->what, &r->width, &r->height, &r->channels) < 0) {
    fail(r);
    return -1;
  }
  if ((uint64_t)r->width * (uint64_t)r->height > r->max_pixels) {
    gpuimg_error_set(GPUIMG_EXIT_INPUT, r->what, "image is %dx%d, over the limit of %llu pixels",
                     r->width, r->height, (unsigned long long)r->max_pixels);
    fail(r);
    return -1;
  }
  if (gpuimg_image_bytes(r->width, r->height, r->channels) > r->cap) {
    r->rc = 1;
    return -1;
  }
  return 0;
}

static void do_decode_alone(gpuimg_nvjpeg_t *nj, request_t *r)
{
  if (gpuimg_nvjpeg_decode_device(nj, r->jpeg, r->size, r->what, r->d_img, r->channels, NULL) < 0)
    fail(r);
}

/* Hands r back to its requester as soon as it is done, not at the end of the serve it came
 * in, so that the requester goes on while the thread works through the others. r is the
 * requester's once mu is released: nothing touches it after. */
static void complete(lane_t *lane, request_t *r)
{
  pthread_mutex_lock(&lane->mu);
  r->t_done = gpuimg_now_ms();
  r->done = 1;
  pthread_cond_signal(&r->cv);
  pthread_mutex_unlock(&lane->mu);
}

/* Decodes n requests of one channel count in one call to the hardware decoder (a failed
 * call is retried image by image), and completes them. */
static void do_decode_call(lane_t *lane, gpuimg_nvjpeg_t *nj, request_t **rs, int n)
{
  gpuimg_jpeg_batch_t *jb = lane->jb;
  double t0 = gpuimg_now_ms();
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
    lane_t *first = &jb->lanes[LANE_DECODE]; /* the counts are read under its lock */
    pthread_mutex_lock(&first->mu);
    jb->batches++;
    jb->images += n;
    pthread_mutex_unlock(&first->mu);
  } else {
    gpuimg_error_clear();
    for (int i = 0; i < n; i++)
      do_decode_alone(nj, rs[i]);
  }
  lane->call_ms += gpuimg_now_ms() - t0;
  for (int i = 0; i < n; i++)
    complete(lane, rs[i]);
}

static void serve(lane_t *lane, gpuimg_nvjpeg_t *nj, request_t *list)
{
  gpuimg_jpeg_batch_t *jb = lane->jb;
  request_t *batch[2][GPUIMG_NVJPEG_MAX_BATCH];
  int nbatch[2] = {0, 0};
  for (request_t *r = list, *next; r; r = next) {
    next = r->next; /* read before r is completed */
    if (r->kind == REQ_ENCODE) {
      if (gpuimg_nvjpeg_encode_device(nj, r->d_img, r->width, r->height, r->channels, r->quality,
                                      r->what, &r->out, &r->out_size, NULL) < 0)
        fail(r);
      complete(lane, r);
      continue;
    }
    double t0 = gpuimg_now_ms();
    int header = do_header(nj, r);
    int hw = header == 0 && jb->batching && lane->hardware &&
             gpuimg_nvjpeg_hw_supported(nj, r->jpeg, r->size);
    double t1 = gpuimg_now_ms();
    lane->header_ms += t1 - t0;
    if (header == 0 && !hw) {
      do_decode_alone(nj, r);
      lane->alone_ms += gpuimg_now_ms() - t1;
    }
    if (!hw) {
      complete(lane, r);
      continue;
    }
    int k = r->channels == 3;
    batch[k][nbatch[k]++] = r;
    if (nbatch[k] == GPUIMG_NVJPEG_MAX_BATCH) {
      do_decode_call(lane, nj, batch[k], nbatch[k]);
      nbatch[k] = 0;
    }
  }
  for (int k = 0; k < 2; k++)
    if (nbatch[k])
      do_decode_call(lane, nj, batch[k], nbatch[k]);
}

/* The lane's kind, for GPUIMG_JPEG_DEBUG's lines on standard error. */
static const char *lane_kind(const lane_t *lane)
{
  return lane->backend == GPUIMG_NVJPEG_CUDA ? "encoder" : "decoder";
}

/* The thread's nvJPEG handle on ctx: an encoder after the first shares the first one's
 * library handle (made once, not once per encoder; it set up before this one), taken under
 * its lock so that it cannot go meanwhile. */
static gpuimg_nvjpeg_t *lane_nvjpeg(lane_t *lane, gpuimg_cuda_t *ctx)
{
  lane_t *first = &lane->jb->lanes[lane->jb->ndecoders];
  if (lane->backend != GPUIMG_NVJPEG_CUDA || lane == first)
    return gpuimg_nvjpeg_create(ctx, lane->backend);
  pthread_mutex_lock(&first->mu);
  gpuimg_nvjpeg_t *nj =
      first->nj ? gpuimg_nvjpeg_create_sharing(ctx, lane->backend, first->nj) : NULL;
  int shared = first->nj != NULL;
  pthread_mutex_unlock(&first->mu);
  return shared ? nj : gpuimg_nvjpeg_create(ctx, lane->backend);
}

/* The thread's CUDA context (*ctx) and nvJPEG handle; NULL with the error set. */
static gpuimg_nvjpeg_t *lane_setup(lane_t *lane, gpuimg_cuda_t **ctx, int debug)
{
  double t0 = gpuimg_now_ms();
  *ctx = gpuimg_cuda_create(lane->jb->device);
  double t1 = gpuimg_now_ms();
  gpuimg_nvjpeg_t *nj = *ctx ? lane_nvjpeg(lane, *ctx) : NULL;
  if (debug)
    fprintf(stderr, "gpuimg: nvjpeg %s thread set-up: context %.1f ms, handles %.1f ms\n",
            lane_kind(lane), t1 - t0, gpuimg_now_ms() - t1);
  return nj;
}

/* Waits until the lane before this one in the set-up order has set up: nvJPEG's handles come
 * one after another however many threads ask at once (three lanes starting together were ready
 * after 0.5, 1.1 and 1.5 s on an H200, the decoder last), so the first decoder, which every
 * image needs first, sets up first, then the first encoder, then the others (lane->after).
 * 1 when this lane is to stop instead (gpuimg_jpeg_batch_destroy() came first). */
static int wait_previous(lane_t *lane)
{
  lane_t *prev = lane->after;
  if (prev) {
    pthread_mutex_lock(&prev->mu);
    while (!prev->started)
      pthread_cond_wait(&prev->work, &prev->mu);
    pthread_mutex_unlock(&prev->mu);
  }
  pthread_mutex_lock(&lane->mu);
  int stop = lane->stop;
  pthread_mutex_unlock(&lane->mu);
  return stop;
}

static void *lane_main(void *arg)
{
  lane_t *lane = arg;
  gpuimg_thread_name(lane->backend == GPUIMG_NVJPEG_CUDA ? "gpuimg-jpegenc" : "gpuimg-jpegdec");
  double t_setup = gpuimg_now_ms();
  int debug = getenv("GPUIMG_JPEG_DEBUG") != NULL, serves = 0;
  gpuimg_cuda_t *ctx = NULL;
  gpuimg_nvjpeg_t *nj = NULL;
  if (!wait_previous(lane))
    nj = lane_setup(lane, &ctx, debug);
  else
    gpuimg_error_set(GPUIMG_EXIT_DEVICE, "", "the nvJPEG threads were stopped during set-up");

  pthread_mutex_lock(&lane->mu);
  lane->t_ready = gpuimg_now_ms();
  lane->setup_ms = lane->t_ready - t_setup;
  __atomic_store_n(&lane->ok, nj != NULL, __ATOMIC_RELAXED);
  __atomic_store_n(&lane->started, 1, __ATOMIC_RELEASE); /* after ok: lane_state() */
  lane->nj = nj;
  lane->hardware = nj && gpuimg_nvjpeg_hardware(nj, NULL);
  if (!nj) {
    lane->error_code = gpuimg_error_code();
    snprintf(lane->error, sizeof lane->error, "%s", gpuimg_error_message());
  }
  pthread_cond_broadcast(&lane->work);
  while (lane->ok) {
    while (!lane->head && !lane->stop)
      pthread_cond_wait(&lane->work, &lane->mu);
    if (!lane->head)
      break; /* stopping, with nothing waiting */
    request_t *list = lane->head;
    lane->head = lane->tail = NULL;
    __atomic_store_n(&lane->queued, 0, __ATOMIC_RELAXED);
    double t0 = gpuimg_now_ms();
    int n = 0; /* counted now: a request is its requester's once completed */
    for (request_t *r = list; r; r = r->next, n++)
      r->t_taken = t0;
    pthread_mutex_unlock(&lane->mu);

    serve(lane, nj, list);
    double t1 = gpuimg_now_ms();
    if (debug && serves++ < 40)
      fprintf(stderr, "gpuimg: nvjpeg %s thread: at %.1f ms %d requests in %.2f ms\n",
              lane_kind(lane), t0 - t_setup, n, t1 - t0);

    pthread_mutex_lock(&lane->mu);
    lane->busy_ms += t1 - t0; /* serve() completed every request of the list */
  }
  __atomic_store_n(&lane->ok, 0, __ATOMIC_RELAXED);
  lane->nj = NULL;
  pthread_mutex_unlock(&lane->mu);
  if (debug && nj && lane->backend != GPUIMG_NVJPEG_CUDA)
    fprintf(stderr,
            "gpuimg: nvjpeg decoder thread: busy %.1f ms: headers %.1f, batched calls %.1f, "
            "single images %.1f\n",
            lane->busy_ms, lane->header_ms, lane->call_ms, lane->alone_ms);
  double t0 = gpuimg_now_ms();
  gpuimg_nvjpeg_destroy(nj);
  gpuimg_cuda_destroy(ctx);
  if (debug)
    fprintf(stderr, "gpuimg: nvjpeg %s thread teardown: %.1f ms\n", lane_kind(lane),
            gpuimg_now_ms() - t0);
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
  jb->ndecoders = gpuimg_env_int("GPUIMG_JPEG_DECODERS", 2, 1, MAX_DECODERS);
  int nencoders = gpuimg_env_int("GPUIMG_JPEG_ENCODERS", 4, 1, MAX_ENCODERS);
  jb->nlanes = jb->ndecoders + nencoders;
  int order[MAX_LANES]; /* lane numbers in set-up order: decoder, encoder, decoder, ... */
  for (int k = 0, d = 0, e = 0; k < jb->nlanes; k++)
    order[k] = (e >= nencoders || (d <= e && d < jb->ndecoders)) ? d++ : jb->ndecoders + e++;
  /* The threads set up while the caller goes on (0.75-1.9 s on an H200); a request
   * waits for its thread's set-up. They take no SIGINT, SIGTERM or SIGHUP (files.c). */
  for (int i = 0; i < jb->nlanes; i++) {
    lane_t *lane = &jb->lanes[i];
    lane->jb = jb;
    lane->backend = i < jb->ndecoders ? GPUIMG_NVJPEG_AUTO : GPUIMG_NVJPEG_CUDA;
    jb->lanes[order[i]].after = i ? &jb->lanes[order[i - 1]] : NULL;
    pthread_mutex_init(&lane->mu, NULL);
    pthread_cond_init(&lane->work, NULL);
  }
  /* None after one that did not start: it would wait for that one's set-up (wait_previous). */
  int ok = 1;
  for (int i = 0; ok && i < jb->nlanes; i++) {
    lane_t *lane = &jb->lanes[order[i]];
    ok = lane->created = gpuimg_thread_start(&lane->thread, lane_main, lane) == 0;
  }
  if (!ok) {
    gpuimg_jpeg_batch_destroy(jb);
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, "", "cannot start an nvJPEG thread");
    return NULL;
  }
  return jb;
}

/* The lane's state for gpuimg_jpeg_lane_pick(), read atomically without its lock (ok is
 * stored before started). */
static int lane_state(lane_t *lane)
{
  if (!__atomic_load_n(&lane->started, __ATOMIC_ACQUIRE))
    return GPUIMG_LANE_SETTING_UP;
  return __atomic_load_n(&lane->ok, __ATOMIC_RELAXED) ? GPUIMG_LANE_SERVING : GPUIMG_LANE_FAILED;
}

/* The lane for r among the decoders or the encoders, by gpuimg_jpeg_lane_pick() on their
 * states and waiting counts (read without their locks: a stale count only makes a worse
 * choice). */
static lane_t *lane_for(gpuimg_jpeg_batch_t *jb, const request_t *r)
{
  int lo = r->kind == REQ_ENCODE ? jb->ndecoders : 0;
  int n = r->kind == REQ_ENCODE ? jb->nlanes - jb->ndecoders : jb->ndecoders;
  int state[MAX_LANES], queued[MAX_LANES];
  for (int i = 0; i < n; i++) {
    state[i] = lane_state(&jb->lanes[lo + i]);
    queued[i] = __atomic_load_n(&jb->lanes[lo + i].queued, __ATOMIC_RELAXED);
  }
  return &jb->lanes[lo + gpuimg_jpeg_lane_pick(n, state, queued)];
}

/* Queues r on its lane, waits for it, and sets its error in this thread. */
static int submit(gpuimg_jpeg_batch_t *jb, request_t *r)
{
  lane_t *lane = lane_for(jb, r);
  r->next = NULL;
  r->done = 0;
  pthread_cond_init(&r->cv, NULL);
  pthread_mutex_lock(&lane->mu);
  while (!lane->started)
    pthread_cond_wait(&lane->work, &lane->mu);
  r->t_submit = gpuimg_now_ms(); /* the set-up's wait is jpeg_setup_ms's */
  if (!lane->ok) {
    /* Its set-up failed: nvJPEG's or CUDA's message, for every image. */
    int code = lane->error_code ? lane->error_code : GPUIMG_EXIT_DEVICE;
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", lane->error[0] ? lane->error : "the nvJPEG thread has stopped");
    pthread_mutex_unlock(&lane->mu);
    pthread_cond_destroy(&r->cv);
    gpuimg_error_set(code, "", "%s", msg);
    return -1;
  }
  if (lane->tail)
    lane->tail->next = r;
  else
    lane->head = r;
  lane->tail = r;
  __atomic_store_n(&lane->queued, lane->queued + 1, __ATOMIC_RELAXED);
  pthread_cond_signal(&lane->work);
  while (!r->done)
    pthread_cond_wait(&r->cv, &lane->mu);
  lane->queued_ms += r->t_taken - r->t_submit;
  lane->served_ms += r->t_done - r->t_taken;
  lane->woken_ms += gpuimg_now_ms() - r->t_done;
  lane->requests++;
  pthread_mutex_unlock(&lane->mu);
  pthread_cond_destroy(&r->cv);
  if (r->rc < 0) {
    gpuimg_error_set(r->code, "", "%s", r->msg);
    return -1;
  }
  return r->rc;
}

int gpuimg_jpeg_batch_decode(gpuimg_jpeg_batch_t *jb, const uint8_t *jpeg, size_t n,
                             const char *what, uint64_t max_pixels, uint8_t *d_dst, size_t cap,
                             int *width, int *height, int *channels)
{
  request_t r;
  memset(&r, 0, sizeof r);
  r.kind = REQ_DECODE;
  r.jpeg = jpeg;
  r.size = n;
  r.what = what;
  r.max_pixels = max_pixels;
  r.d_img = d_dst;
  r.cap = cap;
  int rc = submit(jb, &r);
  if (rc >= 0) {
    *width = r.width;
    *height = r.height;
    *channels = r.channels;
  }
  return rc;
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

void gpuimg_jpeg_batch_counts(gpuimg_jpeg_batch_t *jb, long *batches, long *images, double *busy_ms,
                              double *serving_ms, double *setup_ms)
{
  double now = gpuimg_now_ms();
  busy_ms[0] = busy_ms[1] = serving_ms[0] = serving_ms[1] = *setup_ms = 0;
  for (int i = 0; i < jb->nlanes; i++) {
    pthread_mutex_lock(&jb->lanes[i].mu);
    busy_ms[i >= jb->ndecoders] += jb->lanes[i].busy_ms;
    if (jb->lanes[i].ok)
      serving_ms[i >= jb->ndecoders] += now - jb->lanes[i].t_ready;
    if (jb->lanes[i].setup_ms > *setup_ms)
      *setup_ms = jb->lanes[i].setup_ms;
    if (i == LANE_DECODE) {
      *batches = jb->batches;
      *images = jb->images;
    }
    pthread_mutex_unlock(&jb->lanes[i].mu);
  }
  busy_ms[0] /= jb->ndecoders;
  busy_ms[1] /= jb->nlanes - jb->ndecoders;
  serving_ms[0] /= jb->ndecoders;
  serving_ms[1] /= jb->nlanes - jb->ndecoders;
}

void gpuimg_jpeg_batch_waits(gpuimg_jpeg_batch_t *jb, int encode, double *ms, long *requests)
{
  ms[0] = ms[1] = ms[2] = 0;
  *requests = 0;
  for (int i = encode ? jb->ndecoders : 0; i < (encode ? jb->nlanes : jb->ndecoders); i++) {
    lane_t *lane = &jb->lanes[i];
    pthread_mutex_lock(&lane->mu);
    ms[0] += lane->queued_ms;
    ms[1] += lane->served_ms;
    ms[2] += lane->woken_ms;
    *requests += lane->requests;
    pthread_mutex_unlock(&lane->mu);
  }
}

int gpuimg_jpeg_batch_decoder(gpuimg_jpeg_batch_t *jb)
{
  lane_t *lane = &jb->lanes[LANE_DECODE];
  pthread_mutex_lock(&lane->mu);
  while (!lane->started)
    pthread_cond_wait(&lane->work, &lane->mu);
  int decoder = lane->ok ? lane->hardware : -1;
  pthread_mutex_unlock(&lane->mu);
  return decoder;
}

void gpuimg_jpeg_batch_destroy(gpuimg_jpeg_batch_t *jb)
{
  if (!jb)
    return;
  /* The threads tear down at once. */
  for (int i = 0; i < jb->nlanes; i++) {
    lane_t *lane = &jb->lanes[i];
    if (lane->created) {
      pthread_mutex_lock(&lane->mu);
      lane->stop = 1;
      pthread_cond_broadcast(&lane->work);
      pthread_mutex_unlock(&lane->mu);
    }
  }
  /* Every thread joined before any lock goes: one may still be leaving wait_previous(). */
  for (int i = 0; i < jb->nlanes; i++)
    if (jb->lanes[i].created)
      pthread_join(jb->lanes[i].thread, NULL);
  for (int i = 0; i < jb->nlanes; i++) {
    pthread_mutex_destroy(&jb->lanes[i].mu);
    pthread_cond_destroy(&jb->lanes[i].work);
  }
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

int gpuimg_jpeg_batch_decode(gpuimg_jpeg_batch_t *jb, const uint8_t *jpeg, size_t n,
                             const char *what, uint64_t max_pixels, uint8_t *d_dst, size_t cap,
                             int *width, int *height, int *channels)
{
  (void)jb, (void)jpeg, (void)n, (void)what, (void)max_pixels, (void)d_dst, (void)cap, (void)width,
      (void)height, (void)channels;
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

void gpuimg_jpeg_batch_counts(gpuimg_jpeg_batch_t *jb, long *batches, long *images, double *busy_ms,
                              double *serving_ms, double *setup_ms)
{
  (void)jb;
  *batches = *images = 0;
  busy_ms[0] = busy_ms[1] = serving_ms[0] = serving_ms[1] = *setup_ms = 0;
}

void gpuimg_jpeg_batch_waits(gpuimg_jpeg_batch_t *jb, int encode, double *ms, long *requests)
{
  (void)jb, (void)encode;
  ms[0] = ms[1] = ms[2] = 0;
  *requests = 0;
}

int gpuimg_jpeg_batch_decoder(gpuimg_jpeg_batch_t *jb)
{
  (void)jb;
  return -1;
}

void gpuimg_jpeg_batch_destroy(gpuimg_jpeg_batch_t *jb)
{
  (void)jb;
}
#endif

int gpuimg_jpeg_lane_pick(int n, const int *state, const int *queued)
{
  int best = -1, waiting = -1;
  for (int i = 0; i < n; i++) {
    if (state[i] == GPUIMG_LANE_SERVING) {
      if (best < 0 || queued[i] < queued[best])
        best = i;
    } else if (state[i] == GPUIMG_LANE_SETTING_UP && waiting < 0) {
      waiting = i;
    }
  }
  return best >= 0 ? best : waiting >= 0 ? waiting : 0;
}
