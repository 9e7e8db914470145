#!/usr/bin/env python3
# test_compare.py: end-to-end tests of `gpuimg compare`: verdicts, refusals, formats, real reports.
"""Runs `gpuimg compare` (the binary named by $GPUIMG) on hand-made reports and on reports
written by the CPU backend, and checks exit codes, exact messages and outputs.

Usage: test_compare.py GROUP...   (groups: verdicts, errors, formats, real; 'all' runs every
                                   group)

Environment:
  GPUIMG           the binary under test (required)
  GPUIMG_TEST_DIR  where scratch directories go (default: the current directory)

Exit codes of compare: 0 no regression, 1 a stage slower or missing, 2 usage error,
3 a report unreadable, invalid or not comparable, 4 output not written.
Standard library only.
"""

import json
import os
import re
import sys
import xml.etree.ElementTree as ET

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import gpuimg_testlib as testlib  # noqa: E402
from gpuimg_testlib import (  # noqa: E402
    EXIT_FAILURE, EXIT_INPUT, EXIT_OK, EXIT_OUTPUT, EXIT_USAGE, check, cpu, leftovers,
    parse_page, path, read, test)

USAGE = b"Try 'gpuimg compare --help' for more information.\n"
TIMEOUT = 120  # seconds per run of gpuimg


# ---------------------------------------------------------------------------------------------
# Running the tool

def compare(*args, **kw):
    return testlib.run("compare", *args, timeout=TIMEOUT, **kw)


def expect(res, code, stderr=b""):
    """Exit code and exact stderr (str lines without the 'gpuimg: ' prefix, or bytes)."""
    return testlib.expect(res, code, stderr, USAGE)


def expect_error(res, code, message):
    """A refusal: exit code, exact `gpuimg: message` (+ usage for exit 2), empty stdout."""
    testlib.expect_error(res, code, message, USAGE)


def table(res):
    """The text table: {key: (baseline, current, change, noise, verdict)} and the last line."""
    rows, last = {}, ""
    for line in res.out.decode().splitlines():
        m = re.fullmatch(r"(.+?) +(\S+) +(\S+) +(\S+) +(\S+)%  (ok|faster|SLOWER|missing|new)",
                         line)
        if m and not line.startswith("STAGE "):
            rows[m.group(1)] = m.groups()[1:]
        if line:
            last = line
    return rows, last


def verdicts(res):
    return {k: v[4] for k, v in table(res)[0].items()}


# ---------------------------------------------------------------------------------------------
# Hand-made reports (the schema of src/engine/report.c)

H200 = {"backend": "cuda", "device": "NVIDIA H200", "compute_capability": "9.0",
        "cuda_driver": "13.0", "cuda_runtime": "12.8"}
CPU = {"backend": "cpu", "device": "none"}


def report(ops=(("blur", {"radius": 4}, "fast"),), platform=H200, size=(1024, 768, 3),
           ms=None, mad=None):
    """A report of the pipeline ops [(name, options, variant)]: decode, (upload), one stage
    per operation, (download). ms/mad map stage keys (decode, upload, blur#0...) to values;
    every stage defaults to 1.0 ms and a mad_pct of 1.0."""
    ms, mad = ms or {}, mad or {}
    cuda = platform["backend"] == "cuda"
    stages = [("decode", None, "host")]
    if cuda:
        stages.append(("upload", None, "cuda-event"))
    stages += [(op[0], i, "cuda-event" if cuda else "host") for i, op in enumerate(ops)]
    if cuda:
        stages.append(("download", None, "cuda-event"))
    out = []
    for name, step, clock in stages:
        key = name if step is None else "%s#%d" % (name, step)
        s = {"name": name}
        if step is not None:
            s["step"] = step
        s.update({"clock": clock, "ms": ms.get(key, 1.0), "ms_min": 0.9, "ms_max": 1.2,
                  "samples": 30, "mad_pct": mad.get(key, 1.0), "bytes": 1000, "gbps": 1.0})
        if step is not None:
            s["options"] = dict(ops[step][1])
            if ops[step][2]:
                s["variant"] = ops[step][2]
        out.append(s)
    r = {"schema_version": 1, "tool": "gpuimg", "version": "0.1.0"}
    r.update(platform)
    r.update({"build_type": "release", "repeat": 30, "warmup": 5,
              "input": {"name": "(built-in sample)", "bytes": 931656, "width": size[0],
                        "height": size[1], "channels": size[2]},
              "output": None, "stages": out, "total_ms": 20.0})
    return r


def write(name, *reports, pretty=False):
    """Writes reports as JSON Lines (or pretty-printed one after another)."""
    return testlib.write(name, "".join((json.dumps(r, indent="\t") if pretty else json.dumps(r))
                                       + "\n" for r in reports))


BLUR4 = "blur(radius=4,variant=fast) 1024x768x3 cuda: "
KEYS = [BLUR4 + "upload", BLUR4 + "blur#0", BLUR4 + "download"]


# ---------------------------------------------------------------------------------------------
# Groups

@test("verdicts")
def identical_runs_pass():
    write("base.json", report())
    res = expect(compare("base.json", "base.json"), EXIT_OK)
    rows, last = table(res)
    check(list(rows) == KEYS, "expected the rows %r" % KEYS, res)
    check(all(v == ("1.0000", "1.0000", "+0.0%", "1.0", "ok") for v in rows.values()),
          "identical stages not ok at +0.0%", res)
    check(last == "3 compared (threshold 10% + noise): 0 slower, 0 faster, 0 missing, 0 new: "
                  "no regression", "unexpected summary %r" % last, res)
    check(res.out.startswith(b"baseline base.json: 1 report, cuda on NVIDIA H200 (compute "
                             b"capability 9.0)\ncurrent  base.json: "), "unexpected header", res)


@test("verdicts")
def host_io_stages_only_with_all_stages():
    write("base.json", report())
    write("cur.json", report(ms={"decode": 50.0}))
    res = expect(compare("base.json", "cur.json"), EXIT_OK)
    check(BLUR4 + "decode" not in verdicts(res), "decode compared by default", res)
    res = expect(compare("--all-stages", "base.json", "cur.json"), EXIT_FAILURE,
                 "compare: 1 stage slower (threshold 10% + noise)")
    check(verdicts(res)[BLUR4 + "decode"] == "SLOWER", "decode not SLOWER with --all-stages",
          res)


@test("verdicts")
def cpu_operation_stages_are_compared():
    ops = (("gray", {}, ""), ("blur", {"radius": 2}, "fast"))
    write("base.json", report(ops, platform=CPU))
    write("cur.json", report(ops, platform=CPU, ms={"blur#1": 1.5}))
    res = expect(compare("base.json", "cur.json"), EXIT_FAILURE,
                 "compare: 1 stage slower (threshold 10% + noise)")
    check(verdicts(res) == {"gray then blur(radius=2,variant=fast) 1024x768x3 cpu: gray#0": "ok",
                            "gray then blur(radius=2,variant=fast) 1024x768x3 cpu: blur#1":
                            "SLOWER"}, "unexpected verdicts", res)


@test("verdicts")
def faster_is_not_a_failure():
    write("base.json", report())
    write("cur.json", report(ms={"blur#0": 0.5}))
    res = expect(compare("base.json", "cur.json"), EXIT_OK)
    rows, last = table(res)
    check(rows[BLUR4 + "blur#0"] == ("1.0000", "0.5000", "-50.0%", "1.0", "faster"),
          "blur not faster", res)
    check(last.endswith("0 slower, 1 faster, 0 missing, 0 new: no regression"), last, res)


@test("verdicts")
def slower_within_noise_is_ok():
    # +25% is beyond the 10% threshold, but not beyond 10% + a noise (mad_pct) of 20%.
    write("base.json", report(mad={"blur#0": 20.0}))
    write("cur.json", report(ms={"blur#0": 1.25}, mad={"blur#0": 3.0}))
    res = expect(compare("base.json", "cur.json"), EXIT_OK)
    check(table(res)[0][BLUR4 + "blur#0"] == ("1.0000", "1.2500", "+25.0%", "20.0", "ok"),
          "a noisy +25% should be ok", res)
    # The larger noise of the two counts, whichever file has it.
    res = expect(compare("cur.json", "base.json"), EXIT_OK)
    check(verdicts(res)[BLUR4 + "blur#0"] == "ok", "noise of CURRENT not used", res)


@test("verdicts")
def slower_beyond_threshold_fails():
    write("base.json", report())
    write("cur.json", report(ms={"blur#0": 1.2}))  # +20% > 10% + 1% noise
    res = expect(compare("base.json", "cur.json"), EXIT_FAILURE,
                 "compare: 1 stage slower (threshold 10% + noise)")
    rows, last = table(res)
    check(rows[BLUR4 + "blur#0"] == ("1.0000", "1.2000", "+20.0%", "1.0", "SLOWER"),
          "blur#0 not SLOWER", res)
    check(rows[BLUR4 + "upload"][4] == "ok" and rows[BLUR4 + "download"][4] == "ok",
          "other stages not ok", res)
    check(last.endswith("1 slower, 0 faster, 0 missing, 0 new: REGRESSION"), last, res)
    # Just below the limit (1.0 * (1 + (10 + 1) / 100) = 1.11) passes.
    write("edge.json", report(ms={"blur#0": 1.109}))
    expect(compare("base.json", "edge.json"), EXIT_OK)
    write("edge.json", report(ms={"blur#0": 1.111}))
    expect(compare("base.json", "edge.json"), EXIT_FAILURE,
           "compare: 1 stage slower (threshold 10% + noise)")


@test("verdicts")
def custom_threshold():
    write("base.json", report())
    write("cur.json", report(ms={"blur#0": 1.2, "upload": 1.04}))
    expect(compare("--threshold", "25", "base.json", "cur.json"), EXIT_OK)
    expect(compare("--threshold=19.5%", "base.json", "cur.json"), EXIT_OK)
    res = expect(compare("--threshold", "2", "base.json", "cur.json"), EXIT_FAILURE,
                 "compare: 2 stages slower (threshold 2% + noise)")
    check(verdicts(res) == {KEYS[0]: "SLOWER", KEYS[1]: "SLOWER", KEYS[2]: "ok"},
          "unexpected verdicts at 2%", res)
    res = expect(compare("--threshold", "0", "base.json", "cur.json"), EXIT_FAILURE,
                 "compare: 2 stages slower (threshold 0% + noise)")


@test("verdicts")
def missing_and_new_stages():
    gray = (("gray", {}, ""),)
    write("base.json", report(), report(gray))
    write("cur.json", report(), report((("checkerboard", {"cell": 1, "amount": 64}, "fast"),)))
    res = expect(compare("base.json", "cur.json"), EXIT_FAILURE,
                 "compare: 3 stages missing (threshold 10% + noise)")
    v = verdicts(res)
    check([v[k] for k in KEYS] == ["ok"] * 3, "blur stages not ok", res)
    check(v["gray 1024x768x3 cuda: gray#0"] == "missing", "gray#0 not missing", res)
    check(v["checkerboard(amount=64,cell=1,variant=fast) 1024x768x3 cuda: checkerboard#0"] ==
          "new", "checkerboard#0 not new", res)
    check(table(res)[0]["gray 1024x768x3 cuda: upload"][:4] == ("1.0000", "-", "-", "1.0"),
          "missing row has values", res)
    check(table(res)[1].endswith("0 slower, 0 faster, 3 missing, 3 new: REGRESSION"),
          "unexpected summary", res)
    res = expect(compare("--allow-missing", "base.json", "cur.json"), EXIT_OK)
    check(table(res)[1].endswith("3 missing (allowed), 3 new: no regression"),
          "unexpected summary with --allow-missing", res)
    # New stages alone never fail.
    expect(compare("cur.json", "cur.json"), EXIT_OK)
    write("more.json", report(), report(gray), report(gray, size=(33, 17, 3)))
    res = expect(compare("base.json", "more.json"), EXIT_OK)
    check(verdicts(res)["gray 33x17x3 cuda: gray#0"] == "new", "33x17 gray not new", res)


@test("verdicts")
def reports_match_in_any_order():
    ops = [(("gray", {}, ""),), (("blur", {"radius": 16}, "tiled"),),
           (("portrait", {"radius": 16, "mask": "(built-in sample mask)"}, "fast"),
            ("gray", {}, ""))]
    write("base.jsonl", *[report(o) for o in ops])
    slow = report(ops[1], ms={"blur#0": 3.0})
    # Reversed, pretty-printed one after another (what `--report -` >> file writes), options
    # in another order inside each object.
    cur = [report(ops[2]), slow, report(ops[0])]
    cur[0]["stages"][2]["options"] = {"mask": "(built-in sample mask)", "radius": 16}
    write("cur.json", *cur, pretty=True)
    res = expect(compare("base.jsonl", "cur.json"), EXIT_FAILURE,
                 "compare: 1 stage slower (threshold 10% + noise)")
    v = verdicts(res)
    check(len(v) == 10, "expected 10 rows (3 + 3 + 4)", res)
    check([k for k, x in v.items() if x != "ok"] ==
          ["blur(radius=16,variant=tiled) 1024x768x3 cuda: blur#0"], "only blur#0 slower", res)
    check("portrait(mask=(built-in sample mask),radius=16,variant=fast) then gray 1024x768x3 "
          "cuda: gray#1" in v, "portrait then gray key", res)
    check(res.out.startswith(b"baseline base.jsonl: 3 reports, cuda on NVIDIA H200"),
          "report count", res)


@test("verdicts")
def batch_summaries_are_skipped_and_repeats_merged():
    # A batch file: one report per image (two of one size), then a summary without stages.
    summary = {"tool": "gpuimg", "batch": True, "images": 3, "failed": 0}
    write("base.jsonl", report(ms={"blur#0": 1.0}), report(ms={"blur#0": 1.2}),
          report(size=(640, 480, 3)), summary)
    write("cur.jsonl", report(ms={"blur#0": 1.1}), report(ms={"blur#0": 1.1}),
          report(size=(640, 480, 3)), summary)
    res = expect(compare("base.jsonl", "cur.jsonl"), EXIT_OK)
    rows, _ = table(res)
    check(len(rows) == 6, "expected 6 rows (2 sizes x 3 stages)", res)
    # 1.0 and 1.2 make a median of 1.1 with a spread (MAD) of 0.1 = 9.1%.
    check(rows[BLUR4 + "blur#0"] == ("1.1000", "1.1000", "+0.0%", "9.1", "ok"),
          "repeats not merged into the median of medians", res)
    check(res.out.startswith(b"baseline base.jsonl: 3 reports,"), "summary counted", res)


@test("verdicts")
def ignore_variant_matches_fast_against_naive():
    write("fast.json", report((("blur", {"radius": 16}, "fast"),), ms={"blur#0": 0.2}))
    write("naive.json", report((("blur", {"radius": 16}, "naive"),), ms={"blur#0": 2.5}))
    expect_error(compare("fast.json", "naive.json"), EXIT_INPUT,
                 "compare: no stage of fast.json matches a stage of naive.json (operations, "
                 "options, variant, image size or backend differ; --force compares anyway)")
    res = expect(compare("--ignore-variant", "fast.json", "naive.json"), EXIT_FAILURE,
                 "compare: 1 stage slower (threshold 10% + noise)")
    check(verdicts(res) == {"blur(radius=16) 1024x768x3 cuda: upload": "ok",
                            "blur(radius=16) 1024x768x3 cuda: blur#0": "SLOWER",
                            "blur(radius=16) 1024x768x3 cuda: download": "ok"},
          "naive not flagged SLOWER against fast", res)


@test("errors")
def help_and_usage():
    for args in (["--help"], ["-h"], ["a.json", "--help"], ["--threshold", "5", "-h"]):
        res = expect(compare(*args), EXIT_OK)
        out = res.out.decode()
        check(out.startswith("Usage: gpuimg compare [OPTIONS] BASELINE CURRENT\n"),
              "help does not start with the usage line", res)
        for text in ("--threshold PCT", "(default 10)", "--format F", "-o, --output FILE",
                     "--allow-missing", "--all-stages", "--ignore-variant", "--force",
                     "current > baseline * (1 + (threshold + noise) / 100)",
                     "Exit status: 0 no regression, 1 a stage slower or missing, 2 usage error,\n"
                     "3 a report unreadable, invalid or not comparable, 4 output not written.\n"):
            check(text in out, "help lacks %r" % text, res)
    def u(args, msg):
        expect_error(compare(*args), EXIT_USAGE, "compare: " + msg)

    u([], "BASELINE and CURRENT missing")
    u(["a.json"], "CURRENT missing")
    u(["a", "b", "c"], "unexpected argument 'c' (BASELINE and CURRENT already given)")
    u(["-", "-"], "BASELINE and CURRENT cannot both be stdin")
    u(["", "b"], "empty file name")
    u(["--bogus", "a", "b"], "unknown option '--bogus'")
    u(["-x", "a", "b"], "unknown option '-x'")
    u(["-hx", "a", "b"], "unknown option '-hx'")
    u(["--force=yes", "a", "b"], "--force: takes no value")
    u(["a", "b", "--threshold"], "--threshold: missing value")
    for bad in ("abc", "-1", "1e7", "nan", "inf", "5%%", ""):
        u(["--threshold", bad, "a", "b"],
          "--threshold: invalid value '%s' (expected a percentage from 0 to 1000000)" % bad)
    u(["--format", "xml", "a", "b"],
      "--format: invalid value 'xml' (expected text, json, junit or html)")
    u(["-o", "", "a", "b"], "-o: empty file name")
    u(["--output=", "a", "b"], "--output: empty file name")


@test("errors")
def end_of_options():
    write("-base.json", report())
    res = expect(compare("--", "-base.json", "-base.json"), EXIT_OK)
    check(res.out.startswith(b"baseline -base.json: "), "'--' not honoured", res)


@test("errors")
def unreadable_files():
    write("ok.json", report())
    for args in (["nope.json", "ok.json"], ["ok.json", "nope.json"]):
        expect_error(compare(*args), EXIT_INPUT, "nope.json: No such file or directory")
    os.makedirs(path("dir"), exist_ok=True)
    expect_error(compare("dir", "ok.json"), EXIT_INPUT, "dir: is a directory")
    testlib.write("empty.json", "")
    expect_error(compare("ok.json", "empty.json"), EXIT_INPUT,
                 'empty.json: no report (no JSON object with "stages")')
    testlib.write("summary.jsonl", '{"batch": true, "images": 0}\n')
    expect_error(compare("summary.jsonl", "ok.json"), EXIT_INPUT,
                 'summary.jsonl: no report (no JSON object with "stages")')


@test("errors")
def malformed_json():
    good = json.dumps(report())
    cases = [
        ("trunc.json", good[:-10], "invalid JSON at line 1"),
        ("line3.jsonl", good + "\n" + good + "\n{\"stages\": [}\n", "invalid JSON at line 3"),
        ("garbage.jsonl", "\n\n" + good + " garbage\n", "invalid JSON at line 3"),
        ("nul.json", good + "\n\0\n", "invalid JSON at line 2 (a NUL byte)"),
        ("array.json", "[" + good + "]\n", "invalid report at line 1: not a JSON object"),
        ("stages.json", '\n{"stages": {}}', 'invalid report at line 2: "stages" is not an array'),
        ("noname.json", '{"stages": [{"name": "a", "ms": 1}, {"ms": 1}]}',
         'invalid report at line 1: stage 2 has no "name"'),
        ("noms.json", '{"stages": [{"name": "upload", "ms": "1"}]}',
         'invalid report at line 1: stage 1 (upload) has no valid "ms"'),
        ("negms.json", '{"stages": [{"name": "upload", "ms": -1}]}',
         'invalid report at line 1: stage 1 (upload) has no valid "ms"'),
        ("schema.json", '{"schema_version": 2, "stages": []}',
         'invalid report at line 1: schema_version 2 is not supported (expected 1)'),
    ]
    write("ok.json", report())
    for name, text, msg in cases:
        testlib.write(name, text)
        expect_error(compare(name, "ok.json"), EXIT_INPUT, name + ": " + msg)
        expect_error(compare("ok.json", name), EXIT_INPUT, name + ": " + msg)
    # A bad report on stdin is named <stdin>.
    expect_error(compare("-", "ok.json", stdin=b"{"), EXIT_INPUT,
                 "<stdin>: invalid JSON at line 1")


@test("errors")
def incomparable_runs():
    write("h200.json", report())
    a100 = dict(H200, device="NVIDIA A100-SXM4-80GB", compute_capability="8.0")
    write("a100.json", report(platform=a100))
    expect_error(compare("h200.json", "a100.json"), EXIT_INPUT,
                 "compare: not comparable: device 'NVIDIA H200' in h200.json, "
                 "'NVIDIA A100-SXM4-80GB' in a100.json (--force compares anyway)")
    res = expect(compare("--force", "h200.json", "a100.json"), EXIT_OK,
                 "compare: warning: not comparable: device 'NVIDIA H200' in h200.json, "
                 "'NVIDIA A100-SXM4-80GB' in a100.json (compared anyway: --force)")
    check(verdicts(res) == dict.fromkeys(KEYS, "ok"), "--force did not compare", res)

    write("cc.json", report(platform=dict(H200, compute_capability="9.1")))
    expect_error(compare("h200.json", "cc.json"), EXIT_INPUT,
                 "compare: not comparable: compute capability '9.0' in h200.json, '9.1' in "
                 "cc.json (--force compares anyway)")
    write("rt13.json", report(platform=dict(H200, cuda_runtime="13.0")))
    expect_error(compare("h200.json", "rt13.json"), EXIT_INPUT,
                 "compare: not comparable: CUDA runtime major version '12' in h200.json, '13' "
                 "in rt13.json (--force compares anyway)")
    # The runtime's minor version and the driver do not matter.
    write("rt129.json", report(platform=dict(H200, cuda_runtime="12.9", cuda_driver="13.1")))
    expect(compare("h200.json", "rt129.json"), EXIT_OK)
    write("cpu.json", report(platform=CPU))
    expect_error(compare("cpu.json", "h200.json"), EXIT_INPUT,
                 "compare: not comparable: backend 'cpu' in cpu.json, 'cuda' in h200.json "
                 "(--force compares anyway)")
    # Forced across backends: the keys differ, so nothing matches (a second warning).
    res = expect(compare("--force", "cpu.json", "h200.json"), EXIT_FAILURE,
                 "compare: warning: not comparable: backend 'cpu' in cpu.json, 'cuda' in "
                 "h200.json (compared anyway: --force)\n"
                 "compare: no stage of cpu.json matches a stage of h200.json (operations, "
                 "options, variant, image size or backend differ; --force compares anyway)\n"
                 "compare: 1 stage missing (threshold 10% + noise)")
    check(set(verdicts(res).values()) == {"missing", "new"}, "expected missing and new", res)
    # Per file pair: the same mixture of platforms on both sides compares.
    write("mixed.jsonl", report(), report(platform=CPU))
    write("mixed2.jsonl", report(platform=CPU), report())
    expect(compare("mixed.jsonl", "mixed2.jsonl"), EXIT_OK)
    expect_error(compare("mixed.jsonl", "h200.json"), EXIT_INPUT,
                 "compare: not comparable: backend 'cpu' in mixed.jsonl, 'cuda' in h200.json "
                 "(--force compares anyway)")


@test("errors")
def nothing_in_common():
    write("r4.json", report())
    write("r8.json", report((("blur", {"radius": 8}, "fast"),)))
    expect_error(compare("r4.json", "r8.json"), EXIT_INPUT,
                 "compare: no stage of r4.json matches a stage of r8.json (operations, options, "
                 "variant, image size or backend differ; --force compares anyway)")
    write("io.json", {"backend": "cpu", "stages": [{"name": "decode", "clock": "host", "ms": 1}]})
    expect_error(compare("io.json", "io.json"), EXIT_INPUT,
                 "compare: no stage to compare in io.json or io.json (--all-stages adds the host "
                 "I/O stages)")
    res = expect(compare("--all-stages", "io.json", "io.json"), EXIT_OK)
    check(verdicts(res) == {"(no operation) ?x?x? cpu: decode": "ok"}, "decode not compared",
          res)


@test("formats")
def json_format():
    write("base.json", report(), report((("gray", {}, ""),)))
    write("cur.json", report(ms={"blur#0": 2.0}, mad={"blur#0": 4.0}))
    res = expect(compare("--format", "json", "--threshold", "15", "base.json", "cur.json"),
                 EXIT_FAILURE, "compare: 1 stage slower, 3 stages missing (threshold 15% + noise)")
    doc = json.loads(res.out)
    for field, want in (("baseline", "base.json"), ("current", "cur.json"), ("threshold", 15),
                        ("compared", 3), ("regressions", 1), ("faster", 0), ("missing", 3),
                        ("new", 0), ("allow_missing", False), ("passed", False)):
        check(doc[field] == want, "%s is %r, expected %r" % (field, doc[field], want), res)
    stages = {s["key"]: s for s in doc["stages"]}
    check(list(stages)[:3] == KEYS, "stages not in baseline order", res)
    check(stages[BLUR4 + "blur#0"] == {"key": BLUR4 + "blur#0", "baseline_ms": 1.0,
                                       "current_ms": 2.0, "change_pct": 100.0, "noise_pct": 4.0,
                                       "limit_pct": 19.0, "verdict": "slower"},
          "unexpected blur#0 %r" % stages[BLUR4 + "blur#0"], res)
    gray = stages["gray 1024x768x3 cuda: gray#0"]
    check(gray["verdict"] == "missing" and gray["current_ms"] is None and
          gray["change_pct"] is None, "unexpected missing stage %r" % gray, res)
    res = expect(compare("--format=json", "--allow-missing", "base.json", "base.json"), EXIT_OK)
    doc = json.loads(res.out)
    check(doc["passed"] and doc["regressions"] == 0 and
          {s["verdict"] for s in doc["stages"]} == {"ok"}, "identical runs not passed", res)


@test("formats")
def junit_format():
    tricky = {"radius": 4, "mask": "a&b<c>\"d'e\x01.png"}
    ops = (("portrait", tricky, "fast"),)
    write("base.json", report(), report(ops), report((("gray", {}, ""),)))
    write("cur.json", report(ms={"blur#0": 2.0, "download": 0.5}), report(ops, ms={"upload": 9}),
          report((("blur", {"radius": 2}, "naive"),)))
    res = expect(compare("--format", "junit", "base.json", "cur.json"), EXIT_FAILURE,
                 "compare: 2 stages slower, 3 stages missing (threshold 10% + noise)")
    check(res.out.startswith(b'<?xml version="1.0" encoding="UTF-8"?>\n'), "no XML declaration",
          res)
    root = ET.fromstring(res.out)
    check(root.tag == "testsuites", "root is not <testsuites>", res)
    suites = root.findall("testsuite")
    check(len(suites) == 1 and suites[0].get("name") == "gpuimg.compare", "one testsuite", res)
    suite = suites[0]
    check((suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("12", "5", "3"),
          "tests/failures/skipped are %r" % [suite.get(a) for a in ("tests", "failures",
                                                                    "skipped")], res)
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    check(len(cases) == 12 and all(c.get("classname") == "gpuimg" for c in cases.values()),
          "12 testcases of class gpuimg", res)
    portrait = "portrait(mask=a&b<c>\"d'e?.png,radius=4,variant=fast) 1024x768x3 cuda: "
    failed = sorted(n for n, c in cases.items() if c.find("failure") is not None)
    check(failed == sorted([BLUR4 + "blur#0", portrait + "upload",
                            "gray 1024x768x3 cuda: upload", "gray 1024x768x3 cuda: gray#0",
                            "gray 1024x768x3 cuda: download"]), "failed cases %r" % failed, res)
    blur = cases[BLUR4 + "blur#0"]
    check(blur.get("time") == "0.0020000", "time is the current seconds", res)
    check(blur.find("failure").get("type") == "slower" and
          blur.find("failure").get("message") == "slower: 2.0000 ms, baseline 1.0000 ms "
          "(+100.0%, limit +11.0% = threshold 10% + noise 1.0%)", "blur failure message", res)
    check(cases["gray 1024x768x3 cuda: gray#0"].find("failure").get("type") == "missing",
          "missing gray not a failure", res)
    check(cases["blur(radius=2,variant=naive) 1024x768x3 cuda: blur#0"].find("skipped")
          is not None, "new stage not skipped", res)
    check(cases[BLUR4 + "download"].find("failure") is None, "faster download failed", res)
    res = expect(compare("--format", "junit", "--allow-missing", "base.json", "cur.json"),
                 EXIT_FAILURE, "compare: 2 stages slower (threshold 10% + noise)")
    suite = ET.fromstring(res.out).find("testsuite")
    check((suite.get("failures"), suite.get("skipped")) == ("2", "6"), "allowed missing", res)
    res = expect(compare("--format", "junit", "base.json", "base.json"), EXIT_OK)
    suite = ET.fromstring(res.out).find("testsuite")
    check((suite.get("tests"), suite.get("failures")) == ("9", "0"), "identical junit", res)


@test("formats")
def html_format():
    tricky = {"radius": 4, "mask": "<script>&\"'"}
    ops = (("portrait", tricky, "fast"),)
    platform = dict(H200, device="<script>&\"'")
    write("<b>&base.json", report(platform=platform), report(ops, platform=platform))
    write("cur.json", report(platform=platform, ms={"blur#0": 2.0, "download": 0.5}),
          report(ops, platform=platform, mad={"upload": 3.0}),
          report(ops, platform=platform, ms={"upload": 1.02}, mad={"upload": 2.0}))
    res = expect(compare("--format", "html", "-o", "out.html", "<b>&base.json", "cur.json"),
                 EXIT_FAILURE, "compare: 1 stage slower (threshold 10% + noise)")
    check(res.out == b"", "stdout not empty with -o", res)
    data = read("out.html")
    page = parse_page(res, data)
    text = "".join(page.text)
    check(re.search(r"<h1 class=\"fail\">REGRESSION</h1>\n<p class=\"summary\">6 compared "
                    r"\(threshold 10% \+ noise\): 1 slower, 1 faster, 0 missing, 0 new</p>",
                    data.decode()), "verdict not at the top", res)
    check(text.index("REGRESSION") < text.index("baseline"), "verdict not first", res)
    check("<b>&base.json: 1 report" not in text and
          "<b>&base.json: 2 reports, cuda on <script>&\"' (compute capability 9.0)" in text,
          "baseline file and device not named", res)
    check(b"&lt;script&gt;&amp;&quot;&apos;" in data and b"&lt;b&gt;&amp;base.json" in data,
          "strings not escaped", res)
    portrait = "portrait(mask=<script>&\"',radius=4,variant=fast) 1024x768x3 cuda: "
    rows = {r["cells"][0]: r for r in page.rows[1:]}
    check(len(rows) == 6, "expected 6 stage rows, got %r" % list(rows), res)
    check(page.rows[0]["cells"][:6] == ["stage", "baseline ms", "current ms", "change", "limit",
                                        "verdict"], "header row %r" % page.rows[0], res)

    def row(key, cls, cells):
        got = rows[key]
        check((got["class"], got["cells"][1:6]) == (cls, cells),
              "row %s is %r, expected %r" % (key, (got["class"], got["cells"][1:6]),
                                             (cls, cells)), res)

    row(BLUR4 + "blur#0", "slower",
        ["1.0000 \u00b11.0%", "2.0000 \u00b11.0%", "+100.0%", "+11.0%", "\u25b2 SLOWER"])
    row(BLUR4 + "download", "faster",
        ["1.0000 \u00b11.0%", "0.5000 \u00b11.0%", "-50.0%", "+11.0%", "\u25bc faster"])
    row(BLUR4 + "upload", "ok",
        ["1.0000 \u00b11.0%", "1.0000 \u00b11.0%", "+0.0%", "+11.0%", "ok"])
    # Two current reports: the median of 1.0 and 1.02, its noise the larger mad_pct (3.0%).
    row(portrait + "upload", "ok",
        ["1.0000 \u00b11.0%", "1.0100 \u00b13.0% of 2", "+1.0%", "+13.0%", "ok"])
    check(sum(1 for t, a in page.tags if t == "svg") == 6, "one chart per row", res)
    check(sum(1 for t, a in page.tags if t == "rect") == 12, "two bars per row", res)
    # Missing and new stages, and a passing comparison.
    write("gray.json", report(platform=platform), report((("gray", {}, ""),), platform=platform))
    res = expect(compare("--format=html", "--allow-missing", "gray.json", "<b>&base.json"),
                 EXIT_OK)
    page = parse_page(res, res.out)
    check(b'<h1 class="pass">no regression</h1>' in res.out, "no pass verdict", res)
    classes = [r["class"] for r in page.rows[1:]]
    check(classes == ["ok"] * 3 + ["missing"] * 3 + ["new"] * 3, "row classes %r" % classes,
          res)
    check(page.rows[4]["cells"][1:6] == ["1.0000 \u00b11.0%", "-", "-", "-", "missing"],
          "missing row %r" % page.rows[4], res)
    expect(compare("--format", "html", "gray.json", "<b>&base.json"), EXIT_FAILURE,
           "compare: 3 stages missing (threshold 10% + noise)")
    check(leftovers() == [], "temporary files left: %r" % leftovers())


@test("formats")
def output_file():
    write("base.json", report())
    write("cur.json", report(ms={"blur#0": 2.0}))
    testlib.write("out.xml", "old")
    res = expect(compare("-o", "out.xml", "--format", "junit", "base.json", "cur.json"),
                 EXIT_FAILURE, "compare: 1 stage slower (threshold 10% + noise)")
    check(res.out == b"", "stdout not empty with -o", res)
    ET.fromstring(read("out.xml"))
    res = expect(compare("--output=out.txt", "base.json", "base.json"), EXIT_OK)
    check(read("out.txt") == compare("base.json", "base.json").out, "-o text differs from stdout",
          res)
    check(leftovers() == [], "temporary files left: %r" % leftovers())
    # An unreadable input leaves the old output in place.
    expect_error(compare("-o", "out.txt", "nope.json", "base.json"), EXIT_INPUT,
                 "nope.json: No such file or directory")
    check(read("out.txt").startswith(b"baseline base.json"), "out.txt damaged")
    check(leftovers() == [], "temporary files left: %r" % leftovers())
    expect_error(compare("-o", "base.json", "base.json", "cur.json"), EXIT_OUTPUT,
                 "base.json: output is the same file as the input")
    expect_error(compare("-o", "cur.json", "base.json", "cur.json"), EXIT_OUTPUT,
                 "cur.json: output is the same file as the input")
    expect_error(compare("-o", "nodir/out.txt", "base.json", "cur.json"), EXIT_OUTPUT,
                 "nodir/out.txt: cannot create output file: No such file or directory")
    check(json.loads(read("base.json")) == report(), "base.json changed")


@test("formats")
def stdin_input():
    write("base.json", report())
    res = expect(compare("-", "base.json", stdin=read("base.json")), EXIT_OK)
    check(res.out.startswith(b"baseline <stdin>: 1 report"), "stdin not named <stdin>", res)


# ---------------------------------------------------------------------------------------------
# real: reports written by the binary itself (CPU backend)

def real_report(name, *args):
    res = cpu(*args, "--repeat", "3", "--report", name, timeout=TIMEOUT)
    check(res.rc == 0, "gpuimg failed", res)
    return name


def op_key(report_name, step, options, index=0):
    """The key part of an operation step, its variant (if any) read from the real report
    (the index-th of the file's reports, written one after another)."""
    with open(path(report_name)) as f:
        text, pos, docs = f.read(), 0, []
    while text[pos:].strip():
        doc, end = json.JSONDecoder().raw_decode(text, pos + len(text[pos:]) -
                                                 len(text[pos:].lstrip()))
        docs.append(doc)
        pos = end
    stage = [s for s in docs[index]["stages"] if s.get("step") == step and "options" in s][0]
    parts = options + (["variant=" + stage["variant"]] if stage.get("variant") else [])
    return stage["name"] + ("(%s)" % ",".join(parts) if parts else "")


@test("real")
def same_command_compares():
    real_report("a.json", "blur", "-r", "2")
    real_report("b.json", "blur", "-r", "2")
    # CPU timings on a shared machine are noisy: a huge threshold shows the plumbing only.
    res = expect(compare("--threshold", "1000000", "a.json", "b.json"), EXIT_OK)
    check(list(verdicts(res)) == [op_key("a.json", 0, ["radius=2"]) + " 1024x768x3 cpu: blur#0"],
          "unexpected keys", res)
    check(table(res)[1].startswith("1 compared (threshold 1000000% + noise)") and
          table(res)[1].endswith("no regression"), "unexpected summary", res)
    res = expect(compare("--threshold", "1000000", "--all-stages", "a.json", "b.json"), EXIT_OK)
    check(len(verdicts(res)) == 2, "decode not compared with --all-stages", res)


@test("real")
def pipelines_in_one_file():
    # Reports appended one after another as `--report -` writes them (pretty JSON).
    for name in ("a.jsonl", "b.jsonl"):
        with open(path(name), "wb") as f:
            for args in (["gray"], ["blur", "-r", "2", "then", "gray"]):
                res = cpu(*args, "--repeat", "3", "--report", "-", timeout=TIMEOUT)
                check(res.rc == 0, "gpuimg failed", res)
                f.write(res.out)
    res = expect(compare("--threshold", "1000000", "a.jsonl", "b.jsonl"), EXIT_OK)
    gray = op_key("a.jsonl", 0, [])
    pipeline = "%s then %s 1024x768x3 cpu: " % (op_key("b.jsonl", 0, ["radius=2"], 1),
                                                  op_key("b.jsonl", 1, [], 1))
    check(list(verdicts(res)) == [gray + " 1024x768x3 cpu: gray#0", pipeline + "blur#0",
                                  pipeline + "gray#1"], "unexpected keys", res)


@test("real")
def different_options_do_not_match():
    # Defined behaviour: another radius is another command. With nothing in common the
    # files are refused (exit 3); with --force the stages are missing and new (exit 1), and
    # --allow-missing on top passes.
    real_report("r2.json", "blur", "-r", "2")
    real_report("r8.json", "blur", "-r", "8")
    expect_error(compare("r2.json", "r8.json"), EXIT_INPUT,
                 "compare: no stage of r2.json matches a stage of r8.json (operations, options, "
                 "variant, image size or backend differ; --force compares anyway)")
    nothing = ("compare: no stage of r2.json matches a stage of r8.json (operations, options, "
               "variant, image size or backend differ; --force compares anyway)")
    res = expect(compare("--force", "r2.json", "r8.json"), EXIT_FAILURE,
                 nothing + "\ncompare: 1 stage missing (threshold 10% + noise)")
    check(verdicts(res) == {op_key("r2.json", 0, ["radius=2"]) + " 1024x768x3 cpu: blur#0":
                            "missing",
                            op_key("r8.json", 0, ["radius=8"]) + " 1024x768x3 cpu: blur#0": "new"},
          "expected missing r2 and new r8", res)
    expect(compare("--force", "--allow-missing", "r2.json", "r8.json"), EXIT_OK, nothing)
    # Another variant is another command too, unless --ignore-variant.
    real_report("naive.json", "blur", "-r", "2", "--naive")
    expect_error(compare("r2.json", "naive.json"), EXIT_INPUT, nothing.replace("r8", "naive"))
    res = expect(compare("--ignore-variant", "--threshold", "1000000", "r2.json", "naive.json"),
                 EXIT_OK)
    check(list(verdicts(res)) == ["blur(radius=2) 1024x768x3 cpu: blur#0"], "variant in key", res)


if __name__ == "__main__":
    sys.exit(testlib.main(sys.argv, "compare-"))
