# cli_usage.py: test_cli.py's groups usage, input: the command line, unusable inputs.

import ctypes
import os
import re

from gpuimg_testlib import (
    EXIT_DEVICE, EXIT_INPUT, EXIT_OK, EXIT_OUTPUT, EXIT_USAGE, GRAY, NOT_WRITTEN, USAGE, Skip,
    built_formats, check, cpu, expect, or_list, unsupported_format,
    expect_error, expect_ok,
    leftovers, make_pixels,
    path, png_encode_8bit, png_header_only, read, run, test, write)
from cli_common import (
    CORPUS, OPERATIONS, range_msg, check_no_leftovers, expected, is_cuda_build, load_report,
    read_png, ref_blur, ref_checkerboard, ref_gray, same_image, stage, unknown_operation_msg, usage_error)


# ---------------------------------------------------------------------------------------------
# usage: the command line

@test("usage")
def help_goes_to_stdout():
    for args in (["--help"], ["-h"], ["blur", "--help"], ["blur", "-r", "3", "then", "gray", "-h"]):
        res = expect_ok(run(*args))
        out = res.out.decode()
        check(out.startswith("Usage: gpuimg OP [OPTIONS] [then OP [OPTIONS]]... [INPUT [OUTPUT]]\n"),
              "help does not start with the usage line", res)
        check("\nProcess a %s image " % or_list(built_formats("reads")) in out,
              "help does not name the formats read", res)
        check("output format %s\n" % or_list([f.lower() for f in built_formats("writes")]) in out,
              "--format's help does not name the formats written", res)
        for section in ["\n%s: " % op for op in OPERATIONS] + [
                "\nGlobal options:\n",
                "\nExit status: 0 ok, 1 processing failure, 2 usage error, "
                "3 bad input or mask,\n4 output or report not written, "
                "5 CUDA unavailable or failed.\n"]:
            check(section in out, "help lacks %r" % section, res)
        for opt in ("--radius N", "--naive", "--tiled", "--cell K", "--amount A", "--mask FILE",
                    "--backend B", "--block WxH", "--report FILE", "--repeat N", "--quality Q",
                    "--max-pixels N", "--quiet", "--version", "--warmup M", "--explain",
                    "--tile u8|float"):
            check(opt in out, "help does not mention %s" % opt, res)


@test("usage")
def version():
    want_version = os.environ.get("GPUIMG_VERSION")
    for flag in ("-V", "--version"):
        res = expect_ok(run(flag))
        m = re.fullmatch(rb"gpuimg (\S+) \(backends: cpu(, cuda)?; reads: \w+(, \w+)*; "
                         rb"writes: \w+(, \w+)*; (\w+ codecs: \w+(, \w+)*; )+"
                         rb"colour: (lcms2|none)\)\n", res.out)
        check(m is not None, "unexpected version line", res)
        if want_version:
            check(m.group(1).decode() == want_version, "version is not %s" % want_version, res)
    # A format has codecs listed exactly when it is read or written; each is listed once.
    served = {f.lower() for f in built_formats("reads") + built_formats("writes")}
    listed = re.findall(r"(\w+) codecs: ([^;]+);", res.out.decode())
    check(len({name for name, _ in listed}) == len(listed) and served <= {n for n, _ in listed},
          "formats listed: %r" % listed, res)
    for name, codecs in listed:
        check((codecs != "none") == (name in served), "%s codecs: %s" % (name, codecs), res)


@test("usage")
def no_operation():
    usage_error([], "no operation given")
    usage_error(["--quiet"], "no operation given")
    usage_error(["--backend", "cpu", "--report", "-"], "no operation given")


@test("usage")
def end_of_options():
    # After '--' a name starting with '-' is a file, not an option.
    expect_error(run("gray", "--", "-weird.png"), EXIT_INPUT,
                 "-weird.png: No such file or directory")
    # ... and 'then' is a file name too.
    expect_error(run("gray", "--", "then"), EXIT_INPUT, "then: No such file or directory")
    expect_ok(cpu("blur", "-r", "1", "--", "g8.png", "dash-out.png"), stdout_expected=False)


@test("usage")
def unknown_operation():
    usage_error(["frobnicate"],
                unknown_operation_msg("frobnicate"))
    usage_error(["Gray"],
                unknown_operation_msg("Gray"))
    usage_error(["gray", "then", "sharpen"],
                unknown_operation_msg("sharpen"))
    usage_error(["gray", "then", "then"],
                unknown_operation_msg("then"))


@test("usage")
def unknown_option():
    usage_error(["blur", "--bogus"], "unknown option '--bogus'")
    usage_error(["blur", "--bogus=3"], "unknown option '--bogus'")
    usage_error(["--bogus", "blur"], "unknown option '--bogus'")
    usage_error(["blur", "-x"], "unknown option '-x'")
    usage_error(["blur", "-qx"], "unknown option '-qx'")
    usage_error(["blur", "--rad", "3"], "unknown option '--rad'")
    usage_error(["blur", "--" + "x" * 100], "unknown option '--" + "x" * 40 + "'")


@test("usage")
def measurement_options():
    usage_error(["blur", "--tile", "half"], "--tile: invalid value 'half' (expected u8 or float)")
    usage_error(["gray", "--warmup", "-1"],
                "--warmup: invalid value '-1' (expected an integer from 0 to 10000)")
    res = expect_ok(cpu("blur", "-r", "1", "--tiled", "--tile", "float", "--warmup", "2",
                        "--repeat", "3", "--report", "-", "rgb-33x17.png"))
    rep = load_report(res.out)
    check(rep["warmup"] == 2 and stage(rep, "blur")["samples"] == 3, "warmup and repeat")
    # --explain on the CPU backend: one plain line per operation on stderr.
    res = run("gray", "then", "blur", "-r", "1", "--backend", "cpu", "--explain", "rgb-33x17.png")
    check(res.rc == 0, "explain exit", res)
    lines = res.err.decode().splitlines()
    check(len(lines) == 2 and lines[0].startswith("gray: CPU backend, ") and
          lines[1].startswith("blur: CPU backend, "), "explain lines %r" % lines, res)


@test("usage")
def info_without_a_device():
    res = run("info")
    if res.rc == 0:  # a GPU is present: it describes the device instead
        check(b"device:" in res.out and b"copy bandwidth:" in res.out, "info output", res)
        return
    check(res.rc == 5 and res.out == b"", "info exit", res)
    err = res.err.decode()
    check(err in ("gpuimg: info: this gpuimg was built without CUDA\n",) or
          err.startswith("gpuimg: info: no usable CUDA device: "), "info message %r" % err, res)


def have_nvidia_driver():
    """Whether the NVIDIA driver's library (libcuda) loads here."""
    try:
        ctypes.CDLL("libcuda.so.1")
        return True
    except OSError:
        return False


@test("usage")
def cuda_without_a_driver():
    # A CUDA build on a machine without the NVIDIA driver says so, not the runtime's
    # "CUDA driver version is insufficient for CUDA runtime version".
    if not is_cuda_build() or have_nvidia_driver():
        raise Skip("needs a CUDA build on a machine without the NVIDIA driver")
    expect_error(run("--backend", "cuda", "gray", "rgb8.png", "out.png"), EXIT_DEVICE,
                 "no usable CUDA device: no NVIDIA driver found")
    expect_error(run("info"), EXIT_DEVICE, "info: no usable CUDA device: no NVIDIA driver found")
    check(not os.path.exists(path("out.png")), "an output was written")


@test("usage")
def option_of_another_operation():
    usage_error(["blur", "--cell", "3"], "blur: unknown option '--cell'")
    usage_error(["gray", "-r", "2"], "gray: unknown option '-r'")
    usage_error(["gray", "--tiled"], "gray: unknown option '--tiled'")
    usage_error(["gray", "--tile", "float"], "gray: unknown option '--tile'")
    usage_error(["checkerboard", "--mask", "m.png"], "checkerboard: unknown option '--mask'")
    usage_error(["checkerboard", "--tiled"], "checkerboard: unknown option '--tiled'")
    usage_error(["portrait", "--amount", "3"], "portrait: unknown option '--amount'")
    usage_error(["gray", "then", "blur", "--amount", "3"], "blur: unknown option '--amount'")
    usage_error(["blur", "-r", "3", "then", "gray", "-r", "2"], "gray: unknown option '-r'")
    usage_error(["-r", "3", "blur"], "-r: given before any operation")
    usage_error(["--cell=2", "checkerboard"], "--cell: given before any operation")


@test("usage")
def missing_option_value():
    usage_error(["blur", "-r"], "-r: missing value")
    usage_error(["blur", "--radius"], "--radius: missing value")
    usage_error(["checkerboard", "--cell"], "--cell: missing value")
    usage_error(["portrait", "--mask"], "--mask: missing value")
    usage_error(["gray", "g8.png", "--report"], "--report: missing value")
    usage_error(["gray", "--backend"], "--backend: missing value")
    usage_error(["gray", "--report="], "--report: empty file name")
    usage_error(["portrait", "--mask="], "--mask: empty file name")
    usage_error(["portrait", "--mask", ""], "--mask: empty file name")


@test("usage")
def bad_numbers():
    for v in ("-1", "abc", "2048", "1e3", "", "3x", "0x10", "1.5", "99999999999999999999",
              "-9223372036854775809"):
        usage_error(["blur", "-r", v], range_msg("-r", v, 0, 2047))
    usage_error(["blur", "--radius=abc"], range_msg("--radius", "abc", 0, 2047))
    usage_error(["blur", "-r5x"], range_msg("-r", "5x", 0, 2047))
    usage_error(["portrait", "-r", "2048"], range_msg("-r", "2048", 0, 2047))
    usage_error(["checkerboard", "--cell", "0"], range_msg("--cell", "0", 1, 2147483647))
    usage_error(["checkerboard", "--cell", "2147483648"],
                range_msg("--cell", "2147483648", 1, 2147483647))
    usage_error(["checkerboard", "--amount", "256"], range_msg("--amount", "256", 0, 255))
    usage_error(["checkerboard", "--amount", "-1"], range_msg("--amount", "-1", 0, 255))
    usage_error(["gray", "--repeat", "0"], range_msg("--repeat", "0", 1, 100000))
    usage_error(["gray", "--repeat", "100001"], range_msg("--repeat", "100001", 1, 100000))
    usage_error(["gray", "--quality", "0"], range_msg("--quality", "0", 1, 100))
    usage_error(["gray", "--quality", "101"], range_msg("--quality", "101", 1, 100))
    usage_error(["gray", "--max-pixels", "0"], range_msg("--max-pixels", "0", 1, 1 << 40))
    usage_error(["gray", "--backend", "gpu"],
                "--backend: invalid value 'gpu' (expected auto, cpu or cuda)")
    for v in ("0x4", "33x32", "32", "x", "4x", "1025x1", "-1x-1", "8x8x8"):
        usage_error(["gray", "--block", v],
                    "--block: invalid value '%s' (expected WxH with W*H <= 1024)" % v)
    usage_error(["blur", "--naive=1"], "--naive: takes no value")
    usage_error(["gray", "--quiet=yes"], "--quiet: takes no value")


def jpeg_quantizers(data):
    """The 8-bit quantization tables (DQT) of a JPEG: a list of 64-value lists."""
    tables, pos = [], 2
    while pos + 4 <= len(data) and data[pos] == 0xFF and data[pos + 1] not in (0xD8, 0xDA):
        n = int.from_bytes(data[pos + 2:pos + 4], "big")
        if data[pos + 1] == 0xDB:
            body = data[pos + 4:pos + 2 + n]
            for k in range(0, len(body), 65):
                check(body[k] >> 4 == 0, "a 16-bit quantization table")
                tables.append(list(body[k + 1:k + 65]))
        pos += 2 + n
    return tables


@test("usage")
def numbers_at_the_limits_are_accepted():
    # Each value at its limit is taken as given: the step's reported options and the pixels
    # of the CPU reference (--block only shapes CUDA launches: the CPU's pixels are gray's).
    img = expected("rgb8.png")
    for args, options, want in (
            (["blur", "-r", "0"], {"radius": 0}, img),
            (["blur", "-r", "2047"], {"radius": 2047}, ref_blur(img, 2047)),
            (["blur", "--radius=7"], {"radius": 7}, ref_blur(img, 7)),
            (["blur", "-r7"], {"radius": 7}, ref_blur(img, 7)),
            (["checkerboard", "--cell", "2147483647", "--amount", "255"],
             {"cell": 2147483647, "amount": 255}, ref_checkerboard(img, 2147483647, 255)),
            (["checkerboard", "--amount", "0"], {"cell": 1, "amount": 0}, img),
            (["gray", "--block", "32x32"], {}, ref_gray(img)),
            (["gray", "--block", "1024x1"], {}, ref_gray(img)),
            (["gray", "--max-pixels", "91"], {}, ref_gray(img))):  # 13x7: the limit exactly
        res = expect_ok(cpu(*args, "rgb8.png", "limits.png", "--report", "limits.json"),
                        stdout_expected=False)
        got = stage(load_report(read("limits.json")), args[0])["options"]
        check(got == options, "%s: options %r, expected %r" % (args, got, options), res)
        same_image(read_png(path("limits.png")), want, " ".join(args))
    # --quality 1: libjpeg's and stb's scaling (5000%) puts every quantizer at the 8-bit 255.
    expect_ok(cpu("gray", "--quality", "1", "rgb8.png", "limits.jpg"), stdout_expected=False)
    tables = jpeg_quantizers(read("limits.jpg"))
    check(tables and all(t == [255] * 64 for t in tables),
          "--quality 1: quantization tables %r" % tables)


@test("usage")
def bad_output_name():
    # The extensions the message offers: each is written, and every format written has its
    # name among them (-V's list, the registry's).
    res = run("gray", "g8.png", "out.gif")
    m = re.match(rb"gpuimg: out\.gif: unsupported output format \(use ((\.\w+, )*\.\w+ or \.\w+)\)\n",
                 res.err)
    check(res.rc == EXIT_USAGE and m, "unexpected refusal of out.gif", res)
    extensions = re.split(r", | or ", m.group(1).decode())
    check({"." + f.lower() for f in built_formats("writes")} <= set(extensions),
          "formats written missing from %r" % extensions, res)
    for ext in extensions:
        expect_ok(cpu("gray", "g8.png", "listed" + ext), stdout_expected=False)
    fmt = "%s: unsupported output format (use " + m.group(1).decode() + ")"
    for out in ("out.gif", "out", "out.", "out.png.txt", "dir.png/out", ".png/x", "out.svg"):
        usage_error(["gray", "g8.png", out], fmt % out)
    # A format read only: its extensions name no output.
    read_only = set(built_formats("reads")) - set(built_formats("writes"))
    for name in read_only:
        out = "out." + name.lower()
        check(("." + name.lower()) not in extensions, "%s offered as an output" % name, res)
        usage_error(["gray", "sample:", out], fmt % out)


@test("usage")
def both_to_stdout():
    usage_error(["gray", "g8.png", "-", "--report", "-"],
                "image and report cannot both go to stdout")
    usage_error(["gray", "--report=-", "-", "-"], "image and report cannot both go to stdout")


@test("usage")
def then_at_end():
    usage_error(["gray", "then"], "'then' must be followed by an operation")
    usage_error(["gray", "then", "blur", "-r", "1", "then"],
                "'then' must be followed by an operation")


@test("usage")
def too_many_positionals():
    usage_error(["gray", "a.png", "b.png", "c.png"],
                "unexpected argument 'c.png' (INPUT and OUTPUT already given)")
    usage_error(["gray", "a.png", "b.png", "then", "blur"],
                "unexpected argument 'then' (INPUT and OUTPUT already given)")


@test("usage")
def too_many_operations():
    ops = ["gray"] + ["then", "gray"] * 32  # 33 operations
    usage_error(ops, "too many operations (at most 32)")
    ok = ["gray"] + ["then", "gray"] * 31  # 32 operations
    res = expect_ok(cpu(*ok, "rgb8.png", "many.png"), stdout_expected=False)
    same_image(read_png(path("many.png")), ref_gray(expected("rgb8.png")), "32 x gray")


@test("usage")
def empty_input_name():
    usage_error(["gray", ""], "empty input file name")
    usage_error(["gray", "", "out.png"], "empty input file name")


@test("usage")
def portrait_needs_a_mask_with_an_input():
    usage_error(["portrait", "rgb8.png"], "portrait: --mask FILE is required with an input image")
    usage_error(["portrait", "rgb8.png", "out.png"],
                "portrait: --mask FILE is required with an input image")
    usage_error(["gray", "then", "portrait", "-r", "2", "-", "out.png"],
                "portrait: --mask FILE is required with an input image")


@test("usage")
def cuda_backend_without_cuda():
    if is_cuda_build():
        raise Skip("this gpuimg is built with CUDA")
    write("keep.png", b"keep me")
    expect_error(run("--backend", "cuda", "gray", "rgb8.png", "keep.png"), EXIT_DEVICE,
                 "this gpuimg was built without CUDA")
    check(read("keep.png") == b"keep me", "the existing output was changed")
    check_no_leftovers()
    # auto picks the CPU silently when there is no CUDA in the build.
    expect_ok(run("gray", "rgb8.png", "auto.png"), stdout_expected=False)


# ---------------------------------------------------------------------------------------------
# input: unreadable, empty, wrong or mismatched inputs (exit 3)

@test("input")
def missing_input():
    expect_error(run("gray", "nope.png"), EXIT_INPUT, "nope.png: No such file or directory")
    expect_error(run("gray", "nope.png", "out.png"), EXIT_INPUT,
                 "nope.png: No such file or directory")
    check(not os.path.exists(path("out.png")), "an output file was created")
    check_no_leftovers()
    expect_error(run("gray", "nodir/nope.png"), EXIT_INPUT,
                 "nodir/nope.png: No such file or directory")
    expect_error(run("gray", "g8.png/x.png"), EXIT_INPUT, "g8.png/x.png: Not a directory")


@test("input")
def empty_input():
    expect_error(run("gray", "empty.png", "out.png"), EXIT_INPUT, "empty.png: empty file")
    expect_error(run("gray", "-", "out.png", stdin=b""), EXIT_INPUT, "<stdin>: empty file")
    expect_error(run("gray", "/dev/null"), EXIT_INPUT, "/dev/null: empty file")
    check(not os.path.exists(path("out.png")), "an output file was created")
    check_no_leftovers()


def without_fd(fd):
    """A preexec_fn that starts gpuimg with standard stream fd closed."""
    return lambda: os.close(fd)


@test("input")
def closed_standard_streams():
    # A closed stdin is not an empty one (the output's temporary file must not become fd 0
    # and be read as the input); a closed stdout is refused before any work.
    res = run("gray", "-", "closed.png", preexec_fn=without_fd(0))
    expect_error(res, EXIT_INPUT, "<stdin>: standard input is closed")
    check(not os.path.exists(path("closed.png")) and not leftovers(), "nothing written", res)
    res = run("gray", "rgb8.png", "-", preexec_fn=without_fd(1))
    check(res.rc == EXIT_OUTPUT and res.err == b"gpuimg: <stdout>: standard output is closed\n",
          "a closed stdout", res)
    expect_error(run("gray", "--from", "-", "-o", "cl", preexec_fn=without_fd(0)), EXIT_INPUT,
                 "<stdin>: standard input is closed")


@test("input")
def not_an_image():
    msg = unsupported_format()
    expect_error(run("gray", "text.png", "out.png"), EXIT_INPUT, "text.png: " + msg)
    expect_error(run("gray", "gif.png", "out.png"), EXIT_INPUT, "gif.png: " + msg)
    expect_error(run("gray", "-", stdin=b"GIF89a"), EXIT_INPUT, "<stdin>: " + msg)
    expect_error(run("gray", "-", stdin=b"\x89PNG\r\n\x1a"), EXIT_INPUT, "<stdin>: " + msg)
    expect_error(run("gray", "-", stdin=b"\xff\xd8"), EXIT_INPUT, "<stdin>: " + msg)
    # A BMP is a real image, but not one gpuimg reads.
    expect_ok(cpu("gray", "rgb8.png", "rgb8.bmp"), stdout_expected=False)
    expect_error(run("gray", "rgb8.bmp"), EXIT_INPUT, "rgb8.bmp: " + msg)
    check(not os.path.exists(path("out.png")), "an output file was created")


@test("input")
def directory_input():
    os.mkdir(path("adir"))
    expect_error(run("gray", "adir", "out.png"), EXIT_INPUT, "adir: is a directory")
    expect_error(run("portrait", "--mask", "adir", "rgb8.png", "out.png"), EXIT_INPUT,
                 "adir: is a directory")
    check(not os.path.exists(path("out.png")), "an output file was created")
    check_no_leftovers()


@test("input")
def pixel_limit():
    expect_error(run("--max-pixels", "90", "gray", "rgb8.png"), EXIT_INPUT,
                 "rgb8.png: image is 13x7, over the limit of 90 pixels (see --max-pixels)")
    expect(cpu("--max-pixels", "91", "gray", "rgb8.png"), EXIT_OK, NOT_WRITTEN)
    # Only the header is read: a 17000x17000 gray claim fails at once, before any allocation.
    write("huge.png", png_header_only(17000, 17000, GRAY))
    expect_error(run("gray", "huge.png", "out.png"), EXIT_INPUT,
                 "huge.png: image is 17000x17000, over the limit of 268435456 pixels "
                 "(see --max-pixels)")
    # The limit applies to masks too (checked before the size comparison).
    write("mask-14x7.png", png_encode_8bit(14, 7, 1, make_pixels(14, 7, 1, 5)))
    expect_error(run("--max-pixels", "91", "portrait", "--mask", "mask-14x7.png", "rgb8.png"),
                 EXIT_INPUT, "mask-14x7.png: image is 14x7, over the limit of 91 pixels "
                 "(see --max-pixels)")
    check_no_leftovers()


@test("input")
def mask_size_mismatch():
    write("mask-9x1.png", png_encode_8bit(9, 1, 1, make_pixels(9, 1, 1, 3)))
    write("mask-7x13.png", png_encode_8bit(7, 13, 1, make_pixels(7, 13, 1, 3)))
    write("keep.png", b"existing output")
    expect_error(run("portrait", "--mask", "mask-9x1.png", "rgb8.png", "keep.png"), EXIT_INPUT,
                 "mask-9x1.png: mask is 9x1 but the image is 13x7")
    expect_error(run("portrait", "--mask", "mask-7x13.png", "rgb8.png", "keep.png"), EXIT_INPUT,
                 "mask-7x13.png: mask is 7x13 but the image is 13x7")
    expect_error(run("portrait", "--mask", "rgb8.png", "sample:", "keep.png"), EXIT_INPUT,
                 "rgb8.png: mask is 13x7 but the image is 1024x768")
    # The built-in mask only fits the built-in sample: through a pipeline step it still does.
    expect_error(run("portrait", "--mask", "nomask.png", "rgb8.png", "keep.png"), EXIT_INPUT,
                 "nomask.png: No such file or directory")
    expect_error(run("portrait", "--mask", "text.png", "rgb8.png", "keep.png"), EXIT_INPUT,
                 "text.png: " + unsupported_format())
    expect_error(run("portrait", "--mask", "empty.png", "rgb8.png", "keep.png"), EXIT_INPUT,
                 "empty.png: empty file")
    check(read("keep.png") == b"existing output", "the existing output was changed")
    check_no_leftovers()
