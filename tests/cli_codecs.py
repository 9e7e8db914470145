# cli_codecs.py: test_cli.py's groups codec, jpeg, nolibjpeg: the PNG and JPEG codecs.

import json
import math
import os
import struct
import sys

from gpuimg_testlib import (
    EXIT_INPUT, EXIT_OUTPUT, EXIT_USAGE, Failure, Skip, built_with, check, cpu, expect_error,
    expect_ok, make_pixels, path, png_decode, png_encode, png_encode_8bit, png_file, read, run,
    test, write)
from cli_common import (
    range_msg, check_no_leftovers, expected, load_report, make_jpeg, read_png, same_image,
    stage, usage_error)


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
    --png-level 0 and 1 and with libpng (when built in) at 2..9, and decodes PNG with
    fastpng's reader (the 8-bit, non-interlaced, palette-free PNGs these tests give it)."""
    if job == "encode png" and (choice == "fastpng" or (choice == "auto" and png_level <= 1)):
        return "fastpng"
    if job == "decode png" and choice in ("fastpng", "auto"):
        return "fastpng"
    lib = {"encode png": "libpng", "decode jpeg": "libjpeg", "encode jpeg": "libjpeg"}.get(job)
    built = {"libpng": has_libpng(), "libjpeg": has_libjpeg()}
    return lib if lib and built[lib] and choice in ("auto", lib) else "stb"


@test("codec")
def png_reader_matches_stb():
    # fastpng's reader (auto's PNG decoder) takes 8-bit, non-interlaced, palette-free PNGs
    # without tRNS, every filter type, one IDAT or many; its pixels are stb's. The others go to
    # stb (the report says which), and so does a file it finds corrupt (then stb's verdict).
    def both(name):  # TGA output: stb writes it either way, so equal files mean equal pixels
        res = cpu("blur", "-r", "0", name, "a.tga", "--report", "-")
        ref = cpu("blur", "-r", "0", name, "b.tga", "--codec", "stb")
        check(res.rc == ref.rc, "%s: exit %d, stb's %d" % (name, res.rc, ref.rc), res)
        if res.rc == 0:
            check(read("a.tga") == read("b.tga"), "%s: other pixels than stb's" % name, res)
            for f in ("a.tga", "b.tga"):
                os.remove(path(f))
            return stage(load_report(res.out), "decode")["codec"]
        check(res.err == ref.err, "%s: not stb's message" % name, res)
        return None

    for c in (1, 2, 3, 4):
        for w, h in ((1, 1), (2, 3), (5, 4), (33, 17)):
            px = make_pixels(w, h, c, seed=7 * w + h + c)
            for first in range(5):
                for split in (0, 7):
                    write("f.png", png_encode_8bit(w, h, c, px, first_filter=first,
                                                   idat_split=split))
                    check(both("f.png") == "fastpng", "%dx%dx%d, filter %d, IDATs of %d: not "
                          "fastpng's" % (w, h, c, first, split), None)
    px = make_pixels(9, 5, 3, seed=3)
    for what, kw in (("interlaced", {"interlace": True}), ("tRNS", {"trns": b"\0\1\0\2\0\3"})):
        write("s.png", png_encode_8bit(9, 5, 3, px, **kw))
        check(both("s.png") == "stb", "%s: not stb's" % what, None)
    write("s.png", png_encode(4, 3, 3, [1, 2, 0] * 4, bit_depth=8, palette=[(9, 8, 7), (1, 2, 3),
                                                                          (4, 5, 6)]))
    check(both("s.png") == "stb", "a palette PNG: not stb's", None)
    write("s.png", png_encode(3, 2, 0, list(range(0, 60000, 10000)), bit_depth=16))
    check(both("s.png") == "stb", "a 16-bit PNG: not stb's", None)
    # A wrong Adler-32 (stb does not check it), a filter type of 5, and a stream cut short.
    good = png_encode_8bit(6, 4, 3, make_pixels(6, 4, 3, seed=9))
    write("adler.png", good[:-20] + bytes(b ^ 0xFF for b in good[-20:-16]) + good[-16:])
    check(both("adler.png") == "fastpng", "a wrong Adler-32: stb's pixels", None)
    raw = b"".join(b"\5" + bytes(12) for _ in range(2))
    write("filter5.png", png_file(4, 2, 2, 8, __import__("zlib").compress(raw)))
    check(both("filter5.png") is None, "filter type 5 decoded", None)
    raw = b"".join(b"\0" + bytes(12) for _ in range(2))
    write("short.png", png_file(4, 2, 2, 8, __import__("zlib").compress(raw)[:-6]))
    both("short.png")


@test("codec")
def palette_index_past_the_plte_is_black():
    """An index past the PLTE's entries reads as opaque black, as libpng reads it (it zeroes
    the entries past the PLTE's; past the tRNS's, entries are opaque), whichever codec
    decodes: stb would read it from memory it never set. Two PLTE chunks are refused, as
    libpng refuses them."""
    pal = [(10, 20, 30), (40, 50, 60)]
    black = {3: (0, 0, 0), 4: (0, 0, 0, 255)}
    for depth, idx in ((8, [0, 1, 2, 3, 255, 128, 1, 0]), (4, [0, 1, 2, 15, 7, 1, 0, 9]),
                       (2, [0, 3, 1, 2, 2, 0, 1, 3])):
        for trns in (None, b"\7"):
            c = 4 if trns else 3
            entries = [p + ((7,) if trns and k == 0 else (255,) if trns else ())
                       for k, p in enumerate(pal)]
            want = b"".join(bytes(entries[i] if i < len(pal) else black[c]) for i in idx)
            write("p.png", png_encode(4, 2, 3, idx, bit_depth=depth, palette=pal, trns=trns))
            for choice in ("auto", "stb"):
                expect_ok(cpu("convert", "--codec", choice, "p.png", "p-out.png"),
                          stdout_expected=False)
                check(png_decode(read("p-out.png")) == (4, 2, c, want),
                      "depth %d, tRNS %r, --codec %s: %r" % (depth, trns, choice,
                                                             png_decode(read("p-out.png"))))
    # A tRNS of more entries than the PLTE has: ignored, as libpng ignores it (RGB out).
    write("long.png", png_encode(4, 2, 3, [0, 1, 2, 1, 0, 1, 0, 1], bit_depth=8, palette=pal,
                                 trns=b"\1\2\3\4\5"))
    for choice in ("auto", "stb"):
        expect_ok(cpu("convert", "--codec", choice, "long.png", "long-out.png"),
                  stdout_expected=False)
        want = b"".join(bytes(pal[i] if i < 2 else (0, 0, 0)) for i in [0, 1, 2, 1, 0, 1, 0, 1])
        check(png_decode(read("long-out.png")) == (4, 2, 3, want),
              "a tRNS longer than the PLTE, --codec %s: %r" % (choice,
                                                               png_decode(read("long-out.png"))))
    full = [(k, 255 - k, k // 2) for k in range(256)]
    write("full.png", png_encode(3, 1, 3, [0, 255, 77], bit_depth=8, palette=full))
    expect_ok(cpu("convert", "full.png", "full-out.png"), stdout_expected=False)
    check(png_decode(read("full-out.png")) == (3, 1, 3, bytes(full[0] + full[255] + full[77])),
          "a full palette read as it is")
    data = png_encode(4, 2, 3, [0, 1] * 4, bit_depth=8, palette=pal)
    at = data.index(b"PLTE") - 4
    end = at + 12 + 6
    write("two.png", data[:end] + data[at:end] + data[end:])
    for choice in ("auto", "stb"):
        expect_error(cpu("convert", "--codec", choice, "two.png", "two-out.png"), EXIT_INPUT,
                     "two.png: cannot decode PNG: corrupt image data (a second PLTE chunk)")
    check(not os.path.exists(path("two-out.png")), "two-out.png written")


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
        usage_error(["gray", "--png-level", bad], range_msg("--png-level", bad, 0, 9))
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
