# cli_convert.py: test_cli.py's group convert: the identity operation that only converts the
# format, applies the EXIF orientation and keeps or strips the metadata.

import os

from gpuimg_testlib import (
    EXIT_USAGE, built_with, check, cpu, expect_error, expect_ok, make_pixels, png_chunks,
    png_decode, png_encode_8bit, read, test, write)
from cli_common import bmp_decode, same_image, tga_decode
from cli_orient import png_with, tiff, upright


@test("convert")
def convert_keeps_every_pixel():
    for c in (1, 2, 3, 4):
        img = (33, 17, c, make_pixels(33, 17, c, seed=60 + c))
        write("in%d.png" % c, png_encode_8bit(*img))
        for ext, dec in (("png", png_decode), ("bmp", bmp_decode), ("tga", tga_decode)):
            out = "out%d.%s" % (c, ext)
            expect_ok(cpu("convert", "in%d.png" % c, out), stdout_expected=False)
            got = dec(read(out))
            if ext == "bmp" and c in (1, 2):  # BMP has no gray: stored as RGB(A)
                continue
            same_image(got, img, "convert to %s, %d channels" % (ext, c))


@test("convert")
def convert_one_pixel_and_threads():
    for w, h in ((1, 1), (1, 300), (300, 1), (257, 513)):
        img = (w, h, 3, make_pixels(w, h, 3, seed=w + h))
        write("s.png", png_encode_8bit(*img))
        expect_ok(cpu("convert", "--threads", "4", "s.png", "s-out.png"), stdout_expected=False)
        same_image(png_decode(read("s-out.png")), img, "convert %dx%d" % (w, h))


@test("convert")
def convert_applies_orientation_and_carries_metadata():
    stored = (5, 3, 3, make_pixels(5, 3, 3, seed=71))
    write("o6.png", png_with(png_encode_8bit(*stored), tiff(6)))
    expect_ok(cpu("convert", "o6.png", "o6-out.png"), stdout_expected=False)
    out = read("o6-out.png")
    same_image(png_decode(out), upright(stored, 6), "convert of orientation 6")
    exif = [out[at + 8:at + 8 + n] for at, n, kind in png_chunks(out) if kind == b"eXIf"]
    check(len(exif) == 1 and exif[0][:4] == b"II*\0", "the EXIF is carried: %r" % exif)
    check(b"\x12\x01\x03\x00\x01\x00\x00\x00\x01\x00" in exif[0],
          "the carried EXIF says Orientation 1: %r" % exif[0])
    expect_ok(cpu("convert", "--strip", "o6.png", "o6-strip.png"), stdout_expected=False)
    stripped = read("o6-strip.png")
    check(all(kind != b"eXIf" for _, _, kind in png_chunks(stripped)), "--strip kept the EXIF")
    same_image(png_decode(stripped), upright(stored, 6), "convert --strip")
    expect_ok(cpu("convert", "--no-autorotate", "o6.png", "o6-raw.png"), stdout_expected=False)
    same_image(png_decode(read("o6-raw.png")), stored, "convert --no-autorotate")


@test("convert")
def convert_batch_changes_format():
    imgs = {}
    for k, c in enumerate((1, 3, 4)):
        imgs["b%d" % k] = (9 + k, 7, c, make_pixels(9 + k, 7, c, seed=80 + k))
        write("b%d.png" % k, png_encode_8bit(*imgs["b%d" % k]))
    # A format gpuimg reads back exactly: TIFF, lossless WebP, else PNG (a build without both).
    fmt = "tiff" if built_with("libtiff") else "webp" if built_with("libwebp") else "png"
    extra = ("--lossless",) if fmt == "webp" else ()
    expect_ok(cpu("convert", "-q", "-o", "outdir", "--format", fmt, *extra,
                  "b0.png", "b1.png", "b2.png"), stdout_expected=False)
    for name, img in imgs.items():
        ext = "tif" if fmt == "tiff" else fmt
        expect_ok(cpu("convert", os.path.join("outdir", name + "." + ext), name + "-back.png"),
                  stdout_expected=False)
        got = png_decode(read(name + "-back.png"))
        if fmt == "webp" and img[2] < 3:  # WebP has no gray: stored as RGB(A)
            check(got[:2] == img[:2], "%s's size" % name)
            continue
        same_image(got, img, "batch convert of " + name)


@test("convert")
def convert_takes_no_operation_options():
    expect_error(cpu("convert", "--radius", "3", "in.png", "out.png"), EXIT_USAGE,
                 "convert: unknown option '--radius'")
