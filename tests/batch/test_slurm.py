#!/usr/bin/env python3
# test_slurm.py: the README's Slurm recipe run on a real one-node Slurm started here.
"""Starts munged, slurmctld and slurmd for this machine in a temporary directory (its own
slurm.conf, state directories and free ports; as root), submits the README's script (the
first ```bash block with #SBATCH, taken from README.md itself) as an array with a non-1 start
and a step, waits, checks that the union of the outputs equals an unsharded run byte for
byte, re-submits one task after deleting some outputs (--skip-existing finishes them), and
stops the daemons by PID. Installs nothing: exits 77 (skipped) when slurm-wlm or munge is
not installed (.ci/run installs them), or when not root (slurmd must run as root).

The daemons' Unix sockets (munged's, and slurmstepd's in slurmd's spool directory, named
NODE_JOB.STEP[.COMPONENT]) live in a private directory made under /tmp with a short name, not
in the build folder: a socket's path holds at most 107 bytes, which a clone's path of 55
characters already passes. When even that path cannot hold the longest of them (a very long
host name), the test fails at once saying so. Configuration, state and logs stay in the build
folder; the daemons are stopped and the socket directory removed on any exit (a SIGTERM
included), so the test can run again and beside another run of itself.

Environment: GPUIMG (the binary), GPUIMG_TEST_DIR (scratch: slurm/ under it),
GPUIMG_SOURCE_ROOT (where README.md is).
"""

import glob
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True
GPUIMG = os.path.abspath(os.environ.get("GPUIMG", ""))
ROOT = os.environ.get("GPUIMG_SOURCE_ROOT",
                      os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
WORK = os.path.join(os.path.abspath(os.environ.get("GPUIMG_TEST_DIR", ".")), "slurm")
ARRAY, RERUN = "3-15:3", "6"  # tasks 3, 6, 9, 12, 15: 5 shards
NIMAGES = 30
SUN_PATH = 108  # sizeof(struct sockaddr_un.sun_path) on Linux, the terminating NUL included
UINT32_DIGITS = len(str(2 ** 32 - 1))


class Fail(Exception):
    pass


def check(ok, what):
    if not ok:
        raise Fail(what)


def sh(argv, **kw):
    return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60,
                          check=False, **kw)


def recipe():
    text = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    for block in re.findall(r"```bash\n(.*?)```", text, re.S):
        if "#SBATCH" in block:
            return block
    raise Fail("README.md has no ```bash block with #SBATCH")


def free_ports(n):
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def socket_paths(sockets, host):
    """The longest path of each Unix socket the daemons make under sockets."""
    stepd = "%s_%s.%s.%s" % (host, "9" * UINT32_DIGITS, "9" * UINT32_DIGITS, "9" * UINT32_DIGITS)
    return {"munged": os.path.join(sockets, "munge.socket"),
            "slurmstepd": os.path.join(sockets, "spool", stepd)}


def check_socket_paths(sockets, host):
    for daemon, p in socket_paths(sockets, host).items():
        check(len(os.fsencode(p)) < SUN_PATH,
              "%s's socket path %s is %d bytes, over the %d a Unix socket's path can hold "
              "(host name %r)" % (daemon, p, len(os.fsencode(p)), SUN_PATH - 1, host))


def write_config(d, sockets, host):
    ctl, node = free_ports(2)
    cpus = max(2, os.cpu_count() or 2)
    conf = """ClusterName=gpuimgtest
SlurmctldHost={host}(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort={ctl}
SlurmdPort={node}
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={sockets}/munge.socket
StateSaveLocation={d}/state
SlurmdSpoolDir={sockets}/spool
SlurmctldPidFile={d}/slurmctld.pid
SlurmdPidFile={d}/slurmd.pid
SlurmctldLogFile={d}/slurmctld.log
SlurmdLogFile={d}/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
MinJobAge=600
NodeName={host} NodeAddr=127.0.0.1 CPUs={cpus} State=UNKNOWN
PartitionName=test Nodes={host} Default=YES MaxTime=INFINITE State=UP
""".format(host=host, ctl=ctl, node=node, d=d, sockets=sockets, cpus=cpus)
    with open(os.path.join(d, "slurm.conf"), "w") as f:
        f.write(conf)
    os.makedirs(os.path.join(d, "state"))
    os.makedirs(os.path.join(sockets, "spool"))


def start_daemons(d, sockets, host, procs):
    key = os.path.join(d, "munge.key")
    with open(key, "wb") as f:
        f.write(os.urandom(1024))
    os.chmod(key, 0o400)
    munge = [shutil.which("munged"), "-F", "-f", "--key-file", key, "--socket",
             os.path.join(sockets, "munge.socket"), "--pid-file", os.path.join(d, "munged.pid"),
             "--log-file", os.path.join(d, "munged.log"), "--seed-file",
             os.path.join(d, "munged.seed")]
    conf = os.path.join(d, "slurm.conf")
    for argv in (munge, [shutil.which("slurmctld"), "-D", "-i", "-f", conf],
                 [shutil.which("slurmd"), "-D", "-f", conf, "-N", host]):
        log = open(os.path.join(d, os.path.basename(argv[0]) + ".out"), "wb")
        procs.append(subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, cwd=d))
        if len(procs) == 1:
            deadline = time.monotonic() + 20
            while not os.path.exists(os.path.join(sockets, "munge.socket")):
                check(time.monotonic() < deadline and procs[0].poll() is None,
                      "munged did not start: %s" % open(log.name).read())
                time.sleep(0.1)
    deadline = time.monotonic() + 60
    while True:
        p = sh(["sinfo", "-h", "-N", "-o", "%T"])
        if p.returncode == 0 and p.stdout.strip().startswith(b"idle"):
            return
        for q in procs:
            check(q.poll() is None, "%s exited (%s); see %s" % (q.args[0], q.returncode, d))
        check(time.monotonic() < deadline, "the node is not idle: %r %r" % (p.stdout, p.stderr))
        time.sleep(0.5)


def stop_daemons(procs):
    for p in reversed(procs):
        if p.poll() is None:
            os.kill(p.pid, signal.SIGTERM)
    for p in reversed(procs):
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.kill(p.pid, signal.SIGKILL)
            p.wait()


def submit(work, array):
    p = sh(["sbatch", "--parsable", "--array=" + array, "--cpus-per-task=1", "gray.sh"],
           cwd=work)
    check(p.returncode == 0, "sbatch: %r" % p.stderr)
    job = p.stdout.decode().strip().split(";")[0]
    deadline = time.monotonic() + 300
    while sh(["squeue", "-h", "-j", job]).stdout.strip():
        check(time.monotonic() < deadline, "job %s still queued after 300 s" % job)
        # A task that could not start is requeued, again and again: say why at once.
        restarts = re.findall(rb"Restarts=([1-9][0-9]*)", sh(["scontrol", "-o", "show", "job",
                                                               job]).stdout)
        check(not restarts, "job %s was requeued (its tasks could not start); slurmd.log ends: "
              "%s" % (job, log_tail("slurmd.log")))
        time.sleep(1)
    p = sh(["scontrol", "-o", "show", "job", job])
    states = re.findall(rb"JobState=(\w+)", p.stdout)
    check(states and all(s == b"COMPLETED" for s in states),
          "job %s: %r; slurm-*.out: %r" % (job, states, [open(f).read() for f in
                                                        glob.glob(work + "/slurm-*.out")]))
    return job


def log_tail(name, lines=8):
    try:
        d = os.path.dirname(os.environ["SLURM_CONF"])
        with open(os.path.join(d, name), errors="replace") as f:
            return "".join(f.readlines()[-lines:])
    except OSError as e:
        return str(e)


def outputs(d):
    return {n: open(os.path.join(d, n), "rb").read() for n in os.listdir(d)}


def run_recipe(d):
    work = os.path.join(d, "work")
    os.makedirs(os.path.join(work, "in"))
    for i in range(NIMAGES):
        p = sh([GPUIMG, "--backend", "cpu", "blur", "-r", str(i % 5), "-q", "sample:",
                os.path.join(work, "in", "p%02d.png" % i)])
        check(p.returncode == 0, "making inputs: %r" % p.stderr)
    with open(os.path.join(work, "list.txt"), "w") as f:
        f.write("".join("in/p%02d.png\n" % i for i in range(NIMAGES)))
    with open(os.path.join(work, "gray.sh"), "w") as f:
        f.write(recipe())
    p = sh([GPUIMG, "--backend", "cpu", "gray", "-q", "-o", "../ref", "--from", "list.txt"],
           cwd=work)
    check(p.returncode == 0, "the unsharded run: %r" % p.stderr)
    ref = outputs(os.path.join(d, "ref"))
    t0 = time.monotonic()
    job = submit(work, ARRAY)
    print("array %s: job %s done in %.1f s" % (ARRAY, job, time.monotonic() - t0))
    check(outputs(os.path.join(work, "out")) == ref, "the shards' union differs from the "
          "unsharded run")
    reports = sorted(glob.glob(os.path.join(work, "reports", "rep-%s_*.jsonl" % job)))
    p = sh([GPUIMG, "summary", "--format", "json"] + reports)
    t = json.loads(p.stdout)
    check(len(reports) == 5 and t["shards"] == 5 and t["missing_shards"] == [] and
          t["converted"] == NIMAGES and t["images"] == NIMAGES, "summary: %r" % t)
    gone = sorted(ref)[::7]
    for n in gone:
        os.unlink(os.path.join(work, "out", n))
    job2 = submit(work, RERUN)
    check(outputs(os.path.join(work, "out")) == ref, "the re-run's outputs differ")
    s = json.loads(open(glob.glob(os.path.join(work, "reports", "rep-%s_*.jsonl" % job2))[0])
                   .read().splitlines()[-1])
    check(s["converted"] == len(gone) and s["existing"] == NIMAGES - len(gone) and
          len(glob.glob(os.path.join(work, "reports", "*.jsonl"))) == 6,
          "the re-run's summary %r (earlier reports kept)" % s)
    print("re-run %s: %d converted, %d existing" % (job2, s["converted"], s["existing"]))


def main():
    need = ["munged", "slurmctld", "slurmd", "sbatch", "squeue", "scontrol", "sinfo"]
    missing = [n for n in need if not shutil.which(n)]
    if missing:
        print("skipped: Slurm is not installed (no %s; Debian packages slurm-wlm and munge)"
              % ", ".join(missing))
        return 77
    if os.geteuid() != 0:
        print("skipped: starting slurmd needs root")
        return 77
    if not os.access(GPUIMG, os.X_OK):
        print("test_slurm.py: set GPUIMG to the gpuimg binary")
        return 2
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    d = os.path.join(WORK, "slurm")
    os.makedirs(d, mode=0o700)
    host = socket.gethostname().split(".")[0]
    os.environ.update(SLURM_CONF=os.path.join(d, "slurm.conf"), GPUIMG=GPUIMG)
    procs = []
    t0 = time.monotonic()
    # meson's timeout ends a test with SIGTERM: leave through the finally below all the same.
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda sig, frame: sys.exit(128 + sig))
    sockets = tempfile.mkdtemp(prefix="gs", dir="/tmp")  # 0700, this run's alone
    try:
        check_socket_paths(sockets, host)
        write_config(d, sockets, host)
        start_daemons(d, sockets, host, procs)
        run_recipe(WORK)
    except Fail as e:
        print("FAIL: %s (logs in %s)" % (e, d))
        return 1
    finally:
        stop_daemons(procs)
        shutil.rmtree(sockets, ignore_errors=True)
    print("ok: the README's recipe on Slurm in %.1f s" % (time.monotonic() - t0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
