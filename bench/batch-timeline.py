#!/usr/bin/env python3
"""batch-timeline.py: where a batch's images spent their time, from a --report file's
timeline_ms: per slice of the run, the images finished on the --jobs workers and on a split's
device-path workers (worker index >= jobs), with their mean load, steps and store times.

Usage: batch-timeline.py REPORT.jsonl [SLICE_MS]   (default slice 250 ms)
"""
import json
import sys


def main():
    lines = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
    if not lines:
        sys.exit("batch-timeline.py: %s: no report lines" % sys.argv[1])
    step = float(sys.argv[2]) if len(sys.argv) > 2 else 250.0
    summary = lines[-1]
    jobs = summary.get("jobs", 0)
    rows = {}
    for o in lines[:-1]:
        tl = o.get("timeline_ms")
        if o.get("status") != "ok" or not tl:
            continue
        ends = [v[1] for v in tl.values() if v]
        kind = "dev" if o.get("worker", 0) >= jobs else "host"
        r = rows.setdefault(int(max(ends) // step), {})
        acc = r.setdefault(kind, [0, 0.0, 0.0, 0.0])
        acc[0] += 1
        for j, k in enumerate(("load", "steps", "store")):
            if tl.get(k):
                acc[j + 1] += tl[k][1] - tl[k][0]
    print("%s: jobs %s, wall %.0f ms, %.0f img/s" % (
        sys.argv[1], jobs, summary.get("wall_ms", 0), summary.get("images_per_s", 0)))
    print("%8s | %5s %7s %7s %7s | %5s %7s %7s %7s" % (
        "until ms", "host", "load", "steps", "store", "dev", "load", "steps", "store"))
    for k in sorted(rows):
        cells = []
        for kind in ("host", "dev"):
            a = rows[k].get(kind, [0, 0, 0, 0])
            n = max(a[0], 1)
            cells.append("%5d %7.2f %7.2f %7.2f" % (a[0], a[1] / n, a[2] / n, a[3] / n))
        print("%8.0f | %s | %s" % ((k + 1) * step, cells[0], cells[1]))


if __name__ == "__main__":
    main()
