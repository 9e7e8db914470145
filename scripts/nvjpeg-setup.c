/* nvjpeg-setup.c: times each step of nvJPEG's set-up as gpuimg's decoder and encoder threads
 * take it (issue 19), to find what a batch's first seconds are spent on.
 * Build and run (GPU machine): scripts/bench-nvjpeg-setup, or
 *   gcc -O2 -pthread scripts/nvjpeg-setup.c -I/usr/local/cuda/include -L/usr/local/cuda/lib64 \
 *       -lnvjpeg -lcudart -o /tmp/nvjpeg-setup && /tmp/nvjpeg-setup [BUSY_THREADS [ENC_FIRST]]
 * Prints one line per step: its name and milliseconds. Steps, in order, on one thread: the
 * CUDA context; a DEFAULT-backend handle, its state; a second DEFAULT handle (as the encoder
 * makes its own); the HARDWARE-backend handle and its state; per batch size 32, 16, ..., 1 a
 * state and nvjpegDecodeBatchedInitialize; the same state initialised again for another
 * size; the encoder's state and parameters; then the decoder's and the encoder's handles
 * made at once on two threads. With ENC_FIRST 1 the encoder's state is made before the
 * DEFAULT handle's decode state (who pays the first state's cost). With BUSY_THREADS > 0, that many
 * threads spin on the cores meanwhile (as gpuimg's host workers do during the set-up). */
#define _POSIX_C_SOURCE 200809L
#include <cuda_runtime.h>
#include <nvjpeg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ms(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int check(int st, const char *what)
{
  if (st != 0) {
    fprintf(stderr, "nvjpeg-setup: %s failed: status %d\n", what, st);
    exit(1);
  }
  return 0;
}

#define STEP(name, call)                                                                           \
  do {                                                                                             \
    double t0_ = now_ms();                                                                         \
    check((int)(call), name);                                                                      \
    printf("%-44s %9.2f ms\n", name, now_ms() - t0_);                                              \
  } while (0)

static volatile int spinning = 1;

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

int main(int argc, char **argv)
{
  int busy = argc > 1 ? atoi(argv[1]) : 0, enc_first = argc > 2 && atoi(argv[2]) != 0;
  pthread_t spinners[256];
  if (busy > 256)
    busy = 256;
  for (int i = 0; i < busy; i++)
    pthread_create(&spinners[i], NULL, spin, NULL);
  printf("# nvjpeg-setup, %d busy threads\n", busy);
  double start = now_ms();
  STEP("cuda context (cudaFree(0))", cudaFree(0));
  nvjpegHandle_t dflt, dflt2, hw;
  nvjpegJpegState_t dstate, hstate;
  STEP("DEFAULT handle",
       nvjpegCreateEx(NVJPEG_BACKEND_DEFAULT, NULL, NULL, NVJPEG_FLAGS_BITSTREAM_STRICT, &dflt));
  nvjpegEncoderState_t enc;
  if (enc_first) /* who pays the first state's cost when the encoder's state comes first */
    STEP("encoder state (first on DEFAULT handle)", nvjpegEncoderStateCreate(dflt, &enc, 0));
  STEP("DEFAULT state", nvjpegJpegStateCreate(dflt, &dstate));
  STEP("second DEFAULT handle",
       nvjpegCreateEx(NVJPEG_BACKEND_DEFAULT, NULL, NULL, NVJPEG_FLAGS_BITSTREAM_STRICT, &dflt2));
  STEP("HARDWARE handle",
       nvjpegCreateEx(NVJPEG_BACKEND_HARDWARE, NULL, NULL,
                      NVJPEG_FLAGS_BITSTREAM_STRICT | NVJPEG_FLAGS_HW_DECODE_NO_PIPELINE, &hw));
  STEP("HARDWARE state", nvjpegJpegStateCreate(hw, &hstate));
  nvjpegJpegState_t batch[6];
  char name[64];
  for (int i = 0, n = 32; n >= 1; n /= 2, i++) {
    snprintf(name, sizeof name, "batch %2d: state", n);
    STEP(name, nvjpegJpegStateCreate(hw, &batch[i]));
    snprintf(name, sizeof name, "batch %2d: nvjpegDecodeBatchedInitialize", n);
    STEP(name, nvjpegDecodeBatchedInitialize(hw, batch[i], n, 1, NVJPEG_OUTPUT_RGBI));
  }
  STEP("state of 32 initialised again for 32",
       nvjpegDecodeBatchedInitialize(hw, batch[0], 32, 1, NVJPEG_OUTPUT_RGBI));
  STEP("state of 32 initialised again for 16",
       nvjpegDecodeBatchedInitialize(hw, batch[0], 16, 1, NVJPEG_OUTPUT_RGBI));
  STEP("state of 32 initialised again for 1",
       nvjpegDecodeBatchedInitialize(hw, batch[0], 1, 1, NVJPEG_OUTPUT_RGBI));
  STEP("state of 32 initialised again for 32 (Y)",
       nvjpegDecodeBatchedInitialize(hw, batch[0], 32, 1, NVJPEG_OUTPUT_Y));
  nvjpegEncoderParams_t par;
  if (!enc_first)
    STEP("encoder state (DEFAULT handle)", nvjpegEncoderStateCreate(dflt, &enc, 0));
  STEP("encoder parameters", nvjpegEncoderParamsCreate(dflt, &par, 0));
  printf("%-44s %9.2f ms\n", "all of the above", now_ms() - start);

  double dec_ms = 0, enc_ms = 0, t0 = now_ms();
  pthread_t a, b;
  pthread_create(&a, NULL, decoder_setup, &dec_ms);
  pthread_create(&b, NULL, encoder_setup, &enc_ms);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  printf("%-44s %9.2f ms\n", "two threads: decoder (HW handle, state, 32)", dec_ms);
  printf("%-44s %9.2f ms\n", "two threads: encoder (DEFAULT handle, state)", enc_ms);
  printf("%-44s %9.2f ms\n", "two threads: both done", now_ms() - t0);
  spinning = 0;
  for (int i = 0; i < busy; i++)
    pthread_join(spinners[i], NULL);
  return 0;
}
