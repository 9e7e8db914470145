# cli_picture.py: test_cli.py's group picture: --explain-image, each step's launch drawn on the
# output (blocks tinted by wave, divergent warps outlined, idle lanes hatched), read back from
# the PNG with gpuimg_testlib's reader; the output's bytes with and without it.

import os
import re
import zlib

from gpuimg_testlib import (
    EXIT_USAGE, check, cpu, expect_error, path, png_chunks, png_decode, read, run, test, write)
from cli_model import flat_png

# The colours the picture draws with (src/engine/explain_image.c).
DIVERGENT = (255, 0, 255)
HATCH = (250, 250, 250)


def picture(name):
    """(width, height, pixel(x, y), the tEXt comment) of a picture gpuimg wrote."""
    data = read(name)
    w, h, c, px = png_decode(data)
    check(c == 3, "an RGB picture")
    comment = b""
    for pos, n, kind in png_chunks(data):
        if kind == b"tEXt":
            keyword, _, comment = data[pos + 8:pos + 8 + n].partition(b"\0")
            check(keyword == b"Comment", "the legend's words under Comment")

    def pixel(x, y):
        i = (y * w + x) * 3
        return tuple(px[i:i + 3])
    return w, h, pixel, comment.decode()


def block_shape(comment):
    m = re.search(r" (\d+)x(\d+) blocks", comment)
    check(m is not None, "the legend names the block shape: %r" % comment)
    return int(m.group(1)), int(m.group(2))


@test("picture")
def gray_waves():
    # The sample (1024x768) in 16x16 blocks on the H100: 3,072 blocks, 1,056 resident, so three
    # waves in launch order (row after row of blocks): 1,056, 1,056 and 960 blocks, each its
    # own tint; each block's top-left pixel lies on its lines, drawn in its wave's colour.
    res = cpu("gray", "--naive", "sample:", "plain.png")
    check(res.rc == 0, "gray", res)
    res = cpu("gray", "--naive", "--explain-image", "g.png", "--device", "h100", "sample:",
              "out.png")
    check(res.rc == 0 and res.err == b"", "a picture, nothing said", res)
    check(read("out.png") == read("plain.png"), "the output's bytes unchanged by the option")
    w, h, pixel, comment = picture("g.png")
    check(w == 1024 and h > 768, "the sample's width, a legend below: %dx%d" % (w, h))
    check("waves predicted for h100 (NVIDIA H100 SXM5): blocks in launch order, 1,056 resident "
          "a wave" in comment, "labelled predicted: %r" % comment)
    check("3,072 blocks in 2.9 waves (1,056 resident), last wave 960 blocks" in comment,
          "the --explain line in the legend: %r" % comment)
    bw, bh = block_shape(comment)
    check((bw, bh) == (16, 16), "16x16 blocks")
    tints = [pixel(bx * bw, by * bh) for by in range(768 // bh) for bx in range(1024 // bw)]
    check(len(tints) == 3072, "3,072 blocks")
    check(len(set(tints)) == 3, "3 tints: %s" % sorted(set(tints)))
    waves = [tints[0]] * 1056 + [tints[1056]] * 1056 + [tints[2112]] * 960
    check(tints == waves, "blocks tinted by wave in launch order")
    check(len({tints[0], tints[1056], tints[2112]}) == 3, "a tint per wave")
    inside = pixel(8, 8)
    check(inside != tints[0], "a block's inside shows the image under its tint")
    check(all(pixel(x, y) != DIVERGENT for y in range(0, 768, 3) for x in range(0, 1024, 3)),
          "gray's kernel does not branch: no warp outlined")


@test("picture")
def checkerboard_warps():
    # One-pixel cells: every warp of the per-pixel kernel splits, so every warp is outlined (a
    # warp is a row of 32 or two half-rows of 16 pixels: its outline is all of its pixels).
    res = cpu("checkerboard", "--naive", "--cell", "1", "sample:", "plain.png")
    check(res.rc == 0, "checkerboard", res)
    res = cpu("checkerboard", "--naive", "--cell", "1", "--explain-image", "c.png", "--device",
              "h100", "sample:", "out.png")
    check(res.rc == 0 and res.err == b"", "a picture", res)
    check(read("out.png") == read("plain.png"), "the output's bytes unchanged by the option")
    w, h, pixel, comment = picture("c.png")
    bw, bh = block_shape(comment)
    check("24,576 of 24,576 warps divergent (100.0%)" in comment, "every warp: %r" % comment)
    check(bw * bh % 32 == 0 and min(bw, 32) * (32 // min(bw, 32)) == 32, "whole warps")
    missed = [(x, y) for y in range(768) for x in range(1024) if pixel(x, y) != DIVERGENT]
    check(not missed, "every warp outlined; not at %s" % missed[:5])
    # Cells of 64 pixels in 32x8 blocks: no warp crosses a cell's edge, none is outlined.
    res = cpu("checkerboard", "--naive", "--cell", "64", "--block", "32x8", "--explain-image",
              "c64.png", "--device", "h100", "sample:")
    check(res.rc == 0, "a picture", res)
    w, h, pixel, comment = picture("c64.png")
    check("0 of 24,576 warps divergent" in comment, "no warp: %r" % comment)
    check(all(pixel(x, y) != DIVERGENT for y in range(0, 768, 2) for x in range(0, 1024, 2)),
          "no warp outlined")


@test("picture")
def idle_lanes_hatched():
    # 24x5 blocks: 120 threads, 4 warps, the last with 24 threads (8 lanes idle): that warp (row
    # 4 of each block) is hatched, and nothing else. A 48x20 image is drawn 5 times larger.
    flat_png("flat.png", 48, 20)
    res = cpu("gray", "--naive", "--block", "24x5", "--explain-image", "odd.png", "--device",
              "h100", "flat.png")
    check(res.rc == 0, "a picture", res)
    w, h, pixel, comment = picture("odd.png")
    check("enlarged: an image pixel is 5x5 picture pixels" in comment, "the scale: %r" % comment)
    hatched = {(x // 5, y // 5) for y in range(100) for x in range(240) if pixel(x, y) == HATCH}
    check(hatched and all(y % 5 == 4 for _, y in hatched),
          "the last warp's rows hatched, no other: %s" % sorted(hatched)[:8])
    check({x for x, _ in hatched} == set(range(48)), "across every block")
    # A 50x22 image in the same blocks: the grid's overhang (lanes past the image) hatched too.
    flat_png("flat2.png", 50, 22)
    res = cpu("gray", "--naive", "--block", "24x5", "--explain-image", "over.png", "--device",
              "h100", "flat2.png")
    check(res.rc == 0, "a picture", res)
    w, h, pixel, comment = picture("over.png")
    check("enlarged: an image pixel is 3x3 picture pixels" in comment, "scale: %r" % comment)
    check(w >= 72 * 3 and h > 25 * 3, "the whole grid drawn, 72x25 pixels: %dx%d" % (w, h))
    # Rows 1 and 22 hold no last warp: their hatching is the overhang's, right of and below the
    # image.
    right = {x // 3 for x in range(216) for y in range(3, 6) if pixel(x, y) == HATCH}
    below = {y // 3 for y in range(63, 69) for x in range(0, 144) if pixel(x, y) == HATCH}
    check(right and min(right) >= 50, "right of the image hatched: %s" % sorted(right))
    check(below == {22}, "below the image hatched: %s" % sorted(below))


@test("picture")
def steps_numbered():
    # Several steps: a picture each, FILE-K before its extension; the output's bytes unchanged.
    res = cpu("gray", "--naive", "then", "checkerboard", "--naive", "sample:", "plain.png")
    check(res.rc == 0, "two steps", res)
    res = cpu("gray", "--naive", "then", "checkerboard", "--naive", "--explain-image", "m.png",
              "sample:", "out.png")
    check(res.rc == 0 and res.err == b"", "two pictures", res)
    check(read("out.png") == read("plain.png"), "the output's bytes unchanged by the option")
    check(not os.path.exists(path("m.png")), "no FILE itself")
    for k, name in ((1, "gray naive"), (2, "checkerboard naive")):
        w, h, pixel, comment = picture("m-%d.png" % k)
        check(comment.startswith("%s (step %d of 2): waves predicted for h100" % (name, k)),
              "step %d's picture, for the default GPU without --device: %r" % (k, comment))
    # A launch whose blocks are not tiles of the image (gray's default, 256 threads a block
    # over the pixels in a row): the picture says so, nothing drawn over the image.
    res = cpu("gray", "--explain-image", "fast.png", "--device", "h100", "sample:")
    check(res.rc == 0, "a picture", res)
    w, h, pixel, comment = picture("fast.png")
    check("gray_kernel's blocks are not tiles of the image" in comment, "said: %r" % comment)


@test("picture")
def picture_refusals():
    expect_error(run("gray", "--explain-image", "x.jpg", "sample:"), EXIT_USAGE,
                 "--explain-image: needs a file name ending in .png")
    expect_error(run("gray", "--explain-image", "-", "sample:"), EXIT_USAGE,
                 "--explain-image: needs a file name ending in .png")
    expect_error(run("gray", "--explain-image", path("p.png"), "-o", path("dir") + "/",
                     "in.png"), EXIT_USAGE, "--explain-image: not available with -o DIR")
    flat_png("in.png", 8, 8)
    expect_error(run("gray", "--explain-image", path("in.png"), path("in.png"), path("o.png")),
                 4, "%s: output is the same file as the input" % path("in.png"))
    expect_error(run("gray", "--explain-image", path("o.png"), path("in.png"), path("o.png")),
                 EXIT_USAGE, "%s: the picture and the image are the same file" % path("o.png"))
    check(not os.path.exists(path("o.png")), "nothing written")
