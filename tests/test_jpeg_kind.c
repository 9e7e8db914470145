/* test_jpeg_kind.c: gpuimg_codec_jpeg_is_common, which keeps the JPEGs nvJPEG refuses or reads
 * otherwise (CMYK, RGB, arithmetic, lossless, 12-bit, odd sampling) on the host in a split
 * batch: hand-made headers of each kind, damaged ones, and segments before the frame; and
 * those whose scans the host decoders refuse for their work, so that they refuse them. */
#define TEST_NAME "jpeg-kind"
#include "codec.h"
#include "test_fail.h"

#include <string.h>

typedef struct {
  uint8_t b[8192];
  size_t n;
} hdr_t;

static void put(hdr_t *h, const uint8_t *p, size_t n)
{
  memcpy(h->b + h->n, p, n);
  h->n += n;
}

/* A segment: marker m and its body of n bytes. */
static void segment(hdr_t *h, int m, const uint8_t *body, size_t n)
{
  uint8_t head[4] = {0xff, (uint8_t)m, (uint8_t)((n + 2) >> 8), (uint8_t)(n + 2)};
  put(h, head, 4);
  put(h, body, n);
}

/* SOI, an APP0, the frame (marker sof, precision, components with ids and sampling), a scan. */
static hdr_t jpeg(int sof, int precision, int ncomp, const uint8_t *ids, const uint8_t *sampling)
{
  hdr_t h = {.n = 0};
  static const uint8_t soi[2] = {0xff, 0xd8}, jfif[14] = "JFIF\0\1\1\0\0\1\0\1\0";
  put(&h, soi, 2);
  segment(&h, 0xe0, jfif, sizeof jfif);
  uint8_t f[6 + 3 * 4] = {(uint8_t)precision, 0, 16, 0, 16, (uint8_t)ncomp};
  for (int i = 0; i < ncomp; i++) {
    f[6 + 3 * i] = ids[i];
    f[7 + 3 * i] = sampling[i];
  }
  segment(&h, sof, f, 6 + 3 * (size_t)ncomp);
  static const uint8_t sos[8] = {1, 1, 0, 0, 63, 0, 0, 0};
  segment(&h, 0xda, sos, 6);
  return h;
}

/* A progressive gray side x side JPEG of scans scans (headers only: the work is counted from
 * the markers). */
static hdr_t passes(int side, int scans)
{
  static const uint8_t id[1] = {1}, one[1] = {0x11};
  hdr_t h = jpeg(0xc2, 8, 1, id, one);
  static const uint8_t sos[6] = {1, 1, 0, 1, 1, 0};
  size_t f = 2 + 18 + 4;                          /* the frame's body, after SOI and the APP0 */
  h.b[f + 1] = h.b[f + 3] = (uint8_t)(side >> 8); /* the height and the width */
  h.b[f + 2] = h.b[f + 4] = (uint8_t)side;
  for (int i = 1; i < scans; i++)
    segment(&h, 0xda, sos, sizeof sos);
  return h;
}

static void expect(const char *what, const hdr_t *h, int want)
{
  int got = gpuimg_codec_jpeg_is_common(h->b, h->n);
  if (got != want)
    fail("%s: %d, expected %d", what, got, want);
}

int main(void)
{
  static const uint8_t ycc[3] = {1, 2, 3}, rgb[3] = {'R', 'G', 'B'}, cmyk[4] = {1, 2, 3, 4};
  static const uint8_t s420[3] = {0x22, 0x11, 0x11}, s444[3] = {0x11, 0x11, 0x11},
                       s422[3] = {0x21, 0x11, 0x11}, s411[3] = {0x41, 0x11, 0x11},
                       s31[3] = {0x31, 0x11, 0x11}, chroma2[3] = {0x22, 0x21, 0x11},
                       one[4] = {0x11, 0x11, 0x11, 0x11};
  expect("no bytes", &(hdr_t){.n = 0}, 0);
  hdr_t h = jpeg(0xc0, 8, 3, ycc, s420);
  expect("baseline 4:2:0", &h, 1);
  h = jpeg(0xc1, 8, 3, ycc, s444);
  expect("extended 4:4:4", &h, 1);
  h = jpeg(0xc2, 8, 3, ycc, s422);
  expect("progressive 4:2:2", &h, 1);
  h = jpeg(0xc0, 8, 3, ycc, s411);
  expect("baseline 4:1:1", &h, 1);
  h = jpeg(0xc0, 8, 1, ycc, one);
  expect("gray", &h, 1);
  h = jpeg(0xc0, 8, 4, cmyk, one);
  expect("CMYK", &h, 0);
  h = jpeg(0xc0, 8, 3, rgb, s444);
  expect("component ids R, G, B", &h, 0);
  h = jpeg(0xc0, 12, 3, ycc, s420);
  expect("12-bit", &h, 0);
  h = jpeg(0xc3, 8, 3, ycc, s444);
  expect("lossless", &h, 0);
  h = jpeg(0xc9, 8, 3, ycc, s420);
  expect("arithmetic", &h, 0);
  h = jpeg(0xc0, 8, 3, ycc, s31);
  expect("luma sampled 3x1", &h, 0);
  h = jpeg(0xc0, 8, 3, ycc, chroma2);
  expect("chroma sampled 2x1", &h, 0);
  h = jpeg(0xc0, 8, 2, ycc, s444);
  expect("two components", &h, 0);

  /* Adobe's APP14: transform 1 (YCbCr) keeps it common, 0 (untransformed RGB) does not. */
  for (int t = 0; t < 2; t++) {
    hdr_t a = {.n = 0};
    static const uint8_t soi[2] = {0xff, 0xd8};
    uint8_t adobe[12] = {'A', 'd', 'o', 'b', 'e', 0, 100, 0, 0, 0, 0, (uint8_t)t};
    put(&a, soi, 2);
    segment(&a, 0xee, adobe, sizeof adobe);
    hdr_t rest = jpeg(0xc0, 8, 3, ycc, s420);
    put(&a, rest.b + 2, rest.n - 2);
    expect(t ? "Adobe transform 1" : "Adobe transform 0", &a, t);
  }
  /* Damaged or unusual headers go to the host, which says what is wrong with them. */
  h = jpeg(0xc0, 8, 3, ycc, s420);
  hdr_t cut = h;
  cut.n = 30; /* inside the frame's segment */
  expect("cut in the frame", &cut, 0);
  hdr_t junk = h;
  junk.b[20] = 0x00; /* the frame's 0xff replaced: bytes between segments */
  expect("junk before the frame", &junk, 0);
  hdr_t fill = {.n = 0};
  put(&fill, h.b, 20);
  static const uint8_t ff = 0xff;
  put(&fill, &ff, 1); /* a fill byte before the frame's marker */
  put(&fill, h.b + 20, h.n - 20);
  expect("fill byte", &fill, 1);

  /* Scans: 500 of a small image are common, 501 are not; of a 4096x4096 image, 16 passes
   * over its 262144 blocks plus 4 blocks per byte of the file are, 17 are not. */
  h = passes(16, 500);
  expect("500 scans", &h, 1);
  h = passes(16, 501);
  expect("501 scans", &h, 0);
  h = passes(4096, 16);
  expect("16 passes over 4096x4096", &h, 1);
  h = passes(4096, 17);
  expect("17 passes over 4096x4096", &h, 0);
  return 0;
}
