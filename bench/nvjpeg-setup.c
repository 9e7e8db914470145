/* nvjpeg-setup.c: times each step of nvJPEG's set-up as gpuimg's decoder and encoder threads
 * take it, to find what a batch's first seconds are spent on.
 * Build and run (GPU machine): bench/bench-nvjpeg-setup, or
 *   gcc -O2 -pthread bench/nvjpeg-setup.c -I/usr/local/cuda/include -L/usr/local/cuda/lib64 \
 *       -lnvjpeg -lcudart -o /tmp/nvjpeg-setup && /tmp/nvjpeg-setup [BUSY_THREADS [ENC_FIRST]]
 * Prints one line per step: its name and milliseconds. Steps, in order, on one thread: the
 * CUDA context; a DEFAULT-backend handle, its state; a second DEFAULT handle (as the encoder
 * makes its own); the HARDWARE-backend handle and its state; per batch size 32, 16, ..., 1 a
 * state and nvjpegDecodeBatchedInitialize; the same state initialised again for another
 * size; the encoder's state and parameters; then the decoder's and the encoder's handles
 * made at once on two threads; last, batches of 32, 7, 32, 1, ... copies of one 1024x768
 * JPEG decoded on the hardware decoder, its one state initialised again before each (what a
 * decode costs after a re-initialisation). With ENC_FIRST 1 the encoder's state is made
 * before the DEFAULT handle's decode state (who pays the first state's cost). With
 * BUSY_THREADS > 0, that many threads spin on the cores meanwhile (as gpuimg's host workers
 * do during the set-up). With ENC_FIRST 2 the steps are gpuimg's own order instead (the
 * HARDWARE handle first with its state and stream, the encoder's DEFAULT handle, state and
 * parameters, a second decoder), every handle made with allocators that count and time
 * nvJPEG's device and pinned allocations, printed beside each step: whether the set-up's time
 * goes to allocating. */
#define _POSIX_C_SOURCE 200809L
#include <cuda_runtime.h>
#include <nvjpeg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define BENCH_NAME "nvjpeg-setup"
#include "nvjpeg-bench.h"

#define STEP(name, call)                                                                           \
  do {                                                                                             \
    double t0_ = now_ms();                                                                         \
    check((int)(call), name);                                                                      \
    printf("%-44s %9.2f ms\n", name, now_ms() - t0_);                                              \
  } while (0)

static volatile int spinning = 1;

/* nvJPEG's allocations through the counting allocators: calls, bytes and ms per kind. */
static struct {
  long calls[2];
  double bytes[2], ms[2];
} allocs;

static int count_alloc(int kind, int rc, size_t n, double t0)
{
  allocs.calls[kind]++;
  allocs.bytes[kind] += (double)n;
  allocs.ms[kind] += now_ms() - t0;
  return rc;
}

static int dev_malloc(void **p, size_t n)
{
  double t0 = now_ms();
  return count_alloc(0, (int)cudaMalloc(p, n), n, t0);
}

static int dev_free(void *p)
{
  return (int)cudaFree(p);
}

static int pinned_malloc(void **p, size_t n, unsigned flags)
{
  double t0 = now_ms();
  return count_alloc(1, (int)cudaHostAlloc(p, n, flags), n, t0);
}

static int pinned_free(void *p)
{
  return (int)cudaFreeHost(p);
}

static nvjpegDevAllocator_t dev_alloc = {dev_malloc, dev_free};
static nvjpegPinnedAllocator_t pin_alloc = {pinned_malloc, pinned_free};

/* The process's CPU time (user, system: ms), page faults (minor, major) and resident MB. */
static void process_use(double *v)
{
  struct rusage ru;
  long pages = 0, resident = 0;
  getrusage(RUSAGE_SELF, &ru);
  FILE *f = fopen("/proc/self/statm", "r");
  if (f) {
    if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
      resident = 0;
    fclose(f);
  }
  v[0] = ru.ru_utime.tv_sec * 1e3 + ru.ru_utime.tv_usec / 1e3;
  v[1] = ru.ru_stime.tv_sec * 1e3 + ru.ru_stime.tv_usec / 1e3;
  v[2] = (double)ru.ru_minflt;
  v[3] = (double)ru.ru_majflt;
  v[4] = (double)resident * (double)sysconf(_SC_PAGESIZE) / 1e6;
}

/* A step of gpuimg's order: its time, the allocations made in it, and the process's CPU time,
 * page faults and resident memory over it (is the time nvJPEG's CPU work, faulting memory in,
 * or waiting?). */
#define COUNTED(name, call)                                                                        \
  do {                                                                                             \
    long c0_ = allocs.calls[0], c1_ = allocs.calls[1];                                             \
    double b0_ = allocs.bytes[0], b1_ = allocs.bytes[1], m0_ = allocs.ms[0], m1_ = allocs.ms[1];   \
    double u0_[5], u1_[5];                                                                         \
    process_use(u0_);                                                                              \
    double t0_ = now_ms();                                                                         \
    check((int)(call), name);                                                                      \
    double t1_ = now_ms();                                                                         \
    process_use(u1_);                                                                              \
    printf(                                                                                        \
        "%-36s %8.2f ms; device %ld allocs %.1f MB %.2f ms; pinned %ld allocs %.1f MB %.2f ms\n",  \
        name, t1_ - t0_, allocs.calls[0] - c0_, (allocs.bytes[0] - b0_) / 1e6, allocs.ms[0] - m0_, \
        allocs.calls[1] - c1_, (allocs.bytes[1] - b1_) / 1e6, allocs.ms[1] - m1_);                 \
    printf("%-36s process cpu (spinning threads included): user %.1f ms, system %.1f ms; "         \
           "faults %.0f minor, %.0f major; "                                                       \
           "resident %+.1f MB (%.1f MB)\n",                                                        \
           "", u1_[0] - u0_[0], u1_[1] - u0_[1], u1_[2] - u0_[2], u1_[3] - u0_[3],                 \
           u1_[4] - u0_[4], u1_[4]);                                                               \
  } while (0)

/* gpuimg's order of set-up steps (ENC_FIRST 2), with the counting allocators. */
static void gpuimg_order(void)
{
  const unsigned hw_flags = NVJPEG_FLAGS_BITSTREAM_STRICT | NVJPEG_FLAGS_HW_DECODE_NO_PIPELINE;
  nvjpegHandle_t hw, dflt, hw2;
  nvjpegJpegState_t st, st2;
  nvjpegJpegStream_t stream;
  nvjpegEncoderState_t enc;
  nvjpegEncoderParams_t par;
  double start = now_ms();
  COUNTED("cuda context (cudaFree(0))", cudaFree(0));
  COUNTED("HARDWARE handle (first)",
          nvjpegCreateEx(NVJPEG_BACKEND_HARDWARE, &dev_alloc, &pin_alloc, hw_flags, &hw));
  COUNTED("its state", nvjpegJpegStateCreate(hw, &st));
  COUNTED("its stream", nvjpegJpegStreamCreate(hw, &stream));
  COUNTED("its initialisation for 8",
          nvjpegDecodeBatchedInitialize(hw, st, 8, 1, NVJPEG_OUTPUT_RGBI));
  COUNTED("DEFAULT handle (encoder)", nvjpegCreateEx(NVJPEG_BACKEND_DEFAULT, &dev_alloc, &pin_alloc,
                                                     NVJPEG_FLAGS_BITSTREAM_STRICT, &dflt));
  COUNTED("encoder state", nvjpegEncoderStateCreate(dflt, &enc, 0));
  COUNTED("encoder parameters", nvjpegEncoderParamsCreate(dflt, &par, 0));
  COUNTED("second HARDWARE handle",
          nvjpegCreateEx(NVJPEG_BACKEND_HARDWARE, &dev_alloc, &pin_alloc, hw_flags, &hw2));
  COUNTED("its state", nvjpegJpegStateCreate(hw2, &st2));
  printf("%-36s %8.2f ms\n", "gpuimg's order, all", now_ms() - start);
}

static void *spin(void *arg)
{
  (void)arg;
  volatile unsigned long x = 0;
  while (spinning)
    x++;
  return NULL;
}

/* What the decoder thread makes: the hardware handle, its state, one batch state of 32. */
static void *decoder_setup(void *arg)
{
  double t0 = now_ms();
  nvjpegHandle_t h;
  nvjpegJpegState_t s;
  check(nvjpegCreateEx(NVJPEG_BACKEND_HARDWARE, NULL, NULL,
                       NVJPEG_FLAGS_BITSTREAM_STRICT | NVJPEG_FLAGS_HW_DECODE_NO_PIPELINE, &h),
        "parallel hardware handle");
  check(nvjpegJpegStateCreate(h, &s), "parallel state");
  check(nvjpegDecodeBatchedInitialize(h, s, 32, 1, NVJPEG_OUTPUT_RGBI), "parallel init");
  *(double *)arg = now_ms() - t0;
  return NULL;
}

/* What the encoder thread makes: a DEFAULT handle and the encoder's state. */
static void *encoder_setup(void *arg)
{
  double t0 = now_ms();
  nvjpegHandle_t h;
  nvjpegEncoderState_t e;
  check(nvjpegCreateEx(NVJPEG_BACKEND_DEFAULT, NULL, NULL, NVJPEG_FLAGS_BITSTREAM_STRICT, &h),
        "parallel default handle");
  check(nvjpegEncoderStateCreate(h, &e, 0), "parallel encoder state");
  *(double *)arg = now_ms() - t0;
  return NULL;
}

/* The set-up steps on one thread, in gpuimg's order; the handles and the encoder's state and
 * parameters are handed back for the decode timing. */
static void setup_steps(int enc_first, nvjpegHandle_t *dflt, nvjpegHandle_t *hw,
                        nvjpegEncoderState_t *enc, nvjpegEncoderParams_t *par)
{
  nvjpegHandle_t dflt2;
  nvjpegJpegState_t dstate, hstate, batch[6];
  STEP("DEFAULT handle",
       nvjpegCreateEx(NVJPEG_BACKEND_DEFAULT, NULL, NULL, NVJPEG_FLAGS_BITSTREAM_STRICT, dflt));
  if (enc_first) /* who pays the first state's cost when the encoder's state comes first */
    STEP("encoder state (first on DEFAULT handle)", nvjpegEncoderStateCreate(*dflt, enc, 0));
  STEP("DEFAULT state", nvjpegJpegStateCreate(*dflt, &dstate));
  STEP("second DEFAULT handle",
       nvjpegCreateEx(NVJPEG_BACKEND_DEFAULT, NULL, NULL, NVJPEG_FLAGS_BITSTREAM_STRICT, &dflt2));
  STEP("HARDWARE handle",
       nvjpegCreateEx(NVJPEG_BACKEND_HARDWARE, NULL, NULL,
                      NVJPEG_FLAGS_BITSTREAM_STRICT | NVJPEG_FLAGS_HW_DECODE_NO_PIPELINE, hw));
  STEP("HARDWARE state", nvjpegJpegStateCreate(*hw, &hstate));
  char name[64];
  for (int i = 0, n = 32; n >= 1; n /= 2, i++) {
    snprintf(name, sizeof name, "batch %2d: state", n);
    STEP(name, nvjpegJpegStateCreate(*hw, &batch[i]));
    snprintf(name, sizeof name, "batch %2d: nvjpegDecodeBatchedInitialize", n);
    STEP(name, nvjpegDecodeBatchedInitialize(*hw, batch[i], n, 1, NVJPEG_OUTPUT_RGBI));
  }
  STEP("state of 32 initialised again for 32",
       nvjpegDecodeBatchedInitialize(*hw, batch[0], 32, 1, NVJPEG_OUTPUT_RGBI));
  STEP("state of 32 initialised again for 16",
       nvjpegDecodeBatchedInitialize(*hw, batch[0], 16, 1, NVJPEG_OUTPUT_RGBI));
  STEP("state of 32 initialised again for 1",
       nvjpegDecodeBatchedInitialize(*hw, batch[0], 1, 1, NVJPEG_OUTPUT_RGBI));
  STEP("state of 32 initialised again for 32 (Y)",
       nvjpegDecodeBatchedInitialize(*hw, batch[0], 32, 1, NVJPEG_OUTPUT_Y));
  if (!enc_first)
    STEP("encoder state (DEFAULT handle)", nvjpegEncoderStateCreate(*dflt, enc, 0));
  STEP("encoder parameters", nvjpegEncoderParamsCreate(*dflt, par, 0));
}

/* The decoder's and the encoder's handles made at once on two threads. */
static void two_threads(void)
{
  double dec_ms = 0, enc_ms = 0, t0 = now_ms();
  pthread_t a, b;
  pthread_create(&a, NULL, decoder_setup, &dec_ms);
  pthread_create(&b, NULL, encoder_setup, &enc_ms);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  printf("%-44s %9.2f ms\n", "two threads: decoder (HW handle, state, 32)", dec_ms);
  printf("%-44s %9.2f ms\n", "two threads: encoder (DEFAULT handle, state)", enc_ms);
  printf("%-44s %9.2f ms\n", "two threads: both done", now_ms() - t0);
}

#define W 1024
#define H 768

/* A 1024x768 RGB JPEG (quality 90, 4:2:0) of a gradient, encoded by nvJPEG; *len its size. */
static unsigned char *make_jpeg(nvjpegHandle_t dflt, nvjpegEncoderState_t enc,
                                nvjpegEncoderParams_t par, unsigned char *d_img, size_t *len)
{
  static unsigned char host[W * H * 3];
  for (size_t i = 0; i < sizeof host; i++)
    host[i] = (unsigned char)(i % (W * 3) / 12 + i / (W * 3) / 3);
  check(cudaMemcpy(d_img, host, sizeof host, cudaMemcpyHostToDevice), "upload");
  nvjpegImage_t src = {{d_img}, {W * 3}};
  check(nvjpegEncoderParamsSetQuality(par, 90, 0), "quality");
  check(nvjpegEncoderParamsSetSamplingFactors(par, NVJPEG_CSS_420, 0), "sampling");
  check(nvjpegEncodeImage(dflt, enc, par, &src, NVJPEG_INPUT_RGBI, W, H, 0), "encode");
  check(nvjpegEncodeRetrieveBitstream(dflt, enc, NULL, len, 0), "bitstream size");
  unsigned char *jpeg = malloc(*len);
  check(nvjpegEncodeRetrieveBitstream(dflt, enc, jpeg, len, 0), "bitstream");
  check(cudaStreamSynchronize(0), "encode sync");
  return jpeg;
}

/* Batches of the sizes below on one hardware state, initialised again before each: the
 * initialisation and the decode timed apart. */
static void decode_after_reinit(nvjpegHandle_t dflt, nvjpegHandle_t hw, nvjpegEncoderState_t enc,
                                nvjpegEncoderParams_t par)
{
  static const int sizes[] = {32, 7, 32, 1, 32, 7, 7, 32};
  unsigned char *d_img, *d_out;
  check(cudaMalloc((void **)&d_img, W * H * 3), "cudaMalloc");
  check(cudaMalloc((void **)&d_out, (size_t)32 * W * H * 3), "cudaMalloc");
  size_t len;
  unsigned char *jpeg = make_jpeg(dflt, enc, par, d_img, &len);
  const unsigned char *data[32];
  size_t lengths[32];
  nvjpegImage_t dst[32];
  memset(dst, 0, sizeof dst);
  for (int i = 0; i < 32; i++) {
    data[i] = jpeg;
    lengths[i] = len;
    dst[i].channel[0] = d_out + (size_t)i * W * H * 3;
    dst[i].pitch[0] = W * 3;
  }
  nvjpegJpegState_t st;
  check(nvjpegJpegStateCreate(hw, &st), "state");
  for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
    double t0 = now_ms();
    check(nvjpegDecodeBatchedInitialize(hw, st, sizes[k], 1, NVJPEG_OUTPUT_RGBI), "init");
    double t1 = now_ms();
    check(nvjpegDecodeBatched(hw, st, data, lengths, dst, 0), "decode");
    check(cudaStreamSynchronize(0), "decode sync");
    printf("decode %2d after initialising for it: init %6.3f ms, decode %7.3f ms (%zu-byte JPEG)\n",
           sizes[k], t1 - t0, now_ms() - t1, len);
  }
  free(jpeg);
}

int main(int argc, char **argv)
{
  int busy = argc > 1 ? atoi(argv[1]) : 0, enc_first = argc > 2 && atoi(argv[2]) != 0;
  pthread_t spinners[256];
  if (busy > 256)
    busy = 256;
  for (int i = 0; i < busy; i++)
    pthread_create(&spinners[i], NULL, spin, NULL);
  printf("# nvjpeg-setup, %d busy threads, order %d\n", busy, argc > 2 ? atoi(argv[2]) : 0);
  if (argc > 2 && atoi(argv[2]) == 2) {
    gpuimg_order();
    spinning = 0;
    for (int i = 0; i < busy; i++)
      pthread_join(spinners[i], NULL);
    return 0;
  }
  double start = now_ms();
  STEP("cuda context (cudaFree(0))", cudaFree(0));
  nvjpegHandle_t dflt, hw;
  nvjpegEncoderState_t enc;
  nvjpegEncoderParams_t par;
  setup_steps(enc_first, &dflt, &hw, &enc, &par);
  printf("%-44s %9.2f ms\n", "all of the above", now_ms() - start);
  two_threads();
  decode_after_reinit(dflt, hw, enc, par);
  spinning = 0;
  for (int i = 0; i < busy; i++)
    pthread_join(spinners[i], NULL);
  return 0;
}
