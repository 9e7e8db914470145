/* codec.c: formats by name, where decoders put pixels, and the codec registry: the table of
 * codecs compiled in and which of them serves under --codec. */
#include "codec.h"

#include "jpeg_layout.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Every codec, in the order -V lists them; those the build lacks declare no formats and are
 * skipped, so the registry is the codecs compiled in. */
static const gpuimg_codec_t *const codecs[] = {
    &gpuimg_codec_stb,     &gpuimg_codec_fastpng, &gpuimg_codec_libpng,  &gpuimg_codec_libjpeg,
    &gpuimg_codec_libwebp, &gpuimg_codec_libtiff, &gpuimg_codec_libheif, &gpuimg_codec_nvjpeg,
};
#define NCODECS (int)(sizeof codecs / sizeof codecs[0])

/* The --codec spellings, by gpuimg_codec_choice_t. */
const char *const gpuimg_codec_choices[] = {"auto",    "stb",    "fastpng", "libpng",
                                            "libjpeg", "nvjpeg", NULL};

static int compiled_in(const gpuimg_codec_t *c)
{
  return (c->decodes | c->encodes) != 0;
}

/* Whether c decodes these bytes: its own test, or its formats' signatures. */
static int recognises(const gpuimg_codec_t *c, const uint8_t *bytes, size_t size)
{
  if (!c->decodes)
    return 0;
  if (c->recognises)
    return c->recognises(bytes, size);
  gpuimg_format_t f = gpuimg_format_of(bytes, size);
  return f != GPUIMG_FORMAT_NONE && (c->decodes & GPUIMG_FORMAT_BIT(f));
}

const char *gpuimg_codec_missing(const char *name)
{
  for (int k = 0; k < NCODECS; k++)
    if (!compiled_in(codecs[k]) && strcmp(codecs[k]->name, name) == 0)
      return codecs[k]->library;
  return NULL;
}

int gpuimg_codec_choice_device(gpuimg_codec_choice_t choice)
{
  const gpuimg_codec_t *c = gpuimg_codec_find(gpuimg_codec_choice_name(choice));
  return c && c->device;
}

int gpuimg_codec_device_recognises(const uint8_t *bytes, size_t size)
{
  const gpuimg_codec_t *c;
  for (int i = 0; (c = gpuimg_codec_at(i)); i++)
    if (c->device && c->decodes && c->recognises && c->recognises(bytes, size))
      return 1;
  return 0;
}

int gpuimg_codec_device_encodes(gpuimg_format_t fmt)
{
  const gpuimg_codec_t *c;
  for (int i = 0; (c = gpuimg_codec_at(i)); i++)
    if (c->device && (c->encodes & GPUIMG_FORMAT_BIT(fmt)))
      return 1;
  return 0;
}

const gpuimg_codec_t *gpuimg_codec_at(int i)
{
  for (int k = 0; k < NCODECS; k++)
    if (compiled_in(codecs[k]) && i-- == 0)
      return codecs[k];
  return NULL;
}

const gpuimg_codec_t *gpuimg_codec_find(const char *name)
{
  const gpuimg_codec_t *c;
  for (int i = 0; (c = gpuimg_codec_at(i)); i++)
    if (strcmp(c->name, name) == 0)
      return c;
  return NULL;
}

const char *gpuimg_codec_choice_name(gpuimg_codec_choice_t choice)
{
  int n = (int)(sizeof gpuimg_codec_choices / sizeof gpuimg_codec_choices[0]) - 1;
  return (int)choice >= 0 && (int)choice < n ? gpuimg_codec_choices[choice] : "auto";
}

const char *gpuimg_codec_list(gpuimg_format_t fmt, int what, char *buf, size_t cap)
{
  const unsigned want =
      fmt >= GPUIMG_FORMAT_PNG && fmt <= GPUIMG_FORMAT_LAST ? GPUIMG_FORMAT_BIT(fmt) : ~0u;
  const gpuimg_codec_t *c;
  size_t len = 0;
  if (cap)
    buf[0] = 0;
  for (int i = 0; (c = gpuimg_codec_at(i)) && len < cap; i++) {
    unsigned has = ((what & GPUIMG_CODEC_DECODES) ? c->decodes : 0) |
                   ((what & GPUIMG_CODEC_ENCODES) ? c->encodes : 0);
    if (has & want) {
      int k = snprintf(buf + len, cap - len, "%s%s", len ? ", " : "", c->name);
      len += k > 0 ? (size_t)k : 0;
    }
  }
  return buf;
}

int gpuimg_codec_is_jpeg(const uint8_t *bytes, size_t size)
{
  return size >= 3 && bytes[0] == 0xff && bytes[1] == 0xd8 && bytes[2] == 0xff;
}

/* A frame header's body (after the length) of n bytes: see gpuimg_codec_jpeg_is_common(). */
static int common_frame(const uint8_t *f, size_t n)
{
  if (n < 6 || f[0] != 8 || (f[5] != 1 && f[5] != 3) || n < 6 + 3 * (size_t)f[5])
    return 0;
  if (f[5] == 1)
    return 1;
  int h = f[7] >> 4, v = f[7] & 15;
  int luma = (h == 1 || h == 2 || h == 4) && (v == 1 || v == 2);
  int rgb = f[6] == 'R' && f[9] == 'G' && f[12] == 'B'; /* libjpeg takes these ids for RGB */
  return luma && f[10] == 0x11 && f[13] == 0x11 && !rgb;
}

/* Whether the JPEG's scans are within the decoding work the host decoders allow. */
static int scans_within_limits(const uint8_t *bytes, size_t size)
{
  gpuimg_jpeg_work_t w;
  char why[256];
  gpuimg_jpeg_work(bytes, size, &w);
  return gpuimg_jpeg_work_check(&w, why, sizeof why) == 0;
}

int gpuimg_codec_jpeg_is_common(const uint8_t *bytes, size_t size)
{
  if (!gpuimg_codec_is_jpeg(bytes, size))
    return 0;
  gpuimg_jpeg_segment_t s;
  for (size_t p = 2; gpuimg_jpeg_segment(bytes, size, &p, &s);) {
    int m = s.marker;
    if (!s.body || m == 0xda)
      return 0; /* a marker without a length, or a scan before any frame */
    if (m == 0xee && s.size >= 12 && memcmp(s.body, "Adobe", 5) == 0 && s.body[11] == 0)
      return 0; /* Adobe's APP14 saying the channels are stored untransformed (RGB or CMYK) */
    if (m == 0xc0 || m == 0xc1 || m == 0xc2)
      return common_frame(s.body, s.size) && scans_within_limits(bytes, size);
    if (m >= 0xc3 && m <= 0xcf && m != 0xc4 && m != 0xc8 && m != 0xcc)
      return 0; /* lossless, hierarchical or arithmetic-coded */
  }
  return 0; /* damaged, or no frame */
}

int gpuimg_codec_recognised(const uint8_t *bytes, size_t size)
{
  const gpuimg_codec_t *c;
  for (int i = 0; (c = gpuimg_codec_at(i)); i++)
    if (recognises(c, bytes, size))
      return 1;
  return 0;
}

int gpuimg_codec_is_png(const uint8_t *bytes, size_t size)
{
  static const uint8_t signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  return size >= sizeof signature && memcmp(bytes, signature, sizeof signature) == 0;
}

/* A job for the table: decode bytes, or encode fmt at a PNG level. */
typedef struct {
  int decode;
  const uint8_t *bytes;
  size_t size;
  gpuimg_format_t fmt;
  int png_level;
} job_t;

static int serves(const gpuimg_codec_t *c, const job_t *job)
{
  if (job->decode)
    return recognises(c, job->bytes, job->size);
  return job->fmt >= GPUIMG_FORMAT_PNG && job->fmt <= GPUIMG_FORMAT_LAST &&
         (c->encodes & GPUIMG_FORMAT_BIT(job->fmt)) != 0;
}

/* Whether auto considers c for the job: it serves it, has a priority, and for PNG output
 * the level is in its range. */
static int auto_serves(const gpuimg_codec_t *c, const job_t *job)
{
  return c->priority > 0 && serves(c, job) &&
         (job->decode || job->fmt != GPUIMG_FORMAT_PNG ||
          (job->png_level >= c->png_level_min && job->png_level <= c->png_level_max));
}

/* The reference codec for the job: the one of lowest priority that serves it (for a format
 * only one codec reads, libwebp's, that one), else of those that do its kind of work (decode
 * at all) stb, which reports bytes nobody recognises; for a format nobody writes, the
 * table's first (stb again), which reports it. */
static const gpuimg_codec_t *reference(const job_t *job)
{
  const gpuimg_codec_t *c, *best = NULL;
  for (int i = 0; (c = gpuimg_codec_at(i)); i++)
    if (serves(c, job) && c->priority > 0 && (!best || c->priority < best->priority))
      best = c;
  if (best)
    return best;
  for (int i = 0; (c = gpuimg_codec_at(i)); i++) {
    int able = job->decode ? c->decodes != 0 : serves(c, job);
    if (able && c->priority > 0 && (!best || c->priority < best->priority))
      best = c;
  }
  return best ? best : gpuimg_codec_at(0);
}

/* The chosen codec when it serves the job; under auto, or for what a device codec leaves,
 * the serving codec of highest priority; else the reference. */
static const gpuimg_codec_t *choose(gpuimg_codec_choice_t choice, const job_t *job)
{
  const gpuimg_codec_t *chosen = gpuimg_codec_find(gpuimg_codec_choice_name(choice));
  if (chosen && serves(chosen, job))
    return chosen;
  if (choice == GPUIMG_CODEC_AUTO || (chosen && chosen->device)) {
    const gpuimg_codec_t *c, *best = NULL;
    for (int i = 0; (c = gpuimg_codec_at(i)); i++)
      if (auto_serves(c, job) && (!best || c->priority > best->priority))
        best = c;
    if (best)
      return best;
  }
  return reference(job);
}

const gpuimg_codec_t *gpuimg_codec_decoder(gpuimg_codec_choice_t choice, const uint8_t *bytes,
                                           size_t size)
{
  job_t job = {1, bytes, size, GPUIMG_FORMAT_NONE, 0};
  return choose(choice, &job);
}

const gpuimg_codec_t *gpuimg_codec_encoder(gpuimg_codec_choice_t choice, gpuimg_format_t fmt,
                                           int png_level)
{
  job_t job = {0, NULL, 0, fmt, png_level < 0 ? 0 : png_level > 9 ? 9 : png_level};
  return choose(choice, &job);
}

static _Thread_local int codec_threads;

void gpuimg_codec_set_threads(int n)
{
  codec_threads = n;
}

int gpuimg_codec_threads(void)
{
  return codec_threads > 1 ? codec_threads : 1;
}

static _Thread_local gpuimg_pixel_source_t pixel_source;
static _Thread_local void *pixel_source_ctx;

void gpuimg_codec_set_pixel_source(gpuimg_pixel_source_t fn, void *ctx)
{
  pixel_source = fn;
  pixel_source_ctx = ctx;
}

uint8_t *gpuimg_codec_pixels(size_t bytes, int *borrowed)
{
  uint8_t *p = pixel_source ? pixel_source(pixel_source_ctx, bytes) : NULL;
  *borrowed = p != NULL;
  return p ? p : malloc(bytes ? bytes : 1);
}

/* A format: its names, and the signatures that begin its files. A signature's '?' matches any
 * byte (no signature has a literal '?'). */
typedef struct {
  const char *name;  /* the report's ("png", "jpeg", ...) */
  const char *upper; /* messages' ("PNG", "JPEG", ...) */
  const char *ext;   /* a batch output's extension */
  const char *alias; /* another extension OUTPUT may have, NULL: none */
  const char *signatures[9];
  int read_only; /* no codec writes it: its extensions name no output format */
} format_info_t;

static const format_info_t formats[] = {
    [GPUIMG_FORMAT_PNG] = {"png", "PNG", "png", NULL, {"\x89PNG\r\n\x1a\n"}},
    [GPUIMG_FORMAT_JPEG] = {"jpeg", "JPEG", "jpg", "jpeg", {"\xff\xd8\xff"}},
    [GPUIMG_FORMAT_BMP] = {"bmp", "BMP", "bmp", NULL, {NULL}},
    [GPUIMG_FORMAT_TGA] = {"tga", "TGA", "tga", NULL, {NULL}},
    [GPUIMG_FORMAT_WEBP] = {"webp", "WebP", "webp", NULL, {"RIFF????WEBP"}},
    [GPUIMG_FORMAT_TIFF] = {"tiff", "TIFF", "tif", "tiff", {"II*", "MM\0*", "II+", "MM\0+"}},
    /* HEIF: an ftyp box (its size, "ftyp") whose major brand names HEVC images (or HEIF
     * itself: mif1, msf1), or AV1 ones. */
    [GPUIMG_FORMAT_HEIC] = {"heic",
                            "HEIC",
                            "heic",
                            "heif",
                            {"????ftypheic", "????ftypheix", "????ftypheim", "????ftypheis",
                             "????ftyphevc", "????ftyphevx", "????ftypmif1", "????ftypmsf1"},
                            1},
    [GPUIMG_FORMAT_AVIF] = {"avif", "AVIF", "avif", NULL, {"????ftypavif", "????ftypavis"}},
};
_Static_assert(sizeof formats / sizeof formats[0] == GPUIMG_FORMAT_LAST + 1,
               "every format has its entry");

/* A signature's length: TIFF's little-endian "II*\0" (BigTIFF's "II+\0") ends in the
 * string's NUL. */
static size_t signature_len(gpuimg_format_t fmt, const char *sig)
{
  return fmt == GPUIMG_FORMAT_TIFF && sig[0] == 'I' ? 4 : strlen(sig);
}

/* How many of bytes' first size bytes match sig (at most its length). */
static size_t signature_match(const char *sig, size_t len, const uint8_t *bytes, size_t size)
{
  size_t k = 0;
  while (k < len && k < size && (sig[k] == '?' || (uint8_t)sig[k] == bytes[k]))
    k++;
  return k;
}

gpuimg_format_t gpuimg_format_of(const uint8_t *bytes, size_t size)
{
  for (int f = 0; f <= GPUIMG_FORMAT_LAST; f++)
    for (const char *const *sig = formats[f].signatures; *sig; sig++) {
      size_t len = signature_len((gpuimg_format_t)f, *sig);
      if (signature_match(*sig, len, bytes, size) == len)
        return (gpuimg_format_t)f;
    }
  return GPUIMG_FORMAT_NONE;
}

/* Whether a codec built in decodes (what GPUIMG_CODEC_DECODES) or encodes fmt. */
static int built_in(gpuimg_format_t fmt, int what)
{
  const gpuimg_codec_t *c;
  for (int i = 0; (c = gpuimg_codec_at(i)); i++)
    if (((what & GPUIMG_CODEC_DECODES) ? c->decodes : c->encodes) & GPUIMG_FORMAT_BIT(fmt))
      return 1;
  return 0;
}

static int decodable(gpuimg_format_t fmt)
{
  return built_in(fmt, GPUIMG_CODEC_DECODES);
}

const char *gpuimg_format_unbuilt(const uint8_t *bytes, size_t size)
{
  gpuimg_format_t f = gpuimg_format_of(bytes, size);
  return f != GPUIMG_FORMAT_NONE && !decodable(f) ? formats[f].upper : NULL;
}

int gpuimg_codec_may_begin(const uint8_t *bytes, size_t size)
{
  for (int f = 0; f <= GPUIMG_FORMAT_LAST; f++)
    for (const char *const *sig = formats[f].signatures; *sig; sig++) {
      size_t len = signature_len((gpuimg_format_t)f, *sig),
             k = signature_match(*sig, len, bytes, size);
      if ((k == len || k == size) && decodable((gpuimg_format_t)f))
        return 1;
    }
  return 0;
}

gpuimg_format_t gpuimg_format_from_name(const char *path)
{
  const char *dot = strrchr(path, '.');
  const char *slash = strrchr(path, '/');
  if (!dot || (slash && dot < slash))
    return GPUIMG_FORMAT_NONE;
  dot++;
  for (int f = 0; f <= GPUIMG_FORMAT_LAST; f++)
    if (!formats[f].read_only && (strcasecmp(dot, formats[f].ext) == 0 ||
                                  (formats[f].alias && strcasecmp(dot, formats[f].alias) == 0)))
      return (gpuimg_format_t)f;
  return GPUIMG_FORMAT_NONE;
}

static int known(gpuimg_format_t fmt)
{
  return fmt >= GPUIMG_FORMAT_PNG && fmt <= GPUIMG_FORMAT_LAST;
}

const char *gpuimg_format_name(gpuimg_format_t fmt)
{
  return known(fmt) ? formats[fmt].name : "none";
}

const char *gpuimg_format_extension(gpuimg_format_t fmt)
{
  return known(fmt) ? formats[fmt].ext : "png";
}

const char *const gpuimg_compression_names[] = {"deflate", "lzw", "none", NULL};

int gpuimg_format_check_writable(gpuimg_format_t fmt, const char *what)
{
  if (known(fmt) && built_in(fmt, GPUIMG_CODEC_ENCODES))
    return 0;
  gpuimg_error_set(GPUIMG_EXIT_USAGE, what, "gpuimg was built without %s",
                   known(fmt) ? formats[fmt].upper : "it");
  return -1;
}

int gpuimg_format_of_output(const char *path, gpuimg_format_t *fmt)
{
  char exts[256];
  if ((*fmt = gpuimg_format_from_name(path)) != GPUIMG_FORMAT_NONE)
    return gpuimg_format_check_writable(*fmt, path);
  gpuimg_error_set(GPUIMG_EXIT_USAGE, path, "unsupported output format (use %s)",
                   gpuimg_format_list(GPUIMG_CODEC_ENCODES, GPUIMG_SPELL_EXTENSIONS, ", ", " or ",
                                      exts, sizeof exts));
  return -1;
}

/* The spellings of formats[f] that spelling asks for into items; how many (1 or 2). */
static int spellings(int f, gpuimg_spelling_t spelling, const char **items)
{
  if (spelling != GPUIMG_SPELL_EXTENSIONS) {
    items[0] = spelling == GPUIMG_SPELL_UPPER ? formats[f].upper : formats[f].name;
    return 1;
  }
  items[0] = formats[f].ext;
  items[1] = formats[f].alias;
  return items[1] ? 2 : 1;
}

const char *gpuimg_format_list(int what, gpuimg_spelling_t spelling, const char *sep,
                               const char *last, char *buf, size_t cap)
{
  const char *items[2 * (GPUIMG_FORMAT_LAST + 1)];
  const char *dot = spelling == GPUIMG_SPELL_EXTENSIONS ? "." : "";
  int n = 0;
  for (int f = 0; f <= GPUIMG_FORMAT_LAST; f++)
    if (built_in((gpuimg_format_t)f, what))
      n += spellings(f, spelling, items + n);
  size_t len = 0;
  if (cap)
    buf[0] = 0;
  for (int i = 0; i < n && len < cap; i++) {
    int k = snprintf(buf + len, cap - len, "%s%s%s",
                     i == 0       ? ""
                     : i == n - 1 ? last
                                  : sep,
                     dot, items[i]);
    len += k > 0 ? (size_t)k : 0;
  }
  return buf;
}

int gpuimg_encode_check(const gpuimg_image_t *img, gpuimg_format_t fmt, gpuimg_format_t only,
                        const char *codec, const char *what)
{
  if (fmt != only) {
    gpuimg_error_set(GPUIMG_EXIT_OUTPUT, what, "cannot encode %s with %s (%s only)",
                     gpuimg_format_name(fmt), codec, formats[only].upper);
    return -1;
  }
  if (img->channels < 1 || img->channels > 4 || img->width < 1 || img->height < 1) {
    gpuimg_error_set(GPUIMG_EXIT_OUTPUT, what,
                     "cannot encode %s: unsupported %dx%d image of %d channels",
                     formats[only].upper, img->width, img->height, img->channels);
    return -1;
  }
  return 0;
}
