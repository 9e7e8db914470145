# cli_completion.py: test_cli.py's group completion: the bash completion script.

import re
import shlex
import shutil
import subprocess

from gpuimg_testlib import (
    Skip, built_formats, check, expect_ok, run, test)
from cli_common import OPERATIONS, usage_error


# ---------------------------------------------------------------------------------------------
# completion: the bash completion script made from the option tables

def help_names():
    """The operations and the options (long and short) that --help lists."""
    out = expect_ok(run("--help")).out.decode()
    ops = re.findall(r"^([a-z][a-z0-9_]*): ", out.split("\nGlobal options:")[0], re.M)
    opts = set()
    for line in out.splitlines():
        m = re.match(r"  (-[A-Za-z])?(?:, )?(--[a-z][a-z-]*)", line)
        if m:
            opts.update(x for x in m.groups() if x)
    return ops, opts


def complete(words):
    """What the completion offers for the last of words (bash sources the script)."""
    script = expect_ok(run("--completion", "bash")).out.decode()
    line = ("source /dev/stdin; COMP_WORDS=(%s); COMP_CWORD=%d; _gpuimg; "
            "printf '%%s\\n' \"${COMPREPLY[@]}\"" %
            (" ".join(shlex.quote(w) for w in words), len(words) - 1))
    res = subprocess.run(["bash", "-c", line], input=script.encode(), capture_output=True)
    check(res.returncode == 0, "bash failed on the completion script: %r" % res.stderr)
    return set(res.stdout.decode().split())


@test("completion")
def completion_names_everything():
    ops, opts = help_names()
    check(ops == list(OPERATIONS), "help's operations: %r" % ops)
    check(len(opts) > 25, "help lists only %d options" % len(opts))
    res = expect_ok(run("--completion", "bash"))
    words = set(re.findall(r"[-\w]+", res.out.decode()))
    for name in ops + sorted(opts) + ["then", "complete", "_gpuimg"]:
        check(name in words, "the completion does not name %s" % name, res)
    usage_error(["--completion", "zsh"], "--completion: invalid value 'zsh' (expected bash)")


@test("completion")
def completion_in_bash():
    if not shutil.which("bash"):
        raise Skip("no bash")
    ops, _ = help_names()
    check(complete(["gpuimg", ""]) >= set(ops) | {"compare", "info"}, "first word: no operations")
    check(complete(["gpuimg", "blur", "--ra"]) == {"--radius"}, "blur --ra")
    check("--cell" not in complete(["gpuimg", "blur", "--"]), "blur offers checkerboard's --cell")
    check("--cell" in complete(["gpuimg", "blur", "then", "checkerboard", "--"]),
          "checkerboard after then: no --cell")
    check(complete(["gpuimg", "blur", "--tile", ""]) == {"u8", "float"}, "--tile's values")
    check(complete(["gpuimg", "gray", "--backend", "c"]) == {"cpu", "cuda"}, "--backend's values")
    check(complete(["gpuimg", "gray", "--format", ""]) ==
          {f.lower() for f in built_formats("writes")}, "--format's values: the formats written")
    for op in ops:  # each operation after then, by its first two letters
        want = {o for o in ops if o.startswith(op[:2])}
        check(complete(["gpuimg", "gray", "then", op[:2]]) == want,
              "operations after then starting %s" % op[:2])
    check(complete(["gpuimg", "rotate", "--angle", ""]) == {"90", "180", "270"}, "--angle's values")
    check("--angle" in complete(["gpuimg", "rotate", "--"]), "rotate: no --angle")
    check("--angle" not in complete(["gpuimg", "flip", "--"]), "flip offers rotate's --angle")
