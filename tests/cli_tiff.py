# cli_tiff.py: test_cli.py's groups tiff, notiff: the libtiff TIFF codec and a build without it.

import json
import os
import shutil
import struct
import subprocess

from gpuimg_testlib import (
    EXIT_INPUT, Skip, built_with, check, cpu, expect_error, expect_ok, make_pixels, path,
    png_decode, png_encode_8bit, read, run, test, write)
from cli_common import check_no_leftovers, same_image, usage_error
from cli_meta import icc_profile, meta_of, with_meta
from cli_orient import tiff, upright
from tiff_files import (
    BITS, COLORMAP, COMPRESSION, EXTRA, ICC, LENGTH, LONG, ORIENTATION, PHOTOMETRIC, SHORT,
    STRIP_OFFSETS, UNDEFINED, WIDTH, ifd0, tiff_file, with_entry)

EXIF_IFD, GPS_IFD = 0x8769, 0x8825


def converted(out, src, *extra):
    """Runs gpuimg convert quietly; returns the report's output object."""
    expect_ok(cpu("convert", *extra, src, out, "--report", "r.json"), stdout_expected=False)
    return json.loads(read("r.json"))["output"]


def has_libtiff():
    return built_with("libtiff")


def need_libtiff():
    if not has_libtiff():
        raise Skip("this gpuimg was built without libtiff")


def tool(*names):
    """The first of the programs names found on PATH, or None."""
    for name in names:
        found = shutil.which(name)
        if found:
            return found
    return None


def short_of(data, tag):
    """The first value of a SHORT entry of IFD0."""
    e = "<" if data[:2] == b"II" else ">"
    kind, count, field = ifd0(data)[tag]
    at = struct.unpack(e + "I", field)[0] if count > 2 else None
    return struct.unpack(e + "H", field[:2] if at is None else data[at:at + 2])[0]


def decoded(name, *extra):
    expect_ok(cpu("convert", "-q", *extra, name, name + ".png"), stdout_expected=False)
    return png_decode(read(name + ".png"))


@test("tiff")
def round_trip_is_exact():
    need_libtiff()
    for c in (1, 2, 3, 4):
        for w, h in ((1, 1), (33, 17), (300, 257)):
            img = (w, h, c, make_pixels(w, h, c, seed=w + c))
            write("rt.png", png_encode_8bit(*img))
            for comp, code in (("deflate", 8), ("lzw", 5), ("none", 1)):
                expect_ok(cpu("convert", "--compression", comp, "rt.png", "rt.tif"),
                          stdout_expected=False)
                data = read("rt.tif")
                check(data[:4] == b"II*\0", "not a little-endian TIFF: %r" % data[:8])
                check(short_of(data, COMPRESSION) == code,
                      "--compression %s wrote compression %d" % (comp, short_of(data, COMPRESSION)))
                same_image(decoded("rt.tif"), img, "TIFF %s round trip %dx%dx%d" % (comp, w, h, c))
    expect_ok(cpu("convert", "rt.png", "default.tiff"), stdout_expected=False)
    check(short_of(read("default.tiff"), COMPRESSION) == 8, "deflate is the default")


@test("tiff")
def written_here_every_layout():
    """Uncompressed TIFFs written by the test: byte orders, depths, palettes, MinIsWhite,
    strips of a few rows, extra samples."""
    need_libtiff()
    w, h = 13, 7
    for order in ("<", ">"):
        for c, photometric in ((1, 1), (2, 1), (3, 2), (4, 2)):
            px = make_pixels(w, h, c, seed=c)
            extra = [(EXTRA, SHORT, 1, 2)] if c in (2, 4) else []
            write("l.tif", tiff_file(w, h, 8, photometric, c, px, extra, order=order, rows=3))
            same_image(decoded("l.tif"), (w, h, c, px), "8-bit %d channels %s" % (c, order))
    gray = make_pixels(w, h, 1, seed=9)
    write("white.tif", tiff_file(w, h, 8, 0, 1, gray))
    same_image(decoded("white.tif"), (w, h, 1, bytes(255 - v for v in gray)), "MinIsWhite")
    # RGB plus two extra samples: the first is alpha, the second is dropped.
    px5 = make_pixels(w, h, 5, seed=5)
    write("five.tif", tiff_file(w, h, 8, 2, 5, px5, [(EXTRA, SHORT, 2, (2, 0))]))
    want = b"".join(px5[i * 5:i * 5 + 4] for i in range(w * h))
    same_image(decoded("five.tif"), (w, h, 4, want), "RGB with two extra samples")
    # 1, 2 and 4 bits of gray: the full range of the depth onto 0..255.
    for bits in (1, 2, 4):
        top = (1 << bits) - 1
        vals = [(i * 7) % (top + 1) for i in range(w * h)]
        rows = b""
        for y in range(h):
            acc, n = 0, 0
            for x in range(w):
                acc, n = acc << bits | vals[y * w + x], n + bits
            rows += (acc << ((8 - n % 8) % 8)).to_bytes((n + 7) // 8, "big")
        write("b.tif", tiff_file(w, h, bits, 1, 1, rows))
        same_image(decoded("b.tif"), (w, h, 1, bytes(v * 255 // top for v in vals)),
                   "%d-bit gray" % bits)
    # A palette of 16-bit values (the palette's own rule: round(v / 257)).
    cmap = [(i * 4111 + 7) % 65536 for i in range(3 * 256)]
    idx = make_pixels(w, h, 1, seed=11)
    write("p.tif", tiff_file(w, h, 8, 3, 1, idx,
                             [(COLORMAP, SHORT, 768, struct.pack("<768H", *cmap))]))
    rgb = bytes((cmap[k * 256 + i] * 255 + 32895) >> 16 for i in idx for k in range(3))
    same_image(decoded("p.tif"), (w, h, 3, rgb), "8-bit palette")


@test("tiff")
def sixteen_bits_rounded_with_a_notice():
    need_libtiff()
    w, h = 11, 5
    for c, photometric in ((1, 1), (3, 2), (4, 2)):
        vals = [(i * 2731 + 128 * c) % 65536 for i in range(w * h * c)]
        vals[:4] = [0, 128, 129, 65535][:4]  # round(128/257) = 0, round(129/257) = 1
        extra = [(EXTRA, SHORT, 1, 2)] if c == 4 else []
        write("s16.tif", tiff_file(w, h, 16, photometric, c, struct.pack("<%dH" % len(vals), *vals),
                                   extra))
        res = cpu("convert", "s16.tif", "s16.png")
        check(res.rc == 0 and res.err == b"gpuimg: s16.tif: warning: 16-bit samples reduced to "
              b"8 bits (round(v / 257))\n", "the 16-bit notice", res)
        want = bytes((v * 255 + 32895) >> 16 for v in vals)
        same_image(png_decode(read("s16.png")), (w, h, c, want), "16-bit %d channels" % c)
    expect_ok(cpu("convert", "-q", "s16.tif", "quiet.png"), stdout_expected=False)


@test("tiff")
def first_page_with_a_warning():
    need_libtiff()
    px = make_pixels(6, 4, 3, seed=21)
    second = tiff_file(2, 2, 8, 1, 1, bytes(4))[8:]  # any bytes: only the first page is read
    write("pages.tif", tiff_file(6, 4, 8, 2, 3, px, more=second))
    res = cpu("convert", "pages.tif", "pages.png")
    check(res.rc == 0 and res.err == b"gpuimg: pages.tif: warning: multi-page TIFF: only its "
          b"first page is read\n", "the multi-page warning", res)
    same_image(png_decode(read("pages.png")), (6, 4, 3, px), "the first page")


@test("tiff")
def orientation_and_profile():
    need_libtiff()
    stored = (5, 3, 3, make_pixels(5, 3, 3, seed=31))
    profile = icc_profile(2000)
    write("o.tif", tiff_file(5, 3, 8, 2, 3, stored[3], [(ORIENTATION, SHORT, 1, 6),
                                                        (ICC, UNDEFINED, 2000, profile)]))
    same_image(decoded("o.tif"), upright(stored, 6), "TIFF Orientation 6")
    same_image(decoded("o.tif", "--no-autorotate"), stored, "--no-autorotate")
    # The profile goes on to a TIFF (and to a PNG), not with --strip.
    expect_ok(cpu("convert", "o.tif", "o-out.tif"), stdout_expected=False)
    out = read("o-out.tif")
    kind, count, field = ifd0(out)[ICC]
    at = struct.unpack("<I", field)[0]
    check((kind, count, out[at:at + count]) == (UNDEFINED, 2000, profile),
          "the profile carried into the TIFF output")
    check(short_of(out, ORIENTATION) == 1, "the output's Orientation is 1")
    same_image(decoded("o-out.tif"), upright(stored, 6), "the output's pixels")
    expect_ok(cpu("convert", "--strip", "o.tif", "o-strip.tif"), stdout_expected=False)
    check(ICC not in ifd0(read("o-strip.tif")), "--strip wrote the profile")
    # A PNG's profile and EXIF into a TIFF: the profile only.
    png = with_meta(png_encode_8bit(*stored), profile=profile)
    write("m.png", png)
    expect_ok(cpu("convert", "m.png", "m.tif"), stdout_expected=False)
    kind, count, field = ifd0(read("m.tif"))[ICC]
    check(count == 2000, "a PNG's profile into a TIFF")
    gray_profile = icc_profile(600, space=b"GRAY")
    write("g.png", with_meta(png_encode_8bit(4, 4, 3, make_pixels(4, 4, 3, 1)),
                             profile=gray_profile))
    expect_ok(cpu("convert", "g.png", "g.tif"), stdout_expected=False)
    check(ICC not in ifd0(read("g.tif")), "a gray profile on an RGB TIFF")


def directory(entries, at, order):
    """A TIFF directory at offset at: its entries (tag, type, count, value bytes), in that
    order, with the values over 4 bytes after it; the next-IFD pointer 0."""
    head, tail = struct.pack(order + "H", len(entries)), b""
    data_at = at + 2 + 12 * len(entries) + 4
    for tag, kind, count, value in entries:
        if len(value) > 4:
            field = struct.pack(order + "I", data_at + len(tail))
            tail += value + b"\0" * (len(value) & 1)
        else:
            field = value.ljust(4, b"\0")
        head += struct.pack(order + "HHI", tag, kind, count) + field
    return head + struct.pack(order + "I", 0) + tail


def tiff_with_exif(stored, order, exif_at=None):
    """A TIFF of stored pixels whose IFD0 holds Orientation 6, Make, XResolution (a tag EXIF
    does not take) and pointers to an Exif IFD (at exif_at, when given) and a GPS IFD."""
    w, h, c, px = stored
    e = "<" if order == "II" else ">"
    entries = [(ORIENTATION, SHORT, 1, 6), (0x010F, 2, 7, b"gpuimg\0"),
               (0x011A, 5, 1, struct.pack(e + "II", 72, 1)),
               (EXIF_IFD, LONG, 1, 0), (GPS_IFD, LONG, 1, 0)]
    base = tiff_file(w, h, 8, 2, c, px, entries, order=e)
    base += b"\0" * (len(base) & 1)
    exif = directory([(0x9003, 2, 20, b"2026:12:05 10:11:12\0"),
                      (0x927C, UNDEFINED, 9, b"maker\0\1\2\3"),
                      (0xA002, SHORT, 1, struct.pack(e + "H", w)),
                      (0xA003, SHORT, 1, struct.pack(e + "H", h)),
                      (0xA005, LONG, 1, struct.pack(e + "I", 8))], len(base), e)
    gps_at = len(base) + len(exif)
    gps = directory([(0x0001, 2, 2, b"N\0"),
                     (0x0002, 5, 3, struct.pack(e + "6I", 48, 1, 51, 1, 30, 1))], gps_at, e)
    data = base + exif + gps
    return with_pointer(with_pointer(data, EXIF_IFD, len(base) if exif_at is None else exif_at),
                        GPS_IFD, gps_at)


def with_pointer(data, tag, to):
    """The TIFF with IFD0's entry tag (one LONG) pointing to offset to."""
    e = "<" if data[:2] == b"II" else ">"
    at = struct.unpack(e + "I", data[4:8])[0]
    for i in range(struct.unpack(e + "H", data[at:at + 2])[0]):
        pos = at + 2 + 12 * i
        if struct.unpack(e + "H", data[pos:pos + 2])[0] == tag:
            return data[:pos + 8] + struct.pack(e + "I", to) + data[pos + 12:]
    raise AssertionError("no tag %d" % tag)


def exif_directories(block):
    """{"0", "exif", "gps": {tag: (type, count, value bytes)}} of an EXIF block, each value
    read where it lies; every directory and value must lie inside the block."""
    e = "<" if block[:2] == b"II" else ">"
    sizes = {1: 1, 2: 1, 3: 2, 4: 4, 5: 8, 7: 1, 9: 4, 10: 8}

    def read_dir(at):
        out = {}
        n = struct.unpack(e + "H", block[at:at + 2])[0]
        check(at + 2 + 12 * n + 4 <= len(block), "a directory past the block's end")
        for i in range(n):
            tag, kind, count = struct.unpack(e + "HHI", block[at + 2 + 12 * i:at + 10 + 12 * i])
            field = block[at + 10 + 12 * i:at + 14 + 12 * i]
            size = sizes[kind] * count
            if size > 4:
                off = struct.unpack(e + "I", field)[0]
                check(off + size <= len(block), "a value past the block's end")
                field = block[off:off + size]
            out[tag] = (kind, count, field[:size])
        return out

    dirs = {"0": read_dir(struct.unpack(e + "I", block[4:8])[0])}
    for name, tag in (("exif", EXIF_IFD), ("gps", GPS_IFD)):
        if tag in dirs["0"]:
            dirs[name] = read_dir(struct.unpack(e + "I", dirs["0"][tag][2])[0])
    return dirs


@test("tiff")
def exif_directory_carried():
    """A TIFF's Exif and GPS IFDs go on as an EXIF block (IFD0's descriptive tags with them),
    its Orientation and pixel dimensions as for any EXIF; the Interoperability pointer is
    left out."""
    need_libtiff()
    stored = (5, 3, 3, make_pixels(5, 3, 3, seed=35))
    for order in ("II", "MM"):
        e = "<" if order == "II" else ">"
        write("x.tif", tiff_with_exif(stored, order))
        for out, extra, o, size in (("x.png", (), 1, (3, 5)), ("x.jpg", (), 1, (3, 5)),
                                    ("n.png", ("--no-autorotate",), 6, (5, 3))):
            rep = converted(out, "x.tif", *extra)
            check(rep.get("metadata") == ["exif"], "%s: the report says %r" % (out, rep))
            block = meta_of(out)[1]
            check(block[:2] == order.encode(), "%s: the block's byte order" % out)
            d = exif_directories(block)
            check(d["0"] == {ORIENTATION: (SHORT, 1, struct.pack(e + "H", o)),
                             0x010F: (2, 7, b"gpuimg\0"),
                             EXIF_IFD: (LONG, 1, d["0"][EXIF_IFD][2]),
                             GPS_IFD: (LONG, 1, d["0"][GPS_IFD][2])},
                  "%s: IFD0 %r" % (out, d["0"]))
            check(d["exif"] == {0x9003: (2, 20, b"2026:12:05 10:11:12\0"),
                                0x927C: (UNDEFINED, 9, b"maker\0\1\2\3"),
                                0xA002: (SHORT, 1, struct.pack(e + "H", size[0])),
                                0xA003: (SHORT, 1, struct.pack(e + "H", size[1]))},
                  "%s: the Exif IFD %r" % (out, d["exif"]))
            check(d["gps"] == {1: (2, 2, b"N\0"),
                               2: (5, 3, struct.pack(e + "6I", 48, 1, 51, 1, 30, 1))},
                  "%s: the GPS IFD %r" % (out, d["gps"]))
    rep = converted("s.png", "x.tif", "--strip")
    check(meta_of("s.png") == (None, None) and "metadata" not in rep, "--strip kept the EXIF")
    # No Exif IFD: no EXIF block, as before; a broken one: a warning, the pixels still read.
    write("plain.tif", tiff_file(5, 3, 8, 2, 3, stored[3], [(ORIENTATION, SHORT, 1, 6)]))
    converted("plain.png", "plain.tif")
    check(meta_of("plain.png") == (None, None), "a TIFF without an Exif IFD gave an EXIF block")
    write("bad.tif", tiff_with_exif(stored, "II", exif_at=1 << 30))
    res = cpu("convert", "bad.tif", "bad.png")
    check(res.rc == 0 and res.err == b"gpuimg: bad.tif: warning: EXIF directory ignored: its Exif IFD, or a "
          b"value of it, lies or runs past the end of the file\n", "the warning", res)
    check(meta_of("bad.png")[1] is None, "a broken Exif IFD carried")
    same_image(decoded("bad.tif"), upright(stored, 6), "a TIFF with a broken Exif IFD")


@test("tiff")
def orientation_kept_into_tiff():
    """A TIFF output says Orientation 1 when the pixels were turned, and the input's
    Orientation with --no-autorotate (the stored pixels)."""
    need_libtiff()
    stored = (5, 3, 3, make_pixels(5, 3, 3, seed=36))
    write("o6.tif", tiff_file(5, 3, 8, 2, 3, stored[3], [(ORIENTATION, SHORT, 1, 6)]))
    write("o6.png", with_meta(png_encode_8bit(*stored), exif=tiff(6)))
    for src in ("o6.tif", "o6.png"):
        expect_ok(cpu("convert", src, "t.tif"), stdout_expected=False)
        check(short_of(read("t.tif"), ORIENTATION) == 1, src + ": turned, Orientation 1")
        same_image(decoded("t.tif"), upright(stored, 6), src + ": turned pixels")
        expect_ok(cpu("convert", "--no-autorotate", src, "k.tif"), stdout_expected=False)
        check(short_of(read("k.tif"), ORIENTATION) == 6, src + ": --no-autorotate kept 6")
        same_image(decoded("k.tif", "--no-autorotate"), stored, src + ": stored pixels")
        same_image(decoded("k.tif"), upright(stored, 6), src + ": shown turned")


def converted_by(tool_args, name, src, after=()):
    """Runs another encoder: tool_args + [src] + after + [name]."""
    res = subprocess.run(tool_args + [path(src)] + list(after) + [path(name)], capture_output=True)
    check(res.returncode == 0, "%s failed: %r" % (tool_args[0], res.stderr))


@test("tiff")
def read_what_tiffcp_writes():
    need_libtiff()
    tiffcp = tool("tiffcp")
    if not tiffcp:
        raise Skip("no tiffcp (Debian's libtiff-tools) to write TIFF files")
    for c in (1, 2, 3, 4):
        img = (45, 37, c, make_pixels(45, 37, c, seed=40 + c))
        write("src.png", png_encode_8bit(*img))
        expect_ok(cpu("convert", "--compression", "none", "src.png", "src.tif"),
                  stdout_expected=False)
        for opts in (["-c", "lzw"], ["-c", "zip"], ["-c", "packbits", "-r", "5"],
                     ["-t", "-w", "16", "-l", "16"], ["-p", "separate"],
                     ["-t", "-w", "32", "-l", "16", "-p", "separate", "-c", "lzw"]):
            converted_by([tiffcp] + opts, "cp.tif", "src.tif")
            same_image(decoded("cp.tif"), img, "tiffcp %s, %d channels" % (" ".join(opts), c))
    # JPEG-coded YCbCr, lossy: the size and the layout.
    write("src.png", png_encode_8bit(45, 37, 3, make_pixels(45, 37, 3, seed=43)))
    expect_ok(cpu("convert", "--compression", "none", "src.png", "src.tif"),
              stdout_expected=False)
    converted_by([tiffcp, "-c", "jpeg:95"], "jpeg.tif", "src.tif")
    w, h, c, px = decoded("jpeg.tif")
    check((w, h, c) == (45, 37, 3), "a JPEG-compressed TIFF decodes as %dx%dx%d" % (w, h, c))


@test("tiff")
def read_what_imagemagick_writes():
    need_libtiff()
    magick = tool("convert-im6.q16", "magick")
    if not magick:
        raise Skip("no ImageMagick 6 (convert-im6.q16) or 7 (magick) to write TIFF files")
    # Few colours, 8-bit values: ImageMagick's palette holds them exactly (v * 257).
    colours = [bytes(((k * 53) % 256, (k * 101) % 256, (k * 197) % 256)) for k in range(12)]
    px = b"".join(colours[(x * 3 + y * 5) % 12] for y in range(21) for x in range(19))
    write("few.png", png_encode_8bit(19, 21, 3, px))
    for depth in ("4", "8"):
        converted_by([magick], "pal%s.tif" % depth, "few.png",
                     ["-depth", "8", "-type", "Palette", "-colors", "16" if depth == "4" else "200"])
        data = read("pal%s.tif" % depth)
        check(short_of(data, PHOTOMETRIC) == 3, "ImageMagick wrote no palette TIFF")
        same_image(decoded("pal%s.tif" % depth), (19, 21, 3, px), "ImageMagick palette TIFF")
    # Bilevel, CCITT Group 4, MinIsWhite.
    bw = bytes(255 * ((x // 3 + y // 2) % 2) for y in range(21) for x in range(19))
    write("bw.png", png_encode_8bit(19, 21, 1, bw))
    converted_by([magick], "bw.tif", "bw.png", ["-type", "bilevel", "-compress", "Group4"])
    check(short_of(read("bw.tif"), COMPRESSION) == 4, "ImageMagick wrote no Group 4 TIFF")
    same_image(decoded("bw.tif"), (19, 21, 1, bw), "ImageMagick Group 4 TIFF")
    # 16 bits a sample: ImageMagick writes v * 257, which reduces to v exactly.
    rgba = (19, 21, 4, make_pixels(19, 21, 4, seed=50))
    write("rgba.png", png_encode_8bit(*rgba))
    converted_by([magick], "rgba16.tif", "rgba.png", ["-depth", "16", "-compress", "Zip"])
    check(short_of(read("rgba16.tif"), BITS) == 16, "ImageMagick wrote no 16-bit TIFF")
    same_image(decoded("rgba16.tif"), rgba, "ImageMagick 16-bit RGBA TIFF")


@test("tiff")
def hostile_files_refused():
    need_libtiff()
    small = tiff_file(4, 4, 8, 1, 1, bytes(16))
    write("huge.tif", with_entry(with_entry(small, WIDTH, 1, 60000), LENGTH, 1, 60000))
    expect_error(cpu("convert", "huge.tif", "o1.png"), EXIT_INPUT,
                 "huge.tif: image is 60000x60000, over the limit of 268435456 pixels "
                 "(see --max-pixels)")
    good = tiff_file(40, 30, 8, 2, 3, make_pixels(40, 30, 3, seed=3))
    write("cut.tif", good[:len(good) // 2])  # the directory is at the end: gone
    expect_error(cpu("convert", "cut.tif", "o2.png"), EXIT_INPUT,
                 "cut.tif: cannot decode TIFF: damaged header (Can not read TIFF directory count)")
    # The pixels cut short: a strip of 1800 bytes where 30 rows need 3600.
    write("short.tif", tiff_file(40, 30, 8, 2, 3, make_pixels(40, 30, 3, seed=3)[:1800],
                                 ifd_first=True))
    expect_error(cpu("convert", "short.tif", "o3.png"), EXIT_INPUT,
                 "short.tif: cannot decode TIFF: truncated or damaged image data (Read error at "
                 "scanline 4294967295; got 1800 bytes, expected 3600)")
    # A StripOffsets of a billion entries, in a file of a few hundred bytes.
    write("strips.tif", with_entry(good, STRIP_OFFSETS, 10 ** 9, 8))
    expect_error(cpu("convert", "strips.tif", "o4.png"), EXIT_INPUT,
                 "strips.tif: cannot decode TIFF: truncated or damaged image data (Read error at "
                 "scanline 4294967295; got 0 bytes, expected 3600)")
    for name in ("o1.png", "o2.png", "o3.png", "o4.png"):
        check(not os.path.exists(path(name)), "%s was written" % name)
    check_no_leftovers()


@test("tiff")
def batch_directory_and_format():
    need_libtiff()
    os.makedirs(path("in"), exist_ok=True)
    img = (9, 8, 3, make_pixels(9, 8, 3, seed=61))
    write("in/a.png", png_encode_8bit(*img))
    expect_ok(cpu("convert", "-q", "-o", "tifs", "--format", "tiff", "in"), stdout_expected=False)
    check(os.listdir(path("tifs")) == ["a.tif"], "--format tiff wrote %r" % os.listdir(path("tifs")))
    expect_ok(cpu("convert", "-q", "-o", "back", "--format", "png", "tifs"), stdout_expected=False)
    same_image(png_decode(read("back/a.png")), img, "a directory's TIFF read back")
    # Recognised by content: a TIFF named .png is read as TIFF.
    write("really-tiff.png", read("tifs/a.tif"))
    same_image(decoded("really-tiff.png"), img, "a TIFF named .png")


@test("tiff")
def compression_option_checked():
    need_libtiff()
    usage_error(["convert", "--compression", "jpeg", "a.png", "b.tif"],
                "--compression: invalid value 'jpeg' (expected deflate, lzw or none)")
    check(b"tiff codecs: libtiff;" in run("-V").out, "-V must list libtiff")


@test("notiff")
def tiff_not_built():
    if has_libtiff():
        raise Skip("this gpuimg has libtiff (configure with -Dtiff=disabled to test this)")
    check(b"tiff codecs: none;" in run("-V").out, "-V must say no TIFF codec")
    write("n.png", png_encode_8bit(2, 2, 3, make_pixels(2, 2, 3, seed=8)))
    usage_error(["convert", "n.png", "n.tif"], "n.tif: gpuimg was built without TIFF")
    usage_error(["convert", "--format", "tiff", "-o", "d", "n.png"],
                "--format: gpuimg was built without TIFF")
    write("n.tif", tiff_file(2, 2, 8, 1, 1, bytes(4)))
    expect_error(cpu("convert", "n.tif", "n-out.png"), EXIT_INPUT,
                 "n.tif: unsupported format (gpuimg was built without TIFF)")
