#!/usr/bin/env bash
# test_gpu_cli.sh: the CLI with --backend cuda writes the same bytes as --backend cpu (77 = no device).
set -u
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! "$GPUIMG" gray --backend cuda -q 2>"$tmp/err"; then
  if grep -q "no usable CUDA device\|built without CUDA" "$tmp/err"; then
    echo "SKIP: $(cat "$tmp/err")"
    exit 77
  fi
  cat "$tmp/err"
  exit 1
fi
fail=0
run() { # name, then the operation and its options
  local name=$1
  shift
  "$GPUIMG" "$@" sample: "$tmp/$name-cuda.png" --backend cuda || { echo "FAIL $name: cuda run"; fail=1; return; }
  "$GPUIMG" "$@" sample: "$tmp/$name-cpu.png" --backend cpu || { echo "FAIL $name: cpu run"; fail=1; return; }
  if cmp -s "$tmp/$name-cuda.png" "$tmp/$name-cpu.png"; then
    echo "ok   $name"
  else
    echo "FAIL $name: cuda and cpu outputs differ"
    fail=1
  fi
}
run gray gray
run gray-naive gray --naive
run gray-grid-stride gray --grid-stride
run gray-naive-10x10 gray --naive --block 10x10
run blur-fast blur -r 16
run blur-naive blur -r 3 --naive
run blur-tiled blur -r 16 --tiled
run blur-tiled-r100 blur -r 100 --tiled
run checkerboard checkerboard
run checkerboard-32 checkerboard --cell 32 --amount 30
run portrait portrait
run portrait-tiled portrait -r 8 --tiled
run pipeline gray then blur -r 4 then checkerboard --cell 8
run block blur -r 5 --tiled --block 32x4
run resize-shrink resize --width 301
run resize-enlarge resize --scale 1.37
run resize-bilinear resize --fit 200x200 --filter bilinear
run resize-pipeline gray then resize --fit 512x512 then blur -r 2
run resize-block32 resize --scale 0.37 --block 32x32
run resize-enlarge-block32 resize --scale 2.3 --block 32x32
run resize-tall resize --width 2 --height 600000
run resize-1x1 resize --fit 1x1
run blur-fast-block blur -r 3 --block 8x8
run equalize equalize
run equalize-global equalize --histogram global
run normalize normalize --clip 2 --histogram cub
run stats-pipeline gray then stats then blur -r 2

# stats: the line of figures every reduction and histogram kernel prints is the CPU backend's.
"$GPUIMG" stats --backend cpu sample: >"$tmp/stats-cpu.json" || fail=1
for k in "--variant "{1,2,3,4,5,6,7,shuffle,cub} "--histogram "{shared,global,cub}; do
  # shellcheck disable=SC2086 # k is an option and its value
  if "$GPUIMG" stats $k --backend cuda sample: >"$tmp/stats-cuda.json" &&
    cmp -s "$tmp/stats-cuda.json" "$tmp/stats-cpu.json"; then
    echo "ok   stats $k"
  else
    echo "FAIL stats $k: the figures differ from the CPU backend's"
    fail=1
  fi
done

# A small image too tall for the tiled kernel's grid (65535 block rows): the fast blur
# takes another kernel (it once chose the tiled one by the pixel count and failed).
"$GPUIMG" resize --width 1 --height 1048576 --backend cpu -q sample: "$tmp/tall.png" || fail=1
for b in cuda cpu; do
  "$GPUIMG" blur -r 1 --backend $b -q "$tmp/tall.png" "$tmp/tall-$b.png" ||
    { echo "FAIL blur-tall: $b run"; fail=1; }
done
if cmp -s "$tmp/tall-cuda.png" "$tmp/tall-cpu.png"; then echo "ok   blur-tall"; else
  echo "FAIL blur-tall: cuda and cpu outputs differ"
  fail=1
fi

# The report: event-timed upload, kernel and download stages.
"$GPUIMG" blur -r 16 --tiled --backend cuda --report "$tmp/r.json" || fail=1
python3 - "$tmp/r.json" <<'PY' || fail=1
import json, sys
r = json.load(open(sys.argv[1]))
assert r["backend"] == "cuda", r["backend"]
names = [s["name"] for s in r["stages"]]
for want in ("upload", "blur", "download"):
    assert want in names, names
# CUDA's start overlaps decoding (a one-image run): its own host-clock stage, before upload.
assert names.index("device-start") < names.index("upload"), names
for s in r["stages"]:
    if s["name"] == "device-start":
        assert s["clock"] == "host" and s["ms"] > 0, s
    if s["name"] in ("upload", "blur", "download"):
        assert s["clock"] == "cuda-event", s
        assert s["ms"] > 0 and s["gbps"] > 0, s
    if s["name"] == "blur":
        assert s["variant"] == "tiled" and s["launch"]["kernel"] == "blur_tiled_kernel", s
print("ok   report")
PY

# --explain on the device: its measured lines agree with the model's for the device (no "the
# model differs"); the naive gray's 16x16 grid has a partial last wave, the grid-stride loop
# one whole wave; the report's model object is its launch.
for args in "gray --naive" "gray --grid-stride" "gray --naive --block 10x10" "blur -r 3 --tiled" \
    "blur -r 2 --tiled --tile float --block 32x4" "checkerboard --naive" "portrait -r 4 --naive" \
    "resize --scale 0.5"; do
  # shellcheck disable=SC2086 # the words are the options
  if ! "$GPUIMG" $args --backend cuda --explain --report "$tmp/model.json" sample: \
      2>"$tmp/explain"; then
    echo "FAIL explain $args: run"; fail=1; continue
  fi
  if grep -q "the model differs" "$tmp/explain"; then
    echo "FAIL explain $args: $(cat "$tmp/explain")"; fail=1; continue
  fi
  python3 - "$tmp/model.json" <<'PY' || { echo "FAIL explain $args: report"; fail=1; continue; }
import json, sys
for s in json.load(open(sys.argv[1]))["stages"]:
    if "launch" in s and "model" in s and "none" not in s["model"]:
        l, m = s["launch"], s["model"]
        for k in ("kernel", "instance", "grid", "block", "shared_bytes", "launches", "registers",
                  "active_blocks_per_sm", "resident_blocks", "waves", "last_wave_blocks"):
            assert l.get(k) == m.get(k), (k, l.get(k), m.get(k))
PY
  echo "ok   explain $args"
done
"$GPUIMG" gray --grid-stride --backend cuda --explain sample: 2>"$tmp/explain" || fail=1
grep -q "blocks in 1.0 waves" "$tmp/explain" && ! grep -q "last wave" "$tmp/explain" ||
  { echo "FAIL grid-stride: not one whole wave: $(cat "$tmp/explain")"; fail=1; }
"$GPUIMG" gray --naive --block 10x10 --backend cuda --explain sample: 2>"$tmp/explain" || fail=1
grep -q "10x10 blocks of 4 warps, 28 of 128 lanes idle (21.9%)" "$tmp/explain" ||
  { echo "FAIL idle lanes: $(cat "$tmp/explain")"; fail=1; }

# Copies: a one-image run that runs once copies from and to ordinary memory; --repeat and
# GPUIMG_ONCE_PINNED=1 stage them through pinned buffers; the bytes are the same each way.
for how in once repeat pinned; do
  case $how in
    once) env=() opts=() ;;
    repeat) env=() opts=(--repeat 2) ;;
    pinned) env=(GPUIMG_ONCE_PINNED=1) opts=() ;;
  esac
  env "${env[@]}" "$GPUIMG" blur -r 7 "${opts[@]}" sample: "$tmp/copies-$how.png" --backend cuda \
    --report "$tmp/copies-$how.json" || { echo "FAIL copies-$how: run"; fail=1; continue; }
  python3 - "$tmp/copies-$how.json" "$how" <<'PY' || fail=1
import json, sys
r, how = json.load(open(sys.argv[1])), sys.argv[2]
copies = {s["name"]: s["pinned"] for s in r["stages"] if s["name"] in ("upload", "download")}
assert copies == {"upload": how != "once", "download": how != "once"}, (how, copies)
print("ok   copies-%s" % how)
PY
  cmp -s "$tmp/copies-$how.png" "$tmp/copies-once.png" ||
    { echo "FAIL copies-$how: not the bytes of copies-once"; fail=1; }
done

# Batch mode (-o DIR): sample-derived 1024x768 images plus odd sizes and layouts. Every
# output is byte-identical across --backend cuda --jobs 1, cuda --jobs 4 and cpu --jobs 4;
# workers reuse their pinned and device buffers (cuda_allocations stays constant after a
# worker's first image of the largest size).
here=$(cd "$(dirname "$0")" && pwd)
bin=$tmp/batch-in
mkdir -p "$bin"
for r in 0 1 2 3 4 5 6 7; do
  "$GPUIMG" blur -r "$r" --backend cpu -q sample: "$bin/s$r.png" || fail=1
done
"$GPUIMG" gray --backend cpu -q sample: "$bin/s-gray.png" || fail=1
python3 - "$here/../make_images.py" "$bin" <<'PY' || fail=1
import importlib.util, os, sys
spec = importlib.util.spec_from_file_location("mi", sys.argv[1])
mi = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mi)
for w, h, c in ((1, 1, 3), (1, 37, 4), (37, 1, 1), (33, 17, 2), (33, 17, 4), (1500, 999, 3)):
    with open(os.path.join(sys.argv[2], "odd-%dx%dx%d.png" % (w, h, c)), "wb") as f:
        f.write(mi.png_encode_8bit(w, h, c, mi.make_pixels(w, h, c, w * 131 + h * 7 + c)))
PY
batch() { # name, then the operation and its options (inputs: $bin/*.png unless BATCH_IN)
  local name=$1
  shift
  local d=$tmp/batch-$name
  rm -rf "$d-c1" "$d-c4" "$d-p4"
  # shellcheck disable=SC2086
  if ! "$GPUIMG" "$@" -q --backend cuda -j 1 -o "$d-c1" ${BATCH_IN:-$bin/*.png} ||
    ! "$GPUIMG" "$@" -q --backend cuda -j 4 -o "$d-c4" --report "$d.jsonl" ${BATCH_IN:-$bin/*.png} ||
    ! "$GPUIMG" "$@" -q --backend cpu -j 4 -o "$d-p4" ${BATCH_IN:-$bin/*.png}; then
    echo "FAIL batch-$name: a run failed"
    fail=1
    return
  fi
  if diff -rq "$d-c1" "$d-c4" >/dev/null && diff -rq "$d-c1" "$d-p4" >/dev/null; then
    echo "ok   batch-$name"
  else
    echo "FAIL batch-$name: outputs differ (cuda -j1, cuda -j4, cpu -j4)"
    diff -rq "$d-c1" "$d-c4"
    diff -rq "$d-c1" "$d-p4"
    fail=1
  fi
}
batch gray gray
batch blur blur -r 8 --format jpg
# JPEG inputs, decoded by libjpeg straight into the workers' pinned staging buffers (and the
# results lent from theirs), mixed with PNGs that stb decodes into its own memory; sizes
# that grow and shrink within a worker.
jin=$tmp/batch-jin
mkdir -p "$jin"
for f in "$bin"/*.png; do
  n=$(basename "$f" .png)
  "$GPUIMG" blur -r 0 --backend cpu -q "$f" "$jin/$n.jpg" || fail=1
done
cp "$bin/s1.png" "$jin/p-s1.png"
cp "$bin/odd-33x17x4.png" "$jin/p-odd-33x17x4.png"
BATCH_IN="$jin/*" batch jpeg-pinned blur -r 5 --format jpg
BATCH_IN="$jin/*" batch jpeg-pinned-png gray "then" blur -r 2 --format png
BATCH_IN="$jin/*" batch jpeg-resize resize --width 100 "then" blur -r 1 --format png
batch blur-tiled blur -r 20 --tiled --format bmp
batch pipeline gray "then" blur -r 3 "then" checkerboard --cell 8 --format png
BATCH_IN="$bin/s*.png" batch portrait portrait -r 6 --mask "$here/../../assets/sample-mask.png"
python3 - "$tmp/batch-blur.jsonl" <<'PY' || fail=1
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8")]
s = lines[-1]
assert s["summary"] and s["backend"] == "cuda" and s["failed"] == 0, s
assert s["converted"] == len(lines) - 1 and s["devices"] == [0] and s["jobs"] == 4, s
assert s["device_busy_ms"] > 0 and 0 <= s["device_hidden_pct"] <= 100, s
for k in ("upload", "blur", "download"):
    assert s["stage_totals_ms"][k] > 0, s["stage_totals_ms"]
seen = {}
for o in lines[:-1]:
    assert o["status"] == "ok" and o["backend"] == "cuda" and o["device_index"] == 0, o
    names = [st["name"] for st in o["stages"]]
    assert names == ["read", "decode", "upload", "blur", "download", "encode", "write"], names
    for st in o["stages"]:
        if st["name"] in ("upload", "blur", "download"):
            assert st["clock"] == "cuda-event" and st["ms"] > 0, st
    seen.setdefault(o["worker"], []).append((o["index"], o["input"]["width"] * o["input"]["height"] * o["input"]["channels"], o["cuda_allocations"]))
# Buffers only grow: a worker allocates again only for an image larger than any before.
for w, items in seen.items():
    items.sort()
    biggest, allocs = 0, 0
    for _, size, a in items:
        if size <= biggest:
            assert a == allocs, ("worker %d allocated for an image no larger than before" % w, items)
        biggest, allocs = max(biggest, size), a
print("ok   batch-report")
PY
# EXIF orientation: all 8 values on a JPEG (jN.jpg) and a PNG (pN.png) input, each
# stored so that it shows 61x37 once turned, with masks turned by their own EXIF (mN.png, same
# rule): the pixels are decoded and turned on the host (libjpeg, stb), so both backends write
# the same bytes, as PNG and as JPEG (libjpeg), one image at a time and in batches (nvJPEG's
# device path turns them on the device: nvjpeg-orient below). The inserts are cli_orient.py's.
ori=$tmp/orient
mkdir -p "$ori/in" "$ori/out"
python3 -B - "$here/.." "$ori" <<'PY' || { echo "FAIL orient: making inputs"; fail=1; }
import os, subprocess, sys
sys.path.insert(0, sys.argv[1])
from cli_orient import jpeg_with, png_with, tiff
from gpuimg_testlib import make_pixels, png_encode_8bit
d = sys.argv[2]
for o in range(1, 9):
    w, h = (61, 37) if o <= 4 else (37, 61)  # 5..8 swap the sides
    png = png_encode_8bit(w, h, 3, make_pixels(w, h, 3, 100 + o))
    with open("%s/base%d.png" % (d, o), "wb") as f:
        f.write(png)
    subprocess.run([os.environ["GPUIMG"], "blur", "-r", "0", "--backend", "cpu", "--codec", "stb",
                    "-q", "%s/base%d.png" % (d, o), "%s/base%d.jpg" % (d, o)], check=True)
    with open("%s/base%d.jpg" % (d, o), "rb") as f:
        jpeg = f.read()
    at = 4 + (jpeg[4] << 8 | jpeg[5]) if jpeg[2:4] == b"\xff\xe0" else 2  # after JFIF's APP0
    app1 = jpeg_with(b"\xff\xd8", tiff(o, "MM" if o % 2 else "II"))[2:]
    with open("%s/in/j%d.jpg" % (d, o), "wb") as f:
        f.write(jpeg[:at] + app1 + jpeg[at:])
    with open("%s/in/p%d.png" % (d, o), "wb") as f:
        f.write(png_with(png, tiff(o, "II" if o % 2 else "MM")))
    mask = png_encode_8bit(w, h, 1, make_pixels(w, h, 1, 200 + o))
    with open("%s/m%d.png" % (d, o), "wb") as f:
        f.write(png_with(mask, tiff(o)))
PY
orient_one() { # name, input, then the operation and its options: PNG and JPEG (libjpeg) outputs
  local name=$1 in=$2 ext codec
  shift 2
  for ext in png jpg; do
    codec=auto
    [ $ext = jpg ] && codec=libjpeg
    if ! "$GPUIMG" "$@" --codec $codec --backend cuda "$in" "$ori/out/$name-cuda.$ext" ||
      ! "$GPUIMG" "$@" --codec $codec --backend cpu "$in" "$ori/out/$name-cpu.$ext"; then
      echo "FAIL $name: a $ext run failed"
      fail=1
      return
    fi
    if ! cmp -s "$ori/out/$name-cuda.$ext" "$ori/out/$name-cpu.$ext"; then
      echo "FAIL $name: cuda and cpu $ext outputs differ"
      fail=1
      return
    fi
  done
  echo "ok   $name"
}
for o in 1 2 3 4 5 6 7 8; do
  for in in "$ori/in/j$o.jpg" "$ori/in/p$o.png"; do
    n=orient-$(basename "$in")
    orient_one "$n-gray" "$in" gray
    orient_one "$n-blur" "$in" blur -r 3
    orient_one "$n-portrait" "$in" portrait -r 2 --mask "$ori/m$o.png"
    orient_one "$n-pipeline" "$in" gray "then" resize --width 50 "then" blur -r 1
  done
done
# The CUDA run's report: the orientation applied, the turned size.
if "$GPUIMG" blur -r 3 --backend cuda "$ori/in/j6.jpg" "$ori/out/r.png" --report "$ori/r.json" &&
  python3 - "$ori/r.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
i = r["input"]
assert r["backend"] == "cuda" and (i["orientation"], i["width"], i["height"]) == (6, 61, 37), r
PY
then
  echo "ok   orient-report"
else
  echo "FAIL orient-report"
  fail=1
fi
BATCH_IN="$ori/in/*" batch orient-gray gray --format png
BATCH_IN="$ori/in/*" batch orient-blur blur -r 3 --codec libjpeg --format jpg
BATCH_IN="$ori/in/*" batch orient-portrait portrait -r 2 --mask "$ori/m6.png" --format png
BATCH_IN="$ori/in/*" batch orient-pipeline gray "then" resize --width 50 "then" blur -r 1 \
  --format png
# The default backend (auto) starts on the CPU while the device comes up, each worker moving
# to CUDA at its next image once it is: the same bytes as CUDA alone, every image on one of
# the two, the summary saying when the device was up (GPUIMG_HYBRID=0: the old wait).
# 120 images (copies of the batch inputs), enough to outlast the device's start-up.
hin=$tmp/hybrid-in
rm -rf "$hin" "$tmp/batch-hybrid" "$tmp/batch-hybrid0" "$tmp/batch-hybrid-cpu"
mkdir -p "$hin"
for k in 0 1 2 3 4 5 6 7; do
  for f in "$bin"/*.png; do cp "$f" "$hin/$k-$(basename "$f")"; done
done
if "$GPUIMG" blur -r 8 --format jpg -q -j 4 -o "$tmp/batch-hybrid" --report "$tmp/hybrid.jsonl" \
  "$hin"/*.png 2>"$tmp/err" &&
  GPUIMG_HYBRID=0 "$GPUIMG" blur -r 8 --format jpg -q -j 4 -o "$tmp/batch-hybrid0" \
    --report "$tmp/hybrid0.jsonl" "$hin"/*.png &&
  "$GPUIMG" blur -r 8 --format jpg -q -j 4 --backend cpu -o "$tmp/batch-hybrid-cpu" "$hin"/*.png &&
  diff -rq "$tmp/batch-hybrid" "$tmp/batch-hybrid-cpu" >/dev/null &&
  diff -rq "$tmp/batch-hybrid0" "$tmp/batch-hybrid-cpu" >/dev/null &&
  python3 - "$tmp/hybrid.jsonl" "$tmp/hybrid0.jsonl" <<'PY'; then
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8")]
s = lines[-1]
assert s["failed"] == 0 and s["device_ready_ms"] > 0, s
backends = [o["backend"] for o in lines[:-1]]
assert set(backends) <= {"cpu", "cuda"}, backends
assert s["backend"] == ("cuda" if "cuda" in backends else "cpu"), (s, backends)
for o in lines[:-1]:
    cuda = o["backend"] == "cuda"
    assert (o["device_index"] == 0) == cuda, o
    assert ("upload" in [st["name"] for st in o["stages"]]) == cuda, o
print("hybrid: %d of %d images on CUDA, device up after %.0f ms" % (
    backends.count("cuda"), len(backends), s["device_ready_ms"]))
s0 = [json.loads(l) for l in open(sys.argv[2], encoding="utf-8")][-1]
assert s0["backend"] == "cuda" and s0["device_ready_ms"] is None, s0
PY
  echo "ok   batch-hybrid"
else
  echo "FAIL batch-hybrid: $(cat "$tmp/err")"
  fail=1
fi
# Devices: a device number that does not exist is a usage error; 0,0 is two workers on 0.
n=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
if [ "${n:-0}" -ge 1 ]; then
  "$GPUIMG" gray -q --backend cuda --devices "$n" -o "$tmp/batch-dev" "$bin/s0.png" 2>"$tmp/err"
  rc=$?
  if [ $rc -eq 2 ] && grep -q "^gpuimg: --devices: no CUDA device $n ($n present)$" "$tmp/err"; then
    echo "ok   batch-devices-missing"
  else
    echo "FAIL batch-devices-missing: exit $rc: $(cat "$tmp/err")"
    fail=1
  fi
fi
rm -rf "$tmp/batch-dev"
if "$GPUIMG" gray -q --backend cuda --devices all -j 3 -o "$tmp/batch-dev" "$bin"/*.png &&
  "$GPUIMG" gray -q --backend cuda --devices 0,0 -j 2 -o "$tmp/batch-dev2" "$bin"/*.png &&
  diff -rq "$tmp/batch-dev" "$tmp/batch-dev2" >/dev/null &&
  diff -rq "$tmp/batch-dev" "$tmp/batch-gray-c1" >/dev/null; then
  echo "ok   batch-devices"
else
  echo "FAIL batch-devices: --devices all / 0,0"
  fail=1
fi
# --codec nvjpeg, where the build has nvJPEG: JPEG decode and encode on the GPU.
if "$GPUIMG" -V | grep -q nvjpeg; then
  nj=$tmp/nvjpeg
  mkdir -p "$nj/in"
  for r in 1 2 3; do
    "$GPUIMG" blur -r $r sample: "$nj/in/s$r.jpg" --codec stb -q || { echo "FAIL nvjpeg: making inputs"; fail=1; }
  done
  if "$GPUIMG" blur -r 4 "$nj/in/s1.jpg" "$nj/nv.png" --codec nvjpeg --backend cuda -q &&
    "$GPUIMG" blur -r 4 "$nj/in/s1.jpg" "$nj/stb.png" --codec stb --backend cuda -q &&
    "$GPUIMG" blur -r 4 "$nj/in/s1.jpg" "$nj/nv.jpg" --codec nvjpeg --backend cuda -q &&
    "$GPUIMG" gray "$nj/nv.jpg" "$nj/nv-back.png" --codec stb -q &&
    "$GPUIMG" gray sample: "$nj/gray.jpg" --codec nvjpeg -q &&
    python3 - "$nj" <<'PY'
import sys
import cv2
import numpy as np
d = sys.argv[1]
a = cv2.imread(d + "/nv.png", cv2.IMREAD_UNCHANGED).astype(int)
b = cv2.imread(d + "/stb.png", cv2.IMREAD_UNCHANGED).astype(int)
diff = np.abs(a - b)
print("nvjpeg decode vs stb after blur -r 4: max %d mean %.3f" % (diff.max(), diff.mean()))
g = cv2.imread(d + "/gray.jpg", cv2.IMREAD_UNCHANGED)
assert g is not None and g.ndim == 2, "nvJPEG's gray output is not a 1-channel JPEG"
assert diff.max() <= 64 and diff.mean() <= 2.0, "nvJPEG decode too far from stb's"
PY
  then
    echo "ok   nvjpeg-cli"
  else
    echo "FAIL nvjpeg-cli"
    fail=1
  fi
  # One image, device-resident: decode, blur and encode on the device, the same bytes as
  # the CPU backend's nvJPEG decode, CPU blur and nvJPEG encode.
  if "$GPUIMG" blur -r 4 "$nj/in/s2.jpg" "$nj/dev.jpg" --codec nvjpeg --backend cuda -q \
    --report "$nj/dev.json" &&
    "$GPUIMG" blur -r 4 "$nj/in/s2.jpg" "$nj/host.jpg" --codec nvjpeg --backend cpu -q &&
    cmp -s "$nj/dev.jpg" "$nj/host.jpg" &&
    python3 - "$nj/dev.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
st = [(s["name"], s.get("codec")) for s in r["stages"]]
assert st == [("read", None), ("device-start", None), ("decode", "nvjpeg"), ("blur", None),
              ("encode", "nvjpeg"), ("write", None)], st
assert r["input"]["width"] == 1024 and r["output"]["channels"] == 3, r
PY
  then
    echo "ok   nvjpeg-device-one"
  else
    echo "FAIL nvjpeg-device-one"
    fail=1
  fi
  head -c 3000 "$nj/in/s1.jpg" >"$nj/cut.jpg"
  "$GPUIMG" gray "$nj/cut.jpg" "$nj/cut.png" --codec nvjpeg -q 2>"$nj/err"
  rc=$?
  if [ $rc -eq 3 ] && grep -q "cut.jpg" "$nj/err" && [ ! -e "$nj/cut.png" ]; then
    echo "ok   nvjpeg-truncated"
  else
    echo "FAIL nvjpeg-truncated: exit $rc: $(cat "$nj/err")"
    fail=1
  fi
  # Metadata through a device-resident run and batch: the APP1 Exif and APP2 ICC segments of
  # the input are the output's, byte for byte, whatever encoded it (nvJPEG on the device here).
  mkdir -p "$nj/meta"
  python3 - "$nj/in/s1.jpg" "$nj/meta/m.jpg" <<'PY' || { echo "FAIL nvjpeg-metadata: input"; fail=1; }
import struct, sys
d = open(sys.argv[1], "rb").read()
exif = b"II*\0\x08\0\0\0\x01\0" + struct.pack("<HHIHH", 0x0112, 3, 1, 1, 0) + b"\0" * 4
icc = struct.pack(">I", 300) + bytes(12) + b"RGB " + bytes(16) + b"acsp" + bytes(range(256)) + bytes(4)  # 300 bytes, as its header says
def seg(m, p):
    return b"\xff" + bytes([m]) + struct.pack(">H", len(p) + 2) + p
at = 4 + struct.unpack(">H", d[4:6])[0] if d[2:4] == b"\xff\xe0" else 2
blocks = seg(0xE1, b"Exif\0\0" + exif) + seg(0xE2, b"ICC_PROFILE\0\x01\x01" + icc)
open(sys.argv[2], "wb").write(d[:at] + blocks + d[at:])
PY
  if "$GPUIMG" blur -r 2 "$nj/meta/m.jpg" "$nj/meta-one.jpg" --codec nvjpeg --backend cuda -q \
    --report "$nj/meta.json" &&
    "$GPUIMG" blur -r 2 -o "$nj/meta-out" "$nj/meta/m.jpg" --codec nvjpeg --backend cuda -q &&
    python3 - "$nj/meta/m.jpg" "$nj/meta-one.jpg" "$nj/meta-out/m.jpg" "$nj/meta.json" <<'PY'
import json, struct, sys
def blocks(p):
    d, pos, out = open(p, "rb").read(), 2, []
    while d[pos] == 0xFF and d[pos + 1] != 0xDA:
        n = struct.unpack(">H", d[pos + 2:pos + 4])[0]
        if d[pos + 1] in (0xE1, 0xE2):
            out.append(d[pos:pos + 2 + n])
        pos += 2 + n
    return out
want = blocks(sys.argv[1])
assert len(want) == 2 and blocks(sys.argv[2]) == want and blocks(sys.argv[3]) == want
r = json.load(open(sys.argv[4]))
st = [(s["name"], s.get("codec")) for s in r["stages"] if s["name"] in ("decode", "encode")]
assert st == [("decode", "nvjpeg"), ("encode", "nvjpeg")], st
assert r["output"]["metadata"] == ["icc", "exif"], r["output"]
PY
  then
    echo "ok   nvjpeg-metadata"
  else
    echo "FAIL nvjpeg-metadata"
    fail=1
  fi
  BATCH_IN="$nj/in/*.jpg" batch nvjpeg blur -r 8 --codec nvjpeg --format jpg
  BATCH_IN="$nj/in/*.jpg" batch nvjpeg-png gray --codec nvjpeg --format png

  # Device-resident batches: a mix the hardware decoder takes (baseline colour of several
  # sizes, gray) and does not (progressive: nvJPEG's CUDA decoder), a PNG (host decode), and
  # a truncated JPEG (exit 3, no output, the others converted). The outputs are the same
  # bytes whether the JPEGs are decoded in shared batches (-j 8), each alone
  # (GPUIMG_JPEG_BATCH=0) or through the host codec interface (--backend cpu).
  mix=$nj/mix
  mkdir -p "$mix"
  python3 - "$mix" "$nj/in/s1.jpg" <<'PY' || { echo "FAIL nvjpeg-mix: making inputs"; fail=1; }
import sys
import cv2
import numpy as np
d, src = sys.argv[1], sys.argv[2]
img = cv2.imread(src, cv2.IMREAD_COLOR)
rng = np.random.default_rng(7)
for i, (w, h) in enumerate(((1024, 768), (640, 480), (333, 211), (64, 64), (17, 9), (1, 1))):
    im = cv2.resize(img, (w, h), interpolation=cv2.INTER_AREA)
    for k in range(3):
        noisy = np.clip(im.astype(int) + rng.integers(-20, 21, im.shape), 0, 255).astype(np.uint8)
        cv2.imwrite("%s/c%d-%d.jpg" % (d, i, k), noisy, [cv2.IMWRITE_JPEG_QUALITY, 85 + k * 5])
cv2.imwrite(d + "/gray.jpg", cv2.cvtColor(img, cv2.COLOR_BGR2GRAY), [cv2.IMWRITE_JPEG_QUALITY, 90])
cv2.imwrite(d + "/prog.jpg", img, [cv2.IMWRITE_JPEG_QUALITY, 90, cv2.IMWRITE_JPEG_PROGRESSIVE, 1])
cv2.imwrite(d + "/plain.png", img)
from PIL import Image
Image.open(src).convert("CMYK").save(d + "/cmyk.jpg", quality=90)  # nvJPEG refuses: libjpeg
data = open("%s/c0-0.jpg" % d, "rb").read()
open(d + "/cut.jpg", "wb").write(data[: len(data) // 2])
PY
  mixrun() { # out dir, GPUIMG_JPEG_BATCH, then options
    local out=$1 share=$2
    shift 2
    rm -rf "$out"
    GPUIMG_JPEG_BATCH=$share "$GPUIMG" blur -r 5 --codec nvjpeg --format jpg -q -o "$out" \
      --report "$out.jsonl" "$@" "$mix"/*.jpg "$mix"/*.png 2>"$out.err"
    echo $?
  }
  r1=$(mixrun "$nj/m-b8" 1 --backend cuda -j 8)
  r2=$(mixrun "$nj/m-a8" 0 --backend cuda -j 8)
  r3=$(mixrun "$nj/m-c1" 1 --backend cuda -j 1)
  r4=$(mixrun "$nj/m-p4" 1 --backend cpu -j 4)
  if [ "$r1$r2$r3$r4" = 3333 ] && [ ! -e "$nj/m-b8/cut.jpg" ] &&
    grep -q "cut.jpg: cannot decode JPEG" "$nj/m-b8.err" &&
    diff -rq "$nj/m-b8" "$nj/m-a8" && diff -rq "$nj/m-b8" "$nj/m-c1" &&
    diff -rq "$nj/m-b8" "$nj/m-p4" &&
    python3 - "$nj/m-b8.jsonl" "$nj/m-a8.jsonl" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8")]
s = lines[-1]
n = len(lines) - 1
assert s["converted"] == n - 1 and s["failed"] == 1, s
assert s["jpeg_batches"] >= 1 and s["jpeg_batched_images"] >= 1, s
req = s["jpeg_request_ms"]
assert req["decode"]["served"] > 0 and req["encode"]["served"] > 0, req
assert min(req["decode"].values()) >= 0 and min(req["encode"].values()) >= 0, req
busy = s["busy_pct"]  # the nvJPEG threads' of the time from their set-up to their stop
assert 0 < busy["hw_decoder"] <= 100 and 0 < busy["jpeg_encoder"] <= 100, busy
for o in lines[:-1]:
    if o["status"] != "ok":
        assert o["exit_code"] == 3 and "cut.jpg" in o["error"], o
        continue
    names = [st["name"] for st in o["stages"]]
    codecs = {st["name"]: st.get("codec") for st in o["stages"]}
    assert codecs["encode"] == "nvjpeg", codecs  # from device memory: no download
    if o["input"]["name"].endswith((".png", "cmyk.jpg")):  # decoded on the host
        assert names == ["read", "decode", "upload", "blur", "encode", "write"], names
        assert codecs["decode"] != "nvjpeg", codecs
    else:  # decoded and encoded on the device: no pixels cross the host
        assert names == ["read", "decode", "blur", "encode", "write"], names
        assert codecs["decode"] == "nvjpeg", codecs
alone = [json.loads(l) for l in open(sys.argv[2], encoding="utf-8")][-1]
assert alone["jpeg_batches"] == 0, alone
print("nvjpeg-mix: %d images in %d shared batches" % (s["jpeg_batched_images"], s["jpeg_batches"]))
PY
  then
    echo "ok   nvjpeg-mix"
  else
    echo "FAIL nvjpeg-mix: exits $r1 $r2 $r3 $r4: $(cat "$nj/m-b8.err")"
    fail=1
  fi
  # A split batch (--codec auto, GPUIMG_JPEG_SPLIT sets the share the cost model would
  # choose): the JPEGs whose names hash under the share go down the device's path (nvJPEG's
  # decode and encode), the others to the host codecs; the same files at -j 1 and -j 8, and each
  # host-path file the CPU backend's. CMYK JPEGs, which nvJPEG refuses, are decoded on the
  # host on either path: every file converts, as without a split.
  sp=$nj/split
  mkdir -p "$sp/in"
  cp "$mix"/*.jpg "$sp/in/" && rm -f "$sp/in/cut.jpg"
  python3 - "$sp/in" "$nj/in/s1.jpg" <<'PY' || { echo "FAIL batch-split: CMYK inputs"; fail=1; }
import sys
from PIL import Image
im = Image.open(sys.argv[2]).convert("CMYK")
for k in range(8):
    im.save("%s/cmyk%d.jpg" % (sys.argv[1], k), quality=80 + k)
PY
  for j in 1 8; do
    GPUIMG_JPEG_SPLIT=0.5 "$GPUIMG" blur -r 3 --format jpg -q -j $j -o "$sp/j$j" \
      --report "$sp/j$j.jsonl" "$sp/in"/*.jpg || { echo "FAIL batch-split: -j $j exits $?"; fail=1; }
  done
  "$GPUIMG" blur -r 3 --format jpg -q --backend cpu -o "$sp/cpu" "$sp/in"/*.jpg ||
    { echo "FAIL batch-split: the cpu run exits $?"; fail=1; }
  if diff -rq "$sp/j1" "$sp/j8" && python3 - "$sp/j8.jsonl" "$sp/j8" "$sp/cpu" <<'PY'
import json, os, sys
lines = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8")]
s, items = lines[-1], lines[:-1]
assert s["device_share"] == 0.5 and s["device_workers"] > 0 and s["failed"] == 0, s
paths = {}
for o in items:
    codecs = {st["name"]: st.get("codec") for st in o["stages"]}
    paths.setdefault(codecs["decode"], []).append(o)
    name = os.path.basename(o["output"]["name"])
    same = open(os.path.join(sys.argv[2], name), "rb").read() == \
        open(os.path.join(sys.argv[3], name), "rb").read()
    if codecs["encode"] == "nvjpeg":  # the device's path
        want = "libjpeg" if name.startswith("cmyk") else "nvjpeg"
        assert codecs["decode"] == want, (name, codecs)
    else:
        assert codecs["decode"] == "libjpeg" and same, (name, codecs)
    if name.startswith("cmyk"):
        paths.setdefault("cmyk", []).append(o)
assert len(paths.get("nvjpeg", [])) >= 1 and len(paths.get("libjpeg", [])) >= 1, paths.keys()
assert len(paths["cmyk"]) == 9, len(paths["cmyk"])  # the mix's cmyk.jpg and eight more
assert 1 <= s["jpeg_batched_images"] <= len(paths["nvjpeg"]), s
print("batch-split: %d of %d on the device's path" % (len(paths["nvjpeg"]), len(items)))
PY
  then
    echo "ok   batch-split"
  else
    echo "FAIL batch-split"
    fail=1
  fi
  # Orientation with --codec nvjpeg on CUDA: every JPEG is decoded by nvJPEG on the device (no
  # upload), and one to turn is turned there by the orientation kernels, one image at a time
  # and in a batch. The reference is nvJPEG's stored pixels (the --no-autorotate output, a PNG
  # that carries the JPEG's EXIF block) turned and blurred by the CPU backend: its PNG output,
  # and its JPEG output encoded by nvJPEG through host memory (--strip: pixels alone compared).
  # Under --backend auto one small JPEG is not worth nvJPEG's set-up: the cost model leaves it
  # to the host codecs (nv1-host.png: libjpeg, fastpng), and says why.
  if "$GPUIMG" -V | grep -q libjpeg; then
    "$GPUIMG" blur -r 3 --codec nvjpeg --backend cuda -q --strip -o "$ori/out/nvbatch" \
      --format png "$ori"/in/j*.jpg || { echo "FAIL nvjpeg-orient: batch"; fail=1; }
    for o in 1 2 3 4 5 6 7 8; do
      in=$ori/in/j$o.jpg
      n=$ori/out/nv$o
      if "$GPUIMG" blur -r 3 --codec nvjpeg --backend cuda --strip "$in" "$n-cuda.png" \
          --report "$n.json" &&
        "$GPUIMG" blur -r 0 --codec nvjpeg --backend cuda -q --no-autorotate "$in" "$n-stored.png" &&
        "$GPUIMG" blur -r 3 --backend cpu --strip "$n-stored.png" "$n-ref.png" &&
        "$GPUIMG" blur -r 3 --codec nvjpeg --backend cuda --strip "$in" "$n-cuda.jpg" &&
        "$GPUIMG" blur -r 3 --codec nvjpeg --backend cpu --strip "$n-stored.png" "$n-cpu.jpg" &&
        "$GPUIMG" blur -r 3 --codec auto --backend cpu "$in" "$n-host.png" &&
        cmp -s "$n-cuda.png" "$n-ref.png" && cmp -s "$n-cuda.png" "$ori/out/nvbatch/j$o.png" &&
        cmp -s "$n-cuda.jpg" "$n-cpu.jpg" &&
        python3 - "$n.json" $o <<'PY'
import json, sys
r, o = json.load(open(sys.argv[1])), int(sys.argv[2])
names = [s["name"] for s in r["stages"]]
decode = next(s for s in r["stages"] if s["name"] == "decode")
assert r["backend"] == "cuda" and (r["input"]["width"], r["input"]["height"]) == (61, 37), r
assert decode["codec"] == "nvjpeg" and "upload" not in names, (decode, names)
assert r["input"].get("orientation", 1) == o, r["input"]
PY
      then
        echo "ok   nvjpeg-orient-j$o.jpg"
      else
        echo "FAIL nvjpeg-orient-j$o.jpg"
        fail=1
      fi
    done
    n=$ori/out/nv1
    if "$GPUIMG" blur -r 3 --codec nvjpeg "$ori/in/j1.jpg" "$n-auto.png" --report "$n-auto.json" &&
      cmp -s "$n-auto.png" "$n-host.png" &&
      python3 - "$n-auto.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
c = r["backend_choice"]
decode = next(s for s in r["stages"] if s["name"] == "decode")
assert r["backend"] == "cpu" and decode["codec"] == "libjpeg", (r["backend"], decode)
assert c["nvjpeg_ms"] > c["cpu_ms"] and c["reason"].startswith("nvjpeg predicted slower"), c
PY
    then
      echo "ok   nvjpeg-auto-one"
    else
      echo "FAIL nvjpeg-auto-one"
      fail=1
    fi
    # Left to the host codecs by the model, a JPEG shrunk 8x is still decoded reduced (1/4).
    if "$GPUIMG" resize --width 1600 --height 1200 --backend cpu -q sample: "$n-big.jpg" &&
      "$GPUIMG" resize --width 200 --codec nvjpeg "$n-big.jpg" "$n-small.png" \
        --report "$n-small.json" &&
      "$GPUIMG" resize --width 200 --backend cpu -q "$n-big.jpg" "$n-small-cpu.png" &&
      cmp -s "$n-small.png" "$n-small-cpu.png" &&
      python3 - "$n-small.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
decode = next(s for s in r["stages"] if s["name"] == "decode")
assert decode["codec"] == "libjpeg" and r["input"]["decoded_at_1_in"] == 4, (decode, r["input"])
PY
    then
      echo "ok   nvjpeg-auto-shrink"
    else
      echo "FAIL nvjpeg-auto-shrink"
      fail=1
    fi
  fi
fi
# --to-srgb on CUDA: a JPEG tagged Adobe RGB is decoded on the host, converted to sRGB there,
# then processed on the device; the bytes are the CPU backend's, one image and in a batch, and
# with --codec nvjpeg asked for (the route keeps a profiled JPEG on the host's decoder).
if "$GPUIMG" --version | grep -q "colour: lcms2"; then
  cs=$tmp/srgb
  mkdir -p "$cs/in"
  "$GPUIMG" convert --backend cpu -q sample: "$cs/sample.png" || fail=1
  python3 - "$(dirname "$0")/.." "$cs/in" "$cs/sample.png" <<'PY' || { echo "FAIL to-srgb: inputs"; fail=1; }
import sys
sys.path.insert(0, sys.argv[1])
from PIL import Image
from cli_colour import ADOBE, ADOBE_GAMMA, matrix_profile
im = Image.open(sys.argv[3]).convert("RGB").resize((333, 251))
for k in range(3):
    im.rotate(90 * k, expand=True).save("%s/a%d.jpg" % (sys.argv[2], k), quality=90,
                                        icc_profile=matrix_profile(ADOBE, ADOBE_GAMMA))
PY
  ok=1
  for codec in auto nvjpeg; do
    "$GPUIMG" blur -r 3 --to-srgb --codec $codec --backend cuda -q "$cs/in/a0.jpg" "$cs/one-$codec.png" &&
      "$GPUIMG" blur -r 3 --to-srgb --codec $codec --backend cuda -q --format png -o "$cs/b-$codec" "$cs/in"/*.jpg || ok=0
  done
  "$GPUIMG" blur -r 3 --to-srgb --backend cpu -q "$cs/in/a0.jpg" "$cs/one-cpu.png" &&
    "$GPUIMG" blur -r 3 --to-srgb --backend cpu -q --format png -o "$cs/b-cpu" "$cs/in"/*.jpg || ok=0
  for codec in auto nvjpeg; do
    cmp -s "$cs/one-$codec.png" "$cs/one-cpu.png" && diff -rq "$cs/b-$codec" "$cs/b-cpu" >/dev/null || ok=0
  done
  if [ $ok = 1 ]; then echo "ok   to-srgb"; else echo "FAIL to-srgb: cuda and cpu outputs differ"; fail=1; fi
fi
exit $fail
