/* compare_str.c: the growing string `gpuimg compare` builds its output and keys in, made
 * printable as it goes, and the allocation helpers of the compare files. */
#include "compare.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void str_add(str_t *b, const char *p, size_t n)
{
  if (b->failed)
    return;
  if (n + 1 > b->cap - b->len) {
    size_t cap = b->cap ? b->cap : 256;
    while (n + 1 > cap - b->len) {
      if (cap > SIZE_MAX / 2) {
        b->failed = 1;
        return;
      }
      cap *= 2;
    }
    char *s = realloc(b->s, cap);
    if (!s) {
      b->failed = 1;
      return;
    }
    b->s = s;
    b->cap = cap;
  }
  memcpy(b->s + b->len, p, n);
  b->len += n;
  b->s[b->len] = '\0';
}

void str_addf(str_t *b, const char *fmt, ...)
{
  char small[256];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(small, sizeof small, fmt, ap);
  va_end(ap);
  if (n < 0) {
    b->failed = 1;
    return;
  }
  if ((size_t)n < sizeof small) {
    str_add(b, small, (size_t)n);
    return;
  }
  char *big = malloc((size_t)n + 1);
  if (!big) {
    b->failed = 1;
    return;
  }
  va_start(ap, fmt);
  vsnprintf(big, (size_t)n + 1, fmt, ap);
  va_end(ap);
  str_add(b, big, (size_t)n);
  free(big);
}

void str_free(str_t *b)
{
  free(b->s);
  memset(b, 0, sizeof *b);
}

/* Length of the valid UTF-8 sequence at s (n bytes left), 0 if it is not one. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
  unsigned char c = s[0];
  size_t len = c < 0x80             ? 1
               : (c & 0xe0) == 0xc0 ? 2
               : (c & 0xf0) == 0xe0 ? 3
               : (c & 0xf8) == 0xf0 ? 4
                                    : 0;
  if (len == 0 || len > n)
    return 0;
  if (len == 1)
    return 1;
  uint32_t cp = c & (0x7f >> len);
  for (size_t k = 1; k < len; k++) {
    if ((s[k] & 0xc0) != 0x80)
      return 0;
    cp = (cp << 6) | (s[k] & 0x3f);
  }
  static const uint32_t min_cp[5] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < min_cp[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
    return 0;
  if (cp == 0xfffe || cp == 0xffff) /* not characters; XML refuses them */
    return 0;
  return len;
}

void str_add_clean(str_t *b, const char *s, int xml)
{
  const unsigned char *p = (const unsigned char *)s;
  size_t n = strlen(s);
  while (n > 0) {
    size_t len = utf8_len(p, n);
    if (len == 0) {
      str_lit(b, "\xef\xbf\xbd");
      len = 1;
    } else if (len == 1 && (*p < 0x20 || *p == 0x7f)) {
      str_lit(b, "?");
    } else if (xml && len == 1 && strchr("&<>\"'", *p)) {
      static const char *const entity[] = {"&amp;", "&lt;", "&gt;", "&quot;", "&apos;"};
      const char *e = entity[strchr("&<>\"'", *p) - "&<>\"'"];
      str_add(b, e, strlen(e));
    } else {
      str_add(b, (const char *)p, len);
    }
    p += len;
    n -= len;
  }
}

int compare_out_of_memory(const char *what)
{
  gpuimg_error_set(GPUIMG_EXIT_FAILURE, what, "out of memory");
  return -1;
}

/* Makes room for one more element of size bytes in *array (count n, capacity *cap). */
int compare_grow(void *array, int n, int *cap, size_t size)
{
  if (n < *cap)
    return 0;
  int new_cap = *cap ? *cap * 2 : 16;
  void *p = realloc(*(void **)array, (size_t)new_cap * size);
  if (!p)
    return -1;
  *(void **)array = p;
  *cap = new_cap;
  return 0;
}
