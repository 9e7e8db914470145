/* libjpeg.c: the libjpeg(-turbo) JPEG codec (--codec libjpeg): hardened decoding and encoding.
 */
#include "codec.h"
#include "files.h"
#include "jpeg_layout.h"
#include "pool.h"

#ifdef GPUIMG_HAVE_LIBJPEG
#include <ctype.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>
#include <jerror.h>

/* libjpeg's memory beyond the whole-image coefficient buffers: row buffers, tables and
 * its own state (a 65500-pixel-wide image needs a few MiB). */
#define JPEG_MEM_FLOOR ((uint64_t)64 << 20)
/* Encoded bytes are handed to the output buffer in chunks of this size. */
#define JPEG_DEST_CHUNK 16384

/* Everything libjpeg's callbacks need, reached from cinfo->err (pub comes first). Lives in the
 * decode or encode call's frame; nothing is global, so threads decode at once. */
typedef struct {
  struct jpeg_error_mgr pub;
  struct jpeg_progress_mgr progress;
  jmp_buf jump;
  int exit_code;             /* the exit status of the failure: 3 (input), 4 (output) or 1 */
  int msg_code;              /* libjpeg's message code of the failure, or -1 for one of ours */
  char msg[JMSG_LENGTH_MAX]; /* libjpeg's message, as a reason (msg_code >= 0) */
  char reason[256];          /* the whole reason (msg_code -1) */
  uint64_t mem_limit;        /* cinfo->mem->max_memory_to_use, for the message */
  gpuimg_jpeg_work_t work;   /* the scans' work read from the markers, and its limit */
  gpuimg_jpeg_work_t done;   /* libjpeg's own count of the scans it read and their blocks */
  uint8_t *pixels;           /* the decoded image while it is being filled (owned here */
  int borrowed;              /* unless borrowed: see gpuimg_codec_pixels()) */
} jpeg_ctx_t;

/* libjpeg's message as a reason: its first letter lowered when the second is lower case
 * ("Premature end of JPEG file" -> "premature end...", "JPEG datastream..." kept), and
 * anything but printable ASCII replaced, so that the reason stays on one line. */
static void jpeg_reason_from_libjpeg(j_common_ptr cinfo, char *reason, size_t cap)
{
  char msg[JMSG_LENGTH_MAX];
  msg[0] = '\0';
  (*cinfo->err->format_message)(cinfo, msg);
  msg[sizeof msg - 1] = '\0';
  for (char *p = msg; *p; p++)
    if (*p < 0x20 || *p > 0x7e)
      *p = '?';
  if (isupper((unsigned char)msg[0]) && islower((unsigned char)msg[1]))
    msg[0] = (char)tolower((unsigned char)msg[0]);
  snprintf(reason, cap, "%s", msg[0] ? msg : "libjpeg error");
}

/* Errors never return to libjpeg: the message is kept and control goes back to the setjmp of
 * the decode or encode call, which destroys the libjpeg object (all of its memory). */
static void jpeg_error_exit_cb(j_common_ptr cinfo)
{
  jpeg_ctx_t *ctx = (jpeg_ctx_t *)cinfo->err;
  ctx->msg_code = cinfo->err->msg_code;
  jpeg_reason_from_libjpeg(cinfo, ctx->msg, sizeof ctx->msg);
  longjmp(ctx->jump, 1);
}

/* Nothing reaches stderr. Trace messages (level >= 0) are dropped. A warning (level -1) while
 * decoding means damaged data that libjpeg would paper over (a truncated file gets a fake end
 * marker and gray blocks, a bad Huffman code zeros): it fails the decode, as stb fails on bad
 * input. Harmless ones are let through: junk bytes between segments (stb skips them too), an
 * unknown JFIF revision or Adobe transform code. */
static void jpeg_emit_message_cb(j_common_ptr cinfo, int msg_level)
{
  if (msg_level >= 0 || !cinfo->is_decompressor)
    return;
  switch (cinfo->err->msg_code) {
  case JWRN_EXTRANEOUS_DATA:
  case JWRN_JFIF_MAJOR:
  case JWRN_ADOBE_XFORM:
    return;
  default:
    jpeg_error_exit_cb(cinfo);
  }
}

static void jpeg_output_message_cb(j_common_ptr cinfo)
{
  (void)cinfo;
}

/* Fails the decode with why, the reason gpuimg_jpeg_work_check() gave. */
_Noreturn static void jpeg_fail_work(jpeg_ctx_t *ctx, const char *why)
{
  ctx->msg_code = -1;
  snprintf(ctx->reason, sizeof ctx->reason, "cannot decode JPEG: %s", why);
  longjmp(ctx->jump, 1);
}

/* Called before each chunk of input libjpeg consumes (a row of MCUs of a multi-scan file):
 * libjpeg's own count of the scans it read and of the blocks they decode, held to the limit
 * that jpeg_decode_run() read from the markers. The walk there finds every scan libjpeg
 * reads and counts at least its blocks, so this stops a file only where the two would read
 * it otherwise: then at the same limit, one scan past it at most. */
static void jpeg_progress_cb(j_common_ptr cinfo)
{
  jpeg_ctx_t *ctx = (jpeg_ctx_t *)cinfo->err;
  j_decompress_ptr d = (j_decompress_ptr)cinfo;
  if (!cinfo->is_decompressor || d->input_scan_number <= ctx->done.scans)
    return;
  const jpeg_component_info *c = d->cur_comp_info[0];
  ctx->done.scans = d->input_scan_number;
  ctx->done.work += d->comps_in_scan == 1 ? (uint64_t)c->width_in_blocks * c->height_in_blocks
                                          : (uint64_t)d->MCUs_per_row * d->MCU_rows_in_scan *
                                                (uint64_t)d->blocks_in_MCU;
  ctx->done.limit = ctx->work.limit;
  char why[sizeof ctx->reason - 32];
  if (gpuimg_jpeg_work_check(&ctx->done, why, sizeof why) < 0)
    jpeg_fail_work(ctx, why);
}

static void jpeg_ctx_init(jpeg_ctx_t *ctx, int exit_code)
{
  memset(ctx, 0, sizeof *ctx);
  jpeg_std_error(&ctx->pub);
  ctx->pub.error_exit = jpeg_error_exit_cb;
  ctx->pub.emit_message = jpeg_emit_message_cb;
  ctx->pub.output_message = jpeg_output_message_cb;
  ctx->progress.progress_monitor = jpeg_progress_cb;
  ctx->exit_code = exit_code;
  ctx->msg_code = -1;
}

/* Fails the decode with a reason of ours: the same path as a libjpeg error. */
_Noreturn static void jpeg_fail(jpeg_ctx_t *ctx, int exit_code, const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 3, 4)))
#endif
    ;

_Noreturn static void jpeg_fail(jpeg_ctx_t *ctx, int exit_code, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(ctx->reason, sizeof ctx->reason, fmt, ap);
  va_end(ap);
  ctx->exit_code = exit_code;
  ctx->msg_code = -1;
  longjmp(ctx->jump, 1);
}

static uint64_t round_up(uint64_t v, uint64_t m)
{
  return (v + m - 1) / m * m;
}

/* stb's CMYK rule (Adobe files store inverted CMYK): colour = C * K / 255, rounded. */
static uint8_t blinn_8x8(unsigned x, unsigned y)
{
  unsigned t = x * y + 128;
  return (uint8_t)((t + (t >> 8)) >> 8);
}

/* The header's checks, before anything of the image's size is allocated: its size against
 * --max-pixels and the file's length, its components, and libjpeg's memory cap. Every
 * failure longjmps. */
static void jpeg_check_header(jpeg_ctx_t *ctx, struct jpeg_decompress_struct *cinfo, size_t size,
                              uint64_t max_pixels)
{
  uint64_t w = cinfo->image_width, h = cinfo->image_height;
  if (w * h > max_pixels)
    jpeg_fail(ctx, GPUIMG_EXIT_INPUT,
              "image is %llux%llu, over the limit of %llu pixels (see "
              "--max-pixels)",
              (unsigned long long)w, (unsigned long long)h, (unsigned long long)max_pixels);
  int nc = cinfo->num_components;
  if (nc != 1 && nc != 3 && nc != 4)
    jpeg_fail(ctx, GPUIMG_EXIT_INPUT,
              "cannot decode JPEG: %d colour components (1, 3 and 4 are supported)", nc);
  /* Every 8x8 block takes at least one bit (its DC code): fewer bytes than that cannot
   * hold the image, and nothing is allocated for it. Multi-scan files (progressive ones)
   * keep every block's coefficients: 128 bytes per block, padded to whole MCUs. */
  uint64_t blocks = 0, coef = 0;
  for (int i = 0; i < nc; i++) {
    const jpeg_component_info *c = &cinfo->comp_info[i];
    blocks += (uint64_t)c->width_in_blocks * c->height_in_blocks;
    coef += round_up(c->width_in_blocks, (uint64_t)c->h_samp_factor) *
            round_up(c->height_in_blocks, (uint64_t)c->v_samp_factor) * sizeof(JBLOCK);
  }
  if ((uint64_t)size * 8 < blocks)
    jpeg_fail(ctx, GPUIMG_EXIT_INPUT,
              "cannot decode JPEG: too little image data for %llux%llu pixels (corrupt or "
              "truncated)",
              (unsigned long long)w, (unsigned long long)h);
  /* libjpeg's memory: 4 bytes per pixel of --max-pixels (the bound of every stb buffer) plus
   * its own state. Only a multi-scan file needs more than rows; refused here with the
   * numbers, and libjpeg refuses anything past the cap itself (it has no backing store). */
  uint64_t limit =
      max_pixels > (UINT64_MAX - JPEG_MEM_FLOOR) / 4 ? UINT64_MAX : 4 * max_pixels + JPEG_MEM_FLOOR;
  if (limit > (uint64_t)LONG_MAX)
    limit = (uint64_t)LONG_MAX;
  ctx->mem_limit = limit;
  cinfo->mem->max_memory_to_use = (long)limit;
  if (jpeg_has_multiple_scans(cinfo) && coef > limit - JPEG_MEM_FLOOR)
    jpeg_fail(ctx, GPUIMG_EXIT_INPUT,
              "cannot decode JPEG: a %llux%llu multi-scan image needs %llu bytes of "
              "coefficients, over the limit of %llu (4 bytes per pixel of --max-pixels)",
              (unsigned long long)w, (unsigned long long)h, (unsigned long long)coef,
              (unsigned long long)(limit - JPEG_MEM_FLOOR));
}

/* The scanlines into ctx->pixels (out_c channels), four components turned into RGB as
 * jpeg_decode_run() chose (cmyk_by_k). */
static void jpeg_read_pixels(jpeg_ctx_t *ctx, struct jpeg_decompress_struct *cinfo, int out_c,
                             int cmyk_by_k)
{
  uint64_t w = cinfo->output_width, h = cinfo->output_height;
  int nc = cinfo->num_components;
  size_t stride = (size_t)w * (size_t)out_c;
  ctx->pixels = gpuimg_codec_pixels(stride * (size_t)h, &ctx->borrowed);
  if (!ctx->pixels)
    jpeg_fail(ctx, GPUIMG_EXIT_FAILURE, "out of memory allocating %zu bytes", stride * (size_t)h);
  JSAMPARRAY cmyk = NULL;
  if (nc == 4)
    cmyk = (*cinfo->mem->alloc_sarray)((j_common_ptr)cinfo, JPOOL_IMAGE, (JDIMENSION)(w * 4), 1);
  while (cinfo->output_scanline < cinfo->output_height) {
    uint8_t *row = ctx->pixels + (size_t)cinfo->output_scanline * stride;
    if (!cmyk) {
      JSAMPROW rows[1] = {row};
      jpeg_read_scanlines(cinfo, rows, 1);
      continue;
    }
    jpeg_read_scanlines(cinfo, cmyk, 1);
    const JSAMPLE *s = cmyk[0];
    for (uint64_t x = 0; x < w; x++, s += 4, row += 3) {
      for (int k = 0; k < 3; k++)
        row[k] = cmyk_by_k ? blinn_8x8(s[k], s[3]) : (uint8_t)(255 - s[k]);
    }
  }
}

/* The decode itself, apart from jpeg_decode() so that no local of the function that called
 * setjmp changes after it. Fills ctx->pixels; every failure longjmps. */
static void jpeg_decode_run(jpeg_ctx_t *ctx, struct jpeg_decompress_struct *cinfo,
                            const uint8_t *bytes, size_t size, uint64_t max_pixels, int reduction)
{
  jpeg_mem_src(cinfo, bytes, (unsigned long)size);
  jpeg_read_header(cinfo, TRUE);
  jpeg_check_header(ctx, cinfo, size, max_pixels);
  /* libjpeg reads every scan of a multi-scan file in jpeg_start_decompress(): the scans'
   * work is counted from the markers first, and a file over the limit is refused at once. */
  char why[sizeof ctx->reason - 32];
  gpuimg_jpeg_work(bytes, size, &ctx->work);
  if (gpuimg_jpeg_work_check(&ctx->work, why, sizeof why) < 0)
    jpeg_fail_work(ctx, why);

  uint64_t w = cinfo->image_width, h = cinfo->image_height;
  int nc = cinfo->num_components;
  /* Gray stays one channel; YCbCr and RGB become RGB. Four components become RGB as stb
   * makes them: with Adobe's marker saying CMYK or YCCK (which libjpeg turns into CMYK),
   * colour = C * K / 255 (Adobe stores CMYK inverted); without it, or with another
   * transform, YCbCr whose fourth component is ignored (read as YCCK: C = 255 - R). */
  int out_c = nc == 1 ? 1 : 3;
  int cmyk_by_k =
      cinfo->saw_Adobe_marker && (cinfo->Adobe_transform == 0 || cinfo->Adobe_transform == 2);
  if (nc == 4 && !cmyk_by_k)
    cinfo->jpeg_color_space = JCS_YCCK;
  cinfo->out_color_space = nc == 1 ? JCS_GRAYSCALE : nc == 3 ? JCS_RGB : JCS_CMYK;
  cinfo->progress = &ctx->progress;
  /* Shrink-on-load: libjpeg's DCT scaling makes each side ceil(side / reduction). */
  cinfo->scale_num = 1;
  cinfo->scale_denom = (unsigned)reduction;
  w = (uint64_t)gpuimg_reduced_side((int)w, reduction);
  h = (uint64_t)gpuimg_reduced_side((int)h, reduction);
  /* A multi-scan file is read whole here: its damage is found before the pixels exist. */
  jpeg_start_decompress(cinfo);
  if (cinfo->output_width != w || cinfo->output_height != h ||
      cinfo->output_components != (nc == 1   ? 1
                                   : nc == 3 ? 3
                                             : 4))
    jpeg_fail(ctx, GPUIMG_EXIT_INPUT, "cannot decode JPEG: unexpected output layout");
  jpeg_read_pixels(ctx, cinfo, out_c, cmyk_by_k);
  /* Reads on to the end marker: a file cut after its last scan fails here. */
  jpeg_finish_decompress(cinfo);
}

/* ---- decoding in bands ----
 * A JPEG whose restart intervals are whole rows of MCUs (gpuimg's own large JPEGs, a
 * camera's that restarts at whole rows) decodes in bands of intervals on several threads: each band
 * is a JPEG of its own (the file's header with the band's height, its intervals' data with the RST
 * markers renumbered from 0, EOI), as a restart resets every prediction. Where a component is
 * subsampled vertically its upsampling reads the rows of the MCU rows above and below, so a
 * band then also decodes the interval above it (its rows thrown away) and the one below (as
 * far as libjpeg needs): the pixels are those of one decode of the whole file. Anything a
 * band cannot decode goes to the whole decode, which says what is wrong. GPUIMG_JPEG_BANDS=0
 * decodes every file whole. */
#ifndef GPUIMG_FUZZING
#define JPEG_DECODE_BAND_MIN_PIXELS ((int64_t)1 << 22)
#else
#define JPEG_DECODE_BAND_MIN_PIXELS 0 /* the fuzzer's small files decode in bands too */
#endif

typedef struct {
  const uint8_t *bytes;
  const gpuimg_jpeg_layout_t *l;
  int nbands, reduction;
  int out_w, out_h, out_c;
  uint8_t *pixels;
} decode_bands_t;

/* Band i's own JPEG in buf, of the file's intervals *first to *last - 1: its own and, where
 * the upsampling reads neighbouring rows, one above and one below. */
static int band_file(const decode_bands_t *db, int i, gpuimg_buf_t *buf, int *first, int *last)
{
  const gpuimg_jpeg_layout_t *l = db->l;
  int a = (int)((int64_t)i * l->n / db->nbands), b = (int)((int64_t)(i + 1) * l->n / db->nbands);
  *first = a > 0 && l->vertical_ctx ? a - 1 : a;
  *last = b < l->n && l->vertical_ctx ? b + 1 : b;
  int y0 = *first * l->interval_rows, y1 = *last * l->interval_rows;
  int rows = (y1 < l->height ? y1 : l->height) - y0;
  size_t head = l->data, sof = l->sof;
  if (gpuimg_buf_append(buf, db->bytes, head) < 0 ||
      gpuimg_buf_append(buf, db->bytes + l->start[*first], l->end[*last - 1] - l->start[*first]) <
          0 ||
      gpuimg_buf_append(buf, (const uint8_t *)"\xff\xd9", 2) < 0)
    return -1;
  buf->data[sof + 5] = (uint8_t)(rows >> 8);
  buf->data[sof + 6] = (uint8_t)rows;
  for (int k = *first + 1; k < *last; k++) /* the RST marker before interval k */
    buf->data[head + l->start[k] - 1 - l->start[*first]] = (uint8_t)(0xd0 + ((k - 1 - *first) & 7));
  return 0;
}

/* Band i's rows, from its own JPEG in buf (intervals first..last - 1 of the file), apart from
 * band_decode() so that no local of the function that called setjmp changes after it. libjpeg
 * must find the header the layout read (the scan's data where the layout put it: a header
 * that hides another image from the layout fails the band). Every failure longjmps. */
static void band_decode_run(jpeg_ctx_t *ctx, struct jpeg_decompress_struct *cinfo,
                            const decode_bands_t *db, int i, gpuimg_buf_t *buf)
{
  const gpuimg_jpeg_layout_t *l = db->l;
  int first, last;
  if (band_file(db, i, buf, &first, &last) < 0)
    jpeg_fail(ctx, GPUIMG_EXIT_FAILURE, "out of memory");
  int a = (int)((int64_t)i * l->n / db->nbands), b = (int)((int64_t)(i + 1) * l->n / db->nbands);
  int r = db->reduction;
  int skip = (a - first) * l->interval_rows / r, y = a * l->interval_rows / r;
  int end = b == l->n ? db->out_h : b * l->interval_rows / r;
  size_t stride = (size_t)db->out_w * (size_t)db->out_c;
  jpeg_create_decompress(cinfo);
  jpeg_mem_src(cinfo, buf->data, (unsigned long)buf->size);
  jpeg_read_header(cinfo, TRUE);
  if (cinfo->src->next_input_byte != buf->data + l->data || (int)cinfo->image_width != l->width ||
      cinfo->restart_interval == 0)
    jpeg_fail(ctx, GPUIMG_EXIT_INPUT, "libjpeg reads another header than the layout");
  cinfo->out_color_space = db->out_c == 1 ? JCS_GRAYSCALE : JCS_RGB;
  cinfo->scale_num = 1;
  cinfo->scale_denom = (unsigned)r;
  jpeg_start_decompress(cinfo);
  if ((int)cinfo->output_width != db->out_w || cinfo->output_components != db->out_c ||
      (int)cinfo->output_height < skip + end - y)
    jpeg_fail(ctx, GPUIMG_EXIT_INPUT, "a band is not as expected");
  JSAMPARRAY scratch =
      (*cinfo->mem->alloc_sarray)((j_common_ptr)cinfo, JPOOL_IMAGE, (JDIMENSION)stride, 1);
  while ((int)cinfo->output_scanline < skip)
    jpeg_read_scanlines(cinfo, scratch, 1);
  for (; y < end; y++) {
    JSAMPROW row[1] = {db->pixels + (size_t)y * stride};
    jpeg_read_scanlines(cinfo, row, 1);
  }
}

/* Decodes band i (part of gpuimg_pool_ordered, buf its own JPEG) into its rows of db->pixels. */
static int band_decode(void *arg, int i, gpuimg_buf_t *buf)
{
  const decode_bands_t *db = arg;
  jpeg_ctx_t ctx;
  struct jpeg_decompress_struct cinfo;
  jpeg_ctx_init(&ctx, GPUIMG_EXIT_INPUT);
  memset(&cinfo, 0, sizeof cinfo);
  cinfo.err = &ctx.pub;
  if (setjmp(ctx.jump)) {
    jpeg_destroy_decompress(&cinfo);
    gpuimg_error_set(GPUIMG_EXIT_INPUT, "", "a band did not decode");
    return -1;
  }
  band_decode_run(&ctx, &cinfo, db, i, buf);
  jpeg_destroy_decompress(&cinfo); /* the rows below the band are not needed */
  return 0;
}

static int band_done(void *arg, int i, gpuimg_buf_t *buf)
{
  (void)arg, (void)i, (void)buf;
  return 0;
}

/* The decode in bands on the calling thread's codec threads: 0 done (out filled), 1 not for
 * this file, -1 a band failed (the whole decode is to say why). */
static int jpeg_decode_bands(const uint8_t *bytes, size_t size, uint64_t max_pixels, int reduction,
                             gpuimg_image_t *out)
{
  const char *env = getenv("GPUIMG_JPEG_BANDS");
  int threads = gpuimg_codec_threads();
  gpuimg_jpeg_layout_t l;
  if (threads < 2 || (env && strcmp(env, "0") == 0) ||
      !gpuimg_jpeg_layout(bytes, size, JPEG_DECODE_BAND_MIN_PIXELS, &l))
    return 1;
  int64_t px = (int64_t)l.width * l.height;
  if (l.width > JPEG_MAX_DIMENSION || l.height > JPEG_MAX_DIMENSION) { /* for it to refuse */
    gpuimg_jpeg_layout_free(&l);
    return 1;
  }
  decode_bands_t db = {.bytes = bytes,
                       .l = &l,
                       .nbands = threads < l.n ? threads : l.n,
                       .reduction = reduction,
                       .out_w = gpuimg_reduced_side(l.width, reduction),
                       .out_h = gpuimg_reduced_side(l.height, reduction),
                       .out_c = l.components};
  int rc = 1, borrowed = 0;
  if ((uint64_t)px <= max_pixels &&
      (db.pixels = gpuimg_codec_pixels((size_t)db.out_w * (size_t)db.out_h * (size_t)db.out_c,
                                       &borrowed))) {
    rc = gpuimg_pool_ordered(threads, db.nbands, band_decode, band_done, &db) < 0 ? -1 : 0;
    if (rc == 0)
      *out = (gpuimg_image_t){.width = db.out_w,
                              .height = db.out_h,
                              .channels = db.out_c,
                              .data = db.pixels,
                              .borrowed = borrowed};
    else if (!borrowed)
      free(db.pixels);
  }
  gpuimg_jpeg_layout_free(&l);
  return rc;
}

/* Decodes a JPEG, at 1/reduction of its size (1: full size; 2, 4, 8: libjpeg's DCT scaling,
 * for shrink-on-load), into 8-bit gray (1 channel) or RGB (3 channels). Size checks come from the
 * header, before anything of the image's size is allocated. Every refusal is exit status 3
 * with "cannot decode JPEG: <reason>" (libjpeg's message, first letter lowered), or the
 * --max-pixels message; a real shortage of memory (libjpeg's memory manager fails with
 * JERR_OUT_OF_MEMORY) is "out of memory", exit status 1. */
static int jpeg_decode_reduced(const uint8_t *bytes, size_t size, const char *what,
                               uint64_t max_pixels, int reduction, gpuimg_image_t *out)
{
  jpeg_ctx_t ctx;
  struct jpeg_decompress_struct cinfo;

  memset(out, 0, sizeof *out);
  if (size == 0) {
    gpuimg_error_set(GPUIMG_EXIT_INPUT, what, "empty file");
    return -1;
  }
  if (size < 3 || bytes[0] != 0xff || bytes[1] != 0xd8 || bytes[2] != 0xff) {
    gpuimg_error_set(GPUIMG_EXIT_INPUT, what, "unsupported format (not JPEG)");
    return -1;
  }
  if (size > (size_t)GPUIMG_MAX_FILE_BYTES) {
    gpuimg_error_set(GPUIMG_EXIT_INPUT, what, "file too large");
    return -1;
  }
  int banded = jpeg_decode_bands(bytes, size, max_pixels, reduction, out);
  if (banded == 0)
    return 0;
  if (banded < 0)
    gpuimg_error_clear(); /* the whole decode says what is wrong */
  jpeg_ctx_init(&ctx, GPUIMG_EXIT_INPUT);
  memset(&cinfo, 0, sizeof cinfo);
  cinfo.err = &ctx.pub;
  if (setjmp(ctx.jump)) {
    /* The header's size is kept in cinfo when libjpeg refuses it: say what a user can act
     * on first (--max-pixels), then why libjpeg cannot. */
    uint64_t w = cinfo.image_width, h = cinfo.image_height;
    int code = ctx.exit_code;
    if (ctx.msg_code == JERR_EMPTY_IMAGE && (w == 0 || h == 0))
      snprintf(ctx.reason, sizeof ctx.reason, "cannot decode JPEG: zero width or height");
    else if (ctx.msg_code == JERR_IMAGE_TOO_BIG && w * h > max_pixels)
      snprintf(ctx.reason, sizeof ctx.reason,
               "image is %llux%llu, over the limit of %llu pixels (see --max-pixels)",
               (unsigned long long)w, (unsigned long long)h, (unsigned long long)max_pixels);
    else if (ctx.msg_code == JERR_IMAGE_TOO_BIG)
      snprintf(ctx.reason, sizeof ctx.reason,
               "cannot decode JPEG: image is %llux%llu, over the largest side of %ld pixels",
               (unsigned long long)w, (unsigned long long)h, (long)JPEG_MAX_DIMENSION);
    else if (ctx.msg_code == JERR_NO_BACKING_STORE)
      snprintf(ctx.reason, sizeof ctx.reason,
               "cannot decode JPEG: needs more than %llu bytes of decoder memory (4 bytes per "
               "pixel of --max-pixels)",
               (unsigned long long)ctx.mem_limit);
    else if (ctx.msg_code == JERR_OUT_OF_MEMORY) {
      code = GPUIMG_EXIT_FAILURE;
      snprintf(ctx.reason, sizeof ctx.reason, "out of memory");
    } else if (ctx.msg_code >= 0)
      snprintf(ctx.reason, sizeof ctx.reason, "cannot decode JPEG: %s", ctx.msg);
    jpeg_destroy_decompress(&cinfo);
    if (!ctx.borrowed)
      free(ctx.pixels);
    gpuimg_error_set(code, what, "%s", ctx.reason);
    return -1;
  }
  jpeg_create_decompress(&cinfo);
  /* jpeg_create_decompress() reads JPEGMEM from the environment: the cap is set after it. */
  jpeg_decode_run(&ctx, &cinfo, bytes, size, max_pixels, reduction);
  out->width = (int)cinfo.output_width;
  out->height = (int)cinfo.output_height;
  out->channels = cinfo.output_components == 1 ? 1 : 3;
  out->data = ctx.pixels;
  out->borrowed = ctx.borrowed;
  jpeg_destroy_decompress(&cinfo);
  return 0;
}

static int jpeg_decode(const uint8_t *bytes, size_t size, const char *what, uint64_t max_pixels,
                       gpuimg_image_t *out)
{
  return jpeg_decode_reduced(bytes, size, what, max_pixels, 1, out);
}

/* A destination manager that appends to a gpuimg_buf_t, a chunk at a time. */
typedef struct {
  struct jpeg_destination_mgr pub;
  gpuimg_buf_t *out;
  JOCTET chunk[JPEG_DEST_CHUNK];
} jpeg_dest_t;

static void jpeg_dest_init_cb(j_compress_ptr cinfo)
{
  jpeg_dest_t *dest = (jpeg_dest_t *)cinfo->dest;
  dest->pub.next_output_byte = dest->chunk;
  dest->pub.free_in_buffer = sizeof dest->chunk;
}

static boolean jpeg_dest_empty_cb(j_compress_ptr cinfo)
{
  jpeg_dest_t *dest = (jpeg_dest_t *)cinfo->dest;
  if (gpuimg_buf_append(dest->out, dest->chunk, sizeof dest->chunk) < 0)
    ERREXIT1(cinfo, JERR_OUT_OF_MEMORY, 0);
  dest->pub.next_output_byte = dest->chunk;
  dest->pub.free_in_buffer = sizeof dest->chunk;
  return TRUE;
}

static void jpeg_dest_term_cb(j_compress_ptr cinfo)
{
  jpeg_dest_t *dest = (jpeg_dest_t *)cinfo->dest;
  if (gpuimg_buf_append(dest->out, dest->chunk, sizeof dest->chunk - dest->pub.free_in_buffer) < 0)
    ERREXIT1(cinfo, JERR_OUT_OF_MEMORY, 0);
}

/* The encode itself, apart from jpeg_encode() (see jpeg_decode_run()). */
static void jpeg_encode_run(struct jpeg_compress_struct *cinfo, jpeg_dest_t *dest,
                            const gpuimg_image_t *img, int quality, int restart_rows)
{
  const int c = img->channels;
  /* Gray (and gray+alpha) become a one-component gray JPEG, RGB (and RGBA) a YCbCr one;
   * alpha is dropped, as stb's writer drops it. */
  const int in_c = c <= 2 ? 1 : 3;
  cinfo->dest = &dest->pub;
  dest->pub.init_destination = jpeg_dest_init_cb;
  dest->pub.empty_output_buffer = jpeg_dest_empty_cb;
  dest->pub.term_destination = jpeg_dest_term_cb;
  cinfo->image_width = (JDIMENSION)img->width;
  cinfo->image_height = (JDIMENSION)img->height;
  cinfo->input_components = in_c;
  cinfo->in_color_space = in_c == 1 ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_set_defaults(cinfo);
  jpeg_set_quality(cinfo, quality, TRUE);
  cinfo->restart_in_rows = restart_rows;
  jpeg_start_compress(cinfo, TRUE);
  JSAMPARRAY tmp = NULL;
  if (c != in_c)
    tmp = (*cinfo->mem->alloc_sarray)((j_common_ptr)cinfo, JPOOL_IMAGE,
                                      (JDIMENSION)img->width * (JDIMENSION)in_c, 1);
  const size_t stride = (size_t)img->width * (size_t)c;
  while (cinfo->next_scanline < cinfo->image_height) {
    const uint8_t *src = img->data + (size_t)cinfo->next_scanline * stride;
    JSAMPROW row[1];
    if (tmp) {
      JSAMPLE *d = tmp[0];
      for (int x = 0; x < img->width; x++, src += c)
        for (int k = 0; k < in_c; k++)
          *d++ = src[k];
      row[0] = tmp[0];
    } else {
      row[0] = (JSAMPROW)(uintptr_t)src; /* libjpeg only reads input rows */
    }
    jpeg_write_scanlines(cinfo, row, 1);
  }
  jpeg_finish_compress(cinfo);
}

/* Encodes img (1 to 4 channels) as a baseline JPEG with libjpeg's defaults (4:2:0 chroma for
 * colour, standard Huffman tables) at quality, with a restart every restart_rows rows of MCUs
 * (0: none), appending it to out. */
static int jpeg_encode_image(const gpuimg_image_t *img, int quality, int restart_rows,
                             const char *what, gpuimg_buf_t *out)
{
  jpeg_ctx_t ctx;
  jpeg_dest_t dest;
  struct jpeg_compress_struct cinfo;

  jpeg_ctx_init(&ctx, GPUIMG_EXIT_OUTPUT);
  memset(&cinfo, 0, sizeof cinfo);
  memset(&dest, 0, sizeof dest);
  dest.out = out;
  cinfo.err = &ctx.pub;
  if (setjmp(ctx.jump)) {
    jpeg_destroy_compress(&cinfo);
    if (ctx.msg_code == JERR_OUT_OF_MEMORY)
      gpuimg_error_set(GPUIMG_EXIT_FAILURE, what, "out of memory");
    else
      gpuimg_error_set(GPUIMG_EXIT_OUTPUT, what, "cannot encode JPEG: %s", ctx.msg);
    return -1;
  }
  jpeg_create_compress(&cinfo);
  jpeg_encode_run(&cinfo, &dest, img, quality, restart_rows);
  jpeg_destroy_compress(&cinfo);
  return 0;
}

/* A large image is encoded in bands of JPEG_BAND_ROWS rows, each on its own (on several
 * threads when there are) with a restart every JPEG_INTERVAL_ROWS rows, joined into one scan:
 * the first band's header (its DRI marker included), then the bands' entropy-coded data with
 * RST markers between them, every RST renumbered in the scan's order. A band starts with its
 * DC predictions reset, as a restart does, and no block crosses a band's edge (256 rows are a
 * whole number of MCUs), so the coefficients are those of one encode of the whole image with
 * those restarts, and a decoder gives the same pixels as from the image encoded whole. The
 * 64-row intervals let a decoder cut the file finely (jpeg_decode_bands()). The cut follows
 * from the image alone: the same bytes at every thread count. GPUIMG_JPEG_BANDS=0 encodes
 * every image whole (for comparison). */
#define JPEG_BAND_ROWS 256
#define JPEG_INTERVAL_ROWS 64
#define JPEG_BAND_MIN_PIXELS ((int64_t)1 << 22)

typedef struct {
  const gpuimg_image_t *img;
  int quality;
  const char *what;
  int nbands;
  gpuimg_buf_t *out;
} bands_t;

/* The rows of an MCU of what libjpeg writes for channels: gray 8x8 blocks, colour 4:2:0. */
static int jpeg_mcu_rows(int channels)
{
  return channels <= 2 ? 8 : 16;
}

/* The bands of img (1: encoded whole): a large image only, not one whose restart interval
 * holds more MCUs than DRI's 16 bits count, nor one libjpeg would refuse. */
static int jpeg_bands(const gpuimg_image_t *img)
{
  const char *env = getenv("GPUIMG_JPEG_BANDS");
  int mcu = jpeg_mcu_rows(img->channels); /* MCUs are square */
  int64_t mcus = ((int64_t)img->width + mcu - 1) / mcu * (JPEG_INTERVAL_ROWS / mcu);
  /* An image over libjpeg's largest side is encoded whole, for libjpeg to refuse it. */
  if ((env && strcmp(env, "0") == 0) || img->height <= JPEG_BAND_ROWS || mcus > 65535 ||
      img->width > JPEG_MAX_DIMENSION || img->height > JPEG_MAX_DIMENSION ||
      (int64_t)img->width * img->height < JPEG_BAND_MIN_PIXELS)
    return 1;
  return (img->height + JPEG_BAND_ROWS - 1) / JPEG_BAND_ROWS;
}

static int band_part(void *arg, int i, gpuimg_buf_t *buf)
{
  const bands_t *b = arg;
  gpuimg_image_t band = *b->img;
  int y0 = i * JPEG_BAND_ROWS;
  band.height = b->img->height - y0 < JPEG_BAND_ROWS ? b->img->height - y0 : JPEG_BAND_ROWS;
  band.data += (size_t)y0 * (size_t)band.width * (size_t)band.channels;
  int restart_rows = JPEG_INTERVAL_ROWS / jpeg_mcu_rows(band.channels);
  return jpeg_encode_image(&band, b->quality, restart_rows, b->what, buf);
}

/* The offset of the first marker segment of type marker (0xC0: SOF0, 0xDA: SOS) in the header
 * of a JPEG libjpeg wrote, 0 when there is none before the scan. */
static size_t segment_at(const gpuimg_buf_t *buf, int marker)
{
  const uint8_t *d = buf->data;
  for (size_t p = 2; p + 4 <= buf->size && d[p] == 0xff;
       p += 2 + ((size_t)d[p + 2] << 8 | d[p + 3])) {
    if (d[p + 1] == marker)
      return p;
    if (d[p + 1] == 0xda)
      break;
  }
  return 0;
}

/* Adds shift (mod 8) to the number of every RST marker in entropy-coded data d[0..n)
 * (libjpeg's: every other 0xff is followed by a stuffed 0). */
static void renumber_rst(uint8_t *d, size_t n, int shift)
{
  for (size_t i = 0; i + 1 < n; i++)
    if (d[i] == 0xff && d[i + 1] >= 0xd0 && d[i + 1] <= 0xd7)
      d[i + 1] = (uint8_t)(0xd0 + ((d[i + 1] - 0xd0 + shift) & 7));
}

/* Appends band i to the output: the first with its header (SOF0's height made the image's),
 * the others' entropy-coded data after an RST marker, every RST numbered in the scan's order;
 * EOI after the last. */
static int band_take(void *arg, int i, gpuimg_buf_t *buf)
{
  bands_t *b = arg;
  uint8_t *d = buf->data;
  size_t sos = segment_at(buf, 0xda), sof = segment_at(buf, 0xc0), end = buf->size - 2;
  if (!sos || !sof || !segment_at(buf, 0xdd) || sos + 4 > end || d[end] != 0xff ||
      d[end + 1] != 0xd9) {
    gpuimg_error_set(GPUIMG_EXIT_OUTPUT, b->what, "cannot encode JPEG: a band is not as expected");
    return -1;
  }
  int first = i * (JPEG_BAND_ROWS / JPEG_INTERVAL_ROWS); /* the scan's number of its interval */
  size_t data = sos + 2 + ((size_t)d[sos + 2] << 8 | d[sos + 3]);
  renumber_rst(d + data, end - data, first);
  int rc;
  if (i == 0) {
    d[sof + 5] = (uint8_t)(b->img->height >> 8);
    d[sof + 6] = (uint8_t)b->img->height;
    rc = gpuimg_buf_append(b->out, d, end);
  } else {
    const uint8_t rst[2] = {0xff, (uint8_t)(0xd0 + ((first - 1) & 7))};
    rc = gpuimg_buf_append(b->out, rst, sizeof rst) |
         gpuimg_buf_append(b->out, d + data, end - data);
  }
  if (i == b->nbands - 1)
    rc |= gpuimg_buf_append(b->out, d + end, 2);
  if (rc)
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, b->what, "out of memory");
  return rc ? -1 : 0;
}

static int jpeg_parts(int width, int height, int channels)
{
  gpuimg_image_t img = {.width = width, .height = height, .channels = channels};
  return jpeg_bands(&img);
}

/* The codec's encode: whole, or in bands on opts->threads threads. */
static int jpeg_encode(const gpuimg_image_t *img, gpuimg_format_t fmt,
                       const gpuimg_encode_opts_t *opts, const char *what, gpuimg_buf_t *out)
{
  const int quality = opts->quality < 1 ? 1 : opts->quality > 100 ? 100 : opts->quality;
  if (gpuimg_encode_check(img, fmt, GPUIMG_FORMAT_JPEG, "libjpeg", what) < 0)
    return -1;
  bands_t b = {.img = img, .quality = quality, .what = what, .out = out};
  b.nbands = jpeg_bands(img);
  if (b.nbands == 1)
    return jpeg_encode_image(img, quality, 0, what, out);
  return gpuimg_pool_ordered(opts->threads, b.nbands, band_part, band_take, &b);
}

/* Under auto: JPEG in and out, ahead of stb. */
const gpuimg_codec_t gpuimg_codec_libjpeg = {
    .name = "libjpeg",
    .library = "libjpeg",
    .decodes = GPUIMG_FORMAT_BIT(GPUIMG_FORMAT_JPEG),
    .encodes = GPUIMG_FORMAT_BIT(GPUIMG_FORMAT_JPEG),
    .recognises = gpuimg_codec_is_jpeg,
    .priority = 2,
    .decode = jpeg_decode,
    .decode_reduced = jpeg_decode_reduced,
    .encode = jpeg_encode,
    .encode_parts = jpeg_parts,
};
#else
/* Built without libjpeg: no formats, so not in the registry. */
const gpuimg_codec_t gpuimg_codec_libjpeg = {.name = "libjpeg", .library = "libjpeg"};
#endif
