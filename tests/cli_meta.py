# cli_meta.py: test_cli.py's group meta: the ICC profile and EXIF carried from input to output.

import json
import struct
import zlib

from gpuimg_testlib import (
    check, cpu, expect_ok, make_pixels, png_chunk, png_chunks, png_encode_8bit, read, test,
    write)
from cli_common import make_jpeg
from cli_orient import tiff

# The encoders each output format is written with: auto, stb, and for PNG the level libpng
# takes (stb where the build has no libpng); each must carry the same blocks.
ENCODERS = {"png": [(), ("--codec", "stb"), ("--png-level", "6")],
            "jpg": [(), ("--codec", "stb")]}
JPEG_SEGMENT = 65535 - 2 - 14  # the profile's bytes in one APP2 marker


def icc_profile(size, space=b"RGB ", seed=3):
    """A profile of size bytes: a header that states its size, colour space and "acsp"."""
    head = (struct.pack(">I", size) + b"gpim" + b"\x04\x30\0\0" + b"mntr" + space + b"XYZ " +
            bytes(12) + b"acsp" + bytes(88))
    return head + bytes((i * 7 + seed) & 255 for i in range(size - 128))


def iccp(profile, name=b"Display P3", method=b"\0", data=None):
    """A PNG iCCP chunk's payload."""
    return name + b"\0" + method + (zlib.compress(profile) if data is None else data)


def app(marker, payload):
    return b"\xff" + bytes([marker]) + struct.pack(">H", len(payload) + 2) + payload


def app2s(profile, count=None, seqs=None, size=JPEG_SEGMENT):
    """The profile over APP2 markers; count and seqs override what they say."""
    parts = [profile[k:k + size] for k in range(0, len(profile), size)]
    count = len(parts) if count is None else count
    seqs = list(range(1, len(parts) + 1)) if seqs is None else seqs
    return b"".join(app(0xE2, b"ICC_PROFILE\0" + bytes([s, count]) + p)
                    for s, p in zip(seqs, parts))


def jpeg_put(jpeg, blocks):
    """The JPEG with blocks (whole segments) after SOI and its JFIF APP0, if any."""
    at = 2
    if jpeg[2:4] == b"\xff\xe0":
        at = 4 + struct.unpack(">H", jpeg[4:6])[0]
    return jpeg[:at] + blocks + jpeg[at:]


def png_put(png, blocks):
    """The PNG with blocks (whole chunks) after IHDR."""
    return png[:33] + blocks + png[33:]


def with_meta(data, profile=None, exif=None, name=b"Display P3"):
    """PNG or JPEG bytes with an ICC profile and an EXIF block."""
    if data[:4] == b"\x89PNG":
        return png_put(data, (png_chunk(b"iCCP", iccp(profile, name)) if profile else b"") +
                       (png_chunk(b"eXIf", exif) if exif else b""))
    return jpeg_put(data, (app(0xE1, b"Exif\0\0" + exif) if exif else b"") +
                    (app2s(profile) if profile else b""))


def jpeg_meta(data):
    """(profile, EXIF, [(seq, count, bytes)] of each APP2) of a JPEG, read marker by marker
    before its scan; None where there is none. Each marker must fit its 16-bit length."""
    pos, exif, parts = 2, None, []
    while data[pos] == 0xFF and data[pos + 1] != 0xDA:
        n = struct.unpack(">H", data[pos + 2:pos + 4])[0]
        body = data[pos + 4:pos + 2 + n]
        if data[pos + 1] == 0xE1 and body[:6] == b"Exif\0\0":
            check(exif is None, "two APP1 Exif segments")
            exif = body[6:]
        if data[pos + 1] == 0xE2 and body[:12] == b"ICC_PROFILE\0":
            parts.append((body[12], body[13], body[14:]))
        pos += 2 + n
    profile = b"".join(p for _, _, p in sorted(parts)) if parts else None
    return profile, exif, [(s, c, len(p)) for s, c, p in parts]


def png_meta(data):
    """(profile, its name, EXIF) of a PNG, None where there is none; the chunks' CRCs are
    checked, and both must come before IDAT."""
    profile = name = exif = None
    for off, n, kind in png_chunks(data):
        body = data[off + 8:off + 8 + n]
        crc = struct.unpack(">I", data[off + 8 + n:off + 12 + n])[0]
        check(zlib.crc32(kind + body) & 0xFFFFFFFF == crc, "chunk %r has a bad CRC" % kind)
        if kind == b"IDAT":
            break
        if kind == b"iCCP":
            name, rest = body.split(b"\0", 1)
            check(rest[0] == 0, "iCCP's compression method %d" % rest[0])
            profile = zlib.decompress(rest[1:])
        if kind == b"eXIf":
            exif = body
    return profile, name, exif


def meta_of(name):
    """(profile, EXIF) of a written PNG or JPEG."""
    data = read(name)
    if name.endswith(".png"):
        return png_meta(data)[::2]
    return jpeg_meta(data)[:2]


def converted(src, out, *extra, ops=("blur", "-r", "0")):
    """Runs gpuimg on src, which must succeed quietly; returns the report's output object."""
    expect_ok(cpu(*extra, *ops, src, out, "--report", "r.json"), stdout_expected=False)
    return json.loads(read("r.json"))["output"]


def inputs(profile, exif):
    """A PNG and a JPEG carrying profile and exif: {name: bytes}."""
    make_jpeg()
    png = png_encode_8bit(5, 3, 3, make_pixels(5, 3, 3, 21))
    files = {"in.png": with_meta(png, profile, exif), "in.jpg": with_meta(read("smooth.jpg"),
                                                                          profile, exif)}
    for name, data in files.items():
        write(name, data)
    return files


@test("meta")
def meta_every_pair():
    profile, exif = icc_profile(3000), tiff(1)
    for src in inputs(profile, exif):
        for ext, encoders in sorted(ENCODERS.items()):
            for opts in encoders:
                out = "%s.%s" % (src, ext)
                rep = converted(src, out, *opts)
                what = "%s -> %s with %r" % (src, out, opts)
                check(meta_of(out) == (profile, exif), what + ": the blocks differ")
                check(rep.get("metadata") == ["icc", "exif"], what + ": report %r" % rep)
        name = png_meta(read(src + ".png"))[1]
        check(name == (b"Display P3" if src.endswith(".png") else b"ICC profile"),
              "the profile's name from %s: %r" % (src, name))
        for ext in ("bmp", "tga"):  # these formats carry nothing
            rep = converted(src, "%s.%s" % (src, ext))
            check("metadata" not in rep, "a %s output carries %r" % (ext, rep))


@test("meta")
def meta_orientation_one_after_a_turn():
    for order in ("II", "MM"):
        for src in inputs(icc_profile(500), tiff(6, order)):
            for ext in ENCODERS:
                out = "%s-%s.%s" % (src, order, ext)
                converted(src, out)
                check(meta_of(out)[1] == tiff(1, order), "%s: not Orientation 1" % out)
                converted(src, out, "--no-autorotate")
                check(meta_of(out)[1] == tiff(6, order), "%s: --no-autorotate changed it" % out)


@test("meta")
def meta_large_profile_over_several_markers():
    profile = icc_profile(200000, seed=5)
    write("big.png", with_meta(png_encode_8bit(4, 4, 3, make_pixels(4, 4, 3, 2)), profile))
    converted("big.png", "big.jpg")
    got, _, parts = jpeg_meta(read("big.jpg"))
    last = 200000 - 3 * JPEG_SEGMENT
    check(parts == [(1, 4, JPEG_SEGMENT), (2, 4, JPEG_SEGMENT), (3, 4, JPEG_SEGMENT),
                    (4, 4, last)], "APP2 markers %r" % parts)
    check(got == profile, "the profile over 4 markers differs")
    for out in ("big2.jpg", "big2.png"):  # rejoined by the reader
        converted("big.jpg", out)
        check(meta_of(out)[0] == profile, out + ": the rejoined profile differs")


@test("meta")
def meta_strip():
    inputs(icc_profile(400), tiff(6))
    for src in ("in.png", "in.jpg"):
        for ext in ENCODERS:
            out = "s-%s.%s" % (src, ext)
            rep = converted(src, out, "--strip")
            check(meta_of(out) == (None, None), out + ": --strip wrote metadata")
            check("metadata" not in rep, out + ": the report says %r" % rep)
            data = read(out)
            check(b"ICC_PROFILE" not in data and b"Exif\0\0" not in data and
                  b"iCCP" not in data and b"eXIf" not in data, out + ": a block left")


def is_gray(name):
    """Whether a written file is gray: a PNG of colour type 0 or 4, a JPEG of one component
    (libjpeg writes gray so; stb writes three)."""
    data = read(name)
    if name.endswith(".png"):
        return data[25] in (0, 4)
    pos = 2
    while data[pos + 1] not in (0xC0, 0xC1, 0xC2):
        pos += 2 + struct.unpack(">H", data[pos + 2:pos + 4])[0]
    return data[pos + 9] == 1


@test("meta")
def meta_gray_output_keeps_no_rgb_profile():
    profile, gray_profile, exif = icc_profile(600), icc_profile(600, b"GRAY"), tiff(1)
    stored = png_encode_8bit(5, 3, 1, make_pixels(5, 3, 1, 4))
    write("gray.png", with_meta(stored, gray_profile, exif))
    write("gray-rgb.png", with_meta(stored, profile, exif))
    runs = [(src, ("gray",)) for src in inputs(profile, exif)]
    runs += [("gray.png", ("blur", "-r", "0")), ("gray-rgb.png", ("blur", "-r", "0"))]
    grays = 0
    for k, (src, ops) in enumerate(runs):
        for ext, encoders in sorted(ENCODERS.items()):
            for opts in encoders:
                out = "g%d.%s" % (k, ext)
                rep = converted(src, out, *opts, ops=ops)
                gray = is_gray(out)
                grays += gray
                fits = (gray_profile if src == "gray.png" else profile) if gray == (
                    src == "gray.png") else None
                what = "%s %r -> %s (%s)" % (src, opts, out, "gray" if gray else "colour")
                check(meta_of(out) == (fits, exif), what + ": the profile that fits")
                check(rep["metadata"] == (["icc", "exif"] if fits else ["exif"]),
                      what + ": report %r" % rep)
    check(grays >= 8, "only %d gray outputs" % grays)


@test("meta")
def meta_batch_per_image():
    make_jpeg()
    one, two = icc_profile(300, seed=1), icc_profile(70000, seed=2)
    write("b1.png", with_meta(png_encode_8bit(3, 2, 3, make_pixels(3, 2, 3, 1)), one, tiff(1)))
    write("b2.jpg", with_meta(read("smooth.jpg"), two, tiff(8, "MM")))
    write("b3.png", png_encode_8bit(3, 2, 4, make_pixels(3, 2, 4, 2)))
    expect_ok(cpu("blur", "-r", "0", "-q", "-o", "bout", "--report", "b.jsonl", "b1.png",
                  "b2.jpg", "b3.png"), stdout_expected=False)
    check(meta_of("bout/b1.png") == (one, tiff(1)), "batch b1.png")
    check(meta_of("bout/b2.jpg") == (two, tiff(1, "MM")), "batch b2.jpg")
    check(meta_of("bout/b3.png") == (None, None), "batch b3.png")
    lines = [json.loads(s) for s in read("b.jsonl").splitlines()]
    got = {o["input"]["name"]: o["output"].get("metadata") for o in lines if "index" in o}
    check(got == {"b1.png": ["icc", "exif"], "b2.jpg": ["icc", "exif"], "b3.png": None},
          "the batch report's metadata: %r" % got)


def warned(src, out, warning, *extra):
    """Runs gpuimg on src: exit 0 and exactly the warning line (none with -q)."""
    res = cpu(*extra, "blur", "-r", "0", src, out)
    want = b"gpuimg: %s: warning: %s\n" % (src.encode(), warning.encode())
    check(res.rc == 0 and res.out == b"" and res.err == want, "expected %r" % want, res)
    expect_ok(cpu("-q", *extra, "blur", "-r", "0", src, out), stdout_expected=False)


TOO_LARGE = "it is larger than 1 MiB (the largest profile carried)"


# Hostile profiles: (name, the file's blocks, the reason given). The EXIF beside each is kept.
def hostile_profiles(profile):
    bomb = zlib.compress(bytes(17 << 20), 9)
    bad_crc = png_chunk(b"iCCP", iccp(profile))[:-1] + b"\0"
    return [
        ("seq0.jpg", app2s(profile, seqs=[0]), "an APP2 marker numbered outside its count"),
        ("seq3.jpg", app2s(profile, size=200, count=2, seqs=[1, 3]),
         "an APP2 marker numbered outside its count"),
        ("counts.jpg", app2s(profile[:200], count=2) + app2s(profile[200:], count=3, seqs=[2]),
         "APP2 markers that disagree on their count"),
        ("twice.jpg", app2s(profile, count=2) + app2s(profile, count=2),
         "an APP2 marker repeated"),
        ("missing.jpg", app2s(profile, count=2), "an APP2 marker of it is missing"),
        ("header.jpg", app2s(profile[:-1]), "it has no valid profile header"),
        ("crc.png", bad_crc, "its chunk's CRC is wrong"),
        ("deflate.png", png_chunk(b"iCCP", iccp(profile, data=zlib.compress(profile)[:-9])),
         "its deflate stream is broken"),
        ("noname.png", png_chunk(b"iCCP", iccp(profile, name=b"")),
         "its chunk has no valid name and method"),
        ("method.png", png_chunk(b"iCCP", iccp(profile, method=b"\1")),
         "its chunk has no valid name and method"),
        ("bomb.png", png_chunk(b"iCCP", iccp(profile, data=bomb)), TOO_LARGE),
        ("over.png", png_chunk(b"iCCP", iccp(sparse_profile((1 << 20) + 1))), TOO_LARGE),
        ("over.jpg", app2s(sparse_profile((1 << 20) + 1)), TOO_LARGE),
        ("empty.png", png_chunk(b"iCCP", iccp(b"")), "it is empty"),
        ("empty.jpg", app(0xE2, b"ICC_PROFILE\0\1\1"), "it is empty"),
    ]


def sparse_profile(size):
    """A profile of size bytes, zeros after its header (quick to make and to deflate)."""
    return struct.pack(">I", size) + icc_profile(128)[4:] + bytes(size - 128)


@test("meta")
def meta_profile_of_exactly_1_mib():
    """The largest profile carried, from a PNG and from a JPEG, to either format, byte for
    byte (its JPEG markers rejoined, its PNG chunk inflated)."""
    profile = sparse_profile(1 << 20)
    write("cap.png", with_meta(png_encode_8bit(2, 2, 3, make_pixels(2, 2, 3, 8)), profile))
    make_jpeg()
    write("cap.jpg", with_meta(read("smooth.jpg"), profile))
    for src in ("cap.png", "cap.jpg"):
        for ext in ENCODERS:
            converted(src, "cap.out." + ext)
            check(meta_of("cap.out." + ext)[0] == profile,
                  "%s -> %s: the 1 MiB profile was not carried" % (src, ext))


@test("meta")
def meta_profile_bomb_not_carried():
    """A 16 KiB PNG whose iCCP inflates to a 16 MiB profile (a valid header, zeros after):
    its JPEG would be 16 MiB, so a folder of them would take a thousand times its size. The
    profile is dropped with the warning; the output is the size of its pixels."""
    profile = sparse_profile(16 << 20)
    png = with_meta(png_encode_8bit(16, 12, 3, make_pixels(16, 12, 3, 5)), profile)
    check(len(png) < 20000, "the bomb is %d bytes" % len(png))
    write("icc-bomb.png", png)
    warned("icc-bomb.png", "icc-bomb.jpg", "ICC profile ignored: " + TOO_LARGE)
    check(len(read("icc-bomb.jpg")) < 16384 and meta_of("icc-bomb.jpg")[0] is None,
          "the output is %d bytes" % len(read("icc-bomb.jpg")))


@test("meta")
def meta_hostile_blocks_warned():
    make_jpeg()
    png = png_encode_8bit(4, 3, 3, make_pixels(4, 3, 3, 6))
    exif = tiff(1)
    for name, blocks, reason in hostile_profiles(icc_profile(400)):
        if name.endswith(".png"):
            write(name, png_put(png, blocks + png_chunk(b"eXIf", exif)))
        else:
            write(name, jpeg_put(read("smooth.jpg"), app(0xE1, b"Exif\0\0" + exif) + blocks))
        for ext in ENCODERS:
            warned(name, "out." + ext, "ICC profile ignored: " + reason)
            check(meta_of("out." + ext) == (None, exif), "%s -> %s: EXIF lost" % (name, ext))
    # A bad eXIf CRC and a bad profile together: one line.
    write("both.png", png_put(png, png_chunk(b"eXIf", exif)[:-1] + b"\0" +
                              png_chunk(b"iCCP", iccp(b"\0" * 10))))
    warned("both.png", "both.out.png", "EXIF block ignored: its chunk's CRC is wrong; "
           "ICC profile ignored: it has no valid profile header")
    # A mask's EXIF is checked as an image's: its warning names the mask.
    write("mask.png", png_put(png_encode_8bit(4, 3, 1, bytes(12)), png_chunk(b"eXIf", b"II*")))
    res = cpu("portrait", "--mask", "mask.png", "crc.png", "p.png")
    want = (b"gpuimg: mask.png: warning: EXIF block ignored: no TIFF header\n"
            b"gpuimg: crc.png: warning: ICC profile ignored: its chunk's CRC is wrong\n")
    check(res.rc == 0 and res.err == want, "expected %r" % want, res)
    # With --strip the profile is not read: no warning about it.
    expect_ok(cpu("--strip", "blur", "-r", "0", "bomb.png", "strip.png"), stdout_expected=False)


@test("meta")
def meta_exif_over_one_app1():
    big = tiff(1, tail=bytes(70000))
    write("bigexif.png", with_meta(png_encode_8bit(2, 2, 3, make_pixels(2, 2, 3, 3)),
                                   icc_profile(300), big))
    res = cpu("blur", "-r", "0", "bigexif.png", "bigexif.jpg", "--report", "r.json")
    want = (b"gpuimg: bigexif.jpg: warning: EXIF block of %d bytes left out: over one JPEG "
            b"APP1 segment\n" % len(big))
    check(res.rc == 0 and res.err == want, "expected %r" % want, res)
    check(meta_of("bigexif.jpg") == (icc_profile(300), None), "the profile alone in the JPEG")
    check(json.loads(read("r.json"))["output"]["metadata"] == ["icc"], "the report")
    converted("bigexif.png", "bigexif2.png")
    check(meta_of("bigexif2.png")[1] == big, "a PNG takes the large EXIF")


SHORT, LONG = 3, 4


def exif_sized(x, y, order="II", orientation=1, pointer=38, ifd=None):
    """A TIFF block: IFD0 (the Orientation, the Exif IFD pointer), then at 38 the Exif IFD
    (or the bytes ifd) with PixelXDimension x and PixelYDimension y, each (type, value)."""
    if ifd is None:
        ifd = tiff(0, order, entries=[(0xA002, x[0], 1, x[1]), (0xA003, y[0], 1, y[1])])[8:]
    return tiff(0, order, entries=[(0x0112, SHORT, 1, orientation), (0x8769, LONG, 1, pointer)],
                tail=ifd)


def sized_inputs(exif):
    """in.png (5x3) and in.jpg (40x24) carrying exif: their names."""
    make_jpeg()
    write("in.png", with_meta(png_encode_8bit(5, 3, 3, make_pixels(5, 3, 3, 21)), None, exif))
    write("in.jpg", with_meta(read("smooth.jpg"), None, exif))
    return ["in.png", "in.jpg"]


@test("meta")
def meta_exif_size_is_the_outputs():
    for order in ("II", "MM"):
        for types in ((SHORT, SHORT), (LONG, LONG), (SHORT, LONG)):
            exif = exif_sized((types[0], 1600), (types[1], 1200), order)
            for src in sized_inputs(exif):
                for ext in ENCODERS:
                    out = "%s-%s.%s" % (src, order, ext)
                    rep = converted(src, out, ops=("resize", "--width", "10"))
                    check((rep["width"], rep["height"]) == (10, 6), "%s: %r" % (out, rep))
                    want = exif_sized((types[0], 10), (types[1], 6), order)
                    check(meta_of(out)[1] == want, "%s %r: the dimensions" % (out, types))
                    converted(src, out)  # no resize: the decoded size
                    size = (5, 3) if src == "in.png" else (40, 24)
                    want = exif_sized((types[0], size[0]), (types[1], size[1]), order)
                    check(meta_of(out)[1] == want, "%s %r: the size unchanged" % (out, types))
                    converted(src, out, "--strip", ops=("resize", "--width", "10"))
                    check(meta_of(out) == (None, None), out + ": --strip")


@test("meta")
def meta_exif_size_after_a_turn():
    for order in ("II", "MM"):
        exif = exif_sized((SHORT, 1600), (LONG, 1200), order, orientation=6)
        # Upright 3x5 and 24x40; the JPEG shrinks on load (40 -> 10 is 4x).
        for src, size in zip(sized_inputs(exif), ((6, 10), (6, 10))):
            for ext in ENCODERS:
                out = "t-%s-%s.%s" % (src, order, ext)
                rep = converted(src, out, ops=("resize", "--width", "6"))
                check((rep["width"], rep["height"]) == size, "%s: %r" % (out, rep))
                want = exif_sized((SHORT, size[0]), (LONG, size[1]), order)
                check(meta_of(out)[1] == want, out + ": orientation 1 and the turned size")
        # --no-autorotate: the stored pixels resized, the Orientation kept.
        converted("in.png", "k.png", "--no-autorotate", ops=("resize", "--width", "6"))
        want = exif_sized((SHORT, 6), (LONG, 4), order, orientation=6)
        check(meta_of("k.png")[1] == want, "--no-autorotate: Orientation 6, 6x4")


@test("meta")
def meta_exif_size_over_a_short():
    """70000x1: a SHORT PixelXDimension becomes a LONG holding it, a LONG one takes it."""
    for order in ("II", "MM"):
        for xtype in (SHORT, LONG):
            exif = exif_sized((xtype, 1600), (SHORT, 1200), order)
            write("w.png", with_meta(png_encode_8bit(2, 1, 3, make_pixels(2, 1, 3, 5)), None, exif))
            converted("w.png", "w.out.png", ops=("resize", "--width", "70000", "--height", "1"))
            want = exif_sized((LONG, 70000), (SHORT, 1), order)
            check(meta_of("w.out.png")[1] == want, "%s %d: the dimensions" % (order, xtype))


@test("meta")
def meta_exif_size_gray_and_batch():
    exif = exif_sized((SHORT, 1600), (LONG, 1200), "MM")
    for src in sized_inputs(exif):
        for ext in ENCODERS:
            out = "g-%s.%s" % (src, ext)
            converted(src, out, ops=("gray", "then", "resize", "--width", "10"))
            check(is_gray(out) or ext == "jpg", out + ": not gray")
            check(meta_of(out)[1] == exif_sized((SHORT, 10), (LONG, 6), "MM"), out)
    write("b1.png", with_meta(png_encode_8bit(8, 2, 3, make_pixels(8, 2, 3, 1)), None,
                              exif_sized((LONG, 8), (LONG, 2), orientation=8)))
    write("b2.jpg", with_meta(read("smooth.jpg"), None, exif_sized((SHORT, 9), (SHORT, 9), "MM")))
    expect_ok(cpu("resize", "--scale", "0.5", "-q", "-o", "bsz", "b1.png", "b2.jpg"),
              stdout_expected=False)
    check(meta_of("bsz/b1.png")[1] == exif_sized((LONG, 1), (LONG, 4)), "batch b1.png")
    check(meta_of("bsz/b2.jpg")[1] == exif_sized((SHORT, 20), (SHORT, 12), "MM"),
          "batch b2.jpg")


# Exif IFDs the dimensions are not read from (the block is carried as it is, without a
# warning), each with the pointer to it and the bytes at 38; and one read from IFD0 itself.
def hostile_exif_ifds(order):
    e = "<" if order == "II" else ">"
    good = tiff(0, order, entries=[(0xA002, SHORT, 1, 7), (0xA003, LONG, 1, 7)])[8:]
    dims = [(0xA002, SHORT, 1, 7), (0xA003, LONG, 1, 7)]
    return {
        "past the end": (0x7FFFFFF0, good),
        "just past the end": (38 + len(good), good),
        "at the TIFF header": (4, good),
        "at IFD0 itself": (8, good),
        "inside IFD0": (20, good),
        "a count of 65535 entries": (38, struct.pack(e + "H", 0xFFFF) + good[2:]),
        "a truncated directory": (38, good[:-4]),
        "a next pointer past the end": (38, good[:-4] + struct.pack(e + "I", 1 << 30)),
        "a value count of 2^31": (38, tiff(0, order, entries=dims + [(0xA005, LONG, 1 << 31, 9)])
                                  [8:]),
        "dimensions of count 2 or type RATIONAL": (
            38, tiff(0, order, entries=[(0xA002, SHORT, 2, 7), (0xA003, 5, 1, 7)])[8:]),
    }


@test("meta")
def meta_exif_hostile_exif_ifd():
    png = png_encode_8bit(4, 3, 3, make_pixels(4, 3, 3, 6))
    for order in ("II", "MM"):
        control = exif_sized((SHORT, 7), (LONG, 7), order)
        write("c.png", with_meta(png, None, control))
        converted("c.png", "c.out.png", ops=("resize", "--width", "2"))
        check(meta_of("c.out.png")[1] == exif_sized((SHORT, 2), (LONG, 2), order), "control")
        for what, (pointer, ifd) in sorted(hostile_exif_ifds(order).items()):
            exif = exif_sized(None, None, order, pointer=pointer, ifd=ifd)
            write("x.png", with_meta(png, None, exif))
            converted("x.png", "x.out.png", ops=("resize", "--width", "2"))
            check(meta_of("x.out.png")[1] == exif, "%s %s: the EXIF changed" % (order, what))
        # A pointer of type IFD (13) is followed as a LONG one; one of type SHORT is not.
        ifd = hostile_exif_ifds(order)["past the end"][1]
        exif = tiff(0, order, entries=[(0x0112, SHORT, 1, 1), (0x8769, 13, 1, 38)], tail=ifd)
        write("i.png", with_meta(png, None, exif))
        converted("i.png", "i.out.png")
        check(meta_of("i.out.png")[1] == exif[:38] + exif_sized((SHORT, 4), (LONG, 3), order)[38:],
              order + ": an IFD-typed pointer")
        exif = tiff(0, order, entries=[(0x0112, SHORT, 1, 1), (0x8769, SHORT, 1, 38)], tail=ifd)
        write("s.png", with_meta(png, None, exif))
        converted("s.png", "s.out.png")
        check(meta_of("s.out.png")[1] == exif, order + ": a SHORT pointer was followed")
        # IFD0 pointing at itself is read once as the Exif IFD, and no further.
        entries = [(0x0112, SHORT, 1, 6), (0x8769, LONG, 1, 8), (0xA002, LONG, 1, 99),
                   (0xA003, SHORT, 1, 99)]
        write("self.png", with_meta(png, None, tiff(0, order, entries=entries)))
        converted("self.png", "self.out.png")
        entries[0], entries[2], entries[3] = (0x0112, SHORT, 1, 1), (0xA002, LONG, 1, 3), (
            0xA003, SHORT, 1, 4)
        check(meta_of("self.out.png")[1] == tiff(0, order, entries=entries), order + ": self")
