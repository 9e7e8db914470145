#!/usr/bin/env python3
# make_images.py: deterministic test images for gpuimg: PNGs of every layout, and broken files.
"""Writes the test corpus with the standard library only (zlib + struct).

Used as a module by test_cli.py (png_encode, make_pixels, write_corpus) and as a
script: `python3 make_images.py OUTDIR` writes every file of the corpus to OUTDIR.

Pixel contents come from a fixed-seed xorshift generator, so every run writes the
same bytes; no image is all zeros. The encoder deliberately cycles through the five
PNG filter types row by row, so the decoder under test meets all of them.
"""

import os
import struct
import sys
import zlib

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

# PNG colour types and their samples per pixel.
GRAY, RGB, PALETTE, GRAY_ALPHA, RGBA = 0, 2, 3, 4, 6
SAMPLES = {GRAY: 1, RGB: 3, PALETTE: 1, GRAY_ALPHA: 2, RGBA: 4}
# Colour type of an 8-bit image with 1..4 interleaved channels.
COLOUR_TYPE_OF_CHANNELS = {1: GRAY, 2: GRAY_ALPHA, 3: RGB, 4: RGBA}

# Adam7 passes: (x0, y0, dx, dy).
ADAM7 = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2),
         (0, 1, 1, 2)]


class Rng:
    """xorshift64*: tiny, fixed, identical on every Python version."""

    def __init__(self, seed):
        self.state = (seed * 0x9E3779B97F4A7C15 + 1) & 0xFFFFFFFFFFFFFFFF or 1

    def next(self):
        x = self.state
        x ^= (x >> 12)
        x ^= (x << 25) & 0xFFFFFFFFFFFFFFFF
        x ^= (x >> 27)
        self.state = x
        return ((x * 0x2545F4914F6CDD1D) & 0xFFFFFFFFFFFFFFFF) >> 32

    def byte(self):
        return self.next() & 0xFF

    def bytes(self, n):
        return bytes(self.next() & 0xFF for _ in range(n))


def make_pixels(width, height, channels, seed):
    """Random 8-bit pixels, row-major, interleaved; never all zeros."""
    data = bytearray(Rng(seed).bytes(width * height * channels))
    data[0] |= 1
    return bytes(data)


def _chunk(kind, payload):
    body = kind + payload
    return struct.pack(">I", len(payload)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)


def _paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def _filter_rows(rows, bpp, first_filter):
    """Filters packed scanlines, filter type (first_filter + row index) mod 5."""
    out = bytearray()
    prev = bytes(len(rows[0])) if rows else b""
    for i, row in enumerate(rows):
        ftype = (first_filter + i) % 5
        out.append(ftype)
        for x, v in enumerate(row):
            a = row[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            pred = (0, a, b, (a + b) // 2, _paeth(a, b, c))[ftype]
            out.append((v - pred) & 0xFF)
        prev = row
    return bytes(out)


def _pack_row(samples, bit_depth):
    """Packs one row of integer samples at the given bit depth (MSB first)."""
    if bit_depth == 8:
        return bytes(samples)
    if bit_depth == 16:
        return b"".join(struct.pack(">H", s) for s in samples)
    out = bytearray()
    acc, nbits = 0, 0
    for s in samples:
        acc = (acc << bit_depth) | s
        nbits += bit_depth
        if nbits == 8:
            out.append(acc)
            acc, nbits = 0, 0
    if nbits:
        out.append(acc << (8 - nbits))
    return bytes(out)


def png_encode(width, height, colour_type, samples, bit_depth=8, palette=None, trns=None,
               interlace=False, first_filter=0, idat_split=0):
    """A PNG file (bytes) from a flat list of integer samples (row-major, interleaved).

    palette: list of (r, g, b) for colour type 3; trns: raw tRNS payload bytes.
    idat_split > 0 cuts the compressed stream into IDAT chunks of that many bytes.
    """
    spp = SAMPLES[colour_type]
    bpp = max(1, spp * bit_depth // 8)

    def rows_of(x0, y0, dx, dy):
        rows = []
        for y in range(y0, height, dy):
            line = []
            for x in range(x0, width, dx):
                base = (y * width + x) * spp
                line.extend(samples[base:base + spp])
            if line:
                rows.append(_pack_row(line, bit_depth))
        return rows

    if interlace:
        raw = b"".join(_filter_rows(rows_of(*p), bpp, first_filter + k)
                       for k, p in enumerate(ADAM7))
    else:
        raw = _filter_rows(rows_of(0, 0, 1, 1), bpp, first_filter)
    z = zlib.compress(raw, 9)
    out = [PNG_SIGNATURE,
           _chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, bit_depth, colour_type, 0, 0,
                                       1 if interlace else 0))]
    if palette is not None:
        out.append(_chunk(b"PLTE", b"".join(bytes(c) for c in palette)))
    if trns is not None:
        out.append(_chunk(b"tRNS", trns))
    if idat_split:
        for i in range(0, len(z), idat_split):
            out.append(_chunk(b"IDAT", z[i:i + idat_split]))
    else:
        out.append(_chunk(b"IDAT", z))
    out.append(_chunk(b"IEND", b""))
    return b"".join(out)


def png_encode_8bit(width, height, channels, data, **kw):
    """A PNG of 8-bit pixels with 1..4 channels (bytes as gpuimg holds them)."""
    return png_encode(width, height, COLOUR_TYPE_OF_CHANNELS[channels], list(data), **kw)


def png_header_only(width, height, colour_type=RGB, bit_depth=8):
    """Signature + IHDR claiming width x height, then an empty IDAT and IEND."""
    return (PNG_SIGNATURE +
            _chunk(b"IHDR",
                   struct.pack(">IIBBBBB", width, height, bit_depth, colour_type, 0, 0, 0)) +
            _chunk(b"IDAT", zlib.compress(b"")) + _chunk(b"IEND", b""))


# Test images: name -> (description, bytes, expected decoded (w, h, channels, pixels) or None).
def corpus():
    """Every file of the corpus with the pixels gpuimg must decode from it (None: must fail)."""
    files = {}

    # Plain 8-bit layouts, odd sizes.
    for name, c, (w, h) in [("g8", 1, (13, 7)), ("ga8", 2, (13, 7)), ("rgb8", 3, (13, 7)),
                            ("rgba8", 4, (13, 7)), ("rgb-1x1", 3, (1, 1)),
                            ("rgba-1x9", 4, (1, 9)), ("g-9x1", 1, (9, 1)),
                            ("rgb-33x17", 3, (33, 17))]:
        px = make_pixels(w, h, c, seed=len(files) + 1)
        files[name + ".png"] = (png_encode_8bit(w, h, c, px, first_filter=len(files)),
                                (w, h, c, px))

    # The same pixels split over many IDAT chunks, and Adam7-interlaced.
    w, h, c = 13, 7, 3
    px = files["rgb8.png"][1][3]
    files["rgb8-split.png"] = (png_encode_8bit(w, h, c, px, idat_split=7), (w, h, c, px))
    files["rgb8-interlaced.png"] = (png_encode_8bit(w, h, c, px, interlace=True), (w, h, c, px))

    # Palette (expands to RGB; with tRNS to RGBA).
    rng = Rng(99)
    pal = [(rng.byte(), rng.byte(), rng.byte()) for _ in range(16)]
    idx = [rng.next() % 16 for _ in range(11 * 5)]
    px = bytes(v for i in idx for v in pal[i])
    files["pal.png"] = (png_encode(11, 5, PALETTE, idx, palette=pal), (11, 5, 3, px))
    alpha = bytes(rng.byte() for _ in range(16))
    pxa = bytes(v for i in idx for v in pal[i] + (alpha[i],))
    files["pal-trns.png"] = (png_encode(11, 5, PALETTE, idx, palette=pal, trns=alpha),
                             (11, 5, 4, pxa))
    idx4 = [i % 16 for i in idx]
    files["pal4bit.png"] = (png_encode(11, 5, PALETTE, idx4, bit_depth=4, palette=pal),
                            (11, 5, 3, bytes(v for i in idx4 for v in pal[i])))

    # 16-bit RGB: gpuimg works on 8 bits; stb keeps the high byte.
    s16 = [rng.next() & 0xFFFF for _ in range(6 * 4 * 3)]
    files["rgb16.png"] = (png_encode(6, 4, RGB, s16, bit_depth=16),
                          (6, 4, 3, bytes(v >> 8 for v in s16)))
    ga16 = [rng.next() & 0xFFFF for _ in range(5 * 3 * 2)]
    files["ga16.png"] = (png_encode(5, 3, GRAY_ALPHA, ga16, bit_depth=16),
                         (5, 3, 2, bytes(v >> 8 for v in ga16)))

    # Low bit depth gray: scaled to the full 0..255 range.
    bits = [rng.next() & 1 for _ in range(10 * 3)]
    files["g1bit.png"] = (png_encode(10, 3, GRAY, bits, bit_depth=1),
                          (10, 3, 1, bytes(255 * b for b in bits)))
    two = [rng.next() & 3 for _ in range(7 * 2)]
    files["g2bit.png"] = (png_encode(7, 2, GRAY, two, bit_depth=2),
                          (7, 2, 1, bytes(85 * v for v in two)))

    # Broken files: each must fail to decode.
    good = files["rgb8.png"][0]
    files["empty.png"] = (b"", None)
    files["gif.png"] = (b"GIF89a\x01\x00\x01\x00\x80\x00\x00\xff\xff\xff\x00\x00\x00"
                        b"!\xf9\x04\x01\x00\x00\x00\x00,\x00\x00\x00\x00\x01\x00\x01\x00"
                        b"\x00\x02\x02D\x01\x00;", None)
    files["text.png"] = (b"this is not an image\n", None)
    files["sig-only.png"] = (PNG_SIGNATURE, None)
    files["bad-zlib.png"] = (good[:41] + bytes(b ^ 0x5A for b in good[41:60]) + good[60:], None)
    return files


# Lengths at which the valid rgb8.png is cut for the truncation tests, by where the cut falls.
def png_truncations(data):
    """(label, length) pairs covering every part of a one-IDAT PNG file."""
    idat_len = struct.unpack(">I", data[33:37])[0]
    idat_end = 33 + 12 + idat_len
    return [("signature", 4), ("signature", 7), ("signature only", 8), ("in IHDR", 16),
            ("in IHDR", 29),
            ("after IHDR", 33), ("in IDAT header", 36), ("in IDAT type", 38),
            ("in IDAT type", 40), ("in IDAT data", 45), ("in IDAT data", 33 + 8 + idat_len // 2),
            ("before IDAT CRC", idat_end - 4), ("no IEND", idat_end),
            ("in IEND type", idat_end + 5)]


def write_corpus(outdir):
    os.makedirs(outdir, exist_ok=True)
    for name, (data, _) in corpus().items():
        with open(os.path.join(outdir, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.stderr.write("usage: make_images.py OUTDIR\n")
        sys.exit(2)
    write_corpus(sys.argv[1])
