/* fastpng_deflate.h: fastpng's deflate encoder (fastpng_deflate.c): the bit writer it shares
 * with the PNG writer (fastpng.c), and its blocks of run-length matches. */
#ifndef GPUIMG_FASTPNG_DEFLATE_H
#define GPUIMG_FASTPNG_DEFLATE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "buf.h"

/* Bytes of filtered rows per deflate block and per IDAT chunk, at most. */
#define BLOCK_BYTES (256u * 1024u)

/* ---- output: a bit writer straight into the buffer ----------------------------------- */

/* Bits go out least significant first (RFC 1951 3.1.1). After each put the whole bytes are
 * stored, 8 at a time (the buffer keeps 8 bytes of slack past size: see
 * gpuimg_bits_reserve()), so at most 7 bits wait and one put may carry up to 57 bits. */
typedef struct {
  gpuimg_buf_t *out;
  uint64_t bits;
  unsigned nbits;
} gpuimg_bit_writer_t;

/* Makes room for n more bytes plus the writer's 8 bytes of slack. */
static inline int gpuimg_bits_reserve(gpuimg_buf_t *buf, size_t n)
{
  return n > SIZE_MAX - 8 ? -1 : gpuimg_buf_reserve(buf, n + 8);
}

static inline void gpuimg_bits_put(gpuimg_bit_writer_t *w, uint64_t value, unsigned n)
{
  uint64_t v = w->bits | value << w->nbits;
  uint8_t *p = w->out->data + w->out->size;
  unsigned nbits = w->nbits + n, bytes = nbits >> 3;
  for (int k = 0; k < 8; k++)
    p[k] = (uint8_t)(v >> (8 * k));
  w->out->size += bytes;
  w->bits = bytes == 8 ? 0 : v >> (bytes * 8);
  w->nbits = nbits & 7;
}

/* Pads the waiting bits with zeros to a byte boundary and stores them. */
static inline void gpuimg_bits_align(gpuimg_bit_writer_t *w)
{
  if (w->nbits > 0)
    w->out->data[w->out->size++] = (uint8_t)w->bits;
  w->bits = 0;
  w->nbits = 0;
}

static inline void gpuimg_bits_put_bytes(gpuimg_bit_writer_t *w, const void *bytes, size_t n)
{
  memcpy(w->out->data + w->out->size, bytes, n);
  w->out->size += n;
}

static inline void gpuimg_bits_put_be32(gpuimg_bit_writer_t *w, uint32_t v)
{
  uint8_t b[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};
  gpuimg_bits_put_bytes(w, b, 4);
}

/* A block's matches, in order: each a copy of len (3..258) bytes at distance 1 (a run of the
 * byte before) starting at data[at], packed as at | (len - 3) << 18 (a block is at most
 * 2^18 bytes); the bytes between them are literals. Photographs have few, so the literals are
 * not copied anywhere: they are coded straight from the data. */
typedef uint32_t gpuimg_deflate_run_t;

/* Fills the tables the encoder reads; once per process, before the first block (any thread). */
void gpuimg_deflate_init(void);

/* The most runs a block of n bytes can have (each covers at least 3 bytes). */
size_t gpuimg_deflate_max_runs(size_t n);

/* The bytes gpuimg_deflate_stored() writes for n bytes of data (headers included). */
size_t gpuimg_deflate_stored_bytes(size_t n);

/* Stored blocks for data[0..n): no compression (the final one has BFINAL if last). */
void gpuimg_deflate_stored(gpuimg_bit_writer_t *w, const uint8_t *data, size_t n, int last);

/* One dynamic-Huffman block for data[0..n) (n at most BLOCK_BYTES) with its runs as matches,
 * or stored blocks when those would be smaller; BFINAL if last. runs is scratch room for
 * gpuimg_deflate_max_runs(n). */
void gpuimg_deflate_block(gpuimg_bit_writer_t *w, const uint8_t *data, size_t n,
                          gpuimg_deflate_run_t *runs, int last);

#endif
