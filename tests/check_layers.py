#!/usr/bin/env python3
"""check_layers.py: fails when a source file includes a header from a layer above its own.

The layers, lowest first: include/ (the public header), src/base, kernels/, src/codecs,
src/ops, src/backends, src/engine, src/cli. A file may include headers of its own layer and
of the layers below; it names them bare ("codec.h"), so each header's layer is the folder
that holds it. Also checks that every file opens with a comment saying what it owns, and
that no more than three .c files sit directly in src/.
"""
import os
import re
import sys

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                       os.path.join(os.path.dirname(__file__), '..'))
LAYERS = ['include', 'src/base', 'kernels', 'src/codecs', 'src/ops', 'src/backends',
          'src/engine', 'src/cli']
SOURCE = ('.c', '.h', '.cu', '.cuh')
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def layer_files():
    files = {}
    for rank, layer in enumerate(LAYERS):
        folder = os.path.join(ROOT, layer)
        if not os.path.isdir(folder):
            continue
        for name in sorted(os.listdir(folder)):
            if name.endswith(SOURCE):
                files[os.path.join(layer, name)] = rank
    return files


def main():
    files = layer_files()
    headers = {}
    for path, rank in files.items():
        if path.endswith(('.h', '.cuh')):
            headers.setdefault(os.path.basename(path), []).append((rank, path))
    problems = []
    for name, places in headers.items():
        if len(places) > 1:
            problems.append('header %s is in %s' % (name, ', '.join(p for _, p in places)))
    for path, rank in sorted(files.items()):
        with open(os.path.join(ROOT, path), encoding='utf-8') as f:
            text = f.read()
        if not text.startswith(('/*', '//')):
            problems.append('%s: does not open with a comment saying what it owns' % path)
        for inc in INCLUDE.findall(text):
            places = headers.get(os.path.basename(inc))
            if not places:
                continue  # generated files (the operation registry) and system headers
            inc_rank, inc_path = places[0]
            if inc_rank > rank:
                problems.append('%s includes %s (%s is above %s)' %
                                (path, inc_path, LAYERS[inc_rank], LAYERS[rank]))
    top = [n for n in os.listdir(os.path.join(ROOT, 'src')) if n.endswith('.c')]
    if len(top) > 3:
        problems.append('src/ holds %d .c files directly (at most 3)' % len(top))
    for p in problems:
        print('check_layers: ' + p)
    print('check_layers: %d files in %d layers, %d problems' %
          (len(files), len(LAYERS), len(problems)))
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
