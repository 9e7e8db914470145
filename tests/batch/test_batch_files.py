#!/usr/bin/env python3
# test_batch_files.py: what batch mode reads and writes: regular files only, and only inside DIR.
"""Runs the gpuimg binary named by $GPUIMG in batch mode (group 'files'; environment as for
test_batch.py, whose helpers it uses) and checks that FIFOs and devices, as inputs or under an
output's name (also one that appears there after the check, which
GPUIMG_TEST_STOP_BEFORE_OPEN makes deterministic), are refused at once and never waited on or
written into; that a link that points nowhere under an output's name is found
before the input is read; that a symbolic link under DIR takes no output outside it; that
links in an input tree are named for what they are and a FIFO in one is never opened; that an
output name which another needs as a directory fails the same input at every --jobs; and that a
batch over more directories than any fixed table holds sweeps each directory once.
"""

import os
import stat
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import gpuimg_testlib as testlib  # noqa: E402
from gpuimg_testlib import (  # noqa: E402
    EXIT_INPUT, EXIT_OUTPUT, GPUIMG, PNG_SIGNATURE, check, path, read, test, write)
from test_batch import fresh, make_inputs, summary, temporaries  # noqa: E402
from test_batch_writes import stopped_before_rename  # noqa: E402

NOT_REGULAR_IN = "not a regular file (a batch reads regular files only)"
NOT_REGULAR_OUT = "not a regular file (a batch writes regular files only)"
CONFLICT = "(a name cannot be both a file and a directory)"


def run(*args):
    """A batch on the CPU backend; one that blocks (on a FIFO) fails the test after 20 s."""
    return testlib.cpu(*args, timeout=20)


def lines_of(res):
    """The stderr lines before the summary, as str, sorted (workers finish in any order)."""
    return sorted(line.decode() for line in res.lines()[:-1])


def mkfifo(name):
    if os.path.lexists(path(name)):
        os.remove(path(name))
    os.mkfifo(path(name))
    return name


@test("files")
def fifo_and_device_inputs_fail_at_once():
    good = make_inputs("inf", 1, seed=1300)
    mkfifo("pipe.png")
    mkfifo("listed.png")
    os.symlink("pipe.png", path("pipe-link.png"))
    write("list.txt", "listed.png\n")
    res = run("gray", "-o", fresh("outf"), "pipe.png", good[0], "pipe-link.png", "/dev/null",
              "--from", "list.txt")
    check(res.rc == EXIT_INPUT and summary(res) == (1, 4, 0) and lines_of(res) == [
        "gpuimg: /dev/null: " + NOT_REGULAR_IN,
        "gpuimg: listed.png: " + NOT_REGULAR_IN,
        "gpuimg: pipe-link.png: " + NOT_REGULAR_IN,
        "gpuimg: pipe.png: " + NOT_REGULAR_IN], "FIFOs and a device as inputs", res)
    check(sorted(os.listdir(path("outf"))) == ["inf00.png"], "outputs %r" % os.listdir(path("outf")))


@test("files")
def outputs_that_are_not_regular_files_are_refused():
    inputs = make_inputs("ino", 4, seed=1400)
    for force in ([], ["--force"]):
        out = fresh("outo")
        os.mkdir(path(out))
        mkfifo(os.path.join(out, "ino00.png"))
        mkfifo("target-fifo")
        os.symlink(path("target-fifo"), path(out, "ino01.png"))
        os.symlink("/dev/null", path(out, "ino02.png"))
        res = run("gray", "-o", out, *(inputs + force))
        check(res.rc == EXIT_OUTPUT and summary(res) == (1, 3, 0) and lines_of(res) == [
            "gpuimg: outo/ino00.png: " + NOT_REGULAR_OUT,
            "gpuimg: outo/ino01.png: " + NOT_REGULAR_OUT,
            "gpuimg: outo/ino02.png: " + NOT_REGULAR_OUT], "refused targets %r" % force, res)
        check(stat.S_ISFIFO(os.lstat(path(out, "ino00.png")).st_mode) and
              os.readlink(path(out, "ino01.png")) == path("target-fifo") and
              os.readlink(path(out, "ino02.png")) == "/dev/null" and
              read(os.path.join(out, "ino03.png")).startswith(PNG_SIGNATURE) and
              not temporaries(path(out)), "DIR changed: %r" % os.listdir(path(out)))


@test("files")
def special_file_appearing_before_the_write_is_refused():
    # A FIFO, or a link to a device, created under the output's name after its check and
    # before the write: refused then, never opened.
    inputs = make_inputs("inr", 2, seed=1450)
    argv = [GPUIMG, "--backend", "cpu", "gray", "-j", "1", "--force", "-o", "outr"] + inputs
    for name, plant in (("inr00.png", lambda p: os.mkfifo(p)),
                        ("inr01.png", lambda p: os.symlink("/dev/null", p))):
        out = fresh("outr")
        target = os.path.join(out, name)
        res = stopped_before_rename(argv, target, lambda _: plant(path(target)), at="OPEN")
        check(res.rc == EXIT_OUTPUT and lines_of(res) == ["gpuimg: %s: %s" % (
            target, NOT_REGULAR_OUT)], "%s appearing before the write" % name, res)
        check(not stat.S_ISREG(os.lstat(path(target)).st_mode) and
              not temporaries(path(out)), "DIR: %r" % os.listdir(path(out)))


@test("files")
def dangling_link_at_an_output_name_is_found_first():
    # The input cannot be decoded: the link is found before the input is read.
    write("broken.png", PNG_SIGNATURE + b"\0\0\0\x0dIHDR" + b"\0" * 5)
    out = fresh("outd")
    os.mkdir(path(out))
    os.symlink("nowhere.png", path(out, "broken.png"))
    res = run("gray", "-o", out, "broken.png")
    check(res.rc == EXIT_OUTPUT and lines_of(res) == [
        "gpuimg: outd/broken.png: exists (use --force to replace it)"], "a dangling link", res)
    # --force replaces the link itself, as any link under an output's name.
    good = make_inputs("ind", 1, seed=1500)
    os.symlink("nowhere.png", path(out, "ind00.png"))
    res = run("gray", "-q", "-o", out, "--force", good[0])
    check(res.rc == 0 and not os.path.islink(path(out, "ind00.png")) and
          read(os.path.join(out, "ind00.png")).startswith(PNG_SIGNATURE) and
          not os.path.exists(path(out, "nowhere.png")), "--force over a dangling link", res)


def make_subtree(top):
    """top/top.png and top/sub/deep.png."""
    fresh(top)
    make_inputs(top, 1, seed=1600)
    os.rename(path(top, top + "00.png"), path(top, "top.png"))
    make_inputs(os.path.join(top, "sub"), 1, seed=1601)
    os.rename(path(top, "sub", "sub00.png"), path(top, "sub", "deep.png"))


@test("files")
def outputs_never_land_outside_dir():
    make_subtree("tree")
    fresh("elsewhere")
    os.mkdir(path("elsewhere"))
    for force in ([], ["--force"]):
        out = fresh("outs")
        os.mkdir(path(out))
        os.symlink("../elsewhere", path(out, "sub"))
        res = run("gray", "-o", out, "--recursive", "tree", *force)
        check(res.rc == EXIT_OUTPUT and summary(res) == (1, 1, 0) and lines_of(res) == [
            "gpuimg: tree/sub/deep.png: outs/sub: is a symbolic link (outputs are written "
            "only inside DIR)"], "a link to a directory under DIR %r" % force, res)
        check(os.listdir(path("elsewhere")) == [], "an output landed outside DIR")
        check(read(os.path.join(out, "top.png")).startswith(PNG_SIGNATURE), "top.png")
    # A file where a directory is needed.
    out = fresh("outs")
    os.mkdir(path(out))
    write(os.path.join(out, "sub"), b"a file")
    res = run("gray", "-o", out, "--recursive", "tree", "--force")
    check(res.rc == EXIT_OUTPUT and lines_of(res) == [
        "gpuimg: tree/sub/deep.png: outs/sub: is not a directory"], "a file as directory", res)


@test("files")
def links_to_directories_are_named_for_what_they_are():
    make_subtree("linked")
    fresh("target")
    make_inputs("target", 1, seed=1800)
    os.symlink("../target", path("linked", "to-target"))
    mkfifo(os.path.join("linked", "pipe"))
    res = run("gray", "-o", fresh("outl"), "linked")
    not_read = "(not %s)" % testlib.or_list(testlib.built_formats("reads"))
    check(res.rc == 0 and summary(res) == (1, 0, 0) and lines_of(res) == [
        "gpuimg: linked: skipped 1 file %s, 1 subdirectory (--recursive converts "
        "them too) and 1 link to a directory (not followed)" % not_read], "without --recursive",
        res)
    res = run("gray", "-o", fresh("outl"), "--recursive", "linked")
    check(res.rc == 0 and summary(res) == (2, 0, 0) and lines_of(res) == [
        "gpuimg: linked: skipped 1 file %s and 1 link to a directory (not "
        "followed)" % not_read], "--recursive", res)
    check(sorted(os.listdir(path("outl"))) == ["sub", "top.png"], "outputs")


@test("files")
def special_files_in_an_input_directory_are_never_opened():
    # A FIFO named like an image, holding a PNG that its writer put there: the walk skips it
    # by its type without opening it, so the PNG stays in the pipe, unread.
    png = read(make_inputs(fresh("walked"), 1, seed=1900)[0])
    fifo = mkfifo(os.path.join("walked", "pipe.png"))
    reader = os.open(path(fifo), os.O_RDONLY | os.O_NONBLOCK)
    writer = os.open(path(fifo), os.O_WRONLY | os.O_NONBLOCK)
    try:
        check(os.write(writer, png) == len(png), "the PNG does not fit in the pipe")
        res = run("gray", "-o", fresh("outw"), "walked")
        check(res.rc == 0 and summary(res) == (1, 0, 0) and lines_of(res) == [
            "gpuimg: walked: skipped 1 file (not %s)" %
            testlib.or_list(testlib.built_formats("reads"))], "a FIFO in DIR", res)
        check(os.read(reader, len(png) + 1) == png, "the FIFO was read from")
    finally:
        os.close(writer)
        os.close(reader)
    check(os.listdir(path("outw")) == ["walked00.png"], "outputs %r" % os.listdir(path("outw")))


@test("files")
def file_and_directory_names_are_settled_before_work():
    # t1/b.png -> out/b.png and t2/b.png/y.png -> out/b.png/y.png: the first in list order
    # keeps its name, at every --jobs.
    fresh("t1")
    fresh("t2")
    make_inputs("t1", 1, seed=1700)
    os.rename(path("t1", "t100.png"), path("t1", "b.png"))
    make_inputs(os.path.join("t2", "b.png"), 1, seed=1701)
    os.rename(path("t2", "b.png", "b.png00.png"), path("t2", "b.png", "y.png"))
    cases = [(("t1", "t2"), "t2/b.png/y.png", "out/b.png/y.png", "out/b.png", "t1/b.png",
              "b.png"),
             (("t2", "t1"), "t1/b.png", "out/b.png", "out/b.png/y.png", "t2/b.png/y.png",
              "b.png/y.png")]
    for order, loser, its_out, other, winner, kept in cases:
        for jobs in ("1", "2", "4", "1", "2", "4"):
            fresh("out")
            res = run("gray", "-j", jobs, "-o", "out", "--recursive", *order)
            check(res.rc == EXIT_OUTPUT and summary(res) == (1, 1, 0) and lines_of(res) == [
                "gpuimg: %s: output %s conflicts with %s, the output of %s %s" %
                (loser, its_out, other, winner, CONFLICT)], "order %r -j %s" % (order, jobs), res)
            check(os.path.isfile(path("out", kept)), "%s was not converted" % kept)


@test("files")
def each_directory_is_swept_once_however_many():
    # 80 directories, then one more image into the 71st: a dead process's leftover put there
    # after its first sweep stays (each directory is swept once per process).
    fresh("many")
    for d in range(80):
        make_inputs(os.path.join("many", "d%02d" % d), 1, seed=1900 + d)
    fresh("more")
    make_inputs(os.path.join("more", "d70"), 1, seed=1990)
    os.rename(path("more", "d70", "d7000.png"), path("more", "d70", "late.png"))
    dead = subprocess.Popen(["true"])
    dead.wait()
    left = ".late.png.gpuimg-%d.Ab12Cd" % dead.pid
    out = fresh("outm")
    argv = [GPUIMG, "--backend", "cpu", "gray", "-j", "1", "-o", out, "--recursive", "many",
            "more"]

    def plant(_):
        write(os.path.join(out, "d70", left), b"half an image")
    res = stopped_before_rename(argv, out + "/d79/d7900.png", plant)
    check(res.rc == 0 and res.lines()[:-1] == [] and summary(res) == (81, 0, 0),
          "81 images into 80 directories", res)
    check(sorted(os.listdir(path(out, "d70"))) == [left, "d7000.png", "late.png"],
          "d70: %r" % os.listdir(path(out, "d70")))

if __name__ == "__main__":
    sys.exit(testlib.main(sys.argv, "batch-"))
