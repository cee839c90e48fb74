// Data-movement builtins with the cpu kernels' contracts; the descriptor's macro picks one:
//   SK_SHAPE_CONCAT    sk_concat_f32 (kernels/cpu/concat.cpp): y[r, 0:ca] = a[r, :], y[r, ca:ca+cb] = b[r, :];
//                      a [rows, ca], b [rows, cb], y [rows, ca + cb]. Split: sk_block_range(rows * (ca + cb)) over
//                      y's elements -> y "block", a and b "all".
//   SK_SHAPE_TRANSPOSE sk_transpose_f32 (kernels/cpu/transpose.cpp): y[c, r] = x[r, c], x [rows, cols], y [cols,
//                      rows]. Split: sk_block_range(rows * cols) over y's elements -> y "block", x "all".
// Both only copy floats, so every path gives cpu's values exactly. Static shape: -DSK_ROWS, -DSK_CA, -DSK_CB,
// -DSK_COLS, as on cpu.
#include "superkernel/cuda/kernel.cuh"

#ifdef SK_ROWS
#define SKV_ROWS ((int64_t)(SK_ROWS))
#else
#define SKV_ROWS rows
#endif

#if defined(SK_SHAPE_CONCAT)
#ifdef SK_CA
#define SKV_CA ((int64_t)(SK_CA))
#else
#define SKV_CA ca
#endif
#ifdef SK_CB
#define SKV_CB ((int64_t)(SK_CB))
#else
#define SKV_CB cb
#endif

// Output rows at least this wide are copied run by run (a row's a part, then its b part, each a contiguous run
// spread over the CTA with 16-byte accesses); narrower ones element by element as on cpu, since a run of a few
// floats would leave most of the CTA idle on every run.
#define SK_CONCAT_RUN_MIN 256

SK_KERNEL void sk_concat_f32(const sk_ctx* ctx, const float* a, const float* b, float* y, int64_t rows, int64_t ca,
                             int64_t cb) {
  (void)rows;
  (void)ca;
  (void)cb;
  const int64_t CA = SKV_CA, CB = SKV_CB, W = SKV_CA + SKV_CB;
  int64_t eb, ee;
  sk_block_range(ctx, SKV_ROWS * W, &eb, &ee);
  if (eb >= ee) return;
  if (W < SK_CONCAT_RUN_MIN) {
    for (int64_t e = eb + threadIdx.x; e < ee; e += blockDim.x) {
      const int64_t r = e / W, c = e - r * W;
      y[e] = c < CA ? a[r * CA + c] : b[r * CB + (c - CA)];
    }
    return;
  }
  // Rows eb / W .. (ee - 1) / W; the first and last may be cut by the slice.
  for (int64_t r = eb / W; r * W < ee; ++r) {
    const int64_t lo = eb - r * W > 0 ? eb - r * W : 0, hi = ee - r * W < W ? ee - r * W : W;  // columns [lo, hi)
    if (lo < CA && hi > lo) sk_cta_copy_f32(a + r * CA + lo, y + r * W + lo, (hi < CA ? hi : CA) - lo);
    const int64_t blo = lo > CA ? lo : CA;
    if (hi > blo) sk_cta_copy_f32(b + r * CB + (blo - CA), y + r * W + blo, hi - blo);
  }
}

#elif defined(SK_SHAPE_TRANSPOSE)
#ifdef SK_COLS
#define SKV_COLS ((int64_t)(SK_COLS))
#else
#define SKV_COLS cols
#endif

// Tiles of 32 x 32: a tile is read from x row by row (consecutive threads on consecutive columns) into shared
// memory and written to y row by row, so both sides are coalesced, which a thread per y element (reading x with a
// stride of cols floats) is not. The padding column keeps the transposed reads of the tile off one bank. No
// 16-byte accesses: a tile row is 32 floats, already one coalesced 128-byte line per warp.
#define SK_TR_TILE 32

SK_KERNEL void sk_transpose_f32(const sk_ctx* ctx, const float* x, float* y, int64_t rows, int64_t cols) {
  (void)rows;
  (void)cols;
  __shared__ float tile[SK_TR_TILE][SK_TR_TILE + 1];
  const int64_t R = SKV_ROWS, C = SKV_COLS;
  int64_t eb, ee;
  sk_block_range(ctx, R * C, &eb, &ee);
  if (eb >= ee) return;  // uniform: every thread returns
  const int64_t t = threadIdx.x, nt = blockDim.x;
  // y rows (x columns) cb..ce hold the slice; bands of up to 32 of them from cb, each in tiles of 32 x rows. A
  // tile whose element range misses the slice is skipped; the others are masked element by element.
  const int64_t cb = eb / R, ce = (ee - 1) / R;
  for (int64_t c0 = cb; c0 <= ce; c0 += SK_TR_TILE) {
    const int64_t cn = ce + 1 - c0 < SK_TR_TILE ? ce + 1 - c0 : SK_TR_TILE;
    for (int64_t r0 = 0; r0 < R; r0 += SK_TR_TILE) {
      const int64_t rn = R - r0 < SK_TR_TILE ? R - r0 : SK_TR_TILE;
      if ((c0 + cn - 1) * R + r0 + rn - 1 < eb || c0 * R + r0 >= ee) continue;  // uniform
      __syncthreads();  // the previous tile's reads of `tile` are done
      for (int64_t i = t; i < SK_TR_TILE * SK_TR_TILE; i += nt) {
        const int64_t rr = i / SK_TR_TILE, cc = i - rr * SK_TR_TILE;
        if (rr < rn && cc < cn) tile[rr][cc] = x[(r0 + rr) * C + c0 + cc];
      }
      __syncthreads();
      for (int64_t i = t; i < SK_TR_TILE * SK_TR_TILE; i += nt) {
        const int64_t cc = i / SK_TR_TILE, rr = i - cc * SK_TR_TILE;
        const int64_t e = (c0 + cc) * R + r0 + rr;
        if (cc < cn && rr < rn && e >= eb && e < ee) y[e] = tile[rr][cc];
      }
    }
  }
}

#else
#error "shape.cu: define SK_SHAPE_CONCAT or SK_SHAPE_TRANSPOSE (the kernel's macros do)"
#endif
