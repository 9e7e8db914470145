/* pool.h: a small pool of threads that run the parts of one task with the calling thread, and
 * the count of CPU cores this process may use. */
#ifndef GPUIMG_POOL_H
#define GPUIMG_POOL_H

#include "base.h"
#include "buf.h"

typedef struct gpuimg_pool gpuimg_pool_t;

/* The CPU cores this process may use (cores.c): sched_getaffinity()'s count, which honours
 * taskset, Slurm's binding and cgroup cpusets (else the online cores), capped by the cgroup
 * CPU quota; at least 1, at most 1024. */
int gpuimg_cpu_cores(void);
/* The CPUs the cgroup v2 cpu.max or v1 cpu.cfs_quota_us/cpu.cfs_period_us of this process's
 * cgroup and its ancestors allow, rounded up; 0 when none sets a quota. root prefixes
 * /proc/self/cgroup and /sys/fs/cgroup ("" for the running system; tests pass a copy). */
int gpuimg_cpu_quota(const char *root);

/* A pool that runs tasks on nthreads threads: nthreads - 1 of its own (started now, signals
 * blocked, sleeping between tasks) and the caller of gpuimg_pool_run(). NULL with the error
 * set. The caller owns it: gpuimg_pool_free(). */
gpuimg_pool_t *gpuimg_pool_create(int nthreads);

/* Runs part(arg, i) for every i in 0..nparts-1, each once, spread over the pool's threads and
 * the calling thread, and returns when every part is done: 0, or -1 when a part returned -1,
 * with the first such part's error set on the calling thread. One task at a time per pool. */
int gpuimg_pool_run(gpuimg_pool_t *pool, int nparts, int (*part)(void *arg, int i), void *arg);

/* Stops and joins the pool's threads and frees it (NULL: nothing). */
void gpuimg_pool_free(gpuimg_pool_t *pool);

/* Makes nparts parts of an output, each into a buffer of its own, on up to threads threads,
 * and hands them over in order: part(arg, i, buf) fills the empty buf with part i (on any
 * thread), take(arg, i, buf) then uses it on the calling thread, in order of i, and the
 * buffer is freed. The parts run a window at a time (a few per thread) so that few finished
 * buffers wait. With threads <= 1, or when no thread can start, each part is made and taken
 * in turn on the calling thread. 0, or -1 when a part or a take returned -1 (with its error
 * set on the calling thread). */
int gpuimg_pool_ordered(int threads, int nparts, int (*part)(void *arg, int i, gpuimg_buf_t *buf),
                        int (*take)(void *arg, int i, gpuimg_buf_t *buf), void *arg);

#endif
