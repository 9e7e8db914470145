#!/usr/bin/env python3
# kernel_resources.py: each CUDA kernel's registers and static shared memory per architecture,
# as the compiler gives them (kernels/kernel_resources.tsv), for the model without a GPU.
# Usage:
#   kernel_resources.py write [NVCC [FILE.cu...]]
#                                           compile kernels/*.cu (or the FILEs named, keeping
#                                           the table's other rows) for every architecture of
#                                           the GPU table and rewrite kernels/kernel_resources.tsv
#   kernel_resources.py c TSV OUT           the table as C (run by Meson)
#   kernel_resources.py check TSV BINARY ARCH...
#                                           the build's own machine code (the fatbins in BINARY)
#                                           against the table for each ARCH it was built for:
#                                           exit 1 on any difference (a kernel changed and the
#                                           table was not rewritten), 77 when the table has none
#                                           of the ARCHs
# The machine code is read from cubins (ELF): the registers from .nv.info's REGCOUNT
# attributes, the static shared memory from the size of .nv.shared.<kernel> (less the
# reserved kilobyte from sm_80), as ptxas --resource-usage reports them; the names are
# demangled with c++filt and kept as "name<template arguments>".
import os
import re
import struct
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
TSV = os.path.join(ROOT, "kernels", "kernel_resources.tsv")
# The architectures of the GPU table (kernels/gpu_specs.c): one per compute capability there.
ARCHS = [75, 80, 86, 89, 90, 100, 120]
EIATTR_REGCOUNT = 0x2F
EIFMT_SVAL = 4
FATBIN_MAGIC = 0xBA55ED50
RESERVED = 1024


def sections(elf):
    """{name: (type, offset, size)} of a 64-bit little-endian ELF."""
    (shoff,) = struct.unpack_from("<Q", elf, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", elf, 0x3A)
    heads = [struct.unpack_from("<IIQQQQIIQQ", elf, shoff + i * shentsize) for i in range(shnum)]
    strtab = heads[shstrndx][4]
    out = {}
    for name, type_, _, _, off, size, _, _, _, _ in heads:
        end = elf.index(b"\0", strtab + name)
        out[elf[strtab + name:end].decode()] = (type_, off, size)
    return out


def symbols(elf, secs):
    """Symbol names by index (.symtab)."""
    _, off, size = secs[".symtab"]
    _, stroff, _ = secs[".strtab"]
    names = []
    for i in range(size // 24):
        (name,) = struct.unpack_from("<I", elf, off + 24 * i)
        end = elf.index(b"\0", stroff + name)
        names.append(elf[stroff + name:end].decode())
    return names


def cubin_resources(elf):
    """{mangled kernel: (registers, static shared bytes)} of one cubin."""
    secs = sections(elf)
    syms = symbols(elf, secs)
    regs = {}
    _, off, size = secs.get(".nv.info", (0, 0, 0))  # none in a cubin without kernels
    p = off
    while p < off + size:
        fmt, attr = elf[p], elf[p + 1]
        if fmt == EIFMT_SVAL:
            (n,) = struct.unpack_from("<H", elf, p + 2)
            if attr == EIATTR_REGCOUNT:
                sym, count = struct.unpack_from("<II", elf, p + 4)
                regs[syms[sym]] = count
            p += 4 + n
        else:
            p += 4
    # From sm_80 a kernel's shared section opens with the driver's reserved 1 KB
    # (.nv.shared.reserved.0), which its static shared memory does not count.
    reserved = RESERVED if any(n.startswith(".nv.shared.reserved.") for n in secs) else 0
    out = {}
    for name in secs:
        if name.startswith(".text."):
            kernel = name[len(".text."):]
            shared = secs.get(".nv.shared." + kernel, (0, 0, 0))[2]
            out[kernel] = (regs.get(kernel, 0), max(shared - reserved, 0))
    return out


def short_names(mangled):
    """The demangled names without namespaces, return type and parameters."""
    text = subprocess.run(["c++filt"], input="\n".join(mangled), capture_output=True, text=True,
                          check=True).stdout.split("\n")
    out = []
    for d in text[:len(mangled)]:
        d = d.replace("(anonymous namespace)::", "")
        if d.startswith("void "):
            d = d[len("void "):]
        if d.startswith("cub::"):
            out.append(None)  # a library's kernel (CUB's): not gpuimg's to price
            continue
        depth, cut, start = 0, len(d), 0
        for i, ch in enumerate(d):
            if ch == "<":
                depth += 1
            elif ch == ">":
                depth -= 1
            elif ch == "(" and depth == 0:
                cut = i
                break
            elif ch == ":" and depth == 0 and d[i + 1:i + 2] == ":":
                start = i + 2
        out.append(d[start:cut])
    return out


def named(resources):
    keys = sorted(resources)
    return {n: resources[k] for n, k in zip(short_names(keys), keys) if n is not None}


def fatbin_cubins(data):
    """(arch, cubin bytes) of every cubin in every fatbin inside data (an object, a library)."""
    magic = struct.pack("<I", FATBIN_MAGIC)
    at = data.find(magic)
    while at >= 0:
        _, _, head, size = struct.unpack_from("<IHHQ", data, at)
        p, end = at + head, at + head + size
        while p < end:
            kind, _, ehead, esize = struct.unpack_from("<HHIQ", data, p)
            (arch,) = struct.unpack_from("<I", data, p + 28)
            payload = data[p + ehead:p + ehead + esize]
            if kind == 2:
                if payload[:4] != b"\x7fELF":
                    sys.exit("kernel_resources.py: a compressed cubin for sm_%d: build with "
                             "nvcc --compress-mode=none to check it" % arch)
                yield arch, payload
            p += ehead + esize
        at = data.find(magic, end)


def read_tsv(path):
    rows = {}
    with open(path) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            arch, kernel, regs, shared = line.rstrip("\n").split("\t")
            rows[(int(arch), kernel)] = (int(regs), int(shared))
    return rows


def write(nvcc, only=()):
    """Every kernels/*.cu, or only those named (their rows replaced, the table's others kept:
    a whole write drops the rows of kernels no longer built)."""
    rows = read_tsv(TSV) if only else {}
    cus = sorted(f for f in os.listdir(os.path.join(ROOT, "kernels"))
                 if f.endswith(".cu") and f != "nvjpeg.cu" and (not only or f in only))
    inc = ["-I" + os.path.join(ROOT, d) for d in ("include", "src/base", "kernels")]
    with tempfile.TemporaryDirectory() as tmp:
        for arch in ARCHS:
            for cu in cus:
                out = os.path.join(tmp, "k.cubin")
                # The build's flags for device code (kernels/meson.build, -O3 from the release
                # build type).
                subprocess.run([nvcc, "-cubin", "-arch=sm_%d" % arch, "--std=c++17", "-O3",
                                "--expt-relaxed-constexpr"] + inc +
                               [os.path.join(ROOT, "kernels", cu), "-o", out], check=True)
                with open(out, "rb") as f:
                    for kernel, res in named(cubin_resources(f.read())).items():
                        rows[(arch, kernel)] = res
            print("kernel_resources.py: sm_%d done" % arch)
    with open(TSV, "w") as f:
        f.write("# kernel_resources.tsv: each kernel's registers per thread and static shared memory"
                " per block\n# (bytes) per architecture, written by scripts/build/kernel_resources.py"
                " write; do not edit.\n")
        f.write("# arch\tkernel\tregisters\tstatic_shared\n")
        for (arch, kernel), (regs, shared) in sorted(rows.items()):
            f.write("%d\t%s\t%d\t%d\n" % (arch, kernel, regs, shared))
    print("kernel_resources.py: %d kernels, %d architectures -> %s" %
          (len(rows) // len(ARCHS), len(ARCHS), TSV))


def to_c(tsv, out):
    rows = read_tsv(tsv)
    lines = ["/* kernel_resources.c: the resource table, generated by scripts/build/kernel_resources.py"
             " from", " * kernels/kernel_resources.tsv; do not edit. */",
             '#include "cuda_model.h"', "",
             "const gpuimg_kernel_resources_t gpuimg_kernel_resources[] = {"]
    for (arch, kernel), (regs, shared) in sorted(rows.items()):
        if not re.fullmatch(r"[A-Za-z0-9_<>, ]+", kernel):
            sys.exit("kernel_resources.py: bad kernel name %r" % kernel)
        lines.append('    {%d, "%s", %d, %d},' % (arch, kernel, regs, shared))
    lines += ["};", "const int gpuimg_kernel_resources_count = %d;" % len(rows), ""]
    with open(out, "w") as f:
        f.write("\n".join(lines))


def check(tsv, binary, archs):
    table = read_tsv(tsv)
    with open(binary, "rb") as f:
        data = f.read()
    built = {}
    for arch, cubin in fatbin_cubins(data):
        for kernel, res in named(cubin_resources(cubin)).items():
            built[(arch, kernel)] = res
    problems = []
    table_archs = {k[0] for k in table}
    for arch in [a for a in archs if a not in table_archs]:
        print("kernel_resources.py: sm_%d is not in the table (the model prices the nearest "
              "below it of the same major): not checked" % arch)
    archs = [a for a in archs if a in table_archs]
    if not archs:
        return 77  # nothing to check: Meson's skip
    for arch in archs:
        mine = {k: v for k, v in built.items() if k[0] == arch}
        theirs = {k: v for k, v in table.items() if k[0] == arch}
        if not mine:
            problems.append("no machine code for sm_%d in %s" % (arch, binary))
        for key in sorted(set(mine) | set(theirs)):
            if key not in theirs:
                problems.append("sm_%d %s: built (%d registers, %d bytes shared), not in the "
                                "table" % (key[0], key[1], *mine[key]))
            elif key not in mine:
                problems.append("sm_%d %s: in the table, not built" % key)
            elif mine[key] != theirs[key]:
                problems.append("sm_%d %s: built with %d registers and %d bytes shared, the table "
                                "says %d and %d" % (key[0], key[1], *mine[key], *theirs[key]))
    for p in problems:
        print("kernel_resources.py: " + p)
    if problems:
        print("kernel_resources.py: run scripts/build/kernel_resources.py write to rewrite the table")
        return 1
    print("kernel_resources.py: %d kernels on %s as the table says" %
          (len([k for k in built if k[0] in archs]), ", ".join("sm_%d" % a for a in archs)))
    return 0


def main():
    if len(sys.argv) >= 2 and sys.argv[1] == "write":
        write(sys.argv[2] if len(sys.argv) > 2 else "nvcc", sys.argv[3:])
    elif len(sys.argv) == 4 and sys.argv[1] == "c":
        to_c(sys.argv[2], sys.argv[3])
    elif len(sys.argv) >= 5 and sys.argv[1] == "check":
        sys.exit(check(sys.argv[2], sys.argv[3], [int(a) for a in sys.argv[4:]]))
    else:
        sys.exit("usage: kernel_resources.py write [NVCC [FILE.cu...]] | c TSV OUT | "
                 "check TSV BINARY ARCH...")


if __name__ == "__main__":
    main()
