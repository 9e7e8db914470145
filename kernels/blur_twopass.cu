// blur_twopass.cu: the fast box blur for any radius: row sums into scratch (pass 1), then
// a running sum down each column (pass 2), in bands that keep the row sums in L2.
#include "blur_internal.cuh"

namespace gpuimg_blur
{
namespace
{

// Threads of the row-sum kernel, and output pixels per block.
constexpr int kRowThreads = GPUIMG_BLUR_ROW_THREADS;
constexpr int kRowSegment = GPUIMG_BLUR_ROW_SEGMENT;

// blur_rows_kernel<C> (fast, pass 1): block (blockIdx.x, y) makes the horizontal window
// sums of up to 1024 pixels of row y. It loads the segment plus r clamped pixels each side
// into shared memory, one uint32 plane per channel, turns each plane into inclusive
// prefix sums (each thread scans a contiguous chunk, then a warp-shuffle scan of the chunk
// totals), and writes out[x] = P[x + 2r] - P[x - 1]: O(1) per pixel whatever r is.
// Global reads and writes are consecutive across threads.
template <int C, typename T>
__global__ void blur_rows_kernel(const uint8_t *__restrict__ src, T *__restrict__ rows, BlurShape s,
                                 int row_lo, int row_hi)
{
  extern __shared__ uint32_t plane[]; // C planes of len values
  __shared__ uint32_t warp_total[kRowThreads / 32];
  const int x0 = blockIdx.x * kRowSegment;
  const int n_out = min(kRowSegment, s.w - x0);
  const int len = n_out + 2 * s.r;
  const int tid = threadIdx.x;

  // Grid-stride over rows: gridDim.y is capped at 65535.
  for (int y = row_lo + blockIdx.y; y < row_hi; y += gridDim.y) {
    const uint8_t *row = src + (size_t)y * s.w * C;
    __syncthreads(); // the previous row's planes are no longer read
    for (int j = tid; j < len; j += kRowThreads) {
      const uint8_t *p = row + (size_t)gpuimg_clampi(x0 - s.r + j, 0, s.w - 1) * C;
#pragma unroll
      for (int c = 0; c < C; c++)
        plane[c * len + j] = __ldg(p + c);
    }
    __syncthreads();

    // Chunked block scan of each plane.
    const int chunk = (len + kRowThreads - 1) / kRowThreads;
    const int b = min(tid * chunk, len), e = min(b + chunk, len);
    const int lane = tid & 31, warp = tid >> 5;
    for (int c = 0; c < C; c++) {
      uint32_t *pl = plane + c * len;
      uint32_t acc = 0;
      for (int j = b; j < e; j++) {
        acc += pl[j];
        pl[j] = acc;
      }
      uint32_t incl = acc; // inclusive scan of chunk totals within the warp
#pragma unroll
      for (int d = 1; d < 32; d <<= 1) {
        uint32_t v = __shfl_up_sync(0xffffffffu, incl, d);
        if (lane >= d)
          incl += v;
      }
      if (lane == 31)
        warp_total[warp] = incl;
      __syncthreads();
      uint32_t offset = incl - acc;
      for (int k = 0; k < warp; k++)
        offset += warp_total[k];
      for (int j = b; j < e; j++)
        pl[j] += offset;
      __syncthreads(); // plane complete; warp_total reusable
    }

    T *out = rows + ((size_t)(y - row_lo) * s.w + x0) * C;
    for (int i = tid; i < n_out; i += kRowThreads) {
#pragma unroll
      for (int c = 0; c < C; c++) {
        const uint32_t *pl = plane + c * len;
        out[(size_t)i * C + c] = (T)(pl[i + 2 * s.r] - (i > 0 ? pl[i - 1] : 0u));
      }
    }
  }
}

// blur_columns_kernel<C> (fast, pass 2): each thread owns one column of the row sums
// (one channel of one x) over a strip of rows and walks down it keeping the window's
// running sum: add the row entering at the bottom, subtract the row leaving at the top.
// Neighbouring threads own neighbouring columns, so every step is a coalesced row read.
// With d_mask (portrait) subject pixels, and alpha everywhere, take the source value.
template <int C, typename T>
__global__ void blur_columns_kernel(const T *__restrict__ rows, const uint8_t *__restrict__ src,
                                    const uint8_t *__restrict__ d_mask, uint8_t *__restrict__ dst,
                                    BlurShape s, int row_lo, int y_begin, int y_end, int strip)
{
  const int cols = s.w * C;
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (col >= cols)
    return;
  // Rows y_begin .. y_end - 1 of this band; the row sums hold rows from row_lo on.
  const int y0 = y_begin + blockIdx.y * strip;
  const int y1 = min(y0 + strip, y_end);
  const int last = s.h - 1;
  const T *column = rows + col;
  auto at = [&](int yy) { return (uint32_t)__ldg(column + (size_t)(yy - row_lo) * cols); };

  // Window rows y0-r .. y0+r, clamped: the top and bottom rows count several times.
  int lo = y0 - s.r, hi = y0 + s.r;
  uint32_t sum = 0;
  if (lo < 0)
    sum += (uint32_t)(-lo) * at(0);
  if (hi > last)
    sum += (uint32_t)(hi - last) * at(last);
  for (int yy = max(lo, 0); yy <= min(hi, last); yy++)
    sum += at(yy);

  const int x = col / C;
  // Portrait carries alpha through: the alpha column always takes the source.
  const bool alpha = d_mask && (C == 2 || C == 4) && col % C == C - 1;
  // Unrolled so the loads of several rows are in flight at once.
#pragma unroll 4
  for (int y = y0; y < y1; y++) {
    size_t i = (size_t)y * cols + col;
    uint8_t v = (uint8_t)div_count(sum + s.half, s);
    if (d_mask && (alpha || d_mask[(size_t)y * s.w + x] >= 128))
      v = src[i];
    dst[i] = v;
    // Slide the window down, except after the band's last row: its entering row may lie
    // past the rows this band's row sums hold.
    if (y + 1 < y1)
      sum += at(min(y + s.r + 1, last)) - at(max(y - s.r, 0));
  }
}

// The two passes on the bands gpuimg_blur_fast_launch() gave (kernels/blur.h): row sums of a
// band's rows (and its halo) into scratch, then the column walk of the band; info already
// holds the last band's column walk, which the report shows.
template <int C, typename T>
int launch_twopass(gpuimg_cuda_t *ctx, const uint8_t *d_src, uint8_t *d_dst, BlurShape s,
                   const uint8_t *d_mask, int band, gpuimg_launch_t *info)
{
  cudaStream_t st = ctx->stream;
  size_t row_bytes = (size_t)s.w * C * sizeof(T);
  void *scratch;
  size_t rows_bytes = row_bytes * (size_t)min(band + 2 * s.r, s.h);
  if (gpuimg_cuda_scratch(ctx, rows_bytes, &scratch) < 0)
    return -1;
  T *d_rows = (T *)scratch;
  size_t row_shared = gpuimg_blur_row_shared(s.w, s.r, C);
  if (allow_shared(blur_rows_kernel<C, T>, row_shared) < 0)
    return -1;
  dim3 rblock(kRowThreads), cblock = gpuimg_launch_block(info), cgrid = gpuimg_launch_grid(info);
  for (int b0 = 0; b0 < s.h; b0 += band) {
    int b1 = min(b0 + band, s.h);
    int lo = max(b0 - s.r, 0), hi = min(b1 + s.r, s.h); // rows the band's windows touch
    dim3 rgrid((s.w + kRowSegment - 1) / kRowSegment, min(hi - lo, 65535));
    if (gpuimg_cuda_check_grid(ctx, rgrid, "blur_rows_kernel") < 0)
      return -1;
    blur_rows_kernel<C, T><<<rgrid, rblock, row_shared, st>>>(d_src, d_rows, s, lo, hi);
    GPUIMG_CUDA_CHECK_LAUNCH("blur_rows_kernel");
    int strip = gpuimg_blur_strip_rows(ctx->gpu.sms, cgrid.x, b1 - b0);
    cgrid.y = (unsigned)((b1 - b0 + strip - 1) / strip);
    if (gpuimg_cuda_check_grid(ctx, cgrid, "blur_columns_kernel") < 0)
      return -1;
    blur_columns_kernel<C, T>
        <<<cgrid, cblock, 0, st>>>(d_rows, d_src, d_mask, d_dst, s, lo, b0, b1, strip);
    GPUIMG_CUDA_CHECK_LAUNCH("blur_columns_kernel");
  }
  gpuimg_launch_measure(ctx, info, blur_columns_kernel<C, T>);
  return 0;
}

} // namespace

template <int C>
int enqueue_twopass(gpuimg_cuda_t *ctx, const uint8_t *d_src, uint8_t *d_dst, BlurShape s,
                    const uint8_t *d_mask, const gpuimg_blur_fast_t &f, gpuimg_launch_t *info)
{
  // 16-bit row sums while 255 (2r + 1) fits, else 32-bit (f.wide).
  if (!f.wide)
    return launch_twopass<C, uint16_t>(ctx, d_src, d_dst, s, d_mask, f.band, info);
  return launch_twopass<C, uint32_t>(ctx, d_src, d_dst, s, d_mask, f.band, info);
}

#define GPUIMG_TWOPASS_INSTANCE(C)                                                                 \
  template int enqueue_twopass<C>(gpuimg_cuda_t *, const uint8_t *, uint8_t *, BlurShape,          \
                                  const uint8_t *, const gpuimg_blur_fast_t &, gpuimg_launch_t *);
GPUIMG_TWOPASS_INSTANCE(1)
GPUIMG_TWOPASS_INSTANCE(2)
GPUIMG_TWOPASS_INSTANCE(3)
GPUIMG_TWOPASS_INSTANCE(4)

} // namespace gpuimg_blur
