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

# The report: event-timed upload, kernel and download stages.
"$GPUIMG" blur -r 16 --tiled --backend cuda --report "$tmp/r.json" || fail=1
python3 - "$tmp/r.json" <<'PY' || fail=1
import json, sys
r = json.load(open(sys.argv[1]))
assert r["backend"] == "cuda", r["backend"]
names = [s["name"] for s in r["stages"]]
for want in ("upload", "blur", "download"):
    assert want in names, names
for s in r["stages"]:
    if s["name"] in ("upload", "blur", "download"):
        assert s["clock"] == "cuda-event", s
        assert s["ms"] > 0 and s["gbps"] > 0, s
    if s["name"] == "blur":
        assert s["variant"] == "tiled" and s["launch"]["kernel"] == "blur_tiled_kernel", s
print("ok   report")
PY
exit $fail
