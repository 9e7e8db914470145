# cli_report.py: test_cli.py's group report: the JSON timing report.

from gpuimg_testlib import (
    EXIT_INPUT, check, cpu, expect_error, expect_ok, make_pixels, path, png_decode,
    png_encode_8bit, read, run, test, write)
from cli_common import (
    CORPUS, check_no_leftovers, expected, is_cuda_build, load_report, stage)


# ---------------------------------------------------------------------------------------------
# report: the JSON timing report

def check_numbers(obj, where="report"):
    """Every number is finite and ms/bytes/gbps values are >= 0."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                check(v == v and abs(v) != float("inf"), "%s.%s is %r" % (where, k, v))
                if k in ("ms", "ms_min", "ms_max", "total_ms", "bytes", "gbps"):
                    check(v >= 0, "%s.%s is negative: %r" % (where, k, v))
            check_numbers(v, where + "." + k)
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            check_numbers(v, "%s[%d]" % (where, i))


def check_stage(s, samples):
    for k in ("name", "clock", "ms", "ms_min", "ms_max", "samples"):
        check(k in s, "stage %r has no %r" % (s.get("name"), k))
    for k in ("ms", "ms_min", "ms_max"):
        check(isinstance(s[k], (int, float)) and not isinstance(s[k], bool),
              "stage %s: %s is not a number" % (s["name"], k))
    check(s["ms_min"] <= s["ms"] <= s["ms_max"],
          "stage %s: not ms_min <= ms <= ms_max: %r" % (s["name"], s))
    check(s["samples"] == samples,
          "stage %s: samples %r, expected %d" % (s["name"], s["samples"], samples))
    check_gbps(s)


def check_gbps(s):
    """gbps: bytes / ms in 10^9 bytes per second (to 3 decimals), present when bytes is and ms
    is not 0. ms is rounded to 0.1 us (the median it stands for may be up to 0.00005 ms off),
    so the quotient of the rounded fields may be off by gbps * 0.00005 / (ms - 0.00005)."""
    if "bytes" not in s or s["ms"] == 0:
        check("gbps" not in s or "bytes" in s, "stage %s: gbps without bytes" % s["name"])
        return
    check(s["bytes"] > 0, "stage %s: bytes %r (absent when zero)" % (s["name"], s["bytes"]))
    check("gbps" in s, "stage %s: bytes and ms but no gbps: %r" % (s["name"], s))
    want = s["bytes"] / (s["ms"] * 1e6)
    check(abs(s["gbps"] - want) <= want * 0.00005 / (s["ms"] - 0.00005) + 0.0005,
          "stage %s: gbps %r is not bytes / ms = %r" % (s["name"], s["gbps"], want))


@test("report")
def sample_report_to_stdout():
    # The exact command of the README, and the same on the CPU backend explicitly.
    cuda = is_cuda_build()
    for args in (["blur", "-r", "16", "--tiled", "--report", "-"],
                 ["--backend", "cpu", "blur", "-r", "16", "--tiled", "--report", "-"]):
        res = run(*args)
        check(res.rc == 0, "expected exit 0", res)
        if not cuda or "cpu" in args:
            check(res.err == b"", "expected an empty stderr", res)
        rep = load_report(res.out)
        check_numbers(rep)
        check(rep["schema_version"] == 1, "schema_version is %r" % rep.get("schema_version"))
        if not cuda or "cpu" in args:
            check(rep["backend"] == "cpu", "backend is %r" % rep["backend"])
        check(rep["tool"] == "gpuimg", "tool is %r" % rep.get("tool"))
        inp = rep["input"]
        check((inp["width"], inp["height"], inp["channels"]) == (1024, 768, 3),
              "input is %r" % inp)
        check(inp["name"] == "(built-in sample)", "input name %r" % inp["name"])
        check(rep["output"] is None, "output is %r without an OUTPUT" % rep["output"])
        check(rep["repeat"] == 1, "repeat is %r" % rep["repeat"])
        names = [s["name"] for s in rep["stages"]]
        check("decode" in names and "blur" in names, "stages are %r" % names)
        check("read" not in names, "a read stage without a file: %r" % names)
        for s in rep["stages"]:
            check_stage(s, 1)
        b = stage(rep, "blur")
        check(b.get("variant") == "tiled", "blur variant is %r" % b.get("variant"))
        check(b.get("options", {}).get("radius") == 16, "blur options are %r" % b.get("options"))
        check(b.get("step") == 0, "blur step is %r" % b.get("step"))
        check(b["bytes"] == 1024 * 768 * 3 * 2, "blur bytes %r" % b.get("bytes"))
        check(isinstance(rep["total_ms"], (int, float)) and rep["total_ms"] >= 0, "total_ms")


@test("report")
def repeat_report():
    res = expect_ok(cpu("gray", "then", "blur", "-r", "2", "--naive", "--repeat", "5", "--report",
                        "-", "rgb-33x17.png"))
    rep = load_report(res.out)
    check_numbers(rep)
    check(rep["repeat"] == 5, "repeat is %r" % rep["repeat"])
    for name in ("gray", "blur"):
        check_stage(stage(rep, name), 5)
    check(stage(rep, "blur")["variant"] == "naive", "variant")
    check(stage(rep, "blur")["step"] == 1 and stage(rep, "gray")["step"] == 0, "steps")
    check(stage(rep, "gray")["variant"] == "fast", "gray's default variant")
    # The CUDA model's fields are absent on the CPU backend, not zero.
    for key in ("compute_capability", "cuda_driver", "cuda_runtime", "copy_bandwidth_gbps"):
        check(key not in rep, "CPU report has %s" % key)
    for st in rep["stages"]:
        for key in ("launch", "divergence", "copy_bw_pct"):
            check(key not in st, "CPU stage %s has %s" % (st["name"], key))
    check(rep["warmup"] == 0 and rep["build_type"] in ("release", "debug", "debugoptimized",
                                                       "plain", "minsize", "custom"), "build")
    for name in ("gray", "blur"):
        check(isinstance(stage(rep, name)["mad_pct"], (int, float)), "mad_pct")
    for name in ("read", "decode"):
        check_stage(stage(rep, name), 1)
    # checkerboard's options are reported too.
    res = expect_ok(cpu("checkerboard", "--cell", "4", "--amount", "9", "--report", "-", "g8.png"))
    opts = stage(load_report(res.out), "checkerboard")["options"]
    check(opts == {"cell": 4, "amount": 9}, "checkerboard options %r" % opts)


@test("report")
def report_to_file():
    res = expect_ok(cpu("gray", "rgb8.png", "out.png", "--report", "r.json"), stdout_expected=False)
    rep = load_report(read("r.json"))
    check_numbers(rep)
    check(rep["input"] == {"name": "rgb8.png", "bytes": len(read("rgb8.png")), "width": 13,
                           "height": 7, "channels": 3}, "input %r" % rep["input"])
    check(rep["output"] == {"name": "out.png", "bytes": len(read("out.png")), "width": 13,
                            "height": 7, "channels": 1, "format": "png"},
          "output %r" % rep["output"])
    names = [s["name"] for s in rep["stages"]]
    check(names == ["read", "decode", "gray", "encode", "write"], "stages %r" % names)
    for s in rep["stages"]:
        check_stage(s, 1)
    check(stage(rep, "read")["bytes"] == len(read("rgb8.png")), "read bytes")
    check(stage(rep, "decode")["bytes"] == len(read("rgb8.png")) + 13 * 7 * 3, "decode bytes")
    check_no_leftovers()
    # Report only (no image); report next to an image on stdout; stdin input.
    res = expect_ok(cpu("blur", "-r", "1", "-", "-", "--report", "r2.json",
                        stdin=CORPUS["rgb8.png"][0]))
    png_decode(res.out)
    rep = load_report(read("r2.json"))
    check(rep["input"]["name"] == "<stdin>" and rep["output"]["name"] == "<stdout>",
          "names %r %r" % (rep["input"], rep["output"]))
    # The report replaces an existing file; JPEG output is named "jpeg".
    expect_ok(cpu("blur", "rgb8.png", "o.jpg", "--report", "r2.json"))
    check(load_report(read("r2.json"))["output"]["format"] == "jpeg", "format")
    # Mask stages.
    w, h, _, _ = expected("rgb8.png")
    write("m.png", png_encode_8bit(w, h, 1, make_pixels(w, h, 1, 9)))
    res = expect_ok(cpu("portrait", "--mask", "m.png", "-r", "3", "rgb8.png", "--report", "-"))
    rep = load_report(res.out)
    names = [s["name"] for s in rep["stages"]]
    check(names == ["read", "decode", "mask-read", "mask-decode", "portrait"], "stages %r" % names)
    check(stage(rep, "portrait")["options"] == {"radius": 3, "mask": "m.png"},
          "portrait options %r" % stage(rep, "portrait")["options"])


@test("report")
def report_with_hostile_names():
    weird = b'bad\xff"name\n.png'
    weird_out = b'out\\\x01\xc3\x28\t".png'
    weird_mask = b"mask\xe2\x82.png"
    with open(path(weird), "wb") as f:
        f.write(CORPUS["rgb8.png"][0])
    w, h, _, _ = expected("rgb8.png")
    with open(path(weird_mask), "wb") as f:
        f.write(png_encode_8bit(w, h, 1, make_pixels(w, h, 1, 4)))
    res = expect_ok(cpu("blur", weird, weird_out, "--report", "-"))
    rep = load_report(res.out)
    check(rep["input"]["name"] == 'bad\ufffd"name\n.png', "input name %r" % rep["input"]["name"])
    check(rep["output"]["name"] == 'out\\\x01\ufffd(\t".png',
          "output name %r" % rep["output"]["name"])
    res = expect_ok(cpu("portrait", "--mask", weird_mask, weird, "--report", "-"))
    rep = load_report(res.out)
    check(stage(rep, "portrait")["options"]["mask"] == "mask\ufffd\ufffd.png",
          "mask name %r" % stage(rep, "portrait")["options"]["mask"])
    # Error messages carry the raw name, its control characters escaped (one line).
    res = run("gray", b"no\xffpe\n.png")
    expect_error(res, EXIT_INPUT, b"no\xffpe\\n.png: No such file or directory")
