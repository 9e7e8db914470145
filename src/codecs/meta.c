/* meta.c: reads the ICC profile and EXIF of a JPEG (APP2, APP1) or PNG (iCCP, eXIf) from its bytes,
 * and puts them into an encoded JPEG or PNG, the same for every decoder and encoder (or hands
 * them to the encoder of a format whose container it does not write: AVIF). */
#include "meta.h"

#include "jpeg_layout.h"
#include "webp_layout.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <zlib.h>

#define EXIF_HEAD "Exif\0\0"  /* what starts a JPEG APP1 EXIF segment (6 bytes) */
#define ICC_TAG "ICC_PROFILE" /* with its NUL, the start of each APP2 profile marker */
#define ICC_HEAD 14           /* the tag, the marker's sequence number (1..) and count */
#define SEGMENT_MAX 65533     /* a JPEG marker's payload: 65535 less the length field */
#define ICC_PER_MARKER (SEGMENT_MAX - ICC_HEAD)
#define EXIF_MAX (SEGMENT_MAX - 6)
#define PNG_IHDR_END 33 /* the signature and the IHDR chunk, which comes first */
#define ICC_DEFAULT_NAME "ICC profile"
_Static_assert(GPUIMG_META_MAX_ICC == (size_t)1 << 20, "GPUIMG_META_ICC_TOO_LARGE says 1 MiB");
#define TIFF_EXIF_MAX ((size_t)1 << 20) /* gpuimg_tiff_exif()'s reason says 1 MiB */

/* The blocks of one file, pointing into its bytes, before any is checked. */
typedef struct {
  const uint8_t *exif;
  size_t exif_size;
  const char *exif_bad;     /* a PNG eXIf whose CRC is wrong */
  const uint8_t *part[255]; /* JPEG: each APP2 marker's share of the profile */
  size_t part_size[255];
  int parts;           /* how many markers the first one said there are */
  const uint8_t *iccp; /* PNG: the iCCP chunk's data */
  size_t iccp_size;
  const char *icc_bad;
  int components;         /* JPEG: its frame's (SOFn), 0 before it */
  int sixteen;            /* PNG: its IHDR says 16 bits a sample */
  const uint8_t *icc_raw; /* WebP: the ICCP chunk's payload, the profile as it is */
  size_t icc_raw_size;
} found_t;

static uint32_t be32(const uint8_t *p)
{
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put_be32(uint8_t *p, uint32_t v)
{
  p[0] = (uint8_t)(v >> 24), p[1] = (uint8_t)(v >> 16), p[2] = (uint8_t)(v >> 8), p[3] = (uint8_t)v;
}

/* Appends one reason to a warning, "; " between reasons; what does not fit is cut. */
static void warn(char *warning, size_t size, const char *fmt, ...)
{
  size_t used = strlen(warning);
  if (used && used + 2 < size)
    strcpy(warning + used, "; "), used += 2;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(warning + used, size - used, fmt, ap);
  va_end(ap);
}

static int out_of_memory(const char *what)
{
  gpuimg_error_set(GPUIMG_EXIT_FAILURE, what, "out of memory");
  return -1;
}

/* ---- Reading ------------------------------------------------------------------------ */

/* One APP2 marker of the profile: number seq of count. */
static void icc_part(found_t *f, int seq, int count, const uint8_t *d, size_t n)
{
  if (f->icc_bad)
    return;
  if (seq < 1 || seq > count)
    f->icc_bad = "an APP2 marker numbered outside its count";
  else if (f->parts && f->parts != count)
    f->icc_bad = "APP2 markers that disagree on their count";
  else if (f->part[seq - 1])
    f->icc_bad = "an APP2 marker repeated";
  else
    f->parts = count, f->part[seq - 1] = d, f->part_size[seq - 1] = n;
}

/* JPEG: the markers before the scan. A length past the file ends the walk (the decoder says
 * what is wrong with the file). */
static void jpeg_find(const uint8_t *b, size_t size, found_t *f)
{
  gpuimg_jpeg_segment_t s;
  for (size_t pos = 2; gpuimg_jpeg_segment(b, size, &pos, &s);) {
    int m = s.marker;
    if (m == 0xd9 || m == 0xda) /* EOI, SOS: the metadata comes before */
      return;
    if (!s.body) /* markers without a length */
      continue;
    const uint8_t *d = s.body;
    size_t n = s.size;
    if (m == 0xe1 && !f->exif && n >= 6 && !memcmp(d, EXIF_HEAD, 6))
      f->exif = d + 6, f->exif_size = n - 6;
    if (m == 0xe2 && n >= ICC_HEAD && !memcmp(d, ICC_TAG, 12))
      icc_part(f, d[12], d[13], d + ICC_HEAD, n - ICC_HEAD);
    if (m >= 0xc0 && m <= 0xcf && m != 0xc4 && m != 0xc8 && m != 0xcc && n >= 6 && !f->components)
      f->components = d[5];
  }
}

/* PNG: the chunks before IDAT, the first eXIf (some writers start it with "Exif\0\0") and
 * the first iCCP, each with its CRC checked. */
static void png_find(const uint8_t *b, size_t size, found_t *f)
{
  size_t pos = 8;
  while (pos + 12 <= size) {
    size_t len = be32(b + pos);
    const uint8_t *type = b + pos + 4, *d = b + pos + 8;
    if (len > 0x7fffffff || len > size - pos - 12 || !memcmp(type, "IDAT", 4) ||
        !memcmp(type, "IEND", 4))
      return;
    if (pos == 8 && len == 13 && !memcmp(type, "IHDR", 4))
      f->sixteen = d[8] == 16;
    int is_exif = !memcmp(type, "eXIf", 4) && !f->exif && !f->exif_bad;
    int is_icc = !memcmp(type, "iCCP", 4) && !f->iccp && !f->icc_bad;
    int crc_ok = (is_exif || is_icc) && crc32(0, type, (uInt)len + 4) == be32(d + len);
    if (is_exif && !crc_ok) {
      f->exif_bad = "its chunk's CRC is wrong";
    } else if (is_exif) {
      size_t skip = len >= 6 && !memcmp(d, EXIF_HEAD, 6) ? 6 : 0;
      f->exif = d + skip, f->exif_size = len - skip;
    }
    if (is_icc && !crc_ok)
      f->icc_bad = "its chunk's CRC is wrong";
    else if (is_icc)
      f->iccp = d, f->iccp_size = len;
    pos += 12 + len;
  }
}

/* WebP: the first ICCP and EXIF chunks; an animation is said (its first frame is read). */
static void webp_find(const uint8_t *b, size_t size, gpuimg_meta_t *meta, found_t *f)
{
  gpuimg_webp_chunks_t c;
  gpuimg_webp_chunks(b, size, &c);
  f->exif = c.exif, f->exif_size = c.exif_size;
  f->icc_raw = c.icc, f->icc_raw_size = c.icc_size;
  if (c.animated)
    warn(meta->warning, sizeof meta->warning, "animated WebP: only its first frame is read");
}

/* Inflates z[0..n-1] into out, at most GPUIMG_META_MAX_ICC bytes (exactly that many is
 * allowed: at the cap, one spare byte of room tells whether more would come): NULL, or why it
 * could not (*oom set when memory ran out). */
static const char *inflate_capped(const uint8_t *z, size_t n, gpuimg_buf_t *out, int *oom)
{
  z_stream s;
  memset(&s, 0, sizeof s);
  if (inflateInit(&s) != Z_OK) {
    *oom = 1;
    return NULL;
  }
  s.next_in = (Bytef *)z;
  s.avail_in = (uInt)n;
  int rc = Z_OK;
  const char *why = NULL;
  while (rc == Z_OK && !why) {
    size_t room = GPUIMG_META_MAX_ICC - out->size;
    room = room < 65536 ? room : 65536;
    uint8_t spare;
    if (room && gpuimg_buf_reserve(out, room) < 0) {
      *oom = 1, why = "out of memory";
      break;
    }
    s.next_out = room ? out->data + out->size : &spare;
    s.avail_out = room ? (uInt)room : 1;
    rc = inflate(&s, Z_NO_FLUSH);
    if (!room && !s.avail_out)
      why = GPUIMG_META_ICC_TOO_LARGE;
    else if (room)
      out->size += room - s.avail_out;
  }
  inflateEnd(&s);
  return why ? why : rc == Z_STREAM_END ? NULL : "its deflate stream is broken";
}

/* The profile of a PNG iCCP chunk: a name of 1..79 bytes, NUL, method 0, a zlib stream. */
static const char *iccp_take(const uint8_t *d, size_t n, gpuimg_meta_t *meta, int *oom)
{
  const uint8_t *nul = memchr(d, 0, n < 80 ? n : 80);
  if (!nul || nul == d || (size_t)(nul - d) + 2 > n || nul[1] != 0)
    return "its chunk has no valid name and method";
  memcpy(meta->icc_name, d, (size_t)(nul - d) + 1);
  size_t head = (size_t)(nul - d) + 2;
  return inflate_capped(d + head, n - head, &meta->icc, oom);
}

/* The profile of a JPEG's APP2 markers, joined in their order. */
static const char *icc_join(const found_t *f, gpuimg_buf_t *icc, int *oom)
{
  size_t total = 0;
  for (int k = 0; k < f->parts; k++) {
    if (!f->part[k])
      return "an APP2 marker of it is missing";
    total += f->part_size[k];
  }
  if (total > GPUIMG_META_MAX_ICC)
    return GPUIMG_META_ICC_TOO_LARGE;
  for (int k = 0; k < f->parts; k++) {
    if (gpuimg_buf_append(icc, f->part[k], f->part_size[k]) < 0) {
      *oom = 1;
      return "out of memory";
    }
  }
  return NULL;
}

/* A profile's header: its size as stated, the "acsp" signature. */
static const char *icc_check(const gpuimg_buf_t *icc)
{
  if (!icc->size)
    return "it is empty";
  if (icc->size < 128 || be32(icc->data) != icc->size || memcmp(icc->data + 36, "acsp", 4))
    return "it has no valid profile header";
  return NULL;
}

static int take_icc(const found_t *f, gpuimg_meta_t *meta, const char *what)
{
  int oom = 0;
  const char *why = f->icc_bad;
  if (!why && f->iccp)
    why = iccp_take(f->iccp, f->iccp_size, meta, &oom);
  else if (!why && f->icc_raw && f->icc_raw_size > GPUIMG_META_MAX_ICC)
    why = GPUIMG_META_ICC_TOO_LARGE;
  else if (!why && f->icc_raw && gpuimg_buf_append(&meta->icc, f->icc_raw, f->icc_raw_size) < 0)
    oom = 1;
  else if (!why && f->parts)
    why = icc_join(f, &meta->icc, &oom);
  if (oom)
    return out_of_memory(what);
  if (!why && (f->iccp || f->parts || f->icc_raw))
    why = icc_check(&meta->icc);
  if (why) {
    warn(meta->warning, sizeof meta->warning, "ICC profile ignored: %s", why);
    gpuimg_buf_free(&meta->icc);
    meta->icc_name[0] = 0;
  }
  return 0;
}

static int take_exif(const found_t *f, gpuimg_meta_t *meta, const char *what)
{
  const char *why = f->exif_bad;
  if (!why && f->exif)
    why = gpuimg_exif_check(f->exif, f->exif_size, &meta->tags);
  if (why) {
    warn(meta->warning, sizeof meta->warning, "EXIF block ignored: %s", why);
    return 0;
  }
  if (f->exif && gpuimg_buf_append(&meta->exif, f->exif, f->exif_size) < 0)
    return out_of_memory(what);
  return 0;
}

/* A TIFF file's Exif IFD as an EXIF block (gpuimg_tiff_exif()), its tags found in it. */
static int tiff_exif(const uint8_t *bytes, size_t size, const char *what, gpuimg_meta_t *meta)
{
  const char *why;
  gpuimg_exif_tags_t ifd0 = meta->tags;
  if (gpuimg_tiff_exif(bytes, size, TIFF_EXIF_MAX, &meta->exif, &why) < 0)
    return out_of_memory(what);
  if (why)
    warn(meta->warning, sizeof meta->warning, "EXIF directory ignored: %s", why);
  if (meta->exif.size && gpuimg_exif_check(meta->exif.data, meta->exif.size, &meta->tags)) {
    gpuimg_buf_free(&meta->exif); /* not so: what gpuimg_tiff_exif() makes is well formed */
    meta->tags = ifd0;
  }
  return 0;
}

/* A TIFF file: the Orientation, the profile of its IFD0 (a whole file is one TIFF block), its
 * Exif IFD as an EXIF block, and notices that only the first page is read and that 16-bit
 * samples become 8-bit. */
static int tiff_read(const uint8_t *bytes, size_t size, int want_icc, const char *what,
                     gpuimg_meta_t *meta)
{
  gpuimg_tiff_ifd0_t ifd0;
  if (gpuimg_tiff_ifd0(bytes, size, &meta->tags, &ifd0))
    return 0; /* the decoder says what is wrong; a BigTIFF carries nothing */
  if (ifd0.more_pages)
    warn(meta->warning, sizeof meta->warning, "multi-page TIFF: only its first page is read");
  if (ifd0.bits == 16)
    warn(meta->warning, sizeof meta->warning, GPUIMG_META_16BIT);
  if (tiff_exif(bytes, size, what, meta) < 0)
    return -1;
  if (!want_icc || !ifd0.icc_size)
    return 0;
  if (ifd0.icc_size > GPUIMG_META_MAX_ICC) {
    warn(meta->warning, sizeof meta->warning, "ICC profile ignored: %s", GPUIMG_META_ICC_TOO_LARGE);
    return 0;
  }
  if (gpuimg_buf_append(&meta->icc, bytes + ifd0.icc_at, ifd0.icc_size) < 0)
    return out_of_memory(what);
  const char *why = icc_check(&meta->icc);
  if (why) {
    warn(meta->warning, sizeof meta->warning, "ICC profile ignored: %s", why);
    gpuimg_buf_free(&meta->icc);
  }
  return 0;
}

/* A format whose container a codec reads (HEIF): its codec's profile and EXIF. The pixels it
 * decodes are upright already (HEIF's irot and imir), so the EXIF's Orientation is applied no
 * more: it becomes 1. */
static int codec_read(const gpuimg_codec_t *c, const uint8_t *bytes, size_t size, int want_icc,
                      const char *what, gpuimg_meta_t *meta)
{
  gpuimg_buf_t icc = {0};
  found_t f;
  memset(&f, 0, sizeof f);
  if (c->metadata(bytes, size, GPUIMG_META_MAX_ICC, &icc, &meta->exif) < 0) {
    gpuimg_buf_free(&icc);
    return out_of_memory(what);
  }
  gpuimg_buf_t exif = meta->exif;
  memset(&meta->exif, 0, sizeof meta->exif);
  f.exif = exif.data, f.exif_size = exif.size;
  f.icc_raw = icc.data, f.icc_raw_size = icc.size;
  int rc = take_exif(&f, meta, what) < 0 || (want_icc && take_icc(&f, meta, what) < 0) ? -1 : 0;
  gpuimg_buf_free(&icc);
  gpuimg_buf_free(&exif);
  gpuimg_meta_upright(meta);
  return rc;
}

int gpuimg_meta_read(const uint8_t *bytes, size_t size, int want_icc, const char *what,
                     gpuimg_meta_t *meta)
{
  const gpuimg_codec_t *c = gpuimg_codec_decoder(GPUIMG_CODEC_AUTO, bytes, size);
  if (c->metadata) {
    meta->tags.orientation = 1;
    return codec_read(c, bytes, size, want_icc, what, meta);
  }
  found_t f;
  memset(&f, 0, sizeof f);
  meta->tags.orientation = 1;
  if (gpuimg_format_of(bytes, size) == GPUIMG_FORMAT_TIFF)
    return tiff_read(bytes, size, want_icc, what, meta);
  if (gpuimg_codec_is_jpeg(bytes, size))
    jpeg_find(bytes, size, &f);
  else if (gpuimg_codec_is_png(bytes, size))
    png_find(bytes, size, &f);
  else if (gpuimg_format_of(bytes, size) == GPUIMG_FORMAT_WEBP)
    webp_find(bytes, size, meta, &f);
  if (f.sixteen)
    warn(meta->warning, sizeof meta->warning, GPUIMG_META_16BIT);
  return take_exif(&f, meta, what) < 0 || (want_icc && take_icc(&f, meta, what) < 0) ? -1 : 0;
}

void gpuimg_meta_upright(gpuimg_meta_t *meta)
{
  if (meta->exif.size)
    gpuimg_exif_set_orientation(meta->exif.data, &meta->tags, 1);
  meta->tags.orientation = 1;
}

void gpuimg_meta_set_size(gpuimg_meta_t *meta, int width, int height)
{
  if (meta->exif.size)
    gpuimg_exif_set_size(meta->exif.data, &meta->tags, width, height);
}

void gpuimg_meta_free(gpuimg_meta_t *meta)
{
  gpuimg_buf_free(&meta->icc);
  gpuimg_buf_free(&meta->exif);
}

/* ---- Writing ------------------------------------------------------------------------ */

/* One JPEG marker segment: head[0..hn-1] then d[0..n-1], hn + n <= SEGMENT_MAX. */
static int segment(gpuimg_buf_t *out, uint8_t marker, const void *head, size_t hn, const uint8_t *d,
                   size_t n)
{
  size_t len = hn + n + 2;
  uint8_t m[4] = {0xff, marker, (uint8_t)(len >> 8), (uint8_t)len};
  return gpuimg_buf_append(out, m, 4) < 0 || gpuimg_buf_append(out, head, hn) < 0 ||
                 gpuimg_buf_append(out, d, n) < 0
             ? -1
             : 0;
}

/* One PNG chunk: its type, head[0..hn-1] then d[0..n-1], and its CRC. */
static int chunk(gpuimg_buf_t *out, const char *type, const void *head, size_t hn, const uint8_t *d,
                 size_t n)
{
  uint8_t len[4], crc[4];
  put_be32(len, (uint32_t)(hn + n));
  uLong c = crc32(crc32(crc32(0, (const Bytef *)type, 4), head, (uInt)hn), d, (uInt)n);
  put_be32(crc, (uint32_t)c);
  return gpuimg_buf_append(out, len, 4) < 0 || gpuimg_buf_append(out, type, 4) < 0 ||
                 gpuimg_buf_append(out, head, hn) < 0 || gpuimg_buf_append(out, d, n) < 0 ||
                 gpuimg_buf_append(out, crc, 4) < 0
             ? -1
             : 0;
}

/* The JPEG's APP1 Exif and APP2 profile markers into seg; returns what they carry, or -1. */
static int jpeg_blocks(gpuimg_buf_t *seg, const gpuimg_meta_t *meta, int icc, char *warning,
                       size_t wsize)
{
  int carried = 0;
  const gpuimg_buf_t *x = &meta->exif, *p = &meta->icc;
  if (x->size > EXIF_MAX) {
    warn(warning, wsize, "EXIF block of %zu bytes left out: over one JPEG APP1 segment", x->size);
  } else if (x->size) {
    if (segment(seg, 0xe1, EXIF_HEAD, 6, x->data, x->size) < 0)
      return -1;
    carried |= GPUIMG_META_EXIF;
  }
  size_t count = (p->size + ICC_PER_MARKER - 1) / ICC_PER_MARKER;
  if (icc && count > 255) {
    warn(warning, wsize, "ICC profile of %zu bytes left out: over 255 JPEG APP2 markers", p->size);
    return carried;
  }
  for (size_t k = 0; icc && k < count; k++) {
    uint8_t head[ICC_HEAD];
    memcpy(head, ICC_TAG, 12);
    head[12] = (uint8_t)(k + 1), head[13] = (uint8_t)count;
    size_t n = k + 1 < count ? ICC_PER_MARKER : p->size - k * ICC_PER_MARKER;
    if (segment(seg, 0xe2, head, ICC_HEAD, p->data + k * ICC_PER_MARKER, n) < 0)
      return -1;
    carried |= GPUIMG_META_ICC;
  }
  return carried;
}

/* The PNG's iCCP (the profile deflated) and eXIf chunks into seg; returns what they carry. */
static int png_blocks(gpuimg_buf_t *seg, const gpuimg_meta_t *meta, int icc)
{
  int carried = 0;
  if (icc) {
    gpuimg_buf_t z = {0};
    uLongf zn = compressBound((uLong)meta->icc.size);
    const char *name = meta->icc_name[0] ? meta->icc_name : ICC_DEFAULT_NAME;
    uint8_t head[81] = {0}; /* the name, its NUL, compression method 0 */
    size_t hn = strlen(name);
    memcpy(head, name, hn);
    int rc = gpuimg_buf_reserve(&z, zn) < 0 ||
                     compress2(z.data, &zn, meta->icc.data, (uLong)meta->icc.size, 9) != Z_OK ||
                     chunk(seg, "iCCP", head, hn + 2, z.data, zn) < 0
                 ? -1
                 : 0;
    gpuimg_buf_free(&z);
    if (rc < 0)
      return -1;
    carried |= GPUIMG_META_ICC;
  }
  if (meta->exif.size) {
    if (chunk(seg, "eXIf", "", 0, meta->exif.data, meta->exif.size) < 0)
      return -1;
    carried |= GPUIMG_META_EXIF;
  }
  return carried;
}

/* Where the blocks go in enc: after SOI and a JFIF APP0, or after IHDR; 0: nowhere. */
static size_t insert_at(const gpuimg_buf_t *enc, gpuimg_format_t fmt)
{
  const uint8_t *b = enc->data;
  if (fmt == GPUIMG_FORMAT_PNG)
    return enc->size >= PNG_IHDR_END && gpuimg_codec_is_png(b, enc->size) &&
                   !memcmp(b + 8, "\0\0\0\x0dIHDR", 8)
               ? PNG_IHDR_END
               : 0;
  if (fmt != GPUIMG_FORMAT_JPEG || !gpuimg_codec_is_jpeg(b, enc->size))
    return 0;
  size_t len = enc->size >= 11 && b[3] == 0xe0 ? (size_t)b[4] << 8 | b[5] : 0;
  return len >= 7 && len + 4 <= enc->size && !memcmp(b + 6, "JFIF\0", 5) ? len + 4 : 2;
}

/* Whether a profile's colour space is gray ("GRAY") or RGB ("RGB "), as gray says. */
static int icc_space_is(const gpuimg_buf_t *icc, int gray)
{
  return icc->size >= 20 && !memcmp(icc->data + 16, gray ? "GRAY" : "RGB ", 4);
}

/* Whether the profile's colour space fits the encoded image: "GRAY" a PNG of colour type 0
 * or 4 or a JPEG of one component, "RGB " any other. */
static int icc_fits(const gpuimg_buf_t *icc, const gpuimg_buf_t *enc, gpuimg_format_t fmt)
{
  int gray;
  if (fmt == GPUIMG_FORMAT_PNG) {
    gray = enc->data[25] == 0 || enc->data[25] == 4; /* IHDR's colour type */
  } else {
    found_t f;
    memset(&f, 0, sizeof f);
    jpeg_find(enc->data, enc->size, &f);
    gray = f.components == 1;
  }
  return icc_space_is(icc, gray);
}

/* A TIFF takes the profile into its first directory, and the EXIF's Orientation when it is
 * kept (--no-autorotate) as its own; not the EXIF (TIFF keeps it in a directory of its own,
 * which is not written). */
static int tiff_insert(gpuimg_buf_t *enc, const gpuimg_meta_t *meta, const char *what)
{
  int gray;
  gpuimg_tiff_set_orientation(enc, meta->tags.orientation);
  if (!meta->icc.size || gpuimg_tiff_add_icc(enc, NULL, 0, 1, &gray) != 1 ||
      !icc_space_is(&meta->icc, gray))
    return 0;
  if (gpuimg_tiff_add_icc(enc, meta->icc.data, meta->icc.size, 0, &gray) < 0)
    return out_of_memory(what);
  return GPUIMG_META_ICC;
}

/* A WebP takes both, in its extended form (its colour is RGB: a gray profile is left out). */
static int webp_insert(gpuimg_buf_t *enc, const gpuimg_meta_t *meta, const char *what)
{
  int icc = meta->icc.size && icc_space_is(&meta->icc, 0), exif = meta->exif.size != 0;
  int rc = gpuimg_webp_add_chunks(enc, icc ? meta->icc.data : NULL, meta->icc.size,
                                  exif ? meta->exif.data : NULL, meta->exif.size);
  if (rc < 0)
    return out_of_memory(what);
  return rc ? (icc ? GPUIMG_META_ICC : 0) | (exif ? GPUIMG_META_EXIF : 0) : 0;
}

int gpuimg_meta_give(gpuimg_format_t fmt, gpuimg_meta_t *meta, gpuimg_encode_opts_t *opts)
{
  if (fmt != GPUIMG_FORMAT_AVIF)
    return 0;
  int icc = meta->icc.size && icc_space_is(&meta->icc, 0), exif = meta->exif.size != 0;
  opts->icc = icc ? &meta->icc : NULL;
  opts->exif = exif ? &meta->exif : NULL;
  opts->orientation = meta->tags.orientation;
  gpuimg_meta_upright(meta); /* the file's irot and imir say it: the EXIF says 1 */
  return (icc ? GPUIMG_META_ICC : 0) | (exif ? GPUIMG_META_EXIF : 0);
}

int gpuimg_meta_insert(gpuimg_buf_t *enc, gpuimg_format_t fmt, const gpuimg_meta_t *meta,
                       const char *what, char *warning, size_t warning_size)
{
  if (fmt == GPUIMG_FORMAT_TIFF)
    return tiff_insert(enc, meta, what);
  if (fmt == GPUIMG_FORMAT_WEBP)
    return webp_insert(enc, meta, what);
  size_t at = insert_at(enc, fmt);
  if (!at || (!meta->icc.size && !meta->exif.size))
    return 0;
  int icc = icc_fits(&meta->icc, enc, fmt);
  gpuimg_buf_t seg = {0};
  int carried = fmt == GPUIMG_FORMAT_PNG ? png_blocks(&seg, meta, icc)
                                         : jpeg_blocks(&seg, meta, icc, warning, warning_size);
  if (carried < 0 || gpuimg_buf_reserve(enc, seg.size) < 0) {
    gpuimg_buf_free(&seg);
    return out_of_memory(what);
  }
  if (!seg.size) /* nothing fitted */
    return carried;
  memmove(enc->data + at + seg.size, enc->data + at, enc->size - at);
  memcpy(enc->data + at, seg.data, seg.size);
  enc->size += seg.size;
  gpuimg_buf_free(&seg);
  return carried;
}
