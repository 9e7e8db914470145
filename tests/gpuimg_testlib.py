# gpuimg_testlib.py: what the Python test scripts share: PNG files, running gpuimg, the groups.
"""One copy of the helpers of tests/test_cli.py (and its cli_*.py), tests/hostile.py,
tests/make_images.py, tests/compare/test_compare.py and tests/batch/test_batch.py. Not a test
itself.

  PNG files     PNG_SIGNATURE, colour types, Rng and make_pixels (deterministic pixels),
                png_encode (every filter type, Adam7, bit depths), png_raw (unfiltered, fast
                for large images), png_decode (the 8-bit non-interlaced PNGs gpuimg writes)
  running       default_signals (at import: no inherited SIG_IGN), GPUIMG, the exit codes
                and USAGE, run and cpu (a Result), the checks:
                check, expect, expect_error, expect_ok; Failure and Skip
  scratch       setup_workdir (one directory per group), path, write, read, leftovers
  groups        @test(GROUP) registers a test; main runs the groups named on the command line

Skips. A test that does not apply here (a build without libjpeg, no strace, running as
root...) raises Skip with the reason: main prints `SKIP group/test: reason` and counts it as
skipped, never as passed, and a run whose every test skipped exits 77, which meson reports as
SKIP. A test never passes after leaving part of itself out: a part that applies only somewhere
is a test of its own that raises Skip. Meson counts one result per run, so what applies only
to a whole kind of run gets a group of its own (test_cli.py's 'permissions', which root's
runs skip entirely), and meson shows that group as SKIP.

A script imports it by path, wherever it lives under tests/:
    sys.path.insert(0, <the directory of this file>)
    from gpuimg_testlib import ...
Standard library only.
"""

import functools
import html.parser
import itertools
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
import zlib

# ---------------------------------------------------------------------------------------------
# PNG files

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

# PNG colour types and their samples per pixel.
GRAY, RGB, PALETTE, GRAY_ALPHA, RGBA = 0, 2, 3, 4, 6
SAMPLES = {GRAY: 1, RGB: 3, PALETTE: 1, GRAY_ALPHA: 2, RGBA: 4}
# Colour type of an 8-bit image with 1..4 interleaved channels.
COLOUR_TYPE_OF_CHANNELS = {1: GRAY, 2: GRAY_ALPHA, 3: RGB, 4: RGBA}

# Adam7 passes: (x0, y0, dx, dy).
ADAM7 = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2),
         (0, 1, 1, 2)]


class Rng:
    """xorshift64*: tiny, fixed, identical on every Python version."""

    def __init__(self, seed):
        self.state = (seed * 0x9E3779B97F4A7C15 + 1) & 0xFFFFFFFFFFFFFFFF or 1

    def next(self):
        x = self.state
        x ^= (x >> 12)
        x ^= (x << 25) & 0xFFFFFFFFFFFFFFFF
        x ^= (x >> 27)
        self.state = x
        return ((x * 0x2545F4914F6CDD1D) & 0xFFFFFFFFFFFFFFFF) >> 32

    def byte(self):
        return self.next() & 0xFF

    def bytes(self, n):
        return bytes(self.next() & 0xFF for _ in range(n))


def reduce16(v):
    """A 16-bit sample as gpuimg reduces it to 8 bits: round(v / 257)."""
    return (v * 255 + 32895) >> 16


SIXTEEN_BIT_NOTICE = "16-bit samples reduced to 8 bits (round(v / 257))"


def make_pixels(width, height, channels, seed):
    """Random 8-bit pixels, row-major, interleaved; never all zeros."""
    data = bytearray(Rng(seed).bytes(width * height * channels))
    data[0] |= 1
    return bytes(data)


def png_chunk(kind, payload):
    """One chunk: length, type, payload and CRC."""
    body = kind + payload
    return struct.pack(">I", len(payload)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)


def png_chunks(data):
    """[(offset, length, type)] of a PNG's chunks."""
    out, pos = [], 8
    while pos + 8 <= len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        out.append((pos, n, kind))
        pos += 12 + n
    return out


def paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def _filter_rows(rows, bpp, first_filter):
    """Filters packed scanlines, filter type (first_filter + row index) mod 5."""
    out = bytearray()
    prev = bytes(len(rows[0])) if rows else b""
    for i, row in enumerate(rows):
        ftype = (first_filter + i) % 5
        out.append(ftype)
        for x, v in enumerate(row):
            a = row[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            pred = (0, a, b, (a + b) // 2, paeth(a, b, c))[ftype]
            out.append((v - pred) & 0xFF)
        prev = row
    return bytes(out)


def pack_row(samples, bit_depth):
    """Packs one row of integer samples at the given bit depth (MSB first)."""
    if bit_depth == 8:
        return bytes(samples)
    if bit_depth == 16:
        return b"".join(struct.pack(">H", s) for s in samples)
    out = bytearray()
    acc, nbits = 0, 0
    for s in samples:
        acc = (acc << bit_depth) | s
        nbits += bit_depth
        if nbits == 8:
            out.append(acc)
            acc, nbits = 0, 0
    if nbits:
        out.append(acc << (8 - nbits))
    return bytes(out)


def png_file(width, height, colour_type, bit_depth, z, interlace=False, palette=None, trns=None,
             idat_split=0):
    """A PNG file from its compressed image data z: IHDR, PLTE (palette: raw bytes), tRNS
    (trns: raw bytes), IDAT chunks of idat_split bytes each (0: one IDAT) and IEND."""
    out = [PNG_SIGNATURE,
           png_chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, bit_depth, colour_type, 0,
                                          0, int(interlace)))]
    if palette is not None:
        out.append(png_chunk(b"PLTE", palette))
    if trns is not None:
        out.append(png_chunk(b"tRNS", trns))
    starts = range(0, len(z), idat_split) if idat_split else [0]
    out += [png_chunk(b"IDAT", z[i:i + idat_split] if idat_split else z) for i in starts]
    out.append(png_chunk(b"IEND", b""))
    return b"".join(out)


def png_encode(width, height, colour_type, samples, bit_depth=8, palette=None, trns=None,
               interlace=False, first_filter=0, idat_split=0):
    """A PNG file (bytes) from a flat list of integer samples (row-major, interleaved).

    palette: list of (r, g, b) for colour type 3; trns: raw tRNS payload bytes.
    idat_split > 0 cuts the compressed stream into IDAT chunks of that many bytes.
    """
    spp = SAMPLES[colour_type]
    bpp = max(1, spp * bit_depth // 8)

    def rows_of(x0, y0, dx, dy):
        rows = []
        for y in range(y0, height, dy):
            line = []
            for x in range(x0, width, dx):
                base = (y * width + x) * spp
                line.extend(samples[base:base + spp])
            if line:
                rows.append(pack_row(line, bit_depth))
        return rows

    if interlace:
        raw = b"".join(_filter_rows(rows_of(*p), bpp, first_filter + k)
                       for k, p in enumerate(ADAM7))
    else:
        raw = _filter_rows(rows_of(0, 0, 1, 1), bpp, first_filter)
    return png_file(width, height, colour_type, bit_depth, zlib.compress(raw, 9), interlace,
                    None if palette is None else b"".join(bytes(c) for c in palette), trns,
                    idat_split)


def png_encode_8bit(width, height, channels, data, **kw):
    """A PNG of 8-bit pixels with 1..4 channels (bytes as gpuimg holds them)."""
    return png_encode(width, height, COLOUR_TYPE_OF_CHANNELS[channels], list(data), **kw)


def random_png(width, height, channels, seed):
    """An 8-bit PNG of make_pixels(width, height, channels, seed)."""
    return png_encode_8bit(width, height, channels, make_pixels(width, height, channels, seed))


def png_raw(w, h, ctype, depth, rows, interlace=False, trns=None, palette=None, split=0):
    """A PNG from unfiltered scanlines (filter 0): fast enough for megapixel images.

    rows(x0, y0, dx, dy) returns the packed rows of that sub-image (the whole image is
    (0, 0, 1, 1)); interlaced images take the seven Adam7 passes."""
    passes = ADAM7 if interlace else [(0, 0, 1, 1)]
    raw = b"".join(b"\0" + r for p in passes for r in rows(*p))
    return png_file(w, h, ctype, depth, zlib.compress(raw, 6), interlace, palette or None,
                    trns or None, split)


def bytes_rows(w, h, bpp, pixel):
    """rows() for png_raw over byte-aligned pixels: pixel(x, y) -> bytes of bpp."""
    def rows(x0, y0, dx, dy):
        return [b"".join(pixel(x, y) for x in range(x0, w, dx)) for y in range(y0, h, dy)
                if x0 < w]
    return rows


def png_with_idat(w, h, ctype, depth, idat, interlace=0):
    """Signature + IHDR claiming w x h, one IDAT holding idat as it is, and IEND."""
    return png_file(w, h, ctype, depth, idat, interlace)


def png_header_only(width, height, colour_type=RGB, bit_depth=8):
    """Signature + IHDR claiming width x height, then an empty IDAT and IEND."""
    return png_with_idat(width, height, colour_type, bit_depth, zlib.compress(b""))


def png_decode(data):
    """(width, height, channels, pixels) of an 8-bit non-interlaced PNG; checks CRCs."""
    check(data[:8] == PNG_SIGNATURE, "not a PNG signature: %r" % data[:8])
    pos, idat, ihdr, ended = 8, [], None, False
    while pos + 12 <= len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        payload = data[pos + 8:pos + 8 + n]
        crc = struct.unpack(">I", data[pos + 8 + n:pos + 12 + n])[0]
        check(zlib.crc32(kind + payload) & 0xFFFFFFFF == crc, "bad CRC in %r chunk" % kind)
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", payload)
        elif kind == b"IDAT":
            idat.append(payload)
        elif kind == b"IEND":
            ended = True
            break
        pos += 12 + n
    check(ihdr is not None and ended, "PNG without IHDR or IEND")
    w, h, depth, ctype, _, _, interlace = ihdr
    check(depth == 8 and interlace == 0 and ctype in (0, 2, 4, 6),
          "unexpected PNG format: depth %d colour type %d interlace %d" % (depth, ctype, interlace))
    c = SAMPLES[ctype]
    raw = zlib.decompress(b"".join(idat))
    stride = w * c
    check(len(raw) == h * (stride + 1),
          "PNG data has %d bytes, expected %d" % (len(raw), h * (stride + 1)))
    out = bytearray()
    prev = bytearray(stride)
    for y in range(h):
        ftype = raw[y * (stride + 1)]
        row = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if ftype == 0:
            pass
        elif ftype == 1:
            for k in range(c):
                row[k::c] = bytes(itertools.accumulate(row[k::c], lambda a, b: (a + b) & 255))
        elif ftype == 2:
            row = bytearray(map(lambda a, b: (a + b) & 255, row, prev))
        elif ftype == 3:
            for x in range(stride):
                a = row[x - c] if x >= c else 0
                row[x] = (row[x] + ((a + prev[x]) >> 1)) & 255
        elif ftype == 4:
            for x in range(stride):
                if x >= c:
                    row[x] = (row[x] + paeth(row[x - c], prev[x], prev[x - c])) & 255
                else:
                    row[x] = (row[x] + prev[x]) & 255
        else:
            raise Failure("PNG filter type %d in row %d" % (ftype, y))
        out += row
        prev = row
    return w, h, c, bytes(out)


# ---------------------------------------------------------------------------------------------
# Running gpuimg

# Signals whose disposition a test process hands on to gpuimg as it is. A test started from a
# shell's background job inherits SIGINT and SIGQUIT ignored (SIGHUP too under nohup), and gpuimg
# keeps an inherited SIG_IGN by design: the tests that send it those signals would then see it
# carry on. So every inherited SIG_IGN is undone here, before any child starts; a handler set
# by Python becomes the default again in the child. Not SIGPIPE and SIGXFSZ (Python ignores
# them itself; subprocess restores them in the child), nor the job-control signals.
KEEP_SIGNALS = {signal.SIGPIPE, signal.SIGXFSZ, signal.SIGCHLD, signal.SIGCONT, signal.SIGURG,
                signal.SIGWINCH, signal.SIGTSTP, signal.SIGTTIN, signal.SIGTTOU, signal.SIGKILL,
                signal.SIGSTOP}


def default_signals():
    """Undoes inherited SIG_IGN dispositions and blocked signals (see KEEP_SIGNALS)."""
    for sig in signal.valid_signals() - KEEP_SIGNALS:
        try:
            if signal.getsignal(sig) == signal.SIG_IGN:
                signal.signal(sig, signal.default_int_handler if sig == signal.SIGINT
                          else signal.SIG_DFL)
        except (OSError, ValueError):  # a signal reserved by the C library
            pass
    signal.pthread_sigmask(signal.SIG_UNBLOCK, signal.valid_signals())


default_signals()

GPUIMG = os.environ.get("GPUIMG", "")
USAGE = b"Try 'gpuimg --help' for more information.\n"
# The notice of a one-image run without OUTPUT (not with -q, --report, --explain, --repeat).
NOT_WRITTEN = "no OUTPUT given: the result was not written (name an OUTPUT file to save it)"
EXIT_OK, EXIT_FAILURE, EXIT_USAGE, EXIT_INPUT, EXIT_OUTPUT, EXIT_DEVICE = 0, 1, 2, 3, 4, 5


class Failure(Exception):
    pass


class Skip(Exception):
    """A test that does not apply to this build (its message says why)."""


def check(cond, msg, res=None):
    if not cond:
        raise Failure(msg + ("\n" + res.describe() if res is not None else ""))


def describe(args, rc, out, err):
    """A run for a failure message: its arguments, exit status and the start of its output."""
    return "gpuimg %s\n  exit %d\n  stdout %r\n  stderr %r" % (
        " ".join(repr(a) for a in args), rc, out[:2000], err[:1500])


class Result:
    def __init__(self, args, rc, out, err, seconds=0.0):
        self.args, self.rc, self.out, self.err, self.seconds = args, rc, out, err, seconds

    def lines(self):
        return self.err.splitlines()

    def describe(self):
        return describe(self.args, self.rc, self.out, self.err)


def run(*args, stdin=b"", stdout=None, cwd=None, timeout=60, preexec_fn=None, env=None):
    """Runs gpuimg with args (str or bytes) in cwd (default: the scratch directory); stdin:
    bytes to send, or a file (subprocess.DEVNULL: none). A run that outlasts timeout seconds
    is killed and fails the test. Returns a Result."""
    argv = [GPUIMG] + [os.fsencode(a) if isinstance(a, str) else a for a in args]
    feed = {"input": stdin} if isinstance(stdin, bytes) else {"stdin": stdin}
    t0 = time.monotonic()
    try:
        p = subprocess.run(argv, stdout=stdout if stdout is not None else subprocess.PIPE,
                           stderr=subprocess.PIPE, cwd=cwd or WORK, timeout=timeout,
                           preexec_fn=preexec_fn, env=env, **feed)
    except subprocess.TimeoutExpired:
        raise Failure("gpuimg %s: still running after %d s" % (" ".join(map(str, args)), timeout))
    return Result(args, p.returncode, p.stdout or b"", p.stderr, time.monotonic() - t0)


def cpu(*args, **kw):
    """Runs gpuimg on the CPU backend (the cpu suite checks the CPU reference)."""
    return run("--backend", "cpu", *args, **kw)


def built_with(feature):
    """Whether gpuimg -V names feature (cuda, libpng, libjpeg, nvjpeg)."""
    return feature.encode() in run("-V").out


@functools.lru_cache(maxsize=None)
def built_formats(what):
    """The formats this gpuimg reads or writes (what: "reads" or "writes") as its messages
    spell them ("PNG", "WebP"), in its order: the codec registry's list, from -V. A format's
    name (--format's, the report's) is its spelling in lower case."""
    m = re.search(rb"; %s: ([^;]+);" % what.encode(), run("-V").out)
    if not m:
        raise Failure("gpuimg -V does not say what it %s" % what)
    return tuple(m.group(1).decode().split(", "))


def or_list(items):
    """items as gpuimg's messages list them: "a, b or c"."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " or " + items[-1]


def unsupported_format():
    """The reason an input of no format this build reads is refused with."""
    return "unsupported format (not %s)" % or_list(built_formats("reads"))


def expect(res, code, stderr=b"", usage=USAGE):
    """Exit code and exact stderr: bytes as they are, or a str of lines each written
    `gpuimg: LINE`; usage (the two usage lines) follows after a usage error (exit 2)."""
    if isinstance(stderr, str):
        stderr = os.fsencode("".join("gpuimg: %s\n" % line for line in stderr.split("\n")))
    if code == EXIT_USAGE:
        stderr += usage
    check(res.rc == code, "expected exit %d" % code, res)
    check(res.err == stderr, "expected stderr %r" % stderr, res)
    return res


def expect_error(res, code, message, usage=USAGE):
    """A refusal: exit code, exact stderr `gpuimg: message` (a str of several lines: one
    `gpuimg: ` line each; bytes: one message as it is) plus usage for exit 2, empty stdout."""
    if isinstance(message, bytes):
        message = b"gpuimg: " + message + b"\n"
    expect(res, code, message, usage)
    check(res.out == b"", "expected an empty stdout", res)


def expect_ok(res, stdout_expected=True):
    check(res.rc == EXIT_OK, "expected exit 0", res)
    check(res.err == b"", "expected an empty stderr", res)
    if not stdout_expected:
        check(res.out == b"", "expected an empty stdout", res)
    return res


# ---------------------------------------------------------------------------------------------
# The scratch directory: one per group, kept after a failure for inspection

WORK = None


def setup_workdir(name):
    """Makes an empty NAME under $GPUIMG_TEST_DIR (default: the current directory) the
    scratch directory, where run works and path points; returns its path."""
    global WORK
    base = os.environ.get("GPUIMG_TEST_DIR", os.getcwd())
    WORK = os.path.join(os.path.abspath(base), name)
    if os.path.isdir(WORK):
        for root, dirs, _ in os.walk(WORK):  # a previous run may have left a read-only dir
            for d in dirs:
                if not os.path.islink(os.path.join(root, d)):
                    os.chmod(os.path.join(root, d), 0o755)
        shutil.rmtree(WORK)
    os.makedirs(WORK)
    return WORK


def path(*parts):
    """parts joined under the scratch directory (bytes when they are); path() is the directory."""
    if any(isinstance(p, bytes) for p in parts):
        return os.path.join(os.fsencode(WORK), *parts)
    return os.path.join(WORK, *parts)


def write(name, data):
    """Writes bytes (or a str, as UTF-8) to the scratch file name; returns name."""
    with open(path(name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())
    return name


def read(name):
    with open(path(name), "rb") as f:
        return f.read()


# ---------------------------------------------------------------------------------------------
# HTML pages (compare and summary --format html)

class PageParser(html.parser.HTMLParser):
    """Checks that every element is closed in order (void elements aside) and collects the
    page's text, its tags and each table row's cells."""
    VOID = {"meta", "br"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.open, self.tags, self.rows, self.text, self.errors = [], [], [], [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag == "tr":
            self.rows.append({"class": dict(attrs).get("class"), "cells": []})
        if tag in ("td", "th") and self.rows:
            self.rows[-1]["cells"].append("")
        if tag not in self.VOID:
            self.open.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_endtag(self, tag):
        if not self.open or self.open.pop() != tag:
            self.errors.append("unexpected </%s>" % tag)

    def handle_data(self, data):
        self.text.append(data)
        if self.open and self.open[-1] in ("td", "th", "span") and self.rows:
            self.rows[-1]["cells"][-1] += data


def parse_page(res, data):
    """An HTML page of gpuimg (bytes): well-formed, also as XML, with nothing fetched and no
    script; its parser."""
    p = PageParser()
    p.feed(data.decode("utf-8"))
    p.close()
    check(p.errors == [] and p.open == [], "page not well-formed: %r, open %r" %
          (p.errors, p.open), res)
    check(data.startswith(b"<!DOCTYPE html>\n"), "no doctype", res)
    ET.fromstring(data)  # XHTML-compatible markup: an XML parser reads it too
    low = data.lower()
    for bad in (b"<script", b"http://", b"https://", b"@import", b"url("):
        check(bad not in low, "page contains %r" % bad, res)
    return p


def leftovers(directory=None):
    """Temporary output files (.<name>.XXXXXX) left in a directory (default: the scratch one)."""
    d = directory or WORK
    return sorted(n for n in os.listdir(d) if re.fullmatch(r"\..+\.[A-Za-z0-9]{6}", n))


# ---------------------------------------------------------------------------------------------
# Groups of tests

TESTS = {}  # group -> its test functions, in the order of the script
TAGS = {}   # test function -> the tags given to @test


def test(group, **tags):
    """Registers a test of group. Tags mark it: known_bug names the src/ defect it exposes
    (main says so when it fails); a script may read others from TAGS."""
    def register(fn):
        TESTS.setdefault(group, []).append(fn)
        TAGS[fn] = tags
        return fn
    return register


def main(argv, prefix, prepare=None, populate=None, wanted=None):
    """Runs the groups named in argv[1:] ('all' or none: every group), each in a fresh
    scratch directory PREFIX<group> that populate(), when given, fills first; skips the
    tests for which wanted(test) is false. prepare(), when given, runs once GPUIMG is known
    to be there and may return an exit status to stop with. Returns the exit status: 0 all
    passed, 1 a test failed, 2 a bad command line or no GPUIMG, 77 every test that ran
    raised Skip (see Skips in the module's description)."""
    script = os.path.basename(argv[0])
    if not GPUIMG or not os.access(GPUIMG, os.X_OK):
        sys.stderr.write("%s: set GPUIMG to the gpuimg binary\n" % script)
        return 2
    if prepare is not None:
        status = prepare()
        if status is not None:
            return status
    groups = argv[1:] or ["all"]
    if groups == ["all"]:
        groups = list(TESTS)
    unknown = [g for g in groups if g not in TESTS]
    if unknown:
        sys.stderr.write("%s: unknown group(s) %s (have %s)\n" % (script, unknown, list(TESTS)))
        return 2
    failed, skipped, passed = [], 0, 0
    for group in groups:
        setup_workdir(prefix + group)
        if populate is not None:
            populate()
        for fn in TESTS[group]:
            if wanted is not None and not wanted(fn):
                continue
            t0 = time.monotonic()
            try:
                fn()
                passed += 1
                print("ok   %s/%s (%.1f s)" % (group, fn.__name__, time.monotonic() - t0))
            except Skip as e:
                skipped += 1
                print("SKIP %s/%s: %s" % (group, fn.__name__, e))
            except Failure as e:
                failed.append("%s/%s" % (group, fn.__name__))
                bug = TAGS[fn].get("known_bug")
                print("FAIL %s/%s%s: %s" % (group, fn.__name__,
                                            " (KNOWN BUG in %s)" % bug if bug else "", e))
            sys.stdout.flush()
    if failed:
        print("%d failed" % len(failed))
        return 1
    if skipped and not passed:
        print("all skipped")
        return 77
    print("all passed")
    return 0
