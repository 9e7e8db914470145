#!/usr/bin/env python3
# test_batch_dirs.py: -o with a file name, and directories as batch inputs (--recursive).
"""Runs the gpuimg binary named by $GPUIMG (group 'dirs'; environment as for test_batch.py,
whose helpers it uses) and checks that -o NAME.png with one input writes that file, that
several inputs then are a usage error, and that a directory given as an input converts its
PNG and JPEG files (by content, sorted by name), with --recursive its subdirectories' too,
mirrored under DIR.
"""

import json
import os
import shutil
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import gpuimg_testlib as testlib  # noqa: E402
from gpuimg_testlib import EXIT_OUTPUT, EXIT_USAGE, check, expect, path, read, test  # noqa: E402
from test_batch import fresh, make_inputs, run, summary  # noqa: E402


def tree(directory):
    """The files under path(directory), as sorted relative paths."""
    top = path(directory)
    return sorted(os.path.relpath(os.path.join(d, f), top)
                  for d, _, files in os.walk(top) for f in files)


@test("dirs")
def output_file_name():
    inputs = make_inputs("inf", 2, seed=1000)
    # One input: -o NAME.png writes NAME.png, as OUTPUT would.
    expect(run("gray", "-o", "result.png", inputs[0]), 0, b"")
    expect(run("gray", inputs[0], "want.png"), 0, b"")
    check(os.path.isfile(path("result.png")) and read("result.png") == read("want.png"),
          "-o result.png did not write the file OUTPUT writes")
    expect(run("gray", "-o", "result.JPEG", inputs[0]), 0, b"")
    check(read("result.JPEG")[:3] == b"\xff\xd8\xff", "-o result.JPEG is not a JPEG")
    # No input: the built-in sample, as without -o.
    expect(run("gray", "-o", "sample-out.png"), 0, b"")
    expect(run("gray", "sample:", "sample-want.png"), 0, b"")
    check(read("sample-out.png") == read("sample-want.png"),
          "-o NAME.png without INPUT did not write the sample's result")
    # Several inputs: a usage error, nothing created.
    for args in (inputs, [inputs[0], "--from", "list.txt"]):
        expect(run("gray", "-o", "many.png", *args), EXIT_USAGE,
               "many.png: several inputs need -o DIR, a directory (end the name with '/' to "
               "make it one)")
    check(not os.path.exists(path("many.png")), "a usage error created many.png")
    # A trailing slash, or an existing directory, is always a directory.
    res = run("gray", "-q", "-o", fresh("slash.png") + "/", inputs[0])
    check(res.rc == 0 and os.path.isfile(path("slash.png", "inf00.png")), "-o slash.png/", res)
    res = run("gray", "-q", "-o", "slash.png", inputs[1])
    check(res.rc == 0 and os.path.isfile(path("slash.png", "inf01.png")), "-o existing.png", res)


def make_tree():
    """photos/: two images, a text file, a JPEG named .txt, an empty and a nested subdirectory."""
    fresh("photos")
    make_inputs("photos", 2, seed=1100)  # photos/photos00.png, photos01.png
    make_inputs(os.path.join("photos", "b", "deep"), 1, seed=1200)  # .../deep/deep00.png
    os.makedirs(path("photos", "a-empty"))
    with open(path("photos", "notes.txt"), "w") as f:
        f.write("not an image\n")
    run("gray", "-q", "photos/photos00.png", "photos/b/shot.jpg")
    shutil.copyfile(path("photos", "b", "shot.jpg"), path("photos", "b", "jpeg-named.txt"))


@test("dirs")
def directory_inputs():
    make_tree()
    res = run("gray", "-o", fresh("flat"), "photos")
    check(res.rc == 0 and summary(res) == (2, 0, 0), "two images at the top", res)
    check(res.lines()[0] == b"gpuimg: photos: skipped 1 file (not %s) and 2 "
          b"subdirectories (--recursive converts them too)" %
          testlib.or_list(testlib.built_formats("reads")).encode(), "the count line", res)
    check(len(res.lines()) == 2, "one count line, then the summary", res)
    check(tree("flat") == ["photos00.png", "photos01.png"], "flat outputs: %s" % tree("flat"))
    res = run("gray", "-o", fresh("deep"), "--recursive", "--report", "r.jsonl", "photos/")
    check(res.rc == 0 and summary(res) == (5, 0, 0), "--recursive", res)
    check(res.lines()[0] == b"gpuimg: photos/: skipped 1 file (not %s)" %
          testlib.or_list(testlib.built_formats("reads")).encode(), "count", res)
    check(tree("deep") == ["b/deep/deep00.png", "b/jpeg-named.png", "b/shot.jpg",
                           "photos00.png", "photos01.png"], "mirrored tree: %s" % tree("deep"))
    # Sorted by name, directory by directory (the report is in input order).
    with open(path("r.jsonl")) as f:
        order = [o["input"]["name"] for o in map(json.loads, f) if "input" in o]
    check(order == ["photos/b/deep/deep00.png", "photos/b/jpeg-named.txt", "photos/b/shot.jpg",
                    "photos/photos00.png", "photos/photos01.png"], "input order %s" % order)
    check(read("deep/b/shot.jpg")[:3] == b"\xff\xd8\xff", "a JPEG stays a JPEG")
    # -q: no count line; DIR inside the tree is never an input.
    res = run("gray", "-q", "-o", "photos/out", "--recursive", "photos")
    check(res.rc == 0 and res.err == b"" and len(tree("photos/out")) == 5, "-q, DIR inside", res)
    res = run("gray", "-q", "-o", "photos/out", "--recursive", "--force", "photos")
    check(res.rc == 0 and len(tree("photos/out")) == 5, "outputs are not inputs", res)
    expect(run("gray", "--recursive", "photos", "x.png"), EXIT_USAGE,
           "--from, --format, --force, --jobs, --devices, --shard and --recursive need -o DIR")
    # An output name that is a directory in DIR fails that image only.
    os.makedirs(path(fresh("clash"), "photos00.png"))
    res = run("gray", "-q", "-o", "clash", "photos")
    check(res.rc == EXIT_OUTPUT and res.err == b"gpuimg: clash/photos00.png: is a directory\n",
          "an output that is a directory", res)


if __name__ == "__main__":
    sys.exit(testlib.main(sys.argv, "batch-"))
