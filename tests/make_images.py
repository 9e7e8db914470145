#!/usr/bin/env python3
# make_images.py: deterministic test images for gpuimg: PNGs of every layout, and broken files.
"""Writes the test corpus with the standard library only (zlib + struct).

Used as a module by test_cli.py, cli_*.py and hostile.py (corpus, write_corpus,
png_truncations)
and as a script: `python3 make_images.py OUTDIR` writes every file of the corpus to OUTDIR.

Pixel contents come from a fixed-seed xorshift generator, so every run writes the
same bytes; no image is all zeros. The encoder (gpuimg_testlib.png_encode) deliberately
cycles through the five PNG filter types row by row, so the decoder under test meets all
of them.
"""

import os
import struct
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# The PNG writer and the pixels live in gpuimg_testlib; they are re-exported here for the
# scripts that load this file on its own (tests/gpu/test_gpu_cli.sh: png_encode_8bit,
# make_pixels).
from gpuimg_testlib import (  # noqa: E402, F401
    GRAY, GRAY_ALPHA, PALETTE, PNG_SIGNATURE, RGB, Rng, make_pixels, png_encode,
    png_encode_8bit, reduce16)


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

    # 16-bit RGB: gpuimg works on 8 bits, each sample rounded: round(v / 257).
    s16 = [rng.next() & 0xFFFF for _ in range(6 * 4 * 3)]
    files["rgb16.png"] = (png_encode(6, 4, RGB, s16, bit_depth=16),
                          (6, 4, 3, bytes(reduce16(v) for v in s16)))
    ga16 = [rng.next() & 0xFFFF for _ in range(5 * 3 * 2)]
    files["ga16.png"] = (png_encode(5, 3, GRAY_ALPHA, ga16, bit_depth=16),
                         (5, 3, 2, bytes(reduce16(v) for v in ga16)))

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
