/* exif.c: finds the EXIF Orientation of a JPEG (APP1) or PNG (eXIf) and applies it to pixels. */
#include "exif.h"

#include "codec.h"

#include <string.h>

#define TAG_ORIENTATION 0x0112
#define TYPE_SHORT 3

static uint32_t be32(const uint8_t *p)
{
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* A 16- or 32-bit value in the TIFF block's byte order (little: "II"). */
static uint32_t tiff_u(const uint8_t *p, int little, int bytes)
{
  uint32_t v = 0;
  for (int k = 0; k < bytes; k++)
    v |= (uint32_t)p[k] << (little ? 8 * k : 8 * (bytes - 1 - k));
  return v;
}

/* The Orientation in IFD0 of the TIFF block p[0..n-1]; 1 when absent or malformed. */
static int tiff_orientation(const uint8_t *p, size_t n)
{
  if (n < 8 || !((p[0] == 'I' && p[1] == 'I') || (p[0] == 'M' && p[1] == 'M')))
    return 1;
  int little = p[0] == 'I';
  if (tiff_u(p + 2, little, 2) != 42)
    return 1;
  uint32_t ifd = tiff_u(p + 4, little, 4);
  if (ifd < 8 || ifd > n || n - ifd < 2)
    return 1;
  uint32_t count = tiff_u(p + ifd, little, 2);
  size_t room = (n - ifd - 2) / 12; /* the entries that fit: a count past them is cut */
  for (size_t i = 0; i < count && i < room; i++) {
    const uint8_t *e = p + ifd + 2 + 12 * i;
    if (tiff_u(e, little, 2) != TAG_ORIENTATION)
      continue;
    if (tiff_u(e + 2, little, 2) != TYPE_SHORT || tiff_u(e + 4, little, 4) != 1)
      return 1;
    uint32_t v = tiff_u(e + 8, little, 2);
    return v >= 1 && v <= 8 ? (int)v : 1;
  }
  return 1;
}

/* JPEG: the markers before the scan, the first APP1 that starts "Exif\0\0". */
static int jpeg_orientation(const uint8_t *b, size_t size)
{
  size_t pos = 2;
  while (pos + 4 <= size && b[pos] == 0xff) {
    uint8_t m = b[pos + 1];
    if (m == 0xff) { /* fill byte */
      pos++;
      continue;
    }
    if (m == 0xd9 || m == 0xda) /* EOI, SOS: no EXIF comes after */
      return 1;
    if (m == 0x01 || (m >= 0xd0 && m <= 0xd7)) { /* markers without a length */
      pos += 2;
      continue;
    }
    size_t len = (size_t)b[pos + 2] << 8 | b[pos + 3];
    if (len < 2 || len > size - pos - 2)
      return 1;
    if (m == 0xe1 && len >= 8 && !memcmp(b + pos + 4, "Exif\0\0", 6))
      return tiff_orientation(b + pos + 10, len - 8);
    pos += 2 + len;
  }
  return 1;
}

/* PNG: the chunks before IDAT, the first eXIf (some writers start it with "Exif\0\0"). */
static int png_orientation(const uint8_t *b, size_t size)
{
  size_t pos = 8;
  while (pos + 12 <= size) {
    size_t len = be32(b + pos);
    const uint8_t *type = b + pos + 4;
    if (len > size - pos - 12 || !memcmp(type, "IDAT", 4) || !memcmp(type, "IEND", 4))
      return 1;
    if (!memcmp(type, "eXIf", 4)) {
      const uint8_t *d = b + pos + 8;
      int prefixed = len >= 6 && !memcmp(d, "Exif\0\0", 6);
      return tiff_orientation(d + (prefixed ? 6 : 0), len - (prefixed ? 6 : 0));
    }
    pos += 12 + len;
  }
  return 1;
}

int gpuimg_exif_orientation(const uint8_t *bytes, size_t size)
{
  if (gpuimg_codec_is_jpeg(bytes, size))
    return jpeg_orientation(bytes, size);
  if (gpuimg_codec_is_png(bytes, size))
    return png_orientation(bytes, size);
  return 1;
}

int gpuimg_image_orient(gpuimg_image_t *img, int o, const char *what)
{
  if (o < 2 || o > 8)
    return 0;
  int w = img->width, h = img->height, c = img->channels, swap = o >= 5;
  int ow = swap ? h : w, oh = swap ? w : h;
  gpuimg_image_t out;
  if (gpuimg_image_alloc_for(&out, ow, oh, c, what) < 0)
    return -1;
  for (int y = 0; y < oh; y++)
    for (int x = 0; x < ow; x++) {
      int sx, sy; /* the stored pixel that shows at (x, y) */
      switch (o) {
      case 2:
        sx = w - 1 - x, sy = y;
        break;
      case 3:
        sx = w - 1 - x, sy = h - 1 - y;
        break;
      case 4:
        sx = x, sy = h - 1 - y;
        break;
      case 5:
        sx = y, sy = x;
        break;
      case 6:
        sx = y, sy = h - 1 - x;
        break;
      case 7:
        sx = w - 1 - y, sy = h - 1 - x;
        break;
      default:
        sx = w - 1 - y, sy = x;
        break;
      }
      memcpy(out.data + ((size_t)y * (size_t)ow + (size_t)x) * (size_t)c,
             img->data + ((size_t)sy * (size_t)w + (size_t)sx) * (size_t)c, (size_t)c);
    }
  gpuimg_image_free(img);
  *img = out;
  return 0;
}
