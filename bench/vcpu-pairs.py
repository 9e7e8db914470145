#!/usr/bin/env python3
"""vcpu-pairs.py: whether two of the machine's CPUs share a physical core (hyperthreads a VM
may not report): the speed of a busy loop on CPU 0 alone, then beside a busy loop on each
other CPU k, as a fraction of alone (about 0.5-0.7 for siblings of one core, about 1 for
separate cores), each the best of 3 samples. Prints one line per k, then the pairs below 0.8.
  bench/vcpu-pairs.py [SECONDS_PER_CASE]   (default 0.3)"""
import multiprocessing as mp
import os
import sys
import time


def spin(cpu, stop):
    os.sched_setaffinity(0, {cpu})
    x = 0
    while not stop.is_set():
        for _ in range(10000):
            x += 1


def loops(seconds):
    os.sched_setaffinity(0, {0})
    n, x, end = 0, 0, time.monotonic() + seconds
    while time.monotonic() < end:
        for _ in range(10000):
            x += 1
        n += 1
    return n


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 0.3
    cpus = sorted(os.sched_getaffinity(0))
    alone = max(loops(seconds) for _ in range(3))
    low = []
    for k in cpus[1:]:
        stop = mp.Event()
        p = mp.Process(target=spin, args=(k, stop))
        p.start()
        time.sleep(0.05)
        beside = max(loops(seconds) for _ in range(3))  # best of 3, as alone
        stop.set()
        p.join()
        r = beside / alone
        print("cpu 0 beside cpu %d: %.2f of alone" % (k, r))
        if r < 0.8:
            low.append(k)
    print("pairs below 0.8: %s" % (", ".join("0-%d" % k for k in low) or "none"))


if __name__ == "__main__":
    main()
