/* test_cores.c: the cgroup CPU quota parser behind the default --jobs and --threads, on cgroup
 * v2 and v1 trees written into a temporary directory. */
#define _XOPEN_SOURCE 700
#include "pool.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[64];
static int failures;

/* Writes text to root/rel, making its directories. */
static void put(const char *rel, const char *text)
{
  char p[512];
  snprintf(p, sizeof p, "%s/%s", root, rel);
  for (char *s = strchr(p + strlen(root) + 1, '/'); s; s = strchr(s + 1, '/')) {
    *s = '\0';
    if (mkdir(p, 0755) < 0 && errno != EEXIST) {
      perror(p);
      exit(1);
    }
    *s = '/';
  }
  FILE *f = fopen(p, "w");
  if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
    perror(p);
    exit(1);
  }
}

static void fresh(void)
{
  char cmd[256];
  snprintf(cmd, sizeof cmd, "rm -rf %s/proc %s/sys", root, root);
  if (system(cmd) != 0)
    exit(1);
}

static void expect(const char *what, int want)
{
  int got = gpuimg_cpu_quota(root);
  if (got != want) {
    fprintf(stderr, "test_cores: FAIL: %s: quota %d CPUs, expected %d\n", what, got, want);
    failures++;
  }
}

static void cgroup_v2(void)
{
  fresh();
  put("proc/self/cgroup", "0::/slurm/job1/step0\n");
  put("sys/fs/cgroup/cpu.max", "max 100000\n");
  put("sys/fs/cgroup/slurm/job1/cpu.max", "200000 100000\n");
  put("sys/fs/cgroup/slurm/job1/step0/cpu.max", "max 100000\n");
  expect("v2, the job's quota above the step", 2);
  put("sys/fs/cgroup/slurm/job1/step0/cpu.max", "150000 100000\n");
  expect("v2, 1.5 CPUs round up", 2);
  put("sys/fs/cgroup/slurm/cpu.max", "50000 100000\n");
  expect("v2, half a CPU is one", 1);
  fresh();
  put("proc/self/cgroup", "0::/host/path/not/here\n");
  put("sys/fs/cgroup/cpu.max", "400000 100000\n");
  expect("v2 in a cgroup namespace (the mount is the cgroup)", 4);
  put("sys/fs/cgroup/cpu.max", "max 100000\n");
  expect("v2 without a quota", 0);
}

static void cgroup_v1(void)
{
  fresh();
  put("proc/self/cgroup", "5:memory:/docker/abc\n4:cpu,cpuacct:/docker/abc\n0::/\n");
  put("sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_quota_us", "300000\n");
  put("sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_period_us", "100000\n");
  expect("v1 cpu,cpuacct", 3);
  put("sys/fs/cgroup/cpu,cpuacct/docker/cpu.cfs_quota_us", "100000\n");
  put("sys/fs/cgroup/cpu,cpuacct/docker/cpu.cfs_period_us", "100000\n");
  expect("v1, the parent's smaller quota", 1);
  fresh();
  put("proc/self/cgroup", "1:cpu:/gpuimg\n2:cpuset:/\n");
  put("sys/fs/cgroup/cpu/gpuimg/cpu.cfs_quota_us", "-1\n");
  put("sys/fs/cgroup/cpu/gpuimg/cpu.cfs_period_us", "100000\n");
  expect("v1 without a quota", 0);
  put("sys/fs/cgroup/cpu/gpuimg/cpu.cfs_quota_us", "250000\n");
  expect("v1 cpu", 3);
  put("proc/self/cgroup", "1:cpuset:/gpuimg\n");
  expect("v1 cpuset is not the cpu controller", 0);
  fresh();
  expect("no /proc/self/cgroup", 0);
}

int main(void)
{
  snprintf(root, sizeof root, "/tmp/gpuimg-cores.XXXXXX");
  if (!mkdtemp(root)) {
    perror("mkdtemp");
    return 1;
  }
  cgroup_v2();
  cgroup_v1();
  fresh();
  rmdir(root);
  int n = gpuimg_cpu_cores();
  if (n < 1 || n > 1024) {
    fprintf(stderr, "test_cores: FAIL: gpuimg_cpu_cores() = %d\n", n);
    failures++;
  }
  if (!failures)
    printf("test_cores: cgroup v2 and v1 quotas parsed; %d usable cores here\n", n);
  return failures ? 1 : 0;
}
