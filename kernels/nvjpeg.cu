// nvjpeg.cu: JPEG decode into and encode from device memory with nvJPEG, on a context's stream.
#include <nvjpeg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_internal.cuh"
#include "nvjpeg_gpu.h"

#ifndef GPUIMG_HAVE_NVJPEG
#error "nvjpeg.cu is built only with GPUIMG_HAVE_NVJPEG (kernels/meson.build)"
#endif

// Two nvJPEG library handles, because the hardware backend is a property of the handle:
// - the DEFAULT-backend handle (lib) runs the CUDA decoder through the single-image
//   nvjpegDecode(), and encodes; made when first needed (where the hardware decoder reads
//   the headers and takes every JPEG it is never needed: 0.1-0.3 s saved on an H200), and
//   shared between the gpuimg_nvjpeg_t made with gpuimg_nvjpeg_create_sharing() (nvJPEG's
//   handle may be used from several threads; states and parsed streams may not, so each
//   gpuimg_nvjpeg_t keeps its own);
// - hw_handle (NVJPEG_BACKEND_HARDWARE), only where asked for and present, reads headers and
//   runs the hardware decoder through the batched API (the only API that reaches the
//   hardware engines): batches of one image for gpuimg_nvjpeg_decode_device(), of up to
//   GPUIMG_NVJPEG_MAX_BATCH for gpuimg_nvjpeg_decode_batch().
// Both are strict about bitstream errors, so a truncated file is an error instead of an
// image padded with grey.
struct shared_lib {
  nvjpegHandle_t handle;
  int refs; // gpuimg_nvjpeg_t using it (atomic)
};

struct gpuimg_nvjpeg {
  gpuimg_cuda_t *ctx; // device and stream; not owned
  gpuimg_nvjpeg_backend_t backend;
  shared_lib *lib;                  // NULL until the DEFAULT handle is first needed
  nvjpegJpegState_t state;          // nvjpegDecode()'s state, made by its first decode
  nvjpegJpegStream_t header;        // parsed header for gpuimg_nvjpeg_info(), with lib
  nvjpegEncoderState_t enc_state;   // created by the first encode
  nvjpegEncoderParams_t enc_params; // set again by every encode
  nvjpegHandle_t hw_handle;         // NULL: no hardware decoder
  // The hardware decoder's one state, for single images and batches alike: making a state
  // takes about 0.1 s on the H200, initialising one for another batch size or output format
  // microseconds (bench/bench-nvjpeg-setup), so it is initialised again whenever the
  // size or format changes instead of keeping a state for each.
  nvjpegJpegState_t hw_state;
  nvjpegJpegStream_t hw_header;
  int hw_format; // output format hw_state is initialised for; -1 for none (also after a failure)
  int hw_batch;  // batch size it is initialised for
  const char *hw_why; // why there is no hardware decoder, or a note on it
  const char *last;   // decoder of the last decode
};

namespace
{

// nvJPEG has no status-to-string function.
const char *status_name(nvjpegStatus_t st)
{
  switch (st) {
  case NVJPEG_STATUS_SUCCESS:
    return "NVJPEG_STATUS_SUCCESS";
  case NVJPEG_STATUS_NOT_INITIALIZED:
    return "NVJPEG_STATUS_NOT_INITIALIZED";
  case NVJPEG_STATUS_INVALID_PARAMETER:
    return "NVJPEG_STATUS_INVALID_PARAMETER";
  case NVJPEG_STATUS_BAD_JPEG:
    return "NVJPEG_STATUS_BAD_JPEG";
  case NVJPEG_STATUS_JPEG_NOT_SUPPORTED:
    return "NVJPEG_STATUS_JPEG_NOT_SUPPORTED";
  case NVJPEG_STATUS_ALLOCATOR_FAILURE:
    return "NVJPEG_STATUS_ALLOCATOR_FAILURE (out of memory)";
  case NVJPEG_STATUS_EXECUTION_FAILED:
    return "NVJPEG_STATUS_EXECUTION_FAILED";
  case NVJPEG_STATUS_ARCH_MISMATCH:
    return "NVJPEG_STATUS_ARCH_MISMATCH (not supported on this GPU)";
  case NVJPEG_STATUS_INTERNAL_ERROR:
    return "NVJPEG_STATUS_INTERNAL_ERROR";
  case NVJPEG_STATUS_IMPLEMENTATION_NOT_SUPPORTED:
    return "NVJPEG_STATUS_IMPLEMENTATION_NOT_SUPPORTED";
  case NVJPEG_STATUS_INCOMPLETE_BITSTREAM:
    return "NVJPEG_STATUS_INCOMPLETE_BITSTREAM";
  }
  return "unknown nvJPEG status";
}

// Statuses that describe the JPEG data rather than the library or the device, when the
// call was given a valid handle, state, buffer and length (every call here is).
bool is_data_status(nvjpegStatus_t st)
{
  return st == NVJPEG_STATUS_BAD_JPEG || st == NVJPEG_STATUS_JPEG_NOT_SUPPORTED ||
         st == NVJPEG_STATUS_INCOMPLETE_BITSTREAM || st == NVJPEG_STATUS_INVALID_PARAMETER ||
         st == NVJPEG_STATUS_IMPLEMENTATION_NOT_SUPPORTED;
}

// A failed nvJPEG call becomes a device error naming the call, file and line (exit 5),
// like gpuimg_cuda_fail(); the caller returns -1. A CUDA error nvJPEG met is named too,
// and taken off cudaGetLastError() so that a later launch check does not report it again.
int nvjpeg_fail(nvjpegStatus_t st, const char *call, const char *file, int line)
{
  const char *base = strrchr(file, '/');
  cudaError_t err = cudaGetLastError();
  char cuda[160] = "";
  if (err != cudaSuccess)
    snprintf(cuda, sizeof cuda, " (CUDA: %s)", cudaGetErrorString(err));
  gpuimg_error_set(GPUIMG_EXIT_DEVICE, "nvjpeg", "%s failed (%s:%d): %s%s", call,
                   base ? base + 1 : file, line, status_name(st), cuda);
  return -1;
}

// A failed call that read the JPEG: bad data is an input error (exit 3) naming the file.
int decode_fail(nvjpegStatus_t st, const char *call, const char *what, const char *file, int line)
{
  if (!is_data_status(st))
    return nvjpeg_fail(st, call, file, line);
  const char *reason =
      st == NVJPEG_STATUS_INCOMPLETE_BITSTREAM ? "truncated JPEG data"
      : st == NVJPEG_STATUS_JPEG_NOT_SUPPORTED || st == NVJPEG_STATUS_IMPLEMENTATION_NOT_SUPPORTED
          ? "a kind of JPEG nvJPEG cannot decode"
          : "corrupt or truncated JPEG data";
  cudaGetLastError(); // nothing of nvJPEG's failure may reach a later launch check
  gpuimg_error_set(GPUIMG_EXIT_INPUT, what, "cannot decode JPEG: %s (%s: %s)", reason, call,
                   status_name(st));
  return -1;
}

#define GPUIMG_NVJPEG_CHECK(call)                                                                  \
  do {                                                                                             \
    nvjpegStatus_t gpuimg_st_ = (call);                                                            \
    if (gpuimg_st_ != NVJPEG_STATUS_SUCCESS)                                                       \
      return nvjpeg_fail(gpuimg_st_, #call, __FILE__, __LINE__);                                   \
  } while (0)

#define GPUIMG_NVJPEG_CHECK_DATA(call, what)                                                       \
  do {                                                                                             \
    nvjpegStatus_t gpuimg_st_ = (call);                                                            \
    if (gpuimg_st_ != NVJPEG_STATUS_SUCCESS)                                                       \
      return decode_fail(gpuimg_st_, #call, what, __FILE__, __LINE__);                             \
  } while (0)

// What gpuimg_nvjpeg_info() reads from a header.
struct header_facts {
  int ncomp, widths[NVJPEG_MAX_COMPONENT], heights[NVJPEG_MAX_COMPONENT];
  nvjpegChromaSubsampling_t css;
  nvjpegJpegEncoding_t encoding; // the frame header's coding process and sample precision,
  unsigned precision;            // which nvjpegGetImageInfo() does not report
  bool parsed;                   // both reads of the bytes succeeded
};

// Reads the header of the n bytes at jpeg with handle h into stream and *f; *call names
// the call that failed.
nvjpegStatus_t read_header(nvjpegHandle_t h, nvjpegJpegStream_t stream, const uint8_t *jpeg,
                           size_t n, header_facts *f, const char **call)
{
  memset(f, 0, sizeof *f);
  *call = "nvjpegGetImageInfo";
  nvjpegStatus_t st = nvjpegGetImageInfo(h, jpeg, n, &f->ncomp, &f->css, f->widths, f->heights);
  if (st != NVJPEG_STATUS_SUCCESS)
    return st;
  *call = "nvjpegJpegStreamParseHeader";
  if ((st = nvjpegJpegStreamParseHeader(h, jpeg, n, stream)) != NVJPEG_STATUS_SUCCESS)
    return st;
  f->parsed = true;
  *call = "nvjpegJpegStreamGetJpegEncoding";
  if ((st = nvjpegJpegStreamGetJpegEncoding(stream, &f->encoding)) != NVJPEG_STATUS_SUCCESS)
    return st;
  *call = "nvjpegJpegStreamGetSamplePrecision";
  return nvjpegJpegStreamGetSamplePrecision(stream, &f->precision);
}

// Attaches lib, one more user of it, and the parsed stream that goes with it.
nvjpegStatus_t lib_attach(gpuimg_nvjpeg_t *nj, shared_lib *lib)
{
  nvjpegJpegStream_t header = NULL;
  nvjpegStatus_t st = nvjpegJpegStreamCreate(lib->handle, &header);
  if (st != NVJPEG_STATUS_SUCCESS)
    return st;
  __atomic_add_fetch(&lib->refs, 1, __ATOMIC_RELAXED);
  nj->header = header;
  nj->lib = lib;
  return st;
}

// Teardown of nj's hold on its DEFAULT handle: the last user destroys it (statuses cannot
// be acted on).
void lib_detach(gpuimg_nvjpeg_t *nj)
{
  if (nj->state)
    (void)nvjpegJpegStateDestroy(nj->state);
  if (nj->header)
    (void)nvjpegJpegStreamDestroy(nj->header);
  shared_lib *lib = nj->lib;
  if (lib && __atomic_sub_fetch(&lib->refs, 1, __ATOMIC_ACQ_REL) == 0) {
    (void)nvjpegDestroy(lib->handle);
    free(lib);
  }
  nj->state = NULL;
  nj->header = NULL;
  nj->lib = NULL;
}

// The DEFAULT-backend handle, made now unless nj has one: 0, or -1 with the error set.
int default_open(gpuimg_nvjpeg_t *nj)
{
  if (nj->lib)
    return 0;
  shared_lib *lib = (shared_lib *)calloc(1, sizeof *lib);
  if (!lib) {
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, "nvjpeg", "out of memory");
    return -1;
  }
  nvjpegStatus_t st = nvjpegCreateEx(NVJPEG_BACKEND_DEFAULT, NULL, NULL,
                                     NVJPEG_FLAGS_BITSTREAM_STRICT, &lib->handle);
  if (st != NVJPEG_STATUS_SUCCESS) {
    free(lib);
    return nvjpeg_fail(st, "nvjpegCreateEx", __FILE__, __LINE__);
  }
  st = lib_attach(nj, lib);
  if (st != NVJPEG_STATUS_SUCCESS) {
    (void)nvjpegDestroy(lib->handle);
    free(lib);
    return nvjpeg_fail(st, "nvjpegJpegStreamCreate", __FILE__, __LINE__);
  }
  return 0;
}

// Teardown: statuses cannot be acted on (the work's own errors were already checked).
void hw_close(gpuimg_nvjpeg_t *nj)
{
  if (nj->hw_header)
    (void)nvjpegJpegStreamDestroy(nj->hw_header);
  if (nj->hw_state)
    (void)nvjpegJpegStateDestroy(nj->hw_state);
  if (nj->hw_handle)
    (void)nvjpegDestroy(nj->hw_handle);
  nj->hw_header = NULL;
  nj->hw_state = NULL;
  nj->hw_handle = NULL;
}

// Opens the hardware decoder: strict about bitstream errors if the backend takes the flag,
// else without; not pipelined (each call is finished before the next). 0, or
// -1 with hw_why set (no error recorded: under AUTO its absence is not one).
int hw_open(gpuimg_nvjpeg_t *nj)
{
  const unsigned strict = NVJPEG_FLAGS_BITSTREAM_STRICT,
                 no_pipeline = NVJPEG_FLAGS_HW_DECODE_NO_PIPELINE;
  nvjpegStatus_t st =
      nvjpegCreateEx(NVJPEG_BACKEND_HARDWARE, NULL, NULL, strict | no_pipeline, &nj->hw_handle);
  const char *note = "";
  if (st != NVJPEG_STATUS_SUCCESS) {
    nj->hw_handle = NULL;
    note = "not strict about bitstream errors";
    st = nvjpegCreateEx(NVJPEG_BACKEND_HARDWARE, NULL, NULL, no_pipeline, &nj->hw_handle);
  }
  if (st == NVJPEG_STATUS_SUCCESS)
    st = nvjpegJpegStateCreate(nj->hw_handle, &nj->hw_state);
  if (st == NVJPEG_STATUS_SUCCESS)
    st = nvjpegJpegStreamCreate(nj->hw_handle, &nj->hw_header);
  if (st != NVJPEG_STATUS_SUCCESS) {
    cudaGetLastError(); // a failed probe must not leave an error for later launch checks
    hw_close(nj);
    nj->hw_why = status_name(st);
    return -1;
  }
  nj->hw_why = note;
  return 0;
}

// The output format for a channel count: interleaved RGB or Y, in channel[0] alone.
nvjpegOutputFormat_t output_format(int channels)
{
  return channels == 3 ? NVJPEG_OUTPUT_RGBI : NVJPEG_OUTPUT_Y;
}

// Initialises the hardware decoder's state for batches of n images in format fmt, one CPU
// thread, unless it already is (also the reset after a failed batch).
nvjpegStatus_t hw_ready(gpuimg_nvjpeg_t *nj, int n, nvjpegOutputFormat_t fmt)
{
  if (nj->hw_format == (int)fmt && nj->hw_batch == n)
    return NVJPEG_STATUS_SUCCESS;
  nvjpegStatus_t st = nvjpegDecodeBatchedInitialize(nj->hw_handle, nj->hw_state, n, 1, fmt);
  nj->hw_format = st == NVJPEG_STATUS_SUCCESS ? (int)fmt : -1;
  nj->hw_batch = n;
  return st;
}

// Decodes with the hardware decoder. 0 with *done = 1 when it decoded the image; 0 with
// *done = 0 when it cannot decode this JPEG (progressive, 4:1:1, a size or format it
// refuses) and the backend is AUTO: the caller uses the CUDA decoder; -1 on error.
int hw_decode(gpuimg_nvjpeg_t *nj, const uint8_t *jpeg, size_t n, const char *what,
              nvjpegOutputFormat_t fmt, nvjpegImage_t *dst, int *done)
{
  const char *call = "nvjpegJpegStreamParseHeader";
  int unsupported = 1; // nvjpegDecodeBatchedSupported: 0 means supported
  *done = 0;
  nvjpegStatus_t st = nvjpegJpegStreamParseHeader(nj->hw_handle, jpeg, n, nj->hw_header);
  if (st == NVJPEG_STATUS_SUCCESS) {
    call = "nvjpegDecodeBatchedSupported";
    st = nvjpegDecodeBatchedSupported(nj->hw_handle, nj->hw_header, &unsupported);
  }
  if (st == NVJPEG_STATUS_SUCCESS && unsupported == 0) {
    call = "nvjpegDecodeBatchedInitialize"; // a batch of one image
    st = hw_ready(nj, 1, fmt);
  }
  if (st == NVJPEG_STATUS_SUCCESS && unsupported == 0) {
    const unsigned char *data = jpeg;
    size_t length = n;
    call = "nvjpegDecodeBatched";
    st = nvjpegDecodeBatched(nj->hw_handle, nj->hw_state, &data, &length, dst, nj->ctx->stream);
    if (st == NVJPEG_STATUS_SUCCESS) {
      *done = 1;
      return 0;
    }
    nj->hw_format = -1; // initialise again before the next batch
  }
  if (st == NVJPEG_STATUS_BAD_JPEG || st == NVJPEG_STATUS_INCOMPLETE_BITSTREAM)
    return decode_fail(st, call, what, __FILE__, __LINE__);
  if (st != NVJPEG_STATUS_SUCCESS && !is_data_status(st) && st != NVJPEG_STATUS_ARCH_MISMATCH)
    return nvjpeg_fail(st, call, __FILE__, __LINE__);
  // The hardware cannot decode this JPEG: what the CUDA decoder is for.
  cudaGetLastError(); // nothing of the refusal may reach a later launch check
  if (nj->backend == GPUIMG_NVJPEG_HARDWARE) {
    gpuimg_error_set(GPUIMG_EXIT_INPUT, what,
                     "cannot decode JPEG: the hardware JPEG decoder does not take it (%s: %s)",
                     call, st == NVJPEG_STATUS_SUCCESS ? "not supported" : status_name(st));
    return -1;
  }
  return 0;
}

// The encoder's parameters and state (teardown: statuses cannot be acted on).
void encoder_close(gpuimg_nvjpeg_t *nj)
{
  if (nj->enc_params)
    (void)nvjpegEncoderParamsDestroy(nj->enc_params);
  if (nj->enc_state)
    (void)nvjpegEncoderStateDestroy(nj->enc_state);
}

} // namespace

extern "C" void gpuimg_nvjpeg_destroy(gpuimg_nvjpeg_t *nj)
{
  if (!nj)
    return;
  // Teardown: statuses cannot be acted on (the work's own errors were already checked).
  (void)cudaSetDevice(nj->ctx->device);
  if (nj->ctx->stream)
    (void)cudaStreamSynchronize(nj->ctx->stream);
  hw_close(nj);
  encoder_close(nj);
  lib_detach(nj);
  cudaGetLastError(); // no teardown error for a later launch check
  free(nj);
}

// nj's handles: the hardware decoder where asked for, and the DEFAULT handle (share's, when
// given) where it is needed from the start: an encoder, or a decoder without the hardware.
static int nvjpeg_open(gpuimg_nvjpeg_t *nj, const gpuimg_nvjpeg_t *share)
{
  // nvJPEG allocates on the current device: the context's.
  GPUIMG_CUDA_CHECK(cudaSetDevice(nj->ctx->device));
  if (nj->backend != GPUIMG_NVJPEG_CUDA && hw_open(nj) < 0 &&
      nj->backend == GPUIMG_NVJPEG_HARDWARE) {
    gpuimg_error_set(GPUIMG_EXIT_DEVICE, "nvjpeg", "no hardware JPEG decoder on %s: %s",
                     nj->ctx->prop.name, nj->hw_why);
    return -1;
  }
  if (share && share->lib && share->ctx->device == nj->ctx->device)
    GPUIMG_NVJPEG_CHECK(lib_attach(nj, share->lib));
  return nj->hw_handle ? 0 : default_open(nj);
}

extern "C" gpuimg_nvjpeg_t *gpuimg_nvjpeg_create_sharing(gpuimg_cuda_t *ctx,
                                                         gpuimg_nvjpeg_backend_t backend,
                                                         const gpuimg_nvjpeg_t *share)
{
  gpuimg_nvjpeg_t *nj = (gpuimg_nvjpeg_t *)calloc(1, sizeof *nj);
  if (!nj) {
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, "nvjpeg", "out of memory");
    return NULL;
  }
  nj->ctx = ctx;
  nj->backend = backend;
  nj->hw_format = -1;
  nj->hw_why = "not asked for";
  nj->last = "none";
  if (nvjpeg_open(nj, share) < 0) {
    gpuimg_nvjpeg_destroy(nj);
    return NULL;
  }
  return nj;
}

extern "C" gpuimg_nvjpeg_t *gpuimg_nvjpeg_create(gpuimg_cuda_t *ctx,
                                                 gpuimg_nvjpeg_backend_t backend)
{
  return gpuimg_nvjpeg_create_sharing(ctx, backend, NULL);
}

extern "C" void gpuimg_nvjpeg_version(int *major, int *minor, int *patch)
{
  // Informational only: a failure leaves 0, which a report shows as unknown.
  if (nvjpegGetProperty(MAJOR_VERSION, major) != NVJPEG_STATUS_SUCCESS)
    *major = 0;
  if (nvjpegGetProperty(MINOR_VERSION, minor) != NVJPEG_STATUS_SUCCESS)
    *minor = 0;
  if (nvjpegGetProperty(PATCH_LEVEL, patch) != NVJPEG_STATUS_SUCCESS)
    *patch = 0;
}

extern "C" int gpuimg_nvjpeg_hardware(const gpuimg_nvjpeg_t *nj, const char **why)
{
  if (why)
    *why = nj->hw_why;
  return nj->hw_handle != NULL;
}

extern "C" int gpuimg_nvjpeg_shares(const gpuimg_nvjpeg_t *a, const gpuimg_nvjpeg_t *b)
{
  return a->lib && a->lib == b->lib;
}

extern "C" const char *gpuimg_nvjpeg_last_decoder(const gpuimg_nvjpeg_t *nj)
{
  return nj->last;
}

extern "C" int gpuimg_nvjpeg_info(gpuimg_nvjpeg_t *nj, const uint8_t *jpeg, size_t n,
                                  const char *what, int *width, int *height, int *channels)
{
  header_facts facts;
  if (!jpeg || n == 0) {
    gpuimg_error_set(GPUIMG_EXIT_INPUT, what, "empty file");
    return -1;
  }
  static const uint8_t soi[3] = {0xff, 0xd8, 0xff}; // start of image, then a marker
  if (memcmp(jpeg, soi, n < 3 ? n : 3) != 0) {
    gpuimg_error_set(GPUIMG_EXIT_INPUT, what, "not a JPEG file (no start-of-image marker)");
    return -1;
  }
  if (n < 4) {
    gpuimg_error_set(GPUIMG_EXIT_INPUT, what, "cannot decode JPEG: truncated JPEG data (%zu bytes)",
                     n);
    return -1;
  }
  // The hardware decoder's handle reads the header where there is one (no DEFAULT handle
  // needed); a header it refuses gets the DEFAULT handle's verdict, as without it.
  const char *call = "nvjpegGetImageInfo";
  nvjpegStatus_t st = NVJPEG_STATUS_NOT_INITIALIZED;
  if (nj->hw_handle)
    st = read_header(nj->hw_handle, nj->hw_header, jpeg, n, &facts, &call);
  if (st != NVJPEG_STATUS_SUCCESS) {
    if (default_open(nj) < 0)
      return -1;
    st = read_header(nj->lib->handle, nj->header, jpeg, n, &facts, &call);
  }
  // The header's own reads blame the data; the stream's getters after them, the library.
  if (st != NVJPEG_STATUS_SUCCESS && facts.parsed)
    return nvjpeg_fail(st, call, __FILE__, __LINE__);
  if (st != NVJPEG_STATUS_SUCCESS)
    return decode_fail(st, call, what, __FILE__, __LINE__);
  int ncomp = facts.ncomp;
  nvjpegChromaSubsampling_t css = facts.css;
  nvjpegJpegEncoding_t encoding = facts.encoding;
  unsigned precision = facts.precision;
  const int *widths = facts.widths, *heights = facts.heights;

  const char *bad = NULL;
  char buf[96];
  if (widths[0] <= 0 || heights[0] <= 0)
    bad = "zero width or height";
  else if (ncomp != 1 && ncomp != 3) {
    snprintf(buf, sizeof buf, "%d colour components (nvJPEG decodes 1, gray, or 3, YCbCr)", ncomp);
    bad = buf;
  } else if (encoding == NVJPEG_ENCODING_LOSSLESS_HUFFMAN)
    bad = "lossless JPEG is not supported";
  else if (encoding != NVJPEG_ENCODING_BASELINE_DCT &&
           encoding != NVJPEG_ENCODING_EXTENDED_SEQUENTIAL_DCT_HUFFMAN &&
           encoding != NVJPEG_ENCODING_PROGRESSIVE_DCT_HUFFMAN)
    bad = "unsupported coding process (arithmetic coding or hierarchical)";
  else if (precision != 8) {
    snprintf(buf, sizeof buf, "%u-bit samples (only 8-bit JPEGs are supported)", precision);
    bad = buf;
  } else if (css == NVJPEG_CSS_UNKNOWN)
    bad = "unsupported chroma subsampling";
  if (bad) {
    gpuimg_error_set(GPUIMG_EXIT_INPUT, what, "cannot decode JPEG: %s", bad);
    return -1;
  }
  *width = widths[0];
  *height = heights[0];
  *channels = ncomp == 1 ? 1 : 3;
  return 0;
}

extern "C" int gpuimg_nvjpeg_decode_device(gpuimg_nvjpeg_t *nj, const uint8_t *jpeg, size_t n,
                                           const char *what, uint8_t *d_dst, int channels,
                                           float *ms)
{
  int w, h, c, done = 0;
  if (channels != 1 && channels != 3) {
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, "nvjpeg", "decodes to 1 or 3 channels, not %d", channels);
    return -1;
  }
  double t0 = gpuimg_now_ms();
  GPUIMG_CUDA_CHECK(cudaSetDevice(nj->ctx->device));
  if (gpuimg_nvjpeg_info(nj, jpeg, n, what, &w, &h, &c) < 0)
    return -1;
  // Rows pitch[0] bytes apart in channel[0].
  nvjpegOutputFormat_t fmt = output_format(channels);
  nvjpegImage_t dst;
  memset(&dst, 0, sizeof dst);
  dst.channel[0] = d_dst;
  dst.pitch[0] = (size_t)w * (size_t)channels;
  if (nj->hw_handle && hw_decode(nj, jpeg, n, what, fmt, &dst, &done) < 0)
    return -1;
  // The CUDA decoder's state, made by its first decode: about 0.3 s on the H200, which an
  // encoder, or a decoder whose JPEGs all go to the hardware, never needs.
  if (!done && default_open(nj) < 0)
    return -1;
  if (!done && !nj->state)
    GPUIMG_NVJPEG_CHECK(nvjpegJpegStateCreate(nj->lib->handle, &nj->state));
  if (!done)
    GPUIMG_NVJPEG_CHECK_DATA(
        nvjpegDecode(nj->lib->handle, nj->state, jpeg, n, fmt, &dst, nj->ctx->stream), what);
  GPUIMG_CUDA_CHECK(cudaStreamSynchronize(nj->ctx->stream));
  nj->last = done ? "hardware" : "cuda";
  if (ms)
    *ms = (float)(gpuimg_now_ms() - t0);
  return 0;
}

extern "C" int gpuimg_nvjpeg_encode_device(gpuimg_nvjpeg_t *nj, const uint8_t *d_src, int width,
                                           int height, int channels, int quality, const char *what,
                                           uint8_t **out, size_t *out_size, float *ms)
{
  *out = NULL;
  *out_size = 0;
  if (quality < 1 || quality > 100) {
    gpuimg_error_set(GPUIMG_EXIT_USAGE, what, "JPEG quality %d is outside 1..100", quality);
    return -1;
  }
  if (channels != 1 && channels != 3) {
    gpuimg_error_set(GPUIMG_EXIT_OUTPUT, what,
                     "cannot encode JPEG: nvJPEG encodes 1 or 3 channels, not %d", channels);
    return -1;
  }
  if (width < 1 || height < 1 || width > 65535 || height > 65535) {
    gpuimg_error_set(GPUIMG_EXIT_OUTPUT, what,
                     "cannot encode JPEG: %dx%d is outside JPEG's 1..65535 pixels a side", width,
                     height);
    return -1;
  }
  double t0 = gpuimg_now_ms();
  cudaStream_t stream = nj->ctx->stream;
  GPUIMG_CUDA_CHECK(cudaSetDevice(nj->ctx->device));
  if (default_open(nj) < 0)
    return -1;
  nvjpegHandle_t handle = nj->lib->handle;
  if (!nj->enc_state)
    GPUIMG_NVJPEG_CHECK(nvjpegEncoderStateCreate(handle, &nj->enc_state, stream));
  if (!nj->enc_params)
    GPUIMG_NVJPEG_CHECK(nvjpegEncoderParamsCreate(handle, &nj->enc_params, stream));
  nvjpegEncoderParams_t params = nj->enc_params;
  GPUIMG_NVJPEG_CHECK(nvjpegEncoderParamsSetQuality(params, quality, stream));
  GPUIMG_NVJPEG_CHECK(nvjpegEncoderParamsSetEncoding(params, NVJPEG_ENCODING_BASELINE_DCT, stream));
  GPUIMG_NVJPEG_CHECK(nvjpegEncoderParamsSetOptimizedHuffman(params, 0, stream));
  GPUIMG_NVJPEG_CHECK(nvjpegEncoderParamsSetSamplingFactors(
      params, channels == 1 ? NVJPEG_CSS_GRAY : NVJPEG_CSS_420, stream));
  nvjpegImage_t src;
  memset(&src, 0, sizeof src);
  src.channel[0] = (unsigned char *)d_src;
  src.pitch[0] = (size_t)width * (size_t)channels;
  if (channels == 3)
    GPUIMG_NVJPEG_CHECK(nvjpegEncodeImage(handle, nj->enc_state, params, &src, NVJPEG_INPUT_RGBI,
                                          width, height, stream));
  else // gray: the luma plane alone is the YUV input of a 4:0:0 JPEG
    GPUIMG_NVJPEG_CHECK(nvjpegEncodeYUV(handle, nj->enc_state, params, &src, NVJPEG_CSS_GRAY, width,
                                        height, stream));
  // The length first (data NULL), then the bytes once the encode has finished.
  size_t length = 0;
  GPUIMG_NVJPEG_CHECK(nvjpegEncodeRetrieveBitstream(handle, nj->enc_state, NULL, &length, stream));
  GPUIMG_CUDA_CHECK(cudaStreamSynchronize(stream));
  uint8_t *bytes = (uint8_t *)malloc(length ? length : 1);
  if (!bytes) {
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, what, "out of memory for a %zu-byte JPEG", length);
    return -1;
  }
  nvjpegStatus_t st = nvjpegEncodeRetrieveBitstream(handle, nj->enc_state, bytes, &length, stream);
  cudaError_t err = st == NVJPEG_STATUS_SUCCESS ? cudaStreamSynchronize(stream) : cudaSuccess;
  if (st != NVJPEG_STATUS_SUCCESS || err != cudaSuccess) {
    free(bytes);
    if (st != NVJPEG_STATUS_SUCCESS)
      return nvjpeg_fail(st, "nvjpegEncodeRetrieveBitstream", __FILE__, __LINE__);
    return gpuimg_cuda_fail(err, "cudaStreamSynchronize", __FILE__, __LINE__);
  }
  *out = bytes;
  *out_size = length;
  if (ms)
    *ms = (float)(gpuimg_now_ms() - t0);
  return 0;
}

extern "C" int gpuimg_nvjpeg_hw_supported(gpuimg_nvjpeg_t *nj, const uint8_t *jpeg, size_t n)
{
  int unsupported = 1; // nvjpegDecodeBatchedSupported: 0 means supported
  if (!nj->hw_handle)
    return 0;
  // A header the hardware's parser refuses is for the CUDA decoder to judge.
  if (nvjpegJpegStreamParseHeader(nj->hw_handle, jpeg, n, nj->hw_header) != NVJPEG_STATUS_SUCCESS ||
      nvjpegDecodeBatchedSupported(nj->hw_handle, nj->hw_header, &unsupported) !=
          NVJPEG_STATUS_SUCCESS) {
    cudaGetLastError();
    return 0;
  }
  return unsupported == 0;
}

extern "C" int gpuimg_nvjpeg_decode_batch(gpuimg_nvjpeg_t *nj, int n, const uint8_t *const *jpegs,
                                          const size_t *sizes, uint8_t *const *d_dst,
                                          const int *widths, int channels)
{
  if (!nj->hw_handle) {
    gpuimg_error_set(GPUIMG_EXIT_DEVICE, "nvjpeg", "batched decode needs the hardware decoder");
    return -1;
  }
  if (n < 1 || n > GPUIMG_NVJPEG_MAX_BATCH || (channels != 1 && channels != 3)) {
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, "nvjpeg", "batch of %d images of %d channels", n,
                     channels);
    return -1;
  }
  GPUIMG_CUDA_CHECK(cudaSetDevice(nj->ctx->device));
  nvjpegStatus_t init = hw_ready(nj, n, output_format(channels));
  if (init != NVJPEG_STATUS_SUCCESS)
    return nvjpeg_fail(init, "nvjpegDecodeBatchedInitialize", __FILE__, __LINE__);
  nvjpegImage_t dst[GPUIMG_NVJPEG_MAX_BATCH];
  memset(dst, 0, sizeof dst);
  for (int i = 0; i < n; i++) {
    dst[i].channel[0] = d_dst[i];
    dst[i].pitch[0] = (size_t)widths[i] * (size_t)channels;
  }
  nvjpegStatus_t st =
      nvjpegDecodeBatched(nj->hw_handle, nj->hw_state, jpegs, sizes, dst, nj->ctx->stream);
  cudaError_t err =
      st == NVJPEG_STATUS_SUCCESS ? cudaStreamSynchronize(nj->ctx->stream) : cudaSuccess;
  if (st != NVJPEG_STATUS_SUCCESS) {
    nj->hw_format = -1; // a failed batch needs initialising again
    if (is_data_status(st) || st == NVJPEG_STATUS_BAD_JPEG) {
      cudaGetLastError();
      gpuimg_error_set(GPUIMG_EXIT_INPUT, "nvjpeg", "a JPEG of the batch did not decode (%s)",
                       status_name(st));
      return -1;
    }
    return nvjpeg_fail(st, "nvjpegDecodeBatched", __FILE__, __LINE__);
  }
  if (err != cudaSuccess)
    return gpuimg_cuda_fail(err, "cudaStreamSynchronize", __FILE__, __LINE__);
  nj->last = "hardware";
  return 0;
}
