/* cuda.c: the CUDA backend: a context and its stream per runner, pinned staging and device
 * buffers kept between images (a one-image runner copies from ordinary memory), the steps'
 * kernels timed by CUDA events, and JPEG decoded and encoded on the device with nvJPEG where
 * it is built in. */
#include "backend.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_context.h"
#include "nvjpeg_gpu.h"
#include "rotate.h"

/* The pinned and device memory of a runner, kept across images and only grown, so that
 * in steady state an image costs no cudaMalloc or cudaMallocHost (each of which is slow, and
 * cudaFree synchronises the whole device, stalling every other stream). */
typedef struct {
  uint8_t *h_in, *h_out; /* pinned staging: the decoded input, the result */
  size_t h_in_cap, h_out_cap;
  uint8_t *d_buf[2]; /* ping-pong images on the device */
  size_t d_cap[2];
  uint8_t *d_src; /* a device-decoded JPEG, kept across --repeat runs */
  size_t d_src_cap;
  uint8_t *d_turned; /* a device-decoded JPEG before its EXIF orientation turned it */
  size_t d_turned_cap;
#ifdef GPUIMG_HAVE_NVJPEG
  gpuimg_nvjpeg_t *nj; /* on the runner's context, created by the first JPEG */
#endif
  uint8_t *d_mask[GPUIMG_MAX_STEPS];        /* a masked step's mask on the device */
  const uint8_t *mask_of[GPUIMG_MAX_STEPS]; /* the host mask that d_mask holds, or NULL */
  size_t mask_cap[GPUIMG_MAX_STEPS];
  int allocations; /* pinned and device allocations made so far */
  int pageable;    /* one image run once: its copies go from and to ordinary memory */
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
  gpuimg_cuda_dev_free(b->d_turned);
  for (int i = 0; i < GPUIMG_MAX_STEPS; i++)
    gpuimg_cuda_dev_free(b->d_mask[i]);
  gpuimg_cuda_dev_free(b->d_buf[0]);
  gpuimg_cuda_dev_free(b->d_buf[1]);
  gpuimg_cuda_host_free(b->h_in);
  gpuimg_cuda_host_free(b->h_out);
  int pageable = b->pageable;
  memset(b, 0, sizeof *b);
  b->pageable = pageable;
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

/* Turns the w x h x c image in b->d_src as EXIF orientation o asks, on the device with the
 * orientation kernels (the bytes of the host's gpuimg_image_orient()): the decoded pixels move to
 * b->d_turned, the turned ones take their place in b->d_src; w and h become the turned size. */
static int turn_decoded(gpuimg_cuda_t *ctx, cuda_buffers_t *b, int o, int *w, int *h, int c)
{
  gpuimg_launch_t launch = {0};
  size_t bytes = gpuimg_image_bytes(*w, *h, c);
  if (o < 2 || o > 8)
    return 0;
  uint8_t *decoded = b->d_src;
  size_t decoded_cap = b->d_src_cap;
  if (grow_dev(b, &b->d_turned, &b->d_turned_cap, bytes) < 0 ||
      gpuimg_rotate_gpu(ctx, decoded, b->d_turned, *w, *h, c, o, GPUIMG_VARIANT_FAST, &launch) < 0)
    return -1;
  b->d_src = b->d_turned;
  b->d_src_cap = b->d_turned_cap;
  b->d_turned = decoded;
  b->d_turned_cap = decoded_cap;
  if (o >= 5) {
    int t = *w;
    *w = *h;
    *h = t;
  }
  return 0;
}

/* Decodes io's JPEG into b->d_src (by the device's nvJPEG thread where there is one), turned
 * upright as io->orientation asks. */
static int decode_jpeg(gpuimg_cuda_t *ctx, cuda_buffers_t *b, const gpuimg_jpeg_io_t *io, int *w,
                       int *h, int *c, gpuimg_run_t *run)
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
  if (turn_decoded(ctx, b, io->orientation, w, h, *c) < 0)
    return -1;
  if (io->orientation > 1)
    run->orientation = io->orientation;
  run->in_w = *w;
  run->in_h = *h;
  run->in_c = *c;
  gpuimg_stage_t *s = gpuimg_run_stage(run, "decode", -1, 0, 1);
  if (!s)
    return -1;
  s->ms[0] = gpuimg_now_ms() - t0;
  s->codec = "nvjpeg";
  s->bytes = io->size + gpuimg_image_bytes(*w, *h, *c);
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

/* One run's shapes and stages. */
typedef struct {
  int w, h, in_c, out_c;                  /* the input's size and channels, the result's channels */
  gpuimg_shape_t s[GPUIMG_MAX_STEPS + 1]; /* each step's input; s[nsteps] the result */
  size_t in_bytes, out_bytes;
  const uint8_t *d_first, *d_last; /* the first step's input, the last step's output */
  const uint8_t *h_src;            /* the host image uploaded (pinned staging, or src) */
  uint8_t *h_dst;                  /* where the result comes back (pinned, or malloc'd) */
  gpuimg_stage_t *stage[GPUIMG_MAX_STEPS], *up, *down;
} shape_t;

/* The device in the run record; divergence counting and the copy bandwidth when measured. */
static int describe(gpuimg_cuda_t *ctx, const gpuimg_plan_t *plan, gpuimg_run_t *run)
{
  run->backend = "cuda";
  snprintf(run->device, sizeof run->device, "%s", gpuimg_cuda_device_name(ctx));
  gpuimg_cuda_device_cc(ctx, &run->cc_major, &run->cc_minor);
  gpuimg_cuda_versions(&run->driver_version, &run->runtime_version);
  if (gpuimg_cuda_set_block(ctx, plan->block_w, plan->block_h) < 0)
    return -1;
  gpuimg_cuda_set_count_divergence(ctx, plan->measure);
  gpuimg_cuda_set_record_blocks(ctx, plan->record_blocks);
  if (plan->measure && gpuimg_cuda_copy_bandwidth(ctx, (size_t)256 << 20, &run->copy_gbps) < 0)
    return -1;
  return 0;
}

/* The input: a JPEG decoded on the device once (every --repeat run starts from it), or src
 * in the pinned staging buffer (where a decoder may have put it already), or src itself when
 * the copies are pageable. */
static int take_input(gpuimg_cuda_t *ctx, cuda_buffers_t *b, const gpuimg_image_t *src,
                      const gpuimg_jpeg_io_t *io, gpuimg_run_t *run, shape_t *sh)
{
  if (io && io->jpeg) {
#ifdef GPUIMG_HAVE_NVJPEG
    return decode_jpeg(ctx, b, io, &sh->w, &sh->h, &sh->in_c, run);
#else
    (void)ctx, (void)run;
    gpuimg_error_set(GPUIMG_EXIT_DEVICE, io->what, "this gpuimg was built without nvJPEG");
    return -1;
#endif
  }
  sh->w = src->width;
  sh->h = src->height;
  sh->in_c = src->channels;
  size_t n = gpuimg_image_bytes(sh->w, sh->h, sh->in_c);
  sh->h_src = src->data;
  if (b->pageable || src->data == b->h_in)
    return 0;
  if (grow_host(b, &b->h_in, &b->h_in_cap, n) < 0)
    return -1;
  memcpy(b->h_in, src->data, n);
  sh->h_src = b->h_in;
  return 0;
}

/* The steps' shapes; a JPEG decoded here has masks checked against them (the flow checks
 * the others). */
static int check_shapes(const gpuimg_plan_t *plan, const gpuimg_jpeg_io_t *io,
                        const gpuimg_image_t *masks, shape_t *sh)
{
  char why[160];
  if (gpuimg_plan_shapes(plan, sh->w, sh->h, sh->in_c, sh->s) < 0)
    return -1;
  for (int i = 0; io && io->jpeg && i < plan->nsteps; i++)
    if (!gpuimg_plan_mask_fits(plan, i, &masks[i], sh->s, why, sizeof why)) {
      gpuimg_error_set(GPUIMG_EXIT_INPUT, io->what, "mask %s %s",
                       gpuimg_ops_common(plan->steps[i].params)->mask_path, why);
      return -1;
    }
  return 0;
}

/* Uploads each step's mask unless the device holds that host mask already (the same
 * pointer as in the previous run with these buffers): an upload-mask stage then. */
static int upload_masks(gpuimg_cuda_t *ctx, cuda_buffers_t *b, const gpuimg_plan_t *plan,
                        const gpuimg_image_t *masks, gpuimg_run_t *run)
{
  for (int i = 0; i < plan->nsteps; i++) {
    size_t px = gpuimg_image_bytes(masks[i].width, masks[i].height, 1);
    if (!masks[i].data || (b->mask_of[i] == masks[i].data && b->mask_cap[i] >= px))
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
  return 0;
}

/* The stages of the timed runs: upload (unless the input is on the device), each step,
 * download (unless the result is encoded there); buffers for all of them. */
static int make_stages(cuda_buffers_t *b, const gpuimg_plan_t *plan, int device_in, int device_out,
                       shape_t *sh, gpuimg_run_t *run)
{
  sh->in_bytes = gpuimg_image_bytes(sh->w, sh->h, sh->in_c);
  /* Two buffers of the largest image along the pipeline serve every step. */
  size_t most = 0;
  for (int i = 0; i <= plan->nsteps; i++) {
    size_t n = gpuimg_image_bytes(sh->s[i].w, sh->s[i].h, sh->s[i].c);
    most = n > most ? n : most;
  }
  if (grow_dev(b, &b->d_buf[0], &b->d_cap[0], most) < 0 ||
      grow_dev(b, &b->d_buf[1], &b->d_cap[1], most) < 0)
    return -1;
  sh->d_first = sh->d_last = device_in ? b->d_src : b->d_buf[0];
  if (!device_in && !(sh->up = gpuimg_run_stage(run, "upload", -1, 1, plan->repeat)))
    return -1;
  if (sh->up) {
    sh->up->bytes = sh->in_bytes;
    sh->up->pinned = !b->pageable;
  }
  for (int i = 0; i < plan->nsteps; i++) {
    if (!(sh->stage[i] = gpuimg_run_step_stage(run, plan, i, sh->s, 1, plan->repeat)))
      return -1;
    sh->stage[i]->has_launch = 1;
  }
  const gpuimg_shape_t *res = &sh->s[plan->nsteps];
  sh->out_c = res->c;
  sh->out_bytes = gpuimg_image_bytes(res->w, res->h, res->c);
  if (device_out)
    return 0;
  if (!(sh->down = gpuimg_run_stage(run, "download", -1, 1, plan->repeat)))
    return -1;
  sh->down->bytes = sh->out_bytes;
  sh->down->pinned = !b->pageable;
  if (b->pageable) { /* the caller's to free */
    gpuimg_image_t out;
    if (gpuimg_image_alloc(&out, res->w, res->h, res->c) < 0)
      return -1;
    sh->h_dst = out.data;
    return 0;
  }
  if (grow_host(b, &b->h_out, &b->h_out_cap, sh->out_bytes) < 0)
    return -1;
  sh->h_dst = b->h_out;
  return 0;
}

/* The blocks a step's launch recorded (--explain-image): into its stage when keep (the last
 * timed run), else dropped, so that no step gets another's. */
static void take_blocks(gpuimg_cuda_t *ctx, gpuimg_stage_t *st, int keep)
{
  gpuimg_block_time_t *blocks;
  unsigned long long n;
  gpuimg_cuda_take_block_times(ctx, &blocks, &n);
  if (!keep) {
    free(blocks);
    return;
  }
  free(st->blocks);
  st->blocks = blocks;
  st->nblocks = n;
}

/* One run of the steps (recorded as repetition r; r < 0: a warm-up, not recorded). */
static int run_once(gpuimg_cuda_t *ctx, cuda_buffers_t *b, const gpuimg_plan_t *plan, int r,
                    shape_t *sh)
{
  float ms;
  int o = sh->d_first == b->d_buf[0]; /* o: the next output buffer */
  const uint8_t *in = sh->d_first;
  if (sh->up) {
    if (gpuimg_cuda_upload(ctx, b->d_buf[0], sh->h_src, sh->in_bytes, &ms) < 0)
      return -1;
    if (r >= 0)
      sh->up->ms[r] = ms;
  }
  for (int i = 0; i < plan->nsteps; i++) {
    const gpuimg_step_t *s = &plan->steps[i];
    const gpuimg_shape_t *si = &sh->s[i];
    gpuimg_stage_t *st = sh->stage[i];
    if (s->op->measure_gpu) { /* an analysis: the next step reads the same buffer */
      if (s->op->measure_gpu(ctx, s->params, in, si->w, si->h, si->c, st->result, &st->launch) < 0)
        return -1;
    } else {
      if (s->op->run_gpu(ctx, s->params, in, b->d_mask[i], b->d_buf[o], si->w, si->h, si->c,
                         &st->launch) < 0)
        return -1;
      in = b->d_buf[o];
      o = !o;
    }
    if (r >= 0)
      st->ms[r] = st->launch.ms;
    take_blocks(ctx, st, r == plan->repeat - 1);
  }
  sh->d_last = in;
  if (sh->down) {
    if (gpuimg_cuda_download(ctx, sh->h_dst, in, sh->out_bytes, &ms) < 0)
      return -1;
    if (r >= 0)
      sh->down->ms[r] = ms;
  }
  return 0;
}

/* The host's prediction of the divergence each teaching kernel counted, and the model's launch
 * of each step: for --device's GPU, or (a measured run) for this device, whose measured launch
 * it must equal. */
static void predict(gpuimg_cuda_t *ctx, const gpuimg_plan_t *plan, const gpuimg_image_t *masks,
                    shape_t *sh)
{
  gpuimg_gpu_t self;
  gpuimg_cuda_gpu(ctx, &self);
  const gpuimg_gpu_t *gpu = plan->model_gpu ? plan->model_gpu : plan->measure ? &self : NULL;
  for (int i = 0; i < plan->nsteps; i++) {
    gpuimg_stage_t *st = sh->stage[i];
    if (gpu)
      gpuimg_run_model(plan, gpu, i, sh->s, &masks[i], st);
    const gpuimg_launch_t *l = &st->launch;
    const gpuimg_step_t *s = &plan->steps[i];
    if (!l->has_divergence || !s->op->divergence)
      continue;
    st->has_prediction = 1;
    s->op->divergence(s->params, &masks[i], sh->s[i].w, sh->s[i].h, (int)l->block[0],
                      (int)l->block[1], &st->predicted_warps, &st->predicted_divergent, NULL);
  }
}

/* Runs plan's steps on the device (after plan->warmup unrecorded runs, plan->repeat recorded
 * ones). The result is lent from the pinned staging buffer (the caller's to free when the
 * copies are pageable), or encoded on the device into io->out. */
static int run_cuda(gpuimg_cuda_t *ctx, cuda_buffers_t *b, const gpuimg_plan_t *plan,
                    const gpuimg_image_t *src, const gpuimg_jpeg_io_t *io,
                    const gpuimg_image_t *masks, gpuimg_image_t *dst, gpuimg_run_t *run)
{
  shape_t sh;
  int device_in = io && io->jpeg, device_out = io && io->out;
  memset(&sh, 0, sizeof sh);
  int rc = describe(ctx, plan, run) < 0 || take_input(ctx, b, src, io, run, &sh) < 0 ||
                   check_shapes(plan, io, masks, &sh) < 0 ||
                   upload_masks(ctx, b, plan, masks, run) < 0 ||
                   make_stages(b, plan, device_in, device_out, &sh, run) < 0
               ? -1
               : 0;
  for (int r = -plan->warmup; rc == 0 && r < plan->repeat; r++)
    rc = run_once(ctx, b, plan, r, &sh);
  if (rc < 0) {
    if (b->pageable)
      free(sh.h_dst);
    return -1;
  }
  predict(ctx, plan, masks, &sh);
  const gpuimg_shape_t *res = &sh.s[plan->nsteps];
  run->out_w = res->w;
  run->out_h = res->h;
  run->out_c = res->c;
  if (device_out) {
#ifdef GPUIMG_HAVE_NVJPEG
    return encode_jpeg(ctx, b, io, sh.d_last, res->w, res->h, res->c, run);
#else
    gpuimg_error_set(GPUIMG_EXIT_DEVICE, io->out_what, "this gpuimg was built without nvJPEG");
    return -1;
#endif
  }
  *dst = (gpuimg_image_t){.width = res->w,
                          .height = res->h,
                          .channels = res->c,
                          .data = sh.h_dst,
                          .borrowed = !b->pageable};
  return 0;
}

/* ---- the backend's declaration ---- */

typedef struct {
  gpuimg_cuda_t *ctx;
  cuda_buffers_t buffers;
} cuda_state_t;

static void cuda_close(void *state)
{
  cuda_state_t *s = state;
  if (!s)
    return;
  buffers_free(&s->buffers);
  gpuimg_cuda_destroy(s->ctx);
  free(s);
}

/* once: one image; run once too (no --repeat or --warmup, which time steady-state copies),
 * its copies are pageable unless GPUIMG_ONCE_PINNED=1 asks for pinned staging (to measure). */
static void *cuda_open(const gpuimg_plan_t *plan, int device, int once)
{
  cuda_state_t *s = calloc(1, sizeof *s);
  if (!s) {
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, "", "out of memory");
    return NULL;
  }
  if (!(s->ctx = gpuimg_cuda_create(device == GPUIMG_DEVICE_DEFAULT ? -1 : device)) ||
      gpuimg_cuda_set_block(s->ctx, plan->block_w, plan->block_h) < 0) {
    cuda_close(s);
    return NULL;
  }
  const char *pin = getenv("GPUIMG_ONCE_PINNED");
  s->buffers.pageable =
      once && plan->repeat == 1 && plan->warmup == 0 && !(pin && strcmp(pin, "1") == 0);
  return s;
}

static int cuda_process(void *state, const gpuimg_plan_t *plan, const gpuimg_image_t *src,
                        const gpuimg_jpeg_io_t *io, const gpuimg_image_t *masks,
                        gpuimg_image_t *dst, gpuimg_run_t *run)
{
  cuda_state_t *s = state;
  return run_cuda(s->ctx, &s->buffers, plan, src, io, masks, dst, run);
}

static uint8_t *cuda_pixels(void *state, size_t bytes)
{
  cuda_buffers_t *b = &((cuda_state_t *)state)->buffers;
  if (b->pageable)
    return NULL; /* ordinary memory serves one copy best */
  return grow_host(b, &b->h_in, &b->h_in_cap, bytes) == 0 ? b->h_in : NULL;
}

static int cuda_allocations(const void *state)
{
  return ((const cuda_state_t *)state)->buffers.allocations;
}

static int cuda_start(int device, int blocking, int (*wanted)(void *), void *arg, char *reason,
                      size_t reason_size)
{
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
}

const gpuimg_backend_ops_t gpuimg_backend_cuda = {
    .name = "cuda",
    .probe = gpuimg_cuda_probe,
    .start = cuda_start,
    .wait_mode = gpuimg_cuda_set_blocking_sync,
    .open = cuda_open,
    .process = cuda_process,
    .pixels = cuda_pixels,
    .allocations = cuda_allocations,
    .close = cuda_close,
#ifdef GPUIMG_HAVE_NVJPEG
    .device_jpeg = 1,
#endif
};
