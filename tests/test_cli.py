#!/usr/bin/env python3
# test_cli.py: end-to-end tests of gpuimg's command line: exit codes, messages, pixels, reports.
"""Runs the gpuimg binary named by $GPUIMG and checks what it does.

Usage: test_cli.py GROUP...   (groups: usage, input, decode, output, clobber, formats,
                               pixels, pipeline, report, codec, jpeg, nolibjpeg; 'all' runs
                               every group; a group whose every test is skipped exits 77)

Environment:
  GPUIMG               the binary under test (required)
  GPUIMG_VERSION       the project version, to check -V (optional)
  GPUIMG_SAMPLE_MASK   assets/sample-mask.png, to check portrait on the sample (optional)
  GPUIMG_TEST_DIR      where scratch directories go (default: the current directory)

Expected failures check the exact exit status and the exact stderr text, read from
src/ (the format is `gpuimg: <what>: <reason>`, plus the two usage lines after a usage
error). Pixels are checked against the rules of SEMANTICS.md computed here in Python,
from PNGs decoded by the small reader of gpuimg_testlib.py. Each test that exposes a known bug in
src/ was fixed; those tests stay as regression tests. stb is the reference JPEG decoder:
a test that checks exact pixels decoded from a JPEG pins --codec stb (libjpeg, which auto
picks when built in, decodes a few pixels differently: the 'jpeg' group bounds by how much).
Standard library only.
"""

import itertools
import json
import math
import os
import pty
import re
import shlex
import shutil
import stat
import struct
import subprocess
import signal
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpuimg_testlib as testlib  # noqa: E402
from gpuimg_testlib import (  # noqa: E402
    EXIT_DEVICE, EXIT_INPUT, EXIT_OUTPUT, EXIT_USAGE, GPUIMG, GRAY, PNG_SIGNATURE, USAGE,
    Failure, Rng, Skip, built_with, check, cpu, expect_error, expect_ok, leftovers,
    make_pixels, path, png_chunk, png_decode, png_encode_8bit, png_header_only, read, run,
    test, write)
import make_images as mi  # noqa: E402


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
# usage: the command line

@test("usage")
def help_goes_to_stdout():
    for args in (["--help"], ["-h"], ["blur", "--help"], ["blur", "-r", "3", "then", "gray", "-h"]):
        res = expect_ok(run(*args))
        out = res.out.decode()
        check(out.startswith(USAGE.decode().split("\n")[0] + "\n"),
              "help does not start with the usage line", res)
        for section in ("\ngray: ", "\nblur: ", "\ncheckerboard: ", "\nportrait: ",
                        "\nGlobal options:\n",
                        "\nExit status: 0 ok, 1 processing failure, 2 usage error, "
                        "3 bad input or mask,\n4 output or report not written, "
                        "5 CUDA unavailable or failed.\n"):
            check(section in out, "help lacks %r" % section, res)
        for opt in ("--radius N", "--naive", "--tiled", "--cell K", "--amount A", "--mask FILE",
                    "--backend B", "--block WxH", "--report FILE", "--repeat N", "--quality Q",
                    "--max-pixels N", "--quiet", "--version", "--warmup M", "--explain",
                    "--tile u8|float"):
            check(opt in out, "help does not mention %s" % opt, res)


@test("usage")
def version():
    want_version = os.environ.get("GPUIMG_VERSION")
    for flag in ("-V", "--version"):
        res = expect_ok(run(flag))
        m = re.fullmatch(rb"gpuimg (\S+) \(backends: cpu(, cuda)?; "
                         rb"png encoders: stb, fastpng(, libpng)?; jpeg codecs: stb(, libjpeg)?(, nvjpeg)?\)\n",
                         res.out)
        check(m is not None, "unexpected version line", res)
        if want_version:
            check(m.group(1).decode() == want_version, "version is not %s" % want_version, res)


@test("usage")
def no_operation():
    usage_error([], "no operation given")
    usage_error(["--quiet"], "no operation given")
    usage_error(["--backend", "cpu", "--report", "-"], "no operation given")


@test("usage")
def end_of_options():
    # After '--' a name starting with '-' is a file, not an option.
    expect_error(run("gray", "--", "-weird.png"), EXIT_INPUT,
                 "-weird.png: No such file or directory")
    # ... and 'then' is a file name too.
    expect_error(run("gray", "--", "then"), EXIT_INPUT, "then: No such file or directory")
    expect_ok(cpu("blur", "-r", "1", "--", "g8.png", "dash-out.png"), stdout_expected=False)


@test("usage")
def unknown_operation():
    usage_error(["frobnicate"],
                "unknown operation 'frobnicate' (expected gray, blur, checkerboard or portrait)")
    usage_error(["Gray"],
                "unknown operation 'Gray' (expected gray, blur, checkerboard or portrait)")
    usage_error(["gray", "then", "sharpen"],
                "unknown operation 'sharpen' (expected gray, blur, checkerboard or portrait)")
    usage_error(["gray", "then", "then"],
                "unknown operation 'then' (expected gray, blur, checkerboard or portrait)")


@test("usage")
def unknown_option():
    usage_error(["blur", "--bogus"], "unknown option '--bogus'")
    usage_error(["blur", "--bogus=3"], "unknown option '--bogus'")
    usage_error(["--bogus", "blur"], "unknown option '--bogus'")
    usage_error(["blur", "-x"], "unknown option '-x'")
    usage_error(["blur", "-qx"], "unknown option '-qx'")
    usage_error(["blur", "--rad", "3"], "unknown option '--rad'")
    usage_error(["blur", "--" + "x" * 100], "unknown option '--" + "x" * 40 + "'")


@test("usage")
def measurement_options():
    usage_error(["blur", "--tile", "half"], "--tile: invalid value 'half' (expected u8 or float)")
    usage_error(["gray", "--warmup", "-1"],
                "--warmup: invalid value '-1' (expected an integer from 0 to 10000)")
    res = expect_ok(cpu("blur", "-r", "1", "--tiled", "--tile", "float", "--warmup", "2",
                        "--repeat", "3", "--report", "-", "rgb-33x17.png"))
    rep = load_report(res.out)
    check(rep["warmup"] == 2 and stage(rep, "blur")["samples"] == 3, "warmup and repeat")
    # --explain on the CPU backend: one plain line per operation on stderr.
    res = run("gray", "then", "blur", "-r", "1", "--backend", "cpu", "--explain", "rgb-33x17.png")
    check(res.rc == 0, "explain exit", res)
    lines = res.err.decode().splitlines()
    check(len(lines) == 2 and lines[0].startswith("gray: CPU backend, ") and
          lines[1].startswith("blur: CPU backend, "), "explain lines %r" % lines, res)


@test("usage")
def info_without_a_device():
    res = run("info")
    if res.rc == 0:  # a GPU is present: it describes the device instead
        check(b"device:" in res.out and b"copy bandwidth:" in res.out, "info output", res)
        return
    check(res.rc == 5 and res.out == b"", "info exit", res)
    err = res.err.decode()
    check(err in ("gpuimg: info: this gpuimg was built without CUDA\n",) or
          err.startswith("gpuimg: info: no usable CUDA device: "), "info message %r" % err, res)


@test("usage")
def option_of_another_operation():
    usage_error(["blur", "--cell", "3"], "blur: unknown option '--cell'")
    usage_error(["gray", "-r", "2"], "gray: unknown option '-r'")
    usage_error(["gray", "--tiled"], "gray: unknown option '--tiled'")
    usage_error(["gray", "--tile", "float"], "gray: unknown option '--tile'")
    usage_error(["checkerboard", "--mask", "m.png"], "checkerboard: unknown option '--mask'")
    usage_error(["checkerboard", "--tiled"], "checkerboard: unknown option '--tiled'")
    usage_error(["portrait", "--amount", "3"], "portrait: unknown option '--amount'")
    usage_error(["gray", "then", "blur", "--amount", "3"], "blur: unknown option '--amount'")
    usage_error(["blur", "-r", "3", "then", "gray", "-r", "2"], "gray: unknown option '-r'")
    usage_error(["-r", "3", "blur"], "-r: given before any operation")
    usage_error(["--cell=2", "checkerboard"], "--cell: given before any operation")


@test("usage")
def missing_option_value():
    usage_error(["blur", "-r"], "-r: missing value")
    usage_error(["blur", "--radius"], "--radius: missing value")
    usage_error(["checkerboard", "--cell"], "--cell: missing value")
    usage_error(["portrait", "--mask"], "--mask: missing value")
    usage_error(["gray", "g8.png", "--report"], "--report: missing value")
    usage_error(["gray", "--backend"], "--backend: missing value")
    usage_error(["gray", "--report="], "--report: empty file name")
    usage_error(["portrait", "--mask="], "--mask: empty file name")
    usage_error(["portrait", "--mask", ""], "--mask: empty file name")


def _range_msg(spelled, value, lo, hi):
    return "%s: invalid value '%s' (expected an integer from %d to %d)" % (spelled, value, lo, hi)


@test("usage")
def bad_numbers():
    for v in ("-1", "abc", "2048", "1e3", "", "3x", "0x10", "1.5", "99999999999999999999",
              "-9223372036854775809"):
        usage_error(["blur", "-r", v], _range_msg("-r", v, 0, 2047))
    usage_error(["blur", "--radius=abc"], _range_msg("--radius", "abc", 0, 2047))
    usage_error(["blur", "-r5x"], _range_msg("-r", "5x", 0, 2047))
    usage_error(["portrait", "-r", "2048"], _range_msg("-r", "2048", 0, 2047))
    usage_error(["checkerboard", "--cell", "0"], _range_msg("--cell", "0", 1, 2147483647))
    usage_error(["checkerboard", "--cell", "2147483648"],
                _range_msg("--cell", "2147483648", 1, 2147483647))
    usage_error(["checkerboard", "--amount", "256"], _range_msg("--amount", "256", 0, 255))
    usage_error(["checkerboard", "--amount", "-1"], _range_msg("--amount", "-1", 0, 255))
    usage_error(["gray", "--repeat", "0"], _range_msg("--repeat", "0", 1, 100000))
    usage_error(["gray", "--repeat", "100001"], _range_msg("--repeat", "100001", 1, 100000))
    usage_error(["gray", "--quality", "0"], _range_msg("--quality", "0", 1, 100))
    usage_error(["gray", "--quality", "101"], _range_msg("--quality", "101", 1, 100))
    usage_error(["gray", "--max-pixels", "0"], _range_msg("--max-pixels", "0", 1, 1 << 40))
    usage_error(["gray", "--backend", "gpu"],
                "--backend: invalid value 'gpu' (expected auto, cpu or cuda)")
    for v in ("0x4", "33x32", "32", "x", "4x", "1025x1", "-1x-1", "8x8x8"):
        usage_error(["gray", "--block", v],
                    "--block: invalid value '%s' (expected WxH with W*H <= 1024)" % v)
    usage_error(["blur", "--naive=1"], "--naive: takes no value")
    usage_error(["gray", "--quiet=yes"], "--quiet: takes no value")


@test("usage")
def numbers_at_the_limits_are_accepted():
    for args in (["blur", "-r", "0"], ["blur", "-r", "2047"], ["blur", "--radius=7"],
                 ["blur", "-r7"],
                 ["checkerboard", "--cell", "2147483647", "--amount", "255"],
                 ["checkerboard", "--amount", "0"], ["gray", "--quality", "1"],
                 ["gray", "--block", "32x32"], ["gray", "--block", "1024x1"],
                 ["gray", "--max-pixels", "91"]):
        expect_ok(cpu(*args, "rgb8.png", "limits.png"), stdout_expected=False)


@test("usage")
def bad_output_name():
    fmt = "%s: unsupported output format (use .png, .jpg, .jpeg, .bmp or .tga)"
    for out in ("out.gif", "out", "out.", "out.png.txt", "dir.png/out", ".png/x", "out.tiff"):
        usage_error(["gray", "g8.png", out], fmt % out)
    usage_error(["gray", "sample:", "out.webp"], fmt % "out.webp")


@test("usage")
def both_to_stdout():
    usage_error(["gray", "g8.png", "-", "--report", "-"],
                "image and report cannot both go to stdout")
    usage_error(["gray", "--report=-", "-", "-"], "image and report cannot both go to stdout")


@test("usage")
def then_at_end():
    usage_error(["gray", "then"], "'then' must be followed by an operation")
    usage_error(["gray", "then", "blur", "-r", "1", "then"],
                "'then' must be followed by an operation")


@test("usage")
def too_many_positionals():
    usage_error(["gray", "a.png", "b.png", "c.png"],
                "unexpected argument 'c.png' (INPUT and OUTPUT already given)")
    usage_error(["gray", "a.png", "b.png", "then", "blur"],
                "unexpected argument 'then' (INPUT and OUTPUT already given)")


@test("usage")
def too_many_operations():
    ops = ["gray"] + ["then", "gray"] * 32  # 33 operations
    usage_error(ops, "too many operations (at most 32)")
    ok = ["gray"] + ["then", "gray"] * 31  # 32 operations
    res = expect_ok(cpu(*ok, "rgb8.png", "many.png"), stdout_expected=False)
    same_image(read_png(path("many.png")), ref_gray(expected("rgb8.png")), "32 x gray")


@test("usage")
def empty_input_name():
    usage_error(["gray", ""], "empty input file name")
    usage_error(["gray", "", "out.png"], "empty input file name")


@test("usage")
def portrait_needs_a_mask_with_an_input():
    usage_error(["portrait", "rgb8.png"], "portrait: --mask FILE is required with an input image")
    usage_error(["portrait", "rgb8.png", "out.png"],
                "portrait: --mask FILE is required with an input image")
    usage_error(["gray", "then", "portrait", "-r", "2", "-", "out.png"],
                "portrait: --mask FILE is required with an input image")


@test("usage")
def cuda_backend_without_cuda():
    if is_cuda_build():
        print("  (skipped: this gpuimg is built with CUDA)")
        return
    write("keep.png", b"keep me")
    expect_error(run("--backend", "cuda", "gray", "rgb8.png", "keep.png"), EXIT_DEVICE,
                 "this gpuimg was built without CUDA")
    check(read("keep.png") == b"keep me", "the existing output was changed")
    check_no_leftovers()
    # auto picks the CPU silently when there is no CUDA in the build.
    expect_ok(run("gray", "rgb8.png", "auto.png"), stdout_expected=False)


# ---------------------------------------------------------------------------------------------
# input: unreadable, empty, wrong or mismatched inputs (exit 3)

@test("input")
def missing_input():
    expect_error(run("gray", "nope.png"), EXIT_INPUT, "nope.png: No such file or directory")
    expect_error(run("gray", "nope.png", "out.png"), EXIT_INPUT,
                 "nope.png: No such file or directory")
    check(not os.path.exists(path("out.png")), "an output file was created")
    check_no_leftovers()
    expect_error(run("gray", "nodir/nope.png"), EXIT_INPUT,
                 "nodir/nope.png: No such file or directory")
    expect_error(run("gray", "g8.png/x.png"), EXIT_INPUT, "g8.png/x.png: Not a directory")


@test("input")
def empty_input():
    expect_error(run("gray", "empty.png", "out.png"), EXIT_INPUT, "empty.png: empty file")
    expect_error(run("gray", "-", "out.png", stdin=b""), EXIT_INPUT, "<stdin>: empty file")
    expect_error(run("gray", "/dev/null"), EXIT_INPUT, "/dev/null: empty file")
    check(not os.path.exists(path("out.png")), "an output file was created")
    check_no_leftovers()


@test("input")
def not_an_image():
    msg = "unsupported format (not PNG or JPEG)"
    expect_error(run("gray", "text.png", "out.png"), EXIT_INPUT, "text.png: " + msg)
    expect_error(run("gray", "gif.png", "out.png"), EXIT_INPUT, "gif.png: " + msg)
    expect_error(run("gray", "-", stdin=b"GIF89a"), EXIT_INPUT, "<stdin>: " + msg)
    expect_error(run("gray", "-", stdin=b"\x89PNG\r\n\x1a"), EXIT_INPUT, "<stdin>: " + msg)
    expect_error(run("gray", "-", stdin=b"\xff\xd8"), EXIT_INPUT, "<stdin>: " + msg)
    # A BMP is a real image, but not one gpuimg reads.
    expect_ok(cpu("gray", "rgb8.png", "rgb8.bmp"), stdout_expected=False)
    expect_error(run("gray", "rgb8.bmp"), EXIT_INPUT, "rgb8.bmp: " + msg)
    check(not os.path.exists(path("out.png")), "an output file was created")


@test("input")
def directory_input():
    os.mkdir(path("adir"))
    expect_error(run("gray", "adir", "out.png"), EXIT_INPUT, "adir: is a directory")
    expect_error(run("portrait", "--mask", "adir", "rgb8.png", "out.png"), EXIT_INPUT,
                 "adir: is a directory")
    check(not os.path.exists(path("out.png")), "an output file was created")
    check_no_leftovers()


@test("input")
def unreadable_input():
    if os.geteuid() == 0:
        print("  (skipped: running as root, file permissions are not enforced)")
        return
    write("secret.png", CORPUS["rgb8.png"][0])
    os.chmod(path("secret.png"), 0)
    expect_error(run("gray", "secret.png"), EXIT_INPUT, "secret.png: Permission denied")


@test("input")
def pixel_limit():
    expect_error(run("--max-pixels", "90", "gray", "rgb8.png"), EXIT_INPUT,
                 "rgb8.png: image is 13x7, over the limit of 90 pixels (see --max-pixels)")
    expect_ok(cpu("--max-pixels", "91", "gray", "rgb8.png"), stdout_expected=False)
    # Only the header is read: a 17000x17000 gray claim fails at once, before any allocation.
    write("huge.png", png_header_only(17000, 17000, GRAY))
    expect_error(run("gray", "huge.png", "out.png"), EXIT_INPUT,
                 "huge.png: image is 17000x17000, over the limit of 268435456 pixels "
                 "(see --max-pixels)")
    # The limit applies to masks too (checked before the size comparison).
    write("mask-14x7.png", png_encode_8bit(14, 7, 1, make_pixels(14, 7, 1, 5)))
    expect_error(run("--max-pixels", "91", "portrait", "--mask", "mask-14x7.png", "rgb8.png"),
                 EXIT_INPUT, "mask-14x7.png: image is 14x7, over the limit of 91 pixels "
                 "(see --max-pixels)")
    check_no_leftovers()


@test("input")
def mask_size_mismatch():
    write("mask-9x1.png", png_encode_8bit(9, 1, 1, make_pixels(9, 1, 1, 3)))
    write("mask-7x13.png", png_encode_8bit(7, 13, 1, make_pixels(7, 13, 1, 3)))
    write("keep.png", b"existing output")
    expect_error(run("portrait", "--mask", "mask-9x1.png", "rgb8.png", "keep.png"), EXIT_INPUT,
                 "mask-9x1.png: mask is 9x1 but the image is 13x7")
    expect_error(run("portrait", "--mask", "mask-7x13.png", "rgb8.png", "keep.png"), EXIT_INPUT,
                 "mask-7x13.png: mask is 7x13 but the image is 13x7")
    expect_error(run("portrait", "--mask", "rgb8.png", "sample:", "keep.png"), EXIT_INPUT,
                 "rgb8.png: mask is 13x7 but the image is 1024x768")
    # The built-in mask only fits the built-in sample: through a pipeline step it still does.
    expect_error(run("portrait", "--mask", "nomask.png", "rgb8.png", "keep.png"), EXIT_INPUT,
                 "nomask.png: No such file or directory")
    expect_error(run("portrait", "--mask", "text.png", "rgb8.png", "keep.png"), EXIT_INPUT,
                 "text.png: unsupported format (not PNG or JPEG)")
    expect_error(run("portrait", "--mask", "empty.png", "rgb8.png", "keep.png"), EXIT_INPUT,
                 "empty.png: empty file")
    check(read("keep.png") == b"existing output", "the existing output was changed")
    check_no_leftovers()


# ---------------------------------------------------------------------------------------------
# decode: truncated and corrupt PNG/JPEG files must fail with exit 3 and a meaningful reason

def decode_failure(res, name, kind):
    """Exit 3 and `gpuimg: NAME: cannot decode KIND: REASON`; returns REASON."""
    check(res.rc == EXIT_INPUT, "expected exit 3", res)
    check(res.out == b"", "expected an empty stdout", res)
    prefix = b"gpuimg: " + name.encode() + b": cannot decode " + kind.encode() + b": "
    check(res.err.startswith(prefix) and res.err.endswith(b"\n") and res.err.count(b"\n") == 1,
          "expected one line starting %r" % prefix, res)
    return res.err[len(prefix):-1].decode("utf-8", "replace")


def check_reason(reason, kind, res):
    """A reason must say something true about a file of this kind. stb's own failure
    strings are accepted, but not a stale one left by another decoder, not a fragment
    of a chunk name, and not 'unknown image type' for a file whose type was recognised."""
    check(len(reason) >= 6, "reason %r is not a message" % reason, res)
    check(reason != "unknown image type",
          "reason %r contradicts 'cannot decode %s'" % (reason, kind), res)
    other = "png" if kind == "JPEG" else "jpeg"
    check(other not in reason.lower(), "reason %r belongs to another format" % reason, res)


@test("decode")
def corrupt_png():
    res = run("gray", "bad-zlib.png")
    check_reason(decode_failure(res, "bad-zlib.png", "PNG"), "PNG", res)
    # An unknown critical chunk: stb names it.
    good = CORPUS["rgb8.png"][0]
    write("chunk.png", good[:33] + png_chunk(b"ABCD", b"1234") + good[33:])
    res = run("gray", "chunk.png")
    check(decode_failure(res, "chunk.png", "PNG") == "ABCD PNG chunk not known",
          "unexpected reason", res)


@test("decode")
def impossible_headers():
    # Regression (codec_stb.c stb_reason, fixed): stbi_info_from_memory() tries every decoder and
    # ends with "unknown image type", hiding the PNG decoder's own reason.
    # A 0-pixel image, and images past stb's own size limits (2^30 bytes, 2^20 per side):
    # stb_info's reason ("0-pixel image", "too large") is replaced by "unknown image type".
    failures = []
    for name, data in (("zero.png", png_header_only(0, 5)),
                       ("wide.png", png_header_only((1 << 20) + 1, 1, GRAY))):
        write(name, data)
        res = run("gray", name)
        try:
            check_reason(decode_failure(res, name, "PNG"), "PNG", res)
        except Failure as e:
            failures.append(str(e))
    # 20000x20000 RGB is over --max-pixels (2^28): that is the message the user needs.
    write("huge.png", png_header_only(20000, 20000))
    try:
        expect_error(run("gray", "huge.png"), EXIT_INPUT,
                     "huge.png: image is 20000x20000, over the limit of 268435456 pixels "
                     "(see --max-pixels)")
    except Failure as e:
        failures.append(str(e))
    check(not failures, "\n".join(failures))


@test("decode")
def truncated_png():
    # Regression (codec_stb.c stb_reason, fixed): cuts inside IHDR report "unknown image type",
    # cuts inside a chunk type report the partial chunk name ("I", "ID", "IDA", "IE").
    data = CORPUS["rgb8.png"][0]
    write("keep.png", b"existing output")
    failures = []
    for label, n in mi.png_truncations(data):
        name = "trunc-png-%d.png" % n
        write(name, data[:n])
        res = run("gray", name, "keep.png")
        try:
            if n < 8:
                expect_error(res, EXIT_INPUT, name + ": unsupported format (not PNG or JPEG)")
            else:
                check_reason(decode_failure(res, name, "PNG"), "PNG", res)
        except Failure as e:
            failures.append("cut (%s) at %d bytes: %s" % (label, n, e))
        check(read("keep.png") == b"existing output", "the existing output was changed", res)
    check_no_leftovers()
    check(not failures, "\n".join(failures))


def make_jpeg():
    """A small baseline JPEG, written by gpuimg itself from a smooth RGB image."""
    w, h = 40, 24
    px = bytes(v for y in range(h) for x in range(w) for v in (x * 6, y * 10, 128 + (x - y)))
    write("smooth.png", png_encode_8bit(w, h, 3, px))
    expect_ok(cpu("blur", "-r", "0", "smooth.png", "smooth.jpg"), stdout_expected=False)
    return (w, h, 3, px), read("smooth.jpg")


@test("decode")
def truncated_jpeg():
    # Regression (codec_stb.c stb_reason, fixed): a cut in the JPEG header reports "unknown image
    # type"; a cut early in the scan reports the PNG probe's stale "bad png sig".
    _, data = make_jpeg()
    check(data[:3] == b"\xff\xd8\xff" and data[-2:] == b"\xff\xd9", "not a JPEG")
    sos = data.index(b"\xff\xda")
    write("keep.png", b"existing output")
    failures = []
    cuts = [("SOI", 2), ("APP/DQT header", 3), ("header", 20), ("header", sos // 2),
            ("before SOS", sos), ("SOS header", sos + 4), ("scan start", sos + 20),
            ("mid scan", (sos + len(data)) // 2), ("before EOI", len(data) - 2)]
    for label, n in cuts:
        name = "trunc-jpg-%d.jpg" % n
        write(name, data[:n])
        res = run("gray", name, "keep.png")
        try:
            if n < 3:
                expect_error(res, EXIT_INPUT, name + ": unsupported format (not PNG or JPEG)")
            else:
                check_reason(decode_failure(res, name, "JPEG"), "JPEG", res)
        except Failure as e:
            failures.append("cut (%s) at %d of %d bytes: %s" % (label, n, len(data), e))
        check(read("keep.png") == b"existing output", "the existing output was changed", res)
    check_no_leftovers()
    check(not failures, "\n".join(failures))


# ---------------------------------------------------------------------------------------------
# output: destinations that cannot be written (exit 4), atomicity, untouched existing files

@test("output")
def missing_output_directory():
    expect_error(run("gray", "rgb8.png", "nodir/out.png"), EXIT_OUTPUT,
                 "nodir/out.png: cannot create output file: No such file or directory")
    expect_error(run("gray", "rgb8.png", "g8.png/out.png"), EXIT_OUTPUT,
                 "g8.png/out.png: cannot create output file: Not a directory")
    expect_error(run("gray", "rgb8.png", "out.png", "--report", "nodir/r.json"), EXIT_OUTPUT,
                 "nodir/r.json: cannot create output file: No such file or directory")
    check(not os.path.exists(path("out.png")), "out.png written although the report cannot be")
    check_no_leftovers()


@test("output")
def unwritable_output_directory():
    os.mkdir(path("ro"))
    write("ro/keep.png", b"existing output")
    os.chmod(path("ro"), 0o555)
    try:
        if os.geteuid() == 0:
            print("  (skipped the permission case: running as root)")
        else:
            expect_error(run("gray", "rgb8.png", "ro/out.png"), EXIT_OUTPUT,
                         "ro/out.png: cannot create output file: Permission denied")
            expect_error(run("gray", "rgb8.png", "ro/keep.png"), EXIT_OUTPUT,
                         "ro/keep.png: cannot create output file: Permission denied")
            check(read("ro/keep.png") == b"existing output", "the existing output was changed")
            check(sorted(os.listdir(path("ro"))) == ["keep.png"], "files appeared in ro/")
    finally:
        os.chmod(path("ro"), 0o755)
    # A read-only file system, whoever runs the test (when /proc is mounted).
    if os.path.isdir("/proc/self"):
        res = run("gray", "rgb8.png", "/proc/self/out.png")
        check(res.rc == EXIT_OUTPUT and res.err.startswith(
            b"gpuimg: /proc/self/out.png: cannot create output file: "), "expected exit 4", res)


@test("output")
def output_is_a_directory():
    os.mkdir(path("d.png"))
    expect_error(run("gray", "rgb8.png", "d.png"), EXIT_OUTPUT, "d.png: is a directory")
    os.mkdir(path("r.json"))
    expect_error(run("gray", "rgb8.png", "--report", "r.json"), EXIT_OUTPUT,
                 "r.json: is a directory")
    check_no_leftovers()


@test("output")
def output_same_as_input():
    write("in.png", CORPUS["rgb8.png"][0])
    before = read("in.png")
    expect_error(run("gray", "in.png", "in.png"), EXIT_OUTPUT,
                 "in.png: output is the same file as the input")
    expect_error(run("gray", "in.png", "./in.png"), EXIT_OUTPUT,
                 "./in.png: output is the same file as the input")
    expect_error(run("gray", "in.png", path("in.png")), EXIT_OUTPUT,
                 path("in.png") + ": output is the same file as the input")
    os.symlink("in.png", path("link.png"))
    expect_error(run("gray", "in.png", "link.png"), EXIT_OUTPUT,
                 "link.png: output is the same file as the input")
    os.link(path("in.png"), path("hard.png"))
    expect_error(run("gray", "hard.png", "in.png"), EXIT_OUTPUT,
                 "in.png: output is the same file as the input")
    check(read("in.png") == before, "the input was changed")
    check_no_leftovers()


def failing_commands(out):
    """(args, exit code, message, stdin) of failures at every stage, all writing to out."""
    os.makedirs(path("adir"), exist_ok=True)
    write("mask-9x1.png", png_encode_8bit(9, 1, 1, make_pixels(9, 1, 1, 3)))
    write("trunc.png", CORPUS["rgb8.png"][0][:60])
    return [
        (["blur", "-r", "2048", "rgb8.png", out], EXIT_USAGE,
         _range_msg("-r", "2048", 0, 2047), b""),
        (["blur", "--cell", "3", "rgb8.png", out], EXIT_USAGE, "blur: unknown option '--cell'",
         b""),
        (["gray", "rgb8.png", out, "extra.png"], EXIT_USAGE,
         "unexpected argument 'extra.png' (INPUT and OUTPUT already given)", b""),
        (["gray", "then", "rgb8.png", out], EXIT_USAGE,
         "unknown operation 'rgb8.png' (expected gray, blur, checkerboard or portrait)", b""),
        (["portrait", "rgb8.png", out], EXIT_USAGE,
         "portrait: --mask FILE is required with an input image", b""),
        (["gray", "rgb8.png", out, "--report", "-", "--repeat", "x"], EXIT_USAGE,
         _range_msg("--repeat", "x", 1, 100000), b""),
        (["gray", "nope.png", out], EXIT_INPUT, "nope.png: No such file or directory", b""),
        (["gray", "empty.png", out], EXIT_INPUT, "empty.png: empty file", b""),
        (["gray", "-", out], EXIT_INPUT, "<stdin>: empty file", b""),
        (["gray", "adir", out], EXIT_INPUT, "adir: is a directory", b""),
        (["gray", "gif.png", out], EXIT_INPUT, "gif.png: unsupported format (not PNG or JPEG)",
         b""),
        (["gray", "trunc.png", out], EXIT_INPUT, None, b""),
        (["--max-pixels", "9", "gray", "rgb8.png", out], EXIT_INPUT,
         "rgb8.png: image is 13x7, over the limit of 9 pixels (see --max-pixels)", b""),
        (["portrait", "--mask", "mask-9x1.png", "rgb8.png", out], EXIT_INPUT,
         "mask-9x1.png: mask is 9x1 but the image is 13x7", b""),
        (["gray", "rgb8.png", out, "--report", "nodir/r.json"], EXIT_OUTPUT,
         "nodir/r.json: cannot create output file: No such file or directory", b""),
        (["gray", "rgb8.png", out, "--report", "adir"], EXIT_OUTPUT, "adir: is a directory", b""),
    ]


@test("output")
def failures_leave_existing_output_untouched():
    original = b"existing output: not an image, must survive \x00\xff"
    write("keep.png", original)
    os.chmod(path("keep.png"), 0o640)
    st0 = os.stat(path("keep.png"))
    for args, code, msg, stdin in failing_commands("keep.png"):
        res = run(*args, stdin=stdin)
        if msg is None:
            check(res.rc == code, "expected exit %d" % code, res)
        else:
            expect_error(res, code, msg)
        check(read("keep.png") == original, "the existing output was changed", res)
        st = os.stat(path("keep.png"))
        check((st.st_ino, stat.S_IMODE(st.st_mode)) == (st0.st_ino, 0o640),
              "the existing output was replaced", res)
        check_no_leftovers(res=res)
    # Same in a subdirectory named by a path.
    os.mkdir(path("sub"))
    write("sub/keep.png", original)
    for args, code, msg, stdin in failing_commands("sub/keep.png"):
        res = run(*args, stdin=stdin)
        check(res.rc == code, "expected exit %d" % code, res)
        check(read("sub/keep.png") == original, "the existing output was changed", res)
        check_no_leftovers(path("sub"), res)


@test("output")
def success_replaces_output_atomically():
    write("out.png", b"old contents")
    expect_ok(cpu("gray", "rgb8.png", "out.png"), stdout_expected=False)
    same_image(read_png(path("out.png")), ref_gray(expected("rgb8.png")), "gray over old file")
    check_no_leftovers()
    # The new file has the usual 0666 & ~umask mode, not mkstemp's 0600.
    expect_ok(cpu("gray", "rgb8.png", "mode.png", preexec_fn=lambda: os.umask(0o022)),
              stdout_expected=False)
    mode = stat.S_IMODE(os.stat(path("mode.png")).st_mode)
    check(mode == 0o644, "output mode is %o, expected 644 with umask 022" % mode)
    expect_ok(cpu("gray", "rgb8.png", "mode2.png", preexec_fn=lambda: os.umask(0o077)),
              stdout_expected=False)
    mode = stat.S_IMODE(os.stat(path("mode2.png")).st_mode)
    check(mode == 0o600, "output mode is %o, expected 600 with umask 077" % mode)


@test("output")
def stdout_errors():
    # A full device: the write error is reported with exit 4.
    if os.path.exists("/dev/full"):
        with open("/dev/full", "wb") as full:
            res = cpu("gray", "rgb8.png", "-", stdout=full)
        expect_error(res, EXIT_OUTPUT, "<stdout>: write failed: No space left on device")
        with open("/dev/full", "wb") as full:
            res = cpu("gray", "rgb8.png", "--report", "-", stdout=full)
        expect_error(res, EXIT_OUTPUT, "<stdout>: write failed: No space left on device")
    # A terminal: image bytes are refused before any work.
    try:
        master, slave = pty.openpty()
    except OSError as e:
        print("  (skipped the terminal case: no pseudo-terminal: %s)" % e)
        return
    try:
        res = cpu("gray", "rgb8.png", "-", stdout=slave)
        expect_error(res, EXIT_OUTPUT, "<stdout>: refusing to write image data to a terminal")
        res = cpu("gray", "nope.png", "-", stdout=slave)
        expect_error(res, EXIT_OUTPUT, "<stdout>: refusing to write image data to a terminal")
    finally:
        os.close(master)
        os.close(slave)


@test("output")
def signals_remove_temporary_files():
    # A long run is interrupted once both temporaries exist: the handler removes them.
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        argv = [GPUIMG, "--backend", "cpu", "--repeat", "100000", "blur", "-r", "64", "sample:",
                "sig.png", "--report", "sig.json"]
        p = subprocess.Popen(argv, cwd=path(), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
        try:
            deadline = time.monotonic() + 30
            while len(leftovers()) < 2 and p.poll() is None and time.monotonic() < deadline:
                time.sleep(0.005)
            check(len(leftovers()) == 2, "the two temporary files did not appear: %r" % leftovers())
            time.sleep(0.3)  # let it get past the set-up into the long pipeline
            check(p.poll() is None, "gpuimg ended early (exit %r)" % p.returncode)
            p.send_signal(sig)
            _, err = p.communicate(timeout=30)
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
        check(p.returncode == -sig, "%s: gpuimg ended with %r, expected death by the signal (%s)"
              % (signal.Signals(sig).name, p.returncode, err))
        check_no_leftovers()
        check(not os.path.exists(path("sig.png")) and not os.path.exists(path("sig.json")),
              "%s: an output appeared" % signal.Signals(sig).name)


# ---------------------------------------------------------------------------------------------
# clobber: the report and the image must not overwrite each other or the inputs

def expect_refused_same_file(res, name):
    check(res.rc == EXIT_OUTPUT,
          "expected exit 4 (an output names the same file as %s)" % name, res)
    check(res.err.startswith(b"gpuimg: ") and b"same file" in res.err and res.err.count(b"\n") == 1,
          "expected one 'gpuimg: ...: ... same file ...' line", res)


@test("clobber")
def report_never_overwrites_the_input():
    write("in.png", CORPUS["rgb8.png"][0])
    res = run("gray", "in.png", "out.png", "--report", "in.png")
    check(read("in.png") == CORPUS["rgb8.png"][0], "the input was overwritten by the report", res)
    expect_refused_same_file(res, "the input")
    check(not os.path.exists(path("out.png")), "out.png was written")
    check_no_leftovers()


@test("clobber")
def report_never_replaces_the_image():
    # Regression (main.c same_file, fixed): './out.png' next to 'out.png' is not seen as the same file
    # while neither exists, so the report replaces the image; and the refusal is exit 2
    # without the two usage lines every other usage error prints.
    failures = []
    for out, rep in (("out.png", "out.png"), ("out.png", "./out.png"),
                     ("out.png", path("out.png"))):
        res = run("gray", "rgb8.png", out, "--report", rep)
        try:
            check(res.rc in (EXIT_USAGE, EXIT_OUTPUT) and res.out == b"",
                  "expected exit 2 or 4 (the report and the image name one file)", res)
            first = res.err.split(b"\n")[0]
            check(first.startswith(b"gpuimg: ") and b"same file" in first,
                  "expected a 'gpuimg: ...same file...' message", res)
            # A usage error looks like every other one: the message, then the usage lines.
            check(res.err == first + b"\n" + (USAGE if res.rc == EXIT_USAGE else b""),
                  "exit %d: expected the message%s" % (
                      res.rc, " and the usage lines" if res.rc == EXIT_USAGE else " alone"), res)
            check(not os.path.exists(path("out.png")), "out.png was written", res)
        except Failure as e:
            failures.append(str(e))
        if os.path.exists(path("out.png")):
            os.unlink(path("out.png"))
        check_no_leftovers()
    # An existing image named twice is not replaced either.
    write("old.png", b"old image")
    res = run("gray", "rgb8.png", "old.png", "--report", "./old.png")
    try:
        check(res.rc in (EXIT_USAGE, EXIT_OUTPUT), "expected exit 2 or 4", res)
        check(read("old.png") == b"old image", "old.png was replaced", res)
    except Failure as e:
        failures.append(str(e))
    check(not failures, "\n".join(failures))


@test("clobber")
def output_never_overwrites_the_mask():
    w, h, _, _ = expected("rgb8.png")
    mask = png_encode_8bit(w, h, 1, make_pixels(w, h, 1, 8))
    write("m.png", mask)
    res = run("portrait", "--mask", "m.png", "rgb8.png", "m.png")
    check(read("m.png") == mask, "the mask was overwritten by the output", res)
    expect_refused_same_file(res, "the mask")
    check_no_leftovers()


# ---------------------------------------------------------------------------------------------
# formats: every output format, stdin/stdout, JPEG input

@test("formats")
def output_signatures():
    img = expected("rgba8.png")
    for name in ("o.png", "o.PNG", "o.jpg", "o.jpeg", "o.JPG", "o.bmp", "o.tga", "o.Tga"):
        expect_ok(cpu("blur", "-r", "0", "rgba8.png", name), stdout_expected=False)
        data = read(name)
        ext = name.rsplit(".", 1)[1].lower()
        if ext == "png":
            check(data[:8] == PNG_SIGNATURE, "%s: no PNG signature" % name)
            same_image(png_decode(data), img, name)
        elif ext in ("jpg", "jpeg"):
            check(data[:3] == b"\xff\xd8\xff" and data[-2:] == b"\xff\xd9",
                  "%s: no JPEG SOI/EOI markers" % name)
            # It decodes, at the right size.
            expect_ok(cpu("blur", "-r", "0", name, name + ".png"), stdout_expected=False)
            w, h, _, _ = read_png(path(name + ".png"))
            check((w, h) == (13, 7), "%s decodes as %dx%d" % (name, w, h))
        elif ext == "bmp":
            same_image(bmp_decode(data), img, name)
        else:
            same_image(tga_decode(data), img, name)
    check_no_leftovers()


@test("formats")
def lossless_formats_keep_every_layout():
    for src in ("g8.png", "ga8.png", "rgb8.png", "rgba8.png", "rgb-1x1.png", "g-9x1.png"):
        img = expected(src)
        w, h, c, px = img
        expect_ok(cpu("blur", "-r", "0", src, "x.tga"), stdout_expected=False)
        same_image(tga_decode(read("x.tga")), img, src + " -> tga")
        expect_ok(cpu("blur", "-r", "0", src, "x.bmp"), stdout_expected=False)
        # BMP: 24-bit without alpha for 1..3 channels (gray replicated, alpha of 2 dropped).
        if c >= 3:
            want = img
        else:
            want = (w, h, 3, bytes(v for i in range(0, len(px), c) for v in (px[i],) * 3))
        same_image(bmp_decode(read("x.bmp")), want, src + " -> bmp")


@test("formats")
def jpeg_input():
    src, _ = make_jpeg()
    expect_ok(cpu("blur", "-r", "0", "--codec", "stb", "smooth.jpg", "dec.png"),
              stdout_expected=False)
    got = read_png(path("dec.png"))
    check(got[:3] == src[:3], "JPEG decodes as %r, expected 40x24x3" % (got[:3],))
    err = sum(abs(a - b) for a, b in zip(got[3], src[3])) / len(src[3])
    check(err < 4, "JPEG round trip mean error %.2f is too large" % err)
    # Quality is passed to the encoder: a lower quality gives a smaller file.
    expect_ok(cpu("blur", "-r", "0", "--quality", "10", "smooth.png", "q10.jpg"))
    expect_ok(cpu("blur", "-r", "0", "--quality", "100", "smooth.png", "q100.jpg"))
    check(len(read("q10.jpg")) < len(read("q100.jpg")), "--quality has no effect")
    # gray works on decoded JPEG pixels like on any RGB image.
    expect_ok(cpu("gray", "--codec", "stb", "smooth.jpg", "g.png"))
    same_image(read_png(path("g.png")), ref_gray(got), "gray of a JPEG")


@test("formats")
def stdin_and_stdout():
    png = CORPUS["rgb8.png"][0]
    want = ref_blur(expected("rgb8.png"), 1)
    res = expect_ok(cpu("blur", "-r", "1", "-", "-", stdin=png))
    same_image(png_decode(res.out), want, "stdin -> stdout")
    res = expect_ok(cpu("blur", "-r", "1", "rgb8.png", "-"))
    same_image(png_decode(res.out), want, "file -> stdout")
    expect_ok(cpu("blur", "-r", "1", "-", "from-stdin.png", stdin=png), stdout_expected=False)
    same_image(read_png(path("from-stdin.png")), want, "stdin -> file")
    # A JPEG through stdin.
    _, jpg = make_jpeg()
    res = expect_ok(cpu("blur", "-r", "0", "-", "-", stdin=jpg))
    check(png_decode(res.out)[:3] == (40, 24, 3), "JPEG via stdin")
    # Without OUTPUT nothing is written at all.
    before = sorted(os.listdir(path()))
    expect_ok(cpu("blur", "-r", "1", "rgb8.png"), stdout_expected=False)
    check(sorted(os.listdir(path())) == before, "files appeared without an OUTPUT")


@test("formats")
def decoded_input_layouts():
    # Palette, tRNS, 16-bit, 1/2-bit gray, interlaced and multi-IDAT PNGs decode to the
    # 8-bit pixels the PNG specification defines (16-bit: the high byte, as stb does).
    for name in ("pal.png", "pal-trns.png", "pal4bit.png", "rgb16.png", "ga16.png", "g1bit.png",
                 "g2bit.png", "rgb8-interlaced.png", "rgb8-split.png"):
        expect_ok(cpu("blur", "-r", "0", name, "dec.png"), stdout_expected=False)
        same_image(read_png(path("dec.png")), expected(name), name)
        expect_ok(cpu("gray", name, "dec-gray.png"), stdout_expected=False)
        same_image(read_png(path("dec-gray.png")), ref_gray(expected(name)), "gray " + name)


# ---------------------------------------------------------------------------------------------
# pixels: each operation on each layout equals the reference rules

LAYOUTS = ["g8.png", "ga8.png", "rgb8.png", "rgba8.png", "rgb-1x1.png", "rgba-1x9.png",
           "g-9x1.png", "rgb-33x17.png"]


@test("pixels")
def gray_each_layout():
    for name in LAYOUTS:
        expect_ok(cpu("gray", name, "out.png"), stdout_expected=False)
        same_image(read_png(path("out.png")), ref_gray(expected(name)), "gray " + name)


@test("pixels")
def blur_each_layout():
    for name in LAYOUTS:
        for r in (0, 1, 3, 40):
            expect_ok(cpu("blur", "-r", str(r), name, "out.png"), stdout_expected=False)
            same_image(read_png(path("out.png")), ref_blur(expected(name), r),
                       "blur -r %d %s" % (r, name))
    # The default radius is 2; --naive and --tiled give the same bytes on the CPU.
    for extra in ([], ["--naive"], ["--tiled"]):
        expect_ok(cpu("blur", *extra, "rgb-33x17.png", "out.png"), stdout_expected=False)
        same_image(read_png(path("out.png")), ref_blur(expected("rgb-33x17.png"), 2),
                   "blur %s (default radius)" % " ".join(extra))
    # A huge radius on a tiny image: every pixel is the clamped mean.
    expect_ok(cpu("blur", "-r", "2047", "rgb-1x1.png", "out.png"), stdout_expected=False)
    same_image(read_png(path("out.png")), expected("rgb-1x1.png"), "blur -r 2047 1x1")
    expect_ok(cpu("blur", "-r", "2047", "g-9x1.png", "out.png"), stdout_expected=False)
    same_image(read_png(path("out.png")), ref_blur(expected("g-9x1.png"), 2047), "blur -r 2047 9x1")


@test("pixels")
def checkerboard_each_layout():
    for name in LAYOUTS:
        for opts, cell, amount in (([], 1, 64), (["--cell", "2", "--amount", "200"], 2, 200),
                                   (["--cell", "3", "--amount", "0"], 3, 0),
                                   (["--cell", "8", "--amount", "255"], 8, 255)):
            expect_ok(cpu("checkerboard", *opts, name, "out.png"), stdout_expected=False)
            same_image(read_png(path("out.png")), ref_checkerboard(expected(name), cell, amount),
                       "checkerboard %s %s" % (" ".join(opts), name))


@test("pixels")
def portrait_each_layout():
    for name in LAYOUTS:
        w, h, c, _ = expected(name)
        for mc in (1, 2, 3):
            # Values straddle the 127/128 boundary: every mask byte is one of them.
            rng = Rng(w * 31 + h + mc)
            mpx = bytes((0, 127, 128, 255, 1, 200)[rng.next() % 6] for _ in range(w * h * mc))
            write("mask.png", png_encode_8bit(w, h, mc, mpx))
            for r in (0, 2, 16):
                expect_ok(cpu("portrait", "--mask", "mask.png", "-r", str(r), name, "out.png"),
                          stdout_expected=False)
                same_image(read_png(path("out.png")),
                           ref_portrait(expected(name), (w, h, mc, mpx), r),
                           "portrait -r %d %s (mask with %d channels)" % (r, name, mc))
    # The default radius is 16.
    w, h, c, _ = expected("rgb-33x17.png")
    mpx = bytes(255 if 8 <= x < 20 else 0 for y in range(h) for x in range(w))
    write("mask.png", png_encode_8bit(w, h, 1, mpx))
    expect_ok(cpu("portrait", "--mask", "mask.png", "rgb-33x17.png", "out.png"))
    same_image(read_png(path("out.png")), ref_portrait(expected("rgb-33x17.png"), (w, h, 1, mpx)),
               "portrait (default radius)")


@test("pixels")
def options_anywhere():
    want = ref_blur(expected("rgb8.png"), 3)
    for args in (["blur", "-r", "3", "rgb8.png", "o.png"], ["blur", "rgb8.png", "o.png", "-r", "3"],
                 ["blur", "rgb8.png", "-r3", "o.png"], ["blur", "--radius=3", "rgb8.png", "o.png"],
                 ["blur", "-r", "9", "-r", "3", "rgb8.png", "o.png"]):
        expect_ok(cpu(*args), stdout_expected=False)
        same_image(read_png(path("o.png")), want, " ".join(args))
    expect_ok(run("-q", "--backend=cpu", "blur", "-r", "3", "rgb8.png", "o.png"))
    same_image(read_png(path("o.png")), want, "-q --backend=cpu")


@test("pixels")
def sample_runs():
    # No file at all: the built-in sample, 1024x768 RGB.
    expect_ok(cpu("blur", "-r", "0", "sample:", "sample.png"), stdout_expected=False)
    sample = read_png(path("sample.png"))
    check(sample[:3] == (1024, 768, 3), "the sample is %dx%dx%d" % sample[:3])
    expect_ok(cpu("portrait", "sample:", "portrait.png"), stdout_expected=False)
    out = read_png(path("portrait.png"))
    check(out[:3] == (1024, 768, 3), "portrait on the sample is %dx%dx%d" % out[:3])
    # With the sample's mask file given explicitly, the result is the same; and it is
    # the sample where the mask is set and blur -r 16 elsewhere.
    mask_file = os.environ.get("GPUIMG_SAMPLE_MASK")
    if mask_file:
        expect_ok(cpu("portrait", "--mask", mask_file, "sample:", "portrait2.png"))
        check(read("portrait2.png") == read("portrait.png"),
              "--mask assets/sample-mask.png differs from the built-in mask")
        expect_ok(cpu("blur", "-r", "16", "sample:", "blur16.png"))
        blurred = read_png(path("blur16.png"))
        with open(mask_file, "rb") as f:
            mw, mh, mc, mpx = png_decode(f.read())
        want = bytearray(blurred[3])
        kept = 0
        for i in range(mw * mh):
            if mpx[i * mc] >= 128:
                want[i * 3:i * 3 + 3] = sample[3][i * 3:i * 3 + 3]
                kept += 1
        check(0 < kept < mw * mh, "the sample mask is all one value")
        same_image(out, (1024, 768, 3, bytes(want)), "portrait on the sample")


# ---------------------------------------------------------------------------------------------
# pipeline

@test("pipeline")
def gray_then_blur_equals_two_runs():
    for name in ("rgb8.png", "rgba8.png", "g8.png", "rgb-33x17.png"):
        expect_ok(cpu("gray", "then", "blur", "-r", "1", name, "piped.png"), stdout_expected=False)
        expect_ok(cpu("gray", name, "step1.png"), stdout_expected=False)
        expect_ok(cpu("blur", "-r", "1", "step1.png", "step2.png"), stdout_expected=False)
        check(read("piped.png") == read("step2.png"),
              "%s: 'gray then blur -r 1' differs from two runs" % name)
        same_image(read_png(path("piped.png")), ref_blur(ref_gray(expected(name)), 1),
                   "gray then blur " + name)


@test("pipeline")
def long_pipeline():
    name = "rgba8.png"
    w, h, _, _ = expected(name)
    mpx = make_pixels(w, h, 1, 77)
    write("m.png", png_encode_8bit(w, h, 1, mpx))
    expect_ok(cpu("checkerboard", "--cell", "2", "--amount", "90", "then", "gray", "then", "blur",
                  "-r", "2", "then", "portrait", "--mask", "m.png", "-r", "1", "then", "blur",
                  "-r", "0", name, "out.png"), stdout_expected=False)
    want = ref_checkerboard(expected(name), 2, 90)
    want = ref_gray(want)
    want = ref_blur(want, 2)
    want = ref_portrait(want, (w, h, 1, mpx), 1)
    same_image(read_png(path("out.png")), want, "checkerboard/gray/blur/portrait pipeline")
    # Two portrait steps with two masks.
    mpx2 = bytes(255 - v for v in mpx)
    write("m2.png", png_encode_8bit(w, h, 1, mpx2))
    expect_ok(cpu("portrait", "--mask", "m.png", "-r", "1", "then", "portrait", "--mask", "m2.png",
                  "-r", "3", name, "out2.png"))
    want = ref_portrait(ref_portrait(expected(name), (w, h, 1, mpx), 1), (w, h, 1, mpx2), 3)
    same_image(read_png(path("out2.png")), want, "two portrait steps")
    # Repeating the run does not change the result.
    expect_ok(cpu("gray", "then", "blur", "-r", "2", "--repeat", "3", name, "rep.png"))
    same_image(read_png(path("rep.png")), ref_blur(ref_gray(expected(name)), 2), "--repeat 3")


# ---------------------------------------------------------------------------------------------
# report: the JSON timing report

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


def check_numbers(obj, where="report"):
    """Every number is finite and ms/bytes/gbps values are >= 0."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                check(v == v and abs(v) != float("inf"), "%s.%s is %r" % (where, k, v))
                if k in ("ms", "ms_min", "ms_max", "total_ms", "bytes", "gbps"):
                    check(v >= 0, "%s.%s is negative: %r" % (where, k, v))
            check_numbers(v, where + "." + k)
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            check_numbers(v, "%s[%d]" % (where, i))


def check_stage(s, samples):
    for k in ("name", "clock", "ms", "ms_min", "ms_max", "samples"):
        check(k in s, "stage %r has no %r" % (s.get("name"), k))
    for k in ("ms", "ms_min", "ms_max"):
        check(isinstance(s[k], (int, float)) and not isinstance(s[k], bool),
              "stage %s: %s is not a number" % (s["name"], k))
    check(s["ms_min"] <= s["ms"] <= s["ms_max"],
          "stage %s: not ms_min <= ms <= ms_max: %r" % (s["name"], s))
    check(s["samples"] == samples,
          "stage %s: samples %r, expected %d" % (s["name"], s["samples"], samples))


def stage(rep, name):
    found = [s for s in rep["stages"] if s["name"] == name]
    check(len(found) == 1,
          "expected one %r stage, got %r" % (name, [s["name"] for s in rep["stages"]]))
    return found[0]


@test("report")
def sample_report_to_stdout():
    # The exact command of the README, and the same on the CPU backend explicitly.
    cuda = is_cuda_build()
    for args in (["blur", "-r", "16", "--tiled", "--report", "-"],
                 ["--backend", "cpu", "blur", "-r", "16", "--tiled", "--report", "-"]):
        res = run(*args)
        check(res.rc == 0, "expected exit 0", res)
        if not cuda or "cpu" in args:
            check(res.err == b"", "expected an empty stderr", res)
        rep = load_report(res.out)
        check_numbers(rep)
        check(rep["schema_version"] == 1, "schema_version is %r" % rep.get("schema_version"))
        if not cuda or "cpu" in args:
            check(rep["backend"] == "cpu", "backend is %r" % rep["backend"])
        check(rep["tool"] == "gpuimg", "tool is %r" % rep.get("tool"))
        inp = rep["input"]
        check((inp["width"], inp["height"], inp["channels"]) == (1024, 768, 3),
              "input is %r" % inp)
        check(inp["name"] == "(built-in sample)", "input name %r" % inp["name"])
        check(rep["output"] is None, "output is %r without an OUTPUT" % rep["output"])
        check(rep["repeat"] == 1, "repeat is %r" % rep["repeat"])
        names = [s["name"] for s in rep["stages"]]
        check("decode" in names and "blur" in names, "stages are %r" % names)
        check("read" not in names, "a read stage without a file: %r" % names)
        for s in rep["stages"]:
            check_stage(s, 1)
        b = stage(rep, "blur")
        check(b.get("variant") == "tiled", "blur variant is %r" % b.get("variant"))
        check(b.get("options", {}).get("radius") == 16, "blur options are %r" % b.get("options"))
        check(b.get("step") == 0, "blur step is %r" % b.get("step"))
        check(b["bytes"] == 1024 * 768 * 3 * 2, "blur bytes %r" % b.get("bytes"))
        check(isinstance(rep["total_ms"], (int, float)) and rep["total_ms"] >= 0, "total_ms")


@test("report")
def repeat_report():
    res = expect_ok(cpu("gray", "then", "blur", "-r", "2", "--naive", "--repeat", "5", "--report",
                        "-", "rgb-33x17.png"))
    rep = load_report(res.out)
    check_numbers(rep)
    check(rep["repeat"] == 5, "repeat is %r" % rep["repeat"])
    for name in ("gray", "blur"):
        check_stage(stage(rep, name), 5)
    check(stage(rep, "blur")["variant"] == "naive", "variant")
    check(stage(rep, "blur")["step"] == 1 and stage(rep, "gray")["step"] == 0, "steps")
    check(stage(rep, "gray")["variant"] == "fast", "gray's default variant")
    # The CUDA model's fields are absent on the CPU backend, not zero.
    for key in ("compute_capability", "cuda_driver", "cuda_runtime", "copy_bandwidth_gbps"):
        check(key not in rep, "CPU report has %s" % key)
    for st in rep["stages"]:
        for key in ("launch", "divergence", "copy_bw_pct"):
            check(key not in st, "CPU stage %s has %s" % (st["name"], key))
    check(rep["warmup"] == 0 and rep["build_type"] in ("release", "debug", "debugoptimized",
                                                       "plain", "minsize", "custom"), "build")
    for name in ("gray", "blur"):
        check(isinstance(stage(rep, name)["mad_pct"], (int, float)), "mad_pct")
    for name in ("read", "decode"):
        check_stage(stage(rep, name), 1)
    # checkerboard's options are reported too.
    res = expect_ok(cpu("checkerboard", "--cell", "4", "--amount", "9", "--report", "-", "g8.png"))
    opts = stage(load_report(res.out), "checkerboard")["options"]
    check(opts == {"cell": 4, "amount": 9}, "checkerboard options %r" % opts)


@test("report")
def report_to_file():
    res = expect_ok(cpu("gray", "rgb8.png", "out.png", "--report", "r.json"), stdout_expected=False)
    rep = load_report(read("r.json"))
    check_numbers(rep)
    check(rep["input"] == {"name": "rgb8.png", "bytes": len(read("rgb8.png")), "width": 13,
                           "height": 7, "channels": 3}, "input %r" % rep["input"])
    check(rep["output"] == {"name": "out.png", "bytes": len(read("out.png")), "width": 13,
                            "height": 7, "channels": 1, "format": "png"},
          "output %r" % rep["output"])
    names = [s["name"] for s in rep["stages"]]
    check(names == ["read", "decode", "gray", "encode", "write"], "stages %r" % names)
    check(stage(rep, "read")["bytes"] == len(read("rgb8.png")), "read bytes")
    check(stage(rep, "decode")["bytes"] == len(read("rgb8.png")) + 13 * 7 * 3, "decode bytes")
    check_no_leftovers()
    # Report only (no image); report next to an image on stdout; stdin input.
    res = expect_ok(cpu("blur", "-r", "1", "-", "-", "--report", "r2.json",
                        stdin=CORPUS["rgb8.png"][0]))
    png_decode(res.out)
    rep = load_report(read("r2.json"))
    check(rep["input"]["name"] == "<stdin>" and rep["output"]["name"] == "<stdout>",
          "names %r %r" % (rep["input"], rep["output"]))
    # The report replaces an existing file; JPEG output is named "jpeg".
    expect_ok(cpu("blur", "rgb8.png", "o.jpg", "--report", "r2.json"))
    check(load_report(read("r2.json"))["output"]["format"] == "jpeg", "format")
    # Mask stages.
    w, h, _, _ = expected("rgb8.png")
    write("m.png", png_encode_8bit(w, h, 1, make_pixels(w, h, 1, 9)))
    res = expect_ok(cpu("portrait", "--mask", "m.png", "-r", "3", "rgb8.png", "--report", "-"))
    rep = load_report(res.out)
    names = [s["name"] for s in rep["stages"]]
    check(names == ["read", "decode", "mask-read", "mask-decode", "portrait"], "stages %r" % names)
    check(stage(rep, "portrait")["options"] == {"radius": 3, "mask": "m.png"},
          "portrait options %r" % stage(rep, "portrait")["options"])


@test("report")
def report_with_hostile_names():
    weird = b'bad\xff"name\n.png'
    weird_out = b'out\\\x01\xc3\x28\t".png'
    weird_mask = b"mask\xe2\x82.png"
    with open(path(weird), "wb") as f:
        f.write(CORPUS["rgb8.png"][0])
    w, h, _, _ = expected("rgb8.png")
    with open(path(weird_mask), "wb") as f:
        f.write(png_encode_8bit(w, h, 1, make_pixels(w, h, 1, 4)))
    res = expect_ok(cpu("blur", weird, weird_out, "--report", "-"))
    rep = load_report(res.out)
    check(rep["input"]["name"] == 'bad\ufffd"name\n.png', "input name %r" % rep["input"]["name"])
    check(rep["output"]["name"] == 'out\\\x01\ufffd(\t".png',
          "output name %r" % rep["output"]["name"])
    res = expect_ok(cpu("portrait", "--mask", weird_mask, weird, "--report", "-"))
    rep = load_report(res.out)
    check(stage(rep, "portrait")["options"]["mask"] == "mask\ufffd\ufffd.png",
          "mask name %r" % stage(rep, "portrait")["options"]["mask"])
    # Error messages carry the raw name.
    res = run("gray", b"no\xffpe\n.png")
    expect_error(res, EXIT_INPUT, b"no\xffpe\n.png: No such file or directory")


# ---------------------------------------------------------------------------------------------
# codec: the PNG encoders (--codec, --png-level) and the codec named in the report

def has_libpng():
    return built_with("libpng")


def has_libjpeg():
    return built_with("libjpeg")


NO_LIBPNG = "--codec: not available: this gpuimg was built without libpng"
NO_LIBJPEG = "--codec: not available: this gpuimg was built without libjpeg"
BAD_CODEC = "--codec: invalid value '%s' (expected auto, stb, fastpng, libpng, libjpeg or nvjpeg)"


def codec_choices():
    """The --codec values this build accepts."""
    return ["auto", "stb", "fastpng"] + (["libpng"] if has_libpng() else []) + \
        (["libjpeg"] if has_libjpeg() else [])


def codec_of(choice, job, png_level=1):
    """The codec that --codec CHOICE uses for job: 'decode png', 'decode jpeg', 'encode png',
    'encode jpeg', 'encode bmp' or 'encode tga'; auto encodes PNG with fastpng at
    --png-level 0 and 1 and with libpng (when built in) at 2..9."""
    if job == "encode png" and (choice == "fastpng" or (choice == "auto" and png_level <= 1)):
        return "fastpng"
    lib = {"encode png": "libpng", "decode jpeg": "libjpeg", "encode jpeg": "libjpeg"}.get(job)
    built = {"libpng": has_libpng(), "libjpeg": has_libjpeg()}
    return lib if lib and built[lib] and choice in ("auto", lib) else "stb"


def codec_images():
    """(name, (w, h, c, pixels)) for every layout at odd sizes: random and smooth pixels."""
    out = []
    for c in (1, 2, 3, 4):
        for w, h in ((1, 1), (1, 9), (9, 1), (33, 17), (13, 7)):
            px = make_pixels(w, h, c, seed=100 * c + w + h)
            out.append(("rand-%d-%dx%d.png" % (c, w, h), (w, h, c, px)))
        # A gradient, so that libpng's filter choice (levels 4..9) goes past 'none' and 'sub'.
        w, h = 37, 23
        px = bytes((3 * x + 5 * y + 40 * k) & 255 for y in range(h) for x in range(w)
                   for k in range(c))
        out.append(("grad-%d-%dx%d.png" % (c, w, h), (w, h, c, px)))
    for name, (w, h, c, px) in out:
        write(name, png_encode_8bit(w, h, c, px))
    return out


def encode_stage(res):
    return stage(load_report(res.out), "encode")


@test("codec")
def libpng_round_trip_every_layout():
    if not has_libpng():
        expect_error(cpu("blur", "-r", "0", "--codec", "libpng", "g8.png", "o.png"),
                     EXIT_USAGE, NO_LIBPNG)
        return
    for name, img in codec_images():
        res = expect_ok(cpu("blur", "-r", "0", name, "o.png", "--codec", "libpng",
                            "--report", "-"))
        check(encode_stage(res)["codec"] == "libpng", "encode codec", res)
        same_image(png_decode(read("o.png")), img, name + " -> libpng")
        # stb, the reference decoder, reads libpng's file back to the same pixels.
        expect_ok(cpu("blur", "-r", "0", "o.png", "back.png", "--codec", "stb"),
                  stdout_expected=False)
        same_image(png_decode(read("back.png")), img, name + " -> libpng -> stb")
    check_no_leftovers()


def fastpng_images():
    """(name, (w, h, c, pixels)) that exercise fastpng's deflate: runs of 3, 4, 258 and 259
    equal bytes (matches of every length class), a flat image (one long run), stripes,
    noise (stored blocks), and images of several 256 KiB blocks (several IDAT chunks), rows
    longer than a block included."""
    out = []
    row = bytes([7, 7, 7, 9, 9, 9, 9, 1] + [5] * 258 + [6] * 259 + [0, 0, 1, 1, 1] +
                list(range(200)))
    out.append(("runs-1.png", (len(row), 3, 1, row * 3)))
    out.append(("flat-3.png", (300, 200, 3, bytes([90, 140, 200]) * (300 * 200))))
    out.append(("stripes-4.png", (257, 31, 4, bytes(
        (0 if (x // 3) % 2 else 255) for _ in range(31) for x in range(257) for _ in range(4)))))
    out.append(("noise-3.png", (211, 97, 3, make_pixels(211, 97, 3, seed=77))))
    w, h = 700, 400
    px = bytes(((x * x) // (y + 1) + 3 * y + 50 * k) & 255 for y in range(h) for x in range(w)
               for k in range(3))
    out.append(("big-3.png", (w, h, 3, px)))
    # Rows longer than a block: each row goes out in several blocks and chunks.
    out.append(("wide-2.png", (140000, 2, 2, make_pixels(140000, 2, 2, seed=5))))
    for name, (w, h, c, px) in out:
        write(name, png_encode_8bit(w, h, c, px))
    return out


@test("codec")
def fastpng_round_trips():
    # The checks: the test's own decoder (every chunk's CRC, the zlib stream and its
    # Adler-32, each filter), then stb reading the file back.
    for level in ("0", "1", "9"):
        for name, img in codec_images() + fastpng_images():
            res = expect_ok(cpu("blur", "-r", "0", name, "o.png", "--codec", "fastpng",
                                "--png-level", level, "--report", "-"))
            check(encode_stage(res)["codec"] == "fastpng", "encode codec", res)
            same_image(png_decode(read("o.png")), img, "%s -> fastpng -%s" % (name, level))
            if level != "9":
                expect_ok(cpu("blur", "-r", "0", "o.png", "back.png", "--codec", "stb"),
                          stdout_expected=False)
                same_image(png_decode(read("back.png")), img,
                           "%s -> fastpng -%s -> stb" % (name, level))
    # Level 1 compresses (a flat image to almost nothing); level 0 stores; noise, which
    # does not compress, costs at most a few bytes in 64 KiB more than its raw size.
    sizes = {}
    for name, (w, h, c, px) in fastpng_images():
        for level in ("0", "1"):
            expect_ok(cpu("blur", "-r", "0", name, "o.png", "--codec", "fastpng",
                          "--png-level", level), stdout_expected=False)
            sizes[name, level] = len(read("o.png"))
        raw = (w * c + 1) * h
        check(sizes[name, "0"] <= raw + 5 * (raw // 65535 + 1) + 60 * (raw // 262144 + 1) + 60,
              "%s stored in %d bytes (%d raw)" % (name, sizes[name, "0"], raw))
        check(sizes[name, "1"] <= sizes[name, "0"], "%s: level 1 larger than 0" % name)
    check(sizes["flat-3.png", "1"] < 1000, "flat image: %d bytes" % sizes["flat-3.png", "1"])
    check(sizes["big-3.png", "1"] < sizes["big-3.png", "0"] // 2, "big-3 barely compressed")
    check_no_leftovers()


@test("codec")
def every_png_level_round_trips():
    if not has_libpng():
        expect_error(cpu("blur", "-r", "0", "--codec", "libpng", "--png-level", "5", "g8.png",
                         "o.png"), EXIT_USAGE, NO_LIBPNG)
        return
    images = [im for im in codec_images() if "33x17" in im[0] or "grad" in im[0]]
    for level in range(10):
        for name, img in images:
            expect_ok(cpu("blur", "-r", "0", "--codec", "libpng", "--png-level", str(level),
                          name, "o.png"), stdout_expected=False)
            same_image(png_decode(read("o.png")), img, "%s at --png-level %d" % (name, level))
    # The level matters: stored (0) is larger than the best compression (9).
    sizes = []
    for level in ("0", "9"):
        expect_ok(cpu("gray", "--codec", "libpng", "--png-level", level, "sample:", "s.png"),
                  stdout_expected=False)
        sizes.append(len(read("s.png")))
    check(sizes[0] > sizes[1], "--png-level 0 gives %d bytes, 9 gives %d" % tuple(sizes))


@test("codec")
def stb_codec_still_works():
    for name, img in codec_images():
        res = expect_ok(cpu("blur", "-r", "0", "--codec", "stb", name, "o.png", "--report", "-"))
        check(encode_stage(res)["codec"] == "stb", "encode codec", res)
        same_image(png_decode(read("o.png")), img, name + " -> stb")
    check_no_leftovers()


@test("codec")
def report_names_the_codec():
    make_jpeg()
    for choice in codec_choices() + [None]:
        args = ["--codec", choice] if choice else []
        for src, kind in (("rgb8.png", "png"), ("smooth.jpg", "jpeg")):
            for out in ("o.png", "o.jpg", "o.bmp", "o.tga"):
                res = expect_ok(cpu("gray", src, out, "--report", "-", *args))
                rep = load_report(res.out)
                want_dec = codec_of(choice or "auto", "decode " + kind)
                want_enc = codec_of(choice or "auto", "encode " + out[2:].replace("jpg", "jpeg"))
                check(stage(rep, "decode")["codec"] == want_dec,
                      "decode codec is not %s" % want_dec, res)
                check(stage(rep, "encode")["codec"] == want_enc,
                      "encode codec is not %s" % want_enc, res)
                check("codec" not in stage(rep, "gray") and "codec" not in stage(rep, "read")
                      and "codec" not in stage(rep, "write"), "codec on a non-codec stage", res)
    # Batch mode: each image's report line names them too.
    for choice in codec_choices():
        out = "batch-" + choice
        res = expect_ok(cpu("blur", "-r", "0", "-q", "-o", out, "g8.png", "smooth.jpg",
                            "--codec", choice, "--report", "-"))
        lines = [json.loads(line) for line in res.out.decode().splitlines()]
        check(len(lines) == 3, "batch report lines", res)
        for line in lines[:2]:
            kind = "jpeg" if line["input"]["name"].endswith(".jpg") else "png"
            codecs = {s["name"]: s.get("codec") for s in line["stages"]}
            check(codecs["decode"] == codec_of(choice, "decode " + kind) and
                  codecs["encode"] == codec_of(choice, "encode " + kind),
                  "batch --codec %s: %s codecs %r" % (choice, kind, codecs), res)
    same_image(read_png(path("batch-stb/g8.png")), expected("g8.png"), "batch --codec stb")
    # auto's PNG encoder depends on the level: fastpng at 0 and 1, libpng (if built) above.
    for level in range(10):
        res = expect_ok(cpu("gray", "rgb8.png", "o.png", "--png-level", str(level),
                            "--report", "-"))
        want = codec_of("auto", "encode png", level)
        check(encode_stage(res)["codec"] == want, "--png-level %d: not %s" % (level, want), res)
    if has_libpng():
        res = expect_ok(cpu("blur", "-r", "0", "-q", "-o", "batch2", "rgba8.png", "--codec",
                            "libpng", "--png-level", "9"))
        same_image(read_png(path("batch2/rgba8.png")), expected("rgba8.png"),
                   "batch --codec libpng")


@test("codec")
def bad_codec_options():
    if not built_with("nvjpeg"):
        usage_error(["gray", "--codec", "nvjpeg"],
                    "--codec: not available: this gpuimg was built without nvJPEG")
    usage_error(["gray", "--codec="], BAD_CODEC % "")
    usage_error(["gray", "--codec", "LIBJPEG"], BAD_CODEC % "LIBJPEG")
    usage_error(["gray", "--codec"], "--codec: missing value")
    for bad in ("10", "-1", "x", "1.5", ""):
        usage_error(["gray", "--png-level", bad], _range_msg("--png-level", bad, 0, 9))
    if not has_libpng():
        usage_error(["gray", "--codec", "libpng"], NO_LIBPNG)
    if not has_libjpeg():
        usage_error(["gray", "--codec", "libjpeg"], NO_LIBJPEG)
    # The limits are accepted.
    for level in ("0", "9"):
        expect_ok(cpu("gray", "--png-level", level, "g8.png", "o.png"), stdout_expected=False)
    check_no_leftovers()


# ---------------------------------------------------------------------------------------------
# jpeg: the libjpeg codec (--codec libjpeg, and auto where built): decode within a tolerance of
# stb, encode quality, layouts, exact refusals, determinism; nolibjpeg: a build without it

# libjpeg's decode against stb's (the reference) on the same file, per 8-bit sample. Measured
# on the 1024x768 sample (colour and gray, written by stb's and libjpeg's encoders at quality
# 75, 90 and 100): at most 3 apart (colour; gray at most 1), mean 0.069 at most. Both use
# integer IDCTs and triangle chroma upsampling, rounded differently.
JPEG_MAX_DIFF = 4
JPEG_MEAN_DIFF = 0.15
# PSNR of libjpeg's JPEG of the sample, decoded by stb, against the source, by quality; measured
# 35.1 / 37.2 dB (colour, 4:2:0) and 39.5 / 43.8 dB (gray) at quality 75 / 90.
JPEG_MIN_PSNR = {("colour", 75): 34.0, ("colour", 90): 36.0, ("gray", 75): 38.0,
                 ("gray", 90): 42.0}


def need_libjpeg():
    if not has_libjpeg():
        raise Skip("this gpuimg was built without libjpeg")


def bmp_samples(name):
    """The pixel bytes of a BMP that gpuimg wrote (rows bottom-up, BGR, padded): enough to
    compare two BMPs of the same size byte for byte, fast."""
    data = read(name)
    return data[:54], data[struct.unpack("<I", data[10:14])[0]:]


def decode_diff(name):
    """(max, mean) difference between stb's and libjpeg's decodes of the JPEG name."""
    expect_ok(cpu("blur", "-r", "0", "--codec", "stb", name, "stb.bmp"), stdout_expected=False)
    expect_ok(cpu("blur", "-r", "0", "--codec", "libjpeg", name, "lj.bmp"),
              stdout_expected=False)
    (ha, a), (hb, b) = bmp_samples("stb.bmp"), bmp_samples("lj.bmp")
    check(ha == hb and len(a) == len(b), "%s: the two decodes differ in size" % name)
    diffs = bytes(abs(x - y) for x, y in zip(a, b))
    return max(diffs), sum(diffs) / len(diffs)


def jpeg_components(data):
    """[(id, sampling byte)] of a JPEG's start-of-frame."""
    pos = 2
    while pos + 4 <= len(data):
        marker, n = data[pos + 1], struct.unpack(">H", data[pos + 2:pos + 4])[0]
        if marker in (0xC0, 0xC1, 0xC2):
            nc = data[pos + 9]
            return [(data[pos + 10 + 3 * i], data[pos + 11 + 3 * i]) for i in range(nc)]
        pos += 2 + n
    raise Failure("no start of frame")


@test("jpeg")
def libjpeg_decode_close_to_stb():
    need_libjpeg()
    worst = []
    for kind, ops in (("colour", ["blur", "-r", "0"]), ("gray", ["gray"])):
        for enc in ("stb", "libjpeg"):
            for q in ("75", "90", "100"):
                name = "%s-%s-q%s.jpg" % (kind, enc, q)
                expect_ok(cpu(*ops, "--codec", enc, "--quality", q, "sample:", name))
                mx, mean = decode_diff(name)
                worst.append((mx, mean, name))
                check(mx <= JPEG_MAX_DIFF and mean <= JPEG_MEAN_DIFF,
                      "%s: libjpeg and stb decodes differ by up to %d (mean %.3f), tolerance "
                      "%d (mean %.2f)" % (name, mx, mean, JPEG_MAX_DIFF, JPEG_MEAN_DIFF))
    print("  (largest difference %d, largest mean %.3f)" % (max(worst)[0],
                                                            max(w[1] for w in worst)))


@test("jpeg")
def libjpeg_decode_other_layouts():
    """Progressive, restart markers, 4:4:4, 4:2:0, 4:1:1 and four components (CMYK and YCCK
    by Adobe's marker, and without it, as stb reads them) within the same tolerance. The
    4:2:2 seed is left out: stb weights the last chroma pair of a row the wrong way round
    (stbi__resample_row_h_2), so the second-to-last column differs by up to 84 there."""
    need_libjpeg()
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "fuzz"))
    import make_seeds
    files = {n: make_seeds.jpeg_encode(*v) for n, v in make_seeds.SEEDS.items() if "422" not in n}
    for transform in (0, 2):
        app14 = b"\xff\xee\x00\x0eAdobe" + struct.pack(">HHHB", 100, 0, 0, transform)
        for n in ("base-cmyk-12x20.jpg", "prog-cmyk-20x12.jpg"):
            files["adobe%d-%s" % (transform, n)] = files[n][:2] + app14 + files[n][2:]
    for name, data in sorted(files.items()):
        write(name, data)
        mx, mean = decode_diff(name)
        check(mx <= JPEG_MAX_DIFF and mean <= JPEG_MEAN_DIFF,
              "%s: libjpeg and stb decodes differ by up to %d (mean %.3f)" % (name, mx, mean))


def psnr(a, b):
    mse = sum((x - y) ** 2 for x, y in zip(a, b)) / len(a)
    return 99.0 if mse == 0 else 10 * math.log10(255 * 255 / mse)


@test("jpeg")
def libjpeg_encode_quality():
    need_libjpeg()
    for kind, ops in (("colour", ["blur", "-r", "0"]), ("gray", ["gray"])):
        expect_ok(cpu(*ops, "sample:", "src.bmp"), stdout_expected=False)
        _, src = bmp_samples("src.bmp")
        for q in (75, 90):
            name = "%s-q%d.jpg" % (kind, q)
            res = expect_ok(cpu(*ops, "--codec", "libjpeg", "--quality", str(q), "sample:", name,
                                "--report", "-"))
            check(encode_stage(res)["codec"] == "libjpeg", "encode codec", res)
            expect_ok(cpu("blur", "-r", "0", "--codec", "stb", name, "back.bmp"),
                      stdout_expected=False)
            got = psnr(src, bmp_samples("back.bmp")[1])
            check(got >= JPEG_MIN_PSNR[(kind, q)], "%s: PSNR %.2f dB, expected at least %.1f"
                  % (name, got, JPEG_MIN_PSNR[(kind, q)]))
        # libjpeg's defaults: 4:2:0 chroma for colour, one component for gray.
        comps = jpeg_components(read("%s-q90.jpg" % kind))
        check([s for _, s in comps] == ([0x22, 0x11, 0x11] if kind == "colour" else [0x11]),
              "%s: components %r" % (kind, comps))
    # Quality is honoured: a lower quality gives a smaller file.
    sizes = []
    for q in ("50", "95"):
        expect_ok(cpu("blur", "-r", "0", "--codec", "libjpeg", "--quality", q, "sample:",
                      "s%s.jpg" % q), stdout_expected=False)
        sizes.append(len(read("s%s.jpg" % q)))
    check(sizes[0] < sizes[1], "--quality 50 gives %d bytes, 95 gives %d" % tuple(sizes))


@test("jpeg")
def libjpeg_layouts():
    """1 and 2 channels become a one-component gray JPEG, 3 and 4 a YCbCr one: alpha is
    dropped, as stb drops it (the same bytes as without alpha). A gray JPEG decodes to one
    channel with either decoder; stb's gray JPEG (three components) to three."""
    need_libjpeg()
    for name, (w, h, c, px) in codec_images():
        expect_ok(cpu("blur", "-r", "0", "--codec", "libjpeg", name, "o.jpg"),
                  stdout_expected=False)
        check(len(jpeg_components(read("o.jpg"))) == (1 if c <= 2 else 3),
              "%s: %d components" % (name, len(jpeg_components(read("o.jpg")))))
        for dec in ("stb", "libjpeg"):
            expect_ok(cpu("blur", "-r", "0", "--codec", dec, "o.jpg", "back.png"),
                      stdout_expected=False)
            got = read_png(path("back.png"))
            check(got[:3] == (w, h, 1 if c <= 2 else 3),
                  "%s -> libjpeg -> %s: %r" % (name, dec, got[:3]))
        if c in (2, 4):  # the same image without its alpha gives the same file
            opaque = bytes(v for i in range(0, len(px), c) for v in px[i:i + c - 1])
            write("noalpha.png", png_encode_8bit(w, h, c - 1, opaque))
            expect_ok(cpu("blur", "-r", "0", "--codec", "libjpeg", "noalpha.png", "na.jpg"),
                      stdout_expected=False)
            check(read("na.jpg") == read("o.jpg"), "%s: alpha changed the JPEG" % name)
        if name.startswith("grad"):  # smooth enough for a bound on the error
            want = bytes(v for i in range(0, len(px), c) for v in px[i:i + (1 if c <= 2 else 3)])
            err = sum(abs(a - b) for a, b in zip(got[3], want)) / len(want)
            check(err < 6, "%s -> libjpeg: mean error %.2f" % (name, err))
    expect_ok(cpu("blur", "-r", "0", "--codec", "stb", "g8.png", "stb-gray.jpg"))
    check(len(jpeg_components(read("stb-gray.jpg"))) == 3, "stb writes three components")
    expect_ok(cpu("blur", "-r", "0", "--codec", "libjpeg", "stb-gray.jpg", "back.png"))
    check(read_png(path("back.png"))[2] == 3, "stb's gray JPEG decodes to 3 channels")
    check_no_leftovers()


@test("jpeg")
def libjpeg_refusals():
    need_libjpeg()
    _, data = make_jpeg()  # 40x24, written by stb
    sos, sof = data.index(b"\xff\xda"), data.index(b"\xff\xc0")
    write("keep.png", b"existing output")
    cases = [
        # Truncated: libjpeg would pad the image with gray; it is an error, as with stb.
        ("cut-scan.jpg", data[:(sos + len(data)) // 2],
         "cannot decode JPEG: premature end of JPEG file"),
        ("cut-eoi.jpg", data[:-2], "cannot decode JPEG: premature end of JPEG file"),
        # A restart marker in a file without restarts: libjpeg's "corrupt data" warning is an
        # error too (it would decode the rest as zeros).
        ("rst.jpg", data[:sos + 40] + b"\xff\xd3" + data[sos + 42:],
         "cannot decode JPEG: corrupt JPEG data: premature end of data segment"),
        # A component that names an undefined quantization table.
        ("dqt.jpg", data[:sof + 12] + b"\x03" + data[sof + 13:],
         "cannot decode JPEG: quantization table 0x03 was not defined"),
        ("empty.jpg", b"", "empty file"),
    ]
    for name, bad, reason in cases:
        write(name, bad)
        for args in (["--codec", "libjpeg"], []):
            expect_error(cpu("gray", *args, name, "keep.png"), EXIT_INPUT, name + ": " + reason)
    # Over --max-pixels, from the header (40 x 24 = 960).
    expect_error(cpu("gray", "--codec", "libjpeg", "--max-pixels", "959", "smooth.jpg", "o.png"),
                 EXIT_INPUT, "smooth.jpg: image is 40x24, over the limit of 959 pixels "
                             "(see --max-pixels)")
    expect_ok(cpu("gray", "--codec", "libjpeg", "--max-pixels", "960", "smooth.jpg", "o.png"))
    # Encoding: JPEG sides stop at 65500 pixels.
    write("wide.png", png_encode_8bit(65501, 1, 1, bytes(65501)))
    expect_error(cpu("blur", "-r", "0", "--codec", "libjpeg", "wide.png", "wide.jpg"),
                 EXIT_OUTPUT, "wide.jpg: cannot encode JPEG: maximum supported image dimension "
                              "is 65500 pixels")
    check(read("keep.png") == b"existing output", "the existing output was changed")
    check_no_leftovers()


@test("jpeg")
def libjpeg_bytes_do_not_depend_on_jobs():
    """Batch mode decodes and encodes on several threads: the same bytes with -j 1 and -j 4,
    and as one image at a time."""
    need_libjpeg()
    names = []
    for k, (w, h) in enumerate(((64, 48), (33, 17), (200, 120), (1, 1), (97, 61), (40, 24))):
        px = bytes((x * (3 + k) + y * 7 + ch * 50) & 255 for y in range(h) for x in range(w)
                   for ch in range(3))
        write("src%d.png" % k, png_encode_8bit(w, h, 3, px))
        expect_ok(cpu("blur", "-r", "0", "--codec", "stb", "src%d.png" % k, "in%d.jpg" % k))
        names.append("in%d.jpg" % k)
    outs = []
    for jobs in ("1", "4"):
        out = "out-j" + jobs
        expect_ok(cpu("blur", "-r", "2", "-q", "-j", jobs, "-o", out, *names))
        outs.append([read(os.path.join(out, n)) for n in names])
    check(outs[0] == outs[1], "outputs differ between -j 1 and -j 4")
    for n, want in zip(names, outs[0]):
        expect_ok(cpu("blur", "-r", "2", n, "one.jpg"))
        check(read("one.jpg") == want, "%s: batch and single-image outputs differ" % n)


@test("nolibjpeg")
def libjpeg_not_built():
    if has_libjpeg():
        raise Skip("this gpuimg has libjpeg (configure with -Dlibjpeg=disabled to test this)")
    usage_error(["gray", "--codec", "libjpeg"], NO_LIBJPEG)
    usage_error(["gray", "--codec", "libjpeg", "-o", "dir", "g8.png"], NO_LIBJPEG)
    check(b"libjpeg" not in run("-V").out, "-V names libjpeg")
    _, _ = make_jpeg()
    res = expect_ok(cpu("gray", "smooth.jpg", "o.jpg", "--report", "-"))
    rep = load_report(res.out)
    check(stage(rep, "decode")["codec"] == "stb" and stage(rep, "encode")["codec"] == "stb",
          "auto without libjpeg must use stb for JPEG", res)


# ---------------------------------------------------------------------------------------------
# completion: the bash completion script made from the option tables

def help_names():
    """The operations and the options (long and short) that --help lists."""
    out = expect_ok(run("--help")).out.decode()
    ops = re.findall(r"^([a-z]+): ", out.split("\nGlobal options:")[0], re.M)
    opts = set()
    for line in out.splitlines():
        m = re.match(r"  (-[A-Za-z])?(?:, )?(--[a-z][a-z-]*)", line)
        if m:
            opts.update(x for x in m.groups() if x)
    return ops, opts


def complete(words):
    """What the completion offers for the last of words (bash sources the script)."""
    script = expect_ok(run("--completion", "bash")).out.decode()
    line = ("source /dev/stdin; COMP_WORDS=(%s); COMP_CWORD=%d; _gpuimg; "
            "printf '%%s\\n' \"${COMPREPLY[@]}\"" %
            (" ".join(shlex.quote(w) for w in words), len(words) - 1))
    res = subprocess.run(["bash", "-c", line], input=script.encode(), capture_output=True)
    check(res.returncode == 0, "bash failed on the completion script: %r" % res.stderr)
    return set(res.stdout.decode().split())


@test("completion")
def completion_names_everything():
    ops, opts = help_names()
    check(ops == ["gray", "blur", "checkerboard", "portrait"], "help's operations: %r" % ops)
    check(len(opts) > 25, "help lists only %d options" % len(opts))
    res = expect_ok(run("--completion", "bash"))
    words = set(re.findall(r"[-\w]+", res.out.decode()))
    for name in ops + sorted(opts) + ["then", "complete", "_gpuimg"]:
        check(name in words, "the completion does not name %s" % name, res)
    usage_error(["--completion", "zsh"], "--completion: invalid value 'zsh' (expected bash)")


@test("completion")
def completion_in_bash():
    if not shutil.which("bash"):
        raise Skip("no bash")
    ops, _ = help_names()
    check(complete(["gpuimg", ""]) >= set(ops) | {"compare", "info"}, "first word: no operations")
    check(complete(["gpuimg", "blur", "--ra"]) == {"--radius"}, "blur --ra")
    check("--cell" not in complete(["gpuimg", "blur", "--"]), "blur offers checkerboard's --cell")
    check("--cell" in complete(["gpuimg", "blur", "then", "checkerboard", "--"]),
          "checkerboard after then: no --cell")
    check(complete(["gpuimg", "blur", "--tile", ""]) == {"u8", "float"}, "--tile's values")
    check(complete(["gpuimg", "gray", "--backend", "c"]) == {"cpu", "cuda"}, "--backend's values")
    check(complete(["gpuimg", "gray", "then", "bl"]) == {"blur"}, "operation after then")


# ---------------------------------------------------------------------------------------------

if __name__ == "__main__":
    sys.exit(testlib.main(sys.argv, "cli-", populate=lambda: mi.write_corpus(path())))
