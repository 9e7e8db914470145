/* fastpng.c: gpuimg's own PNG writer (--codec fastpng, and --codec auto at
 * --png-level 0 and 1), and the codec's declaration (its reader is fastpng_read.c). Lossless,
 * 8-bit, 1 to 4 channels; the checksums are zlib's (or libdeflate's), the rest is its own.
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

#include "pool.h"

#include <pthread.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#ifdef GPUIMG_HAVE_LIBDEFLATE
#include <libdeflate.h>
#endif

/* Bytes of filtered rows per deflate block and per IDAT chunk, at most. */
#define BLOCK_BYTES (256u * 1024u)
/* deflate limits: Huffman code lengths of the literal/length and distance alphabets, and of
 * the code-length alphabet; the longest match; the largest stored block. */
#define MAX_BITS 15
#define MAX_CL_BITS 7
#define MAX_MATCH 258
#define MAX_STORED 65535u

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

static uint32_t load32le(const uint8_t *p)
{
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* ---- output: a bit writer straight into the buffer ----------------------------------- */

/* Bits go out least significant first (RFC 1951 3.1.1). After each put the whole bytes are
 * stored, 8 at a time (the buffer keeps 8 bytes of slack past size: see reserve()), so at
 * most 7 bits wait and one put may carry up to 57 bits. */
typedef struct {
  gpuimg_buf_t *out;
  uint64_t bits;
  unsigned nbits;
} bit_writer_t;

/* Makes room for n more bytes plus the writer's 8 bytes of slack. */
static int reserve(gpuimg_buf_t *buf, size_t n)
{
  return n > SIZE_MAX - 8 ? -1 : gpuimg_buf_reserve(buf, n + 8);
}

static inline void put_bits(bit_writer_t *w, uint64_t value, unsigned n)
{
  uint64_t v = w->bits | value << w->nbits;
  uint8_t *p = w->out->data + w->out->size;
  unsigned nbits = w->nbits + n, bytes = nbits >> 3;
  for (int k = 0; k < 8; k++)
    p[k] = (uint8_t)(v >> (8 * k));
  w->out->size += bytes;
  w->bits = bytes == 8 ? 0 : v >> (bytes * 8);
  w->nbits = nbits & 7;
}

/* Pads the waiting bits with zeros to a byte boundary and stores them. */
static void align_bits(bit_writer_t *w)
{
  if (w->nbits > 0)
    w->out->data[w->out->size++] = (uint8_t)w->bits;
  w->bits = 0;
  w->nbits = 0;
}

static void put_bytes(bit_writer_t *w, const void *bytes, size_t n)
{
  memcpy(w->out->data + w->out->size, bytes, n);
  w->out->size += n;
}

static void put_be32(bit_writer_t *w, uint32_t v)
{
  uint8_t b[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};
  put_bytes(w, b, 4);
}

/* ---- Huffman codes ------------------------------------------------------------------ */

/* Code lengths (at most limit bits) for n symbols of the given frequencies; a symbol of
 * frequency 0 gets length 0. The code is always complete, as zlib's inflate requires:
 * a lone used symbol is paired with a second one. Huffman's algorithm with two queues over
 * the leaves in increasing frequency; when the tree is deeper than limit, the frequencies
 * are halved (rare symbols meet the common ones sooner) and the tree built again. */
typedef struct {
  uint32_t freq;
  uint16_t sym;
} leaf_t;

static int leaf_cmp(const void *a, const void *b)
{
  const leaf_t *x = a, *y = b;
  if (x->freq != y->freq)
    return x->freq < y->freq ? -1 : 1;
  return (int)x->sym - (int)y->sym;
}

static void huffman_lengths(const uint32_t *freq_in, int n, int limit, uint8_t *len)
{
  uint32_t freq[320];
  leaf_t leaf[320];
  uint32_t weight[640];
  uint16_t parent[640];
  uint8_t depth[640];
  int m = 0;

  memset(len, 0, (size_t)n);
  for (int s = 0; s < n; s++)
    freq[s] = freq_in[s];
  for (int s = 0; s < n; s++)
    m += freq[s] > 0;
  if (m < 2) {
    /* Two codes of one bit: the used symbol (if any) and another. */
    int used = 0;
    for (int s = 0; s < n; s++)
      if (freq[s])
        used = s;
    len[used] = 1;
    len[used == 0 ? 1 : 0] = 1;
    return;
  }
  for (;;) {
    m = 0;
    for (int s = 0; s < n; s++)
      if (freq[s])
        leaf[m++] = (leaf_t){freq[s], (uint16_t)s};
    qsort(leaf, (size_t)m, sizeof *leaf, leaf_cmp);
    for (int k = 0; k < m; k++)
      weight[k] = leaf[k].freq;
    /* Internal node k (m <= k < 2m-1) joins the two lightest of the unused leaves (i) and
     * the unused internal nodes (j); internal nodes are made in increasing weight. */
    int i = 0, j = m;
    for (int k = m; k < 2 * m - 1; k++) {
      int pick[2];
      for (int t = 0; t < 2; t++)
        pick[t] = i < m && (j >= k || weight[i] <= weight[j]) ? i++ : j++;
      weight[k] = weight[pick[0]] + weight[pick[1]];
      parent[pick[0]] = parent[pick[1]] = (uint16_t)k;
    }
    int deepest = 0;
    depth[2 * m - 2] = 0;
    for (int k = 2 * m - 3; k >= 0; k--) {
      depth[k] = (uint8_t)(depth[parent[k]] + 1);
      if (depth[k] > deepest)
        deepest = depth[k];
    }
    if (deepest <= limit) {
      for (int k = 0; k < m; k++)
        len[leaf[k].sym] = depth[k];
      return;
    }
    for (int s = 0; s < n; s++)
      if (freq[s])
        freq[s] = (freq[s] >> 1) | 1;
  }
}

/* Canonical codes for the lengths (RFC 1951 3.2.2), bit-reversed because the bit writer
 * sends least significant first while Huffman codes go most significant first. */
static void huffman_codes(const uint8_t *len, int n, uint16_t *code)
{
  uint16_t count[MAX_BITS + 1] = {0}, next[MAX_BITS + 1];
  for (int s = 0; s < n; s++)
    count[len[s]]++;
  count[0] = 0;
  uint16_t c = 0;
  for (int b = 1; b <= MAX_BITS; b++) {
    c = (uint16_t)((c + count[b - 1]) << 1);
    next[b] = c;
  }
  for (int s = 0; s < n; s++) {
    if (!len[s]) {
      code[s] = 0;
      continue;
    }
    uint16_t v = next[len[s]]++, r = 0;
    for (int b = 0; b < len[s]; b++, v >>= 1)
      r = (uint16_t)(r << 1 | (v & 1));
    code[s] = r;
  }
}

/* ---- deflate blocks ----------------------------------------------------------------- */

/* Length symbols: for each match length 3..258, its symbol (257..285), the number of extra
 * bits and their value (RFC 1951 3.2.5). */
typedef struct {
  uint16_t sym[MAX_MATCH + 1];
  uint8_t extra_bits[MAX_MATCH + 1];
  uint8_t extra[MAX_MATCH + 1];
} length_table_t;

static length_table_t length_table;
static pthread_once_t length_once = PTHREAD_ONCE_INIT;

static void length_init(void)
{
  static const uint16_t base[29] = {3,  4,  5,  6,  7,  8,  9,  10, 11,  13,  15,  17,  19,  23, 27,
                                    31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258};
  static const uint8_t bits[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                   2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
  for (int s = 0; s < 29; s++) {
    int last = s == 28 ? MAX_MATCH : base[s] + (1 << bits[s]) - 1;
    if (s == 27)
      last = 257; /* 258 has a symbol of its own */
    for (int l = base[s]; l <= last; l++) {
      length_table.sym[l] = (uint16_t)(257 + s);
      length_table.extra_bits[l] = bits[s];
      length_table.extra[l] = (uint8_t)(l - base[s]);
    }
  }
}

/* A block's matches, in order: each a copy of len (3..258) bytes at distance 1 (a run of the
 * byte before) starting at data[at], packed as at | (len - 3) << 18 (a block is at most
 * 2^18 bytes); the bytes between them are literals. Photographs have few, so the literals are
 * not copied anywhere: they are coded straight from the data. */
typedef uint32_t run_t;
#define RUN_AT_BITS 18
_Static_assert(BLOCK_BYTES <= 1u << RUN_AT_BITS, "a run's start fits its bits");

static uint32_t run_at(run_t r)
{
  return r & ((1u << RUN_AT_BITS) - 1);
}

static uint32_t run_len(run_t r)
{
  return (r >> RUN_AT_BITS) + 3;
}

/* The most runs a block of n bytes can have (each covers at least 3 bytes). */
static size_t max_runs(size_t n)
{
  return n / 3 + 1;
}

static inline uint64_t load64le(const uint8_t *p)
{
  uint64_t v;
  memcpy(&v, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  v = __builtin_bswap64(v);
#endif
  return v;
}

/* The high bit of each byte of x set where that byte is 0. */
static inline uint64_t zero_bytes(uint64_t x)
{
  const uint64_t low7 = 0x7f7f7f7f7f7f7f7fULL;
  return ~(((x & low7) + low7) | x) & ~low7;
}

/* Whether one of positions i .. i+4 starts a run: data[k-1..k+2] equal for some k there
 * (reads data[i-1 .. i+6]). */
static inline int run_ahead(const uint8_t *data, size_t i)
{
  uint64_t w = load64le(data + i - 1);
  uint64_t eq = zero_bytes(w ^ (w >> 8)); /* byte k: data[i-1+k] == data[i+k], k = 0..6 */
  return (eq & eq >> 8 & eq >> 16 & 0x0000008080808080ULL) != 0;
}

/* The length of the run of v from data[i] (at least 3, known equal), at most max. */
static inline size_t run_length(const uint8_t *data, size_t i, uint8_t v, size_t max)
{
  const uint64_t pattern = 0x0101010101010101ULL * v;
  size_t run = 3;
  for (; run + 8 <= max; run += 8) {
    uint64_t x = load64le(data + i + run) ^ pattern;
    if (x)
      return run + (size_t)__builtin_ctzll(x) / 8;
  }
  while (run < max && data[i + run] == v)
    run++;
  return run;
}

/* The runs of data[0..n) into runs (at most max_runs(n)), counting the symbols in lit_freq
 * (286); returns how many. A byte that repeats the one before it at least 3 times starts a
 * match (as zlib's Z_RLE): the longest run from there, up to MAX_MATCH. Literals are counted
 * in four tables by position and summed at the end: filtered photos repeat the same few
 * values, and one table would make each count wait for the last. Eight bytes at a time: a word
 * tells at once that none of the next five positions starts a run (the common case on
 * photographs), and a run is extended a word at a time; the runs are those of the
 * byte-by-byte rule. */
GPUIMG_CPU_CLONES static size_t find_runs(const uint8_t *data, size_t n, run_t *runs,
                                          uint32_t *lit_freq)
{
  uint32_t part[4][256];
  size_t nruns = 0, i = 0;
  memset(part, 0, sizeof part);
  /* The first byte can only be a literal. */
  if (n > 0) {
    part[0][data[0]]++;
    i = 1;
  }
  while (i < n) {
    if (i + 7 <= n && !run_ahead(data, i)) {
      for (int k = 0; k < 5; k++, i++)
        part[i & 3][data[i]]++;
      continue;
    }
    uint8_t v = data[i];
    if (i + 3 <= n && load32le(data + i - 1) == 0x01010101u * data[i - 1]) {
      size_t run = run_length(data, i, v, n - i < MAX_MATCH ? n - i : MAX_MATCH);
      runs[nruns++] = (run_t)(i | (run - 3) << RUN_AT_BITS);
      lit_freq[length_table.sym[run]]++;
      i += run;
    } else {
      part[i & 3][v]++;
      i++;
    }
  }
  for (int v = 0; v < 256; v++)
    lit_freq[v] += part[0][v] + part[1][v] + part[2][v] + part[3][v];
  return nruns;
}

/* The order in which the code-length code's lengths are sent (RFC 1951 3.2.7). */
static const uint8_t cl_order[19] = {16, 17, 18, 0, 8,  7, 9,  6, 10, 5,
                                     11, 4,  12, 3, 13, 2, 14, 1, 15};

/* The code lengths of a dynamic block, run-length coded with symbols 16 (repeat the previous
 * length 3..6 times), 17 (3..10 zeros) and 18 (11..138 zeros). */
typedef struct {
  uint8_t sym[320];
  uint8_t extra[320];
  int n;
} cl_tokens_t;

static void cl_add(cl_tokens_t *c, int sym, int extra)
{
  c->sym[c->n] = (uint8_t)sym;
  c->extra[c->n++] = (uint8_t)extra;
}

static void cl_encode(const uint8_t *lens, int n, cl_tokens_t *c)
{
  c->n = 0;
  for (int i = 0; i < n;) {
    int l = lens[i], run = 1;
    while (i + run < n && lens[i + run] == l)
      run++;
    i += run;
    if (l == 0) {
      for (; run >= 11; run -= run < 138 ? run : 138)
        cl_add(c, 18, (run < 138 ? run : 138) - 11);
      if (run >= 3) {
        cl_add(c, 17, run - 3);
        run = 0;
      }
    } else {
      cl_add(c, l, 0);
      run--;
      for (; run >= 3; run -= run < 6 ? run : 6)
        cl_add(c, 16, (run < 6 ? run : 6) - 3);
    }
    for (; run > 0; run--)
      cl_add(c, l, 0);
  }
}

/* Stored blocks for data[0..n): no compression (the final one has BFINAL if last). */
static void put_stored(bit_writer_t *w, const uint8_t *data, size_t n, int last)
{
  do {
    size_t k = n < MAX_STORED ? n : MAX_STORED;
    put_bits(w, last && k == n ? 1 : 0, 3);
    align_bits(w);
    uint8_t hdr[4] = {(uint8_t)k, (uint8_t)(k >> 8), (uint8_t)~k, (uint8_t)(~k >> 8)};
    put_bytes(w, hdr, 4);
    put_bytes(w, data, k);
    data += k;
    n -= k;
  } while (n > 0);
}

static size_t stored_bytes(size_t n)
{
  return n + 5 * (n ? (n - 1) / MAX_STORED + 1 : 1);
}

/* The literals data[0..n) with the literal/length code (code, lens), three to a put (45
 * bits at most). */
GPUIMG_CPU_CLONES static void put_literals(bit_writer_t *w, const uint8_t *data, size_t n,
                                           const uint16_t *code, const uint8_t *lens)
{
  size_t k = 0;
  for (; k + 3 <= n; k += 3) {
    uint8_t a = data[k], b = data[k + 1], c = data[k + 2];
    put_bits(w, code[a] | (uint64_t)code[b] << lens[a] | (uint64_t)code[c] << (lens[a] + lens[b]),
             (unsigned)lens[a] + lens[b] + lens[c]);
  }
  for (; k < n; k++)
    put_bits(w, code[data[k]], lens[data[k]]);
}

/* A block's data[0..n), its nruns runs as matches and the rest as literals, with the
 * literal/length code (code, lens), then its end. */
GPUIMG_CPU_CLONES static void put_data(bit_writer_t *w, const uint8_t *data, size_t n,
                                       const run_t *runs, size_t nruns, const uint16_t *code,
                                       const uint8_t *lens)
{
  /* A match of length l: its length symbol, the extra bits, then distance code 0 (one bit,
   * 0), as one put. */
  uint32_t match_code[MAX_MATCH + 1];
  uint8_t match_bits[MAX_MATCH + 1];
  if (nruns)
    for (int l = 3; l <= MAX_MATCH; l++) {
      int s = length_table.sym[l];
      match_code[l] = code[s] | (uint32_t)length_table.extra[l] << lens[s];
      match_bits[l] = (uint8_t)(lens[s] + length_table.extra_bits[l] + 1);
    }
  size_t i = 0;
  for (size_t r = 0; r < nruns; r++) {
    uint32_t at = run_at(runs[r]), len = run_len(runs[r]);
    put_literals(w, data + i, at - i, code, lens);
    put_bits(w, match_code[len], match_bits[len]);
    i = at + len;
  }
  put_literals(w, data + i, n - i, code, lens);
  put_bits(w, code[256], lens[256]);
}

/* One dynamic-Huffman block for data[0..n) with the runs find_runs() finds, or stored blocks
 * when those would be smaller. runs has room for max_runs(n). */
GPUIMG_CPU_CLONES static void put_block(bit_writer_t *w, const uint8_t *data, size_t n, run_t *runs,
                                        int last)
{
  static const uint8_t cl_extra_bits[19] = {[16] = 2, [17] = 3, [18] = 7};
  uint32_t lit_freq[286] = {0};
  size_t matches = find_runs(data, n, runs, lit_freq);
  lit_freq[256] = 1;

  uint8_t lens[286];
  uint16_t code[286];
  huffman_lengths(lit_freq, 286, MAX_BITS, lens);
  huffman_codes(lens, 286, code);
  int nlit = 286;
  while (nlit > 257 && !lens[nlit - 1])
    nlit--;
  /* The code lengths sent: the literal/length code's, then the distance code's. Distance 1
   * is the only one used: two distance codes of one bit (a complete code), code 0 used. */
  uint8_t seq[286 + 2];
  memcpy(seq, lens, (size_t)nlit);
  seq[nlit] = seq[nlit + 1] = 1;
  cl_tokens_t cl;
  cl_encode(seq, nlit + 2, &cl);
  uint32_t cl_freq[19] = {0};
  for (int k = 0; k < cl.n; k++)
    cl_freq[cl.sym[k]]++;
  uint8_t cl_len[19];
  uint16_t cl_code[19];
  huffman_lengths(cl_freq, 19, MAX_CL_BITS, cl_len);
  huffman_codes(cl_len, 19, cl_code);
  int ncl = 19;
  while (ncl > 4 && !cl_len[cl_order[ncl - 1]])
    ncl--;

  /* The block's exact size in bits, to compare with storing the data. */
  uint64_t bits = 3 + 5 + 5 + 4 + 3 * (uint64_t)ncl;
  for (int k = 0; k < cl.n; k++)
    bits += cl_len[cl.sym[k]] + cl_extra_bits[cl.sym[k]];
  for (int s = 0; s < 286; s++)
    bits += (uint64_t)lit_freq[s] * lens[s];
  for (int s = 265; s < 285; s++)
    bits += (uint64_t)lit_freq[s] * (unsigned)((s - 261) / 4);
  bits += matches; /* one bit of distance code each */
  if (bits / 8 + 1 >= stored_bytes(n)) {
    put_stored(w, data, n, last);
    return;
  }

  put_bits(w, (last ? 1u : 0u) | 2u << 1, 3);
  put_bits(w, (uint64_t)(nlit - 257) | (uint64_t)(2 - 1) << 5 | (uint64_t)(ncl - 4) << 10, 14);
  for (int k = 0; k < ncl; k++)
    put_bits(w, cl_len[cl_order[k]], 3);
  for (int k = 0; k < cl.n; k++) {
    int s = cl.sym[k];
    put_bits(w, (uint64_t)cl_code[s] | (uint64_t)cl.extra[k] << cl_len[s],
             (unsigned)cl_len[s] + cl_extra_bits[s]);
  }
  put_data(w, data, n, runs, matches, code, lens);
}

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
static size_t chunk_begin(bit_writer_t *w, const char *type)
{
  size_t at = w->out->size;
  put_be32(w, 0);
  put_bytes(w, type, 4);
  return at;
}

/* Ends the chunk begun at offset at: its length, then the CRC of its type and data. */
static void chunk_end(bit_writer_t *w, size_t at)
{
  uint8_t *p = w->out->data + at;
  size_t len = w->out->size - at - 8;
  p[0] = (uint8_t)(len >> 24);
  p[1] = (uint8_t)(len >> 16);
  p[2] = (uint8_t)(len >> 8);
  p[3] = (uint8_t)len;
  put_be32(w, crc_update(0, p + 4, len + 4));
}

/* A slice's filtered rows (n bytes) in pieces of at most BLOCK_BYTES (several only when one
 * row is longer): one IDAT chunk and one deflate block each (stored at level 0). The zlib
 * header goes before the image's first piece (first). Within a slice the bits of a chunk's
 * last byte may wait for the next chunk; the slice then ends on a byte, padded as zlib's sync
 * flush does with an empty stored block when its last block does not, so that each slice's
 * bytes can be made on their own; the image's last block (last) has BFINAL. 0, or -1 when out
 * of memory. */
static int put_slice(bit_writer_t *w, const uint8_t *filtered, size_t n, run_t *runs, int level,
                     int first, int last)
{
  for (size_t off = 0; off < n;) {
    size_t k = n - off < BLOCK_BYTES ? n - off : BLOCK_BYTES;
    int at_end = off + k == n;
    /* Worst case: stored blocks, plus the chunk's 12 bytes, the zlib header and padding. */
    if (reserve(w->out, stored_bytes(k) + 64))
      return -1;
    size_t at = chunk_begin(w, "IDAT");
    if (first && off == 0)
      put_bytes(w, (const uint8_t[]){0x78, 0x01}, 2); /* deflate, 32K window, fastest */
    if (level)
      put_block(w, filtered + off, k, runs, last && at_end);
    else
      put_stored(w, filtered + off, k, last && at_end);
    if (at_end && !last && w->nbits > 0)
      put_stored(w, filtered, 0, 0); /* empty: its header pads to a byte (a sync flush) */
    if (at_end)
      align_bits(w);
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
  run_t *runs =
      e->level ? malloc(max_runs(n < BLOCK_BYTES ? n : BLOCK_BYTES) * sizeof *runs) : NULL;
  bit_writer_t w = {.out = dst};
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
static void put_header(bit_writer_t *w, const gpuimg_image_t *img)
{
  static const uint8_t color_types[5] = {0, 0, 4, 2, 6};
  static const uint8_t signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  put_bytes(w, signature, 8);
  size_t at = chunk_begin(w, "IHDR");
  put_be32(w, (uint32_t)img->width);
  put_be32(w, (uint32_t)img->height);
  uint8_t ihdr[5] = {8, color_types[img->channels], 0, 0, 0};
  put_bytes(w, ihdr, 5);
  chunk_end(w, at);
}

/* The zlib stream's Adler-32 (combined from the slices') in an IDAT chunk of its own (the
 * slices are compressed before it is known), then IEND. */
static void put_trailer(bit_writer_t *w, const encoding_t *e)
{
  uint32_t adler = e->slices[0].adler;
  for (int i = 1; i < e->nslices; i++)
    adler = (uint32_t)adler32_combine(adler, e->slices[i].adler, (z_off_t)e->slices[i].filtered);
  size_t at = chunk_begin(w, "IDAT");
  put_be32(w, adler);
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
  pthread_once(&length_once, length_init);

  encoding_t e = {.img = img, .level = opts->png_level == 0 ? 0 : 1, .what = what, .out = out};
  const size_t h = (size_t)img->height;
  e.stride = (size_t)img->width * (size_t)img->channels;
  e.row_bytes = e.stride + 1;
  e.slice_rows = slice_rows_of(e.stride, h);
  e.nslices = (int)((h + e.slice_rows - 1) / e.slice_rows);
  e.slices = calloc((size_t)e.nslices, sizeof *e.slices);
  bit_writer_t w = {.out = out};
  /* Room for a typical photograph's file at once; a larger one grows as it is written. */
  const size_t total = h * e.row_bytes;
  if (!e.slices || reserve(out, (e.level ? total / 2 : total) + 4096)) {
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
  if (rc == 0 && reserve(out, 64) < 0) {
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
