#!/usr/bin/env python3
# bench-plot.py: turns gpuimg_bench's JSON lines into bench.md (tables, targets) and bench-blur.png.
"""Report of a gpuimg_bench run.

Reads the JSON lines that bench/gpuimg_bench writes (--json) and writes,
into --out-dir:

  bench.md        the device and its copy bandwidth, the kernels' targets with
                  the measured value and PASS/MISS, blur time by radius, and one
                  table per image size (op, variant, radius, ms, GB/s, % of copy,
                  correctness check);
  bench-blur.png  blur time against radius (log time axis) for the naive, tiled
                  and fast kernels and NPP, at --plot-size; only when matplotlib
                  can be imported, otherwise a message says it was skipped.

The targets table also goes to stdout, so that bench/bench-kernels can print it last.

The targets are absolute times, so they depend on the image size: they are read
at --target-size (default 7680x4320, where each is a fixed fraction of the copy
roofline), upload/download at 7680x4320 and the round trip at the sample size
(--sample-size, 1024x768). A target whose configuration was skipped or failed is
n/a, never PASS.

Usage: bench/bench-plot.py BENCH.jsonl [--out-dir DIR] [--target-size WxH]
                             [--plot-size WxH] [--sample-size WxH]
"""

import argparse
import json
import os
import sys

OP_ORDER = ["upload", "download", "gray-roundtrip", "gray", "checkerboard", "blur", "portrait"]
VARIANT_ORDER = ["pinned", "fast", "tiled", "naive", "npp"]
BLUR_SERIES = [("naive", "gpuimg naive"), ("tiled", "gpuimg tiled"), ("fast", "gpuimg fast"),
               ("npp", "NPP FilterBoxBorder")]


def parse_size(text):
    try:
        w, h = text.lower().split("x")
        size = (int(w), int(h))
    except ValueError:
        raise argparse.ArgumentTypeError("%r is not WxH" % text)
    if size[0] < 1 or size[1] < 1:
        raise argparse.ArgumentTypeError("%r is not WxH" % text)
    return size


def load(path):
    """The device, copy and summary records, and the result rows, from a JSON-lines file.

    A truncated last line (the program was killed) is reported and ignored."""
    device, copy, summary, rows = {}, {}, {}, []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                rec = json.loads(line)
            except ValueError as e:
                print("bench-plot: %s:%d: ignored: %s" % (path, number, e), file=sys.stderr)
                continue
            kind = rec.get("type")
            if kind == "device":
                device = rec
            elif kind == "copy":
                copy = rec
            elif kind == "summary":
                summary = rec
            elif kind == "result":
                rows.append(rec)
    return device, copy, summary, rows


def sort_key(r):
    op = OP_ORDER.index(r["op"]) if r["op"] in OP_ORDER else len(OP_ORDER)
    var = VARIANT_ORDER.index(r["variant"]) if r["variant"] in VARIANT_ORDER else len(VARIANT_ORDER)
    radius = r.get("radius")
    return (op, var, -1 if radius is None else radius)


def timed(r):
    return r is not None and "skipped" not in r and "ms" in r


def find(rows, size, op, variant, radius=None):
    for r in rows:
        if ((r["width"], r["height"]) == size and r["op"] == op and r["variant"] == variant
                and (radius is None or r.get("radius") == radius)):
            return r
    return None


def fmt_ms(v):
    return "%.4f" % v


def check_text(r):
    c = r.get("check")
    if not c:
        return ""
    if c == "info":
        n = int(r.get("diff_bytes", 0))
        return "same bytes" if n == 0 else "%d bytes differ (max %d)" % (n, r.get("max_diff", 0))
    return c


def size_label(size):
    return "%dx%d" % size


def why_missing(r):
    if r is None:
        return "n/a", "not measured"
    return "n/a", "skipped: %s" % r.get("skipped", "?")


def failed_check(rows, r):
    """The size where the CPU comparison of r's configuration failed, or None.

    Only one size is checked; a wrong kernel must not pass a target at another size."""
    for c in rows:
        if (c.get("check") == "FAIL" and c["op"] == r["op"] and c["variant"] == r["variant"]
                and c.get("radius") == r.get("radius")):
            return (c["width"], c["height"])
    return None


def targets(rows, target_size, sample_size):
    """Rows of (target, goal, measured, verdict, note) for the targets' table."""
    big = (7680, 4320)
    at = size_label(target_size)
    out = []

    def add(name, goal, r, measured, met, note):
        if not timed(r):
            out.append((name, goal, "") + why_missing(r))
            return
        bad = failed_check(rows, r)
        if bad:
            met = False
            note = ("wrong output (CPU check FAIL at %s)" % size_label(bad)
                    + ("; " + note if note else ""))
        out.append((name, goal, measured, "PASS" if met else "MISS", note))

    def at_most(name, r, limit_ms, note=""):
        ms = r["ms"] if timed(r) else 0
        add(name, "<= %.0f us" % (limit_ms * 1e3), r, "%.1f us" % (ms * 1e3), ms <= limit_ms,
            note)

    def at_least_gbps(name, r, limit):
        g = r["gbps"] if timed(r) else 0
        add(name, ">= %.0f GB/s" % limit, r, "%.1f GB/s" % g, g >= limit,
            "%.4f ms" % r["ms"] if timed(r) else "")

    at_most("gray %s" % at, find(rows, target_size, "gray", "fast"), 0.040)
    at_most("checkerboard %s (cell 1)" % at, find(rows, target_size, "checkerboard", "fast"), 0.060)
    for radius in (1, 4, 16, 64):
        at_most("blur fast r=%d %s" % (radius, at),
                find(rows, target_size, "blur", "fast", radius), 0.100)

    # tiled against naive at r=16: at the target size, else the largest size with both timed.
    name = "blur tiled vs naive r=16"
    sizes = sorted({(r["width"], r["height"]) for r in rows}, key=lambda s: s[0] * s[1],
                   reverse=True)
    candidates = [target_size] + [s for s in sizes if s != target_size]
    pair = None
    for s in candidates:
        t, n = find(rows, s, "blur", "tiled", 16), find(rows, s, "blur", "naive", 16)
        if timed(t) and timed(n):
            pair = (s, t, n)
            break
    if pair:
        s, t, n = pair
        speedup = n["ms"] / t["ms"] if t["ms"] > 0 else float("inf")
        note = "tiled %.3f ms, naive %.3f ms" % (t["ms"], n["ms"])
        if s != target_size:
            note += "; naive r=16 not timed at %s" % at
        met = speedup >= 5
        if failed_check(rows, t):
            met = False
            note = "tiled output wrong (CPU check FAIL); " + note
        out.append(("%s %s" % (name, size_label(s)), ">= 5x faster", "%.1fx" % speedup,
                    "PASS" if met else "MISS", note))
    else:
        out.append((name, ">= 5x faster", "", "n/a", "no size with both timed"))

    at_most("portrait fast r=16 %s" % at, find(rows, target_size, "portrait", "fast", 16), 0.150)
    at_least_gbps("upload %s" % size_label(big), find(rows, big, "upload", "pinned"), 45)
    at_least_gbps("download %s" % size_label(big), find(rows, big, "download", "pinned"), 45)
    r = find(rows, sample_size, "gray-roundtrip", "fast")
    note = ""
    if timed(r):
        note = "host clock; events only: %.1f us" % (r.get("events_ms", 0) * 1e3)
    at_most("sample gray upload+kernel+download %s" % size_label(sample_size), r, 0.150, note)
    return out


def markdown_targets(trows):
    lines = ["| target | goal | measured | verdict | note |", "|---|---|--:|---|---|"]
    for t in trows:
        lines.append("| %s | %s | %s | %s | %s |" % t)
    return lines


def markdown_blur_by_radius(rows, size):
    radii = sorted({r["radius"] for r in rows
                    if (r["width"], r["height"]) == size and r["op"] == "blur"
                    and r.get("radius") is not None})
    if not radii:
        return []
    present = [(v, label) for v, label in BLUR_SERIES
               if any(find(rows, size, "blur", v, rr) for rr in radii)]
    lines = ["| r | " + " | ".join(label + " ms" for _, label in present) + " |",
             "|--:|" + "--:|" * len(present)]
    for rr in radii:
        cells = []
        for v, _ in present:
            r = find(rows, size, "blur", v, rr)
            cells.append(fmt_ms(r["ms"]) if timed(r) else ("skipped" if r else ""))
        lines.append("| %d | %s |" % (rr, " | ".join(cells)))
    return lines


def markdown_size(rows, size):
    lines = ["| op | variant | r | median ms | min ms | MB | GB/s | % of copy | check |",
             "|---|---|--:|--:|--:|--:|--:|--:|---|"]
    for r in sorted((r for r in rows if (r["width"], r["height"]) == size), key=sort_key):
        radius = "" if r.get("radius") is None else str(r["radius"])
        mb = "%.1f" % (r.get("bytes", 0) / 1e6)
        if timed(r):
            ms = fmt_ms(r["ms"])
            if r.get("clock") == "host":
                ms += " (host)"
            lines.append("| %s | %s | %s | %s | %s | %s | %.1f | %.1f | %s |" % (
                r["op"], r["variant"], radius, ms, fmt_ms(r["ms_min"]), mb, r["gbps"],
                r["pct_copy"], check_text(r)))
        else:
            lines.append("| %s | %s | %s | skipped: %s | | %s | | | %s |" % (
                r["op"], r["variant"], radius, r.get("skipped", "?"), mb, check_text(r)))
    return lines


def header(device, copy, summary):
    name = device.get("name", "unknown device")
    cc = device.get("compute_capability", "?")
    lines = ["# gpuimg benchmark", ""]
    lines.append("Device: %s (compute capability %s, %s SMs), CUDA runtime %s, driver %s; "
                 "NPP: %s." % (
        name, cc, device.get("sms", "?"), device.get("cuda_runtime", "?"),
        device.get("cuda_driver", "?"),
        device.get("npp_version", "yes") if device.get("npp") else "not built in"))
    if copy:
        lines.append("")
        lines.append("Device-to-device copy (cudaMemcpy of %d MiB, read + write counted): "
                     "%.4f ms median, **%.1f GB/s** (best run %.1f GB/s). \"%% of copy\" "
                     "below compares each operation's effective GB/s with this." % (
                         copy.get("buffer_bytes", 0) >> 20, copy.get("ms", 0),
                         copy.get("gbps", 0), copy.get("gbps_max", 0)))
    lines.append("")
    lines.append("Each row: median (and minimum) of the event-timed runs after the warm-up "
                 "runs; gray-roundtrip is host-clock time of upload + gray + download. "
                 "MB and GB/s count the least traffic: input read once, output written once, "
                 "plus the mask.")
    if summary:
        lines.append("")
        lines.append("Run: %.1f s, %d failure(s)." % (summary.get("elapsed_s", 0),
                                                      summary.get("failures", 0)))
    else:
        lines.append("")
        lines.append("**The run did not finish** (no summary record): tables are partial.")
    return lines


def plot(rows, size, device, path):
    """bench-blur.png; False (with a message) when matplotlib is missing or there is no data."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        print("bench-plot: %s not written: matplotlib unavailable (%s)" % (path, e),
              file=sys.stderr)
        return False
    fig, ax = plt.subplots(figsize=(8, 5))
    drawn = 0
    for variant, label in BLUR_SERIES:
        pts = sorted((r["radius"], r["ms"]) for r in rows
                     if (r["width"], r["height"]) == size and r["op"] == "blur"
                     and r["variant"] == variant and timed(r) and r.get("radius") is not None)
        if not pts:
            continue
        skipped = sorted(r["radius"] for r in rows
                         if (r["width"], r["height"]) == size and r["op"] == "blur"
                         and r["variant"] == variant and "skipped" in r
                         and r.get("radius") is not None)
        if skipped:
            label += " (r=%s skipped)" % ",".join(str(x) for x in skipped)
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=label)
        drawn += 1
    if not drawn:
        plt.close(fig)
        print("bench-plot: %s not written: no blur timings at %s" % (path, size_label(size)),
              file=sys.stderr)
        return False
    ax.set_xscale("symlog", linthresh=1)
    ax.set_yscale("log")
    radii = sorted({r["radius"] for r in rows if (r["width"], r["height"]) == size
                    and r["op"] == "blur" and r.get("radius") is not None})
    ax.set_xticks(radii)
    ax.set_xticklabels([str(r) for r in radii])
    ax.set_xlabel("radius r (window (2r+1) x (2r+1))")
    ax.set_ylabel("time per blur, ms (log)")
    ax.set_title("Box blur, %s RGB, %s" % (size_label(size), device.get("name", "")))
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def main():
    ap = argparse.ArgumentParser(description="Report of a gpuimg_bench run.")
    ap.add_argument("json", help="JSON lines from gpuimg_bench --json")
    ap.add_argument("--out-dir", default=".", help="where bench.md and bench-blur.png go")
    ap.add_argument("--target-size", type=parse_size, default=(7680, 4320),
                    help="size at which the time targets are read (default 7680x4320)")
    ap.add_argument("--plot-size", type=parse_size, default=None,
                    help="size of the blur plot (default: 7680x4320, else the largest)")
    ap.add_argument("--sample-size", type=parse_size, default=(1024, 768),
                    help="size of the round-trip target (default 1024x768, the sample)")
    args = ap.parse_args()

    try:
        device, copy, summary, rows = load(args.json)
    except OSError as e:
        sys.exit("bench-plot: %s: %s" % (args.json, e.strerror))
    if not rows:
        sys.exit("bench-plot: %s: no result records" % args.json)
    os.makedirs(args.out_dir, exist_ok=True)

    sizes = sorted({(r["width"], r["height"]) for r in rows}, key=lambda s: s[0] * s[1])
    plot_size = args.plot_size or ((7680, 4320) if (7680, 4320) in sizes else sizes[-1])
    trows = targets(rows, args.target_size, args.sample_size)

    md = header(device, copy, summary)
    md += ["", "## Targets", ""] + markdown_targets(trows)
    for size in reversed(sizes):
        blur = markdown_blur_by_radius(rows, size)
        if blur:
            md += ["", "## Blur time by radius, %s" % size_label(size), ""] + blur
    for size in sizes:
        md += ["", "## %s RGB" % size_label(size), ""] + markdown_size(rows, size)

    png = os.path.join(args.out_dir, "bench-blur.png")
    if plot(rows, plot_size, device, png):
        md += ["", "![blur time against radius at %s](bench-blur.png)" % size_label(plot_size)]
    md_path = os.path.join(args.out_dir, "bench.md")
    try:
        with open(md_path, "w", encoding="utf-8") as f:
            f.write("\n".join(md) + "\n")
    except OSError as e:
        sys.exit("bench-plot: %s: %s" % (md_path, e.strerror))

    # The table last: bench/bench-kernels ends with it.
    print("%d of %d targets met, %d missed, %d not measured; %s, copy %.1f GB/s\n" % (
        sum(1 for t in trows if t[3] == "PASS"), len(trows),
        sum(1 for t in trows if t[3] == "MISS"), sum(1 for t in trows if t[3] == "n/a"),
        device.get("name", "?"), copy.get("gbps", 0)))
    print("\n".join(markdown_targets(trows)))


if __name__ == "__main__":
    main()
