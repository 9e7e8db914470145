/* canvas.h: an RGB picture to draw on: rectangles, blends, hatching and text in a 5x7 font. */
#ifndef GPUIMG_CANVAS_H
#define GPUIMG_CANVAS_H

#include <stdint.h>

#include "base.h"
#include "buf.h"

/* A colour, 8 bits a channel. */
typedef struct {
  uint8_t r, g, b;
} gpuimg_rgb_t;

/* The font's cell: glyphs are 5x7 pixels drawn in 6x9 at scale 1 (a column and two rows of
 * space); text is drawn in capitals. */
#define GPUIMG_FONT_W 6
#define GPUIMG_FONT_H 9

/* A canvas is a 3-channel gpuimg_image_t (gpuimg_image_alloc(); freed with
 * gpuimg_image_free()). Every drawing call clips to it. */
void gpuimg_canvas_fill(gpuimg_image_t *c, int x, int y, int w, int h, gpuimg_rgb_t colour);
/* Pixel (x, y) set to colour, or mixed with it: alpha of 256 parts colour. */
void gpuimg_canvas_put(gpuimg_image_t *c, int x, int y, gpuimg_rgb_t colour);
void gpuimg_canvas_blend(gpuimg_image_t *c, int x, int y, gpuimg_rgb_t colour, int alpha);
/* A rectangle's one-pixel outline. */
void gpuimg_canvas_frame(gpuimg_image_t *c, int x, int y, int w, int h, gpuimg_rgb_t colour);
/* Diagonal hatching over a rectangle: every pixel with (x + y) % 6 < 2 set to colour. */
void gpuimg_canvas_hatch(gpuimg_image_t *c, int x, int y, int w, int h, gpuimg_rgb_t colour);
/* Whether pixel (x, y) lies on the hatching's stripes. */
int gpuimg_canvas_on_hatch(int x, int y);
/* Draws text's first n characters (lower case as capitals, other characters outside ASCII's
 * printable range as '?') at (x, y), each glyph pixel a scale x scale square; returns the
 * x after the last character. */
int gpuimg_canvas_text(gpuimg_image_t *c, int x, int y, const char *text, int n, int scale,
                       gpuimg_rgb_t colour);
/* text wrapped at spaces into lines of at most cols characters from row y (c NULL: measures
 * only); returns the y below it. */
int gpuimg_canvas_text_wrapped(gpuimg_image_t *c, int x, int y, int cols, const char *text, int ts,
                               gpuimg_rgb_t colour);
/* The colour of t in 0..1 on a ramp from blue through green and yellow to red. */
gpuimg_rgb_t gpuimg_canvas_ramp(double t);
/* The canvas as PNG bytes appended to png, comment in a tEXt chunk (keyword "Comment") after
 * the header. 0, or -1 with the error set. */
int gpuimg_canvas_png(const gpuimg_image_t *c, const char *comment, gpuimg_buf_t *png);

#endif
