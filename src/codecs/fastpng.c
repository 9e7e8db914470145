/* fastpng.c: gpuimg's own PNG writer (--codec fastpng, and --codec auto at
 * --png-level 0 and 1), and the codec's declaration (its reader is fastpng_read.c, its deflate
 * encoder fastpng_deflate.c).
 * Lossless, 8-bit, 1 to 4 channels; the checksums are zlib's (or libdeflate's), the rest is its
 * own.
 *
 * Why it exists: on a 1024x768 photograph libpng at its fastest (zlib level 1, run-length
 * strategy, Sub filter) spends about 12 ms per image, most of it in zlib's general match
 * finder and bit writer; that one stage then bounds a whole batch of JPEG -> gray -> PNG
 * conversions. This writer does the one thing a fast setting needs and no more:
 *   - every row gets the same filter (Paeth: the best of the five on photographs, and for
 *     flat or synthetic images it leaves runs of zero bytes);
 *   - deflate with run-length matches only (a byte repeating the one before it, distance
 *     1, as zlib's Z_RLE strategy) and a Huffman code built for each block of about
 *     256 KiB of filtered data, which adapts to the image's statistics;
 *   - a block that would not shrink is stored instead, so noise costs ~0.01% extra.
 * Level 0 stores every block (no filter, no compression), as zlib's level 0.
 * An image is cut into slices of rows (one block each, a cut that depends on the image
 * only) that are filtered and compressed on their own, a large image's on several threads
 * (gpuimg_encode_opts_t.threads): blocks never refer back across a slice's start, each slice
 * ends on a byte, and their Adler-32s are combined; the bytes are the same whatever the
 * thread count.
 * The output is an ordinary PNG (IHDR, IDAT chunks, IEND; zlib stream with Adler-32; CRC-32
 * on every chunk) that any decoder reads back to the same pixels (tests/test_cli.py checks
 * it with stb, libpng and Python's zlib). Deflate format: RFC 1951; zlib: RFC 1950; PNG
 * filters and chunks: the PNG specification. */
#include "codec.h"
#include "fastpng.h"
#include "fastpng_deflate.h"

#include "pool.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#ifdef GPUIMG_HAVE_LIBDEFLATE
#include <libdeflate.h>
#endif

/* ---- CRC-32 (PNG chunks) and Adler-32 (the zlib stream) ----------------------------- */

/* ---- CRC-32 (PNG chunks) and Adler-32 (the zlib stream) ----------------------------- */

#ifdef GPUIMG_HAVE_LIBDEFLATE
/* libdeflate's: about four times as fast as zlib's (docs/performance.md). */
static uint32_t crc_update(uint32_t crc, const uint8_t *p, size_t n)
{
  return libdeflate_crc32(crc, p, n);
}

static uint32_t adler_update(uint32_t adler, const uint8_t *p, size_t n)
{
  return libdeflate_adler32(adler, p, n);
}
#else
/* zlib's: its Adler-32 as fast as the unrolled one this file had, its CRC-32 faster than the
 * slicing-by-8 one (docs/performance.md). sum (fn: crc32 or adler32) continued over
 * p[0..n), in calls of at most 1 GiB (zlib's lengths are 32-bit). */
static uint32_t checksum(uLong (*fn)(uLong, const Bytef *, uInt), uint32_t sum, const uint8_t *p,
                         size_t n)
{
  while (n > 0) {
    uInt k = n < (1u << 30) ? (uInt)n : 1u << 30;
    sum = (uint32_t)fn(sum, p, k);
    p += k;
    n -= k;
  }
  return sum;
}

static uint32_t crc_update(uint32_t crc, const uint8_t *p, size_t n)
{
  return checksum(crc32, crc, p, n);
}

static uint32_t adler_update(uint32_t adler, const uint8_t *p, size_t n)
{
  return checksum(adler32, adler, p, n);
}
#endif

/* ---- PNG filters -------------------------------------------------------------------- */

#ifdef __SSE2__
/* |x - y| of unsigned bytes. */
static inline __m128i absdiff_u8(__m128i x, __m128i y)
{
  return _mm_or_si128(_mm_subs_epu8(x, y), _mm_subs_epu8(y, x));
}

/* x <= y of unsigned bytes, as a mask. */
static inline __m128i le_u8(__m128i x, __m128i y)
{
  return _mm_cmpeq_epi8(_mm_min_epu8(x, y), x);
}

/* filter_row's Paeth from byte k on, 16 bytes at a time in 8-bit lanes; returns how many it
 * did (a multiple of 16; filter_row does the rest). pc = |(b - c) + (a - c)| is pa + pb when
 * both differences have the same sign, else |pa - pb|; the sum saturates at 255, which
 * changes no comparison (pa and pb are at most 255), so the predictions are the 16-bit
 * rule's. */
static size_t paeth_sse2(const uint8_t *row, const uint8_t *prev, size_t len, size_t k,
                         uint8_t *dst)
{
  size_t i = k;
  for (; i + 16 <= len; i += 16) {
    __m128i a = _mm_loadu_si128((const __m128i *)(row + i - k));
    __m128i b = _mm_loadu_si128((const __m128i *)(prev + i));
    __m128i c = _mm_loadu_si128((const __m128i *)(prev + i - k));
    __m128i x = _mm_loadu_si128((const __m128i *)(row + i));
    __m128i pa = absdiff_u8(b, c), pb = absdiff_u8(a, c);
    __m128i same = _mm_cmpeq_epi8(le_u8(c, b), le_u8(c, a));
    __m128i pc = _mm_or_si128(_mm_and_si128(same, _mm_adds_epu8(pa, pb)),
                              _mm_andnot_si128(same, absdiff_u8(pa, pb)));
    __m128i use_a = _mm_and_si128(le_u8(pa, pb), le_u8(pa, pc));
    __m128i use_b = _mm_andnot_si128(use_a, le_u8(pb, pc));
    __m128i use_c = _mm_andnot_si128(_mm_or_si128(use_a, use_b), _mm_set1_epi8(-1));
    __m128i pred = _mm_or_si128(_mm_or_si128(_mm_and_si128(use_a, a), _mm_and_si128(use_b, b)),
                                _mm_and_si128(use_c, c));
    _mm_storeu_si128((__m128i *)(dst + i), _mm_sub_epi8(x, pred));
  }
  return i - k;
}
#else
static size_t paeth_sse2(const uint8_t *row, const uint8_t *prev, size_t len, size_t k,
                         uint8_t *dst)
{
  (void)row, (void)prev, (void)len, (void)k, (void)dst;
  return 0;
}
#endif

/* Filter type byte and filtered bytes of one row: Paeth, or None at level 0. prev is the
 * row above (NULL for the first row). Paeth (PNG specification, filter type 4) predicts
 * each byte by whichever of left (a), above (b) and upper left (c) is closest to
 * a + b - c, ties in that order; written without branches, in 16-bit lanes, so that the
 * compiler can vectorise it (the inputs are the unfiltered rows: no dependency between
 * bytes). */
static void filter_row(const uint8_t *row, const uint8_t *prev, size_t len, int bpp, int level,
                       uint8_t *dst)
{
  const size_t k = (size_t)bpp < len ? (size_t)bpp : len;
  if (level == 0) {
    dst[0] = 0;
    memcpy(dst + 1, row, len);
    return;
  }
  dst[0] = 4;
  dst++;
  if (!prev) {
    /* Paeth with no row above is Sub. */
    memcpy(dst, row, k);
    for (size_t i = k; i < len; i++)
      dst[i] = (uint8_t)(row[i] - row[i - k]);
    return;
  }
  for (size_t i = 0; i < k; i++)
    dst[i] = (uint8_t)(row[i] - prev[i]);
  for (size_t i = k + paeth_sse2(row, prev, len, k, dst); i < len; i++) {
    int16_t a = row[i - k], b = prev[i], c = prev[i - k];
    int16_t p = (int16_t)(b - c), q = (int16_t)(a - c), r = (int16_t)(p + q);
    int16_t pa = p < 0 ? (int16_t)-p : p, pb = q < 0 ? (int16_t)-q : q,
            pc = r < 0 ? (int16_t)-r : r;
    int16_t pred = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
    dst[i] = (uint8_t)(row[i] - pred);
  }
}

/* ---- the PNG file ------------------------------------------------------------------- */

/* Starts a chunk: length (filled in by chunk_end) and type. Returns its offset. */
static size_t chunk_begin(gpuimg_bit_writer_t *w, const char *type)
{
  size_t at = w->out->size;
  gpuimg_bits_put_be32(w, 0);
  gpuimg_bits_put_bytes(w, type, 4);
  return at;
}

/* Ends the chunk begun at offset at: its length, then the CRC of its type and data. */
static void chunk_end(gpuimg_bit_writer_t *w, size_t at)
{
  uint8_t *p = w->out->data + at;
  size_t len = w->out->size - at - 8;
  p[0] = (uint8_t)(len >> 24);
  p[1] = (uint8_t)(len >> 16);
  p[2] = (uint8_t)(len >> 8);
  p[3] = (uint8_t)len;
  gpuimg_bits_put_be32(w, crc_update(0, p + 4, len + 4));
}

/* A slice's filtered rows (n bytes) in pieces of at most BLOCK_BYTES (several only when one
 * row is longer): one IDAT chunk and one deflate block each (stored at level 0). The zlib
 * header goes before the image's first piece (first). Within a slice the bits of a chunk's
 * last byte may wait for the next chunk; the slice then ends on a byte, padded as zlib's sync
 * flush does with an empty stored block when its last block does not, so that each slice's
 * bytes can be made on their own; the image's last block (last) has BFINAL. 0, or -1 when out
 * of memory. */
static int put_slice(gpuimg_bit_writer_t *w, const uint8_t *filtered, size_t n,
                     gpuimg_deflate_run_t *runs, int level, int first, int last)
{
  for (size_t off = 0; off < n;) {
    size_t k = n - off < BLOCK_BYTES ? n - off : BLOCK_BYTES;
    int at_end = off + k == n;
    /* Worst case: stored blocks, plus the chunk's 12 bytes, the zlib header and padding. */
    if (gpuimg_bits_reserve(w->out, gpuimg_deflate_stored_bytes(k) + 64))
      return -1;
    size_t at = chunk_begin(w, "IDAT");
    if (first && off == 0)
      gpuimg_bits_put_bytes(w, (const uint8_t[]){0x78, 0x01}, 2); /* deflate, 32K window, fastest */
    if (level)
      gpuimg_deflate_block(w, filtered + off, k, runs, last && at_end);
    else
      gpuimg_deflate_stored(w, filtered + off, k, last && at_end);
    if (at_end && !last && w->nbits > 0)
      gpuimg_deflate_stored(w, filtered, 0,
                            0); /* empty: its header pads to a byte (a sync flush) */
    if (at_end)
      gpuimg_bits_align(w);
    chunk_end(w, at);
    off += k;
  }
  return 0;
}

/* How an image is cut: into slices of rows of BLOCK_BYTES of filtered data (at least one
 * row), each filtered and compressed on its own, on any thread. The cut follows from the
 * image alone, so the bytes do not depend on the thread count. */
typedef struct {
  uint32_t adler;  /* the Adler-32 of its filtered rows alone */
  size_t filtered; /* the number of those bytes */
} slice_t;

typedef struct {
  const gpuimg_image_t *img;
  int level;
  const char *what;
  size_t stride, row_bytes, slice_rows;
  int nslices;
  slice_t *slices;
  gpuimg_buf_t *out;
} encoding_t;

/* Filters and compresses slice i, appending its IDAT chunks to dst. 0, or -1 with the error
 * set (out of memory). */
static int encode_slice(encoding_t *e, int i, gpuimg_buf_t *dst)
{
  const size_t h = (size_t)e->img->height, y0 = (size_t)i * e->slice_rows;
  const size_t rows = h - y0 < e->slice_rows ? h - y0 : e->slice_rows, n = rows * e->row_bytes;
  uint8_t *filtered = malloc(n);
  gpuimg_deflate_run_t *runs =
      e->level ? malloc(gpuimg_deflate_max_runs(n < BLOCK_BYTES ? n : BLOCK_BYTES) * sizeof *runs)
               : NULL;
  gpuimg_bit_writer_t w = {.out = dst};
  uint32_t adler = 1;
  int rc = filtered && (runs || !e->level) ? 0 : -1;
  if (rc == 0) {
    /* Each row's Adler-32 while it is in the cache. */
    for (size_t r = 0; r < rows; r++) {
      const uint8_t *row = e->img->data + (y0 + r) * e->stride;
      uint8_t *dst = filtered + r * e->row_bytes;
      filter_row(row, y0 + r ? row - e->stride : NULL, e->stride, e->img->channels, e->level, dst);
      adler = adler_update(adler, dst, e->row_bytes);
    }
    e->slices[i].adler = adler;
    e->slices[i].filtered = n;
    rc = put_slice(&w, filtered, n, runs, e->level, i == 0, i == e->nslices - 1);
  }
  free(filtered);
  free(runs);
  if (rc < 0)
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, e->what, "out of memory");
  return rc;
}

static int slice_part(void *arg, int i, gpuimg_buf_t *buf)
{
  return encode_slice(arg, i, buf);
}

static int slice_take(void *arg, int i, gpuimg_buf_t *buf)
{
  encoding_t *e = arg;
  (void)i;
  if (gpuimg_buf_append(e->out, buf->data, buf->size) == 0)
    return 0;
  gpuimg_error_set(GPUIMG_EXIT_FAILURE, e->what, "out of memory");
  return -1;
}

/* The signature and IHDR. */
static void put_header(gpuimg_bit_writer_t *w, const gpuimg_image_t *img)
{
  static const uint8_t color_types[5] = {0, 0, 4, 2, 6};
  static const uint8_t signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  gpuimg_bits_put_bytes(w, signature, 8);
  size_t at = chunk_begin(w, "IHDR");
  gpuimg_bits_put_be32(w, (uint32_t)img->width);
  gpuimg_bits_put_be32(w, (uint32_t)img->height);
  uint8_t ihdr[5] = {8, color_types[img->channels], 0, 0, 0};
  gpuimg_bits_put_bytes(w, ihdr, 5);
  chunk_end(w, at);
}

/* The zlib stream's Adler-32 (combined from the slices') in an IDAT chunk of its own (the
 * slices are compressed before it is known), then IEND. */
static void put_trailer(gpuimg_bit_writer_t *w, const encoding_t *e)
{
  uint32_t adler = e->slices[0].adler;
  for (int i = 1; i < e->nslices; i++)
    adler = (uint32_t)adler32_combine(adler, e->slices[i].adler, (z_off_t)e->slices[i].filtered);
  size_t at = chunk_begin(w, "IDAT");
  gpuimg_bits_put_be32(w, adler);
  chunk_end(w, at);
  at = chunk_begin(w, "IEND");
  chunk_end(w, at);
}

/* Rows per slice of an image of stride bytes per row and h rows: as many as fit in a block
 * (with the filter byte), at least one. A chunk holds at most 2^31 - 1 bytes and a block's
 * counts stay 32-bit, whatever the row's length: a row longer than a block goes out in
 * several. */
static size_t slice_rows_of(size_t stride, size_t h)
{
  size_t rows = BLOCK_BYTES / (stride + 1);
  return rows < 1 ? 1 : rows > h ? h : rows;
}

static int fastpng_parts(int width, int height, int channels)
{
  if (width < 1 || height < 1 || channels < 1)
    return 1;
  size_t h = (size_t)height, rows = slice_rows_of((size_t)width * (size_t)channels, h);
  return (int)((h + rows - 1) / rows);
}

static int fastpng_encode(const gpuimg_image_t *img, gpuimg_format_t fmt,
                          const gpuimg_encode_opts_t *opts, const char *what, gpuimg_buf_t *out)
{
  if (gpuimg_encode_check(img, fmt, GPUIMG_FORMAT_PNG, "fastpng", what) < 0)
    return -1;
  gpuimg_deflate_init();

  encoding_t e = {.img = img, .level = opts->png_level == 0 ? 0 : 1, .what = what, .out = out};
  const size_t h = (size_t)img->height;
  e.stride = (size_t)img->width * (size_t)img->channels;
  e.row_bytes = e.stride + 1;
  e.slice_rows = slice_rows_of(e.stride, h);
  e.nslices = (int)((h + e.slice_rows - 1) / e.slice_rows);
  e.slices = calloc((size_t)e.nslices, sizeof *e.slices);
  gpuimg_bit_writer_t w = {.out = out};
  /* Room for a typical photograph's file at once; a larger one grows as it is written. */
  const size_t total = h * e.row_bytes;
  if (!e.slices || gpuimg_bits_reserve(out, (e.level ? total / 2 : total) + 4096)) {
    free(e.slices);
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, what, "out of memory");
    return -1;
  }
  put_header(&w, img);
  /* The slices on threads (each into its own buffer, appended in order), or one after the
   * other straight into out: the same bytes at every thread count. */
  int rc = 0;
  if (opts->threads > 1 && e.nslices > 1)
    rc = gpuimg_pool_ordered(opts->threads, e.nslices, slice_part, slice_take, &e);
  else
    for (int i = 0; i < e.nslices && rc == 0; i++)
      rc = encode_slice(&e, i, out);
  if (rc == 0 && gpuimg_bits_reserve(out, 64) < 0) {
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, what, "out of memory");
    rc = -1;
  }
  if (rc == 0)
    put_trailer(&w, &e);
  free(e.slices);
  return rc;
}

/* Under auto: PNG output at levels 0 and 1, ahead of libpng and stb; PNG input that its
 * reader takes (fastpng_read.c), ahead of stb. */
const gpuimg_codec_t gpuimg_codec_fastpng = {
    .name = "fastpng",
    .decodes = GPUIMG_FORMAT_BIT(GPUIMG_FORMAT_PNG),
    .encodes = GPUIMG_FORMAT_BIT(GPUIMG_FORMAT_PNG),
    .recognises = gpuimg_fastpng_reads,
    .priority = 3,
    .png_level_min = 0,
    .png_level_max = 1,
    .decode = gpuimg_fastpng_read,
    .encode = fastpng_encode,
    .encode_parts = fastpng_parts,
};
