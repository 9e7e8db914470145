#!/usr/bin/env python3
# test_batch.py: end-to-end tests of batch mode (gpuimg OP -o DIR INPUT...) on the CPU backend.
"""Runs the gpuimg binary named by $GPUIMG in batch mode and checks what it does.

Usage: test_batch.py GROUP...   (groups: failures, determinism, names, lists, shard,
                                 parallel, usage, terminal; 'all' runs every group)

Environment:
  GPUIMG           the binary under test (required)
  GPUIMG_TEST_DIR  where scratch directories go (default: the current directory);
                   each group works in batch-<group>/, kept after a failure

Expected failures check the exact exit status and stderr lines. The shard hash is
recomputed here (FNV-1a 64 over the path's bytes, shard K keeps hash % N == K-1), so the
documented partition is what is tested. Exit 77 (skipped) for the 'parallel' group when
GNU parallel is not installed. Standard library only; small images, so the whole suite
takes seconds.
"""

import json
import os
import pty
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import gpuimg_testlib as testlib  # noqa: E402
from gpuimg_testlib import (  # noqa: E402
    EXIT_DEVICE, EXIT_INPUT, EXIT_OK, EXIT_OUTPUT, EXIT_USAGE, GPUIMG, PNG_SIGNATURE, USAGE,
    Failure, Skip, check, expect_error, path, random_png, read, test)
from gpuimg_testlib import cpu as run  # noqa: E402  (batch mode on the CPU backend)

SUMMARY = re.compile(rb"^gpuimg: (\d+) converted, (\d+) failed, (\d+) skipped \(shard\) "
                     rb"in \d+\.\d\d s \(\d+\.\d images/s\)$")
PNG, JPEG, BMP, TGA = PNG_SIGNATURE, b"\xff\xd8\xff", b"BM", None


def summary(res):
    """(converted, failed, skipped) from the last stderr line."""
    lines = res.lines()
    m = SUMMARY.match(lines[-1]) if lines else None
    check(m is not None, "no summary line at the end of stderr", res)
    return tuple(int(x) for x in m.groups())


def expect_usage(args, message):
    expect_error(run(*args), EXIT_USAGE, message)


def fnv1a64(data):
    h = 0xCBF29CE484222325
    for byte in data:
        h ^= byte
        h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def files_of(directory):
    """{name: bytes} of the regular files in directory (names as bytes)."""
    out = {}
    for name in os.listdir(os.fsencode(directory)):
        full = os.path.join(os.fsencode(directory), name)
        if os.path.isfile(full):
            with open(full, "rb") as f:
                out[name] = f.read()
    return out


def temporaries(directory):
    return [n for n in os.listdir(directory) if n.startswith(".")]


def write_png(full_path, w, h, c, seed):
    with open(full_path, "wb") as f:
        f.write(random_png(w, h, c, seed))


def make_inputs(directory, n, seed=0):
    """n small PNGs of assorted sizes and layouts in path(directory); returns their paths
    (relative to path(), where gpuimg runs) in order."""
    os.makedirs(path(directory), exist_ok=True)
    paths = []
    for i in range(n):
        w, h, c = 17 + (i * 7) % 40, 9 + (i * 5) % 30, 1 + i % 4
        name = os.path.join(directory, "%s%02d.png" % (os.path.basename(directory), i))
        write_png(path(name), w, h, c, seed + i)
        paths.append(name)
    return paths


def make_samples(directory, n):
    """n copies of the built-in 1024x768 sample as PNGs: slow enough to watch or interrupt."""
    os.makedirs(path(directory), exist_ok=True)
    first = os.path.join(directory, "s0.png")
    res = run("blur", "-r", "0", "-q", "sample:", first)
    check(res.rc == 0, "writing the sample", res)
    paths = [first]
    for i in range(1, n):
        paths.append(os.path.join(directory, "s%d.png" % i))
        shutil.copyfile(path(first), path(paths[-1]))
    return paths


def fresh(name):
    shutil.rmtree(path(name), ignore_errors=True)
    return name


def read_report(name):
    """The report's objects, each line parsed on its own from strict UTF-8."""
    data = read(name)
    check(data.endswith(b"\n"), "the report does not end with a newline")
    objs = []
    for i, line in enumerate(data.split(b"\n")[:-1]):
        try:
            objs.append(json.loads(line.decode("utf-8", errors="strict")))
        except (UnicodeDecodeError, ValueError) as e:
            raise Failure("report line %d is not strict UTF-8 JSON: %s: %r" % (i + 1, e, line))
    return objs


# ---------------------------------------------------------------------------------------------
# failures: keep going, the exit status, the report

@test("failures")
def corrupt_file_among_61():
    inputs = make_inputs("in61", 60)
    # A name that is not UTF-8 must still give a strict UTF-8 report.
    odd = os.path.join(b"in61", b"caf\xe9.png")
    os.rename(path(os.fsencode(inputs[7])), path(odd))
    inputs[7] = odd
    with open(path("in61", "broken.png"), "wb") as f:
        f.write(PNG_SIGNATURE + b"\x00\x00\x00\x0dIHDR" + b"\x00" * 5)
    inputs.insert(30, os.path.join("in61", "broken.png"))
    res = run("gray", "-j", "4", "-o", fresh("out61"), "--report", "r61.jsonl", *inputs)
    check(res.rc == EXIT_INPUT, "expected exit 3 (an input failed)", res)
    lines = res.lines()
    check(len(lines) == 2, "expected one failure line and the summary", res)
    check(lines[0].startswith(b"gpuimg: in61/broken.png: cannot decode PNG: "),
          "the failure line names the bad file", res)
    check(summary(res) == (60, 1, 0), "expected 60 converted, 1 failed", res)
    out = files_of(path("out61"))
    check(len(out) == 60 and b"broken.png" not in out and b"caf\xe9.png" in out,
          "expected the 60 good outputs, got %r" % sorted(out), res)
    for data in out.values():
        check(data.startswith(PNG), "an output is not a PNG")

    objs = read_report("r61.jsonl")
    check(len(objs) == 62, "expected 61 image lines and a summary, got %d" % len(objs))
    for i, o in enumerate(objs[:-1]):
        check(o["index"] == i, "report lines are not in input order: %r" % o)
        want = os.fsdecode(inputs[i]) if isinstance(inputs[i], bytes) else inputs[i]
        if i != 7:
            check(o["input"]["name"] == want, "line %d names %r, not %r" % (
                i, o["input"]["name"], want))
        if i == 30:
            check(o["status"] == "failed" and o["exit_code"] == EXIT_INPUT and
                  o["error"].startswith("in61/broken.png: cannot decode PNG: ") and
                  "stages" not in o, "the failed line: %r" % o)
        else:
            check(o["status"] == "ok", "line %d: %r" % (i, o))
            check(o["backend"] == "cpu" and o["device_index"] is None and
                  0 <= o["worker"] < 4, "line %d: backend and worker: %r" % (i, o))
            names = [s["name"] for s in o["stages"]]
            check(names == ["read", "decode", "gray", "encode", "write"],
                  "line %d: stages %r" % (i, names))
            check(set(o["stage_ms"]) == {"read", "decode", "gray", "encode", "write"},
                  "line %d: stage_ms %r" % (i, o["stage_ms"]))
            tl = o["timeline_ms"]
            check(set(tl) == {"load", "steps", "store"} and
                  all(tl[k] is not None and len(tl[k]) == 2 and 0 <= tl[k][0] <= tl[k][1]
                      for k in tl) and
                  tl["load"][1] <= tl["steps"][0] and tl["steps"][1] <= tl["store"][0],
                  "line %d: timeline %r" % (i, tl))
            check(o["output"]["format"] == "png" and o["output"]["channels"] ==
                  (2 if o["input"]["channels"] in (2, 4) else 1), "line %d: output %r" % (i, o))
    check(objs[7]["input"]["name"] == "in61/caf\ufffd.png",
          "the non-UTF-8 name is not sanitised: %r" % objs[7]["input"]["name"])
    s = objs[-1]
    check(s["summary"] is True and s["images"] == 61 and s["converted"] == 60 and
          s["failed"] == 1 and s["skipped"] == 0 and s["exit_status"] == EXIT_INPUT and
          s["jobs"] == 4 and s["backend"] == "cpu" and s["devices"] == [] and
          s["shard"] is None, "summary: %r" % s)
    check(s["wall_ms"] > 0 and s["images_per_s"] > 0, "summary timing: %r" % s)
    check(all(o["timeline_ms"]["store"][1] <= s["wall_ms"] for o in objs[:-1]
              if o["status"] == "ok"), "an image's timeline ends after the batch")
    check(set(s["stage_totals_ms"]) == {"read", "decode", "gray", "encode", "write"},
          "summary stage totals: %r" % s["stage_totals_ms"])
    total = sum(o["stage_ms"]["encode"] for o in objs[:-1] if o["status"] == "ok")
    check(abs(total - s["stage_totals_ms"]["encode"]) < 0.01 + 1e-3 * total,
          "encode total %r is not the sum of the images' %r" % (
              s["stage_totals_ms"]["encode"], total))
    check(s["device_busy_ms"] == 0 and s["device_hidden_pct"] == 0,
          "no device time on the CPU: %r" % s)
    busy = s["busy_pct"]
    check(set(busy) == {"hw_decoder", "jpeg_encoder", "device", "worker", "host_cpu"} and
          0 < busy["host_cpu"] <= 100 and s["cpu_ms"] > 0 and
          busy["hw_decoder"] == busy["jpeg_encoder"] == busy["device"] == 0 and
          0 < busy["worker"] <= 100 and s["bound"] in ("worker", "host_cpu") and
          s["jpeg_encode_ms"] == 0 and s["device_share"] == 0 and s["device_workers"] == 0 and
          s["host_decode_share"] == 0 and
          s["jpeg_request_ms"] == {k: {"queued": 0, "served": 0, "woken": 0}
                                   for k in ("decode", "encode")},
          "busy shares on the CPU: %r" % s)
    check(not temporaries(path("out61")), "temporary files left behind")


@test("failures")
def exit_status_is_the_largest_code():
    inputs = make_inputs("inx", 3, seed=100)
    fresh("outx")
    # input 1 is missing (3); input 2's output exists (4): the status is 4.
    os.makedirs(path("outx"))
    write_png(path("outx", "inx02.png"), 3, 3, 3, 1)
    res = run("gray", "-j", "2", "-o", "outx", inputs[0], "inx/missing.png", inputs[2])
    check(res.rc == EXIT_OUTPUT, "expected exit 4", res)
    lines = sorted(res.lines()[:-1])
    check(lines == [b"gpuimg: inx/missing.png: No such file or directory",
                    b"gpuimg: outx/inx02.png: exists (use --force to replace it)"],
          "failure lines", res)
    check(summary(res) == (1, 2, 0), "counts", res)
    # Only bad inputs: 3. Nothing failed: 0 with the summary alone.
    res = run("gray", "-o", fresh("outy"), inputs[0], "inx/missing.png")
    check(res.rc == EXIT_INPUT and summary(res) == (1, 1, 0), "expected exit 3", res)
    res = run("gray", "-o", fresh("outz"), *inputs)
    check(res.rc == EXIT_OK and len(res.lines()) == 1 and summary(res) == (3, 0, 0),
          "expected exit 0 and only the summary", res)
    res = run("gray", "-q", "-o", fresh("outq"), *inputs)
    check(res.rc == EXIT_OK and res.err == b"", "-q: nothing on stderr", res)


@test("failures")
def masks_must_match_each_image():
    fresh("inm")
    os.makedirs(path("inm"))
    write_png(path("inm", "a.png"), 20, 10, 3, 1)
    write_png(path("inm", "b.png"), 21, 10, 3, 2)
    write_png(path("inm", "c.png"), 20, 10, 4, 3)
    write_png(path("mask.png"), 20, 10, 1, 4)
    res = run("portrait", "-r", "2", "--mask", "mask.png", "-o", fresh("outm"),
              "inm/a.png", "inm/b.png", "inm/c.png")
    check(res.rc == EXIT_INPUT, "expected exit 3", res)
    check(res.lines()[0] == b"gpuimg: inm/b.png: mask mask.png is 20x10 but the image is 21x10",
          "the mismatch line", res)
    check(sorted(files_of(path("outm"))) == [b"a.png", b"c.png"], "outputs", res)
    # The same pixels as the one-image path.
    one = run("portrait", "-r", "2", "--mask", "mask.png", "inm/c.png", "one.png")
    check(one.rc == 0, "one-image run", one)
    with open(path("one.png"), "rb") as f:
        check(f.read() == files_of(path("outm"))[b"c.png"],
              "batch and one-image outputs differ")
    # An unreadable mask stops the batch before any work.
    res = run("portrait", "--mask", "nomask.png", "-o", fresh("outn"), "inm/a.png")
    check(res.rc == EXIT_INPUT and res.err == b"gpuimg: nomask.png: No such file or directory\n",
          "a missing mask", res)


# ---------------------------------------------------------------------------------------------
# determinism: output bytes depend neither on --jobs nor on the path taken

@test("determinism")
def jobs_do_not_change_bytes():
    inputs = make_inputs("ind", 24, seed=200)
    pipelines = [["gray"], ["blur", "-r", "3", "then", "checkerboard", "--cell", "4"]]
    for k, ops in enumerate(pipelines):
        got = []
        for jobs in ("1", "4", "7"):
            out = fresh("outd%d-%s" % (k, jobs))
            res = run(*ops, "-q", "-j", jobs, "-o", out, "--format", "png", *inputs)
            check(res.rc == 0 and res.err == b"", "batch run", res)
            got.append(files_of(path(out)))
        check(len(got[0]) == 24 and got[0] == got[1] == got[2],
              "outputs differ between --jobs 1, 4 and 7 (%s)" % " ".join(ops))
        # ... and from the one-image path.
        for p in inputs[:3]:
            res = run(*ops, "-q", p, "single.png")
            check(res.rc == 0, "one-image run", res)
            with open(path("single.png"), "rb") as f:
                check(f.read() == got[0][os.fsencode(os.path.basename(p))],
                      "batch output of %s differs from the one-image output" % p)


@test("failures")
def batch_reports_feed_compare():
    inputs = make_inputs("inrep", 4, seed=150)
    res = run("gray", "-q", "-o", fresh("outrep"), "--report", "rep.jsonl", *inputs)
    check(res.rc == 0, "batch run", res)
    p = subprocess.run([GPUIMG, "compare", "rep.jsonl", "rep.jsonl"], cwd=path(),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    check(p.returncode == 0 and b"4 reports, cpu" in p.stdout and b"no regression" in p.stdout,
          "gpuimg compare on a batch report: exit %d %r %r" % (p.returncode, p.stdout, p.stderr))


# ---------------------------------------------------------------------------------------------
# mixed: images of very different sizes decoded at once

@test("mixed")
def mixed_sizes_decode_concurrently():
    # Decodes of different sizes run at once: each must be checked against its own
    # allocation limit (a limit shared between threads refuses the larger image's buffers
    # as "corrupt image data"). 8 sample-sized images, one larger, some tiny ones.
    inputs = make_samples("inmix", 8)
    for w, h, c in ((1500, 999, 3), (1, 1, 3), (37, 1, 1), (33, 17, 2)):
        name = os.path.join("inmix", "odd-%dx%dx%d.png" % (w, h, c))
        write_png(path(name), w, h, c, w + h + c)
        inputs.insert(0 if w > 1000 else len(inputs), name)  # the large one first
    for attempt in range(3):
        res = run("gray", "-j", "4", "--format", "bmp", "-o", fresh("outmix"), *inputs)
        check(res.rc == 0 and summary(res) == (12, 0, 0),
              "attempt %d: every image must convert (a failure here that the one-image path "
              "does not show means decoder state shared between threads, e.g. "
              "codec_stb.c's allocation limit)" % attempt, res)
    # One image at a time: the batch's bytes, alone in the output directory.
    for p in inputs[:1] + inputs[-3:]:
        name = os.path.splitext(os.path.basename(p))[0] + ".bmp"
        res = run("gray", "-q", "--format", "bmp", "-o", fresh("outone"), p)
        check(res.rc == 0 and res.err == b"" and os.listdir(path("outone")) == [name],
              "one image: expected outone/%s alone" % name, res)
        check(read(os.path.join("outone", name)) == read(os.path.join("outmix", name)),
              "%s: one image alone converts to other bytes than in the batch" % name, res)


# ---------------------------------------------------------------------------------------------
# names: formats, existing outputs, inputs never overwritten, duplicates

@test("names")
def output_names_and_formats():
    fresh("inf")
    os.makedirs(path("inf"))
    write_png(path("inf", "p.png"), 30, 20, 3, 1)
    write_png(path("inf", "noext"), 30, 20, 3, 2)
    write_png(path("inf", "odd.dat"), 30, 20, 3, 3)
    write_png(path("inf", ".hidden"), 30, 20, 3, 4)
    write_png(path("inf", "two.dots.png"), 30, 20, 3, 5)
    check(run("blur", "-r", "0", "inf/p.png", "inf/j.jpeg").rc == 0, "making a JPEG")
    check(run("blur", "-r", "0", "inf/p.png", "inf/u.JPG").rc == 0, "making a JPEG")
    ins = ["inf/p.png", "inf/noext", "inf/odd.dat", "inf/.hidden", "inf/two.dots.png",
           "inf/j.jpeg", "inf/u.JPG"]
    # The input's own format: its extension kept as spelled; unknown -> .png.
    res = run("gray", "-q", "-o", fresh("out-own"), *ins)
    check(res.rc == 0, "own formats", res)
    out = files_of(path("out-own"))
    want = {b"p.png": PNG, b"noext.png": PNG, b"odd.png": PNG, b".hidden.png": PNG,
            b"two.dots.png": PNG, b"j.jpeg": JPEG, b"u.JPG": JPEG}
    check(set(out) == set(want), "names %r" % sorted(out))
    for name, magic in want.items():
        check(out[name].startswith(magic), "%r has the wrong format" % name)
    # --format replaces every extension.
    for fmt, magic, ext in (("jpg", JPEG, b".jpg"), ("bmp", BMP, b".bmp"), ("tga", None, b".tga"),
                            ("png", PNG, b".png")):
        res = run("gray", "-q", "--format", fmt, "-o", fresh("out-" + fmt), *ins)
        check(res.rc == 0, "--format " + fmt, res)
        out = files_of(path("out-" + fmt))
        check(sorted(out) == sorted([b"p", b"noext", b"odd", b".hidden", b"two.dots", b"j",
                                     b"u"][i] + ext for i in range(7)),
              "--format %s names %r" % (fmt, sorted(out)))
        for name, data in out.items():
            if magic:
                check(data.startswith(magic), "%r is not %s" % (name, fmt))
            else:  # TGA: uncompressed or RLE true-colour / gray, no magic at the start
                check(data[2] in (2, 3, 10, 11), "%r is not a TGA" % name)


@test("names")
def existing_outputs_and_force():
    inputs = make_inputs("ine", 3, seed=300)
    res = run("gray", "-q", "-o", fresh("oute"), *inputs)
    check(res.rc == 0, "first run", res)
    before = files_of(path("oute"))
    res = run("gray", "-o", "oute", *inputs)
    check(res.rc == EXIT_OUTPUT, "expected exit 4", res)
    check(sorted(res.lines()[:-1]) == [b"gpuimg: oute/ine%02d.png: exists (use --force to replace "
                                       b"it)" % i for i in range(3)], "exists lines", res)
    check(summary(res) == (0, 3, 0), "counts", res)
    check(files_of(path("oute")) == before, "outputs changed without --force")
    res = run("blur", "-r", "1", "-q", "--force", "-o", "oute", *inputs)
    check(res.rc == 0, "--force", res)
    after = files_of(path("oute"))
    check(set(after) == set(before) and all(after[k] != before[k] for k in after),
          "--force did not replace the outputs")
    check(not temporaries(path("oute")), "temporary files left behind")


@test("names")
def inputs_are_never_overwritten():
    inputs = make_inputs("inr", 2, seed=400)
    before = files_of(path("inr"))
    for extra in ([], ["--force"]):
        res = run("gray", *extra, "-o", "inr", *inputs)
        check(res.rc == EXIT_OUTPUT, "expected exit 4 %r" % extra, res)
        check(res.lines()[:-1] == [b"gpuimg: inr/inr%02d.png: is an input file (refusing to "
                                   b"overwrite it)" % i for i in range(2)], "refusal lines", res)
        check(files_of(path("inr")) == before, "an input changed")
    # The same directory spelled another way, and through a symbolic link to it.
    os.symlink("inr", path("inr-link"))
    for d in ("./inr/", "inr-link"):
        res = run("gray", "--force", "-o", d, inputs[0])
        check(res.rc == EXIT_OUTPUT and b"is an input file (refusing to overwrite it)" in res.err,
              "output dir %s" % d, res)
    # Another format into the same directory is fine.
    res = run("gray", "-q", "--format", "bmp", "-o", "inr", *inputs)
    check(res.rc == 0, "bmp beside the inputs", res)
    # A hard link and a symbolic link in DIR to an input: same file, refused with --force.
    fresh("outl")
    os.makedirs(path("outl"))
    os.link(path(inputs[0]), path("outl", "inr00.png"))
    os.symlink(os.path.abspath(path(inputs[1])), path("outl", "inr01.png"))
    res = run("gray", "--force", "-o", "outl", *inputs)
    check(res.rc == EXIT_OUTPUT, "links to inputs", res)
    # Each worker reports its own image, so the two lines come in either order.
    check(sorted(res.lines()[:-1]) == [b"gpuimg: outl/inr00.png: is an input file (refusing to "
                                       b"overwrite it)", b"gpuimg: outl/inr01.png: is an input "
                                       b"file (refusing to overwrite it)"], "link refusal lines",
          res)
    now = files_of(path("inr"))
    check(all(now[k] == v for k, v in before.items()), "an input changed")
    # An input list that names an output of the same batch: the writer is refused.
    fresh("outw")
    os.makedirs(path("outw"))
    write_png(path("outw", "inr00.png"), 5, 5, 3, 9)
    res = run("gray", "-o", "outw", "outw/inr00.png", inputs[0])
    check(res.rc == EXIT_OUTPUT, "an input in DIR", res)
    check(res.lines()[:-1] == [
        b"gpuimg: inr/inr00.png: output outw/inr00.png is already the output of outw/inr00.png",
        b"gpuimg: outw/inr00.png: is an input file (refusing to overwrite it)"],
        "the collision is refused", res)


@test("names")
def duplicate_output_names():
    fresh("dup")
    for d in ("a", "b", "c"):
        os.makedirs(path("dup", d))
        write_png(path("dup", d, "x.png"), 10, 10, 3, ord(d))
    for jobs in ("1", "3"):
        res = run("gray", "-j", jobs, "--format", "png", "-o", fresh("outdup"),
                  "dup/a/x.png", "dup/b/x.png", "dup/c/x.png", "dup/a/x.png")
        check(res.rc == EXIT_OUTPUT, "expected exit 4", res)
        check(res.lines()[:-1] == [
            b"gpuimg: dup/b/x.png: output outdup/x.png is already the output of dup/a/x.png",
            b"gpuimg: dup/c/x.png: output outdup/x.png is already the output of dup/a/x.png",
            b"gpuimg: dup/a/x.png: output outdup/x.png is already the output of dup/a/x.png"],
            "duplicate lines", res)
        check(summary(res) == (1, 3, 0), "counts", res)
        with open(path("outdup", "x.png"), "rb") as f:
            got = f.read()
        res = run("gray", "-q", "dup/a/x.png", "ref.png")
        with open(path("ref.png"), "rb") as f:
            check(got == f.read(), "the first input does not own the name")


@test("names")
def output_directory():
    inputs = make_inputs("ino", 1, seed=500)
    res = run("gray", "-q", "-o", fresh("newdir"), *inputs)
    check(res.rc == 0 and os.path.isfile(path("newdir", "ino00.png")),
          "a missing DIR is created", res)
    res = run("gray", "-o", "nodir/sub", *inputs)
    check(res.rc == EXIT_OUTPUT and res.err == b"gpuimg: nodir/sub: cannot create directory: "
          b"No such file or directory\n", "only one level is created", res)
    with open(path("notdir"), "wb") as f:
        f.write(b"x")
    res = run("gray", "-o", "notdir", *inputs)
    check(res.rc == EXIT_OUTPUT and res.err == b"gpuimg: notdir: not a directory\n",
          "DIR is a file", res)
    res = run("gray", "-o", "ino", "--report", "ino/ino00.png", "--format", "bmp", *inputs)
    check(res.rc == EXIT_OUTPUT and res.err == b"gpuimg: ino/ino00.png: output is the same file "
          b"as an input\n", "the report over an input", res)
    res = run("gray", "-o", "ino", "--report", "ino/ino00.bmp", "--format", "bmp", *inputs)
    want = b"gpuimg: ino/ino00.bmp: the report and an output image are the same file\n" + USAGE
    check(res.rc == EXIT_USAGE and res.err == want, "the report over an output", res)


# ---------------------------------------------------------------------------------------------
# lists: --from FILE and --from -

@test("lists")
def from_file_and_stdin():
    inputs = make_inputs("inl", 6, seed=600)
    listing = ("\n" + inputs[1] + "\r\n\n" + inputs[2] + "\n" + inputs[3]).encode()
    with open(path("list.txt"), "wb") as f:
        f.write(listing)
    res = run("gray", "-o", fresh("outl1"), "--report", "l1.jsonl", "--from", "list.txt",
              inputs[0])
    check(res.rc == 0 and summary(res) == (4, 0, 0), "--from FILE", res)
    names = [o["input"]["name"] for o in read_report("l1.jsonl")[:-1]]
    check(names == inputs[:4], "arguments first, then the list in order: %r" % names)
    res = run("gray", "-q", "-o", fresh("outl2"), "--from", "-", stdin=listing)
    check(res.rc == 0, "--from -", res)
    check(sorted(files_of(path("outl2"))) ==
          [os.fsencode(os.path.basename(p)) for p in inputs[1:4]], "outputs of --from -")
    res = run("gray", "-o", fresh("outl3"), "--from", "nolist.txt")
    check(res.rc == EXIT_INPUT and res.err == b"gpuimg: nolist.txt: No such file or directory\n",
          "a missing list", res)
    res = run("gray", "-o", fresh("outl4"), "--from", "-", stdin=b"")
    check(res.rc == 0 and summary(res) == (0, 0, 0), "an empty list", res)
    res = run("gray", "-o", fresh("outl5"), "--from", "-", stdin=b"inl/inl00.png\n-\n")
    check(res.rc == EXIT_INPUT and res.lines()[:-1] == [b"gpuimg: -: standard input cannot be a "
          b"batch input (name a file)"] and summary(res) == (1, 1, 0), "a '-' line", res)


# ---------------------------------------------------------------------------------------------
# shard: a deterministic, disjoint partition by FNV-1a 64 of the path

def shard_of(path, n):
    return fnv1a64(os.fsencode(path)) % n + 1


def make_shard_inputs():
    inputs = make_inputs("ins", 40, seed=700)
    with open(path("shard-list.txt"), "w") as f:
        f.write("\n".join(inputs) + "\n")
    res = run("blur", "-r", "1", "-q", "-o", fresh("out-all"), "--from", "shard-list.txt")
    check(res.rc == 0, "the unsharded run", res)
    return inputs, files_of(path("out-all"))


def check_union(inputs, everything, dirs):
    parts = [files_of(path(d)) for d in dirs]
    union = {}
    for k, part in enumerate(parts):
        for name, data in part.items():
            check(name not in union, "%r is in more than one shard" % name)
            union[name] = data
        want = sorted(os.fsencode(os.path.basename(p)) for p in inputs if shard_of(p, 3) == k + 1)
        check(sorted(part) == want, "shard %d/3 holds %r, expected %r" % (k + 1, sorted(part),
                                                                          want))
    check(union == everything, "the shards' union differs from the unsharded outputs")


@test("shard")
def shards_partition_the_inputs():
    inputs, everything = make_shard_inputs()
    check(len(everything) == 40, "unsharded outputs")
    check(len({shard_of(p, 3) for p in inputs}) == 3, "the test inputs hit every shard")
    dirs = []
    for k in (1, 2, 3):
        d = fresh("out-shard%d" % k)
        res = run("blur", "-r", "1", "--shard", "%d/3" % k, "-o", d, "--from", "shard-list.txt",
                  "--report", "shard%d.jsonl" % k)
        n = sum(1 for p in inputs if shard_of(p, 3) == k)
        check(res.rc == 0 and summary(res) == (n, 0, 40 - n), "shard %d/3" % k, res)
        objs = read_report("shard%d.jsonl" % k)
        for o, p in zip(objs, inputs):
            check(o["status"] == ("ok" if shard_of(p, 3) == k else "skipped"),
                  "shard %d/3: %s is %s" % (k, p, o["status"]))
        check(objs[-1]["shard"] == "%d/3" % k and objs[-1]["skipped"] == 40 - n,
              "shard summary %r" % objs[-1])
        dirs.append(d)
    check_union(inputs, everything, dirs)
    # 1/1 is everything.
    res = run("blur", "-r", "1", "-q", "--shard", "1/1", "-o", fresh("out-one"),
              "--from", "shard-list.txt")
    check(res.rc == 0 and files_of(path("out-one")) == everything, "--shard 1/1",
          res)


@test("shard")
def duplicates_fail_in_every_shard():
    # a/x.png and b/x.png: whichever shards they land in, only the first is written.
    fresh("sdup")
    for d in "ab":
        os.makedirs(path("sdup", d))
        write_png(path("sdup", d, "x.png"), 8, 8, 3, ord(d))
    written = []
    out = fresh("out-sdup")
    for k in (1, 2, 3):
        res = run("gray", "-q", "--shard", "%d/3" % k, "-o", out, "sdup/a/x.png", "sdup/b/x.png")
        written.append(res.rc)
        if shard_of("sdup/b/x.png", 3) == k:
            check(res.rc == EXIT_OUTPUT, "the later duplicate fails in its shard", res)
    res = run("gray", "-q", "sdup/a/x.png", "ref.png")
    with open(path("ref.png"), "rb") as f, \
            open(path(out, "x.png"), "rb") as g:
        check(f.read() == g.read(), "x.png is not the first input's output")


@test("parallel")
def gnu_parallel_runs_the_shards():
    par = shutil.which("parallel")
    if not par:
        raise Skip("GNU parallel is not installed (Debian package 'parallel')")
    ver = subprocess.run([par, "--version"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if b"GNU parallel" not in ver.stdout:
        raise Skip("'parallel' is not GNU parallel (moreutils?)")
    inputs, everything = make_shard_inputs()
    out = fresh("out-par")
    cmd = "%s --backend cpu blur -r 1 -q --shard {}/3 -o %s --from shard-list.txt" % (
        shlex.quote(GPUIMG), out)
    p = subprocess.run([par, "--will-cite", "--halt", "now,fail=1", "-j", "3", cmd, ":::",
                        "1", "2", "3"], cwd=path(), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=120)
    check(p.returncode == 0, "parallel failed: %r %r" % (p.stdout, p.stderr))
    check(files_of(path(out)) == everything,
          "the shards written by parallel differ from the unsharded run")
    # Each shard in its own directory too: disjoint, and the union is the whole.
    cmd = "%s --backend cpu blur -r 1 -q --shard {}/3 -o out-par{} --from shard-list.txt" % (
        shlex.quote(GPUIMG))
    for k in (1, 2, 3):
        fresh("out-par%d" % k)
    p = subprocess.run([par, "--will-cite", "-j", "3", cmd, ":::", "1", "2", "3"], cwd=path(),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    check(p.returncode == 0, "parallel failed: %r %r" % (p.stdout, p.stderr))
    check_union(inputs, everything, ["out-par1", "out-par2", "out-par3"])


# ---------------------------------------------------------------------------------------------
# usage

@test("failures")
def control_characters_in_names_stay_on_one_line():
    # A name holding a newline cannot forge a line of its own on stderr: it is escaped.
    name = "ctl/trunc\nfake: ok.png"
    os.makedirs(path("ctl"), exist_ok=True)
    with open(path(name), "wb") as f:
        f.write(b"\x89PNG\r\n")
    res = run("gray", "-q", "-o", fresh("out-ctl"), name)
    check(res.rc == EXIT_INPUT, "a truncated PNG fails with exit 3", res)
    check(res.err.count(b"\n") == 1 and res.err.startswith(b"gpuimg: ctl/trunc\\nfake: ok.png: "),
          "one line, the newline escaped", res)


@test("usage")
def usage_errors():
    make_inputs("inu", 1, seed=800)
    expect_usage(["gray", "-j", "0", "-o", "o", "inu/inu00.png"],
                 "-j: invalid value '0' (expected an integer from 1 to 1024)")
    expect_usage(["gray", "--jobs", "x", "-o", "o", "inu/inu00.png"],
                 "--jobs: invalid value 'x' (expected an integer from 1 to 1024)")
    # Digits only (no blanks or signs, which strtol would take), and the bound is stated.
    for bad in ("0/3", "4/3", "3", "1/0", "a/b", " 1/3", "1/ 3", "+1/3", "1/+3", "1/1000001"):
        expect_usage(["gray", "--shard", bad, "-o", "o", "inu/inu00.png"],
                     "--shard: invalid value '%s' (expected K/N with 1 <= K <= N <= 1000000, "
                     "slurm or auto)" % bad)
    expect_usage(["gray", "--from", "list.txt"],
                 "--from, --format, --force, --jobs, --devices, --shard and --recursive need -o DIR")
    expect_usage(["gray", "-o", "o"], "o: no input files (give INPUT... or --from LIST)")
    writes = [f.lower() for f in testlib.built_formats("writes")]
    expect_usage(["gray", "--format", "gif", "-o", "o", "inu/inu00.png"],
                 "--format: invalid value 'gif' (expected %s)" % testlib.or_list(writes))
    expect_usage(["gray", "--repeat", "3", "-o", "o", "inu/inu00.png"],
                 "--repeat: not available with -o DIR")
    expect_usage(["gray", "--warmup", "1", "-o", "o", "inu/inu00.png"],
                 "--warmup: not available with -o DIR")
    expect_usage(["gray", "-o", "o", "-"],
                 "-: standard input cannot be a batch input (--from - reads a list of paths)")
    expect_usage(["portrait", "--mask", "-", "-o", "o", "--from", "-"],
                 "--mask: the mask and --from cannot both be stdin")
    for bad in ("x", "0,", ",1", "-1", "0,,1", "1x"):
        expect_usage(["gray", "--devices", bad, "-o", "o", "inu/inu00.png"],
                     "--devices: invalid value '%s' (expected all, or device numbers like 0,1)"
                     % bad)
    check(not os.path.exists(path("o")), "a usage error created DIR")


@test("usage")
def cuda_backend_without_a_device():
    make_inputs("inc", 1, seed=900)
    argv = [GPUIMG, "gray", "--backend", "cuda", "-o", fresh("outc"), "inc/inc00.png"]
    p = subprocess.run(argv, cwd=path(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode == 0:
        raise Skip("a CUDA device is present (the gpu suite covers this)")
    check(p.returncode == EXIT_DEVICE, "expected exit 5: %r" % p.stderr)
    check(p.stderr in (b"gpuimg: this gpuimg was built without CUDA\n",) or
          p.stderr.startswith(b"gpuimg: no usable CUDA device: "), "message %r" % p.stderr)
    check(not os.path.exists(path("outc", "inc00.png")), "an output was written")


# ---------------------------------------------------------------------------------------------
# terminal: progress only on a terminal; signals leave no temporary file

@test("terminal")
def no_progress_without_a_terminal():
    inputs = make_samples("inp", 8)
    res = run("gray", "--format", "bmp", "-o", fresh("outp1"), *inputs)
    check(b"\r" not in res.err and len(res.lines()) == 1, "no progress without a terminal", res)


@test("terminal")
def progress_on_a_terminal():
    inputs = make_samples("inp", 8)
    try:
        master, slave = pty.openpty()
    except OSError as e:
        raise Skip("no pseudo-terminal: %s" % e)
    try:
        argv = [GPUIMG, "--backend", "cpu", "blur", "-r", "4", "-j", "2", "-o", fresh("outp2")]
        p = subprocess.Popen(argv + inputs, cwd=path(), stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=slave)
        os.close(slave)
        slave = None
        chunks = []
        while True:
            try:
                data = os.read(master, 4096)
            except OSError:
                break
            if not data:
                break
            chunks.append(data)
        p.wait(timeout=60)
        err = b"".join(chunks)
        check(p.returncode == 0, "run on a terminal: %r" % err)
        check(re.search(rb"8 converted, 0 failed, 0 skipped \(shard\)", err) is not None,
              "the summary: %r" % err)
        shown = re.findall(rb"\r\[\d+/\d+\][^\r\n]*", err)
        check(shown, "no progress line on a terminal: %r" % err)
        for line in shown:
            check(re.match(rb"\r\[\d+/8\]( \d+\.\d img/s ETA \d+s)? *$", line),
                  "progress %r" % line)
        # Cleared before the summary line.
        check(re.search(rb"\r +\rgpuimg: 8 converted", err), "progress not cleared: %r" % err)
    finally:
        os.close(master)
        if slave is not None:
            os.close(slave)
    # -q: nothing, even on a terminal.
    master, slave = pty.openpty()
    try:
        p = subprocess.run([GPUIMG, "--backend", "cpu", "gray", "-q", "-o", fresh("outp3")] +
                           inputs, cwd=path(), stdout=subprocess.PIPE, stderr=slave)
        os.close(slave)
        slave = None
        os.set_blocking(master, False)
        try:
            data = os.read(master, 4096)
        except (BlockingIOError, OSError):
            data = b""
        check(p.returncode == 0 and data == b"", "-q on a terminal printed %r" % data)
    finally:
        os.close(master)
        if slave is not None:
            os.close(slave)


@test("terminal")
def signals_remove_temporary_files():
    # Enough images that the run outlasts the wait below with the fast PNG encoder too.
    inputs = make_samples("insig", 64)
    for sig in (signal.SIGTERM, signal.SIGINT):
        out = fresh("outsig")
        argv = [GPUIMG, "--backend", "cpu", "blur", "-r", "4", "-j", "2", "-o", out,
                "--report", "sig.jsonl"] + inputs
        p = subprocess.Popen(argv, cwd=path(), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
        deadline = time.monotonic() + 20
        while p.poll() is None and time.monotonic() < deadline and \
                not any(n.startswith(".sig.jsonl.") for n in os.listdir(path())):
            time.sleep(0.005)
        time.sleep(0.2)
        check(p.poll() is None, "gpuimg ended before the signal (exit %r)" % p.returncode)
        p.send_signal(sig)
        p.communicate(timeout=30)
        check(p.returncode == -sig, "expected death by signal %d, got %r" % (sig, p.returncode))
        left = temporaries(path(out)) + \
            [n for n in os.listdir(path()) if n.startswith(".sig.jsonl.")]
        check(not left, "temporary files left after signal %d: %r" % (sig, left))
        check(not os.path.exists(path("sig.jsonl")), "a partial report was kept")


if __name__ == "__main__":
    sys.exit(testlib.main(sys.argv, "batch-"))
