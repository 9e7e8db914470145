#!/usr/bin/env python3
# test_batch_writes.py: batch mode's writes under races and signals: no file replaced without --force.
"""Runs the gpuimg binary named by $GPUIMG in batch mode (group 'writes'; environment as for
test_batch.py, whose helpers it uses) and checks that a file appearing while an image converts
is never replaced without --force, that concurrent batches convert each name once, that every
fatal signal removes the temporary files, and that a killed run's leftovers are swept.
"""

import errno
import os
import resource
import signal
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import gpuimg_testlib as testlib  # noqa: E402
from gpuimg_testlib import (  # noqa: E402
    EXIT_OUTPUT, GPUIMG, PNG_SIGNATURE, check, path, random_png, read, test)
from test_batch import fresh, make_inputs, make_samples, summary, temporaries  # noqa: E402

EXISTS = b"gpuimg: %s: exists (use --force to replace it)"


def open_writer(fifo, p):
    """Opens fifo for writing once gpuimg (process p) opens it for reading; None if it ends."""
    deadline = time.monotonic() + 30
    while p.poll() is None and time.monotonic() < deadline:
        try:
            fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError as e:
            if e.errno != errno.ENXIO:  # no reader yet
                raise
            time.sleep(0.002)
            continue
        os.set_blocking(fd, True)
        return fd
    return None


def convert_while_target_appears(force):
    """One batch image read from a FIFO: gpuimg opens it only after its check that the output
    does not exist, so the output created then appears while the image converts."""
    os.makedirs(path("infifo"), exist_ok=True)
    fifo = path("infifo", "big.png")
    if not os.path.exists(fifo):
        os.mkfifo(fifo)
    out = fresh("outclob")
    os.mkdir(path(out))
    argv = [GPUIMG, "--backend", "cpu", "gray", "-o", out, "infifo/big.png"]
    p = subprocess.Popen(argv + (["--force"] if force else []), cwd=path(),
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    fd = open_writer(fifo, p)
    check(fd is not None, "gpuimg never opened the input (exit %r)" % p.poll())
    with open(path(out, "big.png"), "wb") as f:
        f.write(b"precious user data")
    with os.fdopen(fd, "wb") as f:
        f.write(random_png(64, 48, 3, 1))
    _, err = p.communicate(timeout=60)
    return p.returncode, err.splitlines(), read(os.path.join(out, "big.png")), out


@test("writes")
def file_appearing_during_conversion_is_kept():
    rc, lines, data, out = convert_while_target_appears(force=False)
    check(rc == EXIT_OUTPUT and lines[:-1] == [EXISTS % b"outclob/big.png"],
          "expected exit 4 and the exists line, got %r %r" % (rc, lines))
    check(data == b"precious user data", "the file that appeared was replaced")
    check(not temporaries(path(out)), "temporary files left: %r" % temporaries(path(out)))
    # --force replaces it, as documented.
    rc, lines, data, out = convert_while_target_appears(force=True)
    check(rc == 0 and data.startswith(PNG_SIGNATURE), "--force: %r %r" % (rc, lines))


@test("writes")
def concurrent_batches_convert_each_name_once():
    inputs = make_inputs("inc2", 100, seed=900)
    out = fresh("outc2")
    argv = [GPUIMG, "--backend", "cpu", "gray", "-j", "2", "-o", out] + inputs
    procs = [subprocess.Popen(argv, cwd=path(), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE) for _ in range(2)]
    results = []
    for p in procs:
        o, e = p.communicate(timeout=120)
        results.append(testlib.Result(argv, p.returncode, o, e))
    counts = [summary(res) for res in results]
    check(sum(c[0] for c in counts) == 100 and sum(c[1] for c in counts) == 100,
          "(converted, failed, skipped) %r: expected 100 converted in all" % counts)
    for res in results:
        for line in res.lines()[:-1]:
            check(line.startswith(b"gpuimg: outc2/") and line.endswith(
                b": exists (use --force to replace it)"), "unexpected line %r" % line)
    names = sorted(os.listdir(path(out)))
    check(len(names) == 100 and all(read(os.path.join(out, n)).startswith(PNG_SIGNATURE)
                                    for n in names), "outputs: %r" % names[:5])


def no_core_files():
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


@test("writes")
def every_fatal_signal_removes_temporary_files():
    inputs = make_samples("insig", 64)
    for sig in (signal.SIGQUIT, signal.SIGPIPE, signal.SIGUSR1, signal.SIGUSR2, signal.SIGALRM,
                signal.SIGVTALRM, signal.SIGPROF, signal.SIGXCPU, signal.SIGHUP, signal.SIGRTMIN):
        out = fresh("outsig")
        argv = [GPUIMG, "--backend", "cpu", "blur", "-r", "4", "-j", "2", "-o", out,
                "--report", "sig.jsonl"] + inputs
        p = subprocess.Popen(argv, cwd=path(), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, preexec_fn=no_core_files)
        deadline = time.monotonic() + 20
        while p.poll() is None and time.monotonic() < deadline and \
                not any(n.startswith(".sig.jsonl.") for n in os.listdir(path())):
            time.sleep(0.005)
        time.sleep(0.2)
        check(p.poll() is None, "gpuimg ended before the signal (exit %r)" % p.returncode)
        p.send_signal(sig)
        p.communicate(timeout=30)
        name = signal.Signals(sig).name
        check(p.returncode == -sig, "%s: expected death by it, got %r" % (name, p.returncode))
        left = temporaries(path(out)) + \
            [n for n in os.listdir(path()) if n.startswith(".sig.jsonl.")]
        check(not left, "temporary files left after %s: %r" % (name, left))
        check(not os.path.exists(path("sig.jsonl")), "a partial report was kept")


@test("writes")
def report_to_a_closed_pipe_dies_of_sigpipe_cleanly():
    # `gpuimg ... --report - | head -n 1`: the next report line meets a closed pipe.
    inputs = make_samples("insig", 64)
    out = fresh("outpipe")
    argv = [GPUIMG, "--backend", "cpu", "blur", "-r", "4", "-j", "2", "-o", out, "--report", "-"]
    p = subprocess.Popen(argv + inputs, cwd=path(), stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdout.readline()
    p.stdout.close()
    p.communicate(timeout=60)
    check(p.returncode == -signal.SIGPIPE, "expected death by SIGPIPE, got %r" % p.returncode)
    check(not temporaries(path(out)), "temporary files left: %r" % temporaries(path(out)))


@test("writes")
def leftovers_of_dead_processes_are_swept():
    dead = subprocess.Popen(["true"])
    dead.wait()
    inputs = make_inputs("insw", 2, seed=950)
    out = fresh("outsw")
    os.mkdir(path(out))
    left = ".insw00.png.gpuimg-%d.Ab12Cd" % dead.pid
    with open(path(out, left), "wb") as f:
        f.write(b"half an image")
    res = testlib.cpu("gray", "-o", out, *inputs)
    check(res.rc == 0 and res.lines()[:-1] == [b"gpuimg: removed %s/%s, left by process %d" %
                                               (out.encode(), left.encode(), dead.pid)],
          "expected one notice", res)
    check(sorted(os.listdir(path(out))) == ["insw00.png", "insw01.png"], "files left")


if __name__ == "__main__":
    sys.exit(testlib.main(sys.argv, "batch-"))
