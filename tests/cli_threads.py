# cli_threads.py: test_cli.py's group threads: --threads N on the CPU backend, from the command.

import json
import os
import random
import struct
import zlib

from gpuimg_testlib import (
    COLOUR_TYPE_OF_CHANNELS, PNG_SIGNATURE, SAMPLES, Skip, built_with, check, cpu, expect_ok,
    path, png_file, read, run, test, write)
from cli_common import load_report, range_msg, usage_error

THREADS = ("1", "2", "7")


def quick_png(name, w, h, c, seed):
    """A PNG of seeded random bytes, written fast (filter 0, zlib level 1)."""
    px = random.Random(seed).randbytes(w * h * c)
    row = w * c
    raw = b"".join(b"\0" + px[y * row:(y + 1) * row] for y in range(h))
    write(name, png_file(w, h, COLOUR_TYPE_OF_CHANNELS[c], 8, zlib.compress(raw, 1)))


def cores():
    return len(os.sched_getaffinity(0))


# Odd sizes, and 256x1800, which the CPU backend cuts into 7 bands at --threads 7 (a band holds
# at least 65536 pixels); blur -r 40 and portrait -r 50 have radii larger than the small ones.
SIZES = ((1, 1), (1, 9), (9, 1), (33, 17), (256, 1800))
SPECS = (["gray"], ["gray", "--naive"], ["blur", "-r", "3"], ["blur", "-r", "5", "--naive"],
         ["blur", "-r", "40", "--tiled"], ["checkerboard", "--cell", "3"],
         ["checkerboard", "--naive", "--amount", "200"],
         ["portrait", "--mask", "MASK", "-r", "4"], ["portrait", "--mask", "MASK", "-r", "50",
                                                     "--tiled"],
         ["gray", "then", "blur", "-r", "5", "then", "checkerboard"],
         ["resize", "--scale", "0.37"], ["resize", "--scale", "1.7"],
         ["gray", "then", "resize", "--fit", "20x20", "then", "blur", "-r", "2"],
         ["rotate", "--angle", "90"], ["rotate", "--angle", "180", "--naive"],
         ["transverse", "--tiled"], ["flip", "then", "transpose"])


@test("threads")
def same_bytes_at_every_thread_count():
    for w, h in SIZES:
        quick_png("m.png", w, h, 1, w * h)
        for c in (1, 2, 3, 4):
            quick_png("in.png", w, h, c, w * 7 + h + c)
            for spec in SPECS:
                args = [a if a != "MASK" else "m.png" for a in spec]
                outs = []
                for t in THREADS:
                    expect_ok(cpu(*args, "--threads", t, "in.png", "out%s.png" % t),
                              stdout_expected=False)
                    outs.append(read("out%s.png" % t))
                check(outs[0] == outs[1] == outs[2], "%s on %dx%dx%d: the output differs "
                      "between --threads 1, 2 and 7" % (" ".join(spec), w, h, c))


@test("threads")
def usage_errors():
    for value in ("0", "1025", "-1", "abc", "", "2x", "99999999999999999999"):
        usage_error(["blur", "--threads", value], range_msg("--threads", value, 1, 1024))
    usage_error(["blur", "--threads"], "--threads: missing value")
    expect_ok(cpu("blur", "--threads=1024", "-r", "1", "--report", "-"))


@test("threads")
def report_field():
    quick_png("in.png", 40, 30, 3, 5)
    for args, want in ((["--threads", "2"], 2), (["--threads", "1024"], 1024), ([], cores())):
        rep = load_report(expect_ok(cpu("blur", *args, "--report", "-", "in.png")).out)
        check(rep.get("threads") == want, "%r: report threads %r, expected %r"
              % (args, rep.get("threads"), want))
    # The default honours the process's CPU affinity (taskset, cgroup cpusets).
    one = sorted(os.sched_getaffinity(0))[:1]
    res = expect_ok(cpu("blur", "--report", "-", "in.png",
                        preexec_fn=lambda: os.sched_setaffinity(0, one)))
    check(load_report(res.out)["threads"] == 1, "threads under a one-core affinity", res)
    # --explain lists the kernels only: nothing about threads.
    explained = []
    for t in THREADS:
        res = cpu("gray", "then", "blur", "-r", "1", "--threads", t, "--explain", "in.png")
        check(res.rc == 0, "explain exit", res)
        lines = [line.split(", ")[0] for line in res.err.decode().splitlines()]
        explained.append(lines)
        check(b"thread" not in res.err, "--explain mentions threads", res)
    want = ["gray: CPU backend", "blur: CPU backend"]
    check(explained[0] == explained[1] == explained[2] == want, "--explain lines %r" % explained)


def batch_report(name):
    return [json.loads(line) for line in read(name).decode().splitlines()]


@test("threads")
def batch_threads():
    names = []
    for i in range(3):
        names.append("b%d.png" % i)
        quick_png(names[-1], 300, 500 + i, 3, 40 + i)
    # Each worker's share of the cores, unless --threads is given; the same bytes either way.
    cases = ((["-j", "2"], max(1, cores() // 2)), (["-j", "1"], cores()),
             (["-j", "2", "--threads", "3"], 3), (["-j", "3", "--threads", "1"], 1))
    first = None
    for k, (args, want) in enumerate(cases):
        out = "out%d" % k
        expect_ok(cpu("blur", "-r", "7", "-q", *args, "-o", out, "--report", "r%d.jsonl" % k,
                      *names), stdout_expected=False)
        objs = batch_report("r%d.jsonl" % k)
        check(objs[-1]["summary"] and objs[-1]["threads"] == want,
              "%r: summary threads %r, expected %r" % (args, objs[-1].get("threads"), want))
        check(all(o["threads"] == want for o in objs[:-1]), "%r: image lines' threads" % args)
        outputs = [read(os.path.join(out, n)) for n in names]
        check(first is None or outputs == first, "%r: batch outputs differ" % args)
        first = outputs


def png_stream(data):
    """(width, height, channels, the zlib stream's bytes, its IDAT payloads) of a PNG, every
    chunk's CRC checked (pixels are checked through another decoder: unfiltering megabytes in
    Python is slow)."""
    pos, idat, ihdr = 8, [], None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        payload = data[pos + 8:pos + 8 + n]
        crc = struct.unpack(">I", data[pos + 8 + n:pos + 12 + n])[0]
        check(zlib.crc32(kind + payload) == crc, "bad CRC in a %r chunk" % kind)
        if kind == b"IHDR":
            ihdr = struct.unpack(">II", payload[:8]) + (SAMPLES[payload[9]],)
        elif kind == b"IDAT":
            idat.append(payload)
        pos += 12 + n
    return ihdr + (b"".join(idat), idat)


def sliced_png(name, w, h, c, seed):
    """A PNG whose left half is a smooth gradient (long runs after fastpng's filter) and the
    right half noise (stored blocks); returns its pixels."""
    rnd = random.Random(seed)
    half = w * c // 2
    px = b"".join(bytes((x // 7 + y) & 255 for x in range(half)) + rnd.randbytes(w * c - half)
                  for y in range(h))
    row = w * c
    raw = b"".join(b"\0" + px[y * row:(y + 1) * row] for y in range(h))
    write(name, png_file(w, h, COLOUR_TYPE_OF_CHANNELS[c], 8, zlib.compress(raw, 1)))
    return px


@test("threads")
def png_slices_same_bytes_at_every_thread_count():
    # Slices of 256 KiB of filtered rows: 1500x1100 RGB has 19 of 58 rows; rows longer than a
    # block are a slice each, of several blocks (8 here).
    for w, h, c in ((1500, 1100, 3), (300000, 8, 1)):
        px = sliced_png("big.png", w, h, c, w + h)
        for level in ("0", "1"):
            outs = []
            for t in THREADS:
                expect_ok(cpu("blur", "-r", "0", "--threads", t, "--png-level", level, "big.png",
                              "out%s.png" % t), stdout_expected=False)
                outs.append(read("out%s.png" % t))
            what = "%dx%dx%d at --png-level %s" % (w, h, c, level)
            check(outs[0] == outs[1] == outs[2], "%s: the PNG differs between --threads 1, 2 "
                  "and 7" % what)
            # Python's zlib checks the stream and its Adler-32, which has a chunk of its own.
            width, height, channels, stream, idat = png_stream(outs[0])
            raw = zlib.decompress(stream)
            check((width, height, channels) == (w, h, c) and len(raw) == (w * c + 1) * h and
                  idat[-1] == struct.pack(">I", zlib.adler32(raw)), "%s: the stream" % what)
            # stb (gpuimg's PNG decoder) reads it; level 0 stores those pixels unfiltered.
            expect_ok(cpu("blur", "-r", "0", "--png-level", "0", "out1.png", "back.png"),
                      stdout_expected=False)
            raw = zlib.decompress(png_stream(read("back.png"))[3])
            row = w * c
            back = b"".join(raw[y * (row + 1) + 1:(y + 1) * (row + 1)] for y in range(h))
            check(back == px, "%s: stb decodes other pixels" % what)


@test("threads")
def jpeg_bands_same_bytes_at_every_thread_count():
    # libjpeg's encode of an image of 4 Mpx or more: bands of 256 rows with a restart every 64
    # (2050 rows: 33 intervals, 32 RST markers in order), the same bytes at every --threads,
    # decoding to the pixels of the image encoded whole (GPUIMG_JPEG_BANDS=0); a smaller image
    # has no restart markers.
    if not built_with("libjpeg"):
        raise Skip("this gpuimg was built without libjpeg")
    whole = dict(os.environ, GPUIMG_JPEG_BANDS="0")
    for w, h, c in ((2100, 2050, 3), (2100, 2050, 1), (2100, 2050, 4), (1024, 768, 3)):
        sliced_png("big.png", w, h, c, w + h + c)
        outs = []
        for t in THREADS:
            expect_ok(cpu("blur", "-r", "0", "--threads", t, "big.png", "out%s.jpg" % t),
                      stdout_expected=False)
            outs.append(read("out%s.jpg" % t))
        what = "%dx%dx%d" % (w, h, c)
        check(outs[0] == outs[1] == outs[2], "%s: the JPEG differs between --threads 1, 2 and 7"
              % what)
        rst = [outs[0][k + 1] for k in range(len(outs[0]) - 1)
               if outs[0][k] == 0xff and 0xd0 <= outs[0][k + 1] <= 0xd7]
        banded = w * h >= 1 << 22
        check((b"\xff\xdd\x00\x04" in outs[0]) == banded and
              rst == ([0xd0 + (k & 7) for k in range(32)] if banded else []),
              "%s: restart markers %s" % (what, rst))
        expect_ok(cpu("blur", "-r", "0", "big.png", "whole.jpg", env=whole),
                  stdout_expected=False)
        check(banded or read("whole.jpg") == outs[0], "%s: banded below 4 Mpx" % what)
        for name in ("out1", "whole"):
            expect_ok(cpu("blur", "-r", "0", "%s.jpg" % name, "%s.png" % name),
                      stdout_expected=False)
        check(read("out1.png") == read("whole.png"), "%s: the bands decode to other pixels"
              % what)
        # Decoded in bands of its restart intervals on threads: the whole decode's pixels.
        decoded = []
        for t in THREADS:
            expect_ok(cpu("blur", "-r", "0", "--threads", t, "out1.jpg", "dec%s.png" % t),
                      stdout_expected=False)
            decoded.append(read("dec%s.png" % t))
        check(all(d == read("out1.png") for d in decoded),
              "%s: decoded at --threads 1, 2 and 7, other pixels than the whole decode" % what)
    # Taller than libjpeg's largest side (65500): refused as a whole encode refuses it, no file.
    expect_ok(cpu("resize", "--width", "64", "--height", "70000", "--filter", "bilinear",
                  "sample:", "tall.png"), stdout_expected=False)
    head = read("tall.png")[:29]
    check(head[:16] == PNG_SIGNATURE + b"\0\0\0\x0dIHDR" and
          struct.unpack(">IIBB", head[16:26]) == (64, 70000, 8, 2),
          "tall.png is not a 64x70000 8-bit RGB PNG: %r" % head)
    res = cpu("blur", "-r", "0", "--threads", "2", "tall.png", "tall.jpg")
    check(res.rc == 4 and res.err.startswith(b"gpuimg: tall.jpg: cannot encode JPEG: ") and
          b"65500" in res.err and not os.path.exists(path("tall.jpg")),
          "a 64x70000 JPEG", res)
