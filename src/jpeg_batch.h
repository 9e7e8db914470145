/* jpeg_batch.h: one thread per GPU that does all of batch mode's nvJPEG work, decoding in batches.
 */
#ifndef GPUIMG_JPEG_BATCH_H
#define GPUIMG_JPEG_BATCH_H

#include "gpuimg.h"

/* A thread with its own CUDA stream and the one nvJPEG handle of its device. Workers hand
 * it requests (read a header, decode into device memory, encode from device memory) and
 * wait; it takes whatever is waiting, decodes the JPEGs the hardware decoder takes in one
 * batched call per channel count, the rest one by one, then encodes. nvJPEG's handles and
 * states are slow to create (hundreds of milliseconds each, serialised across threads), so
 * one set per device serves every worker. Builds without nvJPEG have the type and no way
 * to create one. Every call below waits for its request to finish; errors are the
 * requester's, set in its thread as nvJPEG's functions set them (exit code and message). */
typedef struct gpuimg_jpeg_batch gpuimg_jpeg_batch_t;

/* Starts the thread for CUDA device `device`. batching 0: every JPEG decoded alone (for
 * comparison). NULL with the error set when the build has no nvJPEG or nvJPEG fails. */
gpuimg_jpeg_batch_t *gpuimg_jpeg_batch_create(int device, int batching);

/* gpuimg_nvjpeg_info() of the JPEG, and its size against max_pixels (exit 3). */
int gpuimg_jpeg_batch_info(gpuimg_jpeg_batch_t *jb, const uint8_t *jpeg, size_t n, const char *what,
                           uint64_t max_pixels, int *width, int *height, int *channels);

/* Decodes it into d_dst on the device: width x height x channels, tightly packed, as
 * gpuimg_nvjpeg_decode_device() does; done before the call returns. */
int gpuimg_jpeg_batch_decode(gpuimg_jpeg_batch_t *jb, const uint8_t *jpeg, size_t n,
                             const char *what, uint8_t *d_dst, int width, int height, int channels);

/* Encodes d_src (finished device data) as gpuimg_nvjpeg_encode_device() does; *out is
 * malloc'd, the caller frees it. */
int gpuimg_jpeg_batch_encode(gpuimg_jpeg_batch_t *jb, const uint8_t *d_src, int width, int height,
                             int channels, int quality, const char *what, uint8_t **out,
                             size_t *out_size);

/* Calls to the batched hardware decoder, images in them, and milliseconds the thread spent
 * in nvJPEG (every kind of request), so far: the batch report's summary. */
void gpuimg_jpeg_batch_counts(gpuimg_jpeg_batch_t *jb, long *batches, long *images,
                              double *busy_ms);

/* Stops the thread (after the requests in progress) and frees everything. */
void gpuimg_jpeg_batch_destroy(gpuimg_jpeg_batch_t *jb);

#endif
