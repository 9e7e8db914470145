# cli_webp.py: test_cli.py's groups webp, nowebp: the libwebp WebP codec and a build without it.

import math
import os
import struct

from gpuimg_testlib import (
    EXIT_INPUT, EXIT_USAGE, Skip, built_with, check, cpu, expect_error, expect_ok,
    make_pixels, path, png_encode_8bit, read, run, test, write)
from cli_common import check_no_leftovers, read_png, same_image, usage_error
from cli_meta import icc_profile, with_meta
from cli_orient import tiff, upright


def has_libwebp():
    return built_with("libwebp")


def need_libwebp():
    if not has_libwebp():
        raise Skip("this gpuimg was built without libwebp")


def smooth_pixels(w, h, c):
    """A smooth image (gradients): what lossy coding is meant for."""
    px = bytearray()
    for y in range(h):
        for x in range(w):
            v = (x * 255 // (w - 1), y * 255 // (h - 1), (x + y) * 255 // (w + h - 2), 200)
            px += bytes(v[:3] if c >= 3 else v[:1]) + (bytes((v[3],)) if c in (2, 4) else b"")
    return bytes(px)


def webp_of(name, pixels, w, h, c, *flags):
    """Writes pixels as name.png, converts it to name.webp with gpuimg; returns its bytes."""
    write(name + ".png", png_encode_8bit(w, h, c, pixels))
    expect_ok(cpu("blur", "-r", "0", name + ".png", name + ".webp", *flags))
    data = read(name + ".webp")
    check(data[:4] == b"RIFF" and data[8:12] == b"WEBP", "not a WebP file: %r" % data[:16])
    return data


def decode(name, out):
    """gpuimg's decode of name, written as the PNG out: (w, h, c, pixels)."""
    expect_ok(cpu("blur", "-r", "0", name, out))
    return read_png(path(out))


def psnr(a, b):
    mse = sum((x - y) ** 2 for x, y in zip(a, b)) / len(a)
    return 99.0 if mse == 0 else 10 * math.log10(255 * 255 / mse)


@test("webp")
def lossless_round_trip_is_exact():
    need_libwebp()
    for c in (3, 4):
        px = make_pixels(37, 23, c, seed=c)
        webp_of("ll%d" % c, px, 37, 23, c, "--lossless")
        check(decode("ll%d.webp" % c, "ll%d-back.png" % c) == (37, 23, c, px),
              "lossless WebP round trip of %d channels differs" % c)


@test("webp")
def file_over_64_kib_read_whole():
    # The input is read in 64 KiB chunks while its first bytes may begin an image.
    need_libwebp()
    px = make_pixels(200, 150, 3, seed=12)
    data = webp_of("big", px, 200, 150, 3, "--lossless")
    check(len(data) > 65536, "the WebP must be over 64 KiB (%d bytes)" % len(data))
    check(decode("big.webp", "big-back.png") == (200, 150, 3, px), "large WebP differs")


@test("webp")
def lossless_keeps_transparent_pixels():
    need_libwebp()
    px = bytearray(make_pixels(16, 16, 4, seed=9))
    for i in range(3, len(px), 8):
        px[i] = 0  # fully transparent, with colour that must survive
    webp_of("clear", bytes(px), 16, 16, 4, "--lossless")
    check(decode("clear.webp", "clear-back.png") == (16, 16, 4, bytes(px)),
          "lossless WebP changed transparent pixels")


# PSNR of a 64x48 gradient coded lossy at the default quality (90): measured 41.9 dB (RGB).
WEBP_MIN_PSNR = 36.0


@test("webp")
def lossy_within_tolerance():
    need_libwebp()
    for c in (3, 4):
        px = smooth_pixels(64, 48, c)
        lossy = webp_of("ly%d" % c, px, 64, 48, c)
        w, h, got_c, got = decode("ly%d.webp" % c, "ly%d-back.png" % c)
        check((w, h, got_c) == (64, 48, c), "lossy WebP decoded as %dx%dx%d" % (w, h, got_c))
        check(psnr(px, got) >= WEBP_MIN_PSNR, "lossy WebP PSNR %.1f dB" % psnr(px, got))
        small = webp_of("lq%d" % c, px, 64, 48, c, "--quality", "10")
        check(len(small) < len(lossy), "--quality 10 must give a smaller file than 90")


@test("webp")
def gray_input_written_as_rgb():
    need_libwebp()
    px = make_pixels(20, 10, 1, seed=3)
    webp_of("g", px, 20, 10, 1, "--lossless")
    rgb = bytes(v for p in px for v in (p, p, p))
    check(decode("g.webp", "g-back.png") == (20, 10, 3, rgb), "gray WebP round trip differs")
    pa = make_pixels(20, 10, 2, seed=4)
    webp_of("ga", pa, 20, 10, 2, "--lossless")
    rgba = bytes(v for i in range(0, len(pa), 2) for v in (pa[i], pa[i], pa[i], pa[i + 1]))
    check(decode("ga.webp", "ga-back.png") == (20, 10, 4, rgba), "gray+alpha round trip differs")


@test("webp")
def recognised_by_content_not_name():
    need_libwebp()
    px = make_pixels(9, 7, 3, seed=5)
    data = webp_of("named", px, 9, 7, 3, "--lossless")
    write("really-webp.png", data)
    check(decode("really-webp.png", "named-back.png") == (9, 7, 3, px),
          "a WebP named .png must decode as WebP")


@test("webp")
def format_option_and_batch_extension():
    need_libwebp()
    write("b.png", png_encode_8bit(5, 4, 3, make_pixels(5, 4, 3, seed=6)))
    res = cpu("blur", "-r", "0", "--format", "webp", "-o", "out", "b.png")
    check(res.rc == 0, "expected exit 0", res)
    check(read("out/b.webp")[8:12] == b"WEBP", "--format webp must write out/b.webp")


@test("webp")
def truncated_file_refused():
    need_libwebp()
    data = webp_of("t", make_pixels(40, 30, 3, seed=7), 40, 30, 3, "--lossless")
    write("short-body.webp", data[:len(data) // 2])
    expect_error(cpu("blur", "-r", "0", "short-body.webp", "o1.png"), EXIT_INPUT,
                 "short-body.webp: cannot decode WebP: truncated or damaged image data")
    write("short-head.webp", data[:20])
    expect_error(cpu("blur", "-r", "0", "short-head.webp", "o2.png"), EXIT_INPUT,
                 "short-head.webp: cannot decode WebP: truncated file")
    check_no_leftovers()


def riff(chunks):
    return b"RIFF" + struct.pack("<I", 4 + len(chunks)) + b"WEBP" + chunks


def vp8x(w, h, flags=0):
    """An extended header (VP8X) declaring a w x h canvas, and no image after it."""
    body = bytes((flags, 0, 0, 0)) + (w - 1).to_bytes(3, "little") + (h - 1).to_bytes(3, "little")
    return riff(b"VP8X" + struct.pack("<I", len(body)) + body)


def vp8l_header(w, h):
    """A lossless chunk's header declaring w x h (14 bits a side), its data missing."""
    bits = (w - 1) | (h - 1) << 14
    n = 1 << 20  # what the chunk and the RIFF header say follows
    return b"RIFF" + struct.pack("<I", 12 + n) + b"WEBP" + b"VP8L" + struct.pack("<I", n) + \
        b"\x2f" + struct.pack("<I", bits)


@test("webp")
def huge_header_refused_before_allocation():
    need_libwebp()
    write("huge.webp", vp8x(60000, 60000))
    expect_error(cpu("blur", "-r", "0", "huge.webp", "o3.png"), EXIT_INPUT,
                 "huge.webp: image is 60000x60000, over the limit of 268435456 pixels "
                 "(see --max-pixels)")
    write("big.webp", vp8l_header(16000, 16000))
    expect_error(cpu("blur", "-r", "0", "big.webp", "o4.png", "--max-pixels", "1000000"),
                 EXIT_INPUT, "big.webp: image is 16000x16000, over the limit of 1000000 pixels "
                 "(see --max-pixels)")
    check_no_leftovers()


def chunk(fourcc, payload):
    return fourcc + struct.pack("<I", len(payload)) + payload + (b"\0" if len(payload) & 1 else b"")


def le24(v):
    return v.to_bytes(3, "little")


def animation(w, h, frames, alpha=True):
    """An animated WebP of a w x h canvas: frames are (x, y, VP8L chunk of a lossless WebP),
    x and y even, each shown 100 ms, drawn over what was there."""
    anmf = b""
    for x, y, vp8l in frames:
        bits = struct.unpack("<I", vp8l[9:13])[0]
        fw, fh = (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
        anmf += chunk(b"ANMF", le24(x // 2) + le24(y // 2) + le24(fw - 1) + le24(fh - 1) +
                      le24(100) + b"\0" + vp8l)
    head = chunk(b"VP8X", bytes((0x02 | (0x10 if alpha else 0), 0, 0, 0)) + le24(w - 1) +
                 le24(h - 1))
    body = head + chunk(b"ANIM", bytes(4) + struct.pack("<H", 0)) + anmf
    return b"RIFF" + struct.pack("<I", 4 + len(body)) + b"WEBP" + body


@test("webp")
def animation_first_frame_with_a_warning():
    need_libwebp()
    first = make_pixels(10, 6, 4, seed=31)
    webp_of("f1", first, 10, 6, 4, "--lossless")
    webp_of("f2", make_pixels(4, 4, 4, seed=32), 4, 4, 4, "--lossless")  # lossless: exact
    write("anim.webp", animation(10, 6, [(0, 0, read("f1.webp")[12:]),
                                         (2, 2, read("f2.webp")[12:])]))
    res = cpu("convert", "anim.webp", "anim.png")
    check(res.rc == 0 and res.err == b"gpuimg: anim.webp: warning: animated WebP: only its "
          b"first frame is read\n", "the animation warning", res)
    check(read_png(path("anim.png")) == (10, 6, 4, first), "the first frame's pixels")
    # A first frame smaller than the canvas: transparent black around it.
    second = make_pixels(4, 4, 4, seed=32)
    write("small.webp", animation(10, 6, [(2, 0, read("f2.webp")[12:])]))
    expect_ok(cpu("convert", "-q", "small.webp", "small.png"), stdout_expected=False)
    want = bytearray(10 * 6 * 4)
    for y in range(4):
        want[(y * 10 + 2) * 4:(y * 10 + 6) * 4] = second[y * 16:(y + 1) * 16]
    check(read_png(path("small.png")) == (10, 6, 4, bytes(want)), "a small first frame")
    # An animation whose frames are missing: refused.
    write("empty.webp", vp8x(8, 8, flags=0x02))
    expect_error(cpu("convert", "empty.webp", "o5.png"), EXIT_INPUT,
                 "empty.webp: cannot decode WebP: truncated or damaged image data")


def riff_chunks(data):
    """[(fourcc, payload)] of a WebP's chunks."""
    out, pos = [], 12
    while pos + 8 <= len(data):
        n = struct.unpack("<I", data[pos + 4:pos + 8])[0]
        out.append((data[pos:pos + 4], data[pos + 8:pos + 8 + n]))
        pos += 8 + n + (n & 1)
    return out


@test("webp")
def profile_and_exif_in_and_out():
    need_libwebp()
    stored = (7, 5, 3, make_pixels(7, 5, 3, seed=41))
    profile = icc_profile(1500)
    write("m.png", with_meta(png_encode_8bit(*stored), profile=profile, exif=tiff(6)))
    for flags, kinds in (((), [b"VP8X", b"ICCP", b"VP8 ", b"EXIF"]),
                         (("--lossless",), [b"VP8X", b"ICCP", b"VP8L", b"EXIF"])):
        expect_ok(cpu("convert", *flags, "m.png", "m.webp"), stdout_expected=False)
        chunks = riff_chunks(read("m.webp"))
        check([k for k, _ in chunks] == kinds, "the chunks written: %r" % [k for k, _ in chunks])
        vp8x, icc, exif = chunks[0][1], chunks[1][1], chunks[3][1]
        check(vp8x[0] == 0x28 and vp8x[4:10] == bytes((4, 0, 0, 6, 0, 0)),
              "VP8X flags and canvas: %r" % vp8x)
        check(icc == profile, "the WebP's ICC profile")
        check(exif == tiff(1), "the WebP's EXIF (Orientation 1 once turned): %r" % exif)
    same_image(decode("m.webp", "m-back.png"), upright(stored, 6), "WebP with metadata")
    back = read("m-back.png")
    check(b"iCCP" in back and b"eXIf" in back, "the WebP's metadata goes on to a PNG")
    # A WebP's own EXIF Orientation is applied; --strip writes a simple WebP.
    expect_ok(cpu("convert", "--lossless", "--no-autorotate", "m.png", "raw.webp"),
              stdout_expected=False)
    check(riff_chunks(read("raw.webp"))[3][1] == tiff(6), "--no-autorotate keeps Orientation 6")
    same_image(decode("raw.webp", "raw-back.png"), upright(stored, 6), "a WebP's Orientation 6")
    expect_ok(cpu("convert", "--strip", "m.png", "s.webp"), stdout_expected=False)
    check([k for k, _ in riff_chunks(read("s.webp"))] == [b"VP8 "], "--strip wrote metadata")
    # RGBA: libwebp's own VP8X (ALPH, VP8) gains the chunks.
    rgba = (6, 4, 4, make_pixels(6, 4, 4, seed=42))
    write("a.png", with_meta(png_encode_8bit(*rgba), profile=profile))
    expect_ok(cpu("convert", "a.png", "a.webp"), stdout_expected=False)
    kinds = [k for k, _ in riff_chunks(read("a.webp"))]
    check(kinds == [b"VP8X", b"ICCP", b"ALPH", b"VP8 "], "lossy RGBA chunks: %r" % kinds)
    check(riff_chunks(read("a.webp"))[0][1][0] == 0x30, "VP8X flags: ICC and alpha")


@test("webp")
def version_lists_libwebp():
    need_libwebp()
    check(b"webp codecs: libwebp;" in run("-V").out, "-V must list libwebp")


@test("nowebp")
def webp_not_built():
    if has_libwebp():
        raise Skip("this gpuimg has libwebp (configure with -Dwebp=disabled to test this)")
    check(b"webp codecs: none;" in run("-V").out, "-V must say no WebP codec")
    write("n.png", png_encode_8bit(2, 2, 3, make_pixels(2, 2, 3, seed=8)))
    usage_error(["blur", "-r", "0", "n.png", "n.webp"], "n.webp: gpuimg was built without WebP")
    usage_error(["blur", "-r", "0", "--format", "webp", "-o", "d", "n.png"],
                "--format: gpuimg was built without WebP")


@test("webp")
def decoded_under_every_codec_choice():
    # --codec names a PNG or JPEG codec; WebP still goes to libwebp, the one that reads it.
    need_libwebp()
    px = make_pixels(6, 5, 4, seed=10)
    webp_of("any", px, 6, 5, 4, "--lossless")
    for choice in ("stb", "fastpng"):
        expect_ok(cpu("blur", "-r", "0", "--codec", choice, "any.webp", "any-%s.png" % choice))
        check(read_png(path("any-%s.png" % choice)) == (6, 5, 4, px),
              "--codec %s: WebP decoded wrong" % choice)


@test("webp")
def directory_input_takes_webp():
    need_libwebp()
    px = make_pixels(4, 3, 3, seed=11)
    data = webp_of("d", px, 4, 3, 3, "--lossless")
    os.makedirs(path("photos"), exist_ok=True)
    write("photos/x.webp", data)
    write("photos/y.bin", data)  # named anything: recognised by content
    res = cpu("blur", "-r", "0", "-o", "dout", "--format", "png", "photos")
    check(res.rc == 0, "expected exit 0", res)
    for name in ("x", "y"):
        check(os.path.exists(path("dout", name + ".png")), "photos/%s: not converted" % name, res)
        check(read_png(path("dout", name + ".png")) == (4, 3, 3, px),
              "photos/%s: WebP in a directory not converted" % name)
