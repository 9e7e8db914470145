/* nvjpeg.c: JPEG decode and encode on the GPU with nvJPEG (--codec nvjpeg).
 *
 * The codec interface hands pixels in host memory, so each decode runs nvJPEG into a
 * device buffer and copies the pixels back, and each encode copies the pixels up and runs
 * nvJPEG's encoder: the host keeps only the file parsing (and, for nvJPEG's CUDA decoder,
 * part of the Huffman decoding), and the hardware JPEG decoder of an A100, H100 or H200
 * takes the rest. Each host thread has its own CUDA context (on the thread's current
 * device, so batch workers keep to their --devices GPU), nvJPEG handle and device buffer,
 * created on its first JPEG and kept until gpuimg_codec_thread_end(). This is the CPU
 * backend's path, and the one-image path's for what is not a JPEG input; on the CUDA
 * backend a JPEG input and a JPEG output stay on the device instead (pipeline.c, and in
 * batch mode jpeg_batch.c). */
#include "codec.h"

#ifdef GPUIMG_HAVE_NVJPEG
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_context.h"
#include "nvjpeg_gpu.h"

typedef struct {
  gpuimg_cuda_t *ctx;
  gpuimg_nvjpeg_t *nj;
  uint8_t *d_buf;
  size_t d_cap;
} nvjpeg_thread_t;

static _Thread_local nvjpeg_thread_t tls;

/* This thread's context, handle and a device buffer of at least need bytes. A failure
 * names the file it was for: "gpuimg: out.jpg: nvJPEG: cuda: ... failed ...". */
static int nvjpeg_thread(size_t need, const char *what)
{
  int ok = (tls.ctx || (tls.ctx = gpuimg_cuda_create(-1))) &&
           (tls.nj || (tls.nj = gpuimg_nvjpeg_create(tls.ctx, GPUIMG_NVJPEG_AUTO)));
  if (ok && tls.d_cap < need) {
    gpuimg_cuda_dev_free(tls.d_buf);
    tls.d_cap = 0;
    if ((ok = (tls.d_buf = gpuimg_cuda_dev_alloc(need)) != NULL))
      tls.d_cap = need;
  }
  if (!ok) {
    char reason[512];
    snprintf(reason, sizeof reason, "%s", gpuimg_error_message());
    gpuimg_error_set(gpuimg_error_code(), what, "nvJPEG: %s", reason);
    return -1;
  }
  return 0;
}

static int nvjpeg_decode(const uint8_t *bytes, size_t size, const char *what, uint64_t max_pixels,
                         gpuimg_image_t *out)
{
  int w, h, c;
  memset(out, 0, sizeof *out);
  if (nvjpeg_thread(0, what) < 0 || gpuimg_nvjpeg_info(tls.nj, bytes, size, what, &w, &h, &c) < 0)
    return -1;
  if ((uint64_t)w * (uint64_t)h > max_pixels) {
    gpuimg_error_set(GPUIMG_EXIT_INPUT, what, "image is %dx%d, over the limit of %llu pixels", w, h,
                     (unsigned long long)max_pixels);
    return -1;
  }
  size_t bytes_out = gpuimg_image_bytes(w, h, c);
  if (nvjpeg_thread(bytes_out, what) < 0 || gpuimg_image_alloc_for(out, w, h, c, what) < 0)
    return -1;
  if (gpuimg_nvjpeg_decode_device(tls.nj, bytes, size, what, tls.d_buf, c, NULL) < 0 ||
      gpuimg_cuda_download(tls.ctx, out->data, tls.d_buf, bytes_out, NULL) < 0) {
    gpuimg_image_free(out);
    return -1;
  }
  return 0;
}

/* JPEG has no alpha: gray+alpha is encoded as gray and RGBA as RGB, as the other codecs do. */
static int nvjpeg_encode(const gpuimg_image_t *img, gpuimg_format_t fmt,
                         const gpuimg_encode_opts_t *opts, const char *what, gpuimg_buf_t *out)
{
  const int quality = opts->quality < 1 ? 1 : opts->quality > 100 ? 100 : opts->quality;
  int c = img->channels;
  if (fmt != GPUIMG_FORMAT_JPEG || c < 1 || c > 4) {
    gpuimg_error_set(GPUIMG_EXIT_OUTPUT, what, "cannot encode %s of %d channels with nvJPEG",
                     gpuimg_format_name(fmt), c);
    return -1;
  }
  int oc = c == 2 ? 1 : c == 4 ? 3 : c;
  size_t px = (size_t)img->width * (size_t)img->height;
  const uint8_t *pixels = img->data;
  uint8_t *packed = NULL;
  if (oc != c) {
    if (!(packed = malloc(px * (size_t)oc))) {
      gpuimg_error_set(GPUIMG_EXIT_FAILURE, what, "out of memory");
      return -1;
    }
    for (size_t i = 0; i < px; i++)
      memcpy(packed + i * (size_t)oc, img->data + i * (size_t)c, (size_t)oc);
    pixels = packed;
  }
  uint8_t *jpeg = NULL;
  size_t jpeg_size = 0;
  int rc = -1;
  if (nvjpeg_thread(px * (size_t)oc, what) == 0 &&
      gpuimg_cuda_upload(tls.ctx, tls.d_buf, pixels, px * (size_t)oc, NULL) == 0 &&
      gpuimg_nvjpeg_encode_device(tls.nj, tls.d_buf, img->width, img->height, oc, quality, what,
                                  &jpeg, &jpeg_size, NULL) == 0 &&
      gpuimg_buf_append(out, jpeg, jpeg_size) == 0)
    rc = 0;
  free(jpeg);
  free(packed);
  return rc;
}

/* Only by name (priority 0): it needs a GPU. On the device (the CUDA backend's flow), else
 * through host memory as here; what is not JPEG, and the JPEGs nvJPEG refuses or reads
 * otherwise (CMYK, RGB, 12-bit, arithmetic...: gpuimg_codec_jpeg_is_common()), go to auto's
 * choice. */
const gpuimg_codec_t gpuimg_codec_nvjpeg = {
    .name = "nvjpeg",
    .library = "nvJPEG",
    .decodes = GPUIMG_FORMAT_BIT(GPUIMG_FORMAT_JPEG),
    .encodes = GPUIMG_FORMAT_BIT(GPUIMG_FORMAT_JPEG),
    .recognises = gpuimg_codec_jpeg_is_common,
    .priority = 0,
    .device = 1,
    .decode = nvjpeg_decode,
    .encode = nvjpeg_encode,
};

void gpuimg_codec_thread_end(void)
{
  gpuimg_nvjpeg_destroy(tls.nj);
  gpuimg_cuda_dev_free(tls.d_buf);
  gpuimg_cuda_destroy(tls.ctx);
  memset(&tls, 0, sizeof tls);
}
#else
/* Built without nvJPEG: no formats, so not in the registry. */
const gpuimg_codec_t gpuimg_codec_nvjpeg = {.name = "nvjpeg", .library = "nvJPEG"};

void gpuimg_codec_thread_end(void)
{
}
#endif
