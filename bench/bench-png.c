/* bench-png.c: fastpng's parts (Paeth filter, CRC-32, Adler-32, deflate) against zlib's and
 * libdeflate's on one image, single-threaded, in MB/s of filtered data. Built and run by
 * bench/bench-png; it includes fastpng.c itself to reach the static functions it times. */
#define STB_IMAGE_IMPLEMENTATION
#define STBI_ONLY_PNG
#include <stb/stb_image.h>

/* fastpng.c's own codec under another name: the library's (as built) is the one timed whole. */
#define gpuimg_codec_fastpng bench_codec_fastpng
#include "../src/codecs/fastpng.c"
#undef gpuimg_codec_fastpng
extern const gpuimg_codec_t gpuimg_codec_fastpng; /* codec.h's, hidden by the define above */

#include <libdeflate.h>
#include <stdio.h>
#include <zlib.h>

/* ---- fastpng's own CRC-32 and Adler-32 until zlib's replaced them (commit 213eb0a) ---- */

/* crc_table[k][b]: the CRC of byte b followed by k zero bytes (slicing by 8). */
static uint32_t crc_table[8][256];

static void crc_init(void)
{
  for (uint32_t n = 0; n < 256; n++) {
    uint32_t c = n;
    for (int k = 0; k < 8; k++)
      c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
    crc_table[0][n] = c;
  }
  for (int k = 1; k < 8; k++)
    for (int n = 0; n < 256; n++)
      crc_table[k][n] = (crc_table[k - 1][n] >> 8) ^ crc_table[0][crc_table[k - 1][n] & 0xff];
}

static uint32_t old_crc32(uint32_t crc, const uint8_t *p, size_t n)
{
  crc = ~crc;
  for (; n >= 8; p += 8, n -= 8) {
    uint32_t a = crc ^ load32le(p), b = load32le(p + 4);
    crc = crc_table[7][a & 0xff] ^ crc_table[6][(a >> 8) & 0xff] ^ crc_table[5][(a >> 16) & 0xff] ^
          crc_table[4][a >> 24] ^ crc_table[3][b & 0xff] ^ crc_table[2][(b >> 8) & 0xff] ^
          crc_table[1][(b >> 16) & 0xff] ^ crc_table[0][b >> 24];
  }
  while (n--)
    crc = crc_table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
  return ~crc;
}

/* Adler-32, with the sums reduced every 5552 bytes (the most that cannot overflow 32 bits). */
static uint32_t old_adler32(uint32_t adler, const uint8_t *p, size_t n)
{
  uint32_t a = adler & 0xffff, b = adler >> 16;
  while (n) {
    size_t k = n < 5552 ? n : 5552;
    n -= k;
    for (; k >= 4; k -= 4, p += 4) {
      a += p[0];
      b += a;
      a += p[1];
      b += a;
      a += p[2];
      b += a;
      a += p[3];
      b += a;
    }
    while (k--) {
      a += *p++;
      b += a;
    }
    a %= 65521;
    b %= 65521;
  }
  return b << 16 | a;
}

/* ---- the benchmark ---- */

static int reps = 5;

/* The best of reps runs of fn(arg), in ms. */
static double best_ms(void (*fn)(void *), void *arg)
{
  double best = 1e30;
  for (int r = 0; r < reps; r++) {
    double t0 = gpuimg_now_ms();
    fn(arg);
    double t = gpuimg_now_ms() - t0;
    best = t < best ? t : best;
  }
  return best;
}

typedef struct {
  const gpuimg_image_t *img;
  uint8_t *filtered;
  size_t n;
  uint32_t sum;
  size_t out_bytes;
  uint8_t *out;
  size_t cap;
  int level;
} job_t;

/* The filtered rows, as fastpng filters them at level 1. */
static void filter_image(const gpuimg_image_t *img, uint8_t *filtered)
{
  size_t stride = (size_t)img->width * (size_t)img->channels;
  for (size_t y = 0; y < (size_t)img->height; y++) {
    const uint8_t *row = img->data + y * stride;
    filter_row(row, y ? row - stride : NULL, stride, img->channels, 1, filtered + y * (stride + 1));
  }
}

/* zlib's checksum fn (crc32 or adler32) over n bytes, in calls of at most 1 GiB. */
static uint32_t zlib_sum(uLong (*fn)(uLong, const Bytef *, uInt), const uint8_t *p, size_t n)
{
  uLong sum = fn(0, Z_NULL, 0);
  for (size_t off = 0; off < n; off += 1u << 30)
    sum = fn(sum, p + off, (uInt)(n - off < (1u << 30) ? n - off : 1u << 30));
  return (uint32_t)sum;
}

static void run_crc_own(void *arg)
{
  job_t *j = arg;
  j->sum = old_crc32(0, j->filtered, j->n);
}
static void run_crc_zlib(void *arg)
{
  job_t *j = arg;
  j->sum = zlib_sum(crc32, j->filtered, j->n);
}
static void run_crc_deflate(void *arg)
{
  job_t *j = arg;
  j->sum = libdeflate_crc32(0, j->filtered, j->n);
}
static void run_adler_own(void *arg)
{
  job_t *j = arg;
  j->sum = old_adler32(1, j->filtered, j->n);
}
static void run_adler_zlib(void *arg)
{
  job_t *j = arg;
  j->sum = zlib_sum(adler32, j->filtered, j->n);
}
static void run_adler_deflate(void *arg)
{
  job_t *j = arg;
  j->sum = libdeflate_adler32(1, j->filtered, j->n);
}

/* fastpng's deflate (blocks of BLOCK_BYTES, as the encoder cuts them). */
static void run_deflate_own(void *arg)
{
  job_t *j = arg;
  gpuimg_buf_t buf = {0};
  run_t *runs = malloc(max_runs(BLOCK_BYTES) * sizeof *runs);
  reserve(&buf, stored_bytes(j->n) + 64);
  bit_writer_t w = {.out = &buf};
  for (size_t off = 0; off < j->n; off += BLOCK_BYTES) {
    size_t k = j->n - off < BLOCK_BYTES ? j->n - off : BLOCK_BYTES;
    put_block(&w, j->filtered + off, k, runs, off + k == j->n);
  }
  align_bits(&w);
  j->out_bytes = buf.size;
  free(runs);
  gpuimg_buf_free(&buf);
}

/* libdeflate's zlib stream of the whole buffer at j->level. */
static void run_deflate_libdeflate(void *arg)
{
  job_t *j = arg;
  struct libdeflate_compressor *c = libdeflate_alloc_compressor(j->level);
  j->out_bytes = libdeflate_zlib_compress(c, j->filtered, j->n, j->out, j->cap);
  libdeflate_free_compressor(c);
}

/* zlib at j->level with the run-length strategy (libpng's setting at levels 1..3). */
static void run_deflate_zlib(void *arg)
{
  job_t *j = arg;
  z_stream z = {0};
  deflateInit2(&z, j->level, Z_DEFLATED, 15, 8, Z_RLE);
  z.next_in = j->filtered;
  z.next_out = j->out;
  size_t left = j->n;
  z.avail_out = (uInt)(j->cap < (1u << 30) ? j->cap : 1u << 30);
  int rc;
  do {
    uInt k = left < (1u << 30) ? (uInt)left : 1u << 30;
    z.avail_in = k;
    left -= k;
    rc = deflate(&z, left ? Z_NO_FLUSH : Z_FINISH);
  } while (left || rc == Z_OK);
  j->out_bytes = z.total_out;
  deflateEnd(&z);
}

static void run_encode(void *arg)
{
  job_t *j = arg;
  gpuimg_buf_t buf = {0};
  gpuimg_encode_opts_t eo = {.png_level = 1};
  gpuimg_codec_fastpng.encode(j->img, GPUIMG_FORMAT_PNG, &eo, "bench", &buf);
  j->out_bytes = buf.size;
  gpuimg_buf_free(&buf);
}

static void row(const char *what, job_t *j, void (*fn)(void *), int size)
{
  double ms = best_ms(fn, j);
  printf("| %s | %.1f | %.0f |", what, ms, (double)j->n / 1e6 / (ms / 1e3));
  if (size)
    printf(" %zu |\n", j->out_bytes);
  else
    printf(" %08x |\n", j->sum);
}

int main(int argc, char **argv)
{
  if (argc < 2) {
    fprintf(stderr, "usage: bench-png IMAGE.png [REPS]\n");
    return 2;
  }
  if (argc > 2)
    reps = atoi(argv[2]);
  gpuimg_image_t img = {0};
  img.data = stbi_load(argv[1], &img.width, &img.height, &img.channels, 0);
  if (!img.data) {
    fprintf(stderr, "bench-png: %s: cannot read\n", argv[1]);
    return 1;
  }
  crc_init();
  pthread_once(&length_once, length_init);
  job_t j = {.img = &img};
  j.n = ((size_t)img.width * img.channels + 1) * img.height;
  j.filtered = malloc(j.n);
  filter_image(&img, j.filtered);
  j.cap = j.n + j.n / 8 + 4096;
  j.out = malloc(j.cap);
  printf("%s: %dx%d, %d channels, %zu bytes filtered; best of %d\n\n", argv[1], img.width,
         img.height, img.channels, j.n, reps);
  printf("| part | ms | MB/s | result |\n|---|--:|--:|--:|\n");
  row("CRC-32, fastpng's slicing-by-8 (until 213eb0a)", &j, run_crc_own, 0);
  row("CRC-32, zlib " ZLIB_VERSION, &j, run_crc_zlib, 0);
  row("CRC-32, libdeflate " LIBDEFLATE_VERSION_STRING, &j, run_crc_deflate, 0);
  row("Adler-32, fastpng's unrolled (until 213eb0a)", &j, run_adler_own, 0);
  row("Adler-32, zlib", &j, run_adler_zlib, 0);
  row("Adler-32, libdeflate", &j, run_adler_deflate, 0);
  row("deflate, fastpng (run-length, 256 KiB blocks)", &j, run_deflate_own, 1);
  for (j.level = 1; j.level <= 2; j.level++) {
    char what[64];
    snprintf(what, sizeof what, "deflate, zlib level %d, Z_RLE", j.level);
    row(what, &j, run_deflate_zlib, 1);
    snprintf(what, sizeof what, "deflate, libdeflate level %d", j.level);
    row(what, &j, run_deflate_libdeflate, 1);
  }
  row("whole encode, the library's fastpng, level 1, 1 thread", &j, run_encode, 1);
  return 0;
}
