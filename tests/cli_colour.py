# cli_colour.py: test_cli.py's groups colour, nocolour: --to-srgb (lcms2) and a build without it.

import struct
import zlib

from gpuimg_testlib import (
    Skip, built_with, check, cpu, expect_ok, make_pixels, png_chunks, png_decode,
    png_encode_8bit, read, test, write)
from cli_common import same_image, usage_error
from cli_meta import with_meta

# Adobe RGB (1998): its colorants adapted to D50 (as an ICC profile stores them) and its gamma,
# 563/256 as a curv of one u8Fixed8Number.
ADOBE = ((0.6097, 0.3111, 0.0195), (0.2053, 0.6257, 0.0609), (0.1492, 0.0632, 0.7446))
ADOBE_GAMMA = 563 / 256
# sRGB's colorants adapted to D50, as lcms2's built-in sRGB has them.
SRGB = ((0.4361, 0.2225, 0.0139), (0.3851, 0.7169, 0.0971), (0.1431, 0.0606, 0.7141))


def s15(v):
    return struct.pack(">i", int(round(v * 65536)))


def matrix_profile(colorants, gamma):
    """A version 2 RGB display profile: colorants (rXYZ, gXYZ, bXYZ), one gamma for the
    three curves, a D50 white point."""
    def xyz(v):
        return b"XYZ " + bytes(4) + b"".join(s15(c) for c in v)

    curve = b"curv" + bytes(4) + struct.pack(">IH", 1, int(round(gamma * 256))) + bytes(2)
    desc = b"desc" + bytes(4) + struct.pack(">I", 5) + b"test\0" + bytes(12) + bytes(67)
    tags = [(b"desc", desc), (b"wtpt", xyz((0.9642, 1.0, 0.8249))), (b"rXYZ", xyz(colorants[0])),
            (b"gXYZ", xyz(colorants[1])), (b"bXYZ", xyz(colorants[2])), (b"rTRC", curve),
            (b"gTRC", curve), (b"bTRC", curve)]
    table, data = struct.pack(">I", len(tags)), b""
    at = 128 + 4 + 12 * len(tags)
    for sig, body in tags:
        body += bytes(-len(body) % 4)
        table += sig + struct.pack(">II", at + len(data), len(body))
        data += body
    size = at + len(data)
    head = (struct.pack(">I", size) + b"lcms" + b"\x02\x10\0\0" + b"mntrRGB XYZ " + bytes(12) +
            b"acsp" + bytes(24) + bytes(4) + s15(0.9642) + s15(1.0) + s15(0.8249) + bytes(48))
    return head + table + data


def inverse(m):
    (a, b, c), (d, e, f), (g, h, i) = m
    det = a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g)
    return ((e * i - f * h) / det, (c * h - b * i) / det, (b * f - c * e) / det), \
           ((f * g - d * i) / det, (a * i - c * g) / det, (c * d - a * f) / det), \
           ((d * h - e * g) / det, (b * g - a * h) / det, (a * e - b * d) / det)


def srgb_encode(v):
    v = min(max(v, 0.0), 1.0)
    return 12.92 * v if v <= 0.0031308 else 1.055 * v ** (1 / 2.4) - 0.055


def adobe_to_srgb(rgb):
    """The colorimetric conversion: Adobe RGB's curve and colorants to XYZ (D50), then sRGB's
    inverse matrix and curve (lcms2 differs by its interpolation and rounding only)."""
    lin = [(v / 255) ** ADOBE_GAMMA for v in rgb]
    xyz = [sum(ADOBE[k][j] * lin[k] for k in range(3)) for j in range(3)]
    to_srgb = inverse(tuple(tuple(SRGB[k][j] for k in range(3)) for j in range(3)))
    out = [sum(to_srgb[j][k] * xyz[k] for k in range(3)) for j in range(3)]
    return bytes(int(round(255 * srgb_encode(v))) for v in out)


def profile_of(png):
    """The ICC profile of a PNG's iCCP chunk, or None."""
    for at, n, kind in png_chunks(png):
        if kind == b"iCCP":
            body = png[at + 8:at + 8 + n]
            return zlib.decompress(body[body.index(b"\0") + 2:])
    return None


def need_lcms():
    if not built_with("lcms2"):
        raise Skip("this gpuimg was built without lcms2")


@test("colour")
def adobe_rgb_converted_to_srgb():
    need_lcms()
    w, h = 16, 8
    px = bytes(((x * 16 + 8) if k == 0 else (y * 32 + 16) if k == 1 else 200 - x * 10)
               for y in range(h) for x in range(w) for k in range(3))
    write("adobe.png", with_meta(png_encode_8bit(w, h, 3, px),
                                 profile=matrix_profile(ADOBE, ADOBE_GAMMA), name=b"Adobe RGB"))
    expect_ok(cpu("convert", "--to-srgb", "adobe.png", "srgb.png"), stdout_expected=False)
    out = read("srgb.png")
    got = png_decode(out)
    check(got[:3] == (w, h, 3), "converted image is %dx%dx%d" % got[:3])
    worst = max(abs(a - b) for i in range(w * h) for a, b in
                zip(got[3][3 * i:3 * i + 3], adobe_to_srgb(px[3 * i:3 * i + 3])))
    check(worst <= 2, "--to-srgb is %d away from the colorimetric conversion" % worst)
    check(got[3] != px, "the pixels were not converted")
    profile = profile_of(out)
    check(profile is not None and profile[16:20] == b"RGB " and
          "sRGB".encode("utf-16-be") in profile, "the output is not tagged with lcms2's sRGB")
    # Its creation date is fixed (2000-01-01 00:00:00), not the time of the run: the same input
    # gives the same bytes at any time, on either backend.
    check(profile[24:36] == bytes([7, 208, 0, 1, 0, 1]) + bytes(6),
          "the sRGB profile's date is %s" % profile[24:36].hex())
    # Again on its own output (tagged with lcms2's sRGB): nothing changes.
    expect_ok(cpu("convert", "--to-srgb", "srgb.png", "again.png"), stdout_expected=False)
    same_image(png_decode(read("again.png")), got, "an sRGB input converted again")
    # With --strip: converted, then no profile written.
    expect_ok(cpu("convert", "--to-srgb", "--strip", "adobe.png", "bare.png"),
              stdout_expected=False)
    check(profile_of(read("bare.png")) is None, "--strip wrote a profile")
    same_image(png_decode(read("bare.png")), got, "--to-srgb --strip")
    # Without --to-srgb: the pixels and the profile as they are.
    expect_ok(cpu("convert", "adobe.png", "kept.png"), stdout_expected=False)
    same_image(png_decode(read("kept.png")), (w, h, 3, px), "no --to-srgb")


@test("colour")
def untagged_and_gray_left_alone():
    need_lcms()
    img = (9, 7, 4, make_pixels(9, 7, 4, seed=91))
    write("plain.png", png_encode_8bit(*img))
    expect_ok(cpu("convert", "--to-srgb", "plain.png", "plain-out.png"), stdout_expected=False)
    same_image(png_decode(read("plain-out.png")), img, "an input without a profile")
    gray = (9, 7, 1, make_pixels(9, 7, 1, seed=92))
    write("g.png", png_encode_8bit(*gray))
    expect_ok(cpu("convert", "--to-srgb", "g.png", "g-out.png"), stdout_expected=False)
    same_image(png_decode(read("g-out.png")), gray, "a gray input")
    # RGBA: the alpha copied.
    rgba = (6, 5, 4, make_pixels(6, 5, 4, seed=93))
    write("a.png", with_meta(png_encode_8bit(*rgba), profile=matrix_profile(ADOBE, ADOBE_GAMMA)))
    expect_ok(cpu("convert", "--to-srgb", "a.png", "a-out.png"), stdout_expected=False)
    got = png_decode(read("a-out.png"))
    check(got[:3] == (6, 5, 4) and got[3][3::4] == rgba[3][3::4], "the alpha was changed")


@test("nocolour")
def to_srgb_not_built():
    if built_with("lcms2"):
        raise Skip("this gpuimg has lcms2 (configure with -Dlcms=disabled to test this)")
    usage_error(["convert", "--to-srgb", "a.png", "b.png"],
                "--to-srgb: gpuimg was built without lcms2")
