/* bench_npp.c: NPP's side of the benchmark, the reference implementation (GPUIMG_HAVE_NPP). */
#include <string.h>

#if GPUIMG_HAVE_NPP
#include <npp.h>
#if defined(__has_include)
#if __has_include(<nppversion.h>)
#include <nppversion.h>
#endif
#endif
#endif

#include "bench.h"

#if GPUIMG_HAVE_NPP
/* NPP 13 has only the _Ctx functions and no nppGetStreamContext (deprecated in 12.9): the
 * context is filled in from the device's properties, as nppdefs.h documents field by field. */
static int npp_context_init(bench_t *b)
{
  NppStreamContext *nc = &b->npp_ctx;
  struct cudaDeviceProp prop;
  int dev = 0;
  unsigned flags = 0;
  memset(nc, 0, sizeof *nc);
  if (CUDA_OK(cudaGetDevice(&dev)) < 0 || CUDA_OK(cudaGetDeviceProperties(&prop, dev)) < 0 ||
      CUDA_OK(cudaStreamGetFlags(b->stream, &flags)) < 0)
    return -1;
  nc->hStream = b->stream;
  nc->nCudaDeviceId = dev;
  nc->nMultiProcessorCount = prop.multiProcessorCount;
  nc->nMaxThreadsPerMultiProcessor = prop.maxThreadsPerMultiProcessor;
  nc->nMaxThreadsPerBlock = prop.maxThreadsPerBlock;
  nc->nSharedMemPerBlock = prop.sharedMemPerBlock;
  nc->nCudaDevAttrComputeCapabilityMajor = prop.major;
  nc->nCudaDevAttrComputeCapabilityMinor = prop.minor;
  nc->nStreamFlags = flags;
  return 0;
}

static int npp_run(bench_t *b, const size_state_t *s, const bench_case_t *c)
{
  NppiSize roi = {s->w, s->h};
  NppStatus st;
  if (c->kind == CASE_NPP_GRAY) {
    st = nppiRGBToGray_8u_C3C1R_Ctx(s->d_src, 3 * s->w, s->d_dst, s->w, roi, b->npp_ctx);
  } else {
    NppiSize mask = {2 * c->radius + 1, 2 * c->radius + 1};
    NppiPoint offset = {0, 0}, anchor = {c->radius, c->radius};
    st = nppiFilterBoxBorder_8u_C3R_Ctx(s->d_src, 3 * s->w, roi, offset, s->d_dst, 3 * s->w, roi,
                                        mask, anchor, NPP_BORDER_REPLICATE, b->npp_ctx);
  }
  if (st < 0) { /* > 0 are warnings */
    gpuimg_error_set(GPUIMG_EXIT_DEVICE, "npp", "%s returned NppStatus %d",
                     c->kind == CASE_NPP_GRAY ? "nppiRGBToGray_8u_C3C1R_Ctx"
                                              : "nppiFilterBoxBorder_8u_C3R_Ctx",
                     (int)st);
    return -1;
  }
  return CUDA_OK(cudaGetLastError());
}
#endif

/* With --no-npp (or without NPP) b->npp stays 0 and no NPP case is planned. */
int bench_npp_start(bench_t *b)
{
#if GPUIMG_HAVE_NPP
  if (b->opt.use_npp && b->opt.channels == 3) {
    if (npp_context_init(b) < 0)
      return -1;
    b->npp = 1;
  }
#else
  (void)b;
#endif
  return 0;
}

/* One run of an NPP case on our stream, timed with our events into info->ms. */
int bench_npp_time(bench_t *b, const size_state_t *s, const bench_case_t *c, gpuimg_launch_t *info)
{
#if GPUIMG_HAVE_NPP
  if (CUDA_OK(cudaEventRecord(b->ev_start, b->stream)) < 0 || npp_run(b, s, c) < 0 ||
      CUDA_OK(cudaEventRecord(b->ev_stop, b->stream)) < 0 ||
      CUDA_OK(cudaEventSynchronize(b->ev_stop)) < 0 ||
      CUDA_OK(cudaEventElapsedTime(&info->ms, b->ev_start, b->ev_stop)) < 0)
    return -1;
  info->kernel =
      c->kind == CASE_NPP_GRAY ? "nppiRGBToGray_8u_C3C1R_Ctx" : "nppiFilterBoxBorder_8u_C3R_Ctx";
  return 0;
#else
  (void)b;
  (void)s;
  (void)c;
  (void)info;
  gpuimg_error_set(GPUIMG_EXIT_FAILURE, "npp", "built without NPP");
  return -1;
#endif
}

/* NPP's version, "major.minor.build", or "" when the build does not say. */
void bench_npp_version(char *buf, size_t size)
{
  buf[0] = '\0';
#if GPUIMG_HAVE_NPP && defined(NPP_VERSION_MAJOR) && defined(NPP_VERSION_MINOR) &&                 \
    defined(NPP_VERSION_BUILD)
  snprintf(buf, size, "%d.%d.%d", NPP_VERSION_MAJOR, NPP_VERSION_MINOR, NPP_VERSION_BUILD);
#else
  (void)size;
#endif
}
