/* fastpng_read.c: fastpng's PNG reader, for the PNGs most files are (8-bit, not interlaced,
 * gray, gray+alpha, RGB or RGBA, no palette or transparency chunk): their zlib stream inflated
 * in one call (libdeflate's, else zlib's, either checking the Adler-32) and the rows unfiltered
 * in place of stb's decode. A PNG of another kind, or one it finds anything wrong with, goes to
 * stb, whose pixels and error messages are then the same as before; the pixels of a PNG both
 * read are the same (PNG is lossless, and neither applies gamma or colour chunks). */
#include "codec.h"
#include "fastpng.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#ifdef GPUIMG_HAVE_LIBDEFLATE
#include <libdeflate.h>
#endif

/* stb's largest side (src/codecs/stb.c): a larger image is stb's to refuse. */
#define READ_MAX_SIDE (1u << 20)
/* The most a deflate stream expands: a length-258 match in about two bits (RFC 1951). */
#define DEFLATE_MAX_RATIO 1032u

static uint32_t be32(const uint8_t *p)
{
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* What the chunk walk found: the size, channels, and the IDAT chunks (consecutive, as the
 * PNG specification requires) from first, their payloads summing to zsize. */
typedef struct {
  uint32_t w, h;
  int c;
  size_t first, zsize;
  int nidat;
} layout_t;

/* IHDR's fields: 1 when this reader takes them. */
static int take_header(const uint8_t *d, layout_t *l)
{
  static const int channels[7] = {1, 0, 3, 0, 2, 0, 4}; /* by colour type; 0: not taken */
  l->w = be32(d);
  l->h = be32(d + 4);
  int depth = d[8], type = d[9];
  if (l->w == 0 || l->h == 0 || l->w > READ_MAX_SIDE || l->h > READ_MAX_SIDE || depth != 8 ||
      type > 6 || !channels[type] || d[10] || d[11] || d[12])
    return 0;
  l->c = channels[type];
  return 1;
}

/* Walks the chunks (not their CRCs, as stb does not): 1 when the file is one this reader
 * takes, with IHDR first, the IDATs together, no other critical chunk nor tRNS, and IEND at
 * the end. */
static int walk(const uint8_t *b, size_t n, layout_t *l)
{
  static const uint8_t signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  memset(l, 0, sizeof *l);
  if (n < 8 + 25 || memcmp(b, signature, 8) || be32(b + 8) != 13 || memcmp(b + 12, "IHDR", 4) ||
      !take_header(b + 16, l))
    return 0;
  int idat_done = 0;
  for (size_t p = 33; p + 12 <= n;) {
    size_t len = be32(b + p);
    const uint8_t *type = b + p + 4;
    if (len > n - p - 12)
      return 0;
    if (!memcmp(type, "IDAT", 4)) {
      if (idat_done)
        return 0;
      if (!l->nidat++)
        l->first = p;
      l->zsize += len;
    } else if (!memcmp(type, "IEND", 4)) {
      return l->nidat > 0;
    } else {
      /* Any other critical chunk (a capital first letter: PLTE, a second IHDR, one unknown)
       * and tRNS, which stb turns into alpha, are stb's. */
      idat_done = l->nidat > 0;
      if (!(type[0] & 0x20) || !memcmp(type, "tRNS", 4))
        return 0;
    }
    p += 12 + len;
  }
  return 0;
}

int gpuimg_fastpng_reads(const uint8_t *bytes, size_t size)
{
  layout_t l;
  return walk(bytes, size, &l);
}

/* The zlib stream: the IDATs' payloads, joined into *own when there are several. */
static const uint8_t *stream(const uint8_t *b, const layout_t *l, uint8_t **own)
{
  *own = NULL;
  if (l->nidat == 1)
    return b + l->first + 8;
  if (!(*own = malloc(l->zsize ? l->zsize : 1)))
    return NULL;
  size_t at = 0;
  for (size_t p = l->first; at < l->zsize;) {
    size_t len = be32(b + p);
    memcpy(*own + at, b + p + 8, len);
    at += len;
    p += 12 + len;
  }
  return *own;
}

/* Inflates z[0..zn) into exactly out[0..n): 0, or -1 (corrupt, or another length). */
static int inflate_exact(const uint8_t *z, size_t zn, uint8_t *out, size_t n)
{
#ifdef GPUIMG_HAVE_LIBDEFLATE
  struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();
  size_t got = 0;
  int ok =
      d && libdeflate_zlib_decompress(d, z, zn, out, n, &got) == LIBDEFLATE_SUCCESS && got == n;
  libdeflate_free_decompressor(d);
  return ok ? 0 : -1;
#else
  uLongf got = (uLongf)n;
  uLong used = (uLong)zn;
  return uncompress2(out, &got, z, &used) == Z_OK && got == n ? 0 : -1;
#endif
}

/* The Paeth predictor without branches (photographs make them unpredictable): p = a + b - c,
 * so p - a = b - c, p - b = a - c and p - c = a + b - 2c. */
static inline int paeth(int a, int b, int c)
{
  int pa = abs(b - c), pb = abs(a - c), pc = abs(a + b - 2 * c);
  int bc = pb <= pc ? b : c;
  return (pa <= pb) & (pa <= pc) ? a : bc;
}

/* A Paeth row after the first, for c channels (a constant where it is inlined): the left and
 * upper-left pixels are kept in registers, so that each channel's chain of predictions waits
 * on arithmetic only, not on the store of the byte before it. */
static inline void paeth_row(const uint8_t *s, const uint8_t *prev, uint8_t *row, size_t stride,
                             const int c)
{
  int left[4] = {0, 0, 0, 0}, upleft[4] = {0, 0, 0, 0};
  for (size_t x = 0; x < stride; x += (size_t)c)
    for (int k = 0; k < c; k++) {
      int up = prev[x + k], v = (uint8_t)(s[x + k] + paeth(left[k], up, upleft[k]));
      row[x + k] = (uint8_t)v;
      left[k] = v;
      upleft[k] = up;
    }
}

/* Row y of the image from its filtered bytes (filter type, then stride bytes) and the row
 * above (prev; NULL for the first, which reads as zeros). 0, or -1 for an unknown filter. */
static int unfilter_row(const uint8_t *f, const uint8_t *prev, uint8_t *row, size_t stride, int c)
{
  const uint8_t *s = f + 1;
  size_t i;
  switch (f[0]) {
  case 0:
    memcpy(row, s, stride);
    return 0;
  case 1:
    for (i = 0; i < stride; i++)
      row[i] = (uint8_t)(s[i] + (i >= (size_t)c ? row[i - c] : 0));
    return 0;
  case 2:
    for (i = 0; i < stride; i++)
      row[i] = (uint8_t)(s[i] + (prev ? prev[i] : 0));
    return 0;
  case 3:
    for (i = 0; i < stride; i++)
      row[i] = (uint8_t)(s[i] + (((i >= (size_t)c ? row[i - c] : 0) + (prev ? prev[i] : 0)) >> 1));
    return 0;
  case 4:
    if (!prev) /* above and upper-left read as 0: Paeth picks the left neighbour */
      for (i = 0; i < stride; i++)
        row[i] = (uint8_t)(s[i] + (i >= (size_t)c ? row[i - c] : 0));
    else if (c == 3)
      paeth_row(s, prev, row, stride, 3);
    else if (c == 4)
      paeth_row(s, prev, row, stride, 4);
    else if (c == 1)
      paeth_row(s, prev, row, stride, 1);
    else
      paeth_row(s, prev, row, stride, 2);
    return 0;
  default:
    return -1;
  }
}

/* The pixels of a file walk() took, into out: 0, or -1 (nothing kept) when anything is
 * wrong or memory is short. */
static int read_pixels(const uint8_t *b, const layout_t *l, gpuimg_image_t *out)
{
  size_t stride = (size_t)l->w * (size_t)l->c, rows = l->h;
  /* Nothing is allocated for more than the stream can hold (deflate expands at most 1032
   * times, plus a block's overhead): a header that lies about the size is stb's to judge. */
  if (stride + 1 > SIZE_MAX / rows || l->zsize > SIZE_MAX / DEFLATE_MAX_RATIO - 1024 ||
      (stride + 1) * rows > l->zsize * DEFLATE_MAX_RATIO + 1024)
    return -1;
  uint8_t *own, *filtered = malloc((stride + 1) * rows), *px = malloc(stride * rows);
  const uint8_t *z = stream(b, l, &own);
  int rc = z && filtered && px ? inflate_exact(z, l->zsize, filtered, (stride + 1) * rows) : -1;
  for (size_t y = 0; rc == 0 && y < rows; y++)
    rc = unfilter_row(filtered + y * (stride + 1), y ? px + (y - 1) * stride : NULL,
                      px + y * stride, stride, l->c);
  free(own);
  free(filtered);
  if (rc < 0) {
    free(px);
    return -1;
  }
  out->width = (int)l->w;
  out->height = (int)l->h;
  out->channels = l->c;
  out->data = px;
  return 0;
}

int gpuimg_fastpng_read(const uint8_t *bytes, size_t size, const char *what, uint64_t max_pixels,
                        gpuimg_image_t *out)
{
  layout_t l;
  memset(out, 0, sizeof *out);
  if (walk(bytes, size, &l) && (uint64_t)l.w * l.h <= max_pixels &&
      read_pixels(bytes, &l, out) == 0)
    return 0;
  return gpuimg_codec_stb.decode(bytes, size, what, max_pixels, out); /* its verdict */
}
