# cli_model.py: test_cli.py's group model: --explain --device NAME, the CUDA model without a GPU
# (blocks, waves and the last wave, idle lanes, the sector and bank rules), gray's grid-stride
# variant and the rotations' tiles.

import struct
import zlib

from gpuimg_testlib import (
    EXIT_USAGE, check, cpu, expect_error, path, read, run, test, write)
from cli_common import load_report

GPUS = "t4, a10, a100, rtx3090, l4, l40s, rtx4090, h100, h100-pcie, h200, b200 or rtx5090"


def flat_png(name, w, h, channels=3):
    """A w x h image of zeros, written directly (large sizes in a fraction of a second)."""
    def chunk(kind, data):
        return (struct.pack(">I", len(data)) + kind + data +
                struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))
    ctype = {1: 0, 2: 4, 3: 2, 4: 6}[channels]
    raw = (b"\0" + bytes(w * channels)) * h
    header = struct.pack(">IIBBBBB", w, h, 8, ctype, 0, 0, 0)
    write(name, b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) +
          chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b""))
    return name


def explained(*args):
    """The --explain lines of a run that must succeed (stderr only, nothing else on it)."""
    res = run(*args)
    check(res.rc == 0, "exit 0", res)
    return res, res.err.decode().splitlines()


def has(line, *parts, res=None):
    for p in parts:
        check(p in line, "%r lacks %r" % (line, p), res)


@test("model")
def a100_tail():
    # 2^24 pixels in 16x16 blocks on an A100: 65,536 blocks, 8 per SM, 864 resident, 75.85
    # waves, the last filling 736 of the 864 block slots.
    big = flat_png("big.png", 4096, 4096)
    res, lines = explained("gray", "--naive", "--explain", "--device", "a100", big)
    check(len(lines) == 2, "a model line and the step's", res)
    check(lines[0] == "model: a100 (NVIDIA A100, compute capability 8.0, 108 SMs; per SM 2048 "
          "threads, 32 blocks, 65536 registers, 164 KB shared memory); registers from the "
          "compiler for sm_80; predicted, not measured", "model line", res)
    has(lines[1], "gray naive: predicted for a100: gray_naive_kernel, 16x16 blocks, ",
        " registers -> 8 blocks/SM (limited by threads), 100% occupancy, 65,536 blocks in 75.9 "
        "waves (864 resident), last wave 736 blocks (85.2% full); ", res=res)


@test("model")
def h100_sample():
    # The sample (1024x768 RGB) as the H100 runs it: what the GPU's own --explain prints.
    res, lines = explained("gray", "--naive", "--explain", "--device", "h100")
    has(lines[1], "gray naive: predicted for h100: gray_naive_kernel, 16x16 blocks, ",
        "-> 8 blocks/SM (limited by threads), 100% occupancy, 3,072 blocks in 2.9 waves (1,056 "
        "resident), last wave 960 blocks (90.9% full); ", res=res)
    # 16x16 blocks: a warp is two half-rows, 16 RGB pixels of 48 bytes each: 2 sectors a
    # half, 4 a request, a byte in 4 used; the gray bytes, 1 sector a half.
    has(lines[1], "; loads 1 B/lane 3 B apart: 4 sectors/request (25% used); stores 1 B/lane 1 B "
        "apart: 2 sectors/request (50% used)", res=res)


@test("model")
def idle_lanes():
    # 100 threads a block: 4 warps, the last with 4 threads, 28 of 128 lanes idle.
    res, lines = explained("gray", "--naive", "--block", "10x10", "--explain", "--device", "h100")
    has(lines[1], "gray_naive_kernel, 10x10 blocks of 4 warps, 28 of 128 lanes idle (21.9%), ",
        "-> 16 blocks/SM (limited by threads), 100% occupancy, 7,931 blocks in 3.8 waves (2,112 "
        "resident)", res=res)
    res, lines = explained("checkerboard", "--naive", "--block", "32x8", "--explain",
                           "--device", "h100")
    check("lanes idle" not in lines[1], "whole warps: no idle lanes", res)


@test("model")
def grid_stride():
    # As many blocks as the GPU holds at once: one whole wave, no last one to speak of.
    for gpu, blocks in (("h100", "1,056"), ("a100", "864"), ("l4", "348")):
        res, lines = explained("gray", "--grid-stride", "--explain", "--device", gpu)
        has(lines[1],
            "gray grid-stride: predicted for %s: gray_stride_kernel, 256x1 blocks, " % gpu,
            "%s blocks in 1.0 waves (%s resident); loads" % (blocks, blocks), res=res)
    # Its bytes are gray's, to the byte (the CPU reference; the gpu suite compares the kernel).
    res = cpu("checkerboard", "--cell", "7", "sample:", "-")
    check(res.rc == 0, "an RGB input", res)
    write("in.png", res.out)
    for name, variant in (("fast", []), ("stride", ["--grid-stride"]), ("naive", ["--naive"])):
        res = cpu("gray", *variant, "in.png", name + ".png")
        check(res.rc == 0 and res.err == b"", "gray %s" % variant, res)
    check(read("fast.png") == read("stride.png") == read("naive.png"), "the same bytes")


@test("model")
def sectors_and_banks():
    # The tiled blur's window in 16x16 blocks: a warp reads two tile rows 18 words apart (r = 1),
    # whose banks overlap on 2: 2-way; in 32x8 blocks, one row of 32 words: conflict-free. Its
    # float tile holds 3 floats a pixel: 3 words apart, gcd(3, 32) = 1 on the store.
    res, lines = explained("blur", "--tiled", "-r", "1", "--explain", "--device", "h100")
    has(lines[1], "blur_tiled_kernel, 16x16 blocks, ", "; shared stores 4 B/lane 4 B apart: "
        "1-way bank conflict; shared loads 4 B/lane 4 B apart: 2-way bank conflict; ", res=res)
    res, lines = explained("blur", "--tiled", "-r", "1", "--block", "32x8", "--explain",
                           "--device", "h100")
    has(lines[1], "; shared loads 4 B/lane 4 B apart: 1-way bank conflict; ", res=res)
    res, lines = explained("blur", "--tiled", "--tile", "float", "-r", "2", "--explain",
                           "--device", "h100")
    has(lines[1], "; shared stores 4 B/lane 12 B apart: 1-way bank conflict; ", res=res)
    # checkerboard --naive in 32x8 blocks: a warp is one row of 32 RGB pixels, a byte a lane 3
    # bytes apart: 96 bytes in 3 sectors, a third of them used.
    res, lines = explained("checkerboard", "--naive", "--explain", "--device", "h100")
    has(lines[1], "; loads 1 B/lane 3 B apart: 3 sectors/request (33.3% used); ", res=res)
    # gray's own kernel: 16 pixels a thread as 16-byte vectors, 48 bytes apart for RGB: 32
    # sectors a request, half of each used; its 16 gray bytes a thread fill 16 sectors.
    res, lines = explained("gray", "--explain", "--device", "h100")
    has(lines[1], "gray fast: predicted for h100: gray_kernel, 256x1 blocks, ",
        "; loads 16 B/lane 48 B apart: 32 sectors/request (50% used); stores 16 B/lane 16 B "
        "apart: 16 sectors/request (100% used)", res=res)


@test("model")
def rotations():
    # The transposes of 4-byte pixels (1024x768 RGBA, the result 768 wide): the 32x32 tile's
    # column walk reads tile rows 128 bytes apart, all in one bank: 32-way; padded by a word,
    # 132 bytes apart: conflict-free. The naive transpose stores down a column of the result,
    # 3,072 bytes a lane: a sector each, 4 of its 32 bytes used.
    rgba = flat_png("rgba.png", 1024, 768, 4)
    res, lines = explained("transpose", "--tiled", "--explain", "--device", "h100", rgba, "t.png")
    has(lines[1], "transpose tiled -> 768x1024: predicted for h100: rotate_tiled_kernel, 32x8 "
        "blocks, ", "; loads 4 B/lane 4 B apart: 4 sectors/request (100% used); shared stores 4 "
        "B/lane 4 B apart: 1-way bank conflict; shared loads 4 B/lane 128 B apart: 32-way bank "
        "conflict; stores 4 B/lane 4 B apart: 4 sectors/request (100% used)", res=res)
    res, lines = explained("transpose", "--explain", "--device", "h100", rgba, "t.png")
    has(lines[1], "transpose fast -> 768x1024: predicted for h100: rotate_kernel, 32x8 blocks, ",
        "; shared loads 4 B/lane 132 B apart: 1-way bank conflict; ", res=res)
    res, lines = explained("transpose", "--naive", "--explain", "--device", "h100", rgba, "t.png")
    has(lines[1], "transpose naive -> 768x1024: predicted for h100: rotate_naive_kernel, 32x8 "
        "blocks, ", "; loads 4 B/lane 4 B apart: 4 sectors/request (100% used); stores 4 B/lane "
        "3072 B apart: 32 sectors/request (12.5% used)", res=res)
    # Every orientation has its line: rotate 90 walks the tile's column upwards (unpadded, 2-byte
    # pixels: 64 bytes a row, 16-way); flop stores a row backwards from its far end, the same 4
    # sectors as forwards where the row ends on a sector, 5 where it does not (1001 pixels).
    res, lines = explained("rotate", "--angle", "90", "--tiled", "--explain", "--device", "h100",
                           flat_png("ga.png", 64, 48, 2), "t.png")
    has(lines[1], "rotate tiled -> 48x64: predicted for h100: rotate_tiled_kernel, 32x8 blocks, ",
        "; shared loads 2 B/lane -64 B apart: 16-way bank conflict; ", res=res)
    for width, sectors in ((1024, "4 sectors/request (100% used)"),
                           (1001, "5 sectors/request (80% used)")):
        res, lines = explained("flop", "--naive", "--explain", "--device", "h100",
                               flat_png("f.png", width, 8, 4), "t.png")
        has(lines[1], "; stores 4 B/lane -4 B apart: " + sectors, res=res)
    for op in (["rotate", "--angle", "180"], ["flip"], ["transverse"]):
        res, lines = explained(*op, "--explain", "--device", "h100", rgba, "t.png")
        has(lines[1], "predicted for h100: rotate_kernel, 32x8 blocks, ", " 1-way bank conflict; "
            "stores", res=res)


@test("model")
def every_step():
    # Each step gets its line: a copy (gray input) or a kernel; divergence predicted for the
    # teaching kernels.
    res, lines = explained("gray", "then", "gray", "then", "checkerboard", "--naive", "then",
                           "portrait", "-r", "3", "--tiled", "then", "resize", "--scale", "0.5",
                           "then", "blur", "--explain", "--device", "l4")
    check(len(lines) == 7, "a model line and six steps", res)
    check(lines[2] == "gray fast: predicted for l4: a device-to-device copy, no kernel", "copy",
          res)
    has(lines[3], "checkerboard naive: predicted for l4: checkerboard_kernel, 32x8 blocks, ",
        "-> 6 blocks/SM (limited by threads)", "; 24,576 of 24,576 warps divergent (100.0%)",
        res=res)
    has(lines[4], "portrait tiled: predicted for l4: portrait_composite_kernel (one of 2 "
        "launches), 32x8 blocks, ",
        " warps divergent (", res=res)
    has(lines[5], "resize fast -> 512x384: predicted for l4: resize_rows_kernel (one of 2 "
        "launches), 32x8 blocks, ",
        res=res)
    # The fast blur of a small image at a small radius runs the tiled kernel at 16x16 blocks.
    has(lines[6], "blur fast: predicted for l4: blur_tiled_kernel, 16x16 blocks, ", res=res)


@test("model")
def fast_blur():
    # The fast blur's design follows the image, the radius and the GPU, as its launcher
    # chooses it: the two passes at r = 16 on the sample, the pair kernel at r = 40 on a large
    # image whose width is a multiple of 8 pixels (the chunk kernel where an SM's shared memory
    # holds fewer than 2 pair blocks), the tiled kernel at r = 2; portrait folds its composite
    # into the two passes.
    for args, kernel in ((["blur", "-r", "16"], "blur_columns_kernel (one of 2 launches), 256x1 "
                          "blocks, "),
                         (["blur", "-r", "2"], "blur_tiled_kernel, 16x16 blocks, "),
                         (["portrait"], "blur_columns_kernel (one of 2 launches), 256x1 blocks, ")):
        res, lines = explained(*args, "--explain", "--device", "h200")
        has(lines[1], ": predicted for h200: " + kernel, res=res)
    res, lines = explained("blur", "-r", "16", "--explain", "--device", "h200")
    has(lines[1], " 288 blocks in 0.3 waves (1,056 resident), last wave 288 blocks (27.3% full)",
        res=res)
    # 4096x4096 at r = 40: the pair kernel's 3 tiles x 171 runs of 24 rows, registers capped
    # for 2 resident blocks, the runs shortened to nearly fill whole waves.
    big = flat_png("big.png", 4096, 4096)
    res, lines = explained("blur", "-r", "40", "--explain", "--device", "h100", big)
    has(lines[1], "blur fast: predicted for h100: blur_pair_kernel (one of 2 launches), 256x1 "
        "blocks, 54.2 KB shared",
        " registers -> 2 blocks/SM (limited by registers)", " 513 blocks in 1.9 waves (264 "
        "resident), last wave 249 blocks (94.3% full)", res=res)
    # An RGB pair block takes 54.2 KB of shared memory: an L4's SM holds one, so the chunk
    # kernel runs there.
    res, lines = explained("blur", "-r", "40", "--explain", "--device", "l4", big)
    has(lines[1], "blur fast: predicted for l4: blur_chunk_kernel, 256x1 blocks, 27.2 KB shared",
        res=res)
    # The two passes size their bands by the L2 cache, which the table lacks for the B200.
    res, lines = explained("blur", "-r", "16", "--explain", "--device", "b200")
    check(lines[1] == "blur fast: predicted for b200: not predicted: the launch depends on the "
          "GPU's L2 cache size, which the table lacks", "B200 two passes", res)


@test("model")
def report():
    res = run("gray", "--naive", "--explain", "--device", "a100", "--report", "-",
              flat_png("big.png", 4096, 4096))
    check(res.rc == 0, "exit 0", res)
    r = load_report(res.out)
    step = [s for s in r["stages"] if s["name"] == "gray"][0]
    m = step["model"]
    want = {"gpu": "a100", "kernel": "gray_naive_kernel",
            "instance": "gray_naive_kernel<3, false>", "grid": [256, 256, 1], "block": [16, 16, 1],
            "active_blocks_per_sm": 8, "resident_blocks": 864, "blocks": 65536, "waves": 75.85,
            "last_wave_blocks": 736, "last_wave_pct": 85.2, "idle_lanes": 0, "limited_by": "threads"}
    for k, v in want.items():
        check(m.get(k) == v, "model %s: %r, want %r" % (k, m.get(k), v), res)
    check(m["accesses"][0] == {"kind": "loads", "bytes": 1, "stride": 3,
                               "sectors_per_request": 4, "used_pct": 25.0},
          "accesses %r" % m["accesses"], res)
    check("launch" not in step, "nothing measured on the CPU backend", res)
    check(r["backend"] == "cpu", "the image made on the CPU backend", res)


@test("model")
def refusals():
    expect_error(run("gray", "--explain", "--device", "b300"), EXIT_USAGE,
                 "--device: invalid value 'b300' (expected %s)" % GPUS)
    # CUDA devices are numbered with --devices (batches); --device names a GPU model.
    expect_error(run("gray", "--explain", "--device", "0"), EXIT_USAGE,
                 "--device: invalid value '0' (expected %s)" % GPUS)
    expect_error(run("gray", "--device", "h100"), EXIT_USAGE,
                 "--device: needs --explain or --explain-image (it names the GPU they predict for)")
    expect_error(run("gray", "--explain", "--device", "h100", "-o", path("out") + "/", "in.png"),
                 EXIT_USAGE, "--explain: not available with -o DIR")
