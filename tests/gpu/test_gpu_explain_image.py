#!/usr/bin/env python3
# test_gpu_explain_image.py: --explain-image's measured mode on a device: the teaching kernels'
# blocks record their SM and times in the timed launch; the picture is tinted by start, a
# timeline is written, the report carries blocks per SM and the measured waves; the output's
# bytes are the CPU reference's, and a run without the option records nothing (77: no device).
import json
import math
import os
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from gpuimg_testlib import png_chunks, png_decode  # noqa: E402

GPUIMG = os.environ["GPUIMG"]


def gpuimg(*args):
    return subprocess.run([GPUIMG] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def comment(data):
    for pos, n, kind in png_chunks(data):
        if kind == b"tEXt":
            return data[pos + 8:pos + 8 + n].partition(b"\0")[2].decode()
    return ""


def check(cond, what):
    if not cond:
        print("FAIL " + what)
        sys.exit(1)


def stage_of(report, name):
    return [s for s in report["stages"] if s["name"] == name][0]


def measured(tmp, name, *op):
    pic, rep = os.path.join(tmp, name + ".png"), os.path.join(tmp, name + ".json")
    out, ref = os.path.join(tmp, name + "-out.png"), os.path.join(tmp, name + "-cpu.png")
    p = gpuimg(*op, "--backend", "cuda", "--explain-image", pic, "--report", rep, "sample:", out)
    check(p.returncode == 0, "%s: the run: %s" % (name, p.stderr.decode()))
    p = gpuimg(*op, "--backend", "cpu", "sample:", ref)
    check(p.returncode == 0, "%s: the CPU reference" % name)
    with open(out, "rb") as f, open(ref, "rb") as g:
        check(f.read() == g.read(), "%s: the output's bytes are the CPU reference's" % name)
    with open(rep) as f:
        report = json.load(f)
    st = stage_of(report, op[0])
    m = st.get("blocks_measured")
    check(m is not None, "%s: the report carries blocks_measured" % name)
    grid = st["launch"]["grid"]
    blocks = grid[0] * grid[1]
    resident = st["launch"]["resident_blocks"]
    check(m["blocks"] == blocks and sum(m["blocks_per_sm"]) == blocks,
          "%s: every block recorded once: %r" % (name, m))
    check(len(m["blocks_per_sm"]) == m["sms"] and m["span_us"] > 0, "%s: SMs and span" % name)
    waves = math.ceil(blocks / resident)
    check(waves <= m["waves"] <= waves + 2,
          "%s: %d measured waves, the model's %d" % (name, m["waves"], waves))
    with open(pic, "rb") as f:
        data = f.read()
    text = comment(data)
    check("measured on " in text and "measured waves" in text, "%s: %r" % (name, text))
    w, h, c, px = png_decode(data)
    check(w >= 1024 and c == 3, "%s: the picture" % name)
    timeline = os.path.join(tmp, name + "-timeline.png")
    check(os.path.exists(timeline), "%s: the timeline" % name)
    with open(timeline, "rb") as f:
        data = f.read()
    check("%d measured waves" % m["waves"] in comment(data), "%s: the timeline's words" % name)
    png_decode(data)
    print("ok   %s: %d blocks on %d SMs (%d to %d a SM), %d waves, %.1f us" %
          (name, blocks, m["sms"], min(b for b in m["blocks_per_sm"] if b),
           max(m["blocks_per_sm"]), m["waves"], m["span_us"]))


def main():
    p = gpuimg("gray", "--backend", "cuda", "-q")
    if p.returncode != 0:
        err = p.stderr.decode()
        if "no usable CUDA device" in err or "built without CUDA" in err:
            print("SKIP: " + err.strip())
            return 77
        print(err)
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        measured(tmp, "gray", "gray", "--naive")
        measured(tmp, "checkerboard", "checkerboard", "--naive", "--cell", "1")
        measured(tmp, "portrait", "portrait", "--naive")
        # Timed runs without the option record nothing.
        rep = os.path.join(tmp, "plain.json")
        p = gpuimg("gray", "--naive", "--backend", "cuda", "--repeat", "3", "--report", rep)
        check(p.returncode == 0, "a timed run")
        with open(rep) as f:
            check("blocks_measured" not in stage_of(json.load(f), "gray"),
                  "a run without --explain-image records no blocks")
    return 0


if __name__ == "__main__":
    sys.exit(main())
