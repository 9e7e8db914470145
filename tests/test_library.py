#!/usr/bin/env python3
"""test_library.py: README's C example, built against libgpuimg as `meson install` installs it.

Installs the build into a temporary directory (DESTDIR), compiles the first ```c block of
README.md with `pkg-config --cflags --libs gpuimg` from there, runs it on the built-in
sample's file and checks its output against `gpuimg gray then blur -r 4` byte for byte,
then checks its error path (a missing input: exit 3 and the reason); then library_memory.c,
the API on images in memory and its usage errors, built the same way."""
import os
import re
import shutil
import subprocess
import sys
import tempfile

SOURCE = os.environ['GPUIMG_SOURCE_ROOT']
BUILD = os.environ['GPUIMG_BUILD_ROOT']
GPUIMG = os.environ['GPUIMG']


def fail(msg):
    print('test_library: FAIL: ' + msg)
    sys.exit(1)


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def readme_example():
    with open(os.path.join(SOURCE, 'README.md'), encoding='utf-8') as f:
        m = re.search(r'^```c\n(.*?)^```', f.read(), re.S | re.M)
    if not m:
        fail('README.md has no ```c block')
    return m.group(1)


def install(dest):
    res = run(['meson', 'install', '-C', BUILD, '--no-rebuild', '--quiet', '--destdir', dest])
    if res.returncode != 0:
        fail('meson install: ' + res.stdout + res.stderr)
    pcs = [os.path.join(d, f) for d, _, fs in os.walk(dest) for f in fs if f == 'gpuimg.pc']
    if len(pcs) != 1:
        fail('gpuimg.pc installed %d times' % len(pcs))
    env = dict(os.environ, PKG_CONFIG_PATH=os.path.dirname(pcs[0]), PKG_CONFIG_SYSROOT_DIR=dest)
    res = run(['pkg-config', '--cflags', '--libs', 'gpuimg'], env=env)
    if res.returncode != 0:
        fail('pkg-config gpuimg: ' + res.stderr)
    return res.stdout.split()


def main():
    tmp = tempfile.mkdtemp(prefix='gpuimg-library-')
    try:
        flags = install(os.path.join(tmp, 'root'))
        src = os.path.join(tmp, 'blur.c')
        with open(src, 'w', encoding='utf-8') as f:
            f.write(readme_example())
        exe = os.path.join(tmp, 'blur')
        extra = os.environ.get('GPUIMG_EXAMPLE_CFLAGS', '').split()
        res = run(['cc', '-std=c11', '-Wall', '-Wextra', '-Werror'] + extra + [src, '-o', exe] +
                  flags)
        if res.returncode != 0:
            fail('the README example does not build: ' + res.stderr)
        libdirs = [f[2:] for f in flags if f.startswith('-L')]
        env = dict(os.environ, LD_LIBRARY_PATH=':'.join(libdirs))
        sample = os.path.join(SOURCE, 'assets', 'sample.png')
        got, want = os.path.join(tmp, 'got.png'), os.path.join(tmp, 'want.png')
        res = run([exe, sample, got], env=env)
        if res.returncode != 0:
            fail('the example failed: exit %d: %s' % (res.returncode, res.stderr))
        lines = res.stdout.splitlines()
        if not lines or not re.fullmatch(r'backend (cpu|cuda)', lines[0]):
            fail('first line %r' % (lines[:1],))
        names = [l.split()[0] for l in lines[1:]]
        for stage in ['read', 'decode', 'gray', 'blur', 'encode', 'write']:
            if stage not in names:
                fail('no %s stage in %r' % (stage, names))
        ref = run([GPUIMG, 'gray', 'then', 'blur', '-r', '4', '--backend', 'cpu', sample, want])
        if ref.returncode != 0:
            fail('gpuimg: ' + ref.stderr)
        if open(got, 'rb').read() != open(want, 'rb').read():
            fail('the example wrote other bytes than gpuimg gray then blur -r 4')
        missing = os.path.join(tmp, 'missing.png')
        res = run([exe, missing, got], env=env)
        if res.returncode != 3 or 'blur: %s: ' % missing not in res.stderr:
            fail('missing input: exit %d, %r' % (res.returncode, res.stderr))
        mem = os.path.join(tmp, 'memory')
        res = run(['cc', '-std=c11', '-Wall', '-Wextra', '-Werror'] + extra +
                  [os.path.join(SOURCE, 'tests', 'library_memory.c'), '-o', mem] + flags)
        if res.returncode != 0:
            fail('library_memory.c does not build: ' + res.stderr)
        res = run([mem], env=env)
        if res.returncode != 0 or res.stdout.strip() != 'ok ' + os.environ['GPUIMG_VERSION']:
            fail('library_memory: exit %d: %s%s' % (res.returncode, res.stdout, res.stderr))
        print('test_library: OK (%s; %d stages; in memory)' % (lines[0], len(names)))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == '__main__':
    main()
