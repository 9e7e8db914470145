/* nvjpeg_gpu.h: the JPEG codec on the GPU (kernels/nvjpeg.cu): handles, decode, encode. */
#ifndef GPUIMG_NVJPEG_GPU_H
#define GPUIMG_NVJPEG_GPU_H

#include "cuda_context.h"

#ifdef GPUIMG_HAVE_NVJPEG
#ifdef __cplusplus
extern "C" {
#endif

/* Declared only in builds that found nvJPEG
 * (kernels/meson.build defines GPUIMG_HAVE_NVJPEG for kernels/ and src/ alike), so code
 * that uses it sits under #ifdef GPUIMG_HAVE_NVJPEG too.
 *
 * A handle belongs to one gpuimg_cuda_t: it works on that context's device and stream and,
 * like the context, is used by one host thread at a time (batch mode: one per worker).
 * It keeps nvJPEG's decoder and encoder state between images. Decodes and encodes
 * complete before they return. Errors follow the launchers': -1 with the error set, exit
 * code 3 (GPUIMG_EXIT_INPUT) for JPEG data nvJPEG rejects, 5 for nvJPEG or CUDA failures;
 * what names the input or output in messages ("photo.jpg", or "" for none). */
typedef struct gpuimg_nvjpeg gpuimg_nvjpeg_t;

/* Which decoder decodes. The hardware JPEG decoder (A100, H100, H200) takes baseline
 * (single-scan, not progressive) 8-bit JPEGs of most subsamplings; nvJPEG's CUDA decoder
 * takes the rest (progressive, 4:1:1, 4:1:0). */
typedef enum {
  GPUIMG_NVJPEG_AUTO = 0, /* the hardware decoder where present and able, else CUDA */
  GPUIMG_NVJPEG_CUDA,     /* nvJPEG's default backend: CUDA kernels, Huffman partly on the CPU */
  GPUIMG_NVJPEG_HARDWARE, /* the hardware decoder only: an error where absent or unable */
} gpuimg_nvjpeg_backend_t;

/* Creates a handle on ctx (which must outlive it). AUTO without a hardware decoder is not
 * an error. NULL with the error set. Free with gpuimg_nvjpeg_destroy(). Slow: on an H200
 * 0.15-0.5 s for one thread (bench/bench-nvjpeg-setup), serialised across threads (16 at
 * once: 5.8 s), so batch mode makes one per device (src/backends/jpeg_batch.c). */
gpuimg_nvjpeg_t *gpuimg_nvjpeg_create(gpuimg_cuda_t *ctx, gpuimg_nvjpeg_backend_t backend);

/* The same, sharing share's nvJPEG library handle (the one for the CUDA decoder and the
 * encoder) when it has one and is on the same device, instead of making another (0.08-0.15 s
 * on an H200): for handles used on other threads of that device. share may be at work on
 * its own thread meanwhile, but not being destroyed, nor (an AUTO handle without a library
 * handle yet) making its own; afterwards either may be destroyed first, the library handle
 * going with the last of them. */
gpuimg_nvjpeg_t *gpuimg_nvjpeg_create_sharing(gpuimg_cuda_t *ctx, gpuimg_nvjpeg_backend_t backend,
                                              const gpuimg_nvjpeg_t *share);

/* 1 when a and b share one nvJPEG library handle (for tests). */
int gpuimg_nvjpeg_shares(const gpuimg_nvjpeg_t *a, const gpuimg_nvjpeg_t *b);
void gpuimg_nvjpeg_destroy(gpuimg_nvjpeg_t *nj);

/* nvJPEG's version (e.g. 13, 0, 1); zeros when unknown. */
void gpuimg_nvjpeg_version(int *major, int *minor, int *patch);

/* 1 when the handle has the hardware decoder, else 0. *why (if why is not NULL) says why
 * not ("not asked for", or the nvJPEG status that refused it), or notes a limit of the
 * open decoder ("" for none). */
int gpuimg_nvjpeg_hardware(const gpuimg_nvjpeg_t *nj, const char **why);

/* The decoder of the last successful decode: "hardware", "cuda", or "none" before any. */
const char *gpuimg_nvjpeg_last_decoder(const gpuimg_nvjpeg_t *nj);

/* Reads the JPEG's header (n bytes in host memory): width, height, and channels: 1 for
 * a grayscale JPEG, 3 otherwise. Rejects, with exit code 3, what nvJPEG cannot decode:
 * not a JPEG, a corrupt or truncated header, 4 components (CMYK), lossless or
 * arithmetic-coded JPEGs, samples of other than 8 bits, unknown chroma subsampling.
 * The pixel data is not checked: gpuimg_nvjpeg_decode_device() does that. */
int gpuimg_nvjpeg_info(gpuimg_nvjpeg_t *nj, const uint8_t *jpeg, size_t n, const char *what,
                       int *width, int *height, int *channels);

/* Decodes the JPEG (n bytes in host memory) into d_dst on the device: width x height x
 * channels bytes, tightly packed (sizes from gpuimg_nvjpeg_info()). channels 3 gives
 * interleaved RGB, 1 gives luma (Y); either works for a colour or a grayscale JPEG.
 * Corrupt or truncated data is an error (exit 3), not a partly grey image.
 * *ms (if ms is not NULL): host wall-clock milliseconds of the whole decode, header parse
 * to pixels on the device, since part of nvJPEG's work (parsing, and Huffman decoding for
 * the CUDA decoder) runs on the CPU where CUDA events would not see it. */
int gpuimg_nvjpeg_decode_device(gpuimg_nvjpeg_t *nj, const uint8_t *jpeg, size_t n,
                                const char *what, uint8_t *d_dst, int channels, float *ms);

/* Encodes width x height x channels tightly packed bytes on the device (channels 3:
 * interleaved RGB, encoded as YCbCr 4:2:0 like libjpeg's default; 1: a grayscale JPEG)
 * at quality 1..100: baseline, standard Huffman tables. *out receives the JPEG file's
 * *out_size bytes, malloc'd: the caller frees it with free(). Errors: exit code 2 for a
 * quality outside 1..100, 4 for channels other than 1 or 3 or a side over 65535, 5 for
 * nvJPEG or CUDA failures; *out is NULL then. *ms: host wall-clock milliseconds, through
 * the copy of the file's bytes to the host. */
int gpuimg_nvjpeg_encode_device(gpuimg_nvjpeg_t *nj, const uint8_t *d_src, int width, int height,
                                int channels, int quality, const char *what, uint8_t **out,
                                size_t *out_size, float *ms);

/* Largest batch of gpuimg_nvjpeg_decode_batch() (src/backends/jpeg_batch.c). */
#define GPUIMG_NVJPEG_MAX_BATCH 32

/* 1 when the handle has the hardware decoder and it takes this JPEG (a parsed header it
 * accepts: baseline, a subsampling it knows), else 0. Never an error: a JPEG it refuses
 * goes to gpuimg_nvjpeg_decode_device(), which judges it. */
int gpuimg_nvjpeg_hw_supported(gpuimg_nvjpeg_t *nj, const uint8_t *jpeg, size_t n);

/* Decodes n (1..GPUIMG_NVJPEG_MAX_BATCH) JPEGs in one call to the hardware decoder, each
 * into d_dst[i] as gpuimg_nvjpeg_decode_device() would (widths[i] x its height x channels,
 * tightly packed; every image decoded to the same channels), finished before it returns.
 * Each JPEG must be one gpuimg_nvjpeg_hw_supported() accepted. -1 with the error set when
 * the batch failed: exit code 3 when nvJPEG blamed the data (without saying which image:
 * decode each alone to find out), 5 otherwise. The handle keeps one hardware decoder state,
 * initialised again whenever the batch size or the channels change (microseconds). */
int gpuimg_nvjpeg_decode_batch(gpuimg_nvjpeg_t *nj, int n, const uint8_t *const *jpegs,
                               const size_t *sizes, uint8_t *const *d_dst, const int *widths,
                               int channels);

#ifdef __cplusplus
}
#endif
#endif

#endif
