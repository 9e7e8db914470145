# cli_tiff.py: test_cli.py's groups tiff, notiff: the libtiff TIFF codec and a build without it.

import os
import shutil
import struct
import subprocess

from gpuimg_testlib import (
    EXIT_INPUT, Skip, built_with, check, cpu, expect_error, expect_ok, make_pixels, path,
    png_decode, png_encode_8bit, read, run, test, write)
from cli_common import check_no_leftovers, same_image, usage_error
from cli_meta import icc_profile, with_meta
from cli_orient import upright
from tiff_files import (
    BITS, COLORMAP, COMPRESSION, EXTRA, ICC, LENGTH, LONG, ORIENTATION, PHOTOMETRIC, SHORT,
    STRIP_OFFSETS, UNDEFINED, WIDTH, ifd0, tiff_file, with_entry)

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
