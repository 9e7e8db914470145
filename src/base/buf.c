/* buf.c: the growable byte buffer. */
#include "buf.h"

#include <stdlib.h>
#include <string.h>

int gpuimg_buf_reserve(gpuimg_buf_t *buf, size_t n)
{
  if (n <= buf->cap - buf->size)
    return 0;
  size_t cap = buf->cap ? buf->cap : 65536;
  while (cap - buf->size < n) {
    if (cap > SIZE_MAX / 2)
      return -1;
    cap *= 2;
  }
  uint8_t *p = realloc(buf->data, cap);
  if (!p)
    return -1;
  buf->data = p;
  buf->cap = cap;
  return 0;
}

int gpuimg_buf_append(gpuimg_buf_t *buf, const void *bytes, size_t n)
{
  if (n == 0) /* bytes may then be NULL, and the buffer too */
    return 0;
  if (gpuimg_buf_reserve(buf, n) < 0)
    return -1;
  memcpy(buf->data + buf->size, bytes, n);
  buf->size += n;
  return 0;
}

void gpuimg_buf_free(gpuimg_buf_t *buf)
{
  free(buf->data);
  memset(buf, 0, sizeof *buf);
}
