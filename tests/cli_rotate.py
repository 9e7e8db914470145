# cli_rotate.py: test_cli.py's group rotate: rotate, flip, flop, transpose and transverse from
# the command line: every pixel against the man page's definitions on odd sizes and 1-4 channels,
# identities through pipelines, usage errors with their exit codes and messages, a mask after a
# turn, the report.

import os

from gpuimg_testlib import (
    EXIT_INPUT, check, cpu, expect_error, expect_ok, png_decode, random_png, read, run, test,
    write)
from cli_common import load_report, same_image, stage, usage_error

# Each operation's arguments and its definition: out(x, y) = in(source(W, H, x, y)).
DEFS = (
    (["rotate", "--angle", "90"], True, lambda W, H, x, y: (y, H - 1 - x)),
    (["rotate", "--angle", "180"], False, lambda W, H, x, y: (W - 1 - x, H - 1 - y)),
    (["rotate", "--angle", "270"], True, lambda W, H, x, y: (W - 1 - y, x)),
    (["flip"], False, lambda W, H, x, y: (x, H - 1 - y)),
    (["flop"], False, lambda W, H, x, y: (W - 1 - x, y)),
    (["transpose"], True, lambda W, H, x, y: (y, x)),
    (["transverse"], True, lambda W, H, x, y: (W - 1 - y, H - 1 - x)),
)


def turned(img, swap, source):
    """img (w, h, c, pixels) as the definition turns it."""
    w, h, c, px = img
    ow, oh = (h, w) if swap else (w, h)
    out = bytearray()
    for y in range(oh):
        for x in range(ow):
            sx, sy = source(w, h, x, y)
            out += px[(sy * w + sx) * c:(sy * w + sx + 1) * c]
    return ow, oh, c, bytes(out)


def converted(args, name, out="out.png"):
    expect_ok(cpu(*args, name, out), stdout_expected=False)
    return png_decode(read(out))


@test("rotate")
def definitions():
    for w, h in ((1, 1), (1, 7), (7, 1), (33, 17), (2, 5)):
        for c in (1, 2, 3, 4):
            write("in.png", random_png(w, h, c, 100 * w + 10 * h + c))
            img = png_decode(read("in.png"))
            for args, swap, source in DEFS:
                for variant in ([], ["--naive"], ["--tiled"]):
                    what = "%s %s on %dx%dx%d" % (" ".join(args), " ".join(variant), w, h, c)
                    same_image(converted(args + variant, "in.png"), turned(img, swap, source),
                               what)


@test("rotate")
def identities():
    write("in.png", random_png(33, 17, 4, 5))
    img = png_decode(read("in.png"))
    r90, r180, r270 = (["rotate", "--angle", a] for a in ("90", "180", "270"))

    def chain(*steps):
        args = []
        for s in steps:
            args += (["then"] if args else []) + s
        return args

    for steps, want in (((r90, r90, r90, r90), None), ((["transpose"], ["transpose"]), None),
                        ((["transverse"], ["transverse"]), None), ((r90, r270), None),
                        ((["flip"], ["flop"]), r180), ((r90, r90), r180),
                        ((r270, ["flop"]), ["transverse"]), ((["flop"], r90), ["transverse"]),
                        ((["flip"], r90), ["transpose"])):
        what = " then ".join(" ".join(s) for s in steps)
        expected = img if want is None else converted(want, "in.png", "want.png")
        same_image(converted(chain(*steps), "in.png"), expected, what)


@test("rotate")
def errors():
    write("in.png", random_png(40, 30, 3, 8))
    usage_error(["rotate", "in.png", "out.png"], "rotate: no angle given (--angle 90, 180 or 270)")
    for bad in ("45", "0", "-90", "360", "90.0", ""):
        usage_error(["rotate", "--angle", bad, "in.png", "out.png"],
                    "--angle: invalid value '%s' (expected 90, 180 or 270)" % bad)
    usage_error(["rotate", "--angle"], "--angle: missing value")
    usage_error(["flip", "--angle", "90", "in.png", "out.png"], "flip: unknown option '--angle'")
    usage_error(["transpose", "--tile", "u8"], "transpose: unknown option '--tile'")
    check(not any(n.startswith("out") for n in os.listdir(".")), "partial output")
    # The mask of a step after a turn must have the turned size.
    write("m.png", random_png(40, 30, 1, 9))
    expect_error(run("transpose", "then", "portrait", "--mask", "m.png", "--backend", "cpu",
                     "in.png", "out.png"), EXIT_INPUT,
                 "m.png: mask is 40x30 but the image is 30x40 at step 2 (portrait; it was 40x30)")
    write("m2.png", random_png(30, 40, 1, 10))
    expect_ok(cpu("rotate", "--angle", "270", "then", "portrait", "--mask", "m2.png", "in.png",
                  "out.png"), stdout_expected=False)


@test("rotate")
def report():
    write("in.png", random_png(5, 3, 3, 11))
    res = expect_ok(cpu("rotate", "--angle", "270", "then", "flop", "--naive", "--report", "-",
                        "in.png", "out.png"))
    rep = load_report(res.out)
    st = stage(rep, "rotate")
    check(st["options"] == {"angle": 270}, str(st))
    check((st["output_width"], st["output_height"]) == (3, 5), str(st))
    st = stage(rep, "flop")
    check(st["variant"] == "naive" and (st["output_width"], st["output_height"]) == (3, 5), str(st))
