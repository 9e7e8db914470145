# cli_resize.py: test_cli.py's group resize: the resize operation from the command line: sizes,
# usage errors with their exit codes and messages, a mask after a resize, the report and
# --explain, and JPEG shrink-on-load (the same size as --exact-decode, within its tolerance).

import os

from gpuimg_testlib import (
    EXIT_INPUT, built_with, check, cpu, expect_error, expect_ok, path, png_decode, random_png, read,
    run, test, write)
from cli_common import check_no_leftovers, load_report, stage, usage_error


def size_of(name):
    w, h = png_decode(read(name))[:2]
    return w, h


@test("resize")
def sizes():
    write("in.png", random_png(40, 30, 3, 7))
    for opts, want in ((["--width", "20"], (20, 15)), (["--height", "7"], (9, 7)),
                       (["--width", "5", "--height", "50"], (5, 50)), (["--scale", "0.5"], (20, 15)),
                       (["--scale", "1.55"], (62, 47)), (["--fit", "10x10"], (10, 8)),
                       (["--fit", "100x60"], (80, 60)), (["--width", "1"], (1, 1))):
        expect_ok(cpu("resize", *opts, "in.png", "out.png"), stdout_expected=False)
        check(size_of("out.png") == want, "resize %s: %r, want %r" % (opts, size_of("out.png"),
                                                                       want))


@test("resize")
def errors():
    usage_error(["resize"], "resize: no size given (--width, --height, --scale or --fit)")
    usage_error(["resize", "--width", "3", "--scale", "2"],
                "resize: give one of --width/--height, --scale and --fit")
    usage_error(["resize", "--width", "0"],
                "--width: invalid value '0' (expected an integer from 1 to 1073741824)")
    usage_error(["resize", "--scale", "0"],
                "--scale: invalid value '0' (expected a number above 0, at most 1000)")
    usage_error(["resize", "--fit", "10"],
                "--fit: invalid value '10' (expected WxH, each from 1 to 1073741824)")
    usage_error(["resize", "--filter", "cubic"],
                "--filter: invalid value 'cubic' (expected auto, area or bilinear)")
    write("in.png", random_png(40, 30, 3, 8))
    usage_error(["resize", "--scale", "100", "--max-pixels", "100000", "in.png", "over.png"],
                "resize: a 40x30 image would become 4000x3000, over the limit of 100000 pixels "
                "(see --max-pixels)")
    check(not os.path.exists(path("over.png")), "an output was written")
    check_no_leftovers()
    write("m.png", random_png(40, 30, 1, 9))
    expect_error(run("resize", "--width", "20", "then", "portrait", "--mask", "m.png",
                     "--backend", "cpu", "in.png", "over.png"), EXIT_INPUT,
                 "m.png: mask is 40x30 but the image is 20x15 at step 2 (portrait; it was 40x30)")
    check(not os.path.exists(path("over.png")), "an output was written")
    check_no_leftovers()


@test("resize")
def report_and_explain():
    res = cpu("gray", "then", "resize", "--fit", "512x512", "then", "blur", "-r", "2",
              "--report", "-", "--explain")
    check(res.rc == 0, "exit %d" % res.rc, res)
    rep = load_report(res.out)
    st = stage(rep, "resize")
    check(st["options"] == {"fit_width": 512, "fit_height": 512, "filter": "auto"}, str(st))
    check((st["output_width"], st["output_height"]) == (512, 384), str(st))
    check(b"resize -> 512x384: CPU backend" in res.err, "explain: %r" % res.err)
    check(b"\nblur: CPU backend" in res.err, "explain: %r" % res.err)  # 512x384 as it read


@test("resize")
def shrink_on_load():
    expect_ok(cpu("resize", "--width", "1600", "--height", "1200", "sample:", "big.jpg"),
              stdout_expected=False)
    res = expect_ok(cpu("resize", "--width", "300", "big.jpg", "a.png", "--report", "-"))
    # 1600 -> 300 shrinks 5.3 times: 1/2 (1/4 would leave the area resize less than 2x).
    want = 2 if built_with("libjpeg") else None  # only libjpeg decodes reduced
    check(load_report(res.out)["input"].get("decoded_at_1_in") == want, res.out[:400])
    expect_ok(cpu("resize", "--width", "300", "--exact-decode", "big.jpg", "b.png"),
              stdout_expected=False)
    a, b = png_decode(read("a.png")), png_decode(read("b.png"))
    check(a[:3] == b[:3] == (300, 225, 3), "sizes %r %r" % (a[:3], b[:3]))
    d = [abs(x - y) for x, y in zip(a[-1], b[-1])]
    check(max(d) <= 8 and sum(d) / len(d) <= 0.45, "max %d mean %.2f" % (max(d),
                                                                       sum(d) / len(d)))
    res = expect_ok(cpu("resize", "--width", "800", "big.jpg", "d.png", "--report", "-"))
    check("decoded_at_1_in" not in load_report(res.out)["input"], "a 2x shrink was shrunk on load")
    res = expect_ok(cpu("resize", "--width", "400", "big.jpg", "d.png", "--report", "-"))
    check(load_report(res.out)["input"].get("decoded_at_1_in") == want, res.out[:400])
    res = expect_ok(cpu("resize", "--width", "300", "--filter", "bilinear", "big.jpg", "c.png",
                        "--report", "-"))
    check("decoded_at_1_in" not in load_report(res.out)["input"], "bilinear was shrunk on load")
