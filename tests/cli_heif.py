# cli_heif.py: test_cli.py's groups heif, noheif: the libheif codec (HEIC and AVIF in, AVIF
# out) and a build without it.

import json
import math
import os
import shutil
import struct
import subprocess

from gpuimg_testlib import (
    EXIT_INPUT, Skip, built_with, check, cpu, expect_error, expect_ok, make_pixels, path,
    png_chunks, png_decode, png_encode_8bit, read, run, test, write)
from cli_common import check_no_leftovers, make_jpeg, range_msg, same_image, usage_error
from cli_meta import icc_profile, png_meta, with_meta
from cli_orient import jpeg_with, tiff, upright

# PSNR of the smooth 64x48 image below as AVIF at the default quality (90): 45.6 dB (RGB)
# with libheif 1.15 and libaom 3.6.
AVIF_MIN_PSNR = 36.0


def has_libheif():
    return built_with("libheif")


def need_libheif():
    if not has_libheif():
        raise Skip("this gpuimg was built without libheif")


def heif_tool(name):
    """heif-enc or heif-convert (Debian's libheif-examples), or a skip."""
    found = shutil.which(name)
    if not found:
        raise Skip("no %s (Debian's libheif-examples) to make or read HEIF files" % name)
    return found


def smooth(w, h, c):
    px = bytearray()
    for y in range(h):
        for x in range(w):
            v = (x * 255 // (w - 1), y * 255 // (h - 1), (x + y) * 255 // (w + h - 2), 180)
            px += bytes(v[:3] if c >= 3 else v[:1]) + (bytes((v[3],)) if c in (2, 4) else b"")
    return bytes(px)


def psnr(a, b):
    mse = sum((x - y) ** 2 for x, y in zip(a, b)) / len(a)
    return 99.0 if mse == 0 else 10 * math.log10(255 * 255 / mse)


def decoded(name, *extra):
    expect_ok(cpu("convert", "-q", *extra, name, name + ".png"), stdout_expected=False)
    return png_decode(read(name + ".png"))


@test("heif")
def avif_round_trip_within_tolerance():
    need_libheif()
    for c in (1, 3, 4):
        px = smooth(64, 48, c)
        write("s%d.png" % c, png_encode_8bit(64, 48, c, px))
        expect_ok(cpu("convert", "s%d.png" % c, "s%d.avif" % c), stdout_expected=False)
        data = read("s%d.avif" % c)
        check(data[4:12] == b"ftypavif", "not an AVIF file: %r" % data[:16])
        w, h, got_c, got = decoded("s%d.avif" % c)
        want_c = 4 if c == 4 else 3  # AVIF is written as RGB: gray is spread
        want = px if c >= 3 else bytes(v for p in px for v in (p, p, p))
        check((w, h, got_c) == (64, 48, want_c), "AVIF decoded as %dx%dx%d" % (w, h, got_c))
        check(psnr(want, got) >= AVIF_MIN_PSNR, "AVIF PSNR %.1f dB" % psnr(want, got))
    expect_ok(cpu("convert", "--quality", "20", "s3.png", "low.avif"), stdout_expected=False)
    check(len(read("low.avif")) < len(read("s3.avif")), "--quality 20 must give a smaller file")


def reference(name):
    """heif-convert's decode of name (libheif's own view: its transformations applied)."""
    res = subprocess.run([heif_tool("heif-convert"), path(name), path(name + ".ref.png")],
                         capture_output=True)
    check(res.returncode == 0, "heif-convert failed: %r" % res.stderr)
    return png_decode(read(name + ".ref.png"))


@test("heif")
def read_what_heif_enc_writes():
    need_libheif()
    enc = heif_tool("heif-enc")
    px = make_pixels(40, 24, 3, seed=71)
    write("src.png", png_encode_8bit(40, 24, 3, px))
    for name, flags in (("enc.heic", []), ("enc.avif", ["-A"]), ("alpha.heic", [])):
        src = "src.png"
        if name == "alpha.heic":
            write("alpha.png", png_encode_8bit(40, 24, 4, make_pixels(40, 24, 4, seed=72)))
            src = "alpha.png"
        res = subprocess.run([enc, "-q", "90"] + flags + [path(src), "-o", path(name)],
                             capture_output=True)
        check(res.returncode == 0, "heif-enc failed: %r" % res.stderr)
        same_image(decoded(name), reference(name), "%s against heif-convert" % name)
    # Recognised by content: a HEIC named .png.
    write("heic-named.png", read("enc.heic"))
    same_image(decoded("heic-named.png"), reference("enc.heic"), "a HEIC named .png")


@test("heif")
def exif_carried_with_orientation_one():
    """A HEIF's pixels are upright as libheif gives them (irot, imir): its EXIF Orientation
    is informative only, carried as 1."""
    need_libheif()
    enc = heif_tool("heif-enc")
    make_jpeg()
    write("o6.jpg", jpeg_with(read("smooth.jpg"), tiff(6)))
    res = subprocess.run([enc, "-q", "90", path("o6.jpg"), "-o", path("o6.heic")],
                         capture_output=True)
    check(res.returncode == 0, "heif-enc failed: %r" % res.stderr)
    got = decoded("o6.heic")
    same_image(got, reference("o6.heic"), "o6.heic against heif-convert")
    out = read("o6.heic.png")
    exif = [out[at + 8:at + 8 + n] for at, n, kind in png_chunks(out) if kind == b"eXIf"]
    check(len(exif) == 1 and b"\x12\x01\x03\x00\x01\x00\x00\x00\x01\x00" in exif[0],
          "the HEIC's EXIF carried with Orientation 1: %r" % exif)
    out = decoded("o6.heic", "--strip")
    check(all(kind != b"eXIf" for _, _, kind in png_chunks(read("o6.heic.png"))),
          "--strip kept the EXIF")


@test("heif")
def profile_of_heif_enc_files_read_exactly():
    """heif-enc puts a PNG's iCCP into its HEIC or AVIF (a colr box of type prof)."""
    need_libheif()
    enc = heif_tool("heif-enc")
    profile = icc_profile(1500)
    profile = profile[:128] + bytes(4) + profile[132:]  # no tags: what libpng reads quietly
    write("p.png", with_meta(png_encode_8bit(40, 24, 3, smooth(40, 24, 3)), profile=profile))
    for name, flags in (("p.heic", []), ("p.avif", ["-A"])):
        res = subprocess.run([enc, "-q", "90"] + flags + [path("p.png"), "-o", path(name)],
                             capture_output=True)
        check(res.returncode == 0, "heif-enc failed: %r" % res.stderr)
        check(colr_profile(read(name)) == profile, "heif-enc left the profile out of " + name)
        decoded(name)
        check(png_meta(read(name + ".png"))[0] == profile, name + ": the profile read back")
        rep = converted_report("--strip", name, name + ".png")
        check(png_meta(read(name + ".png"))[0] is None and "metadata" not in rep,
              name + ": --strip kept the profile")


def colr_profile(data):
    """The profile of an AVIF's colr box of type prof, as the file holds it; None if none."""
    at = data.find(b"colrprof")
    if at < 4:
        return None
    return data[at + 8:at - 4 + struct.unpack(">I", data[at - 4:at])[0]]


def converted_report(*args):
    expect_ok(cpu("convert", *args, "--report", "r.json"), stdout_expected=False)
    return json.loads(read("r.json"))["output"]


@test("heif")
def avif_output_carries_profile_and_exif():
    """The profile as a colr box of type prof, the EXIF as an Exif item (libheif's offset of
    its TIFF header, 0, before it); both read back exactly; --strip writes neither."""
    need_libheif()
    stored = (64, 48, 3, smooth(64, 48, 3))
    profile = icc_profile(1500)
    write("m.png", with_meta(png_encode_8bit(*stored), profile=profile, exif=tiff(6)))
    rep = converted_report("m.png", "m.avif")
    check(rep.get("metadata") == ["icc", "exif"], "the report says %r" % rep)
    data = read("m.avif")
    check(colr_profile(data) == profile, "the AVIF's colr profile differs")
    check(bytes(4) + tiff(1) in data, "the AVIF's Exif item (Orientation 1 once turned)")
    w, h, c, px = decoded("m.avif")
    check(png_meta(read("m.avif.png"))[::2] == (profile, tiff(1)),
          "the profile and EXIF read back from the AVIF")
    want = upright(stored, 6)
    check((w, h, c) == want[:3] and psnr(want[3], px) >= AVIF_MIN_PSNR,
          "m.avif's pixels: turned by its Orientation 6")
    rep = converted_report("--strip", "m.png", "s.avif")
    data = read("s.avif")
    check("metadata" not in rep, "--strip: the report says %r" % rep)
    check(b"colrprof" not in data and b"Exif" not in data, "--strip wrote metadata")
    decoded("s.avif")
    check(png_meta(read("s.avif.png")) == (None, None, None), "--strip: metadata read back")
    # A gray profile does not go into AVIF, written as RGB.
    write("g.png", with_meta(png_encode_8bit(4, 3, 1, make_pixels(4, 3, 1, seed=43)),
                             profile=icc_profile(600, b"GRAY")))
    rep = converted_report("g.png", "g.avif")
    check(colr_profile(read("g.avif")) is None and "metadata" not in rep,
          "a gray profile in an RGB AVIF: %r" % rep)


@test("heif")
def avif_orientation_kept_without_autorotate():
    """--no-autorotate keeps the stored pixels: the EXIF Orientation becomes the AVIF's irot
    and imir (1 in its EXIF), which libheif's readers apply."""
    need_libheif()
    heif_tool("heif-convert")
    stored = (7, 5, 3, make_pixels(7, 5, 3, seed=44))
    write("s.png", png_encode_8bit(*stored))
    for o in range(1, 9):
        write("o.png", with_meta(read("s.png"), exif=tiff(o)))
        expect_ok(cpu("convert", "--no-autorotate", "o.png", "o.avif"), stdout_expected=False)
        data = read("o.avif")
        check(bytes(4) + tiff(1) in data, "Orientation %d: the AVIF's EXIF says 1" % o)
        check((b"irot" in data) == (o in (5, 6, 7, 8, 3)) and (b"imir" in data) ==
              (o in (2, 4, 5, 7)), "Orientation %d: irot and imir" % o)
        got = decoded("o.avif")
        check(got[:2] == upright(stored, o)[:2], "Orientation %d: decoded %dx%d" % (o, *got[:2]))
        same_image(got, reference("o.avif"), "Orientation %d against heif-convert" % o)


@test("heif")
def avif_speed():
    need_libheif()
    write("sp.png", png_encode_8bit(64, 48, 3, smooth(64, 48, 3)))
    for speed in ("0", "9"):
        expect_ok(cpu("convert", "--speed", speed, "sp.png", "sp%s.avif" % speed),
                  stdout_expected=False)
    expect_ok(cpu("convert", "sp.png", "default.avif"), stdout_expected=False)
    expect_ok(cpu("convert", "--speed", "6", "sp.png", "sp6.avif"), stdout_expected=False)
    check(read("sp0.avif") != read("sp9.avif"), "--speed 0 and 9 wrote the same file")
    check(read("sp6.avif") == read("default.avif"), "--speed 6 is not the default")
    for bad in ("10", "-1", "x"):
        usage_error(["convert", "--speed", bad, "sp.png", "bad.avif"],
                    range_msg("--speed", bad, 0, 9))
    check(not os.path.exists(path("bad.avif")), "bad.avif written")


def ispe_sized(data, w, h):
    """data with its first ispe box (the image's size) saying w x h."""
    at = data.find(b"ispe")
    check(at > 0, "no ispe box")
    return data[:at + 8] + struct.pack(">II", w, h) + data[at + 16:]


@test("heif")
def hostile_files_refused():
    need_libheif()
    write("h.png", png_encode_8bit(32, 32, 3, make_pixels(32, 32, 3, seed=73)))
    expect_ok(cpu("convert", "h.png", "h.avif"), stdout_expected=False)
    data = read("h.avif")
    write("huge.avif", ispe_sized(data, 60000, 60000))
    expect_error(cpu("convert", "huge.avif", "o1.png"), EXIT_INPUT,
                 "huge.avif: cannot decode HEIF: image over libheif's limits or the limit of "
                 "268435456 pixels (see --max-pixels)")
    write("big.avif", ispe_sized(data, 1500, 1500))
    expect_error(cpu("convert", "--max-pixels", "1000000", "big.avif", "o2.png"), EXIT_INPUT,
                 "big.avif: image is 1500x1500, over the limit of 1000000 pixels "
                 "(see --max-pixels)")
    for n in (16, 40, len(data) // 2, len(data) - 10):
        write("cut.avif", data[:n])
        res = cpu("convert", "cut.avif", "o3.png")
        check(res.rc == EXIT_INPUT and res.err.startswith(b"gpuimg: cut.avif: ") and
              res.err.count(b"\n") == 1, "an AVIF cut at %d bytes is refused" % n, res)
    for name in ("o1.png", "o2.png", "o3.png"):
        check(not os.path.exists(path(name)), "%s was written" % name)
    check_no_leftovers()


@test("heif")
def batch_directory_of_heif():
    need_libheif()
    os.makedirs(path("in"), exist_ok=True)
    write("in/a.png", png_encode_8bit(12, 10, 3, smooth(12, 10, 3)))
    expect_ok(cpu("convert", "-q", "-o", "avifs", "--format", "avif", "in"),
              stdout_expected=False)
    check(os.listdir(path("avifs")) == ["a.avif"], "--format avif wrote %r" % os.listdir(path("avifs")))
    expect_ok(cpu("convert", "-q", "-o", "pngs", "--format", "png", "avifs"), stdout_expected=False)
    check(png_decode(read("pngs/a.png"))[:3] == (12, 10, 3), "a directory's AVIF read")
    check(b"heic codecs: libheif; avif codecs: libheif;" in run("-V").out,
          "-V must list libheif")
    # HEIC is read only: out.heic is refused as a name of no format at all is.
    refusal = run("convert", "h.png", "out.x").err.decode().split("\n")[0]
    usage_error(["convert", "h.png", "out.heic"],
                refusal.replace("gpuimg: out.x:", "out.heic:"))


@test("noheif")
def heif_not_built():
    if has_libheif():
        raise Skip("this gpuimg has libheif (configure with -Dheif=disabled to test this)")
    check(b"heic codecs: none; avif codecs: none;" in run("-V").out, "-V must say no HEIF codec")
    write("n.png", png_encode_8bit(2, 2, 3, make_pixels(2, 2, 3, seed=8)))
    usage_error(["convert", "n.png", "n.avif"], "n.avif: gpuimg was built without AVIF")
    write("n.heic", struct.pack(">I", 24) + b"ftypheic" + bytes(4) + b"mif1heic")
    expect_error(cpu("convert", "n.heic", "n-out.png"), EXIT_INPUT,
                 "n.heic: unsupported format (gpuimg was built without HEIC)")
