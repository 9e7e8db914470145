/* pipeline.c: runs the steps of a pipeline on the CPU or CUDA backend and times every stage. */
#include "pipeline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvjpeg_gpu.h"

gpuimg_stage_t *gpuimg_run_stage(gpuimg_run_t *run, const char *name, int step, int device, int nms)
{
  if (run->nstages == GPUIMG_MAX_STAGES) {
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, "", "too many stages");
    return NULL;
  }
  gpuimg_stage_t *s = &run->stages[run->nstages];
  memset(s, 0, sizeof *s);
  s->ms = calloc((size_t)nms, sizeof *s->ms);
  if (!s->ms) {
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, "", "out of memory");
    return NULL;
  }
  run->nstages++;
  snprintf(s->name, sizeof s->name, "%s", name);
  s->step = step;
  s->device = device;
  s->nms = nms;
  s->pinned = -1;
  return s;
}

void gpuimg_run_free(gpuimg_run_t *run)
{
  for (int i = 0; i < run->nstages; i++)
    free(run->stages[i].ms);
  run->nstages = 0;
}

/* Bytes an operation must move at least: its input, its output and its mask. */
static uint64_t step_bytes(const gpuimg_step_t *s, int w, int h, int cin)
{
  uint64_t px = (uint64_t)w * (uint64_t)h;
  return px * (uint64_t)cin + px * (uint64_t)s->op->out_channels(cin) +
         (s->op->needs_mask ? px : 0);
}

static int run_cpu(const gpuimg_plan_t *plan, const gpuimg_image_t *src, const gpuimg_image_t *masks,
                   gpuimg_image_t *dst, gpuimg_run_t *run)
{
  gpuimg_image_t tmp[GPUIMG_MAX_STEPS];
  gpuimg_stage_t *stage[GPUIMG_MAX_STEPS];
  int rc = -1, c = src->channels;

  memset(tmp, 0, sizeof tmp);
  run->backend = "cpu";
  snprintf(run->device, sizeof run->device, "none");
  for (int i = 0; i < plan->nsteps; i++) {
    const gpuimg_step_t *s = &plan->steps[i];
    int out_c = s->op->out_channels(c);
    stage[i] = gpuimg_run_stage(run, s->op->name, i, 0, plan->repeat);
    if (!stage[i] || gpuimg_image_alloc(&tmp[i], src->width, src->height, out_c) < 0)
      goto done;
    stage[i]->bytes = step_bytes(s, src->width, src->height, c);
    c = out_c;
  }
  for (int r = -plan->warmup; r < plan->repeat; r++) { /* r < 0: warm-up, not recorded */
    const gpuimg_image_t *in = src;
    for (int i = 0; i < plan->nsteps; i++) {
      const gpuimg_step_t *s = &plan->steps[i];
      double t0 = gpuimg_now_ms();
      if (s->op->run_cpu(s->params, in, &masks[i], &tmp[i]) < 0)
        goto done;
      if (r >= 0)
        stage[i]->ms[r] = gpuimg_now_ms() - t0;
      in = &tmp[i];
    }
  }
  *dst = tmp[plan->nsteps - 1];
  memset(&tmp[plan->nsteps - 1], 0, sizeof tmp[0]);
  rc = 0;
done:
  for (int i = 0; i < plan->nsteps; i++)
    gpuimg_image_free(&tmp[i]);
  return rc;
}

#ifdef GPUIMG_HAVE_CUDA
/* The pinned and device memory of CUDA runs. A one-image run starts from an empty set and
 * frees it at the end; a gpuimg_pipeline_t keeps it across images and only grows it, so that
 * in steady state an image costs no cudaMalloc or cudaMallocHost (each of which is slow, and
 * cudaFree synchronises the whole device, stalling every other stream). */
typedef struct {
  uint8_t *h_in, *h_out; /* pinned staging: the decoded input, the result */
  size_t h_in_cap, h_out_cap;
  uint8_t *d_buf[2]; /* ping-pong images on the device */
  size_t d_cap[2];
  uint8_t *d_src; /* a device-decoded JPEG, kept across --repeat runs */
  size_t d_src_cap;
#ifdef GPUIMG_HAVE_NVJPEG
  gpuimg_nvjpeg_t *nj; /* on the runner's context, created by the first JPEG */
#endif
  uint8_t *d_mask[GPUIMG_MAX_STEPS];        /* a masked step's mask on the device */
  const uint8_t *mask_of[GPUIMG_MAX_STEPS]; /* the host mask that d_mask holds, or NULL */
  size_t mask_cap[GPUIMG_MAX_STEPS];
  int allocations; /* pinned and device allocations made so far */
  int lend;        /* a runner's: the result is lent from h_out, not copied */
} cuda_buffers_t;

/* Makes *h_buf at least need bytes of pinned memory, keeping it when it is large enough. */
static int grow_host(cuda_buffers_t *b, uint8_t **h_buf, size_t *cap, size_t need)
{
  if (*h_buf && *cap >= need)
    return 0;
  gpuimg_cuda_host_free(*h_buf);
  *cap = 0;
  if (!(*h_buf = gpuimg_cuda_host_alloc(need)))
    return -1;
  *cap = need;
  b->allocations++;
  return 0;
}

/* The same for device memory. The stream is idle between images (every copy and launcher
 * waits for its work), so freeing a smaller buffer here cannot pull it from under a kernel. */
static int grow_dev(cuda_buffers_t *b, uint8_t **d_buf, size_t *cap, size_t need)
{
  if (*d_buf && *cap >= need)
    return 0;
  gpuimg_cuda_dev_free(*d_buf);
  *cap = 0;
  if (!(*d_buf = gpuimg_cuda_dev_alloc(need)))
    return -1;
  *cap = need;
  b->allocations++;
  return 0;
}

static void buffers_free(cuda_buffers_t *b)
{
#ifdef GPUIMG_HAVE_NVJPEG
  gpuimg_nvjpeg_destroy(b->nj);
#endif
  gpuimg_cuda_dev_free(b->d_src);
  for (int i = 0; i < GPUIMG_MAX_STEPS; i++)
    gpuimg_cuda_dev_free(b->d_mask[i]);
  gpuimg_cuda_dev_free(b->d_buf[0]);
  gpuimg_cuda_dev_free(b->d_buf[1]);
  gpuimg_cuda_host_free(b->h_in);
  gpuimg_cuda_host_free(b->h_out);
  memset(b, 0, sizeof *b);
}

#ifdef GPUIMG_HAVE_NVJPEG
/* The runner's own nvJPEG handle (one-image runs; batch mode uses its device's thread):
 * the hardware decoder where the GPU has one, else CUDA's. A failure names the file it
 * was for: "gpuimg: in.jpg: nvJPEG: ...". */
static int need_nvjpeg(gpuimg_cuda_t *ctx, cuda_buffers_t *b, const char *what)
{
  if (!b->nj && !(b->nj = gpuimg_nvjpeg_create(ctx, GPUIMG_NVJPEG_AUTO))) {
    char reason[512];
    snprintf(reason, sizeof reason, "%s", gpuimg_error_message());
    gpuimg_error_set(gpuimg_error_code(), what, "nvJPEG: %s", reason);
    return -1;
  }
  return 0;
}

/* Decodes io's JPEG into b->d_src (by the device's nvJPEG thread where there is one) and
 * checks the masks against its size. */
static int decode_jpeg(gpuimg_cuda_t *ctx, cuda_buffers_t *b, const gpuimg_plan_t *plan,
                       const gpuimg_jpeg_io_t *io, const gpuimg_image_t *masks, int *w, int *h,
                       int *c, gpuimg_run_t *run)
{
  double t0 = gpuimg_now_ms();
  if (io->batch) {
    int rc;
    while ((rc = gpuimg_jpeg_batch_decode(io->batch, io->jpeg, io->size, io->what, io->max_pixels,
                                          b->d_src, b->d_src_cap, w, h, c)) == 1)
      if (grow_dev(b, &b->d_src, &b->d_src_cap, gpuimg_image_bytes(*w, *h, *c)) < 0)
        return -1;
    if (rc < 0)
      return -1;
  } else {
    if (need_nvjpeg(ctx, b, io->what) < 0 ||
        gpuimg_nvjpeg_info(b->nj, io->jpeg, io->size, io->what, w, h, c) < 0)
      return -1;
    if ((uint64_t)*w * (uint64_t)*h > io->max_pixels) {
      gpuimg_error_set(GPUIMG_EXIT_INPUT, io->what, "image is %dx%d, over the limit of %llu pixels",
                       *w, *h, (unsigned long long)io->max_pixels);
      return -1;
    }
    if (grow_dev(b, &b->d_src, &b->d_src_cap, gpuimg_image_bytes(*w, *h, *c)) < 0 ||
        gpuimg_nvjpeg_decode_device(b->nj, io->jpeg, io->size, io->what, b->d_src, *c, NULL) < 0)
      return -1;
  }
  run->in_w = *w;
  run->in_h = *h;
  run->in_c = *c;
  gpuimg_stage_t *s = gpuimg_run_stage(run, "decode", -1, 0, 1);
  if (!s)
    return -1;
  s->ms[0] = gpuimg_now_ms() - t0;
  s->codec = "nvjpeg";
  s->bytes = io->size + gpuimg_image_bytes(*w, *h, *c);
  for (int i = 0; i < plan->nsteps; i++) {
    const gpuimg_image_t *m = &masks[i];
    if (m->data && (m->width != *w || m->height != *h)) {
      gpuimg_error_set(GPUIMG_EXIT_INPUT, io->what, "mask %s is %dx%d but the image is %dx%d",
                       gpuimg_ops_common(plan->steps[i].params)->mask_path, m->width, m->height,
                       *w, *h);
      return -1;
    }
  }
  return 0;
}

/* Encodes the result on the device into io->out. */
static int encode_jpeg(gpuimg_cuda_t *ctx, cuda_buffers_t *b, const gpuimg_jpeg_io_t *io,
                       const uint8_t *d_img, int w, int h, int c, gpuimg_run_t *run)
{
  double t0 = gpuimg_now_ms();
  uint8_t *bytes = NULL;
  size_t size = 0;
  if (io->batch ? gpuimg_jpeg_batch_encode(io->batch, d_img, w, h, c, io->quality, io->out_what,
                                           &bytes, &size) < 0
                : need_nvjpeg(ctx, b, io->out_what) < 0 ||
                      gpuimg_nvjpeg_encode_device(b->nj, d_img, w, h, c, io->quality, io->out_what,
                                                  &bytes, &size, NULL) < 0)
    return -1;
  int rc = gpuimg_buf_append(io->out, bytes, size);
  free(bytes);
  gpuimg_stage_t *s = rc < 0 ? NULL : gpuimg_run_stage(run, "encode", -1, 0, 1);
  if (!s)
    return -1;
  s->ms[0] = gpuimg_now_ms() - t0;
  s->codec = "nvjpeg";
  s->bytes = gpuimg_image_bytes(w, h, c) + size;
  return 0;
}
#endif

/* measure: count divergence and measure the copy bandwidth (what a one-image run's report and
 * --explain show). A mask already on the device (the same host mask as in the previous run
 * with these buffers) is not uploaded again and gets no upload-mask stage. io: with
 * io->jpeg the input is a JPEG decoded on the device (src is NULL then), and with io->out
 * the result is JPEG-encoded there. */
static int run_cuda(gpuimg_cuda_t *ctx, cuda_buffers_t *b, const gpuimg_plan_t *plan,
                    const gpuimg_image_t *src, const gpuimg_jpeg_io_t *io,
                    const gpuimg_image_t *masks, gpuimg_image_t *dst, gpuimg_run_t *run,
                    int measure)
{
  int w = 0, h = 0, in_c = 0;
  gpuimg_stage_t *stage[GPUIMG_MAX_STEPS], *up = NULL, *down = NULL;
  int device_in = io && io->jpeg, device_out = io && io->out;
  const uint8_t *d_first, *d_last;

  run->backend = "cuda";
  snprintf(run->device, sizeof run->device, "%s", gpuimg_cuda_device_name(ctx));
  gpuimg_cuda_device_cc(ctx, &run->cc_major, &run->cc_minor);
  gpuimg_cuda_versions(&run->driver_version, &run->runtime_version);
  if (gpuimg_cuda_set_block(ctx, plan->block_w, plan->block_h) < 0)
    return -1;
  /* What the report and --explain show: divergence counts and the copy bandwidth. */
  gpuimg_cuda_set_count_divergence(ctx, measure);
  if (measure && gpuimg_cuda_copy_bandwidth(ctx, (size_t)256 << 20, &run->copy_gbps) < 0)
    return -1;

  if (device_in) {
#ifdef GPUIMG_HAVE_NVJPEG
    /* Decoded once into its own buffer, which every --repeat run starts from. */
    if (decode_jpeg(ctx, b, plan, io, masks, &w, &h, &in_c, run) < 0)
      return -1;
#else
    gpuimg_error_set(GPUIMG_EXIT_DEVICE, io->what, "this gpuimg was built without nvJPEG");
    return -1;
#endif
  } else {
    w = src->width;
    h = src->height;
    in_c = src->channels;
    /* Pixels decoded into the staging buffer (gpuimg_pipeline_pixel_source()) are there. */
    if (src->data != b->h_in) {
      if (grow_host(b, &b->h_in, &b->h_in_cap, gpuimg_image_bytes(w, h, in_c)) < 0)
        return -1;
      memcpy(b->h_in, src->data, gpuimg_image_bytes(w, h, in_c));
    }
  }
  size_t in_bytes = gpuimg_image_bytes(w, h, in_c);
  size_t px = gpuimg_image_bytes(w, h, 1);
  int out_c = in_c;
  /* Channels never grow along a pipeline, so two input-sized buffers serve every step. */
  if (grow_dev(b, &b->d_buf[0], &b->d_cap[0], in_bytes) < 0 ||
      grow_dev(b, &b->d_buf[1], &b->d_cap[1], in_bytes) < 0)
    return -1;
  d_first = device_in ? b->d_src : b->d_buf[0];

  for (int i = 0; i < plan->nsteps; i++) {
    if (!masks[i].data)
      continue;
    if (b->mask_of[i] == masks[i].data && b->mask_cap[i] >= px)
      continue;
    b->mask_of[i] = NULL;
    gpuimg_stage_t *ms = gpuimg_run_stage(run, "upload-mask", i, 1, 1);
    if (!ms || grow_dev(b, &b->d_mask[i], &b->mask_cap[i], px) < 0 ||
        gpuimg_cuda_upload(ctx, b->d_mask[i], masks[i].data, px, NULL) < 0)
      return -1;
    b->mask_of[i] = masks[i].data;
    ms->bytes = px;
    ms->pinned = 0;
  }
  if (!device_in) {
    if (!(up = gpuimg_run_stage(run, "upload", -1, 1, plan->repeat)))
      return -1;
    up->bytes = in_bytes;
    up->pinned = 1;
  }
  {
    int c = in_c;
    for (int i = 0; i < plan->nsteps; i++) {
      if (!(stage[i] = gpuimg_run_stage(run, plan->steps[i].op->name, i, 1, plan->repeat)))
        return -1;
      stage[i]->bytes = step_bytes(&plan->steps[i], w, h, c);
      stage[i]->has_launch = 1;
      c = plan->steps[i].op->out_channels(c);
    }
    out_c = c;
  }
  size_t out_bytes = gpuimg_image_bytes(w, h, out_c);
  if (!device_out) {
    if (!(down = gpuimg_run_stage(run, "download", -1, 1, plan->repeat)) ||
        grow_host(b, &b->h_out, &b->h_out_cap, out_bytes) < 0)
      return -1;
    down->bytes = out_bytes;
    down->pinned = 1;
  }

  d_last = d_first;
  for (int r = -plan->warmup; r < plan->repeat; r++) { /* r < 0: warm-up, not recorded */
    float ms;
    int o = d_first == b->d_buf[0], c = in_c; /* next output buffer */
    const uint8_t *in = d_first;
    if (up) {
      if (gpuimg_cuda_upload(ctx, b->d_buf[0], b->h_in, in_bytes, &ms) < 0)
        return -1;
      if (r >= 0)
        up->ms[r] = ms;
    }
    for (int i = 0; i < plan->nsteps; i++) {
      const gpuimg_step_t *s = &plan->steps[i];
      if (s->op->run_gpu(ctx, s->params, in, b->d_mask[i], b->d_buf[o], w, h, c,
                         &stage[i]->launch) < 0)
        return -1;
      if (r >= 0)
        stage[i]->ms[r] = stage[i]->launch.ms;
      in = b->d_buf[o];
      o = !o;
      c = s->op->out_channels(c);
    }
    d_last = in;
    if (down) {
      if (gpuimg_cuda_download(ctx, b->h_out, in, out_bytes, &ms) < 0)
        return -1;
      if (r >= 0)
        down->ms[r] = ms;
    }
  }
  for (int i = 0; i < plan->nsteps; i++) {
    gpuimg_stage_t *st = stage[i];
    const gpuimg_launch_t *l = &st->launch;
    const gpuimg_step_t *s = &plan->steps[i];
    if (!l->has_divergence || !s->op->divergence)
      continue;
    st->has_prediction = 1;
    s->op->divergence(s->params, &masks[i], w, h, (int)l->block[0], (int)l->block[1],
                      &st->predicted_warps, &st->predicted_divergent);
  }
  run->out_w = w;
  run->out_h = h;
  run->out_c = out_c;
  if (device_out) {
#ifdef GPUIMG_HAVE_NVJPEG
    return encode_jpeg(ctx, b, io, d_last, w, h, out_c, run);
#else
    gpuimg_error_set(GPUIMG_EXIT_DEVICE, io->out_what, "this gpuimg was built without nvJPEG");
    return -1;
#endif
  }
  (void)d_last;
  if (b->lend) {
    *dst = (gpuimg_image_t){
        .width = w, .height = h, .channels = out_c, .data = b->h_out, .borrowed = 1};
    return 0;
  }
  if (gpuimg_image_alloc(dst, w, h, out_c) < 0)
    return -1;
  memcpy(dst->data, b->h_out, out_bytes);
  return 0;
}
#endif

/* A runner for many images: the backend chosen once, and on CUDA one context (its own
 * non-blocking stream) with buffers kept from image to image. */
struct gpuimg_pipeline {
  const gpuimg_plan_t *plan;
  gpuimg_cuda_t *ctx; /* NULL: the CPU backend */
#ifdef GPUIMG_HAVE_CUDA
  cuda_buffers_t buffers;
#endif
};

gpuimg_pipeline_t *gpuimg_pipeline_create(const gpuimg_plan_t *plan, int device)
{
  gpuimg_pipeline_t *p = calloc(1, sizeof *p);
  if (!p) {
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, "", "out of memory");
    return NULL;
  }
  p->plan = plan;
  if (device == GPUIMG_DEVICE_CPU)
    return p;
#ifdef GPUIMG_HAVE_CUDA
  p->buffers.lend = 1;
  if (!(p->ctx = gpuimg_cuda_create(device == GPUIMG_DEVICE_DEFAULT ? -1 : device)) ||
      gpuimg_cuda_set_block(p->ctx, plan->block_w, plan->block_h) < 0) {
    gpuimg_pipeline_destroy(p);
    return NULL;
  }
  return p;
#else
  gpuimg_error_set(GPUIMG_EXIT_DEVICE, "", "this gpuimg was built without CUDA");
  free(p);
  return NULL;
#endif
}

int gpuimg_pipeline_process(gpuimg_pipeline_t *p, const gpuimg_image_t *src,
                            const gpuimg_image_t *masks, gpuimg_image_t *dst, gpuimg_run_t *run)
{
  memset(dst, 0, sizeof *dst);
#ifdef GPUIMG_HAVE_CUDA
  if (p->ctx)
    return run_cuda(p->ctx, &p->buffers, p->plan, src, NULL, masks, dst, run, p->plan->measure);
#endif
  return run_cpu(p->plan, src, masks, dst, run);
}

int gpuimg_pipeline_process_jpeg(gpuimg_pipeline_t *p, const gpuimg_jpeg_io_t *io,
                                 const gpuimg_image_t *src, const gpuimg_image_t *masks,
                                 gpuimg_image_t *dst, gpuimg_run_t *run)
{
  memset(dst, 0, sizeof *dst);
#if defined(GPUIMG_HAVE_CUDA) && defined(GPUIMG_HAVE_NVJPEG)
  if (p->ctx)
    return run_cuda(p->ctx, &p->buffers, p->plan, src, io, masks, dst, run, p->plan->measure);
#endif
  (void)p, (void)src, (void)masks, (void)run;
  gpuimg_error_set(GPUIMG_EXIT_DEVICE, io->what, "no device JPEG decoder in this runner");
  return -1;
}

uint8_t *gpuimg_pipeline_pixel_source(void *runner, size_t bytes)
{
  gpuimg_pipeline_t *p = runner;
#ifdef GPUIMG_HAVE_CUDA
  cuda_buffers_t *b = &p->buffers;
  if (p->ctx && grow_host(b, &b->h_in, &b->h_in_cap, bytes) == 0)
    return b->h_in;
#else
  (void)p, (void)bytes;
#endif
  return NULL;
}

int gpuimg_pipeline_device_start(int device, int blocking, int (*wanted)(void *), void *arg,
                                 char *reason, size_t reason_size)
{
#ifdef GPUIMG_HAVE_CUDA
  int count = gpuimg_cuda_probe(reason, reason_size);
  if (count <= device) {
    if (count > 0)
      snprintf(reason, reason_size, "no CUDA device %d", device);
    return 0;
  }
  if (wanted && !wanted(arg))
    return -1;
  if (gpuimg_cuda_set_blocking_sync(device, blocking) < 0)
    gpuimg_error_clear(); /* the default way of waiting is no failure */
  gpuimg_cuda_t *ctx = gpuimg_cuda_create(device);
  if (!ctx) {
    snprintf(reason, reason_size, "%s", gpuimg_error_message());
    gpuimg_error_clear();
    return 0;
  }
  gpuimg_cuda_destroy(ctx);
  return 1;
#else
  (void)device, (void)blocking, (void)wanted, (void)arg;
  snprintf(reason, reason_size, "this gpuimg was built without CUDA");
  return 0;
#endif
}

int gpuimg_pipeline_allocations(const gpuimg_pipeline_t *p)
{
#ifdef GPUIMG_HAVE_CUDA
  return p->buffers.allocations;
#else
  (void)p;
  return 0;
#endif
}

void gpuimg_pipeline_destroy(gpuimg_pipeline_t *p)
{
  if (!p)
    return;
#ifdef GPUIMG_HAVE_CUDA
  buffers_free(&p->buffers);
  gpuimg_cuda_destroy(p->ctx);
#endif
  free(p);
}

int gpuimg_pipeline_device_jpeg(const gpuimg_plan_t *plan)
{
#if defined(GPUIMG_HAVE_CUDA) && defined(GPUIMG_HAVE_NVJPEG)
  char reason[256];
  return plan->codec == GPUIMG_CODEC_NVJPEG && plan->backend != GPUIMG_BACKEND_CPU &&
         gpuimg_cuda_probe(reason, sizeof reason) > 0;
#else
  (void)plan;
  return 0;
#endif
}

int gpuimg_pipeline_have_cuda(void)
{
#ifdef GPUIMG_HAVE_CUDA
  return 1;
#else
  return 0;
#endif
}

gpuimg_pipeline_t *gpuimg_pipeline_open(const gpuimg_plan_t *plan)
{
  int device = GPUIMG_DEVICE_CPU;
#ifdef GPUIMG_HAVE_CUDA
  if (plan->backend != GPUIMG_BACKEND_CPU) {
    char reason[256];
    if (gpuimg_cuda_probe(reason, sizeof reason) > 0) {
      device = GPUIMG_DEVICE_DEFAULT;
    } else if (plan->backend == GPUIMG_BACKEND_CUDA) {
      gpuimg_error_set(GPUIMG_EXIT_DEVICE, "", "no usable CUDA device: %s", reason);
      return NULL;
    } else if (!plan->quiet) {
      fprintf(stderr, "gpuimg: no usable CUDA device (%s); using the CPU backend\n", reason);
    }
  }
#else
  if (plan->backend == GPUIMG_BACKEND_CUDA) {
    gpuimg_error_set(GPUIMG_EXIT_DEVICE, "", "this gpuimg was built without CUDA");
    return NULL;
  }
#endif
  return gpuimg_pipeline_create(plan, device);
}

int gpuimg_pipeline_run(const gpuimg_plan_t *plan, const gpuimg_image_t *src,
                        const gpuimg_image_t *masks, gpuimg_image_t *dst, gpuimg_run_t *run)
{
  gpuimg_pipeline_t *p = gpuimg_pipeline_open(plan);
  if (!p)
    return -1;
  gpuimg_image_t lent;
  int rc = gpuimg_pipeline_process(p, src, masks, &lent, run);
  if (rc == 0 && lent.borrowed) {
    rc = gpuimg_image_alloc(dst, lent.width, lent.height, lent.channels);
    if (rc == 0)
      memcpy(dst->data, lent.data, gpuimg_image_bytes(lent.width, lent.height, lent.channels));
  } else {
    *dst = lent;
  }
  gpuimg_pipeline_destroy(p);
  return rc;
}
