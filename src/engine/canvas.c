/* canvas.c: drawing on an RGB picture (for --explain-image), with gpuimg's own 5x7 font. */
#include "canvas.h"

#include <string.h>
#include <zlib.h>

#include "codec.h"

/* The font: one glyph per character from ' ' to '_' (ASCII 32..95), seven rows of five
 * pixels, bit 4 the leftmost. Lower-case letters are drawn as capitals. */
static const uint8_t font[64][7] = {
    {0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00}, /* ' ' */
    {0x04, 0x04, 0x04, 0x04, 0x04, 0x00, 0x04}, /* ! */
    {0x0a, 0x0a, 0x00, 0x00, 0x00, 0x00, 0x00}, /* " */
    {0x0a, 0x1f, 0x0a, 0x0a, 0x0a, 0x1f, 0x0a}, /* # */
    {0x04, 0x0f, 0x14, 0x0e, 0x05, 0x1e, 0x04}, /* $ */
    {0x18, 0x19, 0x02, 0x04, 0x08, 0x13, 0x03}, /* % */
    {0x0c, 0x12, 0x14, 0x08, 0x15, 0x12, 0x0d}, /* & */
    {0x04, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00}, /* ' */
    {0x02, 0x04, 0x08, 0x08, 0x08, 0x04, 0x02}, /* ( */
    {0x08, 0x04, 0x02, 0x02, 0x02, 0x04, 0x08}, /* ) */
    {0x00, 0x04, 0x15, 0x0e, 0x15, 0x04, 0x00}, /* '*' */
    {0x00, 0x04, 0x04, 0x1f, 0x04, 0x04, 0x00}, /* + */
    {0x00, 0x00, 0x00, 0x00, 0x0c, 0x04, 0x08}, /* , */
    {0x00, 0x00, 0x00, 0x1f, 0x00, 0x00, 0x00}, /* - */
    {0x00, 0x00, 0x00, 0x00, 0x00, 0x0c, 0x0c}, /* . */
    {0x01, 0x02, 0x02, 0x04, 0x08, 0x08, 0x10}, /* '/' */
    {0x0e, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0e}, /* 0 */
    {0x04, 0x0c, 0x04, 0x04, 0x04, 0x04, 0x0e}, /* 1 */
    {0x0e, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1f}, /* 2 */
    {0x1f, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0e}, /* 3 */
    {0x02, 0x06, 0x0a, 0x12, 0x1f, 0x02, 0x02}, /* 4 */
    {0x1f, 0x10, 0x1e, 0x01, 0x01, 0x11, 0x0e}, /* 5 */
    {0x06, 0x08, 0x10, 0x1e, 0x11, 0x11, 0x0e}, /* 6 */
    {0x1f, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08}, /* 7 */
    {0x0e, 0x11, 0x11, 0x0e, 0x11, 0x11, 0x0e}, /* 8 */
    {0x0e, 0x11, 0x11, 0x0f, 0x01, 0x02, 0x0c}, /* 9 */
    {0x00, 0x0c, 0x0c, 0x00, 0x0c, 0x0c, 0x00}, /* : */
    {0x00, 0x0c, 0x0c, 0x00, 0x0c, 0x04, 0x08}, /* ; */
    {0x02, 0x04, 0x08, 0x10, 0x08, 0x04, 0x02}, /* < */
    {0x00, 0x00, 0x1f, 0x00, 0x1f, 0x00, 0x00}, /* = */
    {0x08, 0x04, 0x02, 0x01, 0x02, 0x04, 0x08}, /* > */
    {0x0e, 0x11, 0x01, 0x02, 0x04, 0x00, 0x04}, /* ? */
    {0x0e, 0x11, 0x17, 0x15, 0x17, 0x10, 0x0e}, /* @ */
    {0x0e, 0x11, 0x11, 0x1f, 0x11, 0x11, 0x11}, /* A */
    {0x1e, 0x11, 0x11, 0x1e, 0x11, 0x11, 0x1e}, /* B */
    {0x0e, 0x11, 0x10, 0x10, 0x10, 0x11, 0x0e}, /* C */
    {0x1c, 0x12, 0x11, 0x11, 0x11, 0x12, 0x1c}, /* D */
    {0x1f, 0x10, 0x10, 0x1e, 0x10, 0x10, 0x1f}, /* E */
    {0x1f, 0x10, 0x10, 0x1e, 0x10, 0x10, 0x10}, /* F */
    {0x0e, 0x11, 0x10, 0x17, 0x11, 0x11, 0x0f}, /* G */
    {0x11, 0x11, 0x11, 0x1f, 0x11, 0x11, 0x11}, /* H */
    {0x0e, 0x04, 0x04, 0x04, 0x04, 0x04, 0x0e}, /* I */
    {0x07, 0x02, 0x02, 0x02, 0x02, 0x12, 0x0c}, /* J */
    {0x11, 0x12, 0x14, 0x18, 0x14, 0x12, 0x11}, /* K */
    {0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x1f}, /* L */
    {0x11, 0x1b, 0x15, 0x15, 0x11, 0x11, 0x11}, /* M */
    {0x11, 0x11, 0x19, 0x15, 0x13, 0x11, 0x11}, /* N */
    {0x0e, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0e}, /* O */
    {0x1e, 0x11, 0x11, 0x1e, 0x10, 0x10, 0x10}, /* P */
    {0x0e, 0x11, 0x11, 0x11, 0x15, 0x12, 0x0d}, /* Q */
    {0x1e, 0x11, 0x11, 0x1e, 0x14, 0x12, 0x11}, /* R */
    {0x0f, 0x10, 0x10, 0x0e, 0x01, 0x01, 0x1e}, /* S */
    {0x1f, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04}, /* T */
    {0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0e}, /* U */
    {0x11, 0x11, 0x11, 0x11, 0x11, 0x0a, 0x04}, /* V */
    {0x11, 0x11, 0x11, 0x15, 0x15, 0x15, 0x0a}, /* W */
    {0x11, 0x11, 0x0a, 0x04, 0x0a, 0x11, 0x11}, /* X */
    {0x11, 0x11, 0x0a, 0x04, 0x04, 0x04, 0x04}, /* Y */
    {0x1f, 0x01, 0x02, 0x04, 0x08, 0x10, 0x1f}, /* Z */
    {0x0e, 0x08, 0x08, 0x08, 0x08, 0x08, 0x0e}, /* [ */
    {0x10, 0x08, 0x08, 0x04, 0x02, 0x02, 0x01}, /* \ */
    {0x0e, 0x02, 0x02, 0x02, 0x02, 0x02, 0x0e}, /* ] */
    {0x04, 0x0a, 0x11, 0x00, 0x00, 0x00, 0x00}, /* ^ */
    {0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x1f}, /* _ */
};

static int clip(int *x, int *y, int *w, int *h, const gpuimg_image_t *c)
{
  if (*x < 0)
    *w += *x, *x = 0;
  if (*y < 0)
    *h += *y, *y = 0;
  if (*x + *w > c->width)
    *w = c->width - *x;
  if (*y + *h > c->height)
    *h = c->height - *y;
  return *w > 0 && *h > 0;
}

static uint8_t *at(gpuimg_image_t *c, int x, int y)
{
  return c->data + ((size_t)y * (size_t)c->width + (size_t)x) * 3;
}

void gpuimg_canvas_put(gpuimg_image_t *c, int x, int y, gpuimg_rgb_t colour)
{
  if (x < 0 || y < 0 || x >= c->width || y >= c->height)
    return;
  uint8_t *p = at(c, x, y);
  p[0] = colour.r, p[1] = colour.g, p[2] = colour.b;
}

void gpuimg_canvas_blend(gpuimg_image_t *c, int x, int y, gpuimg_rgb_t colour, int alpha)
{
  if (x < 0 || y < 0 || x >= c->width || y >= c->height)
    return;
  uint8_t *p = at(c, x, y);
  const uint8_t v[3] = {colour.r, colour.g, colour.b};
  for (int k = 0; k < 3; k++)
    p[k] = (uint8_t)((p[k] * (256 - alpha) + v[k] * alpha + 128) >> 8);
}

void gpuimg_canvas_fill(gpuimg_image_t *c, int x, int y, int w, int h, gpuimg_rgb_t colour)
{
  if (!clip(&x, &y, &w, &h, c))
    return;
  for (int j = y; j < y + h; j++)
    for (int i = x; i < x + w; i++)
      gpuimg_canvas_put(c, i, j, colour);
}

void gpuimg_canvas_frame(gpuimg_image_t *c, int x, int y, int w, int h, gpuimg_rgb_t colour)
{
  gpuimg_canvas_fill(c, x, y, w, 1, colour);
  gpuimg_canvas_fill(c, x, y + h - 1, w, 1, colour);
  gpuimg_canvas_fill(c, x, y, 1, h, colour);
  gpuimg_canvas_fill(c, x + w - 1, y, 1, h, colour);
}

int gpuimg_canvas_on_hatch(int x, int y)
{
  return (x + y) % 6 < 2;
}

void gpuimg_canvas_hatch(gpuimg_image_t *c, int x, int y, int w, int h, gpuimg_rgb_t colour)
{
  if (!clip(&x, &y, &w, &h, c))
    return;
  for (int j = y; j < y + h; j++)
    for (int i = x; i < x + w; i++)
      if (gpuimg_canvas_on_hatch(i, j))
        gpuimg_canvas_put(c, i, j, colour);
}

/* One glyph's pixels, each a scale x scale square. */
static void glyph(gpuimg_image_t *c, int x, int y, unsigned char ch, int scale, gpuimg_rgb_t colour)
{
  if (ch >= 'a' && ch <= 'z')
    ch = (unsigned char)(ch - 'a' + 'A');
  if (ch < ' ' || ch > '_')
    ch = '?';
  const uint8_t *rows = font[ch - ' '];
  for (int r = 0; r < 7; r++)
    for (int b = 0; b < 5; b++)
      if (rows[r] & (0x10 >> b))
        gpuimg_canvas_fill(c, x + b * scale, y + r * scale, scale, scale, colour);
}

int gpuimg_canvas_text(gpuimg_image_t *c, int x, int y, const char *text, int n, int scale,
                       gpuimg_rgb_t colour)
{
  for (int i = 0; i < n && text[i]; i++, x += GPUIMG_FONT_W * scale)
    glyph(c, x, y, (unsigned char)text[i], scale, colour);
  return x;
}

gpuimg_rgb_t gpuimg_canvas_ramp(double t)
{
  static const gpuimg_rgb_t stops[] = {
      {40, 90, 230}, {0, 190, 200}, {60, 200, 60}, {240, 200, 0}, {230, 50, 40}};
  const int n = (int)(sizeof stops / sizeof stops[0]) - 1;
  t = t < 0 ? 0 : t > 1 ? 1 : t;
  int i = (int)(t * n);
  if (i >= n)
    i = n - 1;
  double k = t * n - i;
  gpuimg_rgb_t a = stops[i], b = stops[i + 1];
  return (gpuimg_rgb_t){(uint8_t)(a.r + (b.r - a.r) * k + 0.5),
                        (uint8_t)(a.g + (b.g - a.g) * k + 0.5),
                        (uint8_t)(a.b + (b.b - a.b) * k + 0.5)};
}

int gpuimg_canvas_text_wrapped(gpuimg_image_t *c, int x, int y, int cols, const char *text, int ts,
                               gpuimg_rgb_t colour)
{
  size_t n = strlen(text);
  while (n > 0) {
    size_t take = n <= (size_t)cols ? n : (size_t)cols;
    if (take < n) { /* break at the last space that fits */
      size_t k = take;
      while (k > 0 && text[k] != ' ')
        k--;
      if (k > 0)
        take = k;
    }
    if (c)
      gpuimg_canvas_text(c, x, y, text, (int)take, ts, colour);
    y += GPUIMG_FONT_H * ts;
    text += take, n -= take;
    while (n > 0 && *text == ' ')
      text++, n--;
  }
  return y;
}

/* png's bytes with a tEXt chunk (keyword "Comment": text) after the IHDR chunk. */
static int add_text_chunk(gpuimg_buf_t *png, const char *text)
{
  static const char keyword[] = "Comment";
  const size_t ihdr_end = 8 + 12 + 13, klen = sizeof keyword; /* with its NUL */
  size_t tlen = strlen(text), n = 4 + 4 + klen + tlen + 4;
  if (png->size < ihdr_end || gpuimg_buf_reserve(png, n) < 0)
    return -1;
  uint8_t *chunk = png->data + ihdr_end;
  memmove(chunk + n, chunk, png->size - ihdr_end);
  size_t len = klen + tlen;
  uint8_t head[8] = {(uint8_t)(len >> 24),
                     (uint8_t)(len >> 16),
                     (uint8_t)(len >> 8),
                     (uint8_t)len,
                     't',
                     'E',
                     'X',
                     't'};
  memcpy(chunk, head, 8);
  memcpy(chunk + 8, keyword, klen);
  memcpy(chunk + 8 + klen, text, tlen);
  uLong crc = crc32(0L, chunk + 4, (uInt)(4 + len));
  uint8_t tail[4] = {(uint8_t)(crc >> 24), (uint8_t)(crc >> 16), (uint8_t)(crc >> 8), (uint8_t)crc};
  memcpy(chunk + 8 + len, tail, 4);
  png->size += n;
  return 0;
}

int gpuimg_canvas_png(const gpuimg_image_t *c, const char *comment, gpuimg_buf_t *png)
{
  const gpuimg_codec_t *enc = gpuimg_codec_encoder(GPUIMG_CODEC_AUTO, GPUIMG_FORMAT_PNG, 9);
  gpuimg_encode_opts_t opts = {.png_level = 9};
  if (enc->encode(c, GPUIMG_FORMAT_PNG, &opts, "--explain-image", png) < 0)
    return -1;
  if (add_text_chunk(png, comment) < 0) {
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, "", "out of memory");
    return -1;
  }
  return 0;
}
