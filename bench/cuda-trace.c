/* cuda-trace.c: a CUPTI injection library that times every CUDA runtime and driver API call
 * of a process (libraries' own calls included, such as nvJPEG's), for finding where a set-up's
 * time goes on a machine without nsys, perf or strace.
 * Build: cc -shared -fPIC -O2 bench/cuda-trace.c -I$CUDA/include -L$CUDA/lib64 -lcupti
 *        -o libcudatrace.so
 * Use:   CUDA_INJECTION64_PATH=$PWD/libcudatrace.so CUDA_TRACE_MS=2 program ...
 * Prints to standard error every call of at least CUDA_TRACE_MS ms (default 1) as it ends
 * (ms since the injection, thread, domain, name, ms) and module loads, then at exit the
 * 25 names with the most time (calls, total ms, longest). A driver call made inside a runtime
 * call is counted in both. */
#define _GNU_SOURCE
#include <cupti.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAX_NAMES 2048

typedef struct {
  const char *name;
  int domain;
  long calls;
  double ms, longest;
} total_t;

static total_t totals[MAX_NAMES];
static int ntotals;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static double t0, threshold = 1.0;

static double now_ms(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void add(const char *name, int domain, double ms)
{
  pthread_mutex_lock(&mu);
  int i = 0;
  while (i < ntotals && !(totals[i].name == name && totals[i].domain == domain))
    i++;
  if (i == ntotals && ntotals < MAX_NAMES)
    totals[ntotals++] = (total_t){name, domain, 0, 0, 0};
  if (i < ntotals) {
    totals[i].calls++;
    totals[i].ms += ms;
    if (ms > totals[i].longest)
      totals[i].longest = ms;
  }
  pthread_mutex_unlock(&mu);
}

static int by_time(const void *a, const void *b)
{
  double x = ((const total_t *)a)->ms, y = ((const total_t *)b)->ms;
  return (x < y) - (x > y);
}

static void report(void)
{
  pthread_mutex_lock(&mu);
  qsort(totals, (size_t)ntotals, sizeof *totals, by_time);
  fprintf(stderr, "cuda-trace: %d names; the most time:\n", ntotals);
  for (int i = 0; i < ntotals && i < 25; i++)
    fprintf(stderr, "cuda-trace:   %-7s %-40s %7ld calls %10.1f ms  longest %8.1f\n",
            totals[i].domain == CUPTI_CB_DOMAIN_DRIVER_API ? "driver" : "runtime", totals[i].name,
            totals[i].calls, totals[i].ms, totals[i].longest);
  pthread_mutex_unlock(&mu);
}

static void CUPTIAPI callback(void *user, CUpti_CallbackDomain domain, CUpti_CallbackId id,
                              const void *data)
{
  (void)user;
  if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
    if (id == CUPTI_CBID_RESOURCE_MODULE_LOADED)
      fprintf(stderr, "cuda-trace: %9.1f ms  thread %ld  module loaded\n", now_ms() - t0,
              (long)syscall(SYS_gettid));
    return;
  }
  const CUpti_CallbackData *d = data;
  if (d->callbackSite == CUPTI_API_ENTER) {
    double t = now_ms();
    memcpy(d->correlationData, &t, sizeof t);
    return;
  }
  double start;
  memcpy(&start, d->correlationData, sizeof start);
  double ms = now_ms() - start;
  add(d->functionName, domain, ms);
  if (ms >= threshold)
    fprintf(stderr, "cuda-trace: %9.1f ms  thread %ld  %-7s %-36s %8.2f ms\n", start - t0,
            (long)syscall(SYS_gettid), domain == CUPTI_CB_DOMAIN_DRIVER_API ? "driver" : "runtime",
            d->functionName, ms);
}

int InitializeInjection(void)
{
  t0 = now_ms();
  const char *v = getenv("CUDA_TRACE_MS");
  if (v)
    threshold = atof(v);
  CUpti_SubscriberHandle sub;
  if (cuptiSubscribe(&sub, callback, NULL) != CUPTI_SUCCESS) {
    fprintf(stderr, "cuda-trace: cuptiSubscribe failed\n");
    return 0;
  }
  cuptiEnableDomain(1, sub, CUPTI_CB_DOMAIN_DRIVER_API);
  cuptiEnableDomain(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API);
  cuptiEnableDomain(1, sub, CUPTI_CB_DOMAIN_RESOURCE);
  atexit(report);
  fprintf(stderr, "cuda-trace: on (calls of %.1f ms or more)\n", threshold);
  return 1;
}
