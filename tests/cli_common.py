# cli_common.py: what the cli_*.py test modules share: readers, references, the corpus.
"""Not a test itself: BMP/TGA readers, the reference operations of SEMANTICS.md, the corpus of
make_images.py, and the helpers that more than one group uses (usage_error, make_jpeg,
load_report, stage). Standard library only.
"""

import itertools
import json
import os
import struct

from gpuimg_testlib import (
    EXIT_USAGE, Failure, built_with, check, cpu, expect_error, expect_ok, leftovers,
    png_decode, png_encode_8bit, read, run, write)
import make_images as mi


def usage_error(args, message):
    expect_error(run(*args), EXIT_USAGE, message)


# ---------------------------------------------------------------------------------------------
# BMP/TGA readers (png_decode: gpuimg_testlib)

def bmp_decode(data):
    """(w, h, channels, pixels) of an uncompressed 24/32-bit BMP as gpuimg's stb writer makes."""
    check(data[:2] == b"BM", "not a BMP signature: %r" % data[:2])
    size, offset = struct.unpack("<I4xI", data[2:14])
    check(size == len(data), "BMP size field %d, file has %d bytes" % (size, len(data)))
    _, w, h, planes, bpp, comp = struct.unpack("<IiiHHI", data[14:34])
    check(planes == 1 and bpp in (24, 32) and comp in (0, 3), "unexpected BMP header")
    c = bpp // 8
    row_len = (w * c + 3) & ~3
    rows = []
    for y in range(abs(h)):
        r = data[offset + y * row_len:offset + y * row_len + w * c]
        px = bytearray()
        for x in range(w):
            b, g, rr = r[x * c:x * c + 3]
            px += bytes((rr, g, b)) + (r[x * c + 3:x * c + 4] if c == 4 else b"")
        rows.append(bytes(px))
    if h > 0:
        rows.reverse()
    return w, abs(h), c, b"".join(rows)


def tga_decode(data):
    """(w, h, channels, pixels) of an uncompressed or RLE truecolor/gray TGA."""
    idlen, cmap, itype = data[0], data[1], data[2]
    w, h, bpp, desc = struct.unpack("<HHBB", data[12:18])
    check(cmap == 0 and itype in (2, 3, 10, 11), "unexpected TGA type %d" % itype)
    c = bpp // 8
    pos, pixels = 18 + idlen, []
    while len(pixels) < w * h:
        if itype in (10, 11):
            head = data[pos]
            pos += 1
            n = (head & 0x7F) + 1
            if head & 0x80:
                pixels += [data[pos:pos + c]] * n
                pos += c
            else:
                pixels += [data[pos + k * c:pos + (k + 1) * c] for k in range(n)]
                pos += n * c
        else:
            pixels.append(data[pos:pos + c])
            pos += c

    def fix(p):  # BGR(A) -> RGB(A); gray(+alpha) stays
        return bytes((p[2], p[1], p[0])) + p[3:] if c >= 3 else bytes(p)

    rows = [b"".join(fix(p) for p in pixels[y * w:(y + 1) * w]) for y in range(h)]
    if not desc & 0x20:
        rows.reverse()
    return w, h, c, b"".join(rows)


def read_png(path):
    with open(path, "rb") as f:
        return png_decode(f.read())


# ---------------------------------------------------------------------------------------------
# Reference operations (SEMANTICS.md), on (w, h, c, bytes) tuples

def ref_gray(img):
    """Rec. 601 luma in the 16-bit fixed point every backend shares (op_gray.c, gray.cu);
    also checked against the floating-point formula to within 1."""
    w, h, c, px = img
    if c <= 2:
        return img
    out = bytearray()
    for i in range(0, len(px), c):
        r, g, b = px[i], px[i + 1], px[i + 2]
        y = (19595 * r + 38470 * g + 7471 * b + 32768) >> 16
        assert abs(y - round(0.299 * r + 0.587 * g + 0.114 * b)) <= 1
        out.append(y)
        if c == 4:
            out.append(px[i + 3])
    return w, h, 1 if c == 3 else 2, bytes(out)


def _box_1d(vals, r):
    """Clamped window sums of width 2r+1 along one line."""
    n = len(vals)
    padded = [vals[0]] * r + list(vals) + [vals[-1]] * r
    pre = [0] + list(itertools.accumulate(padded))
    k = 2 * r + 1
    return [pre[x + k] - pre[x] for x in range(n)]


def ref_blur(img, r):
    """floor((S + C/2) / C) over the clamped (2r+1)^2 window; separable because clamping is."""
    w, h, c, px = img
    if r == 0:
        return img
    cnt = (2 * r + 1) ** 2
    out = bytearray(len(px))
    for ch in range(c):
        rows = [_box_1d(px[(y * w) * c + ch:(y + 1) * w * c:c], r) for y in range(h)]
        for x in range(w):
            col = _box_1d([rows[y][x] for y in range(h)], r)
            for y in range(h):
                out[(y * w + x) * c + ch] = (col[y] + cnt // 2) // cnt
    return w, h, c, bytes(out)


def ref_checkerboard(img, cell=1, amount=64):
    w, h, c, px = img
    colour = c - 1 if c in (2, 4) else c
    out = bytearray(px)
    for y in range(h):
        for x in range(w):
            even = (x // cell + y // cell) % 2 == 0
            for ch in range(colour):
                i = (y * w + x) * c + ch
                out[i] = min(255, px[i] + amount) if even else max(0, px[i] - amount)
    return w, h, c, bytes(out)


def ref_portrait(img, mask, r=16):
    """mask: (w, h, c, bytes), first channel used; >= 128 keeps the pixel, < 128 takes
    the blur of the colour channels. Alpha is carried through untouched everywhere."""
    w, h, c, px = img
    mw, mh, mc, mpx = mask
    assert (mw, mh) == (w, h)
    blurred = bytearray(ref_blur(img, r)[3])
    for i in range(w * h):
        if mpx[i * mc] >= 128:
            blurred[i * c:(i + 1) * c] = px[i * c:(i + 1) * c]
        elif c in (2, 4):
            blurred[(i + 1) * c - 1] = px[(i + 1) * c - 1]
    return w, h, c, bytes(blurred)


def same_image(got, want, what):
    gw, gh, gc, gpx = got
    ww, wh, wc, wpx = want
    check((gw, gh, gc) == (ww, wh, wc),
          "%s: got a %dx%dx%d image, expected %dx%dx%d" % (what, gw, gh, gc, ww, wh, wc))
    if gpx != wpx:
        i = next(k for k in range(len(gpx)) if gpx[k] != wpx[k])
        p = i // gc
        raise Failure("%s: first difference at x=%d y=%d channel %d: got %d, expected %d "
                      "(%d bytes differ)" % (what, p % gw, p // gw, i % gc, gpx[i], wpx[i],
                                             sum(a != b for a, b in zip(gpx, wpx))))


# ---------------------------------------------------------------------------------------------
# Scratch directory and corpus

CORPUS = mi.corpus()


def expected(name):
    return CORPUS[name][1]


def check_no_leftovers(directory=None, res=None):
    left = leftovers(directory)
    check(not left, "temporary files left behind: %r" % left, res)


def is_cuda_build():
    return built_with("cuda")


# ---------------------------------------------------------------------------------------------
# Shared by several groups: messages, a JPEG to decode, the report

# The registry's operations in its order, as messages and --help list them: the list the
# registry is generated from (src/ops/meson.build's gpuimg_op_names), which tests/meson.build
# passes in GPUIMG_OPERATIONS. A new operation changes no test here.
OPERATIONS = tuple(os.environ.get("GPUIMG_OPERATIONS", "").split())
if not OPERATIONS:
    raise SystemExit("cli_common.py: GPUIMG_OPERATIONS is unset (meson test sets it to the "
                     "registry's operations)")


def unknown_operation_msg(name):
    return "unknown operation '%s' (expected %s or %s)" % (name, ", ".join(OPERATIONS[:-1]),
                                                         OPERATIONS[-1])


def range_msg(spelled, value, lo, hi):
    return "%s: invalid value '%s' (expected an integer from %d to %d)" % (spelled, value, lo, hi)


def make_jpeg():
    """A small baseline JPEG, written by gpuimg itself from a smooth RGB image."""
    w, h = 40, 24
    px = bytes(v for y in range(h) for x in range(w) for v in (x * 6, y * 10, 128 + (x - y)))
    write("smooth.png", png_encode_8bit(w, h, 3, px))
    expect_ok(cpu("blur", "-r", "0", "smooth.png", "smooth.jpg"), stdout_expected=False)
    return (w, h, 3, px), read("smooth.jpg")


def reject_constant(name):
    raise Failure("the report contains %s" % name)


def load_report(raw):
    """Parses report bytes strictly: UTF-8, JSON, no NaN/Infinity, one trailing newline."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise Failure("the report is not valid UTF-8: %s" % e)
    check(text.endswith("}\n"), "the report does not end in '}\\n': %r" % text[-20:])
    try:
        return json.loads(text, parse_constant=reject_constant)
    except ValueError as e:
        raise Failure("the report is not valid JSON: %s\n%s" % (e, text[:2000]))


def stage(rep, name):
    found = [s for s in rep["stages"] if s["name"] == name]
    check(len(found) == 1,
          "expected one %r stage, got %r" % (name, [s["name"] for s in rep["stages"]]))
    return found[0]
