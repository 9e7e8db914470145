#!/usr/bin/env python3
# bench-batch.py: bench/bench-batch's helper: photo-like inputs, the OpenCV baseline, the table.
"""Three commands, used by bench/bench-batch (python3 with numpy and cv2):

  bench-batch.py make DIR N [--seed S]
      N photo-like 1024x768 JPEGs made from assets/sample.png: a random crop (60-100% of
      each side) scaled back to 1024x768, a random flip, brightness/contrast jitter,
      Gaussian noise (sigma 2-8) and JPEG quality 80-95. Deterministic for a seed; written by
      as many processes as there are cores. Also writes DIR.list (one path per line).

  bench-batch.py opencv LIST OUTDIR --op gray|blur|thumb [--procs 16] [--label L]
      The same work as `gpuimg gray -o OUTDIR --format png` / `gpuimg blur -r 8 -o OUTDIR
      --format jpg` with OpenCV in --procs processes (multiprocessing.Pool, chunks of 8):
      imread, cvtColor(BGR2GRAY) or blur((17,17), BORDER_REPLICATE), imwrite (PNG at OpenCV's
      default compression, JPEG at quality 90 as gpuimg). Prints one JSON object: label, op,
      procs, images, failed, wall_ms, images_per_s, output_bytes, stage_totals_ms (read+decode
      as "decode", the operation, encode+write as "encode", summed over the workers).

  bench-batch.py table RESULTS.jsonl
      A markdown table from the objects bench/bench-batch collected: gpuimg's batch
      summaries (with "label" and "output_bytes" added) and the OpenCV objects.
"""

import json
import os
import sys
import time


def _load_sample():
    import cv2
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    img = cv2.imread(os.path.join(root, "assets", "sample.png"), cv2.IMREAD_COLOR)
    if img is None:
        raise SystemExit("bench-batch.py: cannot read assets/sample.png")
    return img


def _make_one(args):
    import cv2
    import numpy as np
    directory, index, seed = args
    rng = np.random.default_rng(seed * 1000003 + index)
    img = _SAMPLE
    h, w = img.shape[:2]
    cw, ch = int(w * rng.uniform(0.6, 1.0)), int(h * rng.uniform(0.6, 1.0))
    x, y = int(rng.integers(0, w - cw + 1)), int(rng.integers(0, h - ch + 1))
    out = cv2.resize(img[y:y + ch, x:x + cw], (1024, 768), interpolation=cv2.INTER_AREA)
    if rng.random() < 0.5:
        out = cv2.flip(out, 1)
    gain, bias = rng.uniform(0.8, 1.2), rng.uniform(-20, 20)
    noisy = out.astype(np.float32) * gain + bias + rng.normal(0, rng.uniform(2, 8), out.shape)
    out = np.clip(noisy, 0, 255).astype(np.uint8)
    path = os.path.join(directory, "img%05d.jpg" % index)
    ok = cv2.imwrite(path, out, [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(80, 96))])
    if not ok:
        raise RuntimeError("cannot write " + path)
    return path


def _init_make():
    global _SAMPLE
    _SAMPLE = _load_sample()


def make(directory, n, seed):
    from multiprocessing import Pool
    os.makedirs(directory, exist_ok=True)
    t0 = time.monotonic()
    with Pool(os.cpu_count() or 4, initializer=_init_make) as pool:
        paths = pool.map(_make_one, [(directory, i, seed) for i in range(n)], chunksize=16)
    with open(directory.rstrip("/") + ".list", "w") as f:
        f.write("\n".join(paths) + "\n")
    sys.stderr.write("bench-batch.py: %d images in %s (%.1f s)\n" % (n, directory,
                                                                  time.monotonic() - t0))


def _opencv_one(args):
    import cv2
    path, outdir, op = args
    t0 = time.monotonic()
    img = cv2.imread(path, cv2.IMREAD_COLOR)
    t1 = time.monotonic()
    if img is None:
        return (0, 0, 0, 0, 0)
    base = os.path.splitext(os.path.basename(path))[0]
    if op == "gray":
        res = cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)
        t2 = time.monotonic()
        out = os.path.join(outdir, base + ".png")
        ok = cv2.imwrite(out, res)
    else:
        if op == "thumb":  # 256 pixels wide, as bench/bench-thumbnails
            h, w = img.shape[:2]
            size = (256, max(1, round(h * 256 / w)))
            res = cv2.resize(img, size, interpolation=cv2.INTER_AREA)
        else:
            res = cv2.blur(img, (17, 17), borderType=cv2.BORDER_REPLICATE)
        t2 = time.monotonic()
        out = os.path.join(outdir, base + ".jpg")
        ok = cv2.imwrite(out, res, [cv2.IMWRITE_JPEG_QUALITY, 90])
    t3 = time.monotonic()
    if not ok:
        return (0, 0, 0, 0, 0)
    return (1, (t1 - t0) * 1e3, (t2 - t1) * 1e3, (t3 - t2) * 1e3, os.path.getsize(out))


def _init_opencv():
    import cv2
    cv2.setNumThreads(1)  # one image per process, as gpuimg's workers


def opencv(listing, outdir, op, procs, label):
    from multiprocessing import Pool
    with open(listing) as f:
        paths = [line.rstrip("\n") for line in f if line.strip()]
    os.makedirs(outdir, exist_ok=True)
    with Pool(procs, initializer=_init_opencv) as pool:
        pool.map(_opencv_one, [(paths[0], outdir, op)])  # warm the workers' imports
        t0 = time.monotonic()
        results = pool.map(_opencv_one, [(p, outdir, op) for p in paths], chunksize=8)
        wall = (time.monotonic() - t0) * 1e3
    done = sum(r[0] for r in results)
    print(json.dumps({
        "label": label, "tool": "opencv", "op": op, "jobs": procs, "images": len(paths),
        "converted": done, "failed": len(paths) - done, "wall_ms": round(wall, 3),
        "images_per_s": round(done / (wall / 1e3), 3) if wall > 0 else 0,
        "output_bytes": sum(r[4] for r in results),
        "stage_totals_ms": {"decode": round(sum(r[1] for r in results), 3),
                            op: round(sum(r[2] for r in results), 3),
                            "encode": round(sum(r[3] for r in results), 3)},
    }))


def _s(ms):
    return "%.1f" % (ms / 1e3) if ms is not None else ""


def table(path):
    rows = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line:
                rows.append(json.loads(line))
    print("| run | backend | jobs | img/s | wall s | read s | decode s | upload s | kernels s "
          "| download s | encode s | write s | device busy s | hidden % | out MB |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        t = r.get("stage_totals_ms", {})
        known = {"read", "decode", "upload", "upload-mask", "download", "encode", "write"}
        kernels = sum(v for k, v in t.items() if k not in known)
        opencv = r.get("tool") == "opencv"
        print("| %s | %s | %d | %.1f | %.2f | %s | %s | %s | %s | %s | %s | %s | %s | %s | %.1f |" % (
            r.get("label", "?"), "opencv" if opencv else r.get("backend", "?"), r.get("jobs", 0),
            r.get("images_per_s", 0), r.get("wall_ms", 0) / 1e3,
            "" if opencv else _s(t.get("read")),
            _s(t.get("decode")) + (" (+read)" if opencv else ""),
            _s(t.get("upload")), _s(kernels), _s(t.get("download")),
            _s(t.get("encode")) + (" (+write)" if opencv else ""),
            "" if opencv else _s(t.get("write")),
            "" if opencv else _s(r.get("device_busy_ms")),
            "" if opencv else "%.1f" % r.get("device_hidden_pct", 0),
            r.get("output_bytes", 0) / 1e6))
        if r.get("failed"):
            print("|  | (%d failed) |  |  |  |  |  |  |  |  |  |  |  |  |  |" % r["failed"])
    print()
    print("Stage columns are totals over all images and workers (seconds of work, not wall "
          "time); kernels = every operation stage. device busy = wall time with device work in "
          "flight; hidden % = its share overlapped by other workers' host work "
          "(read/decode/encode/write). OpenCV: one image per process, cv2.setNumThreads(1), "
          "PNG at OpenCV's default compression (stb_image_write's differs: compare out MB), "
          "gray by OpenCV's own rounding.")


def main(argv):
    if len(argv) >= 4 and argv[1] == "make":
        seed = int(argv[argv.index("--seed") + 1]) if "--seed" in argv else 1
        make(argv[2], int(argv[3]), seed)
        return 0
    if len(argv) >= 4 and argv[1] == "opencv":
        op = argv[argv.index("--op") + 1] if "--op" in argv else "gray"
        procs = int(argv[argv.index("--procs") + 1]) if "--procs" in argv else 16
        label = argv[argv.index("--label") + 1] if "--label" in argv else "opencv " + op
        if op not in ("gray", "blur", "thumb"):
            sys.stderr.write("bench-batch.py: --op gray, blur or thumb\n")
            return 2
        opencv(argv[2], argv[3], op, procs, label)
        return 0
    if len(argv) == 3 and argv[1] == "table":
        table(argv[2])
        return 0
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
