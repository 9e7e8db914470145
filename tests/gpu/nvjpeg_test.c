/* nvjpeg_test.c: nvJPEG decode and encode against stb (suite gpu; 77 = no device); --bench N
 * times them. */
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_context.h"
#include "nvjpeg_gpu.h"
#include "gray_cpu.h"
#include "codec.h"
#include "ops.h"
#include "sample.h"
#include "test_rng.h"

/* Tolerances of nvJPEG's decode against stb's decode of the same bytes. They differ by
 * design: stb upsamples 4:2:0 chroma with libjpeg's triangle filter where a decoder may
 * replicate samples, and IDCTs and colour conversions round differently. libjpeg-turbo
 * standing in for such a decoder (replicated chroma, its islow or ifast IDCT) differs from
 * stb on the sample by up to 73 at saturated colour edges in 4:2:0 and 30 in 4:4:4, mean
 * 0.4 to 1.6; the bounds leave room above that. The mean is bounded for images of
 * MEAN_MIN_PIXELS or more (a 1x1 image's mean is one pixel's error). What keeps the bounds
 * meaningful is the source: nvJPEG's decode may differ from stb's but must be about as
 * close to the original image, its PSNR at most PSNR_GAP dB below stb's (or below
 * PSNR_EXACT, where both are as good as exact). Every value measured is printed. */
#define MEAN_MAX 2.0
#define MEAN_MIN_PIXELS 1000
#define MAX_420 96
#define MAX_444 40
#define PSNR_GAP 1.0
#define PSNR_EXACT 45.0
/* nvJPEG's encode at quality 90, decoded by stb, against the source (stb's own encoder
 * reaches about 37 dB on the sample, 41 on the synthetic images). */
#define ENCODE_PSNR_SAMPLE 35.0
#define ENCODE_PSNR_SYNTH 30.0

static int failures, checks;

typedef struct {
  const char *name;
  gpuimg_nvjpeg_backend_t backend;
  gpuimg_nvjpeg_t *nj;
} decoder_t;

static void check(int ok, const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Counts a check; prints FAIL and the description when it does not hold. */
static void check(int ok, const char *fmt, ...)
{
  va_list ap;
  checks++;
  if (ok)
    return;
  failures++;
  printf("FAIL ");
  va_start(ap, fmt);
  vprintf(fmt, ap);
  va_end(ap);
  printf("\n");
}

static void report_error(const char *label)
{
  failures++;
  printf("ERROR %s: %s (exit code %d)\n", label, gpuimg_error_message(), gpuimg_error_code());
}

static uint8_t clamp8(double v)
{
  return v < 0 ? 0 : v > 255 ? 255 : (uint8_t)(v + 0.5);
}

/* A deterministic photo-like RGB image: smooth gradients, low-frequency waves, a
 * soft-edged disc and a little noise; JPEG-friendly, unlike gpu_compare's uniform noise. */
static int make_photo(gpuimg_image_t *img, int w, int h)
{
  const double pi = 3.14159265358979323846;
  if (gpuimg_image_alloc(img, w, h, 3) < 0)
    return -1;
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      /* Features in pixels, not fractions of the image, so small images stay smooth. */
      double r = 128 + 80 * sin(2 * pi * (x / 397.0 + y / 1201.0));
      double g = 50 + 0.2 * y + 20 * sin(2 * pi * x / 331.0);
      double b = 200 - 0.14 * x + 25 * cos(2 * pi * y / 384.0);
      double dx = x - 0.6 * w, dy = y - 0.45 * h, d = sqrt(dx * dx + dy * dy);
      double a = d < 150 ? 1 : d > 174 ? 0 : (174 - d) / 24;
      double n = (int)(rng() % 9) - 4;
      uint8_t *q = img->data + ((size_t)y * w + x) * 3;
      q[0] = clamp8(r * (1 - a) + 225 * a + n);
      q[1] = clamp8(g * (1 - a) + 70 * a + n);
      q[2] = clamp8(b * (1 - a) + 45 * a + n);
    }
  return 0;
}

static int gray_of(const gpuimg_image_t *src, gpuimg_image_t *dst)
{
  if (gpuimg_image_alloc(dst, src->width, src->height, 1) < 0)
    return -1;
  return gpuimg_gray_cpu(src, dst);
}

static int stb_encode(const gpuimg_image_t *img, int quality, gpuimg_buf_t *out)
{
  gpuimg_encode_opts_t opts = {.quality = quality, .png_level = GPUIMG_DEFAULT_PNG_LEVEL};
  memset(out, 0, sizeof *out);
  return gpuimg_codec_stb.encode(img, GPUIMG_FORMAT_JPEG, &opts, "stb.jpg", out);
}

static int stb_decode(const uint8_t *bytes, size_t n, gpuimg_image_t *out)
{
  return gpuimg_codec_stb.decode(bytes, n, "stb.jpg", (uint64_t)1 << 28, out);
}

typedef struct {
  int max;
  double mean;
} diff_t;

static diff_t diff(const uint8_t *a, const uint8_t *b, size_t n)
{
  diff_t d = {0, 0.0};
  double sum = 0;
  for (size_t i = 0; i < n; i++) {
    int e = abs((int)a[i] - (int)b[i]);
    sum += e;
    if (e > d.max)
      d.max = e;
  }
  d.mean = n ? sum / (double)n : 0.0;
  return d;
}

/* PSNR in dB; 99 for identical data. */
static double psnr(const uint8_t *a, const uint8_t *b, size_t n)
{
  double se = 0;
  for (size_t i = 0; i < n; i++) {
    double e = (double)a[i] - (double)b[i];
    se += e * e;
  }
  return se == 0 ? 99.0 : 10.0 * log10(255.0 * 255.0 * (double)n / se);
}

/* Decodes bytes with nvJPEG into device memory sized from its header, as a caller would,
 * and downloads the pixels into out (channels 1 or 3). */
static int nv_decode(gpuimg_cuda_t *ctx, decoder_t *dec, const uint8_t *bytes, size_t n,
                     const char *what, int channels, gpuimg_image_t *out, float *ms)
{
  int w, h, c, rc = -1;
  memset(out, 0, sizeof *out);
  if (gpuimg_nvjpeg_info(dec->nj, bytes, n, what, &w, &h, &c) < 0)
    return -1;
  size_t bytes_out = gpuimg_image_bytes(w, h, channels);
  uint8_t *d_dst = gpuimg_cuda_dev_alloc(bytes_out);
  if (!d_dst)
    return -1;
  if (gpuimg_image_alloc(out, w, h, channels) == 0 &&
      gpuimg_nvjpeg_decode_device(dec->nj, bytes, n, what, d_dst, channels, ms) == 0 &&
      gpuimg_cuda_download(ctx, out->data, d_dst, bytes_out, NULL) == 0)
    rc = 0;
  gpuimg_cuda_dev_free(d_dst);
  if (rc < 0)
    gpuimg_image_free(out);
  return rc;
}

/* The forced hardware decoder may refuse a JPEG (a size or layout it does not take):
 * reported, not a failure; AUTO must then have used the CUDA decoder. */
static int hardware_refused(const decoder_t *dec)
{
  if (dec->backend != GPUIMG_NVJPEG_HARDWARE || gpuimg_error_code() != GPUIMG_EXIT_INPUT ||
      !strstr(gpuimg_error_message(), "hardware JPEG decoder does not take it"))
    return 0;
  printf("NOTE %s: %s\n", dec->name, gpuimg_error_message());
  return 1;
}

/* nvJPEG's decode of a JPEG against stb's decode of the same bytes and against the source
 * (src: the image the JPEG was made from, same channels as asked for). */
static void compare_decode(gpuimg_cuda_t *ctx, decoder_t *dec, const gpuimg_buf_t *jpeg,
                           const gpuimg_image_t *src, int channels, int max_allowed,
                           const char *label)
{
  gpuimg_image_t ref, got, ref_c;
  float ms = 0;
  memset(&ref_c, 0, sizeof ref_c);
  if (stb_decode(jpeg->data, jpeg->size, &ref) < 0) {
    report_error(label);
    return;
  }
  if (nv_decode(ctx, dec, jpeg->data, jpeg->size, label, channels, &got, &ms) < 0) {
    if (!hardware_refused(dec))
      report_error(label);
    gpuimg_image_free(&ref);
    return;
  }
  /* stb's decode in the asked-for channels: gray as Rec. 601 luma of stb's RGB, RGB from
   * gray by replication. */
  const gpuimg_image_t *r = &ref;
  if (channels == 1 && ref.channels == 3) {
    if (gray_of(&ref, &ref_c) < 0) {
      report_error(label);
      goto done;
    }
    r = &ref_c;
  } else if (channels == 3 && ref.channels == 1) {
    if (gpuimg_image_alloc(&ref_c, ref.width, ref.height, 3) < 0) {
      report_error(label);
      goto done;
    }
    for (size_t i = 0; i < (size_t)ref.width * ref.height; i++)
      memset(ref_c.data + 3 * i, ref.data[i], 3);
    r = &ref_c;
  }
  size_t n = gpuimg_image_bytes(got.width, got.height, channels);
  check(got.width == src->width && got.height == src->height, "%s %s: %dx%d, expected %dx%d",
        dec->name, label, got.width, got.height, src->width, src->height);
  if (got.width != src->width || got.height != src->height)
    goto done;
  diff_t d = diff(got.data, r->data, n);
  double p_nv = 0, p_stb = 0;
  int against_source = src->channels == channels;
  if (against_source) {
    p_nv = psnr(got.data, src->data, n);
    p_stb = psnr(r->data, src->data, n);
  }
  printf("decode %-8s %-28s %4dx%-4d -> %s: vs stb max %3d mean %.3f", dec->name, label, got.width,
         got.height, gpuimg_nvjpeg_last_decoder(dec->nj), d.max, d.mean);
  if (against_source)
    printf("; vs source %.2f dB (stb %.2f)", p_nv, p_stb);
  printf("; %.3f ms\n", ms);
  if ((size_t)got.width * got.height >= MEAN_MIN_PIXELS)
    check(d.mean <= MEAN_MAX, "%s %s: mean difference from stb %.3f > %.1f", dec->name, label,
          d.mean, MEAN_MAX);
  if (max_allowed > 0)
    check(d.max <= max_allowed, "%s %s: max difference from stb %d > %d", dec->name, label, d.max,
          max_allowed);
  if (against_source)
    check(p_nv >= fmin(p_stb, PSNR_EXACT) - PSNR_GAP, "%s %s: %.2f dB from the source, stb %.2f",
          dec->name, label, p_nv, p_stb);
done:
  gpuimg_image_free(&ref);
  gpuimg_image_free(&ref_c);
  gpuimg_image_free(&got);
}

/* stb's JPEGs of src at qualities 75 and 90 (4:2:0: stb subsamples up to 90) and 100
 * (4:4:4), decoded by each decoder to RGB; the q90 one to luma too. */
static void test_decode(gpuimg_cuda_t *ctx, decoder_t *decs, int ndecs, const gpuimg_image_t *src,
                        const char *name)
{
  static const int qualities[] = {75, 90, 100};
  gpuimg_image_t gray;
  char label[96];
  if (gray_of(src, &gray) < 0) {
    report_error(name);
    return;
  }
  for (int k = 0; k < 3; k++) {
    gpuimg_buf_t jpeg;
    int q = qualities[k];
    if (stb_encode(src, q, &jpeg) < 0) {
      report_error(name);
      continue;
    }
    for (int i = 0; i < ndecs; i++) {
      snprintf(label, sizeof label, "%s stb q%d %s", name, q, q <= 90 ? "4:2:0" : "4:4:4");
      compare_decode(ctx, &decs[i], &jpeg, src, 3, q <= 90 ? MAX_420 : MAX_444, label);
      if (q == 90) {
        /* Luma straight from the JPEG against luma of stb's RGB: rounding and clamping
         * differ at saturated colours, so only the mean is bounded. */
        snprintf(label, sizeof label, "%s stb q%d as Y", name, q);
        compare_decode(ctx, &decs[i], &jpeg, &gray, 1, 0, label);
      }
    }
    gpuimg_buf_free(&jpeg);
  }
  gpuimg_image_free(&gray);
}

/* nvJPEG's encode of src (3 channels, or 1: its luma) on the device at quality q. */
static int nv_encode(gpuimg_cuda_t *ctx, gpuimg_nvjpeg_t *nj, const gpuimg_image_t *src, int q,
                     gpuimg_buf_t *out, float *ms)
{
  size_t n = gpuimg_image_bytes(src->width, src->height, src->channels);
  uint8_t *d_src = gpuimg_cuda_dev_alloc(n), *bytes = NULL;
  size_t size = 0;
  int rc = -1;
  memset(out, 0, sizeof *out);
  if (d_src && gpuimg_cuda_upload(ctx, d_src, src->data, n, NULL) == 0 &&
      gpuimg_nvjpeg_encode_device(nj, d_src, src->width, src->height, src->channels, q,
                                  "nvjpeg.jpg", &bytes, &size, ms) == 0) {
    out->data = bytes; /* malloc'd, as gpuimg_buf_free() frees */
    out->size = out->cap = size;
    rc = 0;
  }
  gpuimg_cuda_dev_free(d_src);
  return rc;
}

typedef struct {
  gpuimg_cuda_t *ctx;
  gpuimg_nvjpeg_t *nj;
  const gpuimg_image_t *src;
  const gpuimg_buf_t *ref;
  int wrong, failed;
} encode_thread_t;

static void *encode_thread(void *arg)
{
  encode_thread_t *et = arg;
  for (int i = 0; i < 20 && !et->failed; i++) {
    gpuimg_buf_t got;
    if (nv_encode(et->ctx, et->nj, et->src, 90, &got, NULL) < 0) {
      et->failed = 1;
      break;
    }
    et->wrong += got.size != et->ref->size || memcmp(got.data, et->ref->data, got.size) != 0;
    gpuimg_buf_free(&got);
  }
  return NULL;
}

/* Two handles sharing one library handle encode src at once, on two threads with a context
 * each, 20 times: every file the bytes of ref. */
static void test_encode_threads(const gpuimg_image_t *src, const gpuimg_buf_t *ref)
{
  encode_thread_t et[2];
  memset(et, 0, sizeof et);
  for (int i = 0; i < 2; i++) {
    et[i].src = src;
    et[i].ref = ref;
    et[i].ctx = gpuimg_cuda_create(-1);
    if (et[i].ctx)
      et[i].nj = i == 0 ? gpuimg_nvjpeg_create(et[i].ctx, GPUIMG_NVJPEG_CUDA)
                        : gpuimg_nvjpeg_create_sharing(et[i].ctx, GPUIMG_NVJPEG_CUDA, et[0].nj);
  }
  pthread_t th[2];
  int started = 0;
  if (et[0].nj && et[1].nj && gpuimg_nvjpeg_shares(et[0].nj, et[1].nj))
    for (; started < 2; started++)
      if (pthread_create(&th[started], NULL, encode_thread, &et[started]) != 0)
        break;
  for (int i = 0; i < started; i++)
    pthread_join(th[i], NULL);
  if (started < 2)
    report_error("two threads sharing a handle: set-up");
  for (int i = 0; i < started; i++) {
    if (et[i].failed)
      report_error("two threads sharing a handle: encode");
    check(et[i].wrong == 0, "thread %d of two sharing a handle: %d of 20 files differ", i,
          et[i].wrong);
  }
  for (int i = 0; i < 2; i++) {
    gpuimg_nvjpeg_destroy(et[i].nj);
    gpuimg_cuda_destroy(et[i].ctx);
  }
}

/* Every handle encodes src to the same bytes: those of decs[0] (the CUDA decoder's handle),
 * also AUTO's, whose library handle is made by its first encode, and one that shares a
 * library handle and holds it alone once its maker is gone; and two handles sharing one
 * encode on two threads at once. */
static void test_encode_shared(gpuimg_cuda_t *ctx, decoder_t *decs, int ndecs,
                               const gpuimg_image_t *src)
{
  gpuimg_buf_t ref;
  if (nv_encode(ctx, decs[0].nj, src, 90, &ref, NULL) < 0) {
    report_error("shared: reference encode");
    return;
  }
  gpuimg_nvjpeg_t *maker = gpuimg_nvjpeg_create(ctx, GPUIMG_NVJPEG_CUDA);
  gpuimg_nvjpeg_t *heir =
      maker ? gpuimg_nvjpeg_create_sharing(ctx, GPUIMG_NVJPEG_AUTO, maker) : NULL;
  check(!heir || gpuimg_nvjpeg_shares(maker, heir), "a sharing handle made its own");
  check(!heir || !gpuimg_nvjpeg_shares(decs[0].nj, heir), "two makers share a handle");
  gpuimg_nvjpeg_destroy(maker);
  gpuimg_nvjpeg_t *encoders[] = {heir, decs[ndecs > 1].nj};
  const char *names[] = {"a handle left alone with a shared one", decs[ndecs > 1].name};
  for (int i = 0; i < 2; i++) {
    gpuimg_buf_t got;
    if (!encoders[i] || nv_encode(ctx, encoders[i], src, 90, &got, NULL) < 0) {
      report_error(names[i]);
      continue;
    }
    check(got.size == ref.size && memcmp(got.data, ref.data, ref.size) == 0,
          "%s: encodes %zu bytes unlike the CUDA handle's %zu", names[i], got.size, ref.size);
    gpuimg_buf_free(&got);
  }
  gpuimg_nvjpeg_destroy(heir);
  test_encode_threads(src, &ref);
  gpuimg_buf_free(&ref);
}

/* nvJPEG encodes src at q90; stb decodes it to the same size and channels, PSNR >= min_db
 * against src. Then every decoder decodes it against stb. */
static void test_encode_one(gpuimg_cuda_t *ctx, decoder_t *decs, int ndecs,
                            const gpuimg_image_t *src, double min_db, const char *name)
{
  gpuimg_buf_t jpeg, stb_jpeg;
  gpuimg_image_t back, stb_back;
  float ms = 0;
  char label[96];
  if (nv_encode(ctx, decs[0].nj, src, 90, &jpeg, &ms) < 0) {
    report_error(name);
    return;
  }
  if (stb_decode(jpeg.data, jpeg.size, &back) < 0) {
    printf("FAIL %s: stb cannot decode nvJPEG's file: %s\n", name, gpuimg_error_message());
    failures++;
    gpuimg_buf_free(&jpeg);
    return;
  }
  check(back.width == src->width && back.height == src->height && back.channels == src->channels,
        "%s: stb decodes nvJPEG's file as %dx%dx%d, expected %dx%dx%d", name, back.width,
        back.height, back.channels, src->width, src->height, src->channels);
  if (back.width == src->width && back.height == src->height && back.channels == src->channels) {
    size_t n = gpuimg_image_bytes(src->width, src->height, src->channels);
    double p = psnr(back.data, src->data, n), p_stb = 0;
    if (stb_encode(src, 90, &stb_jpeg) == 0 &&
        stb_decode(stb_jpeg.data, stb_jpeg.size, &stb_back) == 0) {
      p_stb = psnr(stb_back.data, src->data, n);
      gpuimg_image_free(&stb_back);
    }
    gpuimg_buf_free(&stb_jpeg);
    printf("encode %-37s %4dx%-4d q90: %zu bytes, stb decodes it %.2f dB from the source "
           "(stb's own q90: %.2f dB); %.3f ms\n",
           name, src->width, src->height, jpeg.size, p, p_stb, ms);
    check(p >= min_db, "%s: nvJPEG q90 decoded by stb is %.2f dB from the source, < %.1f", name, p,
          min_db);
    int w, h, c;
    if (gpuimg_nvjpeg_info(decs[0].nj, jpeg.data, jpeg.size, name, &w, &h, &c) < 0)
      report_error(name);
    else
      check(w == src->width && h == src->height && c == src->channels,
            "%s: nvJPEG reads its own file as %dx%dx%d", name, w, h, c);
    for (int i = 0; i < ndecs; i++) {
      snprintf(label, sizeof label, "%s nvJPEG q90", name);
      /* nvJPEG encodes colour as 4:2:0: the chroma upsampling bound applies (measured on
       * the H200: 60 at the sample's saturated edges). */
      compare_decode(ctx, &decs[i], &jpeg, src, src->channels,
                     src->channels == 3 ? MAX_420 : MAX_444, label);
      if (src->channels == 1) {
        snprintf(label, sizeof label, "%s nvJPEG q90 as RGB", name);
        compare_decode(ctx, &decs[i], &jpeg, src, 3, MAX_444, label);
      }
    }
  }
  gpuimg_image_free(&back);
  gpuimg_buf_free(&jpeg);
}

/* A lower quality makes a smaller file. */
static void test_encode_sizes(gpuimg_cuda_t *ctx, gpuimg_nvjpeg_t *nj, const gpuimg_image_t *src)
{
  gpuimg_buf_t lo, hi;
  if (nv_encode(ctx, nj, src, 50, &lo, NULL) < 0 || nv_encode(ctx, nj, src, 95, &hi, NULL) < 0) {
    report_error("encode q50/q95");
    return;
  }
  printf("encode %dx%dx%d: q50 %zu bytes, q95 %zu bytes\n", src->width, src->height, src->channels,
         lo.size, hi.size);
  check(lo.size < hi.size, "%d channels: q50 file (%zu bytes) not smaller than q95 (%zu)",
        src->channels, lo.size, hi.size);
  gpuimg_buf_free(&lo);
  gpuimg_buf_free(&hi);
}

/* Arguments the encoder refuses: their exit codes and exact messages, nothing returned. */
static void test_encode_errors(gpuimg_nvjpeg_t *nj)
{
  static uint8_t sentinel;
  static const struct {
    int w, h, c, q, code;
    const char *msg;
  } bad[] = {
      {8, 8, 3, 0, GPUIMG_EXIT_USAGE, "out.jpg: JPEG quality 0 is outside 1..100"},
      {8, 8, 3, 101, GPUIMG_EXIT_USAGE, "out.jpg: JPEG quality 101 is outside 1..100"},
      {8, 8, 4, 90, GPUIMG_EXIT_OUTPUT,
       "out.jpg: cannot encode JPEG: nvJPEG encodes 1 or 3 channels, not 4"},
      {0, 8, 3, 90, GPUIMG_EXIT_OUTPUT,
       "out.jpg: cannot encode JPEG: 0x8 is outside JPEG's 1..65535 pixels a side"},
      {65536, 1, 1, 90, GPUIMG_EXIT_OUTPUT,
       "out.jpg: cannot encode JPEG: 65536x1 is outside JPEG's 1..65535 pixels a side"},
  };
  uint8_t *d_src = gpuimg_cuda_dev_alloc(8 * 8 * 4);
  if (!d_src) {
    report_error("encode arguments");
    return;
  }
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    uint8_t *bytes = &sentinel;
    size_t size = 1;
    gpuimg_error_clear();
    int rc = gpuimg_nvjpeg_encode_device(nj, d_src, bad[i].w, bad[i].h, bad[i].c, bad[i].q,
                                         "out.jpg", &bytes, &size, NULL);
    check(rc < 0 && bytes == NULL && size == 0 && gpuimg_error_code() == bad[i].code &&
              strcmp(gpuimg_error_message(), bad[i].msg) == 0,
          "encode %dx%dx%d q%d: rc %d, exit code %d, \"%s\"; expected %d, \"%s\"", bad[i].w,
          bad[i].h, bad[i].c, bad[i].q, rc, gpuimg_error_code(), gpuimg_error_message(),
          bad[i].code, bad[i].msg);
  }
  gpuimg_cuda_dev_free(d_src);
}

/* A decode that must fail with exit code 3 and a message naming the file (must_fail), or
 * may also succeed (corrupt entropy-coded data cannot always be told from an image). */
static void expect_bad(gpuimg_cuda_t *ctx, decoder_t *dec, const uint8_t *bytes, size_t n,
                       int must_fail, const char *label)
{
  gpuimg_image_t got;
  gpuimg_error_clear();
  int rc = nv_decode(ctx, dec, bytes, n, "bad.jpg", 3, &got, NULL);
  int code = gpuimg_error_code();
  const char *msg = gpuimg_error_message();
  if (rc == 0) {
    printf("corrupt %-8s %-24s decoded (%dx%d)\n", dec->name, label, got.width, got.height);
    gpuimg_image_free(&got);
    check(!must_fail, "%s %s: decoded, expected exit code 3", dec->name, label);
    return;
  }
  printf("corrupt %-8s %-24s exit code %d: %s\n", dec->name, label, code, msg);
  check(code == GPUIMG_EXIT_INPUT && strncmp(msg, "bad.jpg: ", 9) == 0 && strlen(msg) > 9,
        "%s %s: exit code %d \"%s\", expected 3 and \"bad.jpg: <reason>\"", dec->name, label, code,
        msg);
}

/* Empty, foreign, truncated and corrupt files; then the handle still decodes a good one. */
static void test_corrupt(gpuimg_cuda_t *ctx, decoder_t *dec, const gpuimg_image_t *sample)
{
  gpuimg_buf_t jpeg;
  if (stb_encode(sample, 90, &jpeg) < 0) {
    report_error("corrupt");
    return;
  }
  size_t n = jpeg.size;
  uint8_t *b = malloc(n + 4096);
  if (!b) {
    report_error("corrupt");
    gpuimg_buf_free(&jpeg);
    return;
  }
  expect_bad(ctx, dec, jpeg.data, 0, 1, "empty");
  expect_bad(ctx, dec, gpuimg_sample_png, gpuimg_sample_png_size, 1, "a PNG file");
  static const size_t cuts[] = {2, 3, 20, 200};
  char label[64];
  for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
    snprintf(label, sizeof label, "first %zu bytes", cuts[i]);
    expect_bad(ctx, dec, jpeg.data, cuts[i], 1, label);
  }
  expect_bad(ctx, dec, jpeg.data, n / 2, 1, "first half");
  expect_bad(ctx, dec, jpeg.data, n - 2, 0, "no end-of-image marker");
  /* Random bytes after a JPEG signature. */
  memcpy(b, "\xff\xd8\xff\xe0", 4);
  for (size_t i = 4; i < 4096; i++)
    b[i] = (uint8_t)rng();
  expect_bad(ctx, dec, b, 4096, 1, "random after SOI");
  /* A zero height in the frame header (SOF0: FF C0, length, precision, height, width). */
  memcpy(b, jpeg.data, n);
  for (size_t i = 2; i + 9 < n; i++)
    if (b[i] == 0xff && b[i + 1] == 0xc0) {
      b[i + 5] = b[i + 6] = 0;
      break;
    }
  expect_bad(ctx, dec, b, n, 1, "zero height");
  /* Flipped bytes in the entropy-coded data (after the last header marker, SOS). */
  memcpy(b, jpeg.data, n);
  size_t sos = 0;
  for (size_t i = 2; i + 1 < n; i++)
    if (b[i] == 0xff && b[i + 1] == 0xda) {
      sos = i;
      break;
    }
  for (int k = 0; sos && k < 200; k++) {
    size_t at = sos + 20 + rng() % (n - sos - 40);
    b[at] ^= (uint8_t)(1 + rng() % 255);
  }
  expect_bad(ctx, dec, b, n, 0, "flipped scan bytes");
  /* The handle's state survives all of that. */
  compare_decode(ctx, dec, &jpeg, sample, 3, MAX_420, "sample after corrupt files");
  free(b);
  gpuimg_buf_free(&jpeg);
}

static int cmp_float(const void *a, const void *b)
{
  float x = *(const float *)a, y = *(const float *)b;
  return (x > y) - (x < y);
}

static void report_times(const char *what, float *t, int n)
{
  double sum = 0;
  for (int i = 0; i < n; i++)
    sum += t[i];
  qsort(t, (size_t)n, sizeof *t, cmp_float);
  printf("bench %-34s median %8.3f ms  mean %8.3f ms  min %8.3f ms  (%d runs)\n", what, t[n / 2],
         sum / n, t[0], n);
}

/* Batched hardware decodes of one image repeated: images per second for each batch size. */
static int bench_batches(gpuimg_cuda_t *ctx, decoder_t *decs, int ndecs, const gpuimg_buf_t *jpeg,
                         const gpuimg_image_t *src)
{
  gpuimg_nvjpeg_t *hw = NULL;
  for (int i = 0; i < ndecs; i++)
    if (decs[i].backend == GPUIMG_NVJPEG_HARDWARE)
      hw = decs[i].nj;
  if (!hw) {
    printf("bench batches: no hardware decoder\n");
    return 0;
  }
  size_t n = gpuimg_image_bytes(src->width, src->height, 3);
  uint8_t *d = gpuimg_cuda_dev_alloc(n * GPUIMG_NVJPEG_MAX_BATCH);
  const uint8_t *jpegs[GPUIMG_NVJPEG_MAX_BATCH];
  size_t sizes[GPUIMG_NVJPEG_MAX_BATCH];
  uint8_t *dsts[GPUIMG_NVJPEG_MAX_BATCH];
  int widths[GPUIMG_NVJPEG_MAX_BATCH];
  if (!d)
    return -1;
  (void)ctx;
  for (int i = 0; i < GPUIMG_NVJPEG_MAX_BATCH; i++) {
    jpegs[i] = jpeg->data;
    sizes[i] = jpeg->size;
    dsts[i] = d + n * (size_t)i;
    widths[i] = src->width;
  }
  for (int b = 1; b <= GPUIMG_NVJPEG_MAX_BATCH; b *= 2) {
    int calls = 0;
    double t0 = 0;
    for (int r = -2; r < 20; r++) {
      if (r == 0)
        t0 = gpuimg_now_ms();
      if (gpuimg_nvjpeg_decode_batch(hw, b, jpegs, sizes, dsts, widths, 3) < 0) {
        gpuimg_cuda_dev_free(d);
        return -1;
      }
      calls += r >= 0;
    }
    double ms = (gpuimg_now_ms() - t0) / calls;
    printf("bench batch %2d: %8.3f ms per call, %8.1f images/s\n", b, ms, b * 1000.0 / ms);
  }
  gpuimg_cuda_dev_free(d);
  return 0;
}

typedef struct {
  const gpuimg_buf_t *jpeg;
  size_t bytes;
  int info_only, done, failed;
  double until;
  double setup_ms;
} bench_thread_t;

static void *bench_thread(void *arg)
{
  bench_thread_t *bt = arg;
  double t0 = gpuimg_now_ms();
  gpuimg_cuda_t *ctx = gpuimg_cuda_create(-1);
  gpuimg_nvjpeg_t *nj = ctx ? gpuimg_nvjpeg_create(ctx, GPUIMG_NVJPEG_AUTO) : NULL;
  uint8_t *d = nj ? gpuimg_cuda_dev_alloc(bt->bytes) : NULL;
  bt->setup_ms = gpuimg_now_ms() - t0;
  bt->failed = d == NULL;
  bt->until = gpuimg_now_ms() + 1500;
  while (d && gpuimg_now_ms() < bt->until) {
    int w, h, c;
    if (gpuimg_nvjpeg_info(nj, bt->jpeg->data, bt->jpeg->size, "bench.jpg", &w, &h, &c) < 0 ||
        (!bt->info_only && gpuimg_nvjpeg_decode_device(nj, bt->jpeg->data, bt->jpeg->size,
                                                       "bench.jpg", d, 3, NULL) < 0)) {
      bt->failed = 1;
      break;
    }
    bt->done++;
  }
  gpuimg_cuda_dev_free(d);
  gpuimg_nvjpeg_destroy(nj);
  gpuimg_cuda_destroy(ctx);
  return NULL;
}

/* Threads with a handle each, decoding for 1.5 s after setting up: images/s, and the
 * slowest thread's set-up (context, handle, buffer), which is why batch mode has one
 * nvJPEG thread per device instead. */
static int bench_threads(const gpuimg_buf_t *jpeg, const gpuimg_image_t *src)
{
  static const int counts[] = {1, 4, 16};
  for (int info_only = 1; info_only >= 0; info_only--)
    for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
      int nt = counts[k], done = 0, failed = 0;
      double setup = 0;
      bench_thread_t bt[16];
      pthread_t th[16];
      double t0 = gpuimg_now_ms();
      int started = 0;
      for (int i = 0; i < nt; i++) {
        bt[i] = (bench_thread_t){
            jpeg, gpuimg_image_bytes(src->width, src->height, 3), info_only, 0, 0, 0, 0};
        if (pthread_create(&th[i], NULL, bench_thread, &bt[i]) != 0)
          break;
        started++;
      }
      failed = started < nt;
      for (int i = 0; i < started; i++) {
        pthread_join(th[i], NULL);
        done += bt[i].done;
        failed |= bt[i].failed;
        setup = bt[i].setup_ms > setup ? bt[i].setup_ms : setup;
      }
      double s = (gpuimg_now_ms() - t0 - setup) / 1000.0;
      printf("bench threads %2d %-14s %8.1f images/s, set-up %8.1f ms%s\n", nt,
             info_only ? "header only" : "header+decode", done / s, setup,
             failed ? " (FAILED)" : "");
    }
  return 0;
}

/* --bench N: host wall-clock ms per decode (each decoder) and per encode of a 1024x768 image
 * (the sample), after two unrecorded runs. */
static int bench(gpuimg_cuda_t *ctx, decoder_t *decs, int ndecs, const gpuimg_image_t *src,
                 int runs)
{
  gpuimg_buf_t jpeg;
  gpuimg_image_t gray;
  size_t n = gpuimg_image_bytes(src->width, src->height, 3);
  float *t = malloc(sizeof *t * (size_t)runs);
  uint8_t *d_img = gpuimg_cuda_dev_alloc(n);
  char what[96];
  if (!t || !d_img || stb_encode(src, 90, &jpeg) < 0 || gray_of(src, &gray) < 0 ||
      gpuimg_cuda_upload(ctx, d_img, src->data, n, NULL) < 0)
    return -1;
  printf("bench image %dx%d, stb q90 JPEG %zu bytes\n", src->width, src->height, jpeg.size);
  for (int i = 0; i < ndecs; i++)
    for (int c = 3; c >= 1; c -= 2) {
      for (int r = -2; r < runs; r++) {
        float ms;
        if (gpuimg_nvjpeg_decode_device(decs[i].nj, jpeg.data, jpeg.size, "bench.jpg", d_img, c,
                                        &ms) < 0)
          return -1;
        if (r >= 0)
          t[r] = ms;
      }
      snprintf(what, sizeof what, "decode %s (%s) to %s", decs[i].name,
               gpuimg_nvjpeg_last_decoder(decs[i].nj), c == 3 ? "RGB" : "Y");
      report_times(what, t, runs);
    }
  if (gpuimg_cuda_upload(ctx, d_img, src->data, n, NULL) < 0)
    return -1;
  for (int c = 3; c >= 1; c -= 2) {
    if (c == 1 && gpuimg_cuda_upload(ctx, d_img, gray.data, n / 3, NULL) < 0)
      return -1;
    size_t size = 0;
    for (int r = -2; r < runs; r++) {
      uint8_t *bytes;
      float ms;
      if (gpuimg_nvjpeg_encode_device(decs[0].nj, d_img, src->width, src->height, c, 90,
                                      "bench.jpg", &bytes, &size, &ms) < 0)
        return -1;
      free(bytes);
      if (r >= 0)
        t[r] = ms;
    }
    snprintf(what, sizeof what, "encode %s q90 (%zu bytes)", c == 3 ? "RGB 4:2:0" : "gray", size);
    report_times(what, t, runs);
  }
  /* The header parse alone (gpuimg_nvjpeg_info), on the AUTO handle. */
  for (int r = -2; r < runs; r++) {
    int w, h, c;
    double t0 = gpuimg_now_ms();
    if (gpuimg_nvjpeg_info(decs[ndecs > 1].nj, jpeg.data, jpeg.size, "bench.jpg", &w, &h, &c) < 0)
      return -1;
    if (r >= 0)
      t[r] = (float)(gpuimg_now_ms() - t0);
  }
  report_times("header (gpuimg_nvjpeg_info)", t, runs);
  gpuimg_cuda_dev_free(d_img);
  gpuimg_image_free(&gray);
  if (bench_batches(ctx, decs, ndecs, &jpeg, src) < 0 || bench_threads(&jpeg, src) < 0)
    return -1;
  gpuimg_buf_free(&jpeg);
  free(t);
  return 0;
}

int main(int argc, char **argv)
{
  char reason[256];
  int runs = 0;
  if (argc == 3 && strcmp(argv[1], "--bench") == 0) {
    char *end;
    long v = strtol(argv[2], &end, 10);
    if (*end || v < 1 || v > 100000) {
      fprintf(stderr, "nvjpeg_test: --bench needs a run count of 1..100000\n");
      return 2;
    }
    runs = (int)v;
  } else if (argc != 1) {
    fprintf(stderr, "usage: nvjpeg_test [--bench N]\n");
    return 2;
  }
  if (gpuimg_cuda_probe(reason, sizeof reason) <= 0) {
    printf("SKIP: no usable CUDA device: %s\n", reason);
    return 77;
  }
  gpuimg_cuda_t *ctx = gpuimg_cuda_create(-1);
  if (!ctx) {
    printf("ERROR: %s\n", gpuimg_error_message());
    return 1;
  }
  int major, minor, patch;
  gpuimg_nvjpeg_version(&major, &minor, &patch);
  printf("device: %s; nvJPEG %d.%d.%d\n", gpuimg_cuda_device_name(ctx), major, minor, patch);

  gpuimg_image_t sample;
  if (gpuimg_codec_stb.decode(gpuimg_sample_png, gpuimg_sample_png_size, "sample.png",
                              (uint64_t)1 << 28, &sample) < 0 ||
      sample.channels != 3) {
    printf("ERROR: the built-in sample: %s\n", gpuimg_error_message());
    return 1;
  }

  /* The CUDA decoder, AUTO (the hardware decoder where present, with the CUDA decoder for
   * what it refuses), and the hardware decoder alone where present. */
  decoder_t decs[3] = {{"cuda", GPUIMG_NVJPEG_CUDA, NULL},
                       {"auto", GPUIMG_NVJPEG_AUTO, NULL},
                       {"hardware", GPUIMG_NVJPEG_HARDWARE, NULL}};
  int ndecs = 0;
  for (int i = 0; i < 3; i++) {
    decs[ndecs] = decs[i];
    decs[ndecs].nj = gpuimg_nvjpeg_create(ctx, decs[i].backend);
    if (decs[ndecs].nj) {
      const char *why;
      int hw = gpuimg_nvjpeg_hardware(decs[ndecs].nj, &why);
      printf("decoder %s: hardware decoder %s%s%s\n", decs[i].name, hw ? "open" : "not used",
             why[0] ? ": " : "", why);
      ndecs++;
    } else if (decs[i].backend == GPUIMG_NVJPEG_HARDWARE) {
      printf("decoder hardware: not tested: %s\n", gpuimg_error_message());
    } else {
      report_error(decs[i].name);
      return 1;
    }
  }

  int rc = 0;
  if (runs) {
    if (bench(ctx, decs, ndecs, &sample, runs) < 0) {
      printf("ERROR bench: %s\n", gpuimg_error_message());
      rc = 1;
    }
  } else {
    gpuimg_image_t gray, img, img_gray;
    test_decode(ctx, decs, ndecs, &sample, "sample");
    test_encode_one(ctx, decs, ndecs, &sample, ENCODE_PSNR_SAMPLE, "sample RGB");
    if (gray_of(&sample, &gray) == 0) {
      test_encode_one(ctx, decs, ndecs, &gray, ENCODE_PSNR_SAMPLE, "sample gray");
      test_encode_sizes(ctx, decs[0].nj, &gray);
      gpuimg_image_free(&gray);
    }
    test_encode_sizes(ctx, decs[0].nj, &sample);
    test_encode_shared(ctx, decs, ndecs, &sample);
    test_encode_errors(decs[0].nj);
    static const int sizes[][2] = {{1, 1}, {17, 13}, {1023, 767}};
    for (int s = 0; s < 3; s++) {
      char name[32];
      snprintf(name, sizeof name, "photo %dx%d", sizes[s][0], sizes[s][1]);
      if (make_photo(&img, sizes[s][0], sizes[s][1]) < 0 || gray_of(&img, &img_gray) < 0) {
        report_error(name);
        continue;
      }
      test_decode(ctx, decs, ndecs, &img, name);
      test_encode_one(ctx, decs, ndecs, &img, ENCODE_PSNR_SYNTH, name);
      snprintf(name, sizeof name, "photo %dx%d gray", sizes[s][0], sizes[s][1]);
      test_encode_one(ctx, decs, ndecs, &img_gray, ENCODE_PSNR_SYNTH, name);
      gpuimg_image_free(&img);
      gpuimg_image_free(&img_gray);
    }
    for (int i = 0; i < ndecs; i++)
      test_corrupt(ctx, &decs[i], &sample);
    printf("%d checks, %d failures\n", checks, failures);
    rc = failures ? 1 : 0;
  }
  for (int i = 0; i < ndecs; i++)
    gpuimg_nvjpeg_destroy(decs[i].nj);
  gpuimg_image_free(&sample);
  gpuimg_cuda_destroy(ctx);
  return rc;
}
