# cli_stats.py: test_cli.py's group stats: the stats operation's figures against a brute-force
# count written here on its own (odd sizes, 1-4 channels), the image passing through, where the
# figures go (stdout, the report, not with OUTPUT -), batches, shards and `gpuimg summary`, its
# usage errors; and equalize and normalize, the histogram's two-phase operations, against their
# definitions written here.

import json
import math

from gpuimg_testlib import (
    EXIT_INPUT, check, cpu, expect_error, expect_ok, png_decode, png_encode_8bit, random_png, read,
    run, test, write)
from cli_common import load_report, same_image, stage, usage_error


def brute_force(img):
    """Per channel: count, sum, sum of squares, min, max, histogram, mean and std as the man page
    defines them (std: sqrt((n * sumsq - sum^2) / n^2), one rounding to double each step)."""
    w, h, c, px = img
    out = []
    for k in range(c):
        values = px[k::c]
        hist = [0] * 256
        for v in values:
            hist[v] += 1
        n, s, sq = len(values), sum(values), sum(v * v for v in values)
        out.append({"count": n, "sum": s, "sum_squares": sq, "min": min(values),
                    "max": max(values), "mean": s / n,
                    "std": math.sqrt(float(n * sq - s * s) / (float(n) * float(n))),
                    "histogram": hist})
    return out


def run_summary(*args):
    return run("summary", *args)


def figures(res):
    """The one JSON line a one-image stats run prints."""
    lines = res.out.decode().splitlines()
    check(len(lines) == 1, "expected one line of figures", res)
    return json.loads(lines[0])


@test("stats")
def against_brute_force():
    for w, h in ((1, 1), (1, 7), (7, 1), (33, 17), (2, 5)):
        for c in (1, 2, 3, 4):
            write("in.png", random_png(w, h, c, 1000 * w + 10 * h + c))
            rec = figures(expect_ok(cpu("stats", "in.png")))
            want = brute_force(png_decode(read("in.png")))
            check(rec["result"]["channels"] == want,
                  "stats of %dx%dx%d: %r, expected %r" % (w, h, c, rec["result"], want))
            check((rec["input"], rec["width"], rec["height"], rec["step"], rec["operation"]) ==
                  ("in.png", w, h, 0, "stats"), "record head %r" % rec)


@test("stats")
def flat_and_extreme_images():
    # One value everywhere (std exactly 0), and only 0 and 255 (the largest squares).
    for name, pixels in (("flat", bytes([77]) * 35), ("ends", bytes([0, 255] * 17 + [255]))):
        write("in.png", png_encode_8bit(7, 5, 1, pixels))
        ch = figures(expect_ok(cpu("stats", "in.png")))["result"]["channels"][0]
        check(ch == brute_force((7, 5, 1, pixels))[0], "%s: %r" % (name, ch))
    check(ch["std"] > 0 and ch["min"] == 0 and ch["max"] == 255, "ends: %r" % ch)


@test("stats")
def image_passes_through():
    write("in.png", random_png(13, 9, 4, 7))
    img = png_decode(read("in.png"))
    res = expect_ok(cpu("stats", "in.png", "out.png"))
    same_image(png_decode(read("out.png")), img, "stats's output")
    check(figures(res)["result"]["channels"] == brute_force(img), "figures with OUTPUT", res)
    # In a chain: the figures of the step's input; the next step sees the image unchanged.
    res = expect_ok(cpu("gray", "then", "stats", "then", "flop", "in.png", "out.png"))
    gray = png_decode(read("out.png"))
    expect_ok(cpu("gray", "then", "flop", "in.png", "want.png"), stdout_expected=False)
    same_image(gray, png_decode(read("want.png")), "gray then stats then flop")
    expect_ok(cpu("gray", "in.png", "g.png"), stdout_expected=False)
    rec = figures(res)
    check(rec["step"] == 1 and rec["result"]["channels"] == brute_force(png_decode(read("g.png"))),
          "the figures of gray's result", res)
    # Two analyses: a line each, in step order.
    res = expect_ok(cpu("stats", "then", "gray", "then", "stats", "in.png"))
    lines = [json.loads(s) for s in res.out.decode().splitlines()]
    check([r["step"] for r in lines] == [0, 2] and len(lines[1]["result"]["channels"]) == 2,
          "two stats steps", res)


@test("stats")
def where_the_figures_go():
    write("in.png", random_png(11, 3, 3, 9))
    want = brute_force(png_decode(read("in.png")))
    # OUTPUT -: stdout carries the image, the figures are not printed.
    res = expect_ok(cpu("stats", "in.png", "-"))
    check(res.out[:8] == b"\x89PNG\r\n\x1a\n", "OUTPUT - writes the PNG alone", res)
    # --report FILE: in the stage's result, and still on stdout; --report -: the report alone.
    res = expect_ok(cpu("stats", "in.png", "--report", "rep.json"))
    check(figures(res)["result"]["channels"] == want, "stdout with --report FILE", res)
    st = stage(load_report(read("rep.json")), "stats")
    check(st["result"]["channels"] == want and st["variant"] == "shuffle" and
          st["options"] == {"histogram": "shared"}, "the report's stats stage: %r" % st)
    res = expect_ok(cpu("stats", "in.png", "--report", "-"))
    rep = load_report(res.out)
    check(stage(rep, "stats")["result"]["channels"] == want, "--report -", res)
    # The variants name CUDA kernels; on the CPU backend the figures are the same.
    res = expect_ok(cpu("stats", "--variant", "2", "--histogram", "global", "in.png",
                        "--report", "rep.json"))
    st = stage(load_report(read("rep.json")), "stats")
    check(figures(res)["result"]["channels"] == want and st["variant"] == "2" and
          st["options"] == {"histogram": "global"}, "stats --variant 2: %r" % st)


@test("stats")
def errors():
    write("in.png", random_png(5, 4, 3, 2))
    usage_error(["stats", "--variant", "8", "in.png"],
                "--variant: invalid value '8' (expected 1, 2, 3, 4, 5, 6, 7, shuffle or cub)")
    usage_error(["stats", "--variant", "0", "in.png"],
                "--variant: invalid value '0' (expected 1, 2, 3, 4, 5, 6, 7, shuffle or cub)")
    usage_error(["stats", "--histogram", "local", "in.png"],
                "--histogram: invalid value 'local' (expected shared, global or cub)")
    usage_error(["stats", "--variant", "in.png"],
                "--variant: invalid value 'in.png' (expected 1, 2, 3, 4, 5, 6, 7, shuffle or cub)")
    usage_error(["gray", "--variant", "3", "in.png"], "gray: unknown option '--variant'")
    write("bad.png", b"\x89PNG\r\n\x1a\nnot really")
    res = cpu("stats", "bad.png")
    check(res.rc == EXIT_INPUT and res.out == b"", "a bad input: exit 3, no figures", res)
    expect_error(cpu("stats", "missing.png"), EXIT_INPUT,
                 "missing.png: No such file or directory")


@test("stats")
def explain_without_a_gpu():
    # The reduction kernels' model: the sample (1024x768 RGB), 256-thread blocks.
    def line(*args):
        res = cpu("stats", *args, "--explain", "--device", "a100")
        check(res.rc == 0, "stats --explain", res)
        return res.err.decode().splitlines()[1]
    two, three = line("--variant", "2"), line("--variant", "3")
    check("reduce_strided_kernel (one of 2 launches), 256x1 blocks, 15.0 KB shared "
          "each" in two and
          "3,072 blocks in 3.6 waves (864 resident)" in two and
          "shared loads 4 B/lane 8 B apart: 2-way bank conflict" in two, two)
    check("reduce_sequential_kernel" in three and
          "shared loads 4 B/lane 4 B apart: 1-way bank conflict" in three, three)
    four = line("--variant", "4")
    check("reduce_first_add_kernel" in four and "1,536 blocks" in four, four)
    shuffle = line()
    check("stats shuffle: predicted for a100: reduce_shuffle_kernel" in shuffle and
          "864 blocks in 1.0 waves (864 resident)" in shuffle, shuffle)
    cub = line("--variant", "cub")
    check("not predicted: no launch of its own kernels to model" in cub, cub)


def dataset_total(images):
    """The figures over every value of every image: channel k over the images that have it."""
    total = []
    for k in range(max(img[2] for img in images)):
        values = bytearray()
        for w, h, c, px in images:
            if k < c:
                values += px[k::c]
        total.append(brute_force((len(values), 1, 1, bytes(values)))[0])
    return total


@test("stats")
def batch_and_shards():
    shapes = ((33, 17, 3), (1, 7, 1), (9, 4, 4), (5, 5, 2), (12, 3, 3))
    names = []
    for i, (w, h, c) in enumerate(shapes):
        names.append("b%d.png" % i)
        write(names[-1], random_png(w, h, c, 77 + i))
    images = [png_decode(read(n)) for n in names]
    res = cpu("stats", "-o", "out", "--jobs", "3", "--report", "rep.jsonl", *names)
    check(res.rc == 0, "stats -o out", res)
    lines = [json.loads(s) for s in res.out.decode().splitlines()]
    check([r.get("input") for r in lines[:-1]] == names, "a line per image in input order", res)
    for r, img in zip(lines, images):
        check(r["result"]["channels"] == brute_force(img), "%s's figures" % r["input"])
    want = dataset_total(images)
    last = lines[-1]
    check(last["total"] is True and last["images"] == 5 and last["step"] == 0 and
          last["result"]["channels"] == want, "the dataset's total: %r" % last)
    for n, img in zip(names, images):
        same_image(png_decode(read("out/" + n)), img, "out/" + n)
    summary = json.loads(read("rep.jsonl").decode().splitlines()[-1])
    check(summary["results"] == [{"images": 5, "step": 0, "operation": "stats",
                                  "result": {"channels": want}}],
          "the summary line's results: %r" % summary.get("results"))
    # Shards: their totals add up to the whole's, exactly, in `gpuimg summary`.
    for k in (1, 2, 3):
        res = cpu("stats", "-o", "sh", "--shard", "%d/3" % k, "--report", "s%d.jsonl" % k, *names)
        check(res.rc == 0, "shard %d/3" % k, res)
    res = expect_ok(run_summary("--format", "json", "s1.jsonl", "s2.jsonl", "s3.jsonl"))
    merged = json.loads(res.out)["results"]
    check(merged == [{"images": 5, "step": 0, "operation": "stats",
                      "result": {"channels": want}}], "summary of the shards: %r" % merged)
    text = expect_ok(run_summary("s1.jsonl", "s2.jsonl", "s3.jsonl")).out.decode()
    mean0 = want[0]["sum"] / want[0]["count"]
    check("stats        step 0, 5 images\n" in text and
          "step 0, channel 0: %d values, mean %.6f" % (want[0]["count"], mean0) in text, text)
    # --report -: standard output is the report's, the figures in its lines (an image's line is
    # the report's JSON read and written again: its mean and std to 15 significant digits).
    res = cpu("stats", "-o", "out4", "--report", "-", *names)
    rep = [json.loads(s) for s in res.out.decode().splitlines()]
    check(res.rc == 0 and rep[-1]["results"][0]["result"]["channels"] == want,
          "batch --report -", res)
    for r, img in zip(rep[:-1], images):
        for got, exp in zip(stage(r, "stats")["result"]["channels"], brute_force(img)):
            for key in exp:
                inexact = key in ("mean", "std")
                check(abs(got[key] - exp[key]) <= 1e-14 * exp[key] if inexact else
                      got[key] == exp[key],
                      "%s in %s's report line: %r, expected %r" % (key, r["input"]["name"],
                                                                   got[key], exp[key]))


# ---------------------------------------------------------------------------------------------
# equalize and normalize: the histogram's two-phase operations, against their definitions

def colours(c):
    """The channels equalize and normalize change: all but alpha (the last of 2 and 4)."""
    return c - 1 if c in (2, 4) else c


def mapped(img, table_of):
    """img with each colour channel's values v replaced by table_of(values)[v]."""
    w, h, c, px = img
    out = bytearray(px)
    for k in range(colours(c)):
        table = table_of(px[k::c])
        out[k::c] = bytes(table[v] for v in px[k::c])
    return w, h, c, bytes(out)


def equalized(values):
    """round(255 * (cdf(v) - cdf_min) / (n - cdf_min)), halves up; one value: kept."""
    n = len(values)
    cdf_min = values.count(min(values))
    if n == cdf_min:
        return list(range(256))
    table = []
    for v in range(256):
        cdf = sum(1 for x in values if x <= v)
        table.append(0 if cdf < cdf_min else (2 * 255 * (cdf - cdf_min) + (n - cdf_min)) //
                     (2 * (n - cdf_min)))
    return table


def normalized(clip):
    def table_of(values):
        n, c = len(values), len(values) * clip // 100
        s = sorted(values)
        lo, hi = s[c], s[n - 1 - c]  # more than c values at or below lo, at or above hi
        if hi <= lo:
            return list(range(256))
        return [0 if v <= lo else 255 if v >= hi else
                (2 * 255 * (v - lo) + (hi - lo)) // (2 * (hi - lo)) for v in range(256)]
    return table_of


def low_contrast(w, h, c, seed):
    """Values crowded into 90..130, alpha anywhere: what the two operations spread."""
    img = png_decode(random_png(w, h, c, seed))
    px = bytearray(img[3])
    for i in range(len(px)):
        if i % c < colours(c):
            px[i] = 90 + px[i] * 41 // 256
    return png_encode_8bit(w, h, c, bytes(px))


@test("stats")
def equalize_and_normalize_definitions():
    for w, h in ((1, 1), (1, 7), (7, 1), (33, 17), (2, 5)):
        for c in (1, 2, 3, 4):
            for make in (random_png, low_contrast):
                write("in.png", make(w, h, c, 31 * w + h + c))
                img = png_decode(read("in.png"))
                what = "%dx%dx%d %s" % (w, h, c, make.__name__)
                expect_ok(cpu("equalize", "in.png", "out.png"), stdout_expected=False)
                same_image(png_decode(read("out.png")), mapped(img, equalized), "equalize " + what)
                for clip in (0, 1, 5, 49):
                    expect_ok(cpu("normalize", "--clip", str(clip), "in.png", "out.png"),
                              stdout_expected=False)
                    same_image(png_decode(read("out.png")), mapped(img, normalized(clip)),
                               "normalize --clip %d %s" % (clip, what))


@test("stats")
def equalize_and_normalize_cases():
    # One value: kept by both; a stretched image spans 0..255 and normalizing it changes nothing.
    write("flat.png", png_encode_8bit(9, 4, 3, bytes([40, 90, 200]) * 36))
    for op in ("equalize", "normalize"):
        expect_ok(cpu(op, "flat.png", "out.png"), stdout_expected=False)
        same_image(png_decode(read("out.png")), png_decode(read("flat.png")), op + " of one value")
    write("in.png", low_contrast(40, 30, 3, 4))
    expect_ok(cpu("normalize", "in.png", "n.png"), stdout_expected=False)
    ch = figures(expect_ok(cpu("stats", "n.png")))["result"]["channels"]
    check([(x["min"], x["max"]) for x in ch] == [(0, 255)] * 3, "normalized range: %r" % ch)
    expect_ok(cpu("normalize", "n.png", "n2.png"), stdout_expected=False)
    same_image(png_decode(read("n2.png")), png_decode(read("n.png")), "normalize twice")
    # The report names the histogram kernel as the variant, and normalize's clip.
    expect_ok(cpu("normalize", "--clip", "3", "--histogram", "global", "in.png", "o.png",
                  "--report", "rep.json"))
    st = stage(load_report(read("rep.json")), "normalize")
    check(st["variant"] == "global" and st["options"] == {"clip": 3}, "normalize's stage %r" % st)
    usage_error(["normalize", "--clip", "50", "in.png"],
                "--clip: invalid value '50' (expected an integer from 0 to 49)")
    usage_error(["equalize", "--clip", "2", "in.png"], "equalize: unknown option '--clip'")
    usage_error(["equalize", "--histogram", "tree", "in.png"],
                "--histogram: invalid value 'tree' (expected shared, global or cub)")


@test("stats")
def equalize_explain_without_a_gpu():
    res = cpu("equalize", "--explain", "--device", "h100")
    line = res.err.decode().splitlines()[1]
    check(res.rc == 0 and line.startswith("equalize shared: predicted for h100: lut_map_kernel "
                                          "(one of 2 launches),") and
          "1,056 blocks in 1.0 waves (1,056 resident)" in line and
          "loads 1 B/lane 1 B apart: 1 sector/request (100% used)" in line, line)
