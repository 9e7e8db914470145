/* jpeg_batch.h: one GPU's hardware JPEG decoder shared by batch workers, fed in batches. */
#ifndef GPUIMG_JPEG_BATCH_H
#define GPUIMG_JPEG_BATCH_H

#include "gpuimg.h"

/* A thread with its own CUDA stream and nvJPEG handle on one device. Workers hand it JPEGs
 * one at a time and wait; it decodes whatever is waiting (up to GPUIMG_NVJPEG_MAX_BATCH
 * images of the same channel count) in one call to the hardware decoder, so 16 workers
 * make batches of up to 16 without anyone waiting for a batch to fill. Builds without
 * nvJPEG have the type and no way to create one. */
typedef struct gpuimg_jpeg_batch gpuimg_jpeg_batch_t;

/* Starts the decoder thread for CUDA device `device`, with its nvJPEG handle. batching 0:
 * no batches (each worker decodes alone), only the handle to share. NULL with the error set
 * when the build has no nvJPEG or nvJPEG fails (exit 5). */
gpuimg_jpeg_batch_t *gpuimg_jpeg_batch_create(int device, int batching);

/* 1 when it decodes batches: asked to, and the device has a hardware JPEG decoder. */
int gpuimg_jpeg_batch_batching(const gpuimg_jpeg_batch_t *jb);

#ifdef GPUIMG_HAVE_NVJPEG
#include "gpuimg_kernels.h"
/* The thread's handle, whose library handles the workers share through
 * gpuimg_nvjpeg_create_shared(); valid until gpuimg_jpeg_batch_destroy(). */
gpuimg_nvjpeg_t *gpuimg_jpeg_batch_parent(gpuimg_jpeg_batch_t *jb);
#endif

/* Decodes the JPEG (n bytes; one the hardware decoder takes, see
 * gpuimg_nvjpeg_hw_supported()) into d_dst on the batch's device, width x height x
 * channels tightly packed, and waits until it is there. 0 when decoded; 1 when its batch
 * failed (the caller decodes it alone, which names what is wrong); -1 with the error set
 * when the decoder is closed. *images: how many images its batch had. */
int gpuimg_jpeg_batch_decode(gpuimg_jpeg_batch_t *jb, const uint8_t *jpeg, size_t n,
                             uint8_t *d_dst, int width, int channels, int *images);

/* Batches decoded, images in them, and milliseconds inside the decoder's calls so far (the
 * batch report's summary). */
void gpuimg_jpeg_batch_counts(gpuimg_jpeg_batch_t *jb, long *batches, long *images,
                              double *busy_ms);

/* Stops the thread (after the batch in progress) and frees everything. */
void gpuimg_jpeg_batch_destroy(gpuimg_jpeg_batch_t *jb);

#endif
