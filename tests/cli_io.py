# cli_io.py: test_cli.py's groups decode, output, clobber: bad files, destinations, overwrites.

import os
import pty
import re
import resource
import shutil
import signal
import stat
import subprocess
import time

from gpuimg_testlib import (
    EXIT_INPUT, EXIT_OUTPUT, EXIT_USAGE, GPUIMG, GRAY, USAGE, Failure, Skip, check, cpu,
    expect_error, expect_ok, leftovers, make_pixels, path, png_chunk, png_encode_8bit,
    png_header_only, read, run, test, unsupported_format, write)
import make_images as mi
from cli_common import (
    CORPUS, range_msg, check_no_leftovers, expected, make_jpeg, read_png, ref_gray, same_image,
    unknown_operation_msg)


# ---------------------------------------------------------------------------------------------
# decode: truncated and corrupt PNG/JPEG files must fail with exit 3 and a meaningful reason

def decode_failure(res, name, kind):
    """Exit 3 and `gpuimg: NAME: cannot decode KIND: REASON`; returns REASON."""
    check(res.rc == EXIT_INPUT, "expected exit 3", res)
    check(res.out == b"", "expected an empty stdout", res)
    prefix = b"gpuimg: " + name.encode() + b": cannot decode " + kind.encode() + b": "
    check(res.err.startswith(prefix) and res.err.endswith(b"\n") and res.err.count(b"\n") == 1,
          "expected one line starting %r" % prefix, res)
    return res.err[len(prefix):-1].decode("utf-8", "replace")


def check_reason(reason, kind, res):
    """A reason must say something true about a file of this kind. stb's own failure
    strings are accepted, but not a stale one left by another decoder, not a fragment
    of a chunk name, and not 'unknown image type' for a file whose type was recognised."""
    check(len(reason) >= 6, "reason %r is not a message" % reason, res)
    check(reason != "unknown image type",
          "reason %r contradicts 'cannot decode %s'" % (reason, kind), res)
    other = "png" if kind == "JPEG" else "jpeg"
    check(other not in reason.lower(), "reason %r belongs to another format" % reason, res)


@test("decode")
def control_characters_in_names_are_escaped():
    # A name holding a newline, a tab or an escape cannot forge a second stderr line.
    write("trunc\nfake: ok\t\x1b.png", b"\x89PNG\r\n\x1a\n")
    res = run("gray", "trunc\nfake: ok\t\x1b.png", "o.png")
    check(res.rc == EXIT_INPUT and res.err.count(b"\n") == 1, "one line, exit 3", res)
    check(res.err.startswith(b"gpuimg: trunc\\nfake: ok\\t\\x1b.png: "),
          "control characters escaped", res)


@test("decode")
def corrupt_png():
    res = run("gray", "bad-zlib.png")
    check_reason(decode_failure(res, "bad-zlib.png", "PNG"), "PNG", res)
    # An unknown critical chunk: stb names it.
    good = CORPUS["rgb8.png"][0]
    write("chunk.png", good[:33] + png_chunk(b"ABCD", b"1234") + good[33:])
    res = run("gray", "chunk.png")
    check(decode_failure(res, "chunk.png", "PNG") == "ABCD PNG chunk not known",
          "unexpected reason", res)


@test("decode")
def impossible_headers():
    # Regression (codec_stb.c stb_reason, fixed): stbi_info_from_memory() tries every decoder and
    # ends with "unknown image type", hiding the PNG decoder's own reason.
    # A 0-pixel image, and images past stb's own size limits (2^30 bytes, 2^20 per side):
    # stb_info's reason ("0-pixel image", "too large") is replaced by "unknown image type".
    failures = []
    for name, data in (("zero.png", png_header_only(0, 5)),
                       ("wide.png", png_header_only((1 << 20) + 1, 1, GRAY))):
        write(name, data)
        res = run("gray", name)
        try:
            check_reason(decode_failure(res, name, "PNG"), "PNG", res)
        except Failure as e:
            failures.append(str(e))
    # 20000x20000 RGB is over --max-pixels (2^28): that is the message the user needs.
    write("huge.png", png_header_only(20000, 20000))
    try:
        expect_error(run("gray", "huge.png"), EXIT_INPUT,
                     "huge.png: image is 20000x20000, over the limit of 268435456 pixels "
                     "(see --max-pixels)")
    except Failure as e:
        failures.append(str(e))
    check(not failures, "\n".join(failures))


@test("decode")
def truncated_png():
    # Regression (codec_stb.c stb_reason, fixed): cuts inside IHDR report "unknown image type",
    # cuts inside a chunk type report the partial chunk name ("I", "ID", "IDA", "IE").
    data = CORPUS["rgb8.png"][0]
    write("keep.png", b"existing output")
    failures = []
    for label, n in mi.png_truncations(data):
        name = "trunc-png-%d.png" % n
        write(name, data[:n])
        res = run("gray", name, "keep.png")
        try:
            if n < 8:
                expect_error(res, EXIT_INPUT, name + ": " + unsupported_format())
            else:
                check_reason(decode_failure(res, name, "PNG"), "PNG", res)
        except Failure as e:
            failures.append("cut (%s) at %d bytes: %s" % (label, n, e))
        check(read("keep.png") == b"existing output", "the existing output was changed", res)
    check_no_leftovers()
    check(not failures, "\n".join(failures))


@test("decode")
def truncated_jpeg():
    # Regression (codec_stb.c stb_reason, fixed): a cut in the JPEG header reports "unknown image
    # type"; a cut early in the scan reports the PNG probe's stale "bad png sig".
    _, data = make_jpeg()
    check(data[:3] == b"\xff\xd8\xff" and data[-2:] == b"\xff\xd9", "not a JPEG")
    sos = data.index(b"\xff\xda")
    write("keep.png", b"existing output")
    failures = []
    cuts = [("SOI", 2), ("APP/DQT header", 3), ("header", 20), ("header", sos // 2),
            ("before SOS", sos), ("SOS header", sos + 4), ("scan start", sos + 20),
            ("mid scan", (sos + len(data)) // 2), ("before EOI", len(data) - 2)]
    for label, n in cuts:
        name = "trunc-jpg-%d.jpg" % n
        write(name, data[:n])
        res = run("gray", name, "keep.png")
        try:
            if n < 3:
                expect_error(res, EXIT_INPUT, name + ": " + unsupported_format())
            else:
                check_reason(decode_failure(res, name, "JPEG"), "JPEG", res)
        except Failure as e:
            failures.append("cut (%s) at %d of %d bytes: %s" % (label, n, len(data), e))
        check(read("keep.png") == b"existing output", "the existing output was changed", res)
    check_no_leftovers()
    check(not failures, "\n".join(failures))


# ---------------------------------------------------------------------------------------------
# output: destinations that cannot be written (exit 4), atomicity, untouched existing files

@test("output")
def missing_output_directory():
    expect_error(run("gray", "rgb8.png", "nodir/out.png"), EXIT_OUTPUT,
                 "nodir/out.png: cannot create output file: No such file or directory")
    expect_error(run("gray", "rgb8.png", "g8.png/out.png"), EXIT_OUTPUT,
                 "g8.png/out.png: cannot create output file: Not a directory")
    expect_error(run("gray", "rgb8.png", "out.png", "--report", "nodir/r.json"), EXIT_OUTPUT,
                 "nodir/r.json: cannot create output file: No such file or directory")
    check(not os.path.exists(path("out.png")), "out.png written although the report cannot be")
    check_no_leftovers()


@test("output")
def unwritable_output_directory():
    # A read-only file system, whoever runs the test (/proc/self takes no new file); a
    # read-only directory is the permissions group's (not as root).
    check(os.path.isdir("/proc/self"), "no /proc/self (procfs) mounted")
    res = run("gray", "rgb8.png", "/proc/self/out.png")
    check(res.rc == EXIT_OUTPUT and res.err.startswith(
        b"gpuimg: /proc/self/out.png: cannot create output file: "), "expected exit 4", res)


@test("output")
def output_is_a_directory():
    os.mkdir(path("d.png"))
    expect_error(run("gray", "rgb8.png", "d.png"), EXIT_OUTPUT,
                 "d.png: is a directory (give a file name, or -o DIR for a batch)")
    # Without an image extension, or not there yet but ending in '/', the same.
    os.mkdir(path("outdir"))
    for name in ("outdir", "outdir/", "new/"):
        expect_error(run("gray", "rgb8.png", name), EXIT_OUTPUT,
                     "%s: is a directory (give a file name, or -o DIR for a batch)" % name)
    os.mkdir(path("r.json"))
    expect_error(run("gray", "rgb8.png", "--report", "r.json"), EXIT_OUTPUT,
                 "r.json: is a directory")
    check_no_leftovers()


@test("output")
def output_same_as_input():
    write("in.png", CORPUS["rgb8.png"][0])
    before = read("in.png")
    expect_error(run("gray", "in.png", "in.png"), EXIT_OUTPUT,
                 "in.png: output is the same file as the input")
    expect_error(run("gray", "in.png", "./in.png"), EXIT_OUTPUT,
                 "./in.png: output is the same file as the input")
    expect_error(run("gray", "in.png", path("in.png")), EXIT_OUTPUT,
                 path("in.png") + ": output is the same file as the input")
    os.symlink("in.png", path("link.png"))
    expect_error(run("gray", "in.png", "link.png"), EXIT_OUTPUT,
                 "link.png: output is the same file as the input")
    os.link(path("in.png"), path("hard.png"))
    expect_error(run("gray", "hard.png", "in.png"), EXIT_OUTPUT,
                 "in.png: output is the same file as the input")
    check(read("in.png") == before, "the input was changed")
    check_no_leftovers()


def failing_commands(out):
    """(args, exit code, message, stdin) of failures at every stage, all writing to out."""
    os.makedirs(path("adir"), exist_ok=True)
    write("mask-9x1.png", png_encode_8bit(9, 1, 1, make_pixels(9, 1, 1, 3)))
    write("trunc.png", CORPUS["rgb8.png"][0][:60])
    return [
        (["blur", "-r", "2048", "rgb8.png", out], EXIT_USAGE,
         range_msg("-r", "2048", 0, 2047), b""),
        (["blur", "--cell", "3", "rgb8.png", out], EXIT_USAGE, "blur: unknown option '--cell'",
         b""),
        (["gray", "rgb8.png", out, "extra.png"], EXIT_USAGE,
         "unexpected argument 'extra.png' (INPUT and OUTPUT already given)", b""),
        (["gray", "then", "rgb8.png", out], EXIT_USAGE,
         unknown_operation_msg("rgb8.png"), b""),
        (["portrait", "rgb8.png", out], EXIT_USAGE,
         "portrait: --mask FILE is required with an input image", b""),
        (["gray", "rgb8.png", out, "--report", "-", "--repeat", "x"], EXIT_USAGE,
         range_msg("--repeat", "x", 1, 100000), b""),
        (["gray", "nope.png", out], EXIT_INPUT, "nope.png: No such file or directory", b""),
        (["gray", "empty.png", out], EXIT_INPUT, "empty.png: empty file", b""),
        (["gray", "-", out], EXIT_INPUT, "<stdin>: empty file", b""),
        (["gray", "adir", out], EXIT_INPUT, "adir: is a directory", b""),
        (["gray", "gif.png", out], EXIT_INPUT, "gif.png: " + unsupported_format(),
         b""),
        (["gray", "trunc.png", out], EXIT_INPUT, None, b""),
        (["--max-pixels", "9", "gray", "rgb8.png", out], EXIT_INPUT,
         "rgb8.png: image is 13x7, over the limit of 9 pixels (see --max-pixels)", b""),
        (["portrait", "--mask", "mask-9x1.png", "rgb8.png", out], EXIT_INPUT,
         "mask-9x1.png: mask is 9x1 but the image is 13x7", b""),
        (["gray", "rgb8.png", out, "--report", "nodir/r.json"], EXIT_OUTPUT,
         "nodir/r.json: cannot create output file: No such file or directory", b""),
        (["gray", "rgb8.png", out, "--report", "adir"], EXIT_OUTPUT, "adir: is a directory", b""),
    ]


@test("output")
def failures_leave_existing_output_untouched():
    original = b"existing output: not an image, must survive \x00\xff"
    write("keep.png", original)
    os.chmod(path("keep.png"), 0o640)
    st0 = os.stat(path("keep.png"))
    for args, code, msg, stdin in failing_commands("keep.png"):
        res = run(*args, stdin=stdin)
        if msg is None:
            check(res.rc == code, "expected exit %d" % code, res)
        else:
            expect_error(res, code, msg)
        check(read("keep.png") == original, "the existing output was changed", res)
        st = os.stat(path("keep.png"))
        check((st.st_ino, stat.S_IMODE(st.st_mode)) == (st0.st_ino, 0o640),
              "the existing output was replaced", res)
        check_no_leftovers(res=res)
    # Same in a subdirectory named by a path.
    os.mkdir(path("sub"))
    write("sub/keep.png", original)
    for args, code, msg, stdin in failing_commands("sub/keep.png"):
        res = run(*args, stdin=stdin)
        check(res.rc == code, "expected exit %d" % code, res)
        check(read("sub/keep.png") == original, "the existing output was changed", res)
        check_no_leftovers(path("sub"), res)


@test("output")
def success_replaces_output_atomically():
    write("out.png", b"old contents")
    expect_ok(cpu("gray", "rgb8.png", "out.png"), stdout_expected=False)
    same_image(read_png(path("out.png")), ref_gray(expected("rgb8.png")), "gray over old file")
    check_no_leftovers()
    # The new file has the usual 0666 & ~umask mode, not mkstemp's 0600.
    expect_ok(cpu("gray", "rgb8.png", "mode.png", preexec_fn=lambda: os.umask(0o022)),
              stdout_expected=False)
    mode = stat.S_IMODE(os.stat(path("mode.png")).st_mode)
    check(mode == 0o644, "output mode is %o, expected 644 with umask 022" % mode)
    expect_ok(cpu("gray", "rgb8.png", "mode2.png", preexec_fn=lambda: os.umask(0o077)),
              stdout_expected=False)
    mode = stat.S_IMODE(os.stat(path("mode2.png")).st_mode)
    check(mode == 0o600, "output mode is %o, expected 600 with umask 077" % mode)


@test("output")
def stdout_errors():
    # A full device: the write error is reported with exit 4.
    if os.path.exists("/dev/full"):
        with open("/dev/full", "wb") as full:
            res = cpu("gray", "rgb8.png", "-", stdout=full)
        expect_error(res, EXIT_OUTPUT, "<stdout>: write failed: No space left on device")
        with open("/dev/full", "wb") as full:
            res = cpu("gray", "rgb8.png", "--report", "-", stdout=full)
        expect_error(res, EXIT_OUTPUT, "<stdout>: write failed: No space left on device")


@test("output")
def stdout_terminal_refused():
    # A terminal: image bytes are refused before any work.
    try:
        master, slave = pty.openpty()
    except OSError as e:
        raise Skip("no pseudo-terminal: %s" % e)
    try:
        res = cpu("gray", "rgb8.png", "-", stdout=slave)
        expect_error(res, EXIT_OUTPUT, "<stdout>: refusing to write image data to a terminal")
        res = cpu("gray", "nope.png", "-", stdout=slave)
        expect_error(res, EXIT_OUTPUT, "<stdout>: refusing to write image data to a terminal")
    finally:
        os.close(master)
        os.close(slave)


@test("output")
def signals_remove_temporary_files():
    # A long run is interrupted once both temporaries exist: the handler removes them.
    # Every signal whose default action ends the process (signal(7)); no core files here.
    for sig in FATAL_SIGNALS:
        argv = [GPUIMG, "--backend", "cpu", "--repeat", "100000", "blur", "-r", "64", "sample:",
                "sig.png", "--report", "sig.json"]
        p = subprocess.Popen(argv, cwd=path(), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, preexec_fn=no_core_files)
        try:
            deadline = time.monotonic() + 30
            while len(leftovers()) < 2 and p.poll() is None and time.monotonic() < deadline:
                time.sleep(0.005)
            check(len(leftovers()) == 2, "the two temporary files did not appear: %r" % leftovers())
            time.sleep(0.3)  # let it get past the set-up into the long pipeline
            check(p.poll() is None, "gpuimg ended early (exit %r)" % p.returncode)
            p.send_signal(sig)
            _, err = p.communicate(timeout=30)
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
        check(p.returncode == -sig, "%s: gpuimg ended with %r, expected death by the signal (%s)"
              % (signal.Signals(sig).name, p.returncode, err))
        check_no_leftovers()
        check(not os.path.exists(path("sig.png")) and not os.path.exists(path("sig.json")),
              "%s: an output appeared" % signal.Signals(sig).name)


FATAL_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGPIPE,
                 signal.SIGUSR1, signal.SIGUSR2, signal.SIGALRM, signal.SIGVTALRM, signal.SIGPROF,
                 signal.SIGXCPU, signal.SIGXFSZ, signal.SIGRTMIN)
# gpuimg's temporary file names: .<prefix>.gpuimg-<pid>.XXXXXX
GPUIMG_TMP = re.compile(r"\.(.+)\.gpuimg-([1-9][0-9]*)\.[A-Za-z0-9]{6}", re.S)


def no_core_files():
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def start_long_run(image, report):
    """A one-image run that lasts, once its two temporary files exist; returns the process."""
    argv = [GPUIMG, "--backend", "cpu", "--repeat", "100000", "blur", "-r", "64", "sample:",
            image, "--report", report]
    p = subprocess.Popen(argv, cwd=path(), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    deadline = time.monotonic() + 30
    while len(leftovers()) < 2 and p.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    return p


@test("output")
def sigkill_leftovers_removed_by_the_next_run():
    # SIGKILL cannot be handled: the temporaries stay, named with the owner's pid...
    p = start_long_run("k.png", "k.json")
    try:
        left = leftovers()
        check(len(left) == 2, "the two temporary files did not appear: %r" % left)
        p.kill()
        p.wait(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    left = leftovers()
    check(sorted(GPUIMG_TMP.fullmatch(n).group(1) for n in left if GPUIMG_TMP.fullmatch(n)) ==
          ["k.json", "k.png"] and all(GPUIMG_TMP.fullmatch(n).group(2) == str(p.pid) for n in left),
          "temporary names are not .NAME.gpuimg-%d.XXXXXX: %r" % (p.pid, left))
    # ...and the next run writing into the directory removes them, naming each once, but only
    # files of exactly that pattern whose process is gone.
    keep = [".k.png.gpuimg-%d.abcdef" % os.getpid(), ".k.png.gpuimg-%d.abcde" % p.pid,
            "k.png.gpuimg-%d.abcdef" % p.pid, ".k.png.gpuimg-0%d.abcdef" % p.pid,
            ".gpuimg-%d.abcdef" % p.pid]
    for name in keep:
        write(name, b"not gpuimg's")
    res = cpu("gray", "rgb8.png", "k2.png")
    check(res.rc == 0, "the next run failed", res)
    check(sorted(res.lines()) == sorted(b"gpuimg: removed %s, left by process %d" %
                                        (n.encode(), p.pid) for n in left),
          "expected one notice per leftover", res)
    check(all(os.path.exists(path(n)) for n in keep), "a file not left by gpuimg was removed")
    check(cpu("gray", "rgb8.png", "k3.png").err == b"", "a second run named them again")
    for name in keep:
        os.unlink(path(name))
    check_no_leftovers()
    # -q: removed without a word.
    p = start_long_run("q.png", "q.json")
    p.kill()
    p.wait(timeout=30)
    check(len(leftovers()) == 2, "SIGKILL did not leave the temporaries: %r" % leftovers())
    res = cpu("gray", "-q", "rgb8.png", "q2.png")
    check(res.rc == 0 and res.err == b"", "-q printed something", res)
    check_no_leftovers()


@test("output")
def names_up_to_name_max():
    # NAME_MAX (255 bytes) is legal for the image and the report, whatever the temporary's name;
    # a shortened prefix never cuts a UTF-8 character in two.
    for n in (248, 250, 255):
        name, rep = "a" * (n - 4) + ".png", "r" * (n - 5) + ".json"
        res = cpu("gray", "rgb8.png", name, "--report", rep)
        check(res.rc == 0, "a %d-byte name was refused" % n, res)
        same_image(read_png(path(name)), ref_gray(expected("rgb8.png")), "%d-byte name" % n)
        os.unlink(path(name))
        os.unlink(path(rep))
    name = "\u00e9" * 125 + "x.png"  # 255 bytes, two to a character
    res = cpu("gray", "rgb8.png", name)
    check(res.rc == 0 and os.path.exists(path(name)), "a 255-byte UTF-8 name was refused", res)
    os.unlink(path(name))
    res = cpu("gray", "rgb8.png", "b" * 252 + ".png")
    expect_error(res, EXIT_OUTPUT, "%s: cannot create output file: File name too long" %
                 ("b" * 252 + ".png"))
    check_no_leftovers()


@test("output")
def fsync_flushes_files_and_directories():
    # --fsync writes the same files (fsync_calls_under_strace counts its calls).
    res = cpu("gray", "--fsync", "rgb8.png", "fs.png", "--report", "fs.json")
    check(res.rc == 0 and res.err == b"", "--fsync run", res)
    same_image(read_png(path("fs.png")), ref_gray(expected("rgb8.png")), "with --fsync")
    check_no_leftovers()


@test("output")
def fsync_calls_under_strace():
    # Each file and its directory are flushed: the image's and the report's, four fsync calls.
    strace = shutil.which("strace")
    if not strace:
        raise Skip("no strace (Debian package strace)")
    for extra, calls in (([], 0), (["--fsync"], 4)):
        p = subprocess.run([strace, "-f", "-e", "trace=fsync,fdatasync", "-o", path("trace"),
                            GPUIMG, "--backend", "cpu", "gray", "rgb8.png", "fs2.png", "--report",
                            "fs2.json"] + extra, cwd=path(), capture_output=True)
        if p.returncode != 0 and b"ptrace" in p.stderr:
            raise Skip("strace cannot trace here: %r" % p.stderr[-200:])
        n = read("trace").count(b"fsync(")
        check(p.returncode == 0 and n == calls, "%r: %d fsync calls, expected %d: %r"
              % (extra, n, calls, p.stderr))


# ---------------------------------------------------------------------------------------------
# clobber: the report and the image must not overwrite each other or the inputs

def expect_refused_same_file(res, name):
    check(res.rc == EXIT_OUTPUT,
          "expected exit 4 (an output names the same file as %s)" % name, res)
    check(res.err.startswith(b"gpuimg: ") and b"same file" in res.err and res.err.count(b"\n") == 1,
          "expected one 'gpuimg: ...: ... same file ...' line", res)


@test("clobber")
def report_never_overwrites_the_input():
    write("in.png", CORPUS["rgb8.png"][0])
    res = run("gray", "in.png", "out.png", "--report", "in.png")
    check(read("in.png") == CORPUS["rgb8.png"][0], "the input was overwritten by the report", res)
    expect_refused_same_file(res, "the input")
    check(not os.path.exists(path("out.png")), "out.png was written")
    check_no_leftovers()


@test("clobber")
def report_never_replaces_the_image():
    # Regression (main.c same_file, fixed): './out.png' next to 'out.png' is not seen as the same file
    # while neither exists, so the report replaces the image; and the refusal is exit 2
    # without the two usage lines every other usage error prints.
    failures = []
    for out, rep in (("out.png", "out.png"), ("out.png", "./out.png"),
                     ("out.png", path("out.png"))):
        res = run("gray", "rgb8.png", out, "--report", rep)
        try:
            check(res.rc in (EXIT_USAGE, EXIT_OUTPUT) and res.out == b"",
                  "expected exit 2 or 4 (the report and the image name one file)", res)
            first = res.err.split(b"\n")[0]
            check(first.startswith(b"gpuimg: ") and b"same file" in first,
                  "expected a 'gpuimg: ...same file...' message", res)
            # A usage error looks like every other one: the message, then the usage lines.
            check(res.err == first + b"\n" + (USAGE if res.rc == EXIT_USAGE else b""),
                  "exit %d: expected the message%s" % (
                      res.rc, " and the usage lines" if res.rc == EXIT_USAGE else " alone"), res)
            check(not os.path.exists(path("out.png")), "out.png was written", res)
        except Failure as e:
            failures.append(str(e))
        if os.path.exists(path("out.png")):
            os.unlink(path("out.png"))
        check_no_leftovers()
    # An existing image named twice is not replaced either.
    write("old.png", b"old image")
    res = run("gray", "rgb8.png", "old.png", "--report", "./old.png")
    try:
        check(res.rc in (EXIT_USAGE, EXIT_OUTPUT), "expected exit 2 or 4", res)
        check(read("old.png") == b"old image", "old.png was replaced", res)
    except Failure as e:
        failures.append(str(e))
    check(not failures, "\n".join(failures))


@test("clobber")
def output_never_overwrites_the_mask():
    w, h, _, _ = expected("rgb8.png")
    mask = png_encode_8bit(w, h, 1, make_pixels(w, h, 1, 8))
    write("m.png", mask)
    res = run("portrait", "--mask", "m.png", "rgb8.png", "m.png")
    check(read("m.png") == mask, "the mask was overwritten by the output", res)
    expect_error(res, EXIT_OUTPUT, "m.png: output is the same file as the mask")
    res = run("portrait", "--mask", "m.png", "rgb8.png", "out.png", "--report", "./m.png")
    check(read("m.png") == mask, "the mask was overwritten by the report", res)
    expect_error(res, EXIT_OUTPUT, "./m.png: output is the same file as the mask")
    check_no_leftovers()


# ---------------------------------------------------------------------------------------------
# permissions: what file modes refuse; root passes every permission check, so the group skips
# (exit 77) as root

def skip_as_root():
    if os.geteuid() == 0:
        raise Skip("running as root: file permissions are not enforced")


@test("permissions")
def unreadable_input():
    skip_as_root()
    write("secret.png", CORPUS["rgb8.png"][0])
    os.chmod(path("secret.png"), 0)
    expect_error(run("gray", "secret.png"), EXIT_INPUT, "secret.png: Permission denied")
    check(not os.path.exists(path("out.png")), "an output was written")


@test("permissions")
def unwritable_output_directory_permissions():
    skip_as_root()
    os.mkdir(path("ro"))
    write("ro/keep.png", b"existing output")
    os.chmod(path("ro"), 0o555)
    try:
        expect_error(run("gray", "rgb8.png", "ro/out.png"), EXIT_OUTPUT,
                     "ro/out.png: cannot create output file: Permission denied")
        expect_error(run("gray", "rgb8.png", "ro/keep.png"), EXIT_OUTPUT,
                     "ro/keep.png: cannot create output file: Permission denied")
        check(read("ro/keep.png") == b"existing output", "the existing output was changed")
        check(sorted(os.listdir(path("ro"))) == ["keep.png"], "files appeared in ro/")
    finally:
        os.chmod(path("ro"), 0o755)
