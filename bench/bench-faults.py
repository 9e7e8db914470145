#!/usr/bin/env python3
"""bench-faults.py: where a batch's CPU time goes between user and system (page faults): runs
gpuimg on a list of inputs under each configuration in turns, ROUNDS times, and prints per run
the wall time, img/s, user and system CPU seconds and minor page faults (per image), from the
child's rusage (os.wait4), then the CPU seconds of its threads by name (gpuimg names its own by
role: gpuimg-worker, gpuimg-devpath, gpuimg-jpegdec, ...), read from /proc every 20 ms while
it runs (a thread's last reading before it ends: what it used in its last 20 ms is missed);
with FAULTS_TIMELINE=1 also the cores each name used in each quarter second.

  bench/bench-faults.py BIN LIST OUTDIR ROUNDS 'NAME|ENV=V ...|ARGS' ...

Each configuration is NAME|ENV|ARGS: ENV a space-separated list of NAME=value set for that
run (empty: none), ARGS gpuimg's arguments before -o (for example: resize --width 256 --format
jpg). OUTDIR is emptied before each run."""
import os
import shlex
import shutil
import subprocess
import sys
import threading
import time

TICK = os.sysconf("SC_CLK_TCK")


SLICE = 0.25  # the timeline's slices, s


def sample_threads(pid, seen, done, timeline):
    """Every 20 ms until done: each thread's name, user and system ticks, by thread id; and
    timeline[slice][name]: the ticks its threads used in each SLICE seconds."""
    t0 = time.monotonic()
    while not done.is_set():
        k = int((time.monotonic() - t0) / SLICE)
        try:
            tids = os.listdir("/proc/%d/task" % pid)
        except OSError:
            break
        for tid in tids:
            try:
                with open("/proc/%d/task/%s/stat" % (pid, tid)) as f:
                    stat = f.read()
            except OSError:
                continue
            name = stat[stat.index("(") + 1:stat.rindex(")")]
            fields = stat[stat.rindex(")") + 2:].split()
            ticks = int(fields[11]) + int(fields[12])
            before = seen.get(tid, (name, 0, 0))
            used = ticks - before[1] - before[2]
            if used:
                row = timeline.setdefault(k, {})
                row[name] = row.get(name, 0) + used
            seen[tid] = (name, int(fields[11]), int(fields[12]))
        done.wait(0.02)


def by_name(seen):
    groups = {}
    for name, user, system in seen.values():
        g = groups.setdefault(name, [0, 0.0, 0.0])
        g[0] += 1
        g[1] += user / TICK
        g[2] += system / TICK
    return sorted(groups.items(), key=lambda kv: -(kv[1][1] + kv[1][2]))


def run(binary, listfile, outdir, env_words, args):
    shutil.rmtree(outdir, ignore_errors=True)
    os.makedirs(outdir)
    env = dict(os.environ)
    for w in env_words.split():
        k, _, v = w.partition("=")
        env[k] = v
    cmd = [binary] + shlex.split(args) + ["-q", "-o", outdir, "--from", listfile]
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    seen, done, timeline = {}, threading.Event(), {}
    sampler = threading.Thread(target=sample_threads, args=(p.pid, seen, done, timeline))
    sampler.start()
    err = p.stderr.read().decode(errors="replace").strip()
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    done.set()
    sampler.join()
    p.stderr.close()
    return wall, status, ru, err, by_name(seen), timeline


def main(argv):
    if len(argv) < 6:
        sys.stderr.write(__doc__)
        return 2
    binary, listfile, outdir, rounds = argv[1], argv[2], argv[3], int(argv[4])
    configs = [c.split("|") for c in argv[5:]]
    for c in configs:
        if len(c) != 3:
            sys.stderr.write("bench-faults.py: '%s' is not NAME|ENV|ARGS\n" % "|".join(c))
            return 2
    n = sum(1 for line in open(listfile) if line.strip())
    print("| run | config | s | img/s | user s | system s | faults | faults/img |")
    print("|---|---|--:|--:|--:|--:|--:|--:|")
    for r in range(rounds):
        for name, env_words, args in configs:
            wall, status, ru, err, threads, timeline = run(binary, listfile, outdir, env_words,
                                                           args)
            if status != 0:
                print("| %d | %s | failed (exit %d): %s |" % (r + 1, name,
                                                             os.waitstatus_to_exitcode(status),
                                                             err[:200]))
                continue
            print("| %d | %s | %.3f | %.0f | %.2f | %.2f | %d | %.1f |" %
                  (r + 1, name, wall, n / wall, ru.ru_utime, ru.ru_stime, ru.ru_minflt,
                   ru.ru_minflt / n))
            print("|  | threads: " + "; ".join("%s x%d %.2f+%.2f s" % (k, v[0], v[1], v[2])
                                             for k, v in threads[:8]) + " |")
            if os.environ.get("FAULTS_TIMELINE"):
                for k in sorted(timeline):
                    row = timeline[k]
                    print("|  | %.2f s: cores " % (k * SLICE) + ", ".join(
                        "%s %.1f" % (name, row[name] / TICK / SLICE)
                        for name in sorted(row, key=lambda x: -row[x]) if row[name] > 1) + " |")
            sys.stdout.flush()
    shutil.rmtree(outdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
