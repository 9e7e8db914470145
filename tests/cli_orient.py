# cli_orient.py: test_cli.py's group orient: EXIF orientation (JPEG APP1, PNG eXIf), all 8 values.

import json
import os
import struct

from gpuimg_testlib import (
    EXIT_INPUT, Skip, built_with, check, cpu, expect_error, expect_ok, make_pixels, path,
    png_chunk, png_decode, png_encode_8bit, read, test, write)
from cli_common import load_report, make_jpeg, ref_portrait, same_image, stage


def tiff(orientation, order="II", entries=None, ifd=8, tail=b""):
    """A TIFF block whose IFD0 holds the Orientation (SHORT, count 1), or the given entries
    (tag, type, count, value) as they stand."""
    e = "<" if order == "II" else ">"
    if entries is None:
        entries = [(0x010F, 2, 4, 0), (0x0112, 3, 1, orientation)]
    body = struct.pack(e + "H", len(entries))
    for tag, kind, count, value in entries:
        value_field = struct.pack(e + "HH", value, 0) if kind == 3 else struct.pack(e + "I", value)
        body += struct.pack(e + "HHI", tag, kind, count) + value_field
    head = order.encode() + struct.pack(e + "HI", 42, ifd)
    return head + b"\0" * (ifd - 8 if ifd < 64 else 0) + body + struct.pack(e + "I", 0) + tail


def jpeg_with(jpeg, block):
    """The JPEG with an APP1 Exif segment right after SOI."""
    payload = b"Exif\0\0" + block
    return jpeg[:2] + b"\xff\xe1" + struct.pack(">H", len(payload) + 2) + payload + jpeg[2:]


def png_with(png, block):
    """The PNG with an eXIf chunk after IHDR, before IDAT."""
    return png[:33] + png_chunk(b"eXIf", block) + png[33:]


def upright(img, o):
    """The stored pixels as EXIF orientation o shows them: rows of pixels, turned in Python."""
    w, h, c, px = img
    rows = [[px[(y * w + x) * c:(y * w + x + 1) * c] for x in range(w)] for y in range(h)]

    def mirror(r):
        return [row[::-1] for row in r]

    def cw(r):  # rotate 90 degrees clockwise
        return [list(col) for col in zip(*r[::-1])]

    rot180 = [row[::-1] for row in rows[::-1]]
    rows = {1: rows, 2: mirror(rows), 3: rot180, 4: rows[::-1],
            5: [list(col) for col in zip(*rows)], 6: cw(rows), 7: cw(mirror(rows)),
            8: cw(rot180)}[o]
    return len(rows[0]), len(rows), c, b"".join(p for row in rows for p in row)


def decoded(name, *extra):
    expect_ok(cpu("blur", "-r", "0", *extra, name, name + ".out.png"), stdout_expected=False)
    return png_decode(read(name + ".out.png"))


@test("orient")
def orient_png_all():
    for c in (1, 2, 3, 4):
        stored = (5, 3, c, make_pixels(5, 3, c, 40 + c))
        png = png_encode_8bit(*stored)
        for o in range(1, 9):
            name = "o%d-c%d.png" % (o, c)
            write(name, png_with(png, tiff(o, "II" if (o + c) % 2 else "MM")))
            same_image(decoded(name), upright(stored, o), name)
    same_image(decoded("o6-c3.png", "--no-autorotate"), (5, 3, 3, make_pixels(5, 3, 3, 43)),
               "--no-autorotate")


@test("orient")
def orient_jpeg_all():
    make_jpeg()
    stored = decoded("smooth.jpg")
    for o in range(1, 9):
        name = "o%d.jpg" % o
        write(name, jpeg_with(read("smooth.jpg"), tiff(o, "MM" if o % 2 else "II")))
        same_image(decoded(name), upright(stored, o), name)
    same_image(decoded("o8.jpg", "--no-autorotate"), stored, "--no-autorotate")
    res = expect_ok(cpu("blur", "-r", "0", "o6.jpg", "r.png", "--report", "-"))
    rep = json.loads(res.out)["input"]
    check((rep.get("orientation"), rep["width"], rep["height"]) == (6, 24, 40),
          "the report's input: %r" % rep)
    res = expect_ok(cpu("blur", "-r", "0", "o1.jpg", "r.png", "--report", "-"))
    check("orientation" not in json.loads(res.out)["input"], "orientation 1 reported")


@test("orient")
def orient_pipeline_and_masks():
    stored = (6, 4, 3, make_pixels(6, 4, 3, 7))
    mask = (6, 4, 1, bytes(255 * ((i * 7) % 3 == 0) for i in range(24)))
    write("img.png", png_with(png_encode_8bit(*stored), tiff(6)))
    write("mask.png", png_with(png_encode_8bit(*mask), tiff(6)))
    expect_ok(cpu("portrait", "--mask", "mask.png", "-r", "1", "then", "blur", "-r", "0",
                  "img.png", "p.png"), stdout_expected=False)
    same_image(png_decode(read("p.png")), ref_portrait(upright(stored, 6), upright(mask, 6), 1),
               "portrait with a turned mask")
    expect_ok(cpu("portrait", "--mask", "mask.png", "-r", "1", "--no-autorotate", "img.png",
                  "q.png"), stdout_expected=False)
    same_image(png_decode(read("q.png")), ref_portrait(stored, mask, 1), "--no-autorotate")


@test("orient")
def orient_batch():
    make_jpeg()
    stored = (3, 2, 4, make_pixels(3, 2, 4, 9))
    write("b1.png", png_with(png_encode_8bit(*stored), tiff(5)))
    write("b2.jpg", jpeg_with(read("smooth.jpg"), tiff(7)))
    write("b3.png", png_encode_8bit(*stored))
    expect_ok(cpu("blur", "-r", "0", "-q", "-o", "outdir", "b1.png", "b2.jpg", "b3.png"),
              stdout_expected=False)
    out = os.listdir(path("outdir"))
    check(len(out) == 3, "batch wrote %r" % out)
    for name, want in (("b1.png", upright(stored, 5)), ("b3.png", stored)):
        same_image(png_decode(read(os.path.join("outdir", name))), want, "batch " + name)
    got = decoded(os.path.join("outdir", "b2.jpg"), "--no-autorotate")
    check(got[:2] == (24, 40), "the batch's JPEG output is %dx%d" % got[:2])


@test("orient")
def orient_nvjpeg_turned():
    """--codec nvjpeg leaves a JPEG to turn to the host's decoder (libjpeg), on either backend:
    no device needed here, and the bytes of --codec auto."""
    if not (built_with("nvjpeg") and built_with("libjpeg")):
        raise Skip("this gpuimg was built without nvJPEG or libjpeg")
    make_jpeg()
    write("t6.jpg", jpeg_with(read("smooth.jpg"), tiff(6)))
    expect_ok(cpu("blur", "-r", "1", "--codec", "nvjpeg", "--report", "t6.json", "t6.jpg",
                  "t6-nv.png"), stdout_expected=False)
    expect_ok(cpu("blur", "-r", "1", "t6.jpg", "t6-auto.png"), stdout_expected=False)
    check(read("t6-nv.png") == read("t6-auto.png"), "--codec nvjpeg and auto differ on t6.jpg")
    rep = load_report(read("t6.json"))
    check(stage(rep, "decode")["codec"] == "libjpeg" and rep["input"]["orientation"] == 6,
          "the report: %r" % rep)


# Each hostile block, inserted into a PNG and a JPEG, is ignored: exit 0, the stored pixels, and
# the warning that says why (none for a loop of IFD pointers: they are never followed).
PAST = "a value past the end of the block"
RUNS = "its first directory runs past the end of the block"
LIES = "its first directory lies past the end of the block"
ORIENTATION = "an Orientation that is not one value 1..8"
HOSTILE = {
    "offset past the end": (tiff(6, ifd=4000), LIES),
    "offset past the end (MM)": (tiff(6, "MM", ifd=0x7FFFFFF0), LIES),
    "a loop of IFD pointers": (b"II*\0\x08\0\0\0\x01\0" +
                               struct.pack("<HHII", 0x8769, 4, 1, 8) + struct.pack("<I", 8), None),
    "a count of 2^31": (tiff(0, entries=[(0x0112, 3, 1 << 31, 6)]), PAST),
    "a count of 65535 entries": (b"MM\0*\0\0\0\x08\xff\xff" + b"\x01\x12\0\x03\0\0\0\x01\0\x06",
                                 RUNS),
    "a wrong type": (tiff(0, entries=[(0x0112, 4, 1, 6)]), ORIENTATION),
    "a value out of range": (tiff(9), ORIENTATION),
    "a truncated block": (tiff(6)[:20], RUNS),
    "a truncated header": (b"II*", "no TIFF header"),
    "an unknown byte order": (b"XX" + tiff(6)[2:], "no TIFF header"),
}


def decoded_warned(name, reason):
    """The pixels gpuimg decodes from name, checking its one warning (reason None: none)."""
    res = cpu("blur", "-r", "0", name, name + ".out.png")
    want = b"" if reason is None else (
        "gpuimg: %s: warning: EXIF block ignored: %s\n" % (name, reason)).encode()
    check(res.rc == 0 and res.err == want and res.out == b"", "expected exit 0 and %r" % want, res)
    expect_ok(cpu("-q", "blur", "-r", "0", name, name + ".q.png"), stdout_expected=False)
    return png_decode(read(name + ".out.png"))


@test("orient")
def orient_hostile():
    make_jpeg()
    stored_jpeg = decoded("smooth.jpg")
    stored = (4, 3, 3, make_pixels(4, 3, 3, 11))
    png = png_encode_8bit(*stored)
    for i, (what, (block, reason)) in enumerate(sorted(HOSTILE.items())):
        write("h%d.png" % i, png_with(png, block))
        same_image(decoded_warned("h%d.png" % i, reason), stored, "PNG with " + what)
        write("h%d.jpg" % i, jpeg_with(read("smooth.jpg"), block))
        same_image(decoded_warned("h%d.jpg" % i, reason), stored_jpeg, "JPEG with " + what)
    # An APP1 whose length runs past the file, and an eXIf chunk whose length does.
    jpeg = read("smooth.jpg")
    write("long.jpg", jpeg[:2] + b"\xff\xe1\xff\xf0Exif\0\0" + tiff(6) + jpeg[2:])
    # Refused as truncated, by any JPEG decoder (each words the reason its own way), no output.
    res = cpu("blur", "-r", "0", "long.jpg", "long.png")
    check(res.rc == EXIT_INPUT and res.out == b"" and len(res.lines()) == 1 and
          res.err.startswith(b"gpuimg: long.jpg: cannot decode JPEG: ") and
          not os.path.exists(path("long.png")), "a JPEG with an APP1 past its end", res)
    bad = png[:33] + struct.pack(">I", 0x7FFFFFFF) + b"eXIf" + tiff(6) + png[33:]
    write("long.png", bad)
    expect_error(cpu("blur", "-r", "0", "long.png", "long.out.png"), EXIT_INPUT,
                 "long.png: cannot decode PNG: corrupt or truncated image data (the eXIf chunk "
                 "runs past the end of the file)")
    check(not os.path.exists(path("long.out.png")), "an output of a truncated PNG")
