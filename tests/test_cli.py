#!/usr/bin/env python3
# test_cli.py: end-to-end tests of gpuimg's command line: the entry point that runs their groups.
"""Runs the gpuimg binary named by $GPUIMG and checks what it does.

Usage: test_cli.py GROUP...   (groups: usage, input, decode, output, clobber, formats,
                               pixels, pipeline, report, codec, jpeg, nolibjpeg, completion,
                               threads, orient, meta, resize, rotate, permissions, model,
                               stats, webp, nowebp, picture;
                               'all' runs every group; a group whose every test is skipped
                               exits 77)

The tests live in the modules this script imports, by group:
  cli_usage.py       usage, input          cli_report.py      report
  cli_io.py          decode, output,       cli_codecs.py      codec, jpeg, nolibjpeg
                     clobber, permissions  cli_completion.py  completion
  cli_images.py      formats, pixels,      cli_threads.py     threads
                     pipeline              cli_orient.py      orient
                                           cli_meta.py        meta
                                           cli_resize.py      resize
                                           cli_rotate.py      rotate
                                           cli_model.py       model
                                           cli_stats.py       stats
                                           cli_webp.py        webp, nowebp
                                           cli_picture.py     picture
                                           cli_common.py      what they share (not tests)

Environment:
  GPUIMG               the binary under test (required)
  GPUIMG_VERSION       the project version, to check -V (optional)
  GPUIMG_SAMPLE_MASK   assets/sample-mask.png, to check portrait on the sample (optional)
  GPUIMG_TEST_DIR      where scratch directories go (default: the current directory)

Expected failures check the exact exit status and the exact stderr text, read from
src/ (the format is `gpuimg: <what>: <reason>`, plus the two usage lines after a usage
error). Pixels are checked against the rules of SEMANTICS.md computed in Python (cli_common.py),
from PNGs decoded by the small reader of gpuimg_testlib.py. Each test that exposes a known bug in
src/ was fixed; those tests stay as regression tests. stb is the reference JPEG decoder:
a test that checks exact pixels decoded from a JPEG pins --codec stb (libjpeg, which auto
picks when built in, decodes a few pixels differently: the 'jpeg' group bounds by how much).
Standard library only.
"""

import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpuimg_testlib as testlib  # noqa: E402
from gpuimg_testlib import path  # noqa: E402
import make_images as mi  # noqa: E402

# Each module registers its groups (@test) as it is imported, in this order ('all' runs them so).
import cli_usage  # noqa: E402,F401
import cli_io  # noqa: E402,F401
import cli_images  # noqa: E402,F401
import cli_report  # noqa: E402,F401
import cli_codecs  # noqa: E402,F401
import cli_completion  # noqa: E402,F401
import cli_threads  # noqa: E402,F401
import cli_orient  # noqa: E402,F401
import cli_meta  # noqa: E402,F401
import cli_resize  # noqa: E402,F401
import cli_rotate  # noqa: E402,F401
import cli_model  # noqa: E402,F401
import cli_stats  # noqa: E402,F401
import cli_webp  # noqa: E402,F401
import cli_picture  # noqa: E402,F401

if __name__ == "__main__":
    sys.exit(testlib.main(sys.argv, "cli-", populate=lambda: mi.write_corpus(path())))
