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
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
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

/* stb keeps its last failure reason in a global that no call clears, so a reason can be
 * stale (left by another decoder's probe) or a fragment (a cut chunk name). Reset it
 * before each call and keep only a reason that says something. */
static void stb_reason_reset(void)
{
  stbi__g_failure_reason = NULL;
}

static const char *stb_reason(const char *kind)
{
  const char *r = stbi__g_failure_reason;
  const char *other = strcmp(kind, "PNG") == 0 ? "jpeg" : "png";
  if (r && strcmp(r, "outofmem") == 0)
    return "out of memory";
  if (!r || strlen(r) < 6 || strcmp(r, "unknown image type") == 0 || strstr(r, other) ||
      (strcmp(other, "jpeg") == 0 && strstr(r, "jpg")))
    return "corrupt or truncated image data";
  return r;
}

static uint32_t be32(const uint8_t *p)
{
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint32_t be16(const uint8_t *p)
{
  return (uint32_t)p[0] << 8 | p[1];
}

/* Width and height from the file header, before any pixel memory is allocated:
 * PNG's IHDR, or JPEG's first start-of-frame segment. 0 if not found. */
static int header_dims(const uint8_t *b, size_t n, int png, uint32_t *w, uint32_t *h)
{
  if (png) {
    if (n < 24 || memcmp(b + 12, "IHDR", 4) != 0)
      return 0;
    *w = be32(b + 16);
    *h = be32(b + 20);
    return 1;
  }
  size_t pos = 2;
  while (pos + 4 <= n) {
    if (b[pos] != 0xff)
      return 0;
    uint8_t m = b[pos + 1];
    if (m == 0xff) {
      pos++;
      continue;
    }
    if (m == 0x01 || (m >= 0xd0 && m <= 0xd7)) {
      pos += 2;
      continue;
    }
    uint32_t len = be16(b + pos + 2);
    if (m >= 0xc0 && m <= 0xcf && m != 0xc4 && m != 0xc8 && m != 0xcc) {
      if (pos + 9 > n)
        return 0;
      *h = be16(b + pos + 5);
      *w = be16(b + pos + 7);
      return 1;
    }
    if (len < 2)
      return 0;
    pos += 2 + len;
  }
  return 0;
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
  uint32_t hw, hh;
  if (header_dims(bytes, size, kind[0] == 'P', &hw, &hh)) {
    if (hw == 0 || hh == 0) {
      gpuimg_error_set(GPUIMG_EXIT_INPUT, what, "cannot decode %s: zero width or height", kind);
      return -1;
    }
    if ((uint64_t)hw * hh > max_pixels) {
      gpuimg_error_set(GPUIMG_EXIT_INPUT, what,
                       "image is %ux%u, over the limit of %llu pixels (see --max-pixels)", hw, hh,
                       (unsigned long long)max_pixels);
      return -1;
    }
  }
  stb_reason_reset();
  uint8_t *px = stbi_load_from_memory(bytes, (int)size, &w, &h, &n, 0);
  if (!px) {
    gpuimg_error_set(GPUIMG_EXIT_INPUT, what, "cannot decode %s: %s", kind, stb_reason(kind));
    return -1;
  }
  if ((uint64_t)w * (uint64_t)h > max_pixels) { /* a header we could not read */
    stbi_image_free(px);
    gpuimg_error_set(GPUIMG_EXIT_INPUT, what,
                     "image is %dx%d, over the limit of %llu pixels (see --max-pixels)", w, h,
                     (unsigned long long)max_pixels);
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

  /* stb_image_write computes sizes in int ((w*c + 1) * h for PNG rows and filters). */
  if (gpuimg_image_bytes(w, h, c) + (size_t)h > (size_t)INT_MAX - 65536) {
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
