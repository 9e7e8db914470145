/* exif.c: checks an EXIF block (its TIFF structure and Orientation) and applies the Orientation to
 * pixels. */
#include "exif.h"

#include <string.h>

#define TAG_ORIENTATION 0x0112
#define TYPE_SHORT 3

/* A 16- or 32-bit value in the TIFF block's byte order (little: "II"). */
static uint32_t tiff_u(const uint8_t *p, int little, int bytes)
{
  uint32_t v = 0;
  for (int k = 0; k < bytes; k++)
    v |= (uint32_t)p[k] << (little ? 8 * k : 8 * (bytes - 1 - k));
  return v;
}

/* The bytes of one value of TIFF type t (1..12); 0 for a type TIFF does not define. */
static unsigned type_size(uint32_t t)
{
  static const unsigned sizes[13] = {0, 1, 1, 2, 4, 8, 1, 1, 2, 4, 8, 4, 8};
  return t < 13 ? sizes[t] : 0;
}

/* Why IFD0's entry e of the block p[0..n-1] is malformed, or NULL; an Orientation sets
 * *orientation and *at. */
static const char *check_entry(const uint8_t *p, size_t n, int little, const uint8_t *e,
                               int *orientation, size_t *at)
{
  uint32_t tag = tiff_u(e, little, 2), type = tiff_u(e + 2, little, 2);
  uint64_t count = tiff_u(e + 4, little, 4), bytes = count * type_size(type);
  if (bytes > 4 && (uint64_t)tiff_u(e + 8, little, 4) + bytes > n)
    return "a value past the end of the block";
  if (tag != TAG_ORIENTATION)
    return NULL;
  uint32_t v = tiff_u(e + 8, little, 2);
  if (type != TYPE_SHORT || count != 1 || v < 1 || v > 8)
    return "an Orientation that is not one value 1..8";
  *orientation = (int)v;
  *at = (size_t)(e + 8 - p);
  return NULL;
}

const char *gpuimg_exif_check(const uint8_t *p, size_t n, int *orientation, size_t *at)
{
  *orientation = 1;
  *at = 0;
  if (n < 8 || !((p[0] == 'I' && p[1] == 'I') || (p[0] == 'M' && p[1] == 'M')))
    return "no TIFF header";
  int little = p[0] == 'I';
  if (tiff_u(p + 2, little, 2) != 42)
    return "no TIFF header";
  uint32_t ifd = tiff_u(p + 4, little, 4);
  if (ifd < 8 || ifd > n || n - ifd < 2)
    return "its first directory lies past the end of the block";
  uint32_t count = tiff_u(p + ifd, little, 2);
  if ((n - ifd - 2) / 12 < count || n - ifd - 2 - 12 * (size_t)count < 4)
    return "its first directory runs past the end of the block";
  uint32_t next = tiff_u(p + ifd + 2 + 12 * (size_t)count, little, 4);
  if (next && (next < 8 || next >= n))
    return "a directory pointer past the end of the block";
  for (uint32_t i = 0; i < count; i++) {
    const char *why = check_entry(p, n, little, p + ifd + 2 + 12 * (size_t)i, orientation, at);
    if (why) {
      *orientation = 1;
      *at = 0;
      return why;
    }
  }
  return NULL;
}

void gpuimg_exif_set_orientation(uint8_t *p, size_t at, int o)
{
  int little = p[0] == 'I';
  p[at + (little ? 0 : 1)] = (uint8_t)o;
  p[at + (little ? 1 : 0)] = 0;
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
