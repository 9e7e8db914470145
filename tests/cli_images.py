# cli_images.py: test_cli.py's groups formats, pixels, pipeline: what the images hold.

import os

from gpuimg_testlib import (
    EXIT_OK, NOT_WRITTEN, PNG_SIGNATURE, SIXTEEN_BIT_NOTICE, Rng, check, cpu, expect, expect_ok,
    make_pixels, path, png_decode, png_encode_8bit, read, run, test, write)
from cli_common import (
    CORPUS, bmp_decode, check_no_leftovers, expected, make_jpeg, read_png, ref_blur,
    ref_checkerboard, ref_gray, ref_portrait, same_image, tga_decode)


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
    # Without OUTPUT nothing is written at all, and one line says so (not with -q or a
    # timing run: --report, --explain, --repeat, --warmup).
    before = sorted(os.listdir(path()))
    res = expect(cpu("blur", "-r", "1", "rgb8.png"), EXIT_OK, NOT_WRITTEN)
    check(res.out == b"", "expected an empty stdout", res)
    for quiet in (["-q"], ["--repeat", "2"], ["--warmup", "1"]):
        expect_ok(cpu("blur", "-r", "1", *quiet, "rgb8.png"), stdout_expected=False)
    res = cpu("blur", "-r", "1", "--explain", "rgb8.png")
    check(res.rc == 0 and res.err.startswith(b"blur: ") and b"OUTPUT" not in res.err,
          "--explain: no notice", res)
    check(sorted(os.listdir(path())) == before, "files appeared without an OUTPUT")
    res = expect_ok(cpu("blur", "-r", "1", "--report", "-", "rgb8.png"))
    check(res.out.startswith(b"{"), "the report on stdout", res)


@test("formats")
def decoded_input_layouts():
    # Palette, tRNS, 16-bit, 1/2-bit gray, interlaced and multi-IDAT PNGs decode to the
    # 8-bit pixels the PNG specification defines (16-bit: round(v / 257), with a notice).
    for name in ("pal.png", "pal-trns.png", "pal4bit.png", "rgb16.png", "ga16.png", "g1bit.png",
                 "g2bit.png", "rgb8-interlaced.png", "rgb8-split.png"):
        quiet = ("-q",) if "16" in name else ()
        expect_ok(cpu("blur", "-r", "0", *quiet, name, "dec.png"), stdout_expected=False)
        same_image(read_png(path("dec.png")), expected(name), name)
        expect_ok(cpu("gray", *quiet, name, "dec-gray.png"), stdout_expected=False)
        same_image(read_png(path("dec-gray.png")), ref_gray(expected(name)), "gray " + name)
    res = cpu("gray", "rgb16.png", "dec-gray.png")
    check(res.rc == 0 and res.err == ("gpuimg: rgb16.png: warning: %s\n" % SIXTEEN_BIT_NOTICE)
          .encode(), "the 16-bit notice", res)


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
