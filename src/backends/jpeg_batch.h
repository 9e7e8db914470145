/* jpeg_batch.h: per GPU, the threads that do batch mode's nvJPEG work, decoding in batches. */
#ifndef GPUIMG_JPEG_BATCH_H
#define GPUIMG_JPEG_BATCH_H

#include "base.h"

/* Per GPU, decoder threads and encoder threads, each with its own CUDA stream and
 * nvJPEG handle (jpeg_batch.c says why). Workers hand them requests and wait; the
 * decoder decodes the JPEGs the hardware decoder takes in batched calls, the rest one by
 * one. Builds without nvJPEG have the type and no way to create one. Every call below waits
 * for its request to finish; errors are the requester's, set in its thread as nvJPEG's
 * functions set them (exit code and message). */
typedef struct gpuimg_jpeg_batch gpuimg_jpeg_batch_t;

/* Starts the threads for CUDA device `device`; they set up (0.75-1.9 s on an H200) while the
 * caller goes on, and the first requests wait for that. A set-up that fails fails every
 * request with its error. batching 0: every JPEG decoded alone (for comparison). NULL with
 * the error set when the build has no nvJPEG or a thread cannot start. */
gpuimg_jpeg_batch_t *gpuimg_jpeg_batch_create(int device, int batching);

/* Reads the JPEG's header (gpuimg_nvjpeg_info(): size, 1 or 3 channels; exit 3 for what
 * nvJPEG cannot decode, or over max_pixels) and, when its pixels fit in cap bytes, decodes
 * it into d_dst as gpuimg_nvjpeg_decode_device() does: width x height x channels, tightly
 * packed. 0 decoded; 1 when cap is too small (nothing decoded: grow and call again); -1. */
int gpuimg_jpeg_batch_decode(gpuimg_jpeg_batch_t *jb, const uint8_t *jpeg, size_t n,
                             const char *what, uint64_t max_pixels, uint8_t *d_dst, size_t cap,
                             int *width, int *height, int *channels);

/* Encodes d_src (finished device data) as gpuimg_nvjpeg_encode_device() does; *out is
 * malloc'd, the caller frees it. */
int gpuimg_jpeg_batch_encode(gpuimg_jpeg_batch_t *jb, const uint8_t *d_src, int width, int height,
                             int channels, int quality, const char *what, uint8_t **out,
                             size_t *out_size);

/* Calls to the batched hardware decoder, images in them, the milliseconds a decoder thread
 * (busy_ms[0]) and an encoder thread (busy_ms[1]) spent working and those since it set up
 * (serving_ms[0], [1]: the time it could work), on average over the threads of each kind,
 * and the longest set-up, so far: the batch report's summary. */
void gpuimg_jpeg_batch_counts(gpuimg_jpeg_batch_t *jb, long *batches, long *images, double *busy_ms,
                              double *serving_ms, double *setup_ms);

/* Over the decode (encode 0) or encode requests so far: the milliseconds they waited in a
 * thread's list (ms[0]), were served (ms[1]) and took from done until their requester ran
 * again (ms[2], the wake-up), summed, and their count. */
void gpuimg_jpeg_batch_waits(gpuimg_jpeg_batch_t *jb, int encode, double *ms, long *requests);

/* What the decoder thread decodes with, after waiting for its set-up: 1 the hardware JPEG
 * decoder, 0 nvJPEG's CUDA decoder alone, -1 nothing (its set-up failed: no usable device). */
int gpuimg_jpeg_batch_decoder(gpuimg_jpeg_batch_t *jb);

/* Stops the threads (after the requests in progress) and frees everything. */
void gpuimg_jpeg_batch_destroy(gpuimg_jpeg_batch_t *jb);

/* An nvJPEG thread's state, for gpuimg_jpeg_lane_pick(). */
enum { GPUIMG_LANE_SETTING_UP, GPUIMG_LANE_SERVING, GPUIMG_LANE_FAILED };

/* Which of n threads of one kind (n >= 1) a request goes to, given each one's state and the
 * requests waiting in its list: of those serving, the one with the fewest waiting (the first
 * of equals); else the first still setting up (the request waits for it); else thread 0, whose
 * set-up error the request then gets. A thread whose set-up failed gets no request while
 * another of its kind serves or may still. */
int gpuimg_jpeg_lane_pick(int n, const int *state, const int *queued);

#endif
