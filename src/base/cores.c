/* cores.c: how many CPUs this process may use: its affinity mask and its cgroup's CPU quota,
 * what `nproc` would say under Slurm, taskset or a container. */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT_S */
#include "pool.h"

#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_CORES 1024

/* The CPUs a quota of quota microseconds per period allows, rounded up (1.5 CPUs keep two
 * threads busy part of the time); 0 for no quota (quota < 0) or a nonsense period. */
static int quota_cpus(long long quota, long long period)
{
  if (quota < 0 || period <= 0)
    return 0;
  long long n = (quota + period - 1) / period;
  return n < 1 ? 1 : n > MAX_CORES ? MAX_CORES : (int)n;
}

/* The first number(s) of file dir/name: *a, and *b when the file holds two ("max" reads as
 * -1). The count read, 0 when the file is missing or unreadable. */
static int read_numbers(const char *dir, const char *name, long long *a, long long *b)
{
  char file[PATH_MAX + 64], first[32] = "";
  snprintf(file, sizeof file, "%s/%s", dir, name);
  FILE *f = fopen(file, "r");
  if (!f)
    return 0;
  int n = fscanf(f, "%31s %lld", first, b);
  fclose(f);
  if (n < 1)
    return 0;
  char *end;
  *a = strcmp(first, "max") == 0 ? -1 : strtoll(first, &end, 10);
  if (strcmp(first, "max") != 0 && *end)
    return 0;
  return n;
}

/* The quota of one cgroup directory: cgroup v2's cpu.max ("max 100000", "150000 100000") or
 * v1's cpu.cfs_quota_us and cpu.cfs_period_us; 0 when it sets none. */
static int dir_quota(const char *dir, int v2)
{
  long long quota, period = 100000;
  if (v2)
    return read_numbers(dir, "cpu.max", &quota, &period) >= 1 ? quota_cpus(quota, period) : 0;
  if (read_numbers(dir, "cpu.cfs_quota_us", &quota, &period) < 1 ||
      read_numbers(dir, "cpu.cfs_period_us", &period, &period) < 1)
    return 0;
  return quota_cpus(quota, period);
}

/* The smallest quota from mount/path up to mount (a parent's quota binds its children);
 * when mount/path does not exist (a cgroup namespace shows the host's path), mount alone. */
static int walk_quota(const char *mount, const char *path, int v2)
{
  char dir[PATH_MAX];
  size_t base = strlen(mount);
  snprintf(dir, sizeof dir, "%s%s", mount, path);
  if (access(dir, F_OK) != 0)
    dir[base] = '\0';
  int best = 0;
  for (;;) {
    int q = dir_quota(dir, v2);
    if (q > 0 && (best == 0 || q < best))
      best = q;
    char *slash = strrchr(dir + base, '/');
    if (!slash)
      break;
    *slash = '\0';
  }
  return best;
}

int gpuimg_cpu_quota(const char *root)
{
  char file[PATH_MAX], line[PATH_MAX], mount[PATH_MAX];
  snprintf(file, sizeof file, "%s/proc/self/cgroup", root);
  FILE *f = fopen(file, "r");
  int best = 0;
  if (!f)
    return 0;
  /* Lines "ID:CONTROLLERS:PATH": v2 is "0::PATH", v1's CPU controller "N:cpu,cpuacct:PATH". */
  while (fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = '\0';
    char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    if (!c2)
      continue;
    *c1 = *c2 = '\0';
    const char *ctrl = c1 + 1, *path = c2 + 1;
    int q = 0;
    if (!*ctrl && strcmp(line, "0") == 0) {
      snprintf(mount, sizeof mount, "%s/sys/fs/cgroup", root);
      q = walk_quota(mount, path, 1);
      if (q == 0) { /* the hybrid layout mounts v2 at unified/ */
        snprintf(mount, sizeof mount, "%s/sys/fs/cgroup/unified", root);
        q = walk_quota(mount, path, 1);
      }
    } else if (strstr(ctrl, "cpu")) {
      char list[256];
      snprintf(list, sizeof list, ",%s,", ctrl);
      if (!strstr(list, ",cpu,"))
        continue;
      snprintf(mount, sizeof mount, "%s/sys/fs/cgroup/%s", root, ctrl);
      if (access(mount, F_OK) != 0)
        snprintf(mount, sizeof mount, "%s/sys/fs/cgroup/cpu", root);
      q = walk_quota(mount, path, 0);
    }
    if (q > 0 && (best == 0 || q < best))
      best = q;
  }
  fclose(f);
  return best;
}

int gpuimg_cpu_cores(void)
{
  long n = 0;
  cpu_set_t *set = CPU_ALLOC(MAX_CORES);
  size_t size = CPU_ALLOC_SIZE(MAX_CORES);
  if (set && sched_getaffinity(0, size, set) == 0)
    n = CPU_COUNT_S(size, set);
  CPU_FREE(set);
  if (n < 1)
    n = sysconf(_SC_NPROCESSORS_ONLN);
  int quota = gpuimg_cpu_quota("");
  if (quota > 0 && quota < n)
    n = quota;
  return n < 1 ? 1 : n > MAX_CORES ? MAX_CORES : (int)n;
}
