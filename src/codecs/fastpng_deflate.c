/* fastpng_deflate.c: fastpng's deflate encoder (RFC 1951): Huffman codes built for each block,
 * run-length matches only (distance 1, as zlib's Z_RLE strategy), stored blocks where those are
 * smaller. */
#include "fastpng_deflate.h"

#include <pthread.h>
#include <stdlib.h>

#include "base.h"

/* deflate limits: Huffman code lengths of the literal/length and distance alphabets, and of
 * the code-length alphabet; the longest match; the largest stored block. */
#define MAX_BITS 15
#define MAX_CL_BITS 7
#define MAX_MATCH 258
#define MAX_STORED 65535u

#define RUN_AT_BITS 18
_Static_assert(BLOCK_BYTES <= 1u << RUN_AT_BITS, "a run's start fits its bits");

static uint32_t load32le(const uint8_t *p)
{
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
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

#define RUN_AT_BITS 18
_Static_assert(BLOCK_BYTES <= 1u << RUN_AT_BITS, "a run's start fits its bits");

static uint32_t run_at(gpuimg_deflate_run_t r)
{
  return r & ((1u << RUN_AT_BITS) - 1);
}

static uint32_t run_len(gpuimg_deflate_run_t r)
{
  return (r >> RUN_AT_BITS) + 3;
}

size_t gpuimg_deflate_max_runs(size_t n)
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

/* The runs of data[0..n) into runs (at most gpuimg_deflate_max_runs(n)), counting the symbols in
 * lit_freq (286); returns how many. A byte that repeats the one before it at least 3 times starts a
 * match (as zlib's Z_RLE): the longest run from there, up to MAX_MATCH. Literals are counted
 * in four tables by position and summed at the end: filtered photos repeat the same few
 * values, and one table would make each count wait for the last. Eight bytes at a time: a word
 * tells at once that none of the next five positions starts a run (the common case on
 * photographs), and a run is extended a word at a time; the runs are those of the
 * byte-by-byte rule. */
GPUIMG_CPU_CLONES static size_t find_runs(const uint8_t *data, size_t n, gpuimg_deflate_run_t *runs,
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
      runs[nruns++] = (gpuimg_deflate_run_t)(i | (run - 3) << RUN_AT_BITS);
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

void gpuimg_deflate_stored(gpuimg_bit_writer_t *w, const uint8_t *data, size_t n, int last)
{
  do {
    size_t k = n < MAX_STORED ? n : MAX_STORED;
    gpuimg_bits_put(w, last && k == n ? 1 : 0, 3);
    gpuimg_bits_align(w);
    uint8_t hdr[4] = {(uint8_t)k, (uint8_t)(k >> 8), (uint8_t)~k, (uint8_t)(~k >> 8)};
    gpuimg_bits_put_bytes(w, hdr, 4);
    gpuimg_bits_put_bytes(w, data, k);
    data += k;
    n -= k;
  } while (n > 0);
}

size_t gpuimg_deflate_stored_bytes(size_t n)
{
  return n + 5 * (n ? (n - 1) / MAX_STORED + 1 : 1);
}

/* The literals data[0..n) with the literal/length code (code, lens), three to a put (45
 * bits at most). */
GPUIMG_CPU_CLONES static void put_literals(gpuimg_bit_writer_t *w, const uint8_t *data, size_t n,
                                           const uint16_t *code, const uint8_t *lens)
{
  size_t k = 0;
  for (; k + 3 <= n; k += 3) {
    uint8_t a = data[k], b = data[k + 1], c = data[k + 2];
    gpuimg_bits_put(
        w, code[a] | (uint64_t)code[b] << lens[a] | (uint64_t)code[c] << (lens[a] + lens[b]),
        (unsigned)lens[a] + lens[b] + lens[c]);
  }
  for (; k < n; k++)
    gpuimg_bits_put(w, code[data[k]], lens[data[k]]);
}

/* A block's data[0..n), its nruns runs as matches and the rest as literals, with the
 * literal/length code (code, lens), then its end. */
GPUIMG_CPU_CLONES static void put_data(gpuimg_bit_writer_t *w, const uint8_t *data, size_t n,
                                       const gpuimg_deflate_run_t *runs, size_t nruns,
                                       const uint16_t *code, const uint8_t *lens)
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
    gpuimg_bits_put(w, match_code[len], match_bits[len]);
    i = at + len;
  }
  put_literals(w, data + i, n - i, code, lens);
  gpuimg_bits_put(w, code[256], lens[256]);
}

/* gpuimg_deflate_block() with the runs find_runs() finds. */
GPUIMG_CPU_CLONES static void put_block(gpuimg_bit_writer_t *w, const uint8_t *data, size_t n,
                                        gpuimg_deflate_run_t *runs, int last)
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
  if (bits / 8 + 1 >= gpuimg_deflate_stored_bytes(n)) {
    gpuimg_deflate_stored(w, data, n, last);
    return;
  }

  gpuimg_bits_put(w, (last ? 1u : 0u) | 2u << 1, 3);
  gpuimg_bits_put(w, (uint64_t)(nlit - 257) | (uint64_t)(2 - 1) << 5 | (uint64_t)(ncl - 4) << 10,
                  14);
  for (int k = 0; k < ncl; k++)
    gpuimg_bits_put(w, cl_len[cl_order[k]], 3);
  for (int k = 0; k < cl.n; k++) {
    int s = cl.sym[k];
    gpuimg_bits_put(w, (uint64_t)cl_code[s] | (uint64_t)cl.extra[k] << cl_len[s],
                    (unsigned)cl_len[s] + cl_extra_bits[s]);
  }
  put_data(w, data, n, runs, matches, code, lens);
}

void gpuimg_deflate_init(void)
{
  pthread_once(&length_once, length_init);
}

void gpuimg_deflate_block(gpuimg_bit_writer_t *w, const uint8_t *data, size_t n,
                          gpuimg_deflate_run_t *runs, int last)
{
  put_block(w, data, n, runs, last);
}
