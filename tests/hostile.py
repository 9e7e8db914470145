#!/usr/bin/env python3
# hostile.py: untrusted inputs through the real binary: clean refusals, bounded memory, no damage.
"""Feeds gpuimg hostile files, generated here deterministically, and checks every run.

Usage: hostile.py GROUP...   (groups: truncate, corrupt, limits, work, formats, special,
                              regressions, legit, tiff; 'all' runs every group)

Environment:
  GPUIMG             the binary under test (required)
  GPUIMG_TEST_DIR    where scratch directories go (default: the current directory)
  GPUIMG_REGRESSIONS tests/fuzz/regressions: fuzzer reproducers, replayed by 'regressions'
  GPUIMG_CODEC       a --codec value for every run (default: none, that is auto). When set,
                     only the tests of JPEG input run (PNG is decoded by stb whatever it
                     says); 'stb' in a build without libjpeg exits 77 (the default run
                     already used stb).

JPEG input goes to the decoder that --codec picks: libjpeg under auto when the build has it
(gpuimg -V), else stb. Reasons that differ between the two are checked per decoder; the
files themselves are always written by stb's encoder, so every build tests the same bytes.

Every refusal must be: no signal, the documented exit status (3 for a bad input), stderr
exactly one line `gpuimg: <file>: <reason>` with a non-empty reason (the exact reason where
gpuimg documents it), nothing on stdout, no output and no temporary file created, and an
existing output file left as it was. Every run has a time limit and, except in an ASan
build, a 1.5 GiB address-space limit (RLIMIT_AS), so an attempt to allocate 2 GiB fails the
test (as "out of memory", exit 1) instead of passing unnoticed; in an ASan build, where the
shadow memory needs terabytes of address space, ASan's max_allocation_size_mb does the same.
The 'legit' group checks the other side: valid images whose decode needs buffers beyond
the small-image floor of the decoder's allocation limit still decode.
Standard library only.
"""

import os
import re
import resource
import shutil
import struct
import subprocess
import sys
import zlib

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "fuzz"))
import gpuimg_testlib as testlib  # noqa: E402
from gpuimg_testlib import (  # noqa: E402
    COLOUR_TYPE_OF_CHANNELS, EXIT_INPUT, EXIT_OK, GPUIMG, GRAY, PALETTE, PNG_SIGNATURE,
    RGB, RGBA, Failure, Rng, bytes_rows, check, describe, leftovers, pack_row, path,
    png_chunk, png_chunks, png_decode, png_encode, png_encode_8bit, png_header_only, png_raw,
    png_with_idat, read, reduce16, test, write)
import make_images as mi  # noqa: E402
import tiff_files as tf  # noqa: E402
import make_seeds  # noqa: E402  (progressive and restart JPEGs)

MEMORY_LIMIT = 1536 << 20  # bytes of address space for a plain build
TIME_LIMIT = 60            # seconds per run, a hang fails
EXISTING = b"existing output, must survive\n"
DEFAULT_MAX_PIXELS = 1 << 28


def is_asan_build():
    with open(GPUIMG, "rb") as f:
        return b"__asan_init" in f.read()


ASAN = False
CODEC = os.environ.get("GPUIMG_CODEC") or None
JPEG_DECODER = "stb"  # the decoder of JPEG input under CODEC: set by prepare()


def limit_memory():
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def run(args, stdin=None, timeout=TIME_LIMIT, codec=None):
    """Runs gpuimg (CPU backend, --codec CODEC or codec) in the scratch directory; returns
    (rc, stdout, stderr, seconds)."""
    env = dict(os.environ)
    if ASAN:
        env["ASAN_OPTIONS"] = ":".join(
            o for o in (env.get("ASAN_OPTIONS", ""), "allocator_may_return_null=0",
                        "max_allocation_size_mb=%d" % (MEMORY_LIMIT >> 20)) if o)
    codec = codec or CODEC
    argv = ["--backend", "cpu"] + (["--codec", codec] if codec else []) + list(args)
    res = testlib.run(*argv, stdin=stdin if stdin is not None else subprocess.DEVNULL,
                      timeout=timeout, env=env, preexec_fn=None if ASAN else limit_memory)
    return res.rc, res.out, res.err, res.seconds


def refused(name, reason=None, ops=("gray",), extra=(), stdin=None, shown=None,
            max_seconds=None):
    """gpuimg OPS... NAME keep.png must fail with exit 3 and `gpuimg: SHOWN: REASON`.

    reason: the exact reason, a compiled regex it must match, or None (any reason of six
    characters or more). keep.png holds EXISTING before and after; fresh.png must not be
    created. Returns the reason."""
    write("keep.png", EXISTING)
    shown = shown if shown is not None else name
    results = []
    for out in ("keep.png", "fresh.png"):
        if stdin is not None:
            stdin.seek(0)
        args = list(extra) + list(ops) + [name, out]
        rc, so, se, secs = run(args, stdin=stdin)
        what = describe(args, rc, so, se)
        check(rc >= 0, "killed by signal %d\n%s" % (-rc, what))
        check(rc == EXIT_INPUT, "expected exit 3\n" + what)
        check(so == b"", "expected an empty stdout\n" + what)
        prefix = b"gpuimg: " + os.fsencode(shown) + b": "
        check(se.startswith(prefix) and se.endswith(b"\n") and se.count(b"\n") == 1,
              "expected one line starting %r\n%s" % (prefix, what))
        got = se[len(prefix):-1].decode("utf-8", "replace")
        if reason is None:
            check(len(got) >= 6, "reason %r says nothing\n%s" % (got, what))
        elif isinstance(reason, str):
            check(got == reason, "expected reason %r\n%s" % (reason, what))
        else:
            check(reason.fullmatch(got), "reason %r does not match %r\n%s" % (
                got, reason.pattern, what))
        if max_seconds is not None:
            check(secs <= max_seconds, "took %.1f s (at most %d)\n%s" % (secs, max_seconds, what))
        check(read("keep.png") == EXISTING, "the existing output was changed\n" + what)
        check(not os.path.exists(path("fresh.png")), "an output file was created\n" + what)
        check(not leftovers(), "temporary files left: %r\n%s" % (leftovers(), what))
        results.append(got)
    check(results[0] == results[1], "different reasons: %r" % results)
    return results[0]


def decoded(name, ops=("blur", "-r", "0"), extra=()):
    """gpuimg OPS NAME out.png must succeed; returns the output's (w, h, channels, pixels)."""
    if os.path.exists(path("out.png")):
        os.unlink(path("out.png"))
    args = list(extra) + list(ops) + [name, "out.png"]
    rc, so, se, _ = run(args)
    what = describe(args, rc, so, se)
    check(rc == EXIT_OK and se == b"" and so == b"", "expected success\n" + what)
    check(not leftovers(), "temporary files left: %r\n%s" % (leftovers(), what))
    return png_decode(read("out.png"))


def refused_or_decoded(name, ops=("gray",)):
    """A damaged file may still decode (stb ignores CRCs, many header bits and trailing
    bytes); otherwise it must be refused cleanly. Returns 'ok' or the reason."""
    write("keep.png", EXISTING)
    args = list(ops) + [name, "keep.png"]
    rc, so, se, _ = run(args)
    what = describe(args, rc, so, se)
    check(rc >= 0, "killed by signal %d\n%s" % (-rc, what))
    check(rc in (EXIT_OK, EXIT_INPUT), "expected exit 0 or 3\n" + what)
    check(so == b"", "expected an empty stdout\n" + what)
    check(not leftovers(), "temporary files left: %r\n%s" % (leftovers(), what))
    if rc == EXIT_OK:
        check(se == b"", "expected an empty stderr\n" + what)
        check(read("keep.png")[:8] == PNG_SIGNATURE, "no PNG written\n" + what)
        return "ok"
    prefix = b"gpuimg: " + os.fsencode(name) + b": "
    check(se.startswith(prefix) and se.endswith(b"\n") and se.count(b"\n") == 1,
          "expected one line starting %r\n%s" % (prefix, what))
    check(len(se) - len(prefix) - 1 >= 6, "reason says nothing\n" + what)
    check(read("keep.png") == EXISTING, "the existing output was changed\n" + what)
    return se[len(prefix):-1].decode("utf-8", "replace")


# ---------------------------------------------------------------------------------------------
# Files: JPEG structure (PNG: gpuimg_testlib)

def jpeg_segments(data):
    """[(marker, offset, length)] of a JPEG's segments before its first scan, and the SOS."""
    out, pos = [], 2
    while pos + 4 <= len(data):
        check(data[pos] == 0xFF, "JPEG structure unexpected at %d" % pos)
        m, n = data[pos + 1], struct.unpack(">H", data[pos + 2:pos + 4])[0]
        out.append((m, pos, n))
        if m == 0xDA:
            break
        pos += 2 + n
    return out


def segment(data, marker):
    return next(s for s in jpeg_segments(data) if s[0] == marker)


def jpeg_with_size(data, w, h):
    _, pos, _ = segment(data, 0xC0)
    return data[:pos + 5] + struct.pack(">HH", h, w) + data[pos + 9:]


JPEG_CACHE = {}


def make_jpeg(w=40, h=24, quality=90, channels=3, name=None):
    """A baseline JPEG written by gpuimg itself (stb's encoder) from a smooth image."""
    key = (w, h, quality, channels)
    if key not in JPEG_CACHE:
        px = bytes(v for y in range(h) for x in range(w)
                   for v in (x * 6 & 255, y * 10 & 255, (128 + x - y) & 255, 200)[:channels])
        write("src.png", png_encode_8bit(w, h, channels, px) if w * h <= 4096 else
              png_raw(w, h, COLOUR_TYPE_OF_CHANNELS[channels], 8,
                      lambda x0, y0, dx, dy: [px[y * w * channels:(y + 1) * w * channels]
                                              for y in range(h)]))
        jpg = name or "made-%dx%d-q%d-c%d.jpg" % key
        rc, so, se, _ = run(["--quality", str(quality), "blur", "-r", "0", "src.png", jpg],
                            codec="stb")
        check(rc == 0, "gpuimg could not write a JPEG: %r" % se)
        JPEG_CACHE[key] = read(jpg)
    return JPEG_CACHE[key]


def small_png():
    return mi.corpus()["rgb8.png"][0]


# ---------------------------------------------------------------------------------------------
# Groups

# @test(group, jpeg=True) marks the tests of JPEG input: the ones GPUIMG_CODEC changes.

def by_decoder(stb, libjpeg):
    """The expected reason for JPEG input under the decoder in use."""
    return libjpeg if JPEG_DECODER == "libjpeg" else stb


def cut_everywhere(data, label, step, magic, kind):
    """Every step-th prefix of data is refused: empty, too short for the format's magic
    number, or a decode error of that kind."""
    for n in range(0, len(data), step):
        name = write("cut-%d-%s" % (n, label), data[:n])
        if n == 0:
            refused(name, "empty file")
        elif n < magic:
            refused(name, testlib.unsupported_format())
        else:
            refused(name, re.compile(r"cannot decode %s: .{6,}" % kind))
        os.unlink(path(name))


@test("truncate")
def png_truncated_everywhere():
    """Every length of a PNG (interlaced with a palette and tRNS: every chunk kind stb reads)."""
    c = mi.corpus()
    for base in ("pal-trns.png", "rgb8-split.png"):
        cut_everywhere(c[base][0], base, 1, 8, "PNG")


@test("truncate", jpeg=True)
def jpeg_truncated_everywhere():
    """Every length of a baseline JPEG written by gpuimg (and of a 4:4:4 one in steps)."""
    for quality, step in ((90, 1), (95, 5)):
        cut_everywhere(make_jpeg(quality=quality), "q%d.jpg" % quality, step, 3, "JPEG")


@test("truncate", jpeg=True)
def progressive_jpeg_truncated():
    """A progressive 4:2:0 JPEG (eight scans, EOB runs, refinements) cut every 3 bytes."""
    data = make_seeds.jpeg_encode(45, 29, ((2, 2), (1, 1), (1, 1)), progressive=True)
    for n in range(3, len(data), 3):
        name = write("cut-%d-prog.jpg" % n, data[:n])
        refused(name, re.compile(r"cannot decode JPEG: .{6,}"))
        os.unlink(path(name))


@test("corrupt")
def png_flipped_header_and_chunk_bytes():
    """Each byte of the signature, IHDR, PLTE, tRNS and the IDAT header, inverted; then
    random flips anywhere (fixed seed)."""
    data = mi.corpus()["pal-trns.png"][0]
    idat = next(off for off, _, kind in png_chunks(data) if kind == b"IDAT")
    positions = list(range(0, idat + 12))
    rng = Rng(6)
    variants = [("flip-%d.png" % i, data[:i] + bytes([data[i] ^ 0xFF]) + data[i + 1:])
                for i in positions]
    for k in range(150):
        d = bytearray(data)
        for _ in range(1 + rng.next() % 4):
            d[rng.next() % len(d)] ^= 1 << (rng.next() % 8)
        variants.append(("rand-%d.png" % k, bytes(d)))
    for name, d in variants:
        write(name, d)
        refused_or_decoded(name)
        os.unlink(path(name))


def jpeg_flipped(data, ops):
    """Each byte of data before the scan data (segments SOI..SOS) inverted, then random flips
    (fixed seed): gpuimg OPS on each is refused cleanly or succeeds."""
    _, sos, n = segment(data, 0xDA)
    rng = Rng(7)
    variants = [("flip-%d.jpg" % i, data[:i] + bytes([data[i] ^ 0xFF]) + data[i + 1:])
                for i in range(0, sos + 2 + n)]
    for k in range(150):
        d = bytearray(data)
        for _ in range(1 + rng.next() % 4):
            d[rng.next() % len(d)] ^= 1 << (rng.next() % 8)
        variants.append(("rand-%d.jpg" % k, bytes(d)))
    for name, d in variants:
        write(name, d)
        refused_or_decoded(name, ops)
        os.unlink(path(name))


@test("corrupt", jpeg=True)
def jpeg_flipped_header_and_segment_bytes():
    """A baseline JPEG's header and segment bytes damaged, decoded at full size."""
    jpeg_flipped(make_jpeg(), ("gray",))


@test("corrupt", jpeg=True)
def jpeg_flipped_shrunk_on_load():
    """The same damage under resize --scale 0.25: a 4x shrink, decoded at 1/2 (libjpeg's
    reduced decode) where libjpeg decodes."""
    jpeg_flipped(make_jpeg(64, 48), ("resize", "--scale", "0.25"))


def meta_blocks(jpeg):
    """An EXIF block (IFD0: Orientation 6, a Make stored past the entries, the Exif IFD with
    the pixel dimensions) and a 300-byte ICC profile, as JPEG segments (APP1, two APP2) or PNG
    chunks (eXIf, iCCP)."""
    exif = (b"II*\0\x08\0\0\0\x03\0" + struct.pack("<HHII", 0x010F, 2, 6, 50) +
            struct.pack("<HHIHH", 0x0112, 3, 1, 6, 0) + struct.pack("<HHII", 0x8769, 4, 1, 56) +
            b"\0\0\0\0" + b"gpuimg" + b"\x02\0" + struct.pack("<HHIHH", 0xA002, 3, 1, 640, 0) +
            struct.pack("<HHII", 0xA003, 4, 1, 480) + b"\0\0\0\0")
    icc = (struct.pack(">I", 300) + bytes(12) + b"RGB " + bytes(16) + b"acsp" +
           bytes(range(256))[:260])
    if not jpeg:
        return (png_chunk(b"eXIf", exif) +
                png_chunk(b"iCCP", b"gpuimg\0\0" + zlib.compress(icc)))
    app = [b"Exif\0\0" + exif, b"ICC_PROFILE\0\x01\x02" + icc[:150],
           b"ICC_PROFILE\0\x02\x02" + icc[150:]]
    return b"".join(bytes([0xFF, 0xE1 + (k > 0)]) + struct.pack(">H", len(a) + 2) + a
                    for k, a in enumerate(app))


def meta_decoded_or_refused(name, out):
    """A file with damaged metadata: exit 0 with nothing or one warning on stderr, or a clean
    refusal (a length that breaks the file itself); never a crash."""
    rc, so, se, _ = run(["blur", "-r", "0", name, out])
    what = describe(["blur", "-r", "0", name, out], rc, so, se)
    check(rc in (EXIT_OK, EXIT_INPUT) and so == b"", "expected exit 0 or 3\n" + what)
    prefix = b"gpuimg: " + os.fsencode(name) + b": " + (b"warning: " if rc == EXIT_OK else b"")
    check((rc == EXIT_OK and se == b"") or
          (se.startswith(prefix) and se.endswith(b"\n") and se.count(b"\n") == 1),
          "expected nothing or one line starting %r\n%s" % (prefix, what))
    check(not leftovers(), "temporary files left: %r\n%s" % (leftovers(), what))


@test("corrupt", jpeg=True)
def metadata_blocks_damaged():
    """Every byte of the EXIF and ICC blocks of a JPEG and a PNG set to 0x00 or 0xff (by
    turns), written as PNG or JPEG (by turns): the block is ignored with a warning, or the
    file refused, never a crash."""
    for jpeg in (True,) if CODEC else (True, False):
        base = make_jpeg() if jpeg else small_png()
        at, blocks = (2 if jpeg else 33), meta_blocks(jpeg)
        data = base[:at] + blocks + base[at:]
        for i in range(at, at + len(blocks)):
            name = write("meta-%d.%s" % (i, "jpg" if jpeg else "png"),
                         data[:i] + bytes([0xFF * (i & 1)]) + data[i + 1:])
            meta_decoded_or_refused(name, "out.jpg" if i & 2 else "out.png")
            os.unlink(path(name))


@test("corrupt")
def lying_chunk_lengths():
    data = small_png()
    (ioff, ilen, _), = [c for c in png_chunks(data) if c[2] == b"IDAT"]
    past = "cannot decode PNG: corrupt or truncated image data (the IDAT chunk runs past the " \
           "end of the file)"
    for claim in (ilen + 13, ilen + 1000, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF):
        name = write("idat-%x.png" % claim,
                     data[:ioff] + struct.pack(">I", claim) + data[ioff + 4:])
        refused(name, past)
    # The same lie in an ancillary chunk, and in a chunk whose type is not letters.
    for kind, shown in ((b"tEXt", "the tEXt"), (b"\0\xff\x01\x02", "a")):
        name = write("lie-%s.png" % shown[-4:].strip(),
                     data[:ioff] + struct.pack(">I", 1 << 30) + kind + b"x" * 20 + data[ioff:])
        refused(name, "cannot decode PNG: corrupt or truncated image data (%s chunk runs past "
                      "the end of the file)" % shown)


@test("corrupt", jpeg=True)
def jpeg_bad_huffman_table():
    """A DHT whose 16 code counts add up to more than 256 (stb 2.27 writes past its table)."""
    data = make_jpeg()
    _, dht, _ = segment(data, 0xC4)
    counts = [0] * 14 + [45, 255]
    table = bytes([0x00]) + bytes(counts) + bytes(range(256)) + bytes(44)
    bad = b"\xff\xc4" + struct.pack(">H", 2 + len(table)) + table
    want = by_decoder("cannot decode JPEG: corrupt image data (a Huffman table with more codes "
                      "than it holds)", "cannot decode JPEG: bogus Huffman table definition")
    name = write("dht-300.jpg", data[:dht] + bad + data[dht:])
    refused(name, want)
    # Counts that claim more symbols than the segment holds.
    short = b"\xff\xc4\x00\x15\x00" + bytes([0] * 15 + [200]) + b"\x01\x02"
    name = write("dht-short.jpg", data[:dht] + short + data[dht:])
    refused(name, want)


@test("corrupt", jpeg=True)
def jpeg_without_scan():
    """Header segments then EOI: stb would return its uninitialised sample buffers."""
    data = make_jpeg()
    _, sos, _ = segment(data, 0xDA)
    name = write("noscan.jpg", data[:sos] + b"\xff\xd9")
    refused(name, by_decoder("cannot decode JPEG: no image data (the image ends before its "
                             "first scan)",
                             "cannot decode JPEG: invalid JPEG file structure: missing SOS "
                             "marker"))


@test("limits")
def huge_declared_png():
    name = write("huge.png", png_header_only(100000, 100000))
    refused(name, "image is 100000x100000, over the limit of %d pixels (see --max-pixels)"
            % DEFAULT_MAX_PIXELS)
    # With the limit raised the header is still checked against the data: a few bytes of
    # IDAT cannot hold 10^10 pixels, so nothing is allocated for them.
    refused(name, "cannot decode PNG: too little image data for 100000x100000 pixels "
                  "(corrupt or truncated)", extra=("--max-pixels", str(10 ** 10)))
    # Sides past 2^20 (stb's STBI_MAX_DIMENSIONS), and zero.
    name = write("wide.png", png_header_only((1 << 20) + 1, 1, GRAY))
    refused(name, "cannot decode PNG: image is 1048577x1, over the largest side of 1048576 "
                  "pixels")
    name = write("zero.png", png_header_only(0, 7))
    refused(name, "cannot decode PNG: zero width or height")
    # Apple's CgBI chunk before IHDR does not hide the size.
    cgbi = PNG_SIGNATURE + png_chunk(b"CgBI", b"\x50\x00\x20\x06") + \
        png_header_only(100000, 100000)[8:]
    name = write("cgbi.png", cgbi)
    refused(name, "image is 100000x100000, over the limit of %d pixels (see --max-pixels)"
            % DEFAULT_MAX_PIXELS)


@test("limits", jpeg=True)
def huge_declared_jpeg():
    data = make_jpeg()
    name = write("huge.jpg", jpeg_with_size(data, 65535, 65535))
    refused(name, "image is 65535x65535, over the limit of %d pixels (see --max-pixels)"
            % DEFAULT_MAX_PIXELS)
    # Within a raised limit: stb finds too little data, libjpeg a side past its 65500.
    refused(name, by_decoder("cannot decode JPEG: too little image data for 65535x65535 pixels "
                             "(corrupt or truncated)",
                             "cannot decode JPEG: image is 65535x65535, over the largest side "
                             "of 65500 pixels"), extra=("--max-pixels", str(1 << 40)))
    # Within the limit but far beyond what a few hundred bytes can code (each 8x8 block
    # takes at least one bit): refused before stb allocates its planes.
    name = write("big.jpg", jpeg_with_size(data, 16384, 16384))
    refused(name, "cannot decode JPEG: too little image data for 16384x16384 pixels "
                  "(corrupt or truncated)")
    name = write("zero.jpg", jpeg_with_size(data, 0, 24))
    refused(name, "cannot decode JPEG: zero width or height")


def scan_segments(data):
    """[(offset, end)] of every SOS segment with its entropy-coded data."""
    out, pos = [], 0
    while True:
        pos = data.find(b"\xff\xda", pos)
        if pos < 0:
            return out
        end = pos + 2 + struct.unpack(">H", data[pos + 2:pos + 4])[0]
        while not (data[end] == 0xFF and data[end + 1] not in (0, 0xFF) and
                   not 0xD0 <= data[end + 1] <= 0xD7):
            end += 1
        out.append((pos, end))
        pos = end


@test("limits", jpeg=True)
def jpeg_many_scans():
    """A progressive JPEG whose AC scan (first pass, Ah = 0: a valid repeat) comes 600 times:
    each scan costs its set-up whatever its blocks, so both decoders stop at 500 scans."""
    data = make_seeds.jpeg_encode(64, 48, progressive=True)
    scans = scan_segments(data)
    (a, b), = [(a, b) for a, b in scans if data[a + 7:a + 10] == b"\x01\x05\x00"]
    name = write("scans-600.jpg", data[:b] + data[a:b] * 599 + data[b:])
    refused(name, "cannot decode JPEG: more than 500 scans (corrupt or hostile file)")
    name = write("scans-500.jpg", data[:b] + data[a:b] * (500 - len(scans)) + data[b:])
    check(decoded(name)[:3] == (64, 48, 1), "500 scans")


@test("limits", jpeg=True)
def jpeg_coefficient_memory():
    """A progressive image keeps every block's coefficients (128 bytes per block): libjpeg's
    memory is capped at 4 bytes per pixel of --max-pixels plus 64 MiB for its own state, and
    coefficients past 4 bytes per pixel are refused before they are allocated."""
    name = write("prog-444.jpg", make_seeds.jpeg_encode(45, 29, ((1, 1),) * 3, progressive=True))
    if JPEG_DECODER == "libjpeg":
        refused(name, "cannot decode JPEG: a 45x29 multi-scan image needs 9216 bytes of "
                      "coefficients, over the limit of 5220 (4 bytes per pixel of --max-pixels)",
                extra=("--max-pixels", str(45 * 29)))
        check(decoded(name, extra=("--max-pixels", str(45 * 29 * 2)))[:3] == (45, 29, 3),
              "progressive 4:4:4 within the limit")
    else:  # stb's own state alone is over 4 bytes per pixel of such a small limit
        check(decoded(name)[:3] == (45, 29, 3), "progressive 4:4:4")


@test("limits")
def sixteen_bit_limits():
    # The 23171x23171 16-bit gray PNG that overflows stb's 16-to-8-bit conversion: refused by
    # the pixel limit from its header alone...
    name = write("g16-huge.png", png_header_only(23171, 23171, GRAY, 16))
    refused(name, "image is 23171x23171, over the limit of %d pixels (see --max-pixels)"
            % DEFAULT_MAX_PIXELS)
    # ...and, with the limit raised and enough data to pass the size check, with a tRNS
    # chunk (which adds alpha), by the 16-bit rule: its 2^31 bytes of 16-bit samples pass
    # stb's int arithmetic.
    junk = Rng(16).bytes(1 << 12) * 300  # 1.2 MB: 1032 x that covers 23171^2 x 2 bytes
    g16 = png_with_idat(23171, 23171, GRAY, 16, junk)
    name = write("g16-trns.png", g16[:33] + png_chunk(b"tRNS", b"\0\0") + g16[33:])
    refused(name, "cannot decode PNG: 16-bit image of 23171x23171 pixels too large to convert "
                  "to 8 bits", extra=("--max-pixels", str(1 << 30)))
    # Without tRNS it is decoded (1 GiB of 16-bit samples): here the junk data is refused.
    name = write("g16-junk.png", g16)
    refused(name, re.compile(r"cannot decode PNG: .{6,}"), extra=("--max-pixels", str(1 << 30)))
    # Within the default limit: 16384^2 RGBA at 16 bits is 2 GiB of samples.
    junk = Rng(17).bytes(1 << 12) * 520  # 2.1 MB
    name = write("rgba16-2g.png", png_with_idat(16384, 16384, RGBA, 16, junk))
    refused(name, "cannot decode PNG: 16-bit image of 16384x16384 pixels too large to convert "
                  "to 8 bits")


@test("limits")
def buffers_within_four_bytes_per_pixel():
    """No single decode buffer may pass 4 bytes per pixel of --max-pixels: an interlaced
    RGBA image at the pixel limit needs twice that (stb inflates into a buffer sized for the
    non-interlaced data, then doubles it), a 16-bit RGB one 6 bytes per pixel."""
    junk = Rng(18).bytes(1 << 12) * 300  # 1.2 MB
    name = write("rgba-interlaced.png", png_with_idat(16384, 16384, RGBA, 8, junk,
                                                      interlace=1))
    refused(name, "cannot decode PNG: a 16384x16384 image needs a buffer of up to 2147581952 "
                  "bytes, over the limit of 1074855936 (4 bytes per pixel of --max-pixels)")
    name = write("rgb16.png", png_with_idat(3000, 2000, RGB, 16, junk[:100000]))
    refused(name, "cannot decode PNG: a 3000x2000 image needs a buffer of up to 36067536 "
                  "bytes, over the limit of 25114112 (4 bytes per pixel of --max-pixels)",
            extra=("--max-pixels", str(6000000)))
    # The same files within a raised limit get as far as their (junk) data.
    refused(name, re.compile(r"cannot decode PNG: .{6,}"), extra=("--max-pixels", str(9000000)))


@test("limits")
def decompression_bombs():
    """Small files whose data inflates far past what their header needs: stb would grow its
    buffer to 2 GiB; the decoder's allocation limit stops it at the image's own size."""
    bomb = zlib.compress(bytes(64 << 20), 9)  # 64 MiB of zeros in about 64 KiB
    name = write("bomb-1x1.png", png_with_idat(1, 1, RGB, 8, bomb))
    refused(name, "cannot decode PNG: corrupt image data (more data than a 1x1 image holds)",
            max_seconds=20)
    name = write("bomb-interlaced.png", png_with_idat(300, 200, RGBA, 8, bomb, interlace=1))
    refused(name, "cannot decode PNG: corrupt image data (more data than a 300x200 image "
                  "holds)", max_seconds=20)


# Out of memory: valid images under an address-space limit just above what a run on a small
# image needs (found by trying), far below what decoding them needs. Not in an ASan build,
# whose shadow memory needs terabytes of address space (the limit would fail every run).
OOM_MARGIN = 24 << 20  # above a small image's run: room to read a file, not to decode it
OOM_REASON = r"out of memory( allocating \d+ bytes)?"


def oom_run(args, limit):
    argv = ["--backend", "cpu"] + (["--codec", CODEC] if CODEC else []) + list(args)
    r = testlib.run(*argv, stdin=subprocess.DEVNULL, preexec_fn=lambda: resource.setrlimit(
        resource.RLIMIT_AS, (limit, limit)))
    return r.rc, r.err.decode("utf-8", "replace"), describe(args, r.rc, r.out, r.err)


def oom_base(args):
    """The smallest address-space limit, in steps of 4 MiB, under which ARGS succeeds."""
    for limit in range(4 << 20, MEMORY_LIMIT, 4 << 20):
        if oom_run(args, limit)[0] == 0:
            return limit
    raise Failure("gpuimg %s fails under every limit" % " ".join(args))


def smooth_gray_png(side):
    """A side x side gray PNG of horizontal bands: a small file, side^2 bytes of pixels."""
    return png_raw(side, side, GRAY, 8, lambda x0, y0, dx, dy: [
        bytes([y * 255 // (side - 1)]) * side for y in range(side)])


def out_of_memory(name):
    """NAME is refused with `gpuimg: NAME: out of memory`, exit 1, alone and in a batch
    after small.png, whose output the batch still writes."""
    write("small.png", small_png())
    write("small2.png", small_png())
    limit = oom_base(["gray", "small.png", "small-out.png"]) + OOM_MARGIN
    rc, err, what = oom_run(["gray", name, "oom-out.png"], limit)
    line = r"gpuimg: %s: %s\n" % (re.escape(name), OOM_REASON)
    check(rc == 1 and re.fullmatch(line, err), "expected out of memory\n" + what)
    check(not os.path.exists(path("oom-out.png")) and not leftovers(), "output left\n" + what)
    batch = ["--force", "-j", "1", "-o", "oomdir", "gray", "small.png"]
    limit = oom_base(batch + ["small2.png"]) + OOM_MARGIN
    shutil.rmtree(path("oomdir"))
    rc, err, what = oom_run(batch + [name], limit)
    check(rc == 1 and re.match(line, err), "expected out of memory, exit 1\n" + what)
    check(png_decode(read("oomdir/small.png"))[:2] == (13, 7), "small.png not converted")


@test("limits")
def png_out_of_memory():
    """stb's inflate buffer (8000x8000: 64 MB), whose failure stb reports as corrupt data,
    and the image of a step (6000x6000: 36 MB) in a one-image run, which named no file."""
    if not ASAN:
        write("oom.png", smooth_gray_png(8000))
        out_of_memory("oom.png")
        write("mid.png", smooth_gray_png(6000))
        limit = oom_base(["gray", "small.png", "small-out.png"]) + (110 << 20)
        rc, err, what = oom_run(["gray", "then"] * 3 + ["gray", "mid.png", "o.png"], limit)
        check(rc == 1 and err == "gpuimg: mid.png: out of memory allocating 36000000 bytes\n",
              "expected out of memory naming mid.png\n" + what)


@test("limits", jpeg=True)
def jpeg_out_of_memory():
    """An 8000x8000 JPEG (192 MB of pixels): libjpeg's pixels or stb's buffers."""
    if not ASAN:
        write("oom.png", smooth_gray_png(8000))
        rc, _, se, _ = run(["blur", "-r", "0", "oom.png", "oom.jpg"], codec="stb")
        check(rc == 0, "gpuimg could not write a JPEG: %r" % se)
        out_of_memory("oom.jpg")


@test("formats", jpeg=True)
def other_formats_named_png():
    c = mi.corpus()
    write("rgb8.png", c["rgb8.png"][0])
    for fmt in ("tga", "bmp"):
        rc, so, se, _ = run(["blur", "-r", "0", "rgb8.png", "real." + fmt])
        check(rc == 0, "gpuimg could not write a %s: %r" % (fmt, se))
        os.rename(path("real." + fmt), path(fmt + "-renamed.png"))
        refused(fmt + "-renamed.png", testlib.unsupported_format())
    refused(write("gif-renamed.png", c["gif.png"][0]), testlib.unsupported_format())
    refused(write("text.jpg", b"GIF89a not really\n"), testlib.unsupported_format())
    # A JPEG named .png and a PNG named .jpg decode: the signature decides, not the name.
    write("jpeg-named.png", make_jpeg())
    check(decoded("jpeg-named.png")[:3] == (40, 24, 3), "JPEG named .png")
    write("png-named.jpg", c["rgb8.png"][0])
    check(decoded("png-named.jpg") == c["rgb8.png"][1], "PNG named .jpg")


@test("formats")
def sixteen_bit_pngs_become_8_bits():
    c = mi.corpus()
    for name in ("rgb16.png", "ga16.png"):
        write(name, c[name][0])
        got = decoded(name, extra=("-q",))
        check(got == c[name][1], "%s: decoded %r, expected round(v / 257)" % (name, got[:3]))
    # 16-bit RGBA, interlaced, with every sample's low byte different from its high byte.
    w, h = 9, 5
    samples = [(i * 7919 + 13) & 0xFFFF for i in range(w * h * 4)]
    name = write("rgba16-i.png", png_encode(w, h, RGBA, samples, bit_depth=16,
                                               interlace=True))
    got = decoded(name, extra=("-q",))
    check(got == (w, h, 4, bytes(reduce16(s) for s in samples)), "16-bit interlaced RGBA")


@test("special")
def empty_and_directory():
    refused(write("empty.png", b""), "empty file")
    os.mkdir(path("adir.png"))
    refused("adir.png", "is a directory")


@test("special")
def endless_devices():
    """/dev/zero has no end: it must be refused from its first bytes, at once, in little
    memory; the same through stdin."""
    refused("/dev/zero", testlib.unsupported_format(), max_seconds=5)
    with open("/dev/zero", "rb") as z:
        refused("-", testlib.unsupported_format(), stdin=z, shown="<stdin>", max_seconds=5)


@test("special")
def size_cap():
    """A file over the 1 GiB cap is refused from its size (a sparse file: nothing is read);
    a stream that starts like a PNG is read only up to the cap."""
    name = write("sparse.png", PNG_SIGNATURE)
    os.truncate(path(name), (1 << 30) + 1)
    refused(name, "file too large (over 1073741824 bytes)", max_seconds=5)
    os.unlink(path(name))
    # stdin from a pipe fed by a child process: signature, then zeros past the cap.
    feeder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys\nw = sys.stdout.buffer\nw.write(b'\\x89PNG\\r\\n\\x1a\\n')\n"
         "z = bytes(1 << 20)\n"
         "try:\n    for _ in range(1100):\n        w.write(z)\n"
         "except BrokenPipeError:\n    pass\n"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        write("keep.png", EXISTING)
        args = ["gray", "-", "keep.png"]
        rc, so, se, secs = run(args, stdin=feeder.stdout)
        what = describe(args, rc, so, se)
        check(rc == EXIT_INPUT and se == b"gpuimg: <stdin>: file too large (over 1073741824 "
              b"bytes)\n", "expected the size cap\n" + what)
        check(read("keep.png") == EXISTING and not leftovers(), "output damaged\n" + what)
    finally:
        feeder.stdout.close()
        feeder.kill()
        feeder.wait()


@test("special")
def fifos_written_in_place():
    """An output that is a FIFO is written through, not replaced by a renamed temporary file
    (devices_written_in_place: as root, that would turn /dev/null into a regular file)."""
    import stat
    import threading
    c = mi.corpus()
    write("rgb8.png", c["rgb8.png"][0])
    os.mkfifo(path("pipe.png"))
    got = []
    reader = threading.Thread(target=lambda: got.append(open(path("pipe.png"), "rb").read()),
                              daemon=True)
    reader.start()
    rc, so, se, _ = run(["blur", "-r", "0", "rgb8.png", "pipe.png"], timeout=20)
    reader.join(20)
    check(rc == 0 and se == b"", "writing to a FIFO: exit %d, %r" % (rc, se))
    check(stat.S_ISFIFO(os.stat(path("pipe.png")).st_mode), "the FIFO was replaced")
    check(got and png_decode(got[0]) == c["rgb8.png"][1], "the FIFO did not carry the image")
    check(not leftovers(), "temporary files left: %r" % leftovers())


@test("special")
def devices_written_in_place():
    """A report named by a device node is written through it; the node stays."""
    import stat
    if os.geteuid() != 0:
        raise testlib.Skip("mknod needs root")
    write("rgb8.png", mi.corpus()["rgb8.png"][0])
    os.mknod(path("null.json"), 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    rc, so, se, _ = run(["gray", "rgb8.png", "--report", "null.json"])
    check(rc == 0 and se == b"", "writing the report to a device: exit %d, %r" % (rc, se))
    check(stat.S_ISCHR(os.stat(path("null.json")).st_mode), "the device node was replaced")
    check(not leftovers(), "temporary files left: %r" % leftovers())


# Fuzzer reproducers: each must be refused with exit 3 and its recorded reason, or, when
# expect.txt has no line for it (a new finding), with any one-line reason.
@test("regressions", jpeg=True)
def fuzz_reproducers():
    src = os.environ.get("GPUIMG_REGRESSIONS", "")
    check(os.path.isdir(src), "set GPUIMG_REGRESSIONS to tests/fuzz/regressions")
    expect = {}
    with open(os.path.join(src, "expect.txt"), encoding="utf-8") as f:
        for line in f:
            if line.strip() and not line.startswith("#"):
                name, reason = line.rstrip("\n").split(" ", 1)
                expect[name] = reason
    names = sorted(n for n in os.listdir(src) if n != "expect.txt")
    missing = sorted(set(n.split("@")[0] for n in expect) - set(names))
    check(not missing, "expect.txt names missing files: %r" % missing)
    failures = []
    for n in names:
        shutil.copyfile(os.path.join(src, n), path(n))
        # FILE@libjpeg is the reason when libjpeg decodes the file (a JPEG under auto).
        is_jpeg = read(n)[:3] == b"\xff\xd8\xff"
        key = n + "@libjpeg" if is_jpeg and JPEG_DECODER == "libjpeg" else n
        try:
            refused(n, expect.get(key), ops=("gray", "then", "blur", "-r", "3", "then",
                                             "checkerboard"))
        except Failure as e:
            failures.append("%s: %s" % (n, e))
    check(not failures, "\n".join(failures))
    print("  (%d reproducers, %d recorded reasons)" % (len(names), len(expect)))


@test("legit")
def big_pngs_still_decode():
    """Valid PNGs whose decode needs more than the decoder's 1 MiB allocation floor: the
    limit computed from their headers must let every buffer stb needs through."""
    w, h = 420, 380
    rgba16 = lambda x, y: struct.pack(">HHHH", x * 150, y * 170, (x ^ y) * 64, (x * y) & 0xFFFF)
    cases = [
        ("rgba16-interlaced.png", png_raw(w, h, RGBA, 16, bytes_rows(w, h, 8, rgba16),
                                          interlace=True), (w, h, 4)),
        ("rgb16-trns.png", png_raw(w, h, RGB, 16,
                                   bytes_rows(w, h, 6, lambda x, y: rgba16(x, y)[:6]),
                                   trns=b"\0\0\0\0\0\0"), (w, h, 4)),
        ("gray-1500x1000.png", png_raw(1500, 1000, GRAY, 8,
                                       lambda x0, y0, dx, dy: [bytes((x * y) & 255 for x in
                                                                     range(1500))
                                                               for y in range(1000)]),
         (1500, 1000, 1)),
        ("gray-split.png", png_raw(1500, 800, GRAY, 8,
                                   lambda x0, y0, dx, dy: [bytes(((x + y) * 3) & 255 for x in
                                                                 range(1500))
                                                           for y in range(800)], split=997),
         (1500, 800, 1)),
        ("pal4-trns.png", png_raw(1200, 1000, PALETTE, 4,
                                  lambda x0, y0, dx, dy: [bytes(((x % 16) << 4) | (y % 16)
                                                                for x in range(600))
                                                          for y in range(1000)],
                                  palette=bytes(range(48)), trns=bytes(range(0, 256, 16))),
         (1200, 1000, 4)),
    ]
    for name, data, shape in cases:
        write(name, data)
        got = decoded(name, extra=("-q",) if "16" in name else ())
        check(got[:3] == shape, "%s decoded as %r, expected %r" % (name, got[:3], shape))
        os.unlink(path(name))
    # Exact pixels for one: the 1-bit interlaced image (Adam7 and bit unpacking).
    write("bits1-small.png", png_raw(61, 37, GRAY, 1, lambda x0, y0, dx, dy: [
        pack_row([(x * y) % 3 == 0 for x in range(x0, 61, dx)], 1)
        for y in range(y0, 37, dy)], interlace=True))
    want = bytes(255 if (x * y) % 3 == 0 else 0 for y in range(37) for x in range(61))
    check(decoded("bits1-small.png") == (61, 37, 1, want), "1-bit interlaced pixels")


@test("legit", jpeg=True)
def big_jpegs_still_decode():
    """Baseline JPEGs written by gpuimg, and progressive ones (whose decode also holds 16-bit
    coefficients for every block), beyond the allocation floor."""
    for w, h, q, c in ((1200, 900, 50, 3), (1200, 900, 95, 3), (1000, 700, 90, 1),
                       (1000, 700, 90, 4)):
        make_jpeg(w, h, q, c, name="big.jpg")
        got = decoded("big.jpg")
        check(got[:2] == (w, h), "JPEG %dx%d q%d decoded as %r" % (w, h, q, got[:3]))
    for w, h, sampling, channels in ((1100, 700, ((1, 1),), 1),
                                     (900, 600, ((2, 2), (1, 1), (1, 1)), 3)):
        write("prog.jpg", make_seeds.jpeg_encode(w, h, sampling, progressive=True))
        got = decoded("prog.jpg")
        check(got[:3] == (w, h, channels), "progressive %dx%d decoded as %r" % (w, h, got[:3]))


@test("legit", jpeg=True)
def seed_jpegs_decode():
    """The fuzzer's JPEG seeds (progressive, restart markers, 4 components, 4:1:1)."""
    for name, (w, h, sampling, prog, rst) in make_seeds.SEEDS.items():
        write(name, make_seeds.jpeg_encode(w, h, sampling, prog, rst))
        got = decoded(name)
        check(got[:3] == (w, h, 1 if len(sampling) == 1 else 3),
              "%s decoded as %r" % (name, got[:3]))


# Decoding work: the scans' passes over the image's blocks (man page: Untrusted input).
WORK_PER_BLOCK, WORK_PER_BYTE = 16, 4


def work_reason(scans, blocks, size):
    """The refusal of a gray JPEG of `scans` passes over `blocks` blocks in `size` bytes."""
    return ("cannot decode JPEG: its %d scans decode %d 8x8 blocks, over the limit of %d "
            "(16 per block of the image and 4 per byte of the file; corrupt or hostile file)"
            % (scans, scans * blocks, WORK_PER_BLOCK * blocks + WORK_PER_BYTE * size))


def refused_within_cpu(name, reason, seconds=2.0):
    """refused(), both of its runs together within `seconds` of CPU (user and system)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    refused(name, reason)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    used = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    check(used < seconds, "%s: refused after %.2f s of CPU (at most %.1f)" % (name, used, seconds))


@test("work", jpeg=True)
def jpeg_scans_over_the_work_limit():
    """A valid 16384x16384 gray progressive JPEG of 400 scans of end-of-band runs (710 KB):
    1.7 billion block decodes, tens of seconds of CPU in either decoder where its 2-scan twin
    takes a fraction of one. Refused from its markers before any decoding; so is its 883-scan
    sibling, by the count."""
    blocks = 2048 * 2048
    data = make_seeds.jpeg_many_passes(16384, 16384, 400)
    refused_within_cpu(write("passes-400.jpg", data), work_reason(400, blocks, len(data)))
    refused_within_cpu(write("passes-883.jpg", make_seeds.jpeg_many_passes(16384, 16384, 883)),
                       "cannot decode JPEG: more than 500 scans (corrupt or hostile file)")


@test("work", jpeg=True)
def jpeg_scans_at_the_work_limit():
    """The rule to the block: of 4096x4096 gray files of 1, 2, ... scans, the last within 16
    passes over its 262144 blocks plus 4 blocks per byte of the file decodes, the next is
    refused, whichever decoder."""
    blocks = 512 * 512
    n = 1
    while (n + 1) * blocks <= (WORK_PER_BLOCK * blocks +
                               WORK_PER_BYTE * len(make_seeds.jpeg_many_passes(4096, 4096, n + 1))):
        n += 1
    check(n == 16, "the boundary moved: %d scans" % n)
    write("at-limit.jpg", make_seeds.jpeg_many_passes(4096, 4096, n))
    args = ["-q", "gray", "at-limit.jpg"]  # decoded, nothing written
    rc, so, se, _ = run(args)
    check(rc == EXIT_OK and so == b"" and se == b"", "expected success\n" +
          describe(args, rc, so, se))
    over = make_seeds.jpeg_many_passes(4096, 4096, n + 1)
    refused(write("over-limit.jpg", over), work_reason(n + 1, blocks, len(over)))


@test("work", jpeg=True)
def progressive_jpegs_decode_as_their_baseline_twins():
    """Progressive JPEGs as encoders write them (DC, spectral bands, refinements: 5 scans
    for gray, 11 for colour, 5 block decodes per block) are well within the limit, and give
    the bytes of a baseline JPEG of the same coefficients."""
    for w, h, sampling in ((256, 192, ((1, 1),)), (200, 120, ((2, 2), (1, 1), (1, 1))),
                           (64, 48, ((1, 1),) * 3), (96, 40, ((2, 1), (1, 1), (1, 1)))):
        write("base.jpg", make_seeds.jpeg_encode(w, h, sampling))
        write("prog.jpg", make_seeds.jpeg_encode(w, h, sampling, progressive=True))
        base, prog = decoded("base.jpg"), decoded("prog.jpg")
        check(prog[:3] == (w, h, 1 if len(sampling) == 1 else 3) and prog == base,
              "progressive %dx%d %r: not the baseline's pixels" % (w, h, sampling))


# ---------------------------------------------------------------------------------------------
# TIFF (libtiff): files written here by cli_tiff.py's writer

def need_libtiff():
    if not testlib.built_with("libtiff"):
        raise testlib.Skip("this gpuimg was built without libtiff")


def tiff_samples():
    """TIFFs whose every part a cut or a flip can reach: the directory first (a cut loses
    pixels, not the directory), 8-bit RGB in strips of 3 rows, and 16-bit gray+alpha."""
    rgb = tf.tiff_file(20, 13, 8, 2, 3, bytes((i * 37) & 255 for i in range(20 * 13 * 3)),
                       rows=3, ifd_first=True)  # even strips: no padding byte at the end
    ga16 = tf.tiff_file(9, 7, 16, 1, 2, bytes((i * 91) & 255 for i in range(9 * 7 * 4)),
                        [(tf.EXTRA, tf.SHORT, 1, 2)], ifd_first=True)
    return [("rgb.tif", rgb), ("ga16.tif", ga16)]


@test("tiff")
def tiff_truncated_everywhere():
    need_libtiff()
    for label, data in tiff_samples():
        cut_everywhere(data, label, 1, 4, "TIFF")


@test("tiff")
def tiff_flipped_bytes():
    """Each byte of the header and directory inverted, then random flips (fixed seed)."""
    need_libtiff()
    rng = Rng(8)
    for label, data in tiff_samples():
        variants = [("flip-%d-%s" % (i, label), data[:i] + bytes([data[i] ^ 0xFF]) + data[i + 1:])
                    for i in range(0, 200)]
        for k in range(100):
            d = bytearray(data)
            for _ in range(1 + rng.next() % 4):
                d[rng.next() % len(d)] ^= 1 << (rng.next() % 8)
            variants.append(("rand-%d-%s" % (k, label), bytes(d)))
        for name, d in variants:
            write(name, d)
            refused_or_decoded(name, ("-q", "gray"))
            os.unlink(path(name))


@test("tiff")
def tiff_declared_sizes():
    """A few bytes declaring 60000x60000, and a deflate bomb declaring 16000x16000 with almost
    no data: refused before any pixel memory, at once."""
    need_libtiff()
    small = tf.tiff_file(4, 4, 8, 1, 1, bytes(16))
    name = write("huge.tif", tf.with_entry(tf.with_entry(small, tf.WIDTH, 1, 60000), tf.LENGTH,
                                           1, 60000))
    refused(name, "image is 60000x60000, over the limit of %d pixels (see --max-pixels)"
            % DEFAULT_MAX_PIXELS, max_seconds=5)
    bomb = tf.with_entry(tf.with_entry(small, tf.WIDTH, 1, 16000), tf.LENGTH, 1, 16000)
    bomb = tf.with_entry(bomb, tf.COMPRESSION, 1, 8)
    name = write("bomb.tif", bomb)
    refused(name, re.compile(r"cannot decode TIFF: truncated or damaged image data \(.+\)"),
            max_seconds=10)


# ---------------------------------------------------------------------------------------------

def prepare():
    """Sets ASAN and JPEG_DECODER; exits 77 when GPUIMG_CODEC=stb repeats the default run."""
    global ASAN, JPEG_DECODER
    ASAN = is_asan_build()
    has_libjpeg = testlib.built_with("libjpeg")
    if CODEC == "stb" and not has_libjpeg:
        print("skipped: this gpuimg has no libjpeg, so the default run already used stb")
        return 77
    JPEG_DECODER = "libjpeg" if has_libjpeg and CODEC in (None, "auto", "libjpeg") else "stb"
    print("JPEG input decoded by %s%s" % (JPEG_DECODER,
                                          " (--codec %s)" % CODEC if CODEC else ""))
    return None


if __name__ == "__main__":
    # hostile-GROUP, or hostile-CODEC-GROUP: meson runs both at once.
    sys.exit(testlib.main(sys.argv, "hostile-" + (CODEC + "-" if CODEC else ""), prepare,
                          wanted=lambda fn: not CODEC or testlib.TAGS[fn].get("jpeg")))
