/* test_jpeg_bands.c: a JPEG whose restart intervals are whole rows of MCUs decodes in bands
 * on several threads to the bytes of one decode of the whole file: every sampling, partial
 * last rows and intervals, DCT scaling, an RGB (Adobe) file; intervals that do not start a
 * row, and damaged files, fail or succeed as the whole decode does. Files made here with
 * libjpeg. */
#include "codec.h"
#include "jpeg_layout.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>

static int failures;

static void fail(const char *fmt, const char *name, const char *detail)
{
  printf("FAIL %s: ", name);
  printf(fmt, detail);
  printf("\n");
  failures++;
}

typedef struct {
  const char *name;
  int w, h, nc;
  int hs, vs;       /* the first component's sampling (the others 1x1) */
  int restart_rows; /* restart_in_rows, or 0 */
  int restart_mcus; /* restart_interval in MCUs, or 0 */
  int rgb;          /* JCS_RGB with Adobe's marker */
  int bands;        /* the layout is expected to serve it */
} case_t;

/* A smooth image with some texture, so that every interval holds real data. */
static unsigned char *pixels(const case_t *c)
{
  unsigned char *p = malloc((size_t)c->w * c->h * c->nc);
  for (int y = 0; y < c->h; y++)
    for (int x = 0; x < c->w; x++)
      for (int k = 0; k < c->nc; k++)
        p[((size_t)y * c->w + x) * c->nc + k] =
            (unsigned char)((x * (k + 1) + y * (3 - k) + ((x * 7 ^ y * 13) & 31)) & 255);
  return p;
}

static unsigned char *encode(const case_t *c, unsigned long *size)
{
  struct jpeg_compress_struct ci;
  struct jpeg_error_mgr err;
  unsigned char *out = NULL, *img = pixels(c);
  ci.err = jpeg_std_error(&err);
  jpeg_create_compress(&ci);
  jpeg_mem_dest(&ci, &out, size);
  ci.image_width = (JDIMENSION)c->w;
  ci.image_height = (JDIMENSION)c->h;
  ci.input_components = c->nc;
  ci.in_color_space = c->nc == 1 ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_set_defaults(&ci);
  jpeg_set_quality(&ci, 90, TRUE);
  if (c->rgb)
    jpeg_set_colorspace(&ci, JCS_RGB);
  ci.comp_info[0].h_samp_factor = c->hs;
  ci.comp_info[0].v_samp_factor = c->vs;
  for (int k = 1; k < c->nc; k++)
    ci.comp_info[k].h_samp_factor = ci.comp_info[k].v_samp_factor = 1;
  ci.restart_in_rows = c->restart_rows;
  ci.restart_interval = (unsigned)c->restart_mcus;
  jpeg_start_compress(&ci, TRUE);
  size_t stride = (size_t)c->w * c->nc;
  while (ci.next_scanline < ci.image_height) {
    JSAMPROW row[1] = {img + ci.next_scanline * stride};
    jpeg_write_scanlines(&ci, row, 1);
  }
  jpeg_finish_compress(&ci);
  jpeg_destroy_compress(&ci);
  free(img);
  return out;
}

/* Decodes at threads threads: 0 with *img, or -1 with the error message in msg. */
static int decode(const unsigned char *f, unsigned long n, int threads, int r, gpuimg_image_t *img,
                  char *msg, size_t cap)
{
  const gpuimg_codec_t *jpeg = gpuimg_codec_find("libjpeg");
  gpuimg_codec_set_threads(threads);
  int rc = r > 1 ? jpeg->decode_reduced(f, n, "t.jpg", (uint64_t)1 << 40, r, img)
                 : jpeg->decode(f, n, "t.jpg", (uint64_t)1 << 40, img);
  snprintf(msg, cap, "%s", rc < 0 ? gpuimg_error_message() : "");
  gpuimg_error_clear();
  return rc;
}

/* The whole decode (1 thread) against 3 and 8 threads: the same verdict and bytes (a
 * failure when must_fail). */
static void compare(const char *name, const unsigned char *f, unsigned long n, int r, int must_fail)
{
  gpuimg_image_t whole, banded;
  char m1[512], m2[512];
  int rc1 = decode(f, n, 1, r, &whole, m1, sizeof m1);
  if (must_fail && rc1 == 0)
    fail("decoded%s", name, "");
  for (int t = 3; t <= 8; t += 5) {
    int rc2 = decode(f, n, t, r, &banded, m2, sizeof m2);
    if (rc1 != rc2 || strcmp(m1, m2) != 0) {
      fail("verdicts differ: %s", name, rc1 < 0 ? m1 : m2);
    } else if (rc1 == 0 &&
               (whole.width != banded.width || whole.height != banded.height ||
                whole.channels != banded.channels ||
                memcmp(whole.data, banded.data,
                       gpuimg_image_bytes(whole.width, whole.height, whole.channels)) != 0)) {
      fail("pixels differ%s", name, "");
    }
    if (rc2 == 0)
      gpuimg_image_free(&banded);
  }
  if (rc1 == 0)
    gpuimg_image_free(&whole);
}

static void run_case(const case_t *c)
{
  unsigned long n = 0;
  unsigned char *f = encode(c, &n);
  gpuimg_jpeg_layout_t l;
  int served = gpuimg_jpeg_layout(f, n, 0, &l);
  if (served != c->bands)
    fail("layout %s", c->name, served ? "found" : "not found");
  if (served) { /* the middle interval 40 bytes short: its band fails, as the whole decode */
    size_t cut = l.end[l.n / 2] - 40;
    unsigned char *short_one = malloc(n);
    memcpy(short_one, f, cut);
    memcpy(short_one + cut, f + cut + 40, n - cut - 40);
    char name[128];
    snprintf(name, sizeof name, "%s, an interval cut short", c->name);
    compare(name, short_one, n - 40, 1, 1);
    free(short_one);
    gpuimg_jpeg_layout_free(&l);
  }
  for (int r = 1; r <= 8; r *= 2) {
    char name[128];
    snprintf(name, sizeof name, "%s at 1/%d", c->name, r);
    compare(name, f, n, r, 0);
  }
  /* Damage: a byte of the middle interval's data, then the file cut in the middle. */
  unsigned char *bad = malloc(n);
  memcpy(bad, f, n);
  bad[n / 2] ^= 0x5a;
  if (bad[n / 2] == 0xff || bad[n / 2 - 1] == 0xff)
    bad[n / 2] = 0x11;
  char name[128];
  snprintf(name, sizeof name, "%s, a damaged byte", c->name);
  compare(name, bad, n, 1, 0);
  snprintf(name, sizeof name, "%s, cut short", c->name);
  compare(name, f, n / 2, 1, 1);
  free(bad);
  free(f);
  printf("ok   %s\n", c->name);
}

/* Mutants of a banded file (bytes set, the file cut): the layout's offsets stay inside the
 * file and in order; where it still serves, the bands give the whole decode's verdict. */
static void mutants(void)
{
  const case_t c = {"mutant", 2100, 2003, 3, 2, 2, 1, 0, 0, 1};
  unsigned long n = 0;
  unsigned char *f = encode(&c, &n), *m = malloc(n);
  unsigned seed = 12345;
  int served = 0, compared = 0;
  for (int i = 0; i < 3000; i++) {
    memcpy(m, f, n);
    size_t len = n;
    for (int k = 0; k < 1 + i % 3; k++) {
      seed = seed * 1103515245u + 12345u;
      size_t at = i % 2 ? (seed >> 8) % 700 : (seed >> 8) % n; /* the header, or anywhere */
      m[at] = (unsigned char)(i % 5 == 0 ? 0xff : seed >> 24);
    }
    if (i % 7 == 0)
      len = n - 1 - (seed >> 4) % (n / 2);
    gpuimg_jpeg_layout_t l;
    if (!gpuimg_jpeg_layout(m, len, 0, &l))
      continue;
    served++;
    for (int k = 0; k < l.n; k++)
      if (l.start[k] > l.end[k] || l.end[k] > len || (k && l.start[k] <= l.end[k - 1]))
        fail("layout out of order%s", "mutant", "");
    gpuimg_jpeg_layout_free(&l);
    if (compared < 12 && i % 3 == 0) {
      compared++;
      compare("a mutant", m, len, 1, 0);
    }
  }
  free(m);
  free(f);
  printf("ok   mutants (%d of 3000 still served, %d decoded)\n", served, compared);
}

/* Files the layout must not take differently from libjpeg: a height over
 * libjpeg's largest side (65520 rows: two 32760-row files' intervals in one scan), and a
 * header whose FF 00 "segment" libjpeg skips as junk, reading the other image inside it. */
static void libjpeg_edge_cases(void)
{
  const case_t half = {"half", 72, 32760, 1, 1, 1, 1, 0, 0, 1};
  unsigned long n = 0;
  unsigned char *f = encode(&half, &n);
  gpuimg_jpeg_layout_t l;
  if (!gpuimg_jpeg_layout(f, n, 0, &l)) {
    fail("%s", "a 72x32760 file", "has no layout");
    free(f);
    return;
  }
  unsigned char *g = malloc(2 * n + 2);
  size_t m = l.data;
  memcpy(g, f, m);
  g[l.sof + 5] = 65520 >> 8;
  g[l.sof + 6] = 65520 & 255;
  for (int k = 0; k < 2 * l.n; k++) {
    size_t i = (size_t)(k % l.n), len = l.end[i] - l.start[i];
    if (k) {
      g[m++] = 0xff;
      g[m++] = (unsigned char)(0xd0 + ((k - 1) & 7));
    }
    memcpy(g + m, f + l.start[i], len);
    m += len;
  }
  g[m++] = 0xff;
  g[m++] = 0xd9;
  compare("72x65520", g, m, 1, 1);
  gpuimg_jpeg_layout_free(&l);
  free(g);
  free(f);

  const case_t hidden_c = {"hidden", 256, 256, 1, 1, 1, 0, 0, 0, 0};
  const case_t shown_c = {"shown", 2048, 2048, 1, 1, 1, 1, 0, 0, 1};
  unsigned long hn = 0, sn = 0;
  unsigned char *hidden = encode(&hidden_c, &hn), *shown = encode(&shown_c, &sn);
  size_t len = hn - 2 + 2; /* the hidden file after its SOI, and the length field */
  if (len <= 65535 && (len >> 8) != 0xff && (len & 255) != 0xff) {
    unsigned char *b = malloc(hn + sn + 8);
    size_t k = 0;
    const unsigned char head[6] = {
        0xff, 0xd8, 0xff, 0x00, (unsigned char)(len >> 8), (unsigned char)len};
    memcpy(b, head, sizeof head);
    k = sizeof head;
    memcpy(b + k, hidden + 2, hn - 2);
    k += hn - 2;
    memcpy(b + k, shown + 2, sn - 2);
    k += sn - 2;
    if (gpuimg_jpeg_layout(b, k, 0, &l)) {
      fail("%s", "a header with FF 00", "has a layout");
      gpuimg_jpeg_layout_free(&l);
    }
    compare("a header with FF 00", b, k, 1, 0);
    free(b);
  } else {
    fail("%s", "the hidden file", "does not fit a segment");
  }
  free(hidden);
  free(shown);
  printf("ok   libjpeg's edge cases\n");
}

int main(void)
{
  if (!gpuimg_codec_find("libjpeg") || !gpuimg_codec_find("libjpeg")->decode) {
    printf("SKIP: built without libjpeg\n");
    return 77;
  }
  /* Over 4 Mpx each: smaller images decode whole. */
  static const case_t cases[] = {
      {"4:2:0, an interval a row", 2100, 2003, 3, 2, 2, 1, 0, 0, 1},
      {"4:2:0, 7 rows an interval", 2101, 2040, 3, 2, 2, 7, 0, 0, 1},
      {"4:4:4", 2048, 2050, 3, 1, 1, 5, 0, 0, 1},
      {"4:2:2", 2050, 2047, 3, 2, 1, 3, 0, 0, 1},
      {"4:4:0", 2047, 2100, 3, 1, 2, 2, 0, 0, 1},
      {"gray", 2049, 2101, 1, 1, 1, 7, 0, 0, 1},
      {"RGB (Adobe)", 2048, 2048, 3, 1, 1, 4, 0, 1, 1},
      {"intervals inside rows", 2100, 2003, 3, 2, 2, 0, 5, 0, 0},
      {"no restarts", 2100, 2003, 3, 2, 2, 0, 0, 0, 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    run_case(&cases[i]);
  mutants();
  libjpeg_edge_cases();
  if (failures) {
    printf("%d failure(s)\n", failures);
    return 1;
  }
  printf("ok\n");
  return 0;
}
