#!/usr/bin/env python3
"""check_source.py: fails when the source tree breaks one of its size, parsing or wording rules.

The rules, each a line of its own in the output when broken:

- size: a C or CUDA file (.c, .h, .cu, .cuh) under src/, kernels/, include/ or bench/ holds
  at most MAX_LINES lines. Test programs (tests/) are not counted.
- options: option names are matched by the one option parser, src/base/options.c, from the
  option tables. A C or CUDA file under src/, kernels/, include/, bench/ or tests/ holds fewer
  than MAX_OPTION_TESTS string comparisons against an option name: a call of strcmp,
  strncmp, strcasecmp or strncasecmp with a string literal argument that is spelled as an
  option, '-' or '--' then a letter ("-h", "--help", "--no-npp"). '-' alone (stdin, stdout)
  and '--' alone (the end of options) are not option names; nor are values ("auto", "bash"),
  which an option's own parse function may compare.
- words: the tree speaks of the software, not of how it was worked on. No text file under
  src/, kernels/, include/, tests/, docs/, man/, bench/, scripts/ or .ci/, nor README.md or
  meson.build, holds a word of WORDS (case-insensitive): a sitting of work (sess-ion), a
  numbered call, an issue's number or rounds of review.

Usage: check_source.py [SOURCE_ROOT]   (default: this file's parent folder's parent)
"""
import os
import re
import sys

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                       os.path.join(os.path.dirname(__file__), '..'))
SOURCE = ('.c', '.h', '.cu', '.cuh')
MAX_LINES = 800
SIZED = ('src', 'kernels', 'include', 'bench')

MAX_OPTION_TESTS = 5
OPTION_PARSER = 'src/base/options.c'
PARSED = ('src', 'kernels', 'include', 'bench', 'tests')
# strcmp(x, "--name") or strncmp("-h", y, n): a literal '-' or '--' then a letter.
OPTION_TEST = re.compile(r'\bstr(?:n?case|n)?cmp\s*\((?:[^;()]*,\s*)?"--?[A-Za-z][^"]*"')

WORDED = ('src', 'kernels', 'include', 'tests', 'docs', 'man', 'bench', 'scripts', '.ci')
WORDED_FILES = ('README.md', 'meson.build')
# Written so that this file does not match them itself.
WORDS = re.compile(r'sess(?:ion)|\bcall\s+#?[0-9]|\bissue\s+#?[0-9]|\breview\s+rounds?',
                   re.I)


def walk(folders):
    """The files under folders (relative to ROOT), sorted, as relative paths."""
    for folder in folders:
        top = os.path.join(ROOT, folder)
        for dirpath, dirnames, filenames in os.walk(top):
            dirnames.sort()
            for name in sorted(filenames):
                yield os.path.relpath(os.path.join(dirpath, name), ROOT)


def read_text(path):
    """The file's text, or None when it is not UTF-8 text (images, fuzz inputs)."""
    try:
        with open(os.path.join(ROOT, path), encoding='utf-8') as f:
            return f.read()
    except UnicodeDecodeError:
        return None


def check_sizes(problems):
    for path in walk(SIZED):
        if path.endswith(SOURCE):
            n = read_text(path).count('\n')
            if n > MAX_LINES:
                problems.append('%s: %d lines (at most %d: split it by what it owns)' %
                                (path, n, MAX_LINES))


def check_option_tests(problems):
    for path in walk(PARSED):
        if not path.endswith(SOURCE) or path == OPTION_PARSER:
            continue
        found = OPTION_TEST.findall(read_text(path))
        if len(found) >= MAX_OPTION_TESTS:
            problems.append('%s: %d string comparisons against option names (fewer than %d: '
                            'give the options a table for %s)' %
                            (path, len(found), MAX_OPTION_TESTS, OPTION_PARSER))


def check_words(problems):
    paths = list(walk(WORDED)) + [p for p in WORDED_FILES if os.path.isfile(os.path.join(ROOT, p))]
    for path in paths:
        text = read_text(path)
        if text is None:
            continue
        for n, line in enumerate(text.split('\n'), 1):
            m = WORDS.search(line)
            if m:
                problems.append('%s:%d: "%s" speaks of how the work was done, not of the '
                                'software' % (path, n, m.group(0)))


def main():
    problems = []
    check_sizes(problems)
    check_option_tests(problems)
    check_words(problems)
    for p in problems:
        print(p)
    print('check_source: %d problem(s)' % len(problems))
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
