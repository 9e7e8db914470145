/* stb.c: the stb codec, compiled here from Debian's stb headers with only PNG and JPEG
 * decoders. */
#include "codec.h"
#include "jpeg_layout.h"

#include <limits.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* The one translation unit that instantiates stb_image and stb_image_write. Only the
 * formats gpuimg supports are compiled in. stb's allocations go through stb_alloc() and
 * stb_realloc() below: plain malloc/realloc, so decoded pixels can be owned by
 * gpuimg_image_t and released with free(), but zeroed (a decoder that leaves part of an
 * image unwritten leaks no old heap contents into the output) and refused above the
 * largest buffer a correct decode of the file's header needs (a decompression bomb or a
 * lying length field cannot make stb allocate gigabytes). A failed allocation is recorded,
 * so that it is reported as out of memory, not as the corrupt data stb's reason suggests.
 * stb_image_write's allocations go through stbw_realloc() and stbw_free(). */
static void *stb_alloc(size_t size);
static void *stb_realloc(void *p, size_t size);
static void *stbw_realloc(void *p, size_t size);
static void stbw_free(void *p);
#define STBI_ONLY_PNG
#define STBI_ONLY_JPEG
#define STBI_NO_STDIO
#define STBI_MAX_DIMENSIONS (1 << 20)
#define STBI_MALLOC(sz) stb_alloc(sz)
#define STBI_REALLOC(p, sz) stb_realloc(p, sz)
#define STBI_FREE(p) free(p)
/* stb's internal consistency checks abort: compiled out in every build (as NDEBUG does in
 * release builds), so that no input can abort gpuimg; the fuzzer (GPUIMG_FUZZING) keeps
 * them as extra oracles. */
#ifndef GPUIMG_FUZZING
#define STBI_ASSERT(x) ((void)0)
#endif
#define STB_IMAGE_STATIC
#define STB_IMAGE_IMPLEMENTATION
#define STBI_WRITE_NO_STDIO
#define STBIW_MALLOC(sz) stbw_realloc(NULL, sz)
#define STBIW_REALLOC(p, sz) stbw_realloc(p, sz)
#define STBIW_FREE(p) stbw_free(p)
#define STB_IMAGE_WRITE_STATIC
#define STB_IMAGE_WRITE_IMPLEMENTATION
#if defined(__GNUC__)
/* stb declares static functions this file does not use; checked at the end of the file. */
#pragma GCC diagnostic ignored "-Wunused-function"
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
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

/* The allocation limit of the decode in progress on this thread (batch mode decodes on
 * several), whether stb asked for more (then its failure means corrupt data), and whether
 * an allocation within the limit failed (then it means out of memory, whatever stb says:
 * some of its failed allocations leave no reason or a misleading one). */
static _Thread_local size_t stb_alloc_limit = SIZE_MAX;
static _Thread_local int stb_alloc_refused;
static _Thread_local int stb_alloc_failed;

static void *stb_alloc(size_t size)
{
  if (size > stb_alloc_limit) {
    stb_alloc_refused = 1;
    return NULL;
  }
  void *q = calloc(1, size ? size : 1);
  stb_alloc_failed |= !q;
  return q;
}

static void *stb_realloc(void *p, size_t size)
{
  if (size > stb_alloc_limit) {
    stb_alloc_refused = 1;
    return NULL;
  }
  void *q = realloc(p, size ? size : 1);
  stb_alloc_failed |= !q;
  return q;
}

/* stb_image_write does not check every allocation (its deflate buffers grow without a
 * test, and writing on would overflow them), so an allocation of its never fails: it
 * jumps back to stb_encode(), which frees every block the writer still holds. Each block
 * has a header that links it into this thread's list of the writer's blocks. */
typedef union stbw_block {
  struct {
    union stbw_block *prev, *next;
  } link;
  max_align_t align;
} stbw_block_t;

static _Thread_local stbw_block_t *stbw_blocks;
static _Thread_local jmp_buf *stbw_jump;

static void stbw_link(stbw_block_t *b)
{
  b->link.prev = NULL;
  b->link.next = stbw_blocks;
  if (stbw_blocks)
    stbw_blocks->link.prev = b;
  stbw_blocks = b;
}

static void stbw_unlink(stbw_block_t *b)
{
  if (b->link.prev)
    b->link.prev->link.next = b->link.next;
  else
    stbw_blocks = b->link.next;
  if (b->link.next)
    b->link.next->link.prev = b->link.prev;
}

static void *stbw_realloc(void *p, size_t size)
{
  stbw_block_t *old = p ? (stbw_block_t *)p - 1 : NULL, *b = NULL;
  if (old)
    stbw_unlink(old);
  if (size <= SIZE_MAX - sizeof *b)
    b = realloc(old, sizeof *b + size);
  if (!b) {
    if (old)
      stbw_link(old);
    longjmp(*stbw_jump, 1);
  }
  stbw_link(b);
  return b + 1;
}

static void stbw_free(void *p)
{
  if (!p)
    return;
  stbw_block_t *b = (stbw_block_t *)p - 1;
  stbw_unlink(b);
  free(b);
}

/* After a jump out of the writer: what it held. */
static void stbw_free_all(void)
{
  while (stbw_blocks)
    stbw_free(stbw_blocks + 1);
}

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
  /* "outofmem" without a failed allocation: one of stb's size checks overflowed. */
  if (!r || strcmp(r, "outofmem") == 0 || strlen(r) < 6 || strcmp(r, "unknown image type") == 0 ||
      strstr(r, other) || (strcmp(other, "jpeg") == 0 && strstr(r, "jpg")))
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

/* What a walk over the file's structure learned before stb allocates anything. */
typedef struct {
  int found;          /* the header (PNG IHDR, JPEG start of frame) was found */
  uint32_t w, h;      /* its width and height */
  char bad[128];      /* a defect that must stop the decode, "" if none */
  int too_little;     /* less coded data than any w x h image needs: corrupt or truncated */
  int too_deep;       /* a 16-bit PNG too large for stb's 32-bit conversion */
  int sixteen;        /* a 16-bit PNG: decoded to 16 bits, reduced here (gpuimg_reduce16()) */
  uint64_t max_alloc; /* the largest buffer a correct decode of this header needs */
  int channels;       /* the channels a decode gives (PNG colour type, JPEG components) */
  int short_palette;  /* a PNG with a PLTE of fewer than 256 entries (png_full_palette()) */
} probe_t;

/* Deflate cannot expand one input byte into more than 1032 output bytes (a 258-byte match
 * in 2 bits), so IDAT data smaller than the pixels / 1032 cannot hold the image. */
#define DEFLATE_MAX_RATIO 1032
/* A PLTE chunk of 256 entries, the most there are. */
#define PLTE_FULL 768
/* Small decodes may allocate this much whatever their header says (stb's own structures);
 * every limit also has this slack for stb's padding (+1, +15 alignment bytes). */
#define STB_ALLOC_FLOOR ((uint64_t)1 << 20)
#define STB_ALLOC_SLACK ((uint64_t)1 << 16)

static uint64_t max_u64(uint64_t a, uint64_t b)
{
  return a > b ? a : b;
}

/* A chunk type for a message: "the IDAT", or "a" when its bytes are not four letters. */
static const char *chunk_name(const uint8_t *t, char name[9])
{
  for (int i = 0; i < 4; i++)
    if (!((t[i] >= 'A' && t[i] <= 'Z') || (t[i] >= 'a' && t[i] <= 'z')))
      return "a";
  snprintf(name, 9, "the %c%c%c%c", t[0], t[1], t[2], t[3]);
  return name;
}

/* PNG: every chunk's data and CRC must lie inside the file (stb would otherwise allocate
 * what an IDAT length claims, up to 2 GiB, before finding the data missing). IHDR gives the
 * size; the IDAT total bounds what the pixels can inflate to. */
static void png_probe(const uint8_t *b, size_t n, probe_t *p)
{
  size_t pos = sizeof png_signature;
  int first = 1, depth = 8, color = 2, interlace = 0, trns = 0, plte = 0;
  uint64_t idat = 0;

  while (n - pos >= 8) {
    uint32_t len = be32(b + pos);
    const uint8_t *type = b + pos + 4;
    int is_end = memcmp(type, "IEND", 4) == 0;
    if (n - pos < 12 || len > n - pos - 12) {
      char name[9];
      snprintf(p->bad, sizeof p->bad,
               "corrupt or truncated image data (%s chunk runs past the end of the file)",
               chunk_name(type, name));
      break;
    }
    if (memcmp(type, "CgBI", 4) != 0) { /* Apple's chunk may come before IHDR; stb takes it */
      if (first && memcmp(type, "IHDR", 4) == 0 && len == 13) {
        p->found = 1;
        p->w = be32(b + pos + 8);
        p->h = be32(b + pos + 12);
        depth = b[pos + 16];
        color = b[pos + 17];
        interlace = b[pos + 20];
        /* gray, gray + alpha, RGB, RGBA; a palette gives RGB (RGBA with tRNS: a guess). */
        p->channels = color == 0 ? 1 : color == 4 ? 2 : color == 6 ? 4 : 3;
      }
      first = 0;
    }
    if (memcmp(type, "IDAT", 4) == 0)
      idat += len;
    if (memcmp(type, "tRNS", 4) == 0)
      trns = 1;
    if (memcmp(type, "PLTE", 4) == 0 && plte++) { /* libpng's "duplicate" error */
      snprintf(p->bad, sizeof p->bad, "corrupt image data (a second PLTE chunk)");
      break;
    }
    if (memcmp(type, "PLTE", 4) == 0 && color == 3 && len > 0 && len < PLTE_FULL && len % 3 == 0)
      p->short_palette = 1; /* a suggested palette of an RGB image is not read */
    if (is_end)
      break;
    pos += 12 + (size_t)len;
  }
  if (!p->found)
    return; /* stb reports what is wrong */

  /* Samples per pixel in the file, and bits per sample (unknown values sized as the largest:
   * stb refuses them itself). */
  int spp = color == 0 ? 1 : color == 2 ? 3 : color == 3 ? 1 : color == 4 ? 2 : 4;
  int bits = (depth == 1 || depth == 2 || depth == 4 || depth == 8) ? depth : 16;
  uint64_t w = p->w, h = p->h;
  uint64_t row = (w * (uint64_t)bits + 7) / 8 * (uint64_t)spp;
  p->too_little = row * h > DEFLATE_MAX_RATIO * idat + 1024;
  /* Decoded channels: a palette expands to RGB, tRNS adds alpha; 16-bit samples take 2
   * bytes until stb converts them to 8 bits. */
  uint64_t out_n = color == 3 ? (trns ? 4 : 3) : (uint64_t)spp + (trns && (spp & 1) ? 1 : 0);
  uint64_t out = w * h * out_n * (bits == 16 ? 2 : 1);
  /* stb inflates into a buffer of exactly the raw size (one filter byte per row), doubling
   * it when the data holds more; interlaced images hold a little more, so they double once. */
  uint64_t raw = row * h + h;
  uint64_t inflate = interlace ? 2 * raw : raw;
  /* The IDAT data is gathered in a buffer that doubles from the first chunk's size. */
  uint64_t gather = 2 * idat + 8192;
  p->max_alloc = max_u64(max_u64(out, inflate), max_u64(gather, STB_ALLOC_FLOOR)) + STB_ALLOC_SLACK;
  /* stb converts 16-bit samples in int arithmetic: refuse what would overflow it. */
  p->too_deep = bits == 16 && out > (uint64_t)INT_MAX;
  p->sixteen = bits == 16 && color != 3;
}

/* The PNG (its chunks checked by png_probe(): one PLTE at most) with its PLTE chunk of fewer
 * than 256 entries padded to 256 with black ones, into copy (freed with gpuimg_buf_free()); 0, or
 * -1 out of memory. stb keeps the palette in an uninitialised array and reads an index past the
 * PLTE's entries from it: the pixels would show what its stack held. libpng reads such an
 * index as black (it zeroes the entries past the PLTE's; a benign error, a warning on read),
 * and so does gpuimg: opaque black, as stb makes every entry past the tRNS opaque. A tRNS of
 * more entries than the PLTE had is left out, as libpng ignores it (stb refused it before the
 * padding made it fit). */
static int png_full_palette(const uint8_t *b, size_t n, gpuimg_buf_t *copy)
{
  static const uint8_t black[PLTE_FULL] = {0};
  size_t pos = sizeof png_signature, done = 0;
  uint32_t entries = 0; /* the PLTE's, before the padding */
  while (n - pos >= 12) {
    uint32_t len = be32(b + pos);
    if (len > n - pos - 12)
      break;
    if (!memcmp(b + pos + 4, "tRNS", 4) && entries && len > entries) {
      if (gpuimg_buf_append(copy, b + done, pos - done) < 0)
        return -1;
      done = pos + 12 + len;
    }
    if (!memcmp(b + pos + 4, "PLTE", 4) && len > 0 && len < PLTE_FULL && len % 3 == 0) {
      entries = len / 3;
      uint8_t head[8] = {0, 0, PLTE_FULL >> 8, PLTE_FULL & 0xff, 'P', 'L', 'T', 'E'}, crc[4];
      uLong c = crc32(crc32(crc32(0, head + 4, 4), b + pos + 8, len), black, PLTE_FULL - len);
      for (int k = 0; k < 4; k++)
        crc[k] = (uint8_t)(c >> (24 - 8 * k));
      if (gpuimg_buf_append(copy, b + done, pos - done) < 0 ||
          gpuimg_buf_append(copy, head, 8) < 0 || gpuimg_buf_append(copy, b + pos + 8, len) < 0 ||
          gpuimg_buf_append(copy, black, PLTE_FULL - len) < 0 ||
          gpuimg_buf_append(copy, crc, 4) < 0)
        return -1;
      done = pos + 12 + len;
    }
    if (!memcmp(b + pos + 4, "IEND", 4))
      break;
    pos += 12 + (size_t)len;
  }
  return gpuimg_buf_append(copy, b + done, n - done);
}

/* What the walk over a JPEG's segments gathers besides the probe. */
typedef struct {
  int scans, ended, progressive, nc;
  uint64_t blocks;   /* 8x8 blocks of all components */
  uint64_t comp_max; /* the largest component's sample plane, padded to whole MCUs */
} jpeg_walk_t;

/* A start of frame (baseline, extended or progressive: the ones stb decodes, marker m): the
 * size, and from the sampling factors the blocks and sample planes it needs. */
static void jpeg_frame(const uint8_t *seg, size_t seg_len, int m, probe_t *p, jpeg_walk_t *st)
{
  int hmax = 1, vmax = 1, nc = seg[5];
  p->found = 1;
  p->h = be16(seg + 1);
  p->w = be16(seg + 3);
  st->progressive = m == 0xc2;
  p->channels = nc == 1 ? 1 : 3;
  if (nc < 1 || nc > 4 || seg_len < 6 + 3 * (size_t)nc)
    nc = 0; /* stb refuses the frame */
  st->nc = nc;
  for (int i = 0; i < nc; i++) {
    int hs = seg[7 + 3 * i] >> 4, vs = seg[7 + 3 * i] & 15;
    hmax = hs > hmax && hs <= 4 ? hs : hmax;
    vmax = vs > vmax && vs <= 4 ? vs : vmax;
  }
  uint64_t mcu_x = ((uint64_t)p->w + 8 * (uint64_t)hmax - 1) / (8 * (uint64_t)hmax);
  uint64_t mcu_y = ((uint64_t)p->h + 8 * (uint64_t)vmax - 1) / (8 * (uint64_t)vmax);
  for (int i = 0; i < nc; i++) {
    int hs = seg[7 + 3 * i] >> 4, vs = seg[7 + 3 * i] & 15;
    if (hs < 1 || hs > 4 || vs < 1 || vs > 4)
      continue;
    uint64_t cx = ((uint64_t)p->w * (uint64_t)hs + (uint64_t)hmax - 1) / (uint64_t)hmax;
    uint64_t cy = ((uint64_t)p->h * (uint64_t)vs + (uint64_t)vmax - 1) / (uint64_t)vmax;
    st->blocks += ((cx + 7) / 8) * ((cy + 7) / 8);
    st->comp_max = max_u64(st->comp_max, mcu_x * (uint64_t)hs * 8 * mcu_y * (uint64_t)vs * 8);
  }
}

/* A DHT segment: each table is class and id, 16 code counts, then one symbol per code.
 * 0, or -1 with p->bad set when a table has more codes than 256 or than it holds. */
static int jpeg_huffman_check(const uint8_t *seg, size_t seg_len, probe_t *p)
{
  size_t k = 0;
  while (k < seg_len) {
    size_t codes = 0;
    if (seg_len - k < 17) {
      codes = 257;
    } else {
      for (int i = 1; i <= 16; i++)
        codes += seg[k + (size_t)i];
    }
    if (codes > 256 || seg_len - k - 17 < codes) {
      snprintf(p->bad, sizeof p->bad,
               "corrupt image data (a Huffman table with more codes than it holds)");
      return -1;
    }
    k += 17 + codes;
  }
  return 0;
}

/* JPEG: the start of frame gives the size and sampling; every Huffman table must have at
 * most 256 codes (stb 2.27 writes past its tables otherwise); a frame needs a scan (stb
 * would return an image of whatever its buffers held); every 8x8 block takes at least one
 * bit of coded data, which bounds the size a file of n bytes can claim. */
static void jpeg_probe(const uint8_t *b, size_t n, probe_t *p)
{
  size_t pos = 2;
  jpeg_walk_t st = {0};

  while (pos < n) {
    if (b[pos] != 0xff) {
      /* Bytes between segments: stb skips them to the next 0xff, so the walk does too. */
      const uint8_t *ff = memchr(b + pos, 0xff, n - pos);
      if (!ff)
        break;
      pos = (size_t)(ff - b);
    }
    while (pos < n && b[pos] == 0xff)
      pos++;
    if (pos >= n)
      break;
    uint8_t m = b[pos++];
    if (m == 0xd9) {
      st.ended = 1;
      break;
    }
    if (m == 0x01 || m == 0xd8 || (m >= 0xd0 && m <= 0xd7))
      continue;
    if (n - pos < 2) {
      snprintf(p->bad, sizeof p->bad,
               "corrupt or truncated image data (a segment runs past the end of the file)");
      return;
    }
    size_t len = be16(b + pos);
    if (len < 2)
      return; /* stb reports it */
    if (len > n - pos) {
      snprintf(p->bad, sizeof p->bad,
               "corrupt or truncated image data (a segment runs past the end of the file)");
      return;
    }
    const uint8_t *seg = b + pos + 2;
    size_t seg_len = len - 2;
    if (m >= 0xc0 && m <= 0xc2 && !p->found && seg_len >= 6) {
      jpeg_frame(seg, seg_len, m, p, &st);
    } else if (m == 0xc4) {
      if (jpeg_huffman_check(seg, seg_len, p) < 0)
        return;
    } else if (m == 0xda) {
      st.scans++;
      pos = gpuimg_jpeg_scan_end(b, n, pos + len);
      continue;
    }
    pos += len;
  }
  if (!p->found)
    return;
  if (st.ended && st.scans == 0) {
    snprintf(p->bad, sizeof p->bad, "no image data (the image ends before its first scan)");
    return;
  }
  p->too_little = (uint64_t)n * 8 < st.blocks;
  /* Per component a sample plane (progressive: and 16-bit coefficients), then the output
   * (at most 3 channels) and stb's decoder state. */
  uint64_t out = (uint64_t)p->w * (uint64_t)p->h * (st.nc >= 3 ? 3 : 1);
  p->max_alloc = max_u64(max_u64(st.comp_max * (st.progressive ? 2 : 1), out),
                         STB_ALLOC_FLOOR + sizeof(stbi__jpeg)) +
                 STB_ALLOC_SLACK;
}

/* "PNG" or "JPEG" from the file's signature, or NULL with the reason set (exit 3). */
static const char *stb_kind(const uint8_t *bytes, size_t size, const char *what)
{
  const char *kind;
  if (size == 0) {
    gpuimg_error_set(GPUIMG_EXIT_INPUT, what, "empty file");
    return NULL;
  }
  if (gpuimg_codec_is_png(bytes, size))
    kind = "PNG";
  else if (gpuimg_codec_is_jpeg(bytes, size))
    kind = "JPEG";
  else if (gpuimg_format_unbuilt(bytes, size)) {
    gpuimg_error_set(GPUIMG_EXIT_INPUT, what, "unsupported format (gpuimg was built without %s)",
                     gpuimg_format_unbuilt(bytes, size));
    return NULL;
  } else {
    char reads[256];
    gpuimg_error_set(GPUIMG_EXIT_INPUT, what, "unsupported format (not %s)",
                     gpuimg_format_list(GPUIMG_CODEC_DECODES, GPUIMG_SPELL_UPPER, ", ", " or ",
                                        reads, sizeof reads));
    return NULL;
  }
  if (size > INT_MAX) {
    gpuimg_error_set(GPUIMG_EXIT_INPUT, what, "file too large");
    return NULL;
  }
  return kind;
}

/* What the probe found that refuses the decode before stb allocates: 0, or -1 with the
 * reason set (exit 3). The size first: it is what a user can act on (--max-pixels). */
static int stb_probe_check(const probe_t *probe, const char *kind, const char *what,
                           uint64_t max_pixels)
{
  if (probe->found) {
    if (probe->w == 0 || probe->h == 0) {
      gpuimg_error_set(GPUIMG_EXIT_INPUT, what, "cannot decode %s: zero width or height", kind);
      return -1;
    }
    if (probe->w > STBI_MAX_DIMENSIONS || probe->h > STBI_MAX_DIMENSIONS) {
      gpuimg_error_set(GPUIMG_EXIT_INPUT, what,
                       "cannot decode %s: image is %ux%u, over the largest side of %d pixels", kind,
                       probe->w, probe->h, STBI_MAX_DIMENSIONS);
      return -1;
    }
    if ((uint64_t)probe->w * probe->h > max_pixels) {
      gpuimg_error_set(GPUIMG_EXIT_INPUT, what,
                       "image is %ux%u, over the limit of %llu pixels (see --max-pixels)", probe->w,
                       probe->h, (unsigned long long)max_pixels);
      return -1;
    }
  }
  if (probe->bad[0]) {
    gpuimg_error_set(GPUIMG_EXIT_INPUT, what, "cannot decode %s: %s", kind, probe->bad);
    return -1;
  }
  if (probe->found && probe->too_little) {
    gpuimg_error_set(GPUIMG_EXIT_INPUT, what,
                     "cannot decode %s: too little image data for %ux%u pixels "
                     "(corrupt or truncated)",
                     kind, probe->w, probe->h);
    return -1;
  }
  if (probe->found && probe->too_deep) {
    gpuimg_error_set(GPUIMG_EXIT_INPUT, what,
                     "cannot decode %s: 16-bit image of %ux%u pixels too large to convert to "
                     "8 bits",
                     kind, probe->w, probe->h);
    return -1;
  }

  /* No single buffer may pass 4 bytes per pixel of --max-pixels (1 GiB by default): the
   * limit a user raises for larger images also bounds 16-bit and interlaced decodes, whose
   * buffers are larger than their pixels. */
  uint64_t budget = 4 * max_pixels + STB_ALLOC_FLOOR + STB_ALLOC_SLACK;
  if (probe->found && probe->max_alloc > budget) {
    gpuimg_error_set(GPUIMG_EXIT_INPUT, what,
                     "cannot decode %s: a %ux%u image needs a buffer of up to %llu bytes, "
                     "over the limit of %llu (4 bytes per pixel of --max-pixels)",
                     kind, probe->w, probe->h, (unsigned long long)probe->max_alloc,
                     (unsigned long long)budget);
    return -1;
  }
  return 0;
}

/* stb passes over a scan's blocks as libjpeg does, with no limit of its own: 0 when the
 * JPEG's scans are within gpuimg_jpeg_work_check()'s limits, or -1 with the reason set (exit 3). */
static int stb_jpeg_work_check(const uint8_t *bytes, size_t size, const char *what)
{
  gpuimg_jpeg_work_t work;
  char why[256];
  gpuimg_jpeg_work(bytes, size, &work);
  if (gpuimg_jpeg_work_check(&work, why, sizeof why) == 0)
    return 0;
  gpuimg_error_set(GPUIMG_EXIT_INPUT, what, "cannot decode JPEG: %s", why);
  return -1;
}

/* A 16-bit PNG: stb's 16-bit samples reduced to 8 bits by gpuimg's rule (stb's own
 * conversion keeps the high byte), in place; NULL when stb fails. */
static uint8_t *stb_load16(const uint8_t *bytes, size_t size, int *w, int *h, int *n)
{
  uint16_t *px16 = stbi_load_16_from_memory(bytes, (int)size, w, h, n, 0);
  if (!px16)
    return NULL;
  uint8_t *px = (uint8_t *)px16;
  size_t count = (size_t)*w * (size_t)*h * (size_t)*n;
  for (size_t i = 0; i < count; i++) /* front to back: each byte written is already read */
    px[i] = gpuimg_reduce16(px16[i]);
  return px;
}

/* stb's decode under the probe's allocation limit: its pixels (freed with
 * stbi_image_free()), or NULL with the reason set. */
static uint8_t *stb_load(const uint8_t *bytes, size_t size, const probe_t *probe, const char *kind,
                         const char *what, int *w, int *h, int *n)
{
  /* Without a header stb fails before allocating much; the floor covers its state. */
  stb_alloc_limit = probe->found && probe->max_alloc < SIZE_MAX ? (size_t)probe->max_alloc
                                                                : (size_t)STB_ALLOC_FLOOR * 4;
  stb_alloc_refused = 0;
  stb_alloc_failed = 0;
  stb_reason_reset();
  uint8_t *px = probe->sixteen ? stb_load16(bytes, size, w, h, n)
                               : stbi_load_from_memory(bytes, (int)size, w, h, n, 0);
  int refused = stb_alloc_refused, failed = stb_alloc_failed;
  stb_alloc_limit = SIZE_MAX;
  if (px)
    return px;
  if (failed && !refused)
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, what, "out of memory");
  else if (refused && probe->found)
    gpuimg_error_set(GPUIMG_EXIT_INPUT, what,
                     "cannot decode %s: corrupt image data (more data than a %ux%u image "
                     "holds)",
                     kind, probe->w, probe->h);
  else if (refused)
    gpuimg_error_set(GPUIMG_EXIT_INPUT, what,
                     "cannot decode %s: corrupt image data (more data than its header "
                     "allows)",
                     kind);
  else
    gpuimg_error_set(GPUIMG_EXIT_INPUT, what, "cannot decode %s: %s", kind, stb_reason(kind));
  return NULL;
}

static int stb_decode(const uint8_t *bytes, size_t size, const char *what, uint64_t max_pixels,
                      gpuimg_image_t *out)
{
  const char *kind;
  probe_t probe;
  int w, h, n;

  memset(out, 0, sizeof *out);
  memset(&probe, 0, sizeof probe);
  if (!(kind = stb_kind(bytes, size, what)))
    return -1;
  if (kind[0] == 'P')
    png_probe(bytes, size, &probe);
  else
    jpeg_probe(bytes, size, &probe);
  if (stb_probe_check(&probe, kind, what, max_pixels) < 0 ||
      (kind[0] == 'J' && stb_jpeg_work_check(bytes, size, what) < 0))
    return -1;
  gpuimg_buf_t padded = {0};
  if (probe.short_palette && png_full_palette(bytes, size, &padded) < 0) {
    gpuimg_buf_free(&padded);
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, what, "out of memory");
    return -1;
  }
  uint8_t *px = padded.size ? stb_load(padded.data, padded.size, &probe, kind, what, &w, &h, &n)
                            : stb_load(bytes, size, &probe, kind, what, &w, &h, &n);
  gpuimg_buf_free(&padded);
  if (!px)
    return -1;
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

/* stb_image_write's call for fmt: 1 when it wrote, 0 when it refused. Apart from
 * stb_encode() so that no local of the function that called setjmp changes after it. */
static int stb_write(stb_sink_t *sink, const gpuimg_image_t *img, gpuimg_format_t fmt, int quality)
{
  int w = img->width, h = img->height, c = img->channels;
  switch (fmt) {
  case GPUIMG_FORMAT_PNG:
    return stbi_write_png_to_func(stb_write_cb, sink, w, h, c, img->data, w * c);
  case GPUIMG_FORMAT_JPEG:
    return stbi_write_jpg_to_func(stb_write_cb, sink, w, h, c, img->data, quality);
  case GPUIMG_FORMAT_BMP:
    return stbi_write_bmp_to_func(stb_write_cb, sink, w, h, c, img->data);
  case GPUIMG_FORMAT_TGA:
    return stbi_write_tga_to_func(stb_write_cb, sink, w, h, c, img->data);
  default:
    return 0;
  }
}

/* An allocation failure, the writer's or the output buffer's, is "out of memory" (exit 1). */
static int stb_encode(const gpuimg_image_t *img, gpuimg_format_t fmt,
                      const gpuimg_encode_opts_t *opts, const char *what, gpuimg_buf_t *out)
{
  stb_sink_t sink = {out, 0};
  jmp_buf jump;

  /* stb_image_write computes sizes in int ((w*c + 1) * h for PNG rows and filters). */
  if (gpuimg_image_bytes(img->width, img->height, img->channels) + (size_t)img->height >
      (size_t)INT_MAX - 65536) {
    gpuimg_error_set(GPUIMG_EXIT_OUTPUT, what, "image too large for the stb encoder");
    return -1;
  }
  stbw_jump = &jump;
  if (setjmp(jump)) {
    stbw_free_all();
    stbw_jump = NULL;
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, what, "out of memory");
    return -1;
  }
  int ok = stb_write(&sink, img, fmt, opts->quality);
  stbw_jump = NULL;
  if (sink.failed) {
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, what, "out of memory");
    return -1;
  }
  if (!ok) {
    gpuimg_error_set(GPUIMG_EXIT_OUTPUT, what, "cannot encode %s", gpuimg_format_name(fmt));
    return -1;
  }
  return 0;
}

/* A PNG or a JPEG signature: what stb_decode() reads (it reports anything else). */
static int stb_recognises(const uint8_t *bytes, size_t size)
{
  return gpuimg_codec_is_png(bytes, size) || gpuimg_codec_is_jpeg(bytes, size);
}

/* The reference: the lowest priority under auto, and what serves every format a codec
 * chosen by name lacks. */
const gpuimg_codec_t gpuimg_codec_stb = {
    .name = "stb",
    .decodes = GPUIMG_FORMAT_BIT(GPUIMG_FORMAT_PNG) | GPUIMG_FORMAT_BIT(GPUIMG_FORMAT_JPEG),
    .encodes = GPUIMG_FORMAT_BIT(GPUIMG_FORMAT_PNG) | GPUIMG_FORMAT_BIT(GPUIMG_FORMAT_JPEG) |
               GPUIMG_FORMAT_BIT(GPUIMG_FORMAT_BMP) | GPUIMG_FORMAT_BIT(GPUIMG_FORMAT_TGA),
    .recognises = stb_recognises,
    .priority = 1,
    .png_level_min = 0,
    .png_level_max = 9,
    .decode = stb_decode,
    .encode = stb_encode,
};

int gpuimg_codec_info(const uint8_t *bytes, size_t size, int *width, int *height, int *channels)
{
  /* The structure walks every decode starts with (no stb call, no pixel memory). */
  probe_t p;
  memset(&p, 0, sizeof p);
  *width = *height = *channels = 0;
  if (gpuimg_codec_is_png(bytes, size))
    png_probe(bytes, size, &p);
  else if (gpuimg_codec_is_jpeg(bytes, size))
    jpeg_probe(bytes, size, &p);
  if (!p.found || p.bad[0] || p.w < 1 || p.h < 1 || p.w > INT_MAX || p.h > INT_MAX ||
      p.channels < 1)
    return -1;
  *width = (int)p.w;
  *height = (int)p.h;
  *channels = p.channels;
  return 0;
}
