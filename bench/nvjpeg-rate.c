/* nvjpeg-rate.c: the hardware JPEG decoder's steady rate on real files by batch size and
 * number of threads, to learn what bounds a batch's device path.
 * Build and run (GPU machine): bench/bench-nvjpeg-rate DIR, or
 *   gcc -O2 -pthread bench/nvjpeg-rate.c -I/usr/local/cuda/include -L/usr/local/cuda/lib64 \
 *       -lnvjpeg -lcudart -o /tmp/nvjpeg-rate && /tmp/nvjpeg-rate N FILE...
 * Reads the files (baseline JPEGs of one size and channel count), then for each case decodes
 * them N times over in calls of nvjpegDecodeBatched on the HARDWARE backend (one handle; a
 * state, stream and output buffers per thread, each thread its share of the files; RGB
 * interleaved), timed from when every thread has made its state and decoded one batch, and
 * prints: batch, threads, pipeline (whether the handle lets nvJPEG buffer images across calls:
 * NVJPEG_FLAGS_HW_DECODE_NO_PIPELINE off), images/s, ms per call, and a checksum of the first
 * file as the first thread's warm-up call decoded it (the same in every case). */
#define _POSIX_C_SOURCE 200809L
#include <cuda_runtime.h>
#include <nvjpeg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BENCH_NAME "nvjpeg-rate"
#include "nvjpeg-bench.h"

#define MAX_FILES 4096
#define MAX_BATCH 32

static unsigned char *data[MAX_FILES];
static size_t sizes[MAX_FILES];
static int nfiles, width, height, rounds;
static pthread_barrier_t ready; /* every thread set up and warmed */

typedef struct {
  nvjpegHandle_t h;
  int batch, first, count; /* files first .. first + count - 1 */
  double call_ms;
  long calls;
  unsigned long sum;
} job_t;

/* One call on the files from k of j's share. */
static void decode_call(job_t *j, nvjpegJpegState_t st, nvjpegImage_t *out, cudaStream_t stream,
                        int k)
{
  const unsigned char *in[MAX_BATCH];
  size_t len[MAX_BATCH];
  for (int i = 0; i < j->batch; i++) {
    in[i] = data[j->first + k + i];
    len[i] = sizes[j->first + k + i];
  }
  check(nvjpegDecodeBatched(j->h, st, in, len, out, stream), "decode");
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
}

static void *decode_all(void *arg)
{
  job_t *j = arg;
  nvjpegJpegState_t st;
  cudaStream_t stream;
  nvjpegImage_t out[MAX_BATCH];
  size_t n = (size_t)width * 3 * height;
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  check(nvjpegJpegStateCreate(j->h, &st), "nvjpegJpegStateCreate");
  check(nvjpegDecodeBatchedInitialize(j->h, st, j->batch, 1, NVJPEG_OUTPUT_RGBI), "initialize");
  for (int i = 0; i < j->batch; i++) {
    memset(&out[i], 0, sizeof out[i]);
    check(cudaMalloc((void **)&out[i].channel[0], n), "cudaMalloc");
    out[i].pitch[0] = (size_t)width * 3;
  }
  decode_call(j, st, out, stream, 0); /* warm */
  unsigned char *host = malloc(n);
  check(host ? cudaMemcpy(host, out[0].channel[0], n, cudaMemcpyDeviceToHost) : 1, "copy");
  for (size_t i = 0; i < n; i++)
    j->sum = j->sum * 31 + host[i];
  free(host);
  pthread_barrier_wait(&ready);
  double t0 = now_ms();
  for (int r = 0; r < rounds; r++)
    for (int k = 0; k + j->batch <= j->count; k += j->batch) {
      decode_call(j, st, out, stream, k);
      j->calls++;
    }
  j->call_ms = (now_ms() - t0) / (j->calls ? j->calls : 1);
  for (int i = 0; i < j->batch; i++)
    cudaFree(out[i].channel[0]);
  nvjpegJpegStateDestroy(st);
  cudaStreamDestroy(stream);
  return NULL;
}

static void run_case(nvjpegHandle_t h, int pipeline, int batch, int threads)
{
  job_t jobs[16];
  pthread_t tid[16];
  int per = nfiles / threads;
  if (per < batch)
    return; /* too few files for a batch per thread */
  pthread_barrier_init(&ready, NULL, (unsigned)threads + 1);
  for (int t = 0; t < threads; t++) {
    jobs[t] = (job_t){h, batch, t * per, per, 0, 0, 0};
    pthread_create(&tid[t], NULL, decode_all, &jobs[t]);
  }
  pthread_barrier_wait(&ready);
  double t_start = now_ms();
  long images = 0;
  double call_ms = 0;
  for (int t = 0; t < threads; t++) {
    pthread_join(tid[t], NULL);
    images += jobs[t].calls * batch;
    call_ms += jobs[t].call_ms / threads;
  }
  double ms = now_ms() - t_start;
  pthread_barrier_destroy(&ready);
  printf("batch %2d threads %d pipeline %d: %7.0f img/s  %6.2f ms/call  sum %lx\n", batch, threads,
         pipeline, images / ms * 1e3, call_ms, jobs[0].sum);
  fflush(stdout);
}

int main(int argc, char **argv)
{
  if (argc < 3) {
    fprintf(stderr, "usage: nvjpeg-rate ROUNDS FILE...\n");
    return 2;
  }
  rounds = atoi(argv[1]);
  for (int i = 2; i < argc && nfiles < MAX_FILES; i++) {
    FILE *f = fopen(argv[i], "rb");
    if (!f)
      continue;
    fseek(f, 0, SEEK_END);
    sizes[nfiles] = (size_t)ftell(f);
    rewind(f);
    data[nfiles] = malloc(sizes[nfiles]);
    if (fread(data[nfiles], 1, sizes[nfiles], f) == sizes[nfiles])
      nfiles++;
    fclose(f);
  }
  if (nfiles == 0) {
    fprintf(stderr, "nvjpeg-rate: no file could be read\n");
    return 1;
  }
  check(cudaFree(0), "cudaFree(0)");
  for (int pipeline = 0; pipeline < 2; pipeline++) {
    nvjpegHandle_t h;
    unsigned flags =
        NVJPEG_FLAGS_BITSTREAM_STRICT | (pipeline ? 0 : NVJPEG_FLAGS_HW_DECODE_NO_PIPELINE);
    check(nvjpegCreateEx(NVJPEG_BACKEND_HARDWARE, NULL, NULL, flags, &h), "nvjpegCreateEx");
    if (!width) {
      int nc, ws[NVJPEG_MAX_COMPONENT], hs[NVJPEG_MAX_COMPONENT];
      nvjpegChromaSubsampling_t css;
      check(nvjpegGetImageInfo(h, data[0], sizes[0], &nc, &css, ws, hs), "nvjpegGetImageInfo");
      width = ws[0], height = hs[0];
      printf("%d files, %dx%d, %d rounds\n", nfiles, width, height, rounds);
    }
    static const int cases[][2] = {{32, 1}, {16, 1}, {8, 1}, {4, 1}, {32, 2}, {16, 2}, {8, 4}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
      if (!pipeline || cases[c][1] == 1)
        run_case(h, pipeline, cases[c][0], cases[c][1]);
    nvjpegDestroy(h);
  }
  return 0;
}
