#!/usr/bin/env python3
# make_seeds.py: JPEGs gpuimg cannot write itself (progressive, restarts, 4 components, EXIF), for the fuzzer and tests.
"""A small JPEG writer for test inputs, standard library only.

gpuimg's encoder (stb_image_write) writes baseline JPEGs only, so the decoder's progressive
path, restart markers and 1- or 4-component frames would start from nothing in the fuzzer.
This writer emits them from synthetic DCT coefficients (no colour transform or DCT: the
decoder does not care where coefficients come from), with canonical Huffman tables that
hold every symbol it may use. Deterministic: the same call gives the same bytes.

Used as a module by tests/hostile.py (jpeg_encode) and as a script:
`python3 make_seeds.py OUTDIR` writes the seed files to OUTDIR.
"""

import os
import struct
import sys

# Symbols of the tables: DC categories 0..11 (4-bit codes); AC run/size pairs, EOB runs
# (r << 4) and ZRL (8-bit codes). Fewer symbols than codes: no code is all ones.
DC_SYMBOLS = list(range(12))
AC_SYMBOLS = [r << 4 for r in range(15)] + [0xF0] + [(r << 4) | s for r in range(16)
                                                     for s in range(1, 11)]


def _table(symbols, length):
    """(DHT payload without class/id, {symbol: (code, length)}) for codes of one length."""
    counts = [0] * 16
    counts[length - 1] = len(symbols)
    codes = {s: (i, length) for i, s in enumerate(symbols)}
    return bytes(counts) + bytes(symbols), codes


DC_TABLE = _table(DC_SYMBOLS, 4)
AC_TABLE = _table(AC_SYMBOLS, 8)


class Bits:
    """MSB-first bit writer with JPEG byte stuffing."""

    def __init__(self):
        self.out, self.acc, self.n = bytearray(), 0, 0

    def put(self, value, length):
        for i in range(length - 1, -1, -1):
            self.acc = (self.acc << 1) | ((value >> i) & 1)
            self.n += 1
            if self.n == 8:
                self.out.append(self.acc)
                if self.acc == 0xFF:
                    self.out.append(0)
                self.acc, self.n = 0, 0

    def flush(self):
        if self.n:
            self.put((1 << (8 - self.n)) - 1, 8 - self.n)
        return bytes(self.out)


def _category(v):
    return abs(v).bit_length()


def _extra(v, s):
    return v if v >= 0 else v + (1 << s) - 1


def _segment(marker, payload):
    return b"\xff" + bytes([marker]) + struct.pack(">H", 2 + len(payload)) + payload


def jpeg_encode(width, height, sampling=((1, 1),), progressive=False, restart=0, seed=1):
    """A JPEG of width x height with one component per (h, v) sampling pair.

    progressive: DC first scan (Al=1), AC 1..5 first, AC 6..63 first (Al=1), DC and AC
    refinement; otherwise one interleaved baseline scan, with a restart marker every
    `restart` MCUs when restart > 0."""
    nc = len(sampling)
    hmax = max(h for h, _ in sampling)
    vmax = max(v for _, v in sampling)
    mcux = (width + 8 * hmax - 1) // (8 * hmax)
    mcuy = (height + 8 * vmax - 1) // (8 * vmax)

    def coef(c, bx, by, k):
        """Coefficient k (zigzag order) of component c's block (bx, by)."""
        x = (bx * 7 + by * 13 + c * 50 + seed * 11) & 63
        if k == 0:
            return (x - 32) * 8
        if k <= 5:
            return ((x * (k + 3) + seed) % 7) - 3
        return 0

    def mcu_blocks():
        """(component, bx, by) in interleaved MCU order."""
        for my in range(mcuy):
            for mx in range(mcux):
                for c, (h, v) in enumerate(sampling):
                    for yy in range(v):
                        for xx in range(h):
                            yield c, mx * h + xx, my * v + yy

    def comp_blocks(c):
        """(component, bx, by) of one component in raster order (non-interleaved scan)."""
        h, v = sampling[c]
        cw = (width * h + hmax - 1) // hmax
        ch = (height * v + vmax - 1) // vmax
        for by in range((ch + 7) // 8):
            for bx in range((cw + 7) // 8):
                yield c, bx, by

    dc_codes, ac_codes = DC_TABLE[1], AC_TABLE[1]

    def put_dc(bits, diff):
        s = _category(diff)
        bits.put(*dc_codes[s])
        bits.put(_extra(diff, s), s)

    def put_eobrun(bits, run):
        r = run.bit_length() - 1
        bits.put(*ac_codes[r << 4])
        bits.put(run - (1 << r), r)

    def put_ac(bits, values, eob_runs):
        """Codes one block's band; returns whether it ended in an end-of-band."""
        last = max((i for i, v in enumerate(values) if v), default=-1)
        zeros = 0
        for v in values[:last + 1]:
            if v == 0:
                zeros += 1
                continue
            while zeros > 15:
                bits.put(*ac_codes[0xF0])
                zeros -= 16
            s = _category(v)
            bits.put(*ac_codes[(zeros << 4) | s])
            bits.put(_extra(v, s), s)
            zeros = 0
        return last < len(values) - 1

    def scan(components, ss, se, ah, al, body):
        header = bytes([len(components)])
        for c in components:
            header += bytes([c + 1, 0x00])
        header += bytes([ss, se, (ah << 4) | al])
        return _segment(0xDA, header) + body

    out = [b"\xff\xd8", _segment(0xE0, b"JFIF\0\x01\x01\0\0\x01\0\x01\0\0"),
           _segment(0xDB, b"\x00" + bytes([2] * 64))]
    frame = struct.pack(">BHHB", 8, height, width, nc)
    for c, (h, v) in enumerate(sampling):
        frame += bytes([c + 1, (h << 4) | v, 0])
    out.append(_segment(0xC2 if progressive else 0xC0, frame))
    out.append(_segment(0xC4, b"\x00" + DC_TABLE[0] + b"\x10" + AC_TABLE[0]))

    if not progressive:
        if restart:
            out.append(_segment(0xDD, struct.pack(">H", restart)))
        bits, pred, parts, mcu, rst = Bits(), [0] * nc, [], 0, 0
        per_mcu = sum(h * v for h, v in sampling)
        for i, (c, bx, by) in enumerate(mcu_blocks()):
            if restart and i and i % per_mcu == 0:
                mcu += 1
                if mcu % restart == 0:
                    parts.append(bits.flush() + b"\xff" + bytes([0xD0 + rst]))
                    bits, pred, rst = Bits(), [0] * nc, (rst + 1) & 7
            dc = coef(c, bx, by, 0)
            put_dc(bits, dc - pred[c])
            pred[c] = dc
            if put_ac(bits, [coef(c, bx, by, k) for k in range(1, 64)], None):
                bits.put(*ac_codes[0x00])
        parts.append(bits.flush())
        out.append(scan(list(range(nc)), 0, 63, 0, 0, b"".join(parts)))
    else:
        # DC first, successive approximation: DC >> 1 now, its low bit in a refinement.
        bits, pred = Bits(), [0] * nc
        for c, bx, by in mcu_blocks():
            dc = coef(c, bx, by, 0) >> 1
            put_dc(bits, dc - pred[c])
            pred[c] = dc
        out.append(scan(list(range(nc)), 0, 0, 0, 1, bits.flush()))
        for c in range(nc):
            # AC 1..5 first scan, EOB runs across blocks.
            bits, run = Bits(), 0
            for _, bx, by in comp_blocks(c):
                vals = [coef(c, bx, by, k) for k in range(1, 6)]
                if any(vals):
                    if run:
                        put_eobrun(bits, run)
                        run = 0
                    if put_ac(bits, vals, None):
                        run += 1
                else:
                    run += 1
                if run == 0x7FFF:
                    put_eobrun(bits, run)
                    run = 0
            if run:
                put_eobrun(bits, run)
            out.append(_segment(0xC4, b"\x10" + AC_TABLE[0]))  # tables may be redefined
            out.append(scan([c], 1, 5, 0, 0, bits.flush()))
            # AC 6..63, all zero: one EOB run per 32767 blocks.
            bits, n = Bits(), sum(1 for _ in comp_blocks(c))
            while n:
                put_eobrun(bits, min(n, 0x7FFF))
                n -= min(n, 0x7FFF)
            out.append(scan([c], 6, 63, 0, 1, bits.flush()))
        # DC refinement: the low bit of every DC value, one bit per block.
        bits = Bits()
        for c, bx, by in mcu_blocks():
            bits.put(coef(c, bx, by, 0) & 1, 1)
        out.append(scan(list(range(nc)), 0, 0, 1, 0, bits.flush()))
        for c in range(nc):
            # AC 6..63 refinement: still all zero, no correction bits.
            bits, n = Bits(), sum(1 for _ in comp_blocks(c))
            while n:
                put_eobrun(bits, min(n, 0x7FFF))
                n -= min(n, 0x7FFF)
            out.append(scan([c], 6, 63, 1, 0, bits.flush()))
    out.append(b"\xff\xd9")
    return b"".join(out)


def jpeg_many_passes(width, height, scans):
    """A valid progressive gray JPEG of `scans` scans, each a pass over every 8x8 block for
    a few hundred bytes: a DC scan (every difference 0, one bit per block), then
    single-coefficient successive-approximation scans of end-of-band runs (coefficient 1 at
    Al 13, refined down to Al 0, then coefficient 2, ...: a progression libjpeg accepts).
    The blocks must be a multiple of 16384, the longest end-of-band run coded here."""
    blocks = ((width + 7) // 8) * ((height + 7) // 8)
    assert blocks % 16384 == 0 and 1 <= scans <= 1 + 63 * 14

    def zeros_then_fill(bits):
        """bits zero bits, padded with one bits to a whole byte."""
        pad = -bits % 8
        return bytes(bits // 8) + (bytes([(1 << pad) - 1]) if pad else b"")

    def scan(ss, se, ah, al, body):
        return _segment(0xDA, bytes([1, 1, 0x00, ss, se, (ah << 4) | al])) + body

    # One 1-bit code in each table: DC category 0, AC EOB14 (a run of 2^14 + 14 extra bits).
    out = [b"\xff\xd8", _segment(0xDB, b"\x00" + bytes([2] * 64)),
           _segment(0xC2, struct.pack(">BHHB", 8, height, width, 1) + b"\x01\x11\x00"),
           _segment(0xC4, b"\x00\x01" + bytes(15) + b"\x00" + b"\x10\x01" + bytes(15) + b"\xe0"),
           scan(0, 0, 0, 0, zeros_then_fill(blocks))]
    eob_runs = zeros_then_fill(blocks // 16384 * 15)
    for k in range(1, 64):
        for al in range(13, -1, -1):
            if len(out) - 4 == scans:
                break
            out.append(scan(k, k, 0 if al == 13 else al + 1, al, eob_runs))
    out.append(b"\xff\xd9")
    return b"".join(out)


# name -> (width, height, sampling, progressive, restart)
SEEDS = {
    "prog-gray-37x23.jpg": (37, 23, ((1, 1),), True, 0),
    "prog-420-45x29.jpg": (45, 29, ((2, 2), (1, 1), (1, 1)), True, 0),
    "prog-444-17x9.jpg": (17, 9, ((1, 1), (1, 1), (1, 1)), True, 0),
    "prog-cmyk-20x12.jpg": (20, 12, ((1, 1),) * 4, True, 0),
    "base-rst-422-50x30.jpg": (50, 30, ((2, 1), (1, 1), (1, 1)), False, 3),
    "base-rst-gray-33x17.jpg": (33, 17, ((1, 1),), False, 1),
    "base-cmyk-12x20.jpg": (12, 20, ((1, 1),) * 4, False, 0),
    "base-odd-411-61x11.jpg": (61, 11, ((4, 1), (1, 1), (1, 1)), False, 0),
    # Restart intervals of whole MCU rows: the files libjpeg decodes in bands.
    "base-rstrow-420-64x40.jpg": (64, 40, ((2, 2), (1, 1), (1, 1)), False, 4),
    "base-rstrow-gray-40x33.jpg": (40, 33, ((1, 1),), False, 5),
    "base-rstrow-440-24x40.jpg": (24, 40, ((1, 2), (1, 1), (1, 1)), False, 6),
}


def exif_block(order):
    """A TIFF block as cameras write it: IFD0 (Orientation 6, the Exif IFD pointer), then the
    Exif IFD (PixelXDimension a SHORT, PixelYDimension a LONG)."""
    e = "<" if order == "II" else ">"

    def entry(tag, kind, value):
        field = struct.pack(e + "HH", value, 0) if kind == 3 else struct.pack(e + "I", value)
        return struct.pack(e + "HHI", tag, kind, 1) + field

    return (order.encode() + struct.pack(e + "HIH", 42, 8, 2) + entry(0x0112, 3, 6) +
            entry(0x8769, 4, 38) + bytes(4) + struct.pack(e + "H", 2) + entry(0xA002, 3, 17) +
            entry(0xA003, 4, 9) + bytes(4))


# name -> the EXIF block's byte order, in an APP1 of a 17x9 baseline JPEG (the metadata reader)
META_SEEDS = {"exif-ii-17x9.jpg": "II", "exif-mm-17x9.jpg": "MM"}


def write_seeds(outdir):
    os.makedirs(outdir, exist_ok=True)
    for name, (w, h, sampling, prog, rst) in SEEDS.items():
        with open(os.path.join(outdir, name), "wb") as f:
            f.write(jpeg_encode(w, h, sampling, prog, rst))
    # Many scans, each a pass over every block: the decoders' bound on the scans' work.
    with open(os.path.join(outdir, "passes-gray-1024x1024.jpg"), "wb") as f:
        f.write(jpeg_many_passes(1024, 1024, 12))
    for name, order in META_SEEDS.items():
        jpeg = jpeg_encode(17, 9, ((1, 1),) * 3)
        with open(os.path.join(outdir, name), "wb") as f:
            f.write(jpeg[:2] + _segment(0xE1, b"Exif\0\0" + exif_block(order)) + jpeg[2:])
        # The block alone is a TIFF file without an image: its Exif IFD made an EXIF block.
        with open(os.path.join(outdir, "exif-%s.tif" % order.lower()), "wb") as f:
            f.write(exif_block(order))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.stderr.write("usage: make_seeds.py OUTDIR\n")
        sys.exit(2)
    write_seeds(sys.argv[1])
