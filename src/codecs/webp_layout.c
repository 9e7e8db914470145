/* webp_layout.c: a WebP file's RIFF chunks: the metadata chunks found, and the extended form
 * with an ICCP and an EXIF chunk made from what libwebp wrote. */
#include "webp_layout.h"

#include <string.h>

#define RIFF_HEAD 12 /* "RIFF", the size, "WEBP" */
#define CHUNK_HEAD 8 /* the fourcc, the payload's size */
#define VP8X_SIZE 10 /* the VP8X payload: flags, 3 reserved bytes, canvas width and height - 1 */
#define FLAG_ANIM 0x02
#define FLAG_EXIF 0x08
#define FLAG_ALPHA 0x10
#define FLAG_ICC 0x20

static uint32_t le(const uint8_t *p, int bytes)
{
  uint32_t v = 0;
  for (int k = 0; k < bytes; k++)
    v |= (uint32_t)p[k] << (8 * k);
  return v;
}

static void put_le(uint8_t *p, int bytes, uint32_t v)
{
  for (int k = 0; k < bytes; k++)
    p[k] = (uint8_t)(v >> (8 * k));
}

/* The chunk at pos: its payload's size in *size, 1 when it lies whole inside n bytes. */
static int chunk_at(const uint8_t *b, size_t n, size_t pos, size_t *size)
{
  if (pos > n || n - pos < CHUNK_HEAD)
    return 0;
  *size = le(b + pos + 4, 4);
  return *size <= n - pos - CHUNK_HEAD;
}

/* The next chunk's offset after the one at pos of payload size (chunks are padded to even). */
static size_t next_chunk(size_t pos, size_t size)
{
  return pos + CHUNK_HEAD + size + (size & 1);
}

static int is_webp(const uint8_t *b, size_t n)
{
  return n >= RIFF_HEAD && !memcmp(b, "RIFF", 4) && !memcmp(b + 8, "WEBP", 4);
}

void gpuimg_webp_chunks(const uint8_t *b, size_t n, gpuimg_webp_chunks_t *c)
{
  memset(c, 0, sizeof *c);
  size_t size;
  for (size_t pos = RIFF_HEAD; is_webp(b, n) && chunk_at(b, n, pos, &size);
       pos = next_chunk(pos, size)) {
    const uint8_t *d = b + pos + CHUNK_HEAD;
    if (!memcmp(b + pos, "VP8X", 4) && size >= VP8X_SIZE)
      c->animated = (d[0] & FLAG_ANIM) != 0;
    if (!memcmp(b + pos, "ICCP", 4) && !c->icc)
      c->icc = d, c->icc_size = size;
    if (!memcmp(b + pos, "EXIF", 4) && !c->exif) {
      size_t skip = size >= 6 && !memcmp(d, "Exif\0\0", 6) ? 6 : 0;
      c->exif = d + skip, c->exif_size = size - skip;
    }
  }
}

/* The canvas of a still WebP's first chunk (at RIFF_HEAD, payload size): width, height, its
 * alpha and VP8X flags; the offset where the image's chunks begin. 0, or -1 when it is none
 * libwebp writes, or already carries metadata. */
static int canvas(const uint8_t *b, size_t size, uint32_t *w, uint32_t *h, int *flags, size_t *body)
{
  const uint8_t *d = b + RIFF_HEAD + CHUNK_HEAD;
  *body = RIFF_HEAD;
  if (!memcmp(b + RIFF_HEAD, "VP8X", 4) && size == VP8X_SIZE) {
    *flags = d[0];
    *w = le(d + 4, 3) + 1, *h = le(d + 7, 3) + 1;
    *body = next_chunk(RIFF_HEAD, size);
    return *flags & (FLAG_ANIM | FLAG_EXIF | FLAG_ICC) ? -1 : 0;
  }
  if (!memcmp(b + RIFF_HEAD, "VP8L", 4) && size >= 5 && d[0] == 0x2f) {
    uint32_t bits = le(d + 1, 4);
    *w = (bits & 0x3fff) + 1, *h = ((bits >> 14) & 0x3fff) + 1;
    *flags = (bits >> 28) & 1 ? FLAG_ALPHA : 0;
    return 0;
  }
  if (!memcmp(b + RIFF_HEAD, "VP8 ", 4) && size >= 10 && d[3] == 0x9d && d[4] == 0x01 &&
      d[5] == 0x2a) {
    *w = le(d + 6, 2) & 0x3fff, *h = le(d + 8, 2) & 0x3fff;
    *flags = 0;
    return 0;
  }
  return -1;
}

/* Appends a chunk: the fourcc, the size, the payload, a pad byte when its size is odd (room
 * made beforehand). */
static void append_chunk(gpuimg_buf_t *out, const char *fourcc, const uint8_t *d, size_t n)
{
  uint8_t *p = out->data + out->size;
  memcpy(p, fourcc, 4);
  put_le(p + 4, 4, (uint32_t)n);
  memcpy(p + CHUNK_HEAD, d, n);
  if (n & 1)
    p[CHUNK_HEAD + n] = 0;
  out->size += CHUNK_HEAD + n + (n & 1);
}

int gpuimg_webp_add_chunks(gpuimg_buf_t *enc, const uint8_t *icc, size_t icc_size,
                           const uint8_t *exif, size_t exif_size)
{
  const uint8_t *b = enc->data;
  size_t first, body;
  uint32_t w, h;
  int flags;
  if ((!icc && !exif) || !is_webp(b, enc->size) || !chunk_at(b, enc->size, RIFF_HEAD, &first) ||
      canvas(b, first, &w, &h, &flags, &body) < 0 || w == 0 || h == 0)
    return 0;
  size_t extra = (icc ? CHUNK_HEAD + icc_size + 1 : 0) + (exif ? CHUNK_HEAD + exif_size + 1 : 0);
  gpuimg_buf_t out = {0};
  if (extra > UINT32_MAX / 2 || enc->size > UINT32_MAX / 2) /* RIFF sizes are 32-bit */
    return 0;
  if (gpuimg_buf_reserve(&out, enc->size + extra + CHUNK_HEAD + VP8X_SIZE) < 0)
    return -1;
  uint8_t vp8x[VP8X_SIZE] = {0};
  vp8x[0] = (uint8_t)(flags | (icc ? FLAG_ICC : 0) | (exif ? FLAG_EXIF : 0));
  put_le(vp8x + 4, 3, w - 1);
  put_le(vp8x + 7, 3, h - 1);
  memcpy(out.data, b, RIFF_HEAD);
  out.size = RIFF_HEAD;
  append_chunk(&out, "VP8X", vp8x, VP8X_SIZE);
  if (icc)
    append_chunk(&out, "ICCP", icc, icc_size);
  memcpy(out.data + out.size, b + body, enc->size - body); /* ALPH and VP8, or VP8 or VP8L */
  out.size += enc->size - body;
  if (exif)
    append_chunk(&out, "EXIF", exif, exif_size);
  put_le(out.data + 4, 4, (uint32_t)(out.size - 8));
  gpuimg_buf_free(enc);
  *enc = out;
  return 1;
}
