/* codec_stb.c: the stb codec, compiled here from Debian's stb headers with only PNG and JPEG decoders. */
#include "codec.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* The one translation unit that instantiates stb_image and stb_image_write. Only the
 * formats gpuimg supports are compiled in; allocations are plain malloc so decoded
 * pixels can be owned by gpuimg_image_t and released with free(). */
#define STBI_ONLY_PNG
#define STBI_ONLY_JPEG
#define STBI_NO_STDIO
#define STBI_MAX_DIMENSIONS (1 << 20)
#define STBI_MALLOC(sz) malloc(sz)
#define STBI_REALLOC(p, sz) realloc(p, sz)
#define STBI_FREE(p) free(p)
#define STB_IMAGE_STATIC
#define STB_IMAGE_IMPLEMENTATION
#define STBI_WRITE_NO_STDIO
#define STB_IMAGE_WRITE_STATIC
#define STB_IMAGE_WRITE_IMPLEMENTATION
#if defined(__GNUC__)
/* stb declares static functions this file does not use; checked at the end of the file. */
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#pragma GCC diagnostic ignored "-Wimplicit-fallthrough"
#pragma GCC diagnostic ignored "-Wtype-limits"
#pragma GCC diagnostic ignored "-Wshadow"
#endif
#include <stb_image.h>
#include <stb_image_write.h>
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

static const uint8_t png_signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};

static const char *stb_reason(void)
{
  const char *r = stbi_failure_reason();
  if (!r || !r[0])
    return "corrupt or truncated image data";
  if (strcmp(r, "outofmem") == 0)
    return "out of memory";
  return r;
}

static int stb_decode(const uint8_t *bytes, size_t size, const char *what, uint64_t max_pixels,
                      gpuimg_image_t *out)
{
  const char *kind;
  int w, h, n;

  memset(out, 0, sizeof *out);
  if (size == 0) {
    gpuimg_error_set(GPUIMG_EXIT_INPUT, what, "empty file");
    return -1;
  }
  if (size >= sizeof png_signature && memcmp(bytes, png_signature, sizeof png_signature) == 0)
    kind = "PNG";
  else if (size >= 3 && bytes[0] == 0xff && bytes[1] == 0xd8 && bytes[2] == 0xff)
    kind = "JPEG";
  else {
    gpuimg_error_set(GPUIMG_EXIT_INPUT, what, "unsupported format (not PNG or JPEG)");
    return -1;
  }
  if (size > INT_MAX) {
    gpuimg_error_set(GPUIMG_EXIT_INPUT, what, "file too large");
    return -1;
  }
  if (!stbi_info_from_memory(bytes, (int)size, &w, &h, &n)) {
    gpuimg_error_set(GPUIMG_EXIT_INPUT, what, "cannot decode %s: %s", kind, stb_reason());
    return -1;
  }
  if (w <= 0 || h <= 0 || (uint64_t)w * (uint64_t)h > max_pixels) {
    gpuimg_error_set(GPUIMG_EXIT_INPUT, what,
                     "image is %dx%d, over the limit of %llu pixels (see --max-pixels)", w, h,
                     (unsigned long long)max_pixels);
    return -1;
  }
  uint8_t *px = stbi_load_from_memory(bytes, (int)size, &w, &h, &n, 0);
  if (!px) {
    gpuimg_error_set(GPUIMG_EXIT_INPUT, what, "cannot decode %s: %s", kind, stb_reason());
    return -1;
  }
  if (n < 1 || n > 4) {
    stbi_image_free(px);
    gpuimg_error_set(GPUIMG_EXIT_INPUT, what, "unsupported channel count %d", n);
    return -1;
  }
  out->width = w;
  out->height = h;
  out->channels = n;
  out->data = px;
  return 0;
}

typedef struct {
  gpuimg_buf_t *buf;
  int failed;
} stb_sink_t;

static void stb_write_cb(void *context, void *data, int size)
{
  stb_sink_t *sink = context;
  if (!sink->failed && gpuimg_buf_append(sink->buf, data, (size_t)size) < 0)
    sink->failed = 1;
}

static int stb_encode(const gpuimg_image_t *img, gpuimg_format_t fmt, int quality,
                      const char *what, gpuimg_buf_t *out)
{
  stb_sink_t sink = {out, 0};
  int w = img->width, h = img->height, c = img->channels, ok = 0;

  /* stb_image_write computes sizes in int. */
  if (gpuimg_image_bytes(w, h, c) > (size_t)INT_MAX / 2) {
    gpuimg_error_set(GPUIMG_EXIT_OUTPUT, what, "image too large for the stb encoder");
    return -1;
  }
  switch (fmt) {
  case GPUIMG_FORMAT_PNG:
    ok = stbi_write_png_to_func(stb_write_cb, &sink, w, h, c, img->data, w * c);
    break;
  case GPUIMG_FORMAT_JPEG:
    ok = stbi_write_jpg_to_func(stb_write_cb, &sink, w, h, c, img->data, quality);
    break;
  case GPUIMG_FORMAT_BMP:
    ok = stbi_write_bmp_to_func(stb_write_cb, &sink, w, h, c, img->data);
    break;
  case GPUIMG_FORMAT_TGA:
    ok = stbi_write_tga_to_func(stb_write_cb, &sink, w, h, c, img->data);
    break;
  default:
    break;
  }
  if (!ok || sink.failed) {
    gpuimg_error_set(GPUIMG_EXIT_OUTPUT, what, "cannot encode %s%s", gpuimg_format_name(fmt),
                     sink.failed ? ": out of memory" : "");
    return -1;
  }
  return 0;
}

const gpuimg_codec_t gpuimg_codec_stb = {
  .name = "stb",
  .decode = stb_decode,
  .encode = stb_encode,
};
