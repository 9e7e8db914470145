/* libpng.c: the libpng PNG encoder (--codec libpng). */
#include "codec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef GPUIMG_HAVE_LIBPNG
#include <png.h>
#include <zlib.h>

/* Where libpng's callbacks leave what went wrong (libpng's error pointer). */
typedef struct {
  gpuimg_buf_t *out;
  int oom; /* an allocation failed (libpng's, zlib's or the output's): "out of memory" */
  char reason[160];
} png_sink_t;

/* libpng's (and through it zlib's) allocations, so that a failed one is known for what it
 * is whatever message libpng gives. */
static png_voidp png_malloc_cb(png_structp png, png_alloc_size_t size)
{
  png_voidp p = malloc(size ? size : 1);
  if (!p) {
    png_sink_t *sink = png_get_mem_ptr(png);
    sink->oom = 1;
  }
  return p;
}

static void png_free_cb(png_structp png, png_voidp p)
{
  (void)png;
  free(p);
}

/* libpng errors never return: the message is kept and control goes back to the setjmp in
 * png_encode(). Returning would let libpng print to stderr before it jumps itself. */
static void png_error_cb(png_structp png, png_const_charp msg)
{
  png_sink_t *sink = png_get_error_ptr(png);
  if (sink && !sink->reason[0])
    snprintf(sink->reason, sizeof sink->reason, "%s", msg && msg[0] ? msg : "libpng error");
  png_longjmp(png, 1);
}

/* Warnings (none are expected for 8-bit images we describe ourselves) are not errors and
 * must not reach stderr. */
static void png_warning_cb(png_structp png, png_const_charp msg)
{
  (void)png;
  (void)msg;
}

static void png_write_cb(png_structp png, png_bytep data, size_t n)
{
  png_sink_t *sink = png_get_io_ptr(png);
  if (gpuimg_buf_append(sink->out, data, n) < 0) {
    sink->oom = 1;
    png_error(png, "out of memory");
  }
}

static void png_flush_cb(png_structp png)
{
  (void)png;
}

/* The writing itself, apart from png_encode() so that no local of the function that called
 * setjmp changes after it (their values after a longjmp would be unspecified). */
static void png_write_image_rows(png_structp png, png_infop info, const gpuimg_image_t *img,
                                 int level)
{
  static const int color_types[5] = {0, PNG_COLOR_TYPE_GRAY, PNG_COLOR_TYPE_GRAY_ALPHA,
                                     PNG_COLOR_TYPE_RGB, PNG_COLOR_TYPE_RGB_ALPHA};
  /* libpng refuses sides over 1000000 by default; the decoder allows 2^20. */
  png_set_user_limits(png, 0x7fffffff, 0x7fffffff);
  png_set_compression_level(png, level);
  /* Levels 1..3: zlib's run-length strategy (matches at distance 1 only), about twice as
   * fast as the default on photographs for a file a few percent larger; OpenCV's PNG
   * writer defaults to it too. */
  if (level >= 1 && level <= 3)
    png_set_compression_strategy(png, Z_RLE);
  png_set_compression_buffer_size(png, 1 << 16);
  png_set_filter(png, PNG_FILTER_TYPE_BASE,
                 level == 0   ? PNG_FILTER_NONE
                 : level <= 3 ? PNG_FILTER_SUB
                              : PNG_ALL_FILTERS);
  png_set_IHDR(png, info, (png_uint_32)img->width, (png_uint_32)img->height, 8,
               color_types[img->channels], PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_BASE,
               PNG_FILTER_TYPE_BASE);
  png_write_info(png, info);
  size_t stride = (size_t)img->width * (size_t)img->channels;
  for (int y = 0; y < img->height; y++)
    png_write_row(png, img->data + (size_t)y * stride);
  png_write_end(png, info);
}

/* Encodes img as an 8-bit PNG (1 to 4 channels: gray, gray+alpha, RGB, RGBA) into out.
 * Filters: none at level 0 (stored data gains nothing from them), Sub at levels 1..3 (one
 * cheap filter that suits photographs, as fast encoders such as fpng use), and libpng's
 * per-row choice among all five at 4..9 (smaller files for more time). */
static int png_encode(const gpuimg_image_t *img, gpuimg_format_t fmt,
                      const gpuimg_encode_opts_t *opts, const char *what, gpuimg_buf_t *out)
{
  png_sink_t sink;
  const int level =
      opts->png_level >= 0 && opts->png_level <= 9 ? opts->png_level : GPUIMG_DEFAULT_PNG_LEVEL;

  if (gpuimg_encode_check(img, fmt, GPUIMG_FORMAT_PNG, "libpng", what) < 0)
    return -1;
  /* The callbacks change sink after the setjmp; they reach it through the pointer libpng
   * holds, so it lives in memory (not a register) and keeps its values across the jump. */
  memset(&sink, 0, sizeof sink);
  sink.out = out;

  /* Everything libpng allocates hangs off these two and is released by
   * png_destroy_write_struct(); nothing of ours is allocated after the setjmp (rows are
   * written straight from img), so a jump out of libpng leaks nothing. */
  png_structp png = png_create_write_struct_2(PNG_LIBPNG_VER_STRING, &sink, png_error_cb,
                                              png_warning_cb, &sink, png_malloc_cb, png_free_cb);
  png_infop info = png ? png_create_info_struct(png) : NULL;
  if (!info) {
    png_destroy_write_struct(&png, NULL);
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, what, "out of memory");
    return -1;
  }
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    if (sink.oom)
      gpuimg_error_set(GPUIMG_EXIT_FAILURE, what, "out of memory");
    else
      gpuimg_error_set(GPUIMG_EXIT_OUTPUT, what, "cannot encode PNG: %s",
                       sink.reason[0] ? sink.reason : "libpng error");
    return -1;
  }
  png_set_write_fn(png, &sink, png_write_cb, png_flush_cb);
  png_write_image_rows(png, info, img, level);
  png_destroy_write_struct(&png, &info);
  return 0;
}

/* Under auto: PNG output at levels 2..9, where zlib's matching beats fastpng's size. */
const gpuimg_codec_t gpuimg_codec_libpng = {
    .name = "libpng",
    .library = "libpng",
    .encodes = GPUIMG_FORMAT_BIT(GPUIMG_FORMAT_PNG),
    .priority = 2,
    .png_level_min = 2,
    .png_level_max = 9,
    .encode = png_encode,
};
#else
/* Built without libpng: no formats, so not in the registry. */
const gpuimg_codec_t gpuimg_codec_libpng = {.name = "libpng", .library = "libpng"};
#endif
