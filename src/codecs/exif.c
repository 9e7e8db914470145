/* exif.c: checks an EXIF block (its TIFF structure), finds and rewrites its Orientation and pixel
 * dimensions, applies the Orientation to pixels, and moves EXIF between TIFF files and blocks. */
#include "exif.h"

#include <string.h>

#include "orientation.h"

#define TAG_ORIENTATION 0x0112
#define TAG_EXIF_IFD 0x8769
#define TAG_GPS_IFD 0x8825
#define TAG_INTEROP_IFD 0xA005
#define TAG_PIXEL_X 0xA002 /* PixelXDimension; PixelYDimension follows it */
#define TAG_BITS 0x0102    /* BitsPerSample */
#define TAG_ICC 0x8773     /* InterColorProfile */
#define TAG_PHOTOMETRIC 0x0106
#define TYPE_BYTE 1
#define TYPE_UNDEFINED 7
#define TYPE_SHORT 3
#define TYPE_LONG 4
#define TYPE_IFD 13 /* an IFD's offset, as TIFF-EP and Exif 2.3 allow for IFD pointers */
#define ENTRY 12    /* the bytes of one directory entry */

/* The block being checked, and what its directories told so far. */
typedef struct {
  const uint8_t *p;
  size_t n;
  int little;               /* byte order "II" */
  uint32_t exif_ifd;        /* the Exif IFD's offset, from IFD0 (0: none) */
  gpuimg_exif_tags_t *tags; /* where the rewritten values lie */
  gpuimg_tiff_ifd0_t *ifd0; /* a TIFF file's: what else IFD0 says (NULL: an EXIF block) */
} walk_t;

/* What a directory's entry e is to the walk: NULL, or why the block is malformed. */
typedef const char *visit_fn(walk_t *w, const uint8_t *e);

/* A 16- or 32-bit value in the TIFF block's byte order (little: "II"). */
static uint32_t tiff_u(const uint8_t *p, int little, int bytes)
{
  uint32_t v = 0;
  for (int k = 0; k < bytes; k++)
    v |= (uint32_t)p[k] << (little ? 8 * k : 8 * (bytes - 1 - k));
  return v;
}

/* Writes a 16- or 32-bit value in the block's byte order. */
static void tiff_put(uint8_t *p, int little, int bytes, uint32_t v)
{
  for (int k = 0; k < bytes; k++)
    p[k] = (uint8_t)(v >> (little ? 8 * k : 8 * (bytes - 1 - k)));
}

/* The bytes of one value of TIFF type t (1..12); 0 for a type TIFF does not define. */
static unsigned type_size(uint32_t t)
{
  static const unsigned sizes[13] = {0, 1, 1, 2, 4, 8, 1, 1, 2, 4, 8, 4, 8};
  return t < 13 ? sizes[t] : 0;
}

/* Whether entry e holds one value of type a or b. */
static int one_of(const walk_t *w, const uint8_t *e, uint32_t a, uint32_t b)
{
  uint32_t type = tiff_u(e + 2, w->little, 2);
  return (type == a || type == b) && tiff_u(e + 4, w->little, 4) == 1;
}

/* A TIFF file's IFD0 entries besides the Orientation: the profile, the first BitsPerSample
 * (check_dir() has checked that the values lie inside the file). */
static void visit_file_ifd0(walk_t *w, const uint8_t *e)
{
  uint32_t tag = tiff_u(e, w->little, 2), type = tiff_u(e + 2, w->little, 2);
  uint32_t count = tiff_u(e + 4, w->little, 4);
  if (tag == TAG_ICC && (type == TYPE_BYTE || type == TYPE_UNDEFINED) && count > 4) {
    w->ifd0->icc_at = tiff_u(e + 8, w->little, 4);
    w->ifd0->icc_size = count;
  }
  if (tag == TAG_BITS && type == TYPE_SHORT && count >= 1)
    w->ifd0->bits =
        (int)tiff_u(count > 2 ? w->p + tiff_u(e + 8, w->little, 4) : e + 8, w->little, 2);
}

/* IFD0's entries: the Orientation, the Exif IFD pointer. */
static const char *visit_ifd0(walk_t *w, const uint8_t *e)
{
  uint32_t tag = tiff_u(e, w->little, 2);
  if (tag == TAG_EXIF_IFD && !w->exif_ifd && one_of(w, e, TYPE_LONG, TYPE_IFD))
    w->exif_ifd = tiff_u(e + 8, w->little, 4);
  if (w->ifd0)
    visit_file_ifd0(w, e);
  if (tag != TAG_ORIENTATION)
    return NULL;
  uint32_t v = tiff_u(e + 8, w->little, 2);
  if (!one_of(w, e, TYPE_SHORT, TYPE_SHORT) || v < 1 || v > 8)
    return "an Orientation that is not one value 1..8";
  w->tags->orientation = (int)v;
  w->tags->orientation_at = (size_t)(e + 8 - w->p);
  return NULL;
}

/* The Exif IFD's entries: the first PixelXDimension and PixelYDimension of one SHORT or LONG. */
static const char *visit_exif_ifd(walk_t *w, const uint8_t *e)
{
  uint32_t k = tiff_u(e, w->little, 2) - TAG_PIXEL_X;
  if (k > 1 || w->tags->size_at[k] || !one_of(w, e, TYPE_SHORT, TYPE_LONG))
    return NULL;
  w->tags->size_at[k] = (size_t)(e + 8 - w->p);
  return NULL;
}

/* A directory whose entries are only checked to lie inside the block. */
static const char *visit_nothing(walk_t *w, const uint8_t *e)
{
  (void)w, (void)e;
  return NULL;
}

/* Checks the directory at offset ifd (its place, its entries, their values stored outside,
 * its next-IFD pointer) and hands each entry to visit; *end gets the offset past it. */
static const char *check_dir(walk_t *w, uint32_t ifd, visit_fn *visit, size_t *end)
{
  size_t n = w->n;
  if (ifd < 8 || ifd > n || n - ifd < 2)
    return "its first directory lies past the end of the block";
  uint32_t count = tiff_u(w->p + ifd, w->little, 2);
  if ((n - ifd - 2) / ENTRY < count || n - ifd - 2 - ENTRY * (size_t)count < 4)
    return "its first directory runs past the end of the block";
  *end = ifd + 2 + ENTRY * (size_t)count + 4;
  uint32_t next = tiff_u(w->p + *end - 4, w->little, 4);
  if (next && (next < 8 || next >= n))
    return "a directory pointer past the end of the block";
  for (uint32_t i = 0; i < count; i++) {
    const uint8_t *e = w->p + ifd + 2 + ENTRY * (size_t)i;
    uint64_t bytes = (uint64_t)tiff_u(e + 4, w->little, 4) * type_size(tiff_u(e + 2, w->little, 2));
    const char *why = bytes > 4 && (uint64_t)tiff_u(e + 8, w->little, 4) + bytes > n
                          ? "a value past the end of the block"
                          : visit(w, e);
    if (why)
      return why;
  }
  return NULL;
}

/* The pixel dimensions in the Exif IFD, when it is well formed and is IFD0 [ifd0, end0) or
 * lies apart from it: rewriting them then touches no other entry. */
static void find_size(walk_t *w, uint32_t ifd0, size_t end0)
{
  size_t end;
  uint32_t at = w->exif_ifd;
  if (!at)
    return;
  const char *bad = check_dir(w, at, visit_exif_ifd, &end);
  if (bad || (at != ifd0 && at < end0 && end > ifd0))
    memset(w->tags->size_at, 0, sizeof w->tags->size_at);
}

const char *gpuimg_exif_check(const uint8_t *p, size_t n, gpuimg_exif_tags_t *tags)
{
  memset(tags, 0, sizeof *tags);
  tags->orientation = 1;
  if (n < 8 || !((p[0] == 'I' && p[1] == 'I') || (p[0] == 'M' && p[1] == 'M')))
    return "no TIFF header";
  walk_t w = {p, n, p[0] == 'I', 0, tags, NULL};
  if (tiff_u(p + 2, w.little, 2) != 42)
    return "no TIFF header";
  uint32_t ifd0 = tiff_u(p + 4, w.little, 4);
  size_t end0;
  const char *why = check_dir(&w, ifd0, visit_ifd0, &end0);
  if (why) {
    memset(tags, 0, sizeof *tags);
    tags->orientation = 1;
    return why;
  }
  find_size(&w, ifd0, end0);
  return NULL;
}

const char *gpuimg_tiff_ifd0(const uint8_t *p, size_t n, gpuimg_exif_tags_t *tags,
                             gpuimg_tiff_ifd0_t *ifd0)
{
  memset(tags, 0, sizeof *tags);
  memset(ifd0, 0, sizeof *ifd0);
  tags->orientation = 1;
  ifd0->bits = 1;
  if (n < 8 || !((p[0] == 'I' && p[1] == 'I') || (p[0] == 'M' && p[1] == 'M')))
    return "no TIFF header";
  walk_t w = {p, n, p[0] == 'I', 0, tags, ifd0};
  if (tiff_u(p + 2, w.little, 2) != 42)
    return "no TIFF header";
  size_t end0;
  const char *why = check_dir(&w, tiff_u(p + 4, w.little, 4), visit_ifd0, &end0);
  int o = tags->orientation;
  memset(tags, 0, sizeof *tags);
  tags->orientation = why ? 1 : o;
  if (why) {
    memset(ifd0, 0, sizeof *ifd0);
    ifd0->bits = 1;
    return why;
  }
  ifd0->more_pages = tiff_u(p + end0 - 4, w.little, 4) != 0;
  return NULL;
}

void gpuimg_exif_set_orientation(uint8_t *p, const gpuimg_exif_tags_t *tags, int o)
{
  if (tags->orientation_at)
    tiff_put(p + tags->orientation_at, p[0] == 'I', 2, (uint32_t)o);
}

void gpuimg_exif_set_size(uint8_t *p, const gpuimg_exif_tags_t *tags, int width, int height)
{
  for (int k = 0; k < 2; k++) {
    uint32_t v = (uint32_t)(k ? height : width);
    if (!tags->size_at[k])
      continue;
    uint8_t *type = p + tags->size_at[k] - 6; /* the entry's type, 6 bytes before its value */
    int little = p[0] == 'I', as_long = tiff_u(type, little, 2) == TYPE_LONG || v > 0xffff;
    if (as_long)
      tiff_put(type, little, 2, TYPE_LONG);
    tiff_put(p + tags->size_at[k], little, as_long ? 4 : 2, v);
  }
}

int gpuimg_image_orient(gpuimg_image_t *img, int o, const char *what)
{
  if (o < 2 || o > 8)
    return 0;
  gpuimg_orientation_t t = gpuimg_orientation_make(o, img->width, img->height);
  gpuimg_image_t out;
  if (gpuimg_image_alloc_for(&out, t.out_w, t.out_h, img->channels, what) < 0)
    return -1;
  gpuimg_orientation_rows(o, img, &out, 0, t.out_h);
  gpuimg_image_free(img);
  *img = out;
  return 0;
}

/* The entries of enc's IFD0 (checked as gpuimg_exif_check() does): its offset and count;
 * *gray and whether it has a profile from its entries. 0, or -1 when it has none or cannot
 * be read. */
static int file_ifd0(const gpuimg_buf_t *enc, uint32_t *at, uint32_t *count, int *gray, int *icc)
{
  gpuimg_exif_tags_t tags;
  if (enc->size < 8 || gpuimg_exif_check(enc->data, enc->size, &tags) != NULL ||
      tiff_u(enc->data + 2, enc->data[0] == 'I', 2) != 42)
    return -1;
  int little = enc->data[0] == 'I';
  *at = tiff_u(enc->data + 4, little, 4);
  *count = tiff_u(enc->data + *at, little, 2);
  *gray = *icc = 0;
  for (uint32_t i = 0; i < *count; i++) {
    const uint8_t *e = enc->data + *at + 2 + ENTRY * (size_t)i;
    uint32_t tag = tiff_u(e, little, 2);
    *icc |= tag == TAG_ICC;
    if (tag == TAG_PHOTOMETRIC)
      *gray = tiff_u(e + 8, little, 2) <= 1;
  }
  return *count < 0xffff ? 0 : -1;
}

/* Appends n bytes (room made beforehand: no reallocation), then a zero byte when that leaves
 * the size odd (TIFF's word alignment); returns where they start. */
static size_t append_even(gpuimg_buf_t *enc, const void *bytes, size_t n)
{
  size_t at = enc->size;
  memcpy(enc->data + at, bytes, n);
  enc->size += n;
  if (enc->size & 1)
    enc->data[enc->size++] = 0;
  return at;
}

int gpuimg_tiff_add_icc(gpuimg_buf_t *enc, const uint8_t *icc, size_t n, int check, int *gray)
{
  uint32_t at, count;
  int has_icc;
  size_t ifd_bytes;
  if (file_ifd0(enc, &at, &count, gray, &has_icc) < 0 || has_icc ||
      (ifd_bytes = 2 + ENTRY * ((size_t)count + 1) + 4) + n + 2 > UINT32_MAX - enc->size)
    return 0;
  if (check)
    return 1;
  if (gpuimg_buf_reserve(enc, n + 1 + ifd_bytes) < 0)
    return -1;
  int little = enc->data[0] == 'I';
  uint32_t icc_at = (uint32_t)append_even(enc, icc, n);
  uint8_t head[2 + ENTRY];
  tiff_put(head, little, 2, count + 1);
  tiff_put(head + 2, little, 2, TAG_ICC);
  tiff_put(head + 4, little, 2, TYPE_UNDEFINED);
  tiff_put(head + 6, little, 4, (uint32_t)n);
  tiff_put(head + 10, little, 4, icc_at);
  /* The copy: the count, the entries in tag order with the new one at its place, the
   * next-IFD pointer. */
  const uint8_t *old = enc->data + at + 2;
  uint32_t before = 0;
  while (before < count && tiff_u(old + ENTRY * (size_t)before, little, 2) < TAG_ICC)
    before++;
  uint32_t ifd = (uint32_t)append_even(enc, head, 2);
  append_even(enc, old, ENTRY * (size_t)before);
  append_even(enc, head + 2, ENTRY);
  append_even(enc, old + ENTRY * (size_t)before, ENTRY * (size_t)(count - before) + 4);
  tiff_put(enc->data + 4, little, 4, ifd);
  return 1;
}

int gpuimg_tiff_set_orientation(gpuimg_buf_t *enc, int o)
{
  uint32_t at, count;
  int gray, icc;
  if (o < 1 || o > 8 || file_ifd0(enc, &at, &count, &gray, &icc) < 0)
    return 0;
  int little = enc->data[0] == 'I';
  walk_t w = {enc->data, enc->size, little, 0, NULL, NULL};
  for (uint32_t i = 0; i < count; i++) {
    uint8_t *e = enc->data + at + 2 + ENTRY * (size_t)i;
    if (tiff_u(e, little, 2) == TAG_ORIENTATION && one_of(&w, e, TYPE_SHORT, TYPE_SHORT)) {
      tiff_put(e + 8, little, 2, (uint32_t)o);
      return 1;
    }
  }
  return 0;
}

/* ---- A TIFF file's EXIF as a block ------------------------------------------------------ */

/* Whether an EXIF block takes entry e of a file's directory: of IFD0 (first), the
 * descriptive tags TIFF and Exif share; of the Exif and GPS IFDs, every entry of a TIFF type
 * but pointers to further directories, which are not copied. */
static int takes(const walk_t *w, const uint8_t *e, int first)
{
  static const uint16_t shared[] = {0x010E, 0x010F, 0x0110, TAG_ORIENTATION,
                                    0x0131, 0x0132, 0x013B, 0x8298};
  uint32_t tag = tiff_u(e, w->little, 2), type = tiff_u(e + 2, w->little, 2);
  if (first) {
    for (size_t k = 0; k < sizeof shared / sizeof shared[0]; k++)
      if (tag == shared[k])
        return type_size(type) != 0;
    return 0;
  }
  return type_size(type) != 0 && type != TYPE_IFD && tag != TAG_EXIF_IFD && tag != TAG_GPS_IFD &&
         tag != TAG_INTEROP_IFD;
}

/* The bytes of entry e's values when stored outside it (over 4), else 0. */
static size_t outside(const walk_t *w, const uint8_t *e)
{
  uint64_t bytes = (uint64_t)tiff_u(e + 4, w->little, 4) * type_size(tiff_u(e + 2, w->little, 2));
  return bytes <= 4 ? 0 : bytes > SIZE_MAX / 4 ? SIZE_MAX / 4 : (size_t)bytes;
}

/* The entries the block takes of the file's directory at ifd (checked), and in *data the
 * bytes their values stored outside take (each padded to an even size). */
static uint32_t taken(const walk_t *w, uint32_t ifd, int first, size_t *data)
{
  uint32_t count = tiff_u(w->p + ifd, w->little, 2), n = 0;
  for (uint32_t i = 0; i < count; i++) {
    const uint8_t *e = w->p + ifd + 2 + ENTRY * (size_t)i;
    if (takes(w, e, first)) {
      size_t b = outside(w, e); /* at most SIZE_MAX / 4 */
      b += b & 1;
      if (*data <= SIZE_MAX / 2) /* past it the sum stays put: the caller's limit refuses it */
        *data += b;
      n++;
    }
  }
  return n;
}

/* Copies the entries the block takes of the file's directory at ifd to the block's directory
 * at b + at (room for them made), their values stored outside to b + *data on, then the
 * extras entries of extra (IFD0's pointers to the copied Exif and GPS IFDs). */
static void copy_dir(const walk_t *w, uint32_t ifd, int first, uint8_t *b, size_t at, size_t *data,
                     const uint8_t *extra, uint32_t extras)
{
  uint32_t count = tiff_u(w->p + ifd, w->little, 2), n = 0;
  for (uint32_t i = 0; i < count; i++) {
    const uint8_t *e = w->p + ifd + 2 + ENTRY * (size_t)i;
    if (!takes(w, e, first))
      continue;
    uint8_t *d = b + at + 2 + ENTRY * (size_t)n++;
    memcpy(d, e, ENTRY);
    size_t bytes = outside(w, e);
    if (bytes) {
      memcpy(b + *data, w->p + tiff_u(e + 8, w->little, 4), bytes);
      tiff_put(d + 8, w->little, 4, (uint32_t)*data);
      *data += bytes + (bytes & 1);
    }
  }
  if (extras)
    memcpy(b + at + 2 + ENTRY * (size_t)n, extra, ENTRY * (size_t)extras);
  tiff_put(b + at, w->little, 2, n + extras);
  tiff_put(b + at + 2 + ENTRY * (size_t)(n + extras), w->little, 4, 0);
}

/* A pointer entry to the directory at offset to. */
static void pointer(const walk_t *w, uint8_t *e, uint32_t tag, uint32_t to)
{
  tiff_put(e, w->little, 2, tag);
  tiff_put(e + 2, w->little, 2, TYPE_LONG);
  tiff_put(e + 4, w->little, 4, 1);
  tiff_put(e + 8, w->little, 4, to);
}

/* The file's GPS IFD, from IFD0's tag 0x8825 (one LONG or IFD), when it is well formed; 0:
 * none. */
static uint32_t gps_ifd(walk_t *w, uint32_t ifd0)
{
  uint32_t count = tiff_u(w->p + ifd0, w->little, 2);
  for (uint32_t i = 0; i < count; i++) {
    const uint8_t *e = w->p + ifd0 + 2 + ENTRY * (size_t)i;
    size_t end;
    uint32_t at = tiff_u(e + 8, w->little, 4);
    if (tiff_u(e, w->little, 2) == TAG_GPS_IFD && one_of(w, e, TYPE_LONG, TYPE_IFD))
      return check_dir(w, at, visit_nothing, &end) ? 0 : at;
  }
  return 0;
}

int gpuimg_tiff_exif(const uint8_t *p, size_t n, size_t limit, gpuimg_buf_t *out, const char **why)
{
  gpuimg_exif_tags_t tags;
  gpuimg_tiff_ifd0_t file;
  size_t end;
  *why = NULL;
  if (gpuimg_tiff_ifd0(p, n, &tags, &file) != NULL)
    return 0; /* the decoder says what is wrong */
  walk_t w = {p, n, p[0] == 'I', 0, &tags, &file};
  uint32_t ifd0 = tiff_u(p + 4, w.little, 4);
  check_dir(&w, ifd0, visit_ifd0, &end); /* sets w.exif_ifd: IFD0 is well formed */
  uint32_t exif = w.exif_ifd;
  if (!exif)
    return 0;
  if (check_dir(&w, exif, visit_nothing, &end)) {
    *why = "its Exif IFD, or a value of it, lies or runs past the end of the file";
    return 0;
  }
  uint32_t gps = gps_ifd(&w, ifd0);
  /* The block: header, IFD0, the Exif IFD, the GPS IFD, then every value stored outside. */
  size_t data = 0;
  uint32_t k0 = taken(&w, ifd0, 1, &data) + (gps ? 2 : 1), ke = taken(&w, exif, 0, &data);
  uint32_t kg = gps ? taken(&w, gps, 0, &data) : 0;
  size_t at_exif = 8 + 2 + ENTRY * (size_t)k0 + 4, at_gps = at_exif + 2 + ENTRY * (size_t)ke + 4;
  size_t at_data = at_gps + (gps ? 2 + ENTRY * (size_t)kg + 4 : 0), size = at_data + data;
  if (size > limit) {
    *why = "it is larger than 1 MiB";
    return 0;
  }
  if (gpuimg_buf_reserve(out, size) < 0)
    return -1;
  uint8_t *b = out->data + out->size, extra[2 * ENTRY];
  memset(b, 0, size);
  memcpy(b, p, 4); /* the byte order and 42 */
  tiff_put(b + 4, w.little, 4, 8);
  pointer(&w, extra, TAG_EXIF_IFD, (uint32_t)at_exif);
  pointer(&w, extra + ENTRY, TAG_GPS_IFD, (uint32_t)at_gps);
  copy_dir(&w, ifd0, 1, b, 8, &at_data, extra, gps ? 2 : 1);
  copy_dir(&w, exif, 0, b, at_exif, &at_data, NULL, 0);
  if (gps)
    copy_dir(&w, gps, 0, b, at_gps, &at_data, NULL, 0);
  out->size += size;
  return 0;
}
