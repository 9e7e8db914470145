#!/usr/bin/env python3
# test_batch_cluster.py: batch mode on clusters: --shard slurm, --skip-existing, allocation-aware
# defaults, gpuimg summary.
"""Runs the gpuimg binary named by $GPUIMG (groups 'slurm-env', 'resume', 'cores' and
'summary'; environment as for test_batch.py, whose helpers it uses). Slurm array tasks are
simulated by their environment variables; the real Slurm run is test_slurm.py. The CPU quota
test makes a cgroup (v1 cpu or v2) when it can, and says so when it cannot; the parser itself
is unit-tested on sample trees by tests/test_cores.c.
"""

import json
import os
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import gpuimg_testlib as testlib  # noqa: E402
from gpuimg_testlib import (  # noqa: E402
    EXIT_OUTPUT, EXIT_USAGE, GPUIMG, USAGE, Skip, check, expect_error, parse_page, path, test)
from gpuimg_testlib import cpu as run  # noqa: E402
from test_batch import (  # noqa: E402
    files_of, fresh, make_shard_inputs, read_report, shard_of, summary, temporaries)

SLURM_VARS = ("SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_MIN", "SLURM_ARRAY_TASK_MAX",
              "SLURM_ARRAY_TASK_STEP", "SLURM_ARRAY_TASK_COUNT")


def array_task(task, lo, hi, step, count=True):
    """The environment Slurm gives task `task` of --array=lo-hi:step."""
    env = {k: v for k, v in os.environ.items() if k not in SLURM_VARS}
    env.update(SLURM_ARRAY_TASK_ID=str(task), SLURM_ARRAY_TASK_MIN=str(lo),
               SLURM_ARRAY_TASK_MAX=str(hi), SLURM_ARRAY_TASK_STEP=str(step))
    if count:
        env["SLURM_ARRAY_TASK_COUNT"] = str((hi - lo) // step + 1)
    return env


def gray(*args, env=None):
    """The operation make_shard_inputs() ran unsharded."""
    return run("blur", "-r", "1", "-q", *args, env=env)


@test("slurm-env")
def any_array_spec_covers_every_file_once():
    inputs, everything = make_shard_inputs()
    for lo, hi, step in ((0, 7, 1), (1, 15, 2), (3, 17, 7), (1, 3, 1)):
        out = fresh("out-arr")
        n = (hi - lo) // step + 1
        for k, task in enumerate(range(lo, hi + 1, step)):
            res = gray("--shard", "slurm", "-o", out, "--from", "shard-list.txt",
                       "--report", "arr-%d.jsonl" % task, env=array_task(task, lo, hi, step))
            check(res.rc == 0, "array %d-%d:%d task %d" % (lo, hi, step, task), res)
            s = read_report("arr-%d.jsonl" % task)[-1]
            want = sum(1 for p in inputs if shard_of(p, n) == k + 1)
            check(s["shard"] == "%d/%d" % (k + 1, n) and s["images"] == want and
                  s["inputs"] == 40 and s["skipped"] == 40 - want, "summary %r" % s)
            os.unlink(path("arr-%d.jsonl" % task))
        check(files_of(path(out)) == everything,
              "array %d-%d:%d: the union differs from the unsharded run" % (lo, hi, step))


@test("slurm-env")
def auto_without_slurm_and_subset_reruns():
    inputs, everything = make_shard_inputs()
    env = {k: v for k, v in os.environ.items() if k not in SLURM_VARS}
    res = gray("--shard", "auto", "-o", fresh("out-auto"), "--from", "shard-list.txt", env=env)
    check(res.rc == 0 and files_of(path("out-auto")) == everything, "auto outside Slurm", res)
    # A re-submitted single task (sbatch --array=5) is an array of one: every input.
    res = gray("--shard", "slurm", "-o", fresh("out-one"), "--from", "shard-list.txt",
               env=array_task(5, 5, 5, 1))
    check(res.rc == 0 and files_of(path("out-one")) == everything, "an array of one", res)
    # Re-running shard 2 of the original 4 by name: --shard 2/4 under any Slurm variables.
    res = gray("--shard", "2/4", "-o", fresh("out-k"), "--from", "shard-list.txt",
               env=array_task(9, 9, 9, 1))
    want = {os.fsencode(os.path.basename(p)) for p in inputs if shard_of(p, 4) == 2}
    check(res.rc == 0 and set(files_of(path("out-k"))) == want, "--shard 2/4 in Slurm", res)


@test("slurm-env")
def slurm_variables_missing_or_inconsistent():
    base = ["gray", "--shard", "slurm", "-o", "o", "x.png"]
    env = {k: v for k, v in os.environ.items() if k not in SLURM_VARS}
    pre = "--shard slurm: "
    expect_error(run(*base, env=env), EXIT_USAGE,
                 pre + "SLURM_ARRAY_TASK_ID is not set (not a Slurm array task? give --shard K/N)")
    e = array_task(3, 1, 5, 1)
    del e["SLURM_ARRAY_TASK_STEP"]
    expect_error(run(*base, env=e), EXIT_USAGE, pre + "SLURM_ARRAY_TASK_STEP is not set (not a "
                 "Slurm array task? give --shard K/N)")
    expect_error(run(*base, env=array_task(4, 1, 15, 2)), EXIT_USAGE, pre + "task 4 is not in "
                 "the array 1-15:2 (SLURM_ARRAY_TASK_ID, _MIN, _MAX, _STEP)")
    expect_error(run(*base, env=array_task(1, 1, 6, 2)), EXIT_USAGE, pre + "task 1 is not in "
                 "the array 1-6:2 (SLURM_ARRAY_TASK_ID, _MIN, _MAX, _STEP)")
    e = array_task(1, 1, 7, 1)
    e["SLURM_ARRAY_TASK_COUNT"] = "3"
    expect_error(run(*base, env=e), EXIT_USAGE, pre + "the array 1-7:1 has 7 tasks, "
                 "SLURM_ARRAY_TASK_COUNT says 3 (an irregular --array list? give --shard K/N)")
    e = array_task(1, 1, 7, 1)
    e["SLURM_ARRAY_TASK_MIN"] = "-1"
    expect_error(run(*base, env=e), EXIT_USAGE,
                 pre + "SLURM_ARRAY_TASK_MIN: invalid value '-1' (expected a task number)")
    expect_error(run("gray", "--shard", "slurm", "x.png", "y.png"), EXIT_USAGE,
                 "--shard and --skip-existing need -o DIR")
    expect_error(run("gray", "--skip-existing", "--force", "-o", "o", "x.png"), EXIT_USAGE,
                 "--skip-existing: not available with --force")


@test("resume")
def skip_existing_finishes_what_is_missing():
    inputs, everything = make_shard_inputs()
    out = fresh("out-res")
    res = gray("--shard", "1/2", "-o", out, "--from", "shard-list.txt", "--report", "r1.jsonl")
    check(res.rc == 0, "first half", res)
    first = files_of(path(out))
    # A temporary left by a killed run and a complete output removed: neither counts.
    victim = sorted(first)[0]
    os.unlink(os.path.join(os.fsencode(path(out)), victim))
    with open(path(out, ".%s.gpuimg-1.abcdef" % victim.decode()), "wb") as f:
        f.write(b"partial")
    res = gray("-o", out, "--from", "shard-list.txt", "--report", "r1.jsonl", "--skip-existing")
    expect_error(res, EXIT_OUTPUT, "r1.jsonl: exists (use --force to replace it)")
    check(len(read_report("r1.jsonl")) == 41, "the earlier report was kept")
    res = run("blur", "-r", "1", "-o", out, "--from", "shard-list.txt", "--report", "r2.jsonl",
              "--skip-existing")
    existing = len(first) - 1
    check(res.rc == 0 and res.lines()[-1].startswith(
        b"gpuimg: %d converted, 0 failed, %d existing, 0 skipped (shard) in " %
        (40 - existing, existing)), "the re-run's counts", res)
    done = {k: v for k, v in files_of(path(out)).items() if not k.startswith(b".")}
    check(done == everything and len(temporaries(path(out))) == 1,
          "after the re-run: all outputs, byte for byte; the other run's temporary left alone")
    objs = read_report("r2.jsonl")
    check(sum(o.get("status") == "existing" for o in objs[:-1]) == existing and
          objs[-1]["existing"] == existing and objs[-1]["converted"] == 40 - existing and
          objs[-1]["images"] == 40, "the re-run's report %r" % objs[-1])
    # --force still replaces the report.
    res = gray("-o", out, "--from", "shard-list.txt", "--report", "r1.jsonl", "--force")
    check(res.rc == 0 and read_report("r1.jsonl")[-1]["converted"] == 40, "--force", res)


def jobs_of(prefix, report):
    res = subprocess.run(prefix + [GPUIMG, "--backend", "cpu", "gray", "-q", "-o",
                                   fresh("out-j"), "--from", "shard-list.txt", "--report",
                                   report], cwd=path(), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, timeout=60)
    check(res.returncode == 0, "%r: %r" % (prefix, res.stderr))
    s = read_report(report)[-1]
    return s["jobs"], s["threads"]


def quota_cgroup():
    """A cgroup limited to one CPU: (cgroup.procs path, its directory), or None."""
    for base, files in (("/sys/fs/cgroup/cpu", ("cpu.cfs_quota_us", "100000")),
                        ("/sys/fs/cgroup", ("cpu.max", "100000 100000"))):
        d = os.path.join(base, "gpuimg-test-%d" % os.getpid())
        try:
            os.mkdir(d)
        except OSError:
            continue
        try:
            with open(os.path.join(d, files[0]), "w") as f:
                f.write(files[1])
            return d
        except OSError:
            os.rmdir(d)
    return None


@test("cores")
def defaults_follow_the_affinity():
    make_shard_inputs()
    if not shutil.which("taskset"):
        raise Skip("taskset is not installed (Debian package util-linux)")
    check(jobs_of(["taskset", "-c", "0"], "ts.jsonl") == (1, 1), "taskset -c 0: 1 worker")


@test("cores")
def defaults_follow_the_cpu_quota():
    make_shard_inputs()
    d = quota_cgroup()
    if d is None:
        raise Skip("no writable cgroup for a CPU quota here (tests/test_cores.c covers the "
                   "parser)")
    try:
        enter = "echo $$ > %s/cgroup.procs && exec \"$@\"" % d
        check(jobs_of(["sh", "-c", enter, "sh"], "quota.jsonl") == (1, 1),
              "a 1-CPU quota: 1 worker, 1 thread")
    finally:
        os.rmdir(d)


@test("summary")
def summary_adds_up_shard_reports():
    inputs, everything = make_shard_inputs()
    out = fresh("out-sum")
    for k in (1, 2, 3):
        res = gray("--shard", "%d/3" % k, "-o", out, "--from", "shard-list.txt",
                   "--report", "s%d.jsonl" % k)
        check(res.rc == 0, "shard %d" % k, res)
    p = subprocess.run([GPUIMG, "summary", "--format", "json", "s1.jsonl", "s2.jsonl",
                        "s3.jsonl"], cwd=path(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    t = json.loads(p.stdout)
    check(p.returncode == 0 and t["reports"] == 3 and t["shards"] == 3 and
          t["missing_shards"] == [] and t["images"] == 40 and t["converted"] == 40 and
          t["inputs"] == 40 and t["failed"] == 0 and t["skipped"] == 80 and
          t["exit_status"] == 0, "summary --format json: %r" % t)
    p = subprocess.run([GPUIMG, "summary", "s1.jsonl", "s3.jsonl"], cwd=path(),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    check(p.returncode == 0 and b"shards:      2 of 3 (missing: 2)\n" in p.stdout and
          b"converted:   %d\n" % sum(1 for q in inputs if shard_of(q, 3) != 2) in p.stdout,
          "summary text: %r" % p.stdout)
    with open(path("bad.jsonl"), "w") as f:
        f.write('{"index": 0}\n')
    for args, code, err in (
            (["bad.jsonl"], 3, b"gpuimg: bad.jsonl: no summary line (not a finished gpuimg "
                               b"batch report)\n"),
            (["nope.jsonl"], 3, b"gpuimg: nope.jsonl: No such file or directory\n"),
            ([], 2, b"gpuimg: summary: no reports (give REPORT...)\n"
                    b"Usage: gpuimg summary [--format text|json|html] REPORT...\n"
                    b"Try 'gpuimg summary --help' for more information.\n"),
            (["--format", "xml", "s1.jsonl"], 2,
             b"gpuimg: summary: --format: invalid value 'xml' (expected text, json or html)\n"
             b"Usage: gpuimg summary [--format text|json|html] REPORT...\n"
             b"Try 'gpuimg summary --help' for more information.\n")):
        p = subprocess.run([GPUIMG, "summary"] + args, cwd=path(), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE)
        check(p.returncode == code and p.stderr == err,
              "summary %r: %d %r" % (args, p.returncode, p.stderr))


TRICKY = "<script>&\"'"


def hand_report(name, *lines):
    with open(path(name), "w") as f:
        f.write("".join(json.dumps(line) + "\n" for line in lines))


@test("summary")
def summary_html_page():
    bad = TRICKY + ".png"

    def failed(name):
        return {"input": {"name": name}, "index": 1, "status": "failed", "error": name + ": gone"}

    # Two runs one after the other, then one cut short: only the last summary's failures count.
    hand_report("<b>&1.jsonl", failed("old.png"),
                {"summary": True, "images": 1, "converted": 0, "failed": 1, "skipped": 0,
                 "wall_ms": 5, "exit_status": 3},
                {"input": {"name": "ok.png"}, "index": 0, "status": "converted"},
                {"input": {"name": bad}, "index": 1, "status": "failed",
                 "error": bad + ": unsupported format (not PNG or JPEG)", "exit_code": 3},
                {"summary": True, "images": 2, "converted": 1, "failed": 1, "skipped": 3,
                 "inputs": 5, "wall_ms": 500, "shard": "1/2", "exit_status": 3,
                 "stage_totals_ms": {"read": 1.0, "decode": 3.0, TRICKY: 6.0}},
                failed("late.png"))
    hand_report("s2.jsonl",
                {"summary": True, "images": 3, "converted": 3, "failed": 0, "skipped": 2,
                 "inputs": 5, "wall_ms": 1000, "shard": "2/2", "exit_status": 0,
                 "stage_totals_ms": {"decode": 10.0}})
    p = testlib.run("summary", "--format", "html", "<b>&1.jsonl", "s2.jsonl", cwd=path())
    check(p.rc == 0 and p.err == b"", "summary html failed", p)
    page = parse_page(p, p.out)
    check(b'<h1 class="fail">4 converted, 1 failed</h1>' in p.out, "heading", p)
    rows = [r["cells"] for r in page.rows]
    for want in (["reports", "2"], ["shards", "2 of 2"], ["images", "5"], ["failed", "1"],
                 ["wall", "1.00 s (longest report), 1.50 s added up"],
                 ["throughput", "5.0 images/s (images over the longest wall)"],
                 ["exit status", "3 (the largest)"],
                 ["<b>&1.jsonl", "1/2", "2", "1", "1", "0.50", "4.0"],
                 ["s2.jsonl", "2/2", "3", "3", "0", "1.00", "3.0"],
                 ["", "read", "1.000", "5.0%"], ["", "decode", "13.000", "65.0%"],
                 ["", TRICKY, "6.000", "30.0%"],
                 ["<b>&1.jsonl", bad, bad + ": unsupported format (not PNG or JPEG)"]):
        check(want in rows, "no row %r in %r" % (want, rows), p)
    check(sum(1 for r in rows if r and r[-1].endswith(("(not PNG or JPEG)", ": gone"))) == 1,
          "failures of other runs listed: %r" % rows, p)
    widths = [float(a["width"]) for t, a in page.tags if t == "rect" and "x" in a]
    check(widths == [30.0, 390.0, 180.0], "share bar widths %r" % widths, p)
    check(b"&lt;script&gt;&amp;&quot;&apos;" in p.out and b"<script>" not in p.out,
          "names not escaped", p)
    # Nothing failed, no stage times.
    hand_report("plain.jsonl", {"summary": True, "images": 1, "converted": 1, "failed": 0,
                                "skipped": 0, "wall_ms": 10, "exit_status": 0})
    p = testlib.run("summary", "--format=html", "plain.jsonl", cwd=path())
    check(p.rc == 0 and p.err == b"", "plain summary html", p)
    parse_page(p, p.out)
    for text in (b'<h1 class="pass">1 converted, 0 failed</h1>', b"<p>None.</p>",
                 b"The reports have no stage times."):
        check(text in p.out, "page lacks %r" % text, p)



@test("summary")
def summary_html_charts():
    # Per-image times: images done over time (a line per report, through the images converted
    # by each moment) and each report's workers' rows of load, steps and store bars.
    def image(index, worker, t0, status="ok"):
        return {"input": {"name": "%d.png" % index}, "index": index, "status": status,
                "worker": worker, "timeline_ms": {"load": [t0, t0 + 4], "steps": [t0 + 4, t0 + 6],
                                                  "store": [t0 + 6, t0 + 10]}}
    hand_report("a.jsonl", image(0, 1, 0), image(1, 2, 0), image(2, 1, 10),
                image(3, 2, 10, "failed"),
                {"summary": True, "images": 4, "converted": 3, "failed": 1, "skipped": 0,
                 "wall_ms": 20, "shard": "1/2", "exit_status": 3})
    hand_report("b.jsonl", image(0, 0, 0), image(1, 0, 30), image(9, 0, 50),
                {"summary": True, "images": 3, "converted": 3, "failed": 0, "skipped": 0,
                 "wall_ms": 60, "shard": "2/2", "exit_status": 0},
                image(5, 0, 90))  # a run cut short: its image does not count
    p = testlib.run("summary", "--format", "html", "a.jsonl", "b.jsonl", cwd=path())
    check(p.rc == 0 and p.err == b"", "summary html", p)
    page = parse_page(p, p.out)
    lines = [a["points"].split() for t, a in page.tags if t == "polyline"]
    check(len(lines) == 2, "a line per report: %r" % lines, p)
    done = [[round((200 - float(pt.split(",")[1])) * 3 / 200) for pt in line] for line in lines]
    check(done[0][0] == 0 and done[0][-1] == 3 and done[1][-1] == 3,
          "each report reaches its 3 converted images: %r" % done, p)
    check(done[0].index(2) < done[1].index(2), "a.jsonl's second image done earlier", p)
    check(sorted(done[0]) == done[0] and sorted(done[1]) == done[1], "never going down", p)
    text = "".join(page.text)
    for want in ("Throughput over time", "Workers over time", "a.jsonl: 2 workers over 0.020 s",
                 "b.jsonl: 1 worker over 0.060 s", "worker 1", "worker 2", "worker 0"):
        check(want in text, "page lacks %r" % want, p)
    bars = [a for t, a in page.tags if t == "rect" and a.get("height") == "8"]
    # A bar per stage of each image (the failed one's too): none touch another of its stage.
    check(len(bars) == 3 * 4 + 3 * 3, "bars: %d" % len(bars), p)
    check({a["fill"] for a in bars} == {"#1565c0", "#ef6c00", "#2e7d32"}, "load, steps, store", p)
    # Reports without per-image times say so.
    hand_report("plain.jsonl", {"summary": True, "images": 1, "converted": 1, "failed": 0,
                                "skipped": 0, "wall_ms": 10, "exit_status": 0})
    p = testlib.run("summary", "--format=html", "plain.jsonl", cwd=path())
    for text in (b"The reports have no per-image times.", b"The reports name no workers."):
        check(text in p.out, "page lacks %r" % text, p)


if __name__ == "__main__":
    sys.exit(testlib.main(sys.argv, "batch-"))
