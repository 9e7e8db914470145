#!/usr/bin/env python3
# html_pages.py: gpuimg's HTML pages as a browser shows them: the compare and summary pages of
# real runs, validated with html.parser, then opened in headless Chromium and screenshot.
"""Makes `gpuimg compare --format html` of a run against a copy slowed down in one stage, and
`gpuimg summary --format html` of a batch's report; checks that each is well-formed (Python's
html.parser, and an XML parser), names every stage (and the regression), and that headless
Chromium (Debian's chromium package) renders it into a screenshot that is not blank.

Usage: html_pages.py [html]   (exits 77 when chromium is not installed, saying so)

Environment: GPUIMG (the binary), GPUIMG_TEST_DIR (where html/ is made), CHROMIUM (the
browser; default: chromium or chromium-browser on PATH). Standard library only.
"""

import json
import os
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpuimg_testlib as testlib  # noqa: E402
from gpuimg_testlib import Skip, check, cpu, parse_page, path, png_decode, read, run, test  # noqa: E402,E501


def chromium():
    """The browser to start, or Skip with the reason."""
    for name in (os.environ.get("CHROMIUM"), "chromium", "chromium-browser"):
        if name and shutil.which(name):
            return shutil.which(name)
    raise Skip("chromium is not installed (Debian: apt-get install chromium)")


def screenshot(page, shot):
    """Opens the page in headless Chromium and writes what it shows to shot (PNG)."""
    browser = chromium()
    args = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
            "--disable-extensions", "--hide-scrollbars", "--user-data-dir=" + path("profile"),
            "--window-size=1000,1400", "--screenshot=" + path(shot), "file://" + path(page)]
    p = subprocess.run(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=120)
    check(p.returncode == 0 and os.path.exists(path(shot)),
          "chromium made no screenshot (exit %d): %s" % (p.returncode, p.stderr[-2000:]))


def not_blank(shot):
    """The screenshot shows a page: many pixels differ from the background, in many colours."""
    w, h, c, px = png_decode(read(shot))
    pixels = [px[i:i + 3] for i in range(0, len(px), c)]
    background = pixels[0]
    ink = sum(1 for p in pixels if p != background)
    colours = len(set(pixels))
    check(ink > w * h // 50, "%s: only %d of %d pixels drawn" % (shot, ink, w * h))
    check(colours >= 16, "%s: only %d colours" % (shot, colours))


def page_text(res, data):
    return "".join(parse_page(res, data).text)


@test("html")
def compare_page():
    res = cpu("gray", "--repeat", "3", "--report", path("base.json"), "sample:")
    check(res.rc == 0, "a run with a report", res)
    base = json.loads(read("base.json"))
    stages = [s["name"] for s in base["stages"]]
    slow = json.loads(read("base.json"))
    for s in slow["stages"]:
        if s["name"] == "gray":
            for key in ("ms", "ms_min", "ms_max"):
                s[key] = s[key] * 4 + 1
    testlib.write("cur.json", json.dumps(slow))
    res = run("compare", "--all-stages", "--format", "html", "-o", path("compare.html"),
              path("base.json"), path("cur.json"))
    check(res.rc == 1, "a regression: exit 1", res)
    text = page_text(res, read("compare.html"))
    check("REGRESSION" in text, "the verdict", res)
    for name in stages:
        check(name in text, "the page names stage %s" % name, res)
    check("SLOWER" in text, "the slower stage marked", res)
    screenshot("compare.html", "compare.png")
    not_blank("compare.png")


@test("html")
def summary_page():
    for k in range(4):
        res = cpu("resize", "--width", str(64 + 16 * k), "sample:", path("in%d.png" % k))
        check(res.rc == 0, "an input", res)
    res = cpu("blur", "-r", "2", "-o", path("out") + "/", "-j", "2", "--report",
              path("batch.jsonl"), *[path("in%d.png" % k) for k in range(4)])
    check(res.rc == 0, "a batch", res)
    res = run("summary", "--format", "html", path("batch.jsonl"))
    check(res.rc == 0, "a summary", res)
    testlib.write("summary.html", res.out)
    text = page_text(res, res.out)
    last = json.loads(read("batch.jsonl").splitlines()[-1])
    for name in last["stage_totals_ms"]:
        check(name in text, "the page names stage %s" % name, res)
    for heading in ("Throughput over time", "Workers over time", "Share of each stage"):
        check(heading in text, "the page has %s" % heading, res)
    screenshot("summary.html", "summary.png")
    not_blank("summary.png")


if __name__ == "__main__":
    sys.exit(testlib.main(sys.argv, ""))
