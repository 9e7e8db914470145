// rotate.cu: the eight EXIF orientations on the GPU (rotate 90, 180, 270, flip, flop,
// transpose, transverse, and EXIF autorotation), the pixel moves of src/base/orientation.c:
// the naive transpose, the 32x32 shared-memory tile, and the tile padded against bank
// conflicts.
#include "cuda_internal.cuh"
#include "orientation.h"
#include "rotate.h"

namespace
{

constexpr int kTile = GPUIMG_ROTATE_TILE;          // a tile is 32x32 pixels
constexpr int kTileRows = GPUIMG_ROTATE_TILE_ROWS; // a 32x8 block: 4 pixels a thread a phase
constexpr int kPadBytes = GPUIMG_ROTATE_PAD_BYTES; // the fast kernel's rows: one word longer

// One pixel of E bytes (1 to 4 channels) moved as a unit: one uchar, uchar2 or uchar4 load
// and store; uchar3 (alignment 1) is three byte loads and three byte stores.
template <int E> struct Pixel;
template <> struct Pixel<1> {
  using T = uint8_t;
};
template <> struct Pixel<2> {
  using T = uchar2;
};
template <> struct Pixel<3> {
  using T = uchar3;
};
template <> struct Pixel<4> {
  using T = uchar4;
};

template <int E> __device__ __forceinline__ void move_pixel(uint8_t *d, const uint8_t *s)
{
  using T = typename Pixel<E>::T;
  *reinterpret_cast<T *>(d) = *reinterpret_cast<const T *>(s);
}

// rotate_naive_kernel<E> (--naive): the textbook naive transpose. One thread per source
// pixel (sx, sy) in 2-D blocks (32x8 by default, --block), rows of blocks looping down the
// image where it has more than the grid's 65535 rows of blocks. Each thread loads its E
// bytes and stores them where the orientation sends them.
// Global memory, for a warp of 32 lanes along a source row (block width 32): the load is
// 32 neighbouring pixels, 32*E contiguous bytes (E = 4: 128 bytes, 4 sectors: coalesced).
// The store, for the orientations that swap the axes (transpose, transverse, rotate 90 and
// 270), goes down a column of the result: 32 pixels out_w*E bytes apart, one 32-byte sector
// per lane (32 sectors a request, E bytes of each used: 12.5% for E = 4): uncoalesced, the
// lesson. For flip, flop and rotate 180 the store is a row again (reversed for flop and
// 180: the same sectors): coalesced. No shared memory.
template <int E>
__global__ void rotate_naive_kernel(const uint8_t *__restrict__ src, uint8_t *__restrict__ dst,
                                    gpuimg_orientation_t t)
{
  // Unsigned: no index overflows, whatever the sides (up to 2^31 - 1).
  unsigned sx = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned rows = ((unsigned)t.h + blockDim.y - 1) / blockDim.y;
  if (sx >= (unsigned)t.w)
    return;
  for (unsigned by = blockIdx.y; by < rows; by += gridDim.y) {
    unsigned sy = by * blockDim.y + threadIdx.y;
    if (sy >= (unsigned)t.h)
      continue;
    int x, y;
    gpuimg_orientation_dest(t, (int)sx, (int)sy, &x, &y);
    move_pixel<E>(dst + ((size_t)y * (size_t)t.out_w + (size_t)x) * E,
                  src + ((size_t)sy * (size_t)t.w + sx) * E);
  }
}

// rotate_tile_kernel<E, Pad>: a 32x8 block (fixed: --block does not apply) makes one 32x32
// tile of the result, tiles of a column looping where there are more than 65535. Phase 1
// loads the source rectangle the tile shows (32x32, less at the image's edges) into shared
// memory, a warp per tile row; phase 2 stores the tile's pixels in the result's row order,
// a warp per row of the result, each reading its pixel's place in the tile.
// Global memory: both phases move 32 neighbouring pixels of a row a warp (32*E contiguous
// bytes; reversed under a mirror, the same sectors): coalesced for every orientation.
// Shared memory: tile rows of 32*E bytes (Pad false: [32][32] for E = 4) or 32*E + 4 bytes
// (Pad true: [32][33] for E = 4). Phase 1 writes along a tile row (32 lanes, 32*E contiguous
// bytes): no bank conflict. Phase 2 reads along a tile row for flip, flop and rotate 180
// (no conflict), but down a tile column for the orientations that swap the axes: 32 lanes
// whose addresses are a row apart, a stride of s = 8*E 4-byte words unpadded, a gcd(s, 32)-
// way conflict: 8 for E = 1, 16 for E = 2, 8 for E = 3 (each of its three byte reads), 32
// for E = 4; padded, s = 8*E + 1 is odd and the 32 lanes hit 32 banks: conflict-free.
// t: the orientation, with the source's and the result's sizes.
template <int E, bool Pad>
__global__ void rotate_tile_kernel(const uint8_t *__restrict__ src, uint8_t *__restrict__ dst,
                                   gpuimg_orientation_t t)
{
  constexpr int kRowBytes = kTile * E + (Pad ? kPadBytes : 0);
  __shared__ __align__(4) uint8_t tile[kTile * kRowBytes];
  const int tx = threadIdx.x, ox0 = blockIdx.x * kTile, tw = min(kTile, t.out_w - ox0);
  const unsigned tiles = ((unsigned)t.out_h + kTile - 1) / kTile; // unsigned: no overflow
  for (unsigned ty = blockIdx.y; ty < tiles; ty += gridDim.y) {
    int oy0 = (int)(ty * kTile), th = min(kTile, t.out_h - oy0);
    // The source rectangle between the sources of the tile's first and last pixels.
    int ax, ay, bx, by;
    gpuimg_orientation_source(t, ox0, oy0, &ax, &ay);
    gpuimg_orientation_source(t, ox0 + tw - 1, oy0 + th - 1, &bx, &by);
    int sx0 = min(ax, bx), sy0 = min(ay, by), sw = abs(ax - bx) + 1, sh = abs(ay - by) + 1;
    for (int r = threadIdx.y; r < sh; r += kTileRows)
      if (tx < sw)
        move_pixel<E>(tile + r * kRowBytes + tx * E,
                      src + ((size_t)(sy0 + r) * (size_t)t.w + (size_t)(sx0 + tx)) * E);
    __syncthreads();
    for (int r = threadIdx.y; r < th; r += kTileRows)
      if (tx < tw) {
        int sx, sy;
        gpuimg_orientation_source(t, ox0 + tx, oy0 + r, &sx, &sy);
        move_pixel<E>(dst + ((size_t)(oy0 + r) * (size_t)t.out_w + (size_t)(ox0 + tx)) * E,
                      tile + (sy - sy0) * kRowBytes + (sx - sx0) * E);
      }
    __syncthreads(); // the tile is read before the next one overwrites it
  }
}

// Launches kernel on the shape gpuimg_rotate_launch() gave info, timed, and records its
// occupancy.
template <typename K>
int launch_shaped(gpuimg_cuda_t *ctx, K kernel, const uint8_t *d_src, uint8_t *d_dst,
                  const gpuimg_orientation_t &t, gpuimg_launch_t *info)
{
  dim3 grid = gpuimg_launch_grid(info), block = gpuimg_launch_block(info);
  if (gpuimg_cuda_check_grid(ctx, grid, info->kernel) < 0 || gpuimg_cuda_timer_start(ctx) < 0)
    return -1;
  kernel<<<grid, block, 0, ctx->stream>>>(d_src, d_dst, t);
  GPUIMG_CUDA_CHECK_LAUNCH(info->kernel);
  gpuimg_launch_measure(ctx, info, kernel);
  return gpuimg_cuda_timer_stop(ctx, &info->ms);
}

template <int E>
int launch_variant(gpuimg_cuda_t *ctx, const uint8_t *d_src, uint8_t *d_dst, int orientation,
                   const gpuimg_orientation_t &t, gpuimg_variant_t variant, gpuimg_launch_t *info)
{
  gpuimg_launch_env_t env = gpuimg_cuda_env(ctx);
  gpuimg_rotate_launch(variant, orientation, t.w, t.h, E, &env, info);
  if (variant == GPUIMG_VARIANT_NAIVE)
    return launch_shaped(ctx, rotate_naive_kernel<E>, d_src, d_dst, t, info);
  if (variant == GPUIMG_VARIANT_TILED)
    return launch_shaped(ctx, rotate_tile_kernel<E, false>, d_src, d_dst, t, info);
  return launch_shaped(ctx, rotate_tile_kernel<E, true>, d_src, d_dst, t, info);
}

} // namespace

extern "C" int gpuimg_rotate_gpu(gpuimg_cuda_t *ctx, const uint8_t *d_src, uint8_t *d_dst,
                                 int width, int height, int channels, int orientation,
                                 gpuimg_variant_t variant, gpuimg_launch_t *info)
{
  if (width < 1 || height < 1 || channels < 1 || channels > 4 || orientation < 1 ||
      orientation > 8) {
    gpuimg_error_set(GPUIMG_EXIT_FAILURE, "rotate",
                     "no orientation %d of a %dx%d image of %d channels", orientation, width,
                     height, channels);
    return -1;
  }
  gpuimg_orientation_t t = gpuimg_orientation_make(orientation, width, height);
  switch (channels) {
  case 1:
    return launch_variant<1>(ctx, d_src, d_dst, orientation, t, variant, info);
  case 2:
    return launch_variant<2>(ctx, d_src, d_dst, orientation, t, variant, info);
  case 3:
    return launch_variant<3>(ctx, d_src, d_dst, orientation, t, variant, info);
  default:
    return launch_variant<4>(ctx, d_src, d_dst, orientation, t, variant, info);
  }
}
