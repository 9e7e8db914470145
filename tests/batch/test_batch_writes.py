#!/usr/bin/env python3
# test_batch_writes.py: batch mode's writes under races and signals: no file replaced without --force.
"""Runs the gpuimg binary named by $GPUIMG in batch mode (group 'writes'; environment as for
test_batch.py, whose helpers it uses) and checks that a file appearing while an image converts
is never replaced without --force (made deterministic by GPUIMG_TEST_STOP_BEFORE_RENAME, which
stops gpuimg just before the rename), and counts as existing with --skip-existing; that a
report appearing meanwhile is kept and leaves no temporary file, as does one that cannot be
written; that concurrent batches convert each name once, and with --skip-existing all succeed;
that running out of file descriptors is a resource failure (exit 1); that every fatal signal
removes the temporary files; and that a killed run's leftovers are swept.
"""

import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import gpuimg_testlib as testlib  # noqa: E402
from gpuimg_testlib import (  # noqa: E402
    EXIT_FAILURE, EXIT_OUTPUT, GPUIMG, PNG_SIGNATURE, Failure, check, path, random_png, read,
    test)
from test_batch import fresh, make_inputs, make_samples, summary, temporaries  # noqa: E402

EXISTS = b"gpuimg: %s: exists (use --force to replace it)"


def stopped_before_rename(argv, name, meanwhile, env=None, at="RENAME"):
    """Runs gpuimg (argv, in path(); env: more environment) with
    GPUIMG_TEST_STOP_BEFORE_RENAME=name (at="OPEN": ..._BEFORE_OPEN), so that it stops itself
    just before it gives a complete temporary file that name (creates it); calls meanwhile(pid)
    while it is stopped, then lets it go on. Returns its Result."""
    env = dict(os.environ, **{"GPUIMG_TEST_STOP_BEFORE_" + at: name}, **(env or {}))
    p = subprocess.Popen(argv, cwd=path(), env=env, stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while True:
        pid, status = os.waitpid(p.pid, os.WUNTRACED | os.WNOHANG)
        if pid and os.WIFSTOPPED(status):
            break
        if pid:  # it ended (reaped here: Popen must not wait for it again)
            p.returncode = os.waitstatus_to_exitcode(status)
        elif time.monotonic() > deadline:
            p.kill()
            p.wait()
        else:
            time.sleep(0.002)
            continue
        raise Failure("gpuimg did not stop before the %s of %s (exit %r): %r" %
                      (at.lower(), name, p.returncode, p.stderr.read()))
    try:
        meanwhile(p.pid)
    finally:
        os.kill(p.pid, signal.SIGCONT)
    try:
        out, err = p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        raise Failure("gpuimg still running 60 s after it went on (stopped at the %s of %s)" %
                      (at.lower(), name))
    return testlib.Result(argv, p.returncode, out, err)


def convert_while_target_appears(force):
    """One batch image whose output appears while it converts: created while gpuimg is
    stopped just before it renames the complete image into place."""
    inputs = make_inputs("inclob", 1, seed=880)
    out = fresh("outclob")
    argv = [GPUIMG, "--backend", "cpu", "gray", "-o", out] + inputs + (["--force"] if force else [])

    def plant(_):
        with open(path(out, "inclob00.png"), "wb") as f:
            f.write(b"precious user data")
    res = stopped_before_rename(argv, out + "/inclob00.png", plant)
    return res.rc, res.lines(), read(os.path.join(out, "inclob00.png")), out


@test("writes")
def file_appearing_during_conversion_is_kept():
    rc, lines, data, out = convert_while_target_appears(force=False)
    check(rc == EXIT_OUTPUT and lines[:-1] == [EXISTS % b"outclob/inclob00.png"],
          "expected exit 4 and the exists line, got %r %r" % (rc, lines))
    check(data == b"precious user data", "the file that appeared was replaced")
    check(not temporaries(path(out)), "temporary files left: %r" % temporaries(path(out)))
    # --force replaces it, as documented.
    rc, lines, data, out = convert_while_target_appears(force=True)
    check(rc == 0 and data.startswith(PNG_SIGNATURE), "--force: %r %r" % (rc, lines))


@test("writes")
def skip_existing_counts_an_output_completed_meanwhile():
    # Another batch completes out/in01.png while this one converts it: left alone, counted
    # as existing, exit 0.
    inputs = make_inputs("inskip", 3, seed=890)
    out = fresh("outskip")
    theirs = random_png(9, 7, 3, 891)
    argv = [GPUIMG, "--backend", "cpu", "gray", "-j", "2", "--skip-existing", "-o", out,
            "--report", "skip.jsonl"] + inputs
    if os.path.exists(path("skip.jsonl")):
        os.remove(path("skip.jsonl"))

    def plant(_):
        with open(path(out, "inskip01.png"), "wb") as f:
            f.write(theirs)
    res = stopped_before_rename(argv, out + "/inskip01.png", plant)
    check(res.rc == 0 and res.lines()[:-1] == [] and res.lines()[-1].startswith(
        b"gpuimg: 2 converted, 0 failed, 1 existing, 0 skipped (shard) in "),
        "expected exit 0, 2 converted and 1 existing", res)
    check(read(os.path.join(out, "inskip01.png")) == theirs, "the other batch's output replaced")
    check(sorted(os.listdir(path(out))) == ["inskip00.png", "inskip01.png", "inskip02.png"],
          "files in DIR: %r" % os.listdir(path(out)))
    objs = [json.loads(line) for line in read("skip.jsonl").splitlines()]
    check([o["status"] for o in objs[:-1]] == ["ok", "existing", "ok"] and
          objs[-1]["existing"] == 1 and objs[-1]["failed"] == 0 and
          objs[-1]["exit_status"] == 0, "report: %r" % objs)


@test("writes")
def concurrent_skip_existing_batches_never_fail():
    # Three batches on one directory, as a re-run job array might: every name is converted
    # once and every batch exits 0, what the others made counted as existing.
    inputs = make_inputs("inc3", 60, seed=920)
    out = fresh("outc3")
    argv = [GPUIMG, "--backend", "cpu", "gray", "-j", "2", "--skip-existing", "-o", out] + inputs
    for _ in range(3):
        shutil.rmtree(path(out), ignore_errors=True)
        procs = [subprocess.Popen(argv, cwd=path(), stdin=subprocess.DEVNULL,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                 for _ in range(3)]
        for p in procs:
            o, e = p.communicate(timeout=120)
            res = testlib.Result(argv, p.returncode, o, e)
            m = re.match(rb"^gpuimg: (\d+) converted, 0 failed, (\d+) existing, 0 skipped ",
                         e)
            check(p.returncode == 0 and m and int(m.group(1)) + int(m.group(2)) == 60 and
                  len(res.lines()) == 1, "expected exit 0 and no failure", res)
        names = sorted(os.listdir(path(out)))
        check(len(names) == 60 and all(read(os.path.join(out, n)).startswith(PNG_SIGNATURE)
                                       for n in names), "outputs: %r" % names[:5])


@test("writes")
def report_appearing_meanwhile_is_kept_and_no_temporary_left():
    inputs = make_inputs("inrep", 2, seed=930)
    out = fresh("outrep")
    for name in os.listdir(path()):
        if name.startswith(".rep.jsonl.") or name == "rep.jsonl":
            os.remove(path(name))
    argv = [GPUIMG, "--backend", "cpu", "gray", "-o", out, "--report", "rep.jsonl"] + inputs

    def plant(_):
        with open(path("rep.jsonl"), "wb") as f:
            f.write(b"another run's report\n")
    res = stopped_before_rename(argv, "rep.jsonl", plant)
    check(res.rc == EXIT_OUTPUT and res.lines()[:-1] == [EXISTS % b"rep.jsonl"] and
          res.lines()[-1].startswith(b"gpuimg: 2 converted, 0 failed, 0 skipped (shard) in "),
          "expected exit 4 and the exists line", res)
    check(read("rep.jsonl") == b"another run's report\n", "the report that appeared was replaced")
    left = [n for n in os.listdir(path()) if n.startswith(".rep.jsonl.")]
    check(not left, "temporary report left: %r" % left)


@test("writes")
def report_that_cannot_be_written_leaves_no_temporary():
    # Files may grow to 8 KiB (SIGXFSZ ignored: a write past it fails with EFBIG): every
    # output fits, the report of 24 images does not. Its write fails (exit 4) and neither the
    # report nor its temporary file is left.
    inputs = make_inputs("infsz", 24, seed=935)
    out = fresh("outfsz")
    for name in os.listdir(path()):
        if name.startswith(".big.jsonl.") or name == "big.jsonl":
            os.remove(path(name))

    def limit_file_size():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (8192, 8192))
    res = testlib.cpu("gray", "-o", out, "--report", "big.jsonl", *inputs,
                      preexec_fn=limit_file_size)
    check(res.rc == EXIT_OUTPUT and res.lines()[:-1] == [
        b"gpuimg: big.jsonl: write failed: File too large"] and
        res.lines()[-1].startswith(b"gpuimg: 24 converted, 0 failed, 0 skipped (shard) in "),
        "expected exit 4 and the write failure", res)
    check(len(os.listdir(path(out))) == 24, "outputs: %r" % os.listdir(path(out)))
    left = [n for n in os.listdir(path()) if n.startswith(".big.jsonl.") or n == "big.jsonl"]
    check(not left, "report or its temporary file left: %r" % left)


@test("writes")
def too_many_open_files_is_a_resource_failure():
    # Once the first image is written, the process may open no more files: the second
    # image's input fails with exit 1 (a resource ran out), not 3 (a bad input).
    inputs = make_inputs("infd", 2, seed=940)
    out = fresh("outfd")
    argv = [GPUIMG, "--backend", "cpu", "gray", "-j", "1", "-o", out] + inputs

    def no_more_files(pid):
        fds = {int(n) for n in os.listdir("/proc/%d/fd" % pid)}
        lowest_free = min(set(range(len(fds) + 1)) - fds)
        resource.prlimit(pid, resource.RLIMIT_NOFILE, (lowest_free, lowest_free))
    # (An ASan build's leak check at exit needs descriptors too: not in this run.)
    asan = {"ASAN_OPTIONS": os.environ.get("ASAN_OPTIONS", "") + ":detect_leaks=0"}
    res = stopped_before_rename(argv, out + "/infd00.png", no_more_files, env=asan)
    check(res.rc == EXIT_FAILURE and res.lines()[:-1] == [
        b"gpuimg: infd/infd01.png: Too many open files"], "expected exit 1", res)
    check(sorted(os.listdir(path(out))) == ["infd00.png"], "outputs: %r" % os.listdir(path(out)))


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
