/* buf.h: a growable byte buffer, the unit files and encoded images travel in. */
#ifndef GPUIMG_BUF_H
#define GPUIMG_BUF_H

#include "base.h"

/* A growable byte buffer; data is malloc'd and owned by the buffer. */
typedef struct {
  uint8_t *data;
  size_t size;
  size_t cap;
} gpuimg_buf_t;

int gpuimg_buf_append(gpuimg_buf_t *buf, const void *bytes, size_t n);
/* Makes room for n more bytes (capacity doubles from 64 KiB). 0, or -1: out of memory. */
int gpuimg_buf_reserve(gpuimg_buf_t *buf, size_t n);
void gpuimg_buf_free(gpuimg_buf_t *buf);

#endif
