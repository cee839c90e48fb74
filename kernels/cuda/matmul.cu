// Small matmul on cuda, the cpu builtin's contract (kernels/cpu/matmul.cpp): C[M, N] = A[M, K] x B[K, N] for
// f32, bf16 (SK_WEIGHT_BF16) and f16 (SK_WEIGHT_F16) B, and for q8_0 (SK_WEIGHT_Q8_0) and q4_0 (SK_WEIGHT_Q4_0)
// the "linear" layout of quantised engines: W [N, K] as N rows of K / 32 blocks, C = A x W^T (K % 32 != 0 stops
// the launch with the cpu kernel's message, sk_trap_error). A and C are f32, sums in f32.
// The weight formats and the block formats' unpacking are sk_weight.cuh's, shared with gemv.cu.
//
// Split (the cpu contract): block b computes the C elements sk_block_range(M * N), row-major, i.e. C is
// "block", A and B "all". The slice is at most three runs of rows that share one column range (a partial first
// row, whole rows, a partial last row); each run goes in passes of up to SK_MM_ROWS rows of A, and in a pass
// every weight is loaded once for all of the pass's rows (so a block whose slice holds several rows streams its
// weights once per SK_MM_ROWS rows, not once per row; how many rows a block holds is the op's block_dim's doing).
//
// f32 / bf16 / f16, B [K, N]: a tile is 32 column units x SK_MM_SLICES k slices. A unit is the SK_VW columns
// of one 16-byte vector of a B row (units start at B's first 16-byte boundary, so every row's unit is aligned
// when N * sizeof(weight) % 16 == 0; otherwise, or for a unit cut by the block's column range, the unit's
// columns are scalar loads). Lane l of warp s (s < SK_MM_SLICES: the first 256 threads) takes unit l of the tile
// over the k of slice s, four 16-byte B loads in flight, with SK_MM_ROWS x SK_VW accumulators (A's elements are
// broadcast loads); the slices' partials meet in shared memory and one thread per column adds them in slice
// order. So every C element is: per slice (K cut into SK_MM_SLICES equal runs, by K alone) a sum over its k in
// order, then the slices' sums in order. That depends on K only: not on the split, the units, the load path or
// the CTA size, so fused equals unfused bit for bit and block_dim_invariant holds.
//
// q8_0 and q4_0, W [N, K]: a warp per output column j (a weight row), sk_wb_warp_dot for the pass's rows: each
// group of 8 blocks (17 or 9 16-byte loads where the row is aligned) loaded once, dotted with every row of the
// pass; per element the order is gemv_q8_0's or gemv_q4_0's (by K only).
//
// Needs a CTA of at least 256 threads (the declaration's "threads"; a fused step runs at least that): fewer
// stop the launch (sk_trap_error). Static shape: -DSK_M, -DSK_K, -DSK_N, as on cpu.
#include "sk_weight.cuh"

#ifdef SK_M
#define SKV_M ((int64_t)(SK_M))
#else
#define SKV_M m
#endif
#ifdef SK_K
#define SKV_K ((int64_t)(SK_K))
#else
#define SKV_K k
#endif
#ifdef SK_N
#define SKV_N ((int64_t)(SK_N))
#else
#define SKV_N n
#endif

#if defined(SK_WEIGHT_BF16)
#define SK_MATMUL_ENTRY sk_matmul_bf16w
#elif defined(SK_WEIGHT_F16)
#define SK_MATMUL_ENTRY sk_matmul_f16w
#elif defined(SK_WEIGHT_Q8_0)
#define SK_MATMUL_ENTRY sk_matmul_q8_0
#elif defined(SK_WEIGHT_Q4_0)
#define SK_MATMUL_ENTRY sk_matmul_q4_0
#else
#define SK_MATMUL_ENTRY sk_matmul_f32
#endif

#define SK_MM_ROWS 8               /* rows of A per pass */
#define SK_MM_SLICES 8             /* k slices (warps of a tile) */
#define SK_MM_NT (32 * SK_MM_SLICES) /* threads a tile uses */

#if defined(SK_WEIGHT_Q8_0) || defined(SK_WEIGHT_Q4_0)
// C[r, j] for r < nr (A rows K apart, C rows N apart) and columns j in [j0, j1).
static __device__ __forceinline__ void sk_mm_pass(const float* a, int64_t K, const sk_weight_t* b, int64_t N, float* c,
                                                  int nr, int64_t j0, int64_t j1) {
  const int64_t warps = blockDim.x >> 5;
  const bool x_vec = sk_aligned16(a);  // K % 32 == 0: every row of A has a's alignment
  for (int64_t j = j0 + (threadIdx.x >> 5); j < j1; j += warps) {
    float acc[SK_MM_ROWS];
    sk_wb_warp_dot<SK_MM_ROWS>(sk_w_row(b, j, K), a, K, nr, K, x_vec, acc);
    if ((threadIdx.x & 31u) == 0) {
#pragma unroll
      for (int r = 0; r < SK_MM_ROWS; ++r)
        if (r < nr) c[r * N + j] = acc[r];
    }
  }
}
#else
// acc[r][i] += A[r, k] * wf[i] for r < nr; ak = &A[0, k].
static __device__ __forceinline__ void sk_mm_fma(float (*acc)[SK_VW], const float* ak, int64_t K, int nr,
                                                 const float* wf) {
#pragma unroll
  for (int r = 0; r < SK_MM_ROWS; ++r) {
    if (r >= nr) break;
    const float av = ak[r * K];
#pragma unroll
    for (int i = 0; i < SK_VW; ++i) acc[r][i] += av * wf[i];
  }
}

// C[r, j] for r < nr (A rows K apart, C rows N apart) and columns j in [j0, j1). Units start at column h (B's
// first 16-byte boundary, when vec: every B row is aligned as B is) plus multiples of SK_VW; part: shared memory
// for one row of partials.
static __device__ __forceinline__ void sk_mm_pass(const float* a, int64_t K, const sk_weight_t* b, int64_t N, float* c,
                                                  int nr, int64_t j0, int64_t j1, int64_t h, bool vec,
                                                  float (*part)[32 * SK_VW]) {
  const int t = (int)threadIdx.x, lane = t & 31, s = t >> 5;
  const bool worker = s < SK_MM_SLICES;
  const int64_t kper = (K + SK_MM_SLICES - 1) / SK_MM_SLICES;
  const int64_t k0 = s * kper < K ? s * kper : K, k1 = k0 + kper < K ? k0 + kper : K;
  // Units u_first..u_last hold [j0, j1) (unit u: columns [h + u * SK_VW, h + (u + 1) * SK_VW)).
  const int64_t u_first = (j0 - h + SK_VW) / SK_VW - 1, u_last = (j1 - 1 - h + SK_VW) / SK_VW - 1;
  for (int64_t ut = u_first; ut <= u_last; ut += 32) {
    const int64_t us = h + (ut + lane) * SK_VW;  // this lane's unit's first column
    const int64_t cb = us > j0 ? us : j0, ce = us + SK_VW < j1 ? us + SK_VW : j1;
    float acc[SK_MM_ROWS][SK_VW];
#pragma unroll
    for (int r = 0; r < SK_MM_ROWS; ++r)
#pragma unroll
      for (int i = 0; i < SK_VW; ++i) acc[r][i] = 0.0f;
    if (worker && ce > cb) {
      int64_t kk = k0;
      if (vec && ce - cb == SK_VW) {  // a whole aligned unit: 16-byte loads, four in flight
        const sk_weight_t* bp = b + us;
        for (; kk + 4 <= k1; kk += 4) {
          uint4 q[4];
#pragma unroll
          for (int v = 0; v < 4; ++v) q[v] = sk_ld_global_v4(bp + (kk + v) * N);
#pragma unroll
          for (int v = 0; v < 4; ++v) {
            float wf[SK_VW];
            sk_w_unpack(q[v], wf);
            sk_mm_fma(acc, a + kk + v, K, nr, wf);
          }
        }
        for (; kk < k1; ++kk) {
          float wf[SK_VW];
          sk_w_unpack(sk_ld_global_v4(bp + kk * N), wf);
          sk_mm_fma(acc, a + kk, K, nr, wf);
        }
      } else {  // scalar loads of the unit's columns in [cb, ce); the others stay 0 and are not written
        for (; kk < k1; ++kk) {
          float wf[SK_VW];
#pragma unroll
          for (int i = 0; i < SK_VW; ++i) wf[i] = us + i >= cb && us + i < ce ? sk_w(b[kk * N + us + i]) : 0.0f;
          sk_mm_fma(acc, a + kk, K, nr, wf);
        }
      }
    }
    // The slices' partials of each row, added in slice order by thread t = column (t / SK_VW, t % SK_VW).
#pragma unroll
    for (int r = 0; r < SK_MM_ROWS; ++r) {
      if (r >= nr) break;  // uniform
      __syncthreads();     // the previous row's (or tile's) reads of part are done
      if (worker) {
#pragma unroll
        for (int i = 0; i < SK_VW; ++i) part[s][lane * SK_VW + i] = acc[r][i];
      }
      __syncthreads();
      if (t < 32 * SK_VW) {
        const int64_t col = h + ut * SK_VW + t;
        if (col >= j0 && col < j1) {
          float sum = part[0][t];
#pragma unroll
          for (int w = 1; w < SK_MM_SLICES; ++w) sum += part[w][t];
          c[r * N + col] = sum;
        }
      }
    }
  }
}
#endif

// Rows [i0, i0 + rows) of C, columns [j0, j1), in passes of SK_MM_ROWS rows.
static __device__ __forceinline__ void sk_mm_run(const float* a, int64_t K, const sk_weight_t* b, int64_t N, float* c,
                                                 int64_t i0, int64_t rows, int64_t j0, int64_t j1) {
#if !defined(SK_WEIGHT_Q8_0) && !defined(SK_WEIGHT_Q4_0)
  __shared__ float part[SK_MM_SLICES][32 * SK_VW];
  // Unit boundaries: B's first 16-byte boundary when every row of B is aligned as B is, else column 0 (and
  // scalar loads throughout).
  const bool vec = (N * (int64_t)sizeof(sk_weight_t)) % 16 == 0;
  const int64_t mis = (int64_t)(((uintptr_t)b & 15u) / sizeof(sk_weight_t));
  const int64_t h = vec && mis != 0 ? SK_VW - mis : 0;
#endif
  for (int64_t p = 0; p < rows; p += SK_MM_ROWS) {
    const int nr = rows - p < SK_MM_ROWS ? (int)(rows - p) : SK_MM_ROWS;
#if defined(SK_WEIGHT_Q8_0) || defined(SK_WEIGHT_Q4_0)
    sk_mm_pass(a + (i0 + p) * K, K, b, N, c + (i0 + p) * N, nr, j0, j1);
#else
    sk_mm_pass(a + (i0 + p) * K, K, b, N, c + (i0 + p) * N, nr, j0, j1, h, vec, part);
#endif
  }
}

SK_KERNEL void SK_MATMUL_ENTRY(const sk_ctx* ctx, const float* a, const sk_weight_t* b, float* c, int64_t m,
                               int64_t k, int64_t n) {
  (void)m;
  (void)k;
  (void)n;
  const int64_t K = SKV_K, N = SKV_N;
  // Uniform conditions: every thread returns.
#if defined(SK_WEIGHT_Q8_0) || defined(SK_WEIGHT_Q4_0)
  if (!sk_w_cols_ok(K)) {
    if (ctx->block_idx == 0 && threadIdx.x == 0)
      sk_trap_error("sk_matmul_" SK_W_NAME ": k must be a multiple of 32");  // the cpu kernel's message
    return;
  }
#endif
  if (blockDim.x < SK_MM_NT) {
    if (ctx->block_idx == 0 && threadIdx.x == 0) sk_trap_error("sk_matmul: needs a CTA of at least 256 threads");
    return;
  }
  int64_t eb, ee;
  sk_block_range(ctx, SKV_M * N, &eb, &ee);
  if (eb >= ee) return;
  // The slice as at most three runs of rows [i0, i0 + rows) sharing columns [j0, j1): a partial first row, whole
  // rows, a partial last row (or one run inside one row). One call site: the pass is large, and three inlined
  // copies cost code and registers.
  const int64_t ib = eb / N, ie = (ee - 1) / N, jb = eb - ib * N, je = ee - ie * N;
  for (int x = 0; x < 3; ++x) {
    int64_t i0 = ie, rows = 1, j0 = 0, j1 = je;  // x == 2: the partial last row
    if (ib == ie) {
      if (x > 0) break;
      i0 = ib, j0 = jb;
    } else if (x == 0) {
      if (jb == 0) continue;
      i0 = ib, j0 = jb, j1 = N;
    } else if (x == 1) {
      i0 = jb > 0 ? ib + 1 : ib;
      rows = (je < N ? ie : ie + 1) - i0, j1 = N;
      if (rows <= 0) continue;
    } else if (je == N) {
      continue;
    }
    sk_mm_run(a, K, b, N, c, i0, rows, j0, j1);
  }
}
