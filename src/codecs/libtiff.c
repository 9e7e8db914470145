/* libtiff.c: the libtiff TIFF codec: a file's first page decoded with its exact samples (gray,
 * gray+alpha, RGB, RGBA and palette of 1 to 16 bits, strips or tiles, any compression libtiff
 * has), other colour spaces through libtiff's RGBA reader; encoded deflate, LZW or plain. */
#include "codec.h"

#ifdef GPUIMG_HAVE_LIBTIFF
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tiffio.h>

/* The most bytes libtiff or gpuimg may allocate at once for one image, per pixel of
 * --max-pixels (as for PNG and JPEG): a tile, a strip's coded bytes, a table; the floor
 * covers small images' tables. Strips are read row by row, so only a tile as large as the
 * image near the limit, of more than 4 bytes a pixel, is refused by it. */
#define TIFF_BYTES_PER_PIXEL 4
#define TIFF_ALLOC_FLOOR ((uint64_t)16 << 20)
/* The samples per pixel read: the colour ones and an alpha, and extra samples after them
 * (ignored) up to this count. */
#define TIFF_MAX_SAMPLES 16

/* The name libtiff knows a file by (its messages start with it). */
#define TIFF_NAME "TIFF"

/* A file in memory as libtiff's client: read from bytes, or written into out. */
typedef struct {
  const uint8_t *bytes;
  gpuimg_buf_t *out;
  uint64_t size, pos;
  int oom;
  char error[200]; /* libtiff's first error message, "" when none */
} tiff_io_t;

static tmsize_t io_read(thandle_t h, void *buf, tmsize_t n)
{
  tiff_io_t *io = h;
  if (!io->bytes || n < 0 || io->pos >= io->size)
    return 0;
  uint64_t k = io->size - io->pos < (uint64_t)n ? io->size - io->pos : (uint64_t)n;
  memcpy(buf, io->bytes + io->pos, (size_t)k);
  io->pos += k;
  return (tmsize_t)k;
}

static tmsize_t io_write(thandle_t h, void *buf, tmsize_t n)
{
  tiff_io_t *io = h;
  gpuimg_buf_t *out = io->out;
  if (!out || n < 0 || io->pos > SIZE_MAX - (uint64_t)n)
    return -1;
  size_t end = (size_t)io->pos + (size_t)n;
  if (end > out->size && gpuimg_buf_reserve(out, end - out->size) < 0) {
    io->oom = 1;
    return -1;
  }
  if (io->pos > out->size) /* a seek past the end: the gap holds zeros */
    memset(out->data + out->size, 0, (size_t)io->pos - out->size);
  memcpy(out->data + io->pos, buf, (size_t)n);
  out->size = end > out->size ? end : out->size;
  io->size = out->size;
  io->pos = end;
  return n;
}

static toff_t io_seek(thandle_t h, toff_t off, int whence)
{
  tiff_io_t *io = h;
  uint64_t base = whence == SEEK_CUR ? io->pos : whence == SEEK_END ? io->size : 0;
  if (off > (toff_t)INT64_MAX ? (uint64_t) - (int64_t)off > base : off > UINT64_MAX / 2 - base)
    return (toff_t)-1; /* before the start, or past any file */
  io->pos = base + off;
  return io->pos;
}

static int io_close(thandle_t h)
{
  (void)h;
  return 0;
}

static toff_t io_size(thandle_t h)
{
  return ((tiff_io_t *)h)->size;
}

static int io_map(thandle_t h, void **base, toff_t *size)
{
  (void)h, (void)base, (void)size;
  return 0; /* never mapped: libtiff reads through io_read */
}

static void io_unmap(thandle_t h, void *base, toff_t size)
{
  (void)h, (void)base, (void)size;
}

/* libtiff's errors: the first kept for gpuimg's message, never printed. Warnings (unknown
 * tags, a nonstandard tile size) are dropped. Returning 1 keeps libtiff's global handlers,
 * which print to stderr, from running. */
static int on_error(TIFF *tif, void *user, const char *module, const char *fmt, va_list ap)
{
  tiff_io_t *io = user;
  (void)tif, (void)module;
  if (io->error[0])
    return 1;
  vsnprintf(io->error, sizeof io->error, fmt, ap);
  size_t skip = strlen(TIFF_NAME ": "); /* the name libtiff puts before some messages */
  if (!strncmp(io->error, TIFF_NAME ": ", skip))
    memmove(io->error, io->error + skip, strlen(io->error + skip) + 1);
  return 1;
}

static int on_warning(TIFF *tif, void *user, const char *module, const char *fmt, va_list ap)
{
  (void)tif, (void)user, (void)module, (void)fmt, (void)ap;
  return 1;
}

/* Opens io as a TIFF in mode ("r" or "w"), no allocation of libtiff's above max_alloc. */
static TIFF *tiff_open(tiff_io_t *io, const char *mode, uint64_t max_alloc)
{
  TIFFOpenOptions *opts = TIFFOpenOptionsAlloc();
  if (!opts)
    return NULL;
  TIFFOpenOptionsSetMaxSingleMemAlloc(opts, (tmsize_t)max_alloc);
  TIFFOpenOptionsSetErrorHandlerExtR(opts, on_error, io);
  TIFFOpenOptionsSetWarningHandlerExtR(opts, on_warning, io);
  TIFF *tif = TIFFClientOpenExt(TIFF_NAME, mode, io, io_read, io_write, io_seek, io_close, io_size,
                                io_map, io_unmap, opts);
  TIFFOpenOptionsFree(opts);
  return tif;
}

/* ---- Decoding -------------------------------------------------------------------------- */

/* How the samples of the page become gpuimg's channels. */
typedef struct {
  uint32_t w, h;
  int bits;               /* per sample: 1, 2, 4, 8 or 16 */
  int spp;                /* samples per pixel in the file */
  int planes;             /* 1: contiguous; spp: one plane per sample */
  int colour;             /* the colour samples: 1 (gray, palette) or 3 (RGB) */
  int alpha;              /* 1: the sample after the colour ones is alpha */
  int invert;             /* MinIsWhite: gray 0 is white */
  int extras;             /* the ExtraSamples declared */
  const uint16_t *map[3]; /* a palette's red, green and blue (NULL: no palette) */
  int map8;               /* the palette's values are 8-bit (old writers), not 16-bit */
  int channels;           /* the output's: colour (3 for a palette) + alpha */
  uint8_t *px;            /* the output's pixels */
} page_t;

static int tiff_fail(const char *what, const tiff_io_t *io, const char *reason)
{
  if (io && io->oom) {
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, what, "out of memory");
    return -1;
  }
  if (io && io->error[0])
    gpuimg_error_set(GPUIMG_EXIT_INPUT, what, "cannot decode TIFF: %s (%s)", reason, io->error);
  else
    gpuimg_error_set(GPUIMG_EXIT_INPUT, what, "cannot decode TIFF: %s", reason);
  return -1;
}

/* Sample i of a row of packed samples of the page's depth. */
static inline uint32_t sample_at(const uint8_t *row, size_t i, int bits)
{
  if (bits == 8)
    return row[i];
  if (bits == 16)
    return ((const uint16_t *)(const void *)row)[i];
  size_t bit = i * (size_t)bits;
  return (uint32_t)(row[bit >> 3] >> (8 - bits - (int)(bit & 7))) & ((1u << bits) - 1);
}

/* A sample of the page's depth as 8 bits (the full range of its depth onto 0..255). */
static inline uint8_t to8(uint32_t v, int bits)
{
  if (bits == 16)
    return gpuimg_reduce16(v);
  if (bits == 8)
    return (uint8_t)v;
  return (uint8_t)(v * 255u / ((1u << bits) - 1));
}

/* A palette entry's channel k as 8 bits. */
static inline uint8_t from_map(const page_t *pg, int k, uint32_t index)
{
  uint32_t v = pg->map[k][index];
  return pg->map8 ? (uint8_t)v : gpuimg_reduce16(v);
}

/* Writes n pixels of image row y from x0 on, from row: packed samples, stride samples a pixel,
 * sample s of the file (all of them when stride is spp, one plane's when it is 1). */
static void put_row(const page_t *pg, const uint8_t *row, uint32_t y, uint32_t x0, uint32_t n,
                    int stride, int s)
{
  size_t c = (size_t)pg->channels;
  uint8_t *d = pg->px + ((size_t)y * pg->w + x0) * c;
  if (pg->bits == 8 && stride == (int)c && !pg->map[0] && !pg->invert) {
    memcpy(d, row, (size_t)n * c); /* the common case: the file's samples are the pixels */
    return;
  }
  int first = pg->planes > 1 ? s : 0, last = pg->planes > 1 ? s : pg->colour + pg->alpha - 1;
  for (uint32_t i = 0; i < n; i++, d += c) {
    for (int k = first; k <= last; k++) {
      uint32_t v = sample_at(row, (size_t)i * (size_t)stride + (size_t)(k - first), pg->bits);
      if (k == pg->colour) { /* alpha */
        d[c - 1] = to8(v, pg->bits);
      } else if (pg->map[0]) {
        for (int m = 0; m < 3; m++)
          d[m] = from_map(pg, m, v);
      } else {
        uint8_t b = to8(v, pg->bits);
        d[k] = pg->invert ? (uint8_t)(255 - b) : b;
      }
    }
  }
}

/* Whether the palette's values all fit 8 bits: written by old software as 0..255. */
static int palette_is_8bit(const page_t *pg)
{
  for (uint32_t i = 0; i < 1u << pg->bits; i++)
    if (pg->map[0][i] > 255 || pg->map[1][i] > 255 || pg->map[2][i] > 255)
      return 0;
  return 1;
}

/* The page's layout from its tags: 0 when its samples are read exactly; 1 when only libtiff's
 * RGBA reader takes it (another colour space, YCbCr not JPEG-coded); -1 with the error set. */
static int page_layout(TIFF *tif, page_t *pg, const char *what, const tiff_io_t *io)
{
  uint16_t bits = 1, spp = 1, planar = PLANARCONFIG_CONTIG, photometric, format = SAMPLEFORMAT_UINT;
  uint16_t compression = COMPRESSION_NONE, extras = 0, *extra_types = NULL;
  TIFFGetFieldDefaulted(tif, TIFFTAG_BITSPERSAMPLE, &bits);
  TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLESPERPIXEL, &spp);
  TIFFGetFieldDefaulted(tif, TIFFTAG_PLANARCONFIG, &planar);
  TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLEFORMAT, &format);
  TIFFGetFieldDefaulted(tif, TIFFTAG_COMPRESSION, &compression);
  TIFFGetFieldDefaulted(tif, TIFFTAG_EXTRASAMPLES, &extras, &extra_types);
  if (!TIFFGetField(tif, TIFFTAG_PHOTOMETRIC, &photometric))
    photometric = spp >= 3 ? PHOTOMETRIC_RGB : PHOTOMETRIC_MINISBLACK;
  if (spp < 1 || spp > TIFF_MAX_SAMPLES)
    return tiff_fail(what, io, "unsupported number of samples per pixel");
  if (format != SAMPLEFORMAT_UINT && format != SAMPLEFORMAT_VOID)
    return tiff_fail(what, io, "floating-point or signed samples are not supported");
  if (photometric == PHOTOMETRIC_YCBCR && compression == COMPRESSION_JPEG &&
      planar == PLANARCONFIG_CONTIG) {
    TIFFSetField(tif, TIFFTAG_JPEGCOLORMODE, JPEGCOLORMODE_RGB); /* libjpeg makes it RGB */
    photometric = PHOTOMETRIC_RGB;
  }
  int gray = photometric == PHOTOMETRIC_MINISBLACK || photometric == PHOTOMETRIC_MINISWHITE;
  int palette = photometric == PHOTOMETRIC_PALETTE;
  pg->bits = bits;
  pg->spp = spp;
  pg->extras = extras;
  pg->planes = planar == PLANARCONFIG_SEPARATE ? spp : 1;
  pg->colour = photometric == PHOTOMETRIC_RGB ? 3 : 1;
  pg->alpha = spp > pg->colour; /* the first sample after the colour ones, whatever its kind */
  pg->invert = photometric == PHOTOMETRIC_MINISWHITE;
  pg->channels = (palette ? 3 : pg->colour) + pg->alpha;
  int packed = bits < 8 && (bits & (bits - 1)) == 0 && spp == 1; /* 1, 2 or 4 bits, gray */
  int exact = (gray || palette || photometric == PHOTOMETRIC_RGB) && spp >= pg->colour &&
              (bits == 8 || bits == 16 || packed);
  if (palette)
    exact = exact && spp == 1 && bits <= 8 &&
            TIFFGetField(tif, TIFFTAG_COLORMAP, &pg->map[0], &pg->map[1], &pg->map[2]);
  if (exact && palette)
    pg->map8 = palette_is_8bit(pg);
  return exact ? 0 : 1;
}

/* The largest allocation a decode of the page may make. */
static uint64_t alloc_budget(uint64_t max_pixels)
{
  return max_pixels * TIFF_BYTES_PER_PIXEL + TIFF_ALLOC_FLOOR;
}

/* The planes read: all the samples' (contiguous: one), or those of the colour and alpha. */
static int used_planes(const page_t *pg)
{
  return pg->planes > 1 ? pg->colour + pg->alpha : 1;
}

/* The strips of the page, row by row: libtiff holds a strip's coded bytes (no more than the
 * file has), never the whole strip decoded, which may be as large as the image. */
static int read_strips(TIFF *tif, const page_t *pg, uint8_t *buf, const char *what,
                       const tiff_io_t *io)
{
  int stride = pg->planes > 1 ? 1 : pg->spp;
  for (int s = 0; s < used_planes(pg); s++)
    for (uint32_t y = 0; y < pg->h; y++) {
      if (TIFFReadScanline(tif, buf, y, (uint16_t)s) < 0)
        return tiff_fail(what, io, "truncated or damaged image data");
      put_row(pg, buf, y, 0, pg->w, stride, s);
    }
  return 0;
}

/* The tiles of the page, each read whole into buf; the parts inside the image put. */
static int read_tiles(TIFF *tif, const page_t *pg, uint8_t *buf, const char *what,
                      const tiff_io_t *io)
{
  uint32_t tw = 0, th = 0;
  TIFFGetField(tif, TIFFTAG_TILEWIDTH, &tw);
  TIFFGetField(tif, TIFFTAG_TILELENGTH, &th);
  tmsize_t tile_bytes = TIFFTileSize(tif), row_bytes = TIFFTileRowSize(tif);
  if (tw == 0 || th == 0 || row_bytes <= 0 || tile_bytes < (tmsize_t)th * row_bytes)
    return tiff_fail(what, io, "damaged tile layout");
  int stride = pg->planes > 1 ? 1 : pg->spp;
  for (int s = 0; s < used_planes(pg); s++)
    for (uint32_t y = 0; y < pg->h; y += th)
      for (uint32_t x = 0; x < pg->w; x += tw) {
        ttile_t tile = TIFFComputeTile(tif, x, y, 0, (uint16_t)s);
        if (TIFFReadEncodedTile(tif, tile, buf, tile_bytes) < tile_bytes)
          return tiff_fail(what, io, "truncated or damaged image data");
        uint32_t rows = pg->h - y < th ? pg->h - y : th, cols = pg->w - x < tw ? pg->w - x : tw;
        for (uint32_t r = 0; r < rows; r++)
          put_row(pg, buf + (size_t)r * (size_t)row_bytes, y + r, x, cols, stride, s);
      }
  return 0;
}

/* The page's samples into pg->px: rows of strips or whole tiles through one buffer. */
static int read_exact(TIFF *tif, const page_t *pg, uint64_t budget, const char *what,
                      const tiff_io_t *io)
{
  int tiled = TIFFIsTiled(tif);
  /* libtiff counts the strips (tiles) from RowsPerStrip (the tile size) and ignores a
   * StripOffsets (TileOffsets) of another count, so their number is bounded by the rows (the
   * pixels); a tile may still be as large as the whole image. */
  tmsize_t size = tiled ? TIFFTileSize(tif) : TIFFScanlineSize(tif);
  if (size <= 0 || (uint64_t)size > budget)
    return tiff_fail(what, io, tiled ? "tile too large" : "damaged header");
  uint8_t *buf = malloc((size_t)size);
  if (!buf) {
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, what, "out of memory");
    return -1;
  }
  int rc = tiled ? read_tiles(tif, pg, buf, what, io) : read_strips(tif, pg, buf, what, io);
  free(buf);
  return rc;
}

/* Any other page through libtiff's RGBA reader, rows in the file's stored order (the
 * orientation is the flow's to apply, from the tag): RGBA, or RGB when it has no alpha. */
static int read_rgba(TIFF *tif, page_t *pg, const char *what, const tiff_io_t *io)
{
  char why[1024];
  uint16_t orientation = ORIENTATION_TOPLEFT;
  if (!TIFFRGBAImageOK(tif, why)) {
    gpuimg_error_set(GPUIMG_EXIT_INPUT, what, "cannot decode TIFF: unsupported layout (%s)", why);
    return -1;
  }
  TIFFGetFieldDefaulted(tif, TIFFTAG_ORIENTATION, &orientation);
  uint32_t *raster = (uint32_t *)(void *)pg->px; /* 4 bytes a pixel: room made by the caller */
  if (!TIFFReadRGBAImageOriented(tif, pg->w, pg->h, raster, orientation, 1))
    return tiff_fail(what, io, "truncated or damaged image data");
  size_t n = (size_t)pg->w * pg->h;
  for (size_t i = 0; i < n; i++) { /* ABGR words to bytes */
    uint32_t v = raster[i];
    uint8_t *d = pg->px + i * (size_t)pg->channels;
    d[0] = (uint8_t)TIFFGetR(v), d[1] = (uint8_t)TIFFGetG(v), d[2] = (uint8_t)TIFFGetB(v);
    if (pg->channels == 4)
      d[3] = (uint8_t)TIFFGetA(v);
  }
  return 0;
}

/* The first page's size, checked before any pixel memory. */
static int page_size(TIFF *tif, page_t *pg, uint64_t max_pixels, const char *what,
                     const tiff_io_t *io)
{
  if (!TIFFGetField(tif, TIFFTAG_IMAGEWIDTH, &pg->w) ||
      !TIFFGetField(tif, TIFFTAG_IMAGELENGTH, &pg->h) || pg->w == 0 || pg->h == 0)
    return tiff_fail(what, io, "damaged header");
  if ((uint64_t)pg->w * pg->h > max_pixels) {
    gpuimg_error_set(GPUIMG_EXIT_INPUT, what,
                     "image is %ux%u, over the limit of %llu pixels (see --max-pixels)", pg->w,
                     pg->h, (unsigned long long)max_pixels);
    return -1;
  }
  if (pg->w > INT32_MAX || pg->h > INT32_MAX)
    return tiff_fail(what, io, "damaged header");
  return 0;
}

static int read_page(TIFF *tif, tiff_io_t *io, const char *what, uint64_t max_pixels,
                     gpuimg_image_t *out)
{
  page_t pg;
  memset(&pg, 0, sizeof pg);
  int kind;
  if (page_size(tif, &pg, max_pixels, what, io) < 0 || (kind = page_layout(tif, &pg, what, io)) < 0)
    return -1;
  if (kind == 1) /* libtiff's RGBA: alpha where the file declares an extra sample */
    pg.channels = pg.extras > 0 ? 4 : 3;
  size_t n = (size_t)pg.w * pg.h * (size_t)(kind == 1 ? 4 : pg.channels);
  int borrowed;
  if (!(pg.px = gpuimg_codec_pixels(n, &borrowed))) {
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, what, "out of memory");
    return -1;
  }
  int rc = kind == 1 ? read_rgba(tif, &pg, what, io)
                     : read_exact(tif, &pg, alloc_budget(max_pixels), what, io);
  if (rc < 0) {
    if (!borrowed)
      free(pg.px);
    return -1;
  }
  *out = (gpuimg_image_t){(int)pg.w, (int)pg.h, pg.channels, pg.px, borrowed};
  return 0;
}

static int tiff_decode(const uint8_t *bytes, size_t size, const char *what, uint64_t max_pixels,
                       gpuimg_image_t *out)
{
  tiff_io_t io = {.bytes = bytes, .size = size};
  memset(out, 0, sizeof *out);
  TIFF *tif = tiff_open(&io, "rm", alloc_budget(max_pixels));
  if (!tif)
    return tiff_fail(what, &io, "damaged header");
  int rc = read_page(tif, &io, what, max_pixels, out);
  TIFFClose(tif);
  return rc;
}

/* ---- Encoding -------------------------------------------------------------------------- */

/* The tags of an image of img's layout: contiguous samples, 8 bits, MinIsBlack or RGB, an
 * unassociated alpha, strips of about 64 KiB (at least a row), compressed as asked. */
static int tiff_tags(TIFF *tif, const gpuimg_image_t *img, int compression)
{
  static const uint16_t unassociated[1] = {EXTRASAMPLE_UNASSALPHA};
  static const uint16_t codes[] = {COMPRESSION_ADOBE_DEFLATE, COMPRESSION_LZW, COMPRESSION_NONE};
  int c = img->channels, colour = c >= 3 ? 3 : 1;
  size_t row = (size_t)img->width * (size_t)c;
  uint32_t rps = (uint32_t)(row >= 65536 ? 1 : 65536 / row);
  int ok = TIFFSetField(tif, TIFFTAG_IMAGEWIDTH, (uint32_t)img->width) &&
           TIFFSetField(tif, TIFFTAG_IMAGELENGTH, (uint32_t)img->height) &&
           TIFFSetField(tif, TIFFTAG_BITSPERSAMPLE, 8) &&
           TIFFSetField(tif, TIFFTAG_SAMPLESPERPIXEL, c) &&
           TIFFSetField(tif, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG) &&
           TIFFSetField(tif, TIFFTAG_PHOTOMETRIC,
                        colour == 3 ? PHOTOMETRIC_RGB : PHOTOMETRIC_MINISBLACK) &&
           TIFFSetField(tif, TIFFTAG_ORIENTATION, ORIENTATION_TOPLEFT) &&
           TIFFSetField(tif, TIFFTAG_ROWSPERSTRIP, rps) &&
           TIFFSetField(tif, TIFFTAG_COMPRESSION, codes[compression]);
  if (ok && c > colour)
    ok = TIFFSetField(tif, TIFFTAG_EXTRASAMPLES, 1, unassociated);
  if (ok && compression != GPUIMG_COMPRESSION_NONE)
    ok = TIFFSetField(tif, TIFFTAG_PREDICTOR, PREDICTOR_HORIZONTAL);
  return ok ? 0 : -1;
}

static int tiff_encode(const gpuimg_image_t *img, gpuimg_format_t fmt,
                       const gpuimg_encode_opts_t *opts, const char *what, gpuimg_buf_t *out)
{
  if (gpuimg_encode_check(img, fmt, GPUIMG_FORMAT_TIFF, "libtiff", what) < 0)
    return -1;
  int compression = opts->compression >= GPUIMG_COMPRESSION_DEFLATE &&
                            opts->compression <= GPUIMG_COMPRESSION_NONE
                        ? opts->compression
                        : GPUIMG_COMPRESSION_DEFLATE;
  gpuimg_buf_t file = {0}; /* TIFF's offsets count from the file's start: written apart */
  tiff_io_t io = {.out = &file};
  /* "w": classic TIFF (4 GiB at most, which --max-pixels' images fit); "l": little-endian. */
  TIFF *tif = tiff_open(&io, "wl", (uint64_t)1 << 40);
  int rc = tif && tiff_tags(tif, img, compression) == 0 ? 0 : -1;
  size_t row = (size_t)img->width * (size_t)img->channels;
  /* libtiff's predictor differences a row in place: each goes through a copy, so that the
   * caller's image is left as it was. */
  uint8_t *copy = rc == 0 ? malloc(row) : NULL;
  if (rc == 0 && !copy)
    rc = -1, io.oom = 1;
  for (int y = 0; rc == 0 && y < img->height; y++) {
    memcpy(copy, img->data + (size_t)y * row, row);
    if (TIFFWriteScanline(tif, copy, (uint32_t)y, 0) < 0)
      rc = -1;
  }
  free(copy);
  if (rc == 0 && !TIFFWriteDirectory(tif))
    rc = -1;
  if (tif)
    TIFFClose(tif);
  if (rc == 0 && !io.oom && gpuimg_buf_append(out, file.data, file.size) < 0)
    io.oom = 1;
  gpuimg_buf_free(&file);
  if (rc < 0 || io.oom) {
    if (io.oom || !io.error[0])
      gpuimg_error_set(GPUIMG_EXIT_FAILURE, what, "out of memory");
    else
      gpuimg_error_set(GPUIMG_EXIT_OUTPUT, what, "cannot encode TIFF: %s", io.error);
    return -1;
  }
  return 0;
}

const gpuimg_codec_t gpuimg_codec_libtiff = {
    .name = "libtiff",
    .library = "libtiff",
    .decodes = GPUIMG_FORMAT_BIT(GPUIMG_FORMAT_TIFF),
    .encodes = GPUIMG_FORMAT_BIT(GPUIMG_FORMAT_TIFF),
    .priority = 2,
    .decode = tiff_decode,
    .encode = tiff_encode,
};
#else
/* Built without libtiff: no formats, so not in the registry. */
const gpuimg_codec_t gpuimg_codec_libtiff = {.name = "libtiff", .library = "libtiff"};
#endif
