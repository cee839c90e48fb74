// Rotary position embedding for one token, x/y are [heads, dim] floats
// (y may alias x). Pairs are interleaved (x[2i], x[2i+1]), angle
// pos * theta^(-2i/dim) (the original RoPE / llama layout).
// Split: whole heads sk_block_range(heads) -> x, y "all" (the head split is
// the element split only when block_dim divides heads).
// An odd dim is reported with sk_report_error.
// Static shape: -DSK_HEADS, -DSK_DIM, -DSK_POS, -DSK_THETA.
#include "superkernel/cpu/kernel.h"

#ifndef SK_KERNELS_BASELINE
// The angle table (cos, sin per pair) of the last (pos, dim, theta), shared by
// every thread that runs this variant. Not thread-local storage on purpose: a
// kernel lives in a library that is dlopen'ed and dlclose'd at run time, and
// dynamic TLS in such libraries is the least trodden path of the loader; a
// plain global per loaded object is reset by every load. A sequence lock
// keeps it consistent: seq is odd while one writer fills it, readers copy the
// table and keep the copy only if seq did not move. Every access to shared
// words is atomic (no data race), and a reader that loses simply computes the
// table itself: the values are the same either way.
#define SK_ROPE_MEMO_PAIRS 256
typedef struct sk_rope_memo {
  uint64_t seq;  // 0: empty; odd: being written; even: table valid for (pos, dim, theta_bits)
  int64_t pos, dim;
  uint32_t theta_bits;
  uint32_t cs[2 * SK_ROPE_MEMO_PAIRS];  // float bits: cos, sin per pair
} sk_rope_memo;
static sk_rope_memo sk_rope_shared;

// Copies the memo's table into cs (n words) if it holds (pos, dim, tb).
static int sk_rope_memo_get(uint32_t* cs, int64_t pos, int64_t dim, uint32_t tb, int64_t n) {
  sk_rope_memo* m = &sk_rope_shared;
  const uint64_t s0 = __atomic_load_n(&m->seq, __ATOMIC_ACQUIRE);
  if (s0 == 0 || (s0 & 1)) return 0;
  if (__atomic_load_n(&m->pos, __ATOMIC_RELAXED) != pos || __atomic_load_n(&m->dim, __ATOMIC_RELAXED) != dim ||
      __atomic_load_n(&m->theta_bits, __ATOMIC_RELAXED) != tb)
    return 0;
  for (int64_t i = 0; i < n; ++i) cs[i] = __atomic_load_n(&m->cs[i], __ATOMIC_RELAXED);
  __atomic_thread_fence(__ATOMIC_ACQUIRE);
  return __atomic_load_n(&m->seq, __ATOMIC_RELAXED) == s0;
}

// Publishes a computed table unless another thread is writing one right now.
static void sk_rope_memo_put(const uint32_t* cs, int64_t pos, int64_t dim, uint32_t tb, int64_t n) {
  sk_rope_memo* m = &sk_rope_shared;
  uint64_t s = __atomic_load_n(&m->seq, __ATOMIC_RELAXED);
  if ((s & 1) || !__atomic_compare_exchange_n(&m->seq, &s, s + 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) return;
  __atomic_thread_fence(__ATOMIC_RELEASE);
  __atomic_store_n(&m->pos, pos, __ATOMIC_RELAXED);
  __atomic_store_n(&m->dim, dim, __ATOMIC_RELAXED);
  __atomic_store_n(&m->theta_bits, tb, __ATOMIC_RELAXED);
  for (int64_t i = 0; i < n; ++i) __atomic_store_n(&m->cs[i], cs[i], __ATOMIC_RELAXED);
  __atomic_store_n(&m->seq, s + 2, __ATOMIC_RELEASE);
}
#endif

#ifdef SK_HEADS
#define SKV_HEADS ((int64_t)(SK_HEADS))
#else
#define SKV_HEADS heads
#endif
#ifdef SK_DIM
#define SKV_DIM ((int64_t)(SK_DIM))
#else
#define SKV_DIM dim
#endif
#ifdef SK_POS
#define SKV_POS ((int64_t)(SK_POS))
#else
#define SKV_POS pos
#endif
#ifdef SK_THETA
#define SKV_THETA ((float)(SK_THETA))
#else
#define SKV_THETA theta
#endif

SK_KERNEL void sk_rope_f32(const sk_ctx* ctx, const float* x, float* y, int64_t heads, int64_t dim, int64_t pos,
                           float theta) {
  (void)heads;
  (void)dim;
  (void)pos;
  (void)theta;
  const int64_t D = SKV_DIM;
  if (D % 2 != 0 || D < 0) {
    if (ctx->block_idx == 0) sk_report_error(ctx, "sk_rope_f32: dim must be even and not negative");
    return;
  }
  int64_t hb, he;
  sk_block_range(ctx, SKV_HEADS, &hb, &he);
#ifndef SK_KERNELS_BASELINE
  // The angle table (cos, sin per pair) costs a pow, a cos and a sin in
  // double per pair, far more than rotating a few heads. In a decode step
  // every layer's q and k rope share one position, so the table of the last
  // (pos, dim, theta) is kept (sk_rope_shared above). The values are the ones
  // computed below either way (deterministic).
  if (D / 2 <= SK_ROPE_MEMO_PAIRS) {
    uint32_t bits[2 * SK_ROPE_MEMO_PAIRS];
    uint32_t tb;
    const float th = (float)SKV_THETA;
    __builtin_memcpy(&tb, &th, 4);
    if (!sk_rope_memo_get(bits, (int64_t)SKV_POS, D, tb, D)) {
      for (int64_t i = 0; i < D / 2; ++i) {
        const double freq = __builtin_pow((double)SKV_THETA, -2.0 * (double)i / (double)D);
        const double ang = (double)SKV_POS * freq;
        const float c = (float)__builtin_cos(ang), s = (float)__builtin_sin(ang);
        __builtin_memcpy(&bits[2 * i], &c, 4);
        __builtin_memcpy(&bits[2 * i + 1], &s, 4);
      }
      sk_rope_memo_put(bits, (int64_t)SKV_POS, D, tb, D);
    }
    float cs[2 * SK_ROPE_MEMO_PAIRS];
    __builtin_memcpy(cs, bits, sizeof(float) * (unsigned long)D);
    for (int64_t h = hb; h < he; ++h) {
      const float* xh = x + h * D;
      float* yh = y + h * D;
      for (int64_t i = 0; i < D / 2; ++i) {
        const float c = cs[2 * i], s = cs[2 * i + 1];
        const float a = xh[2 * i], b = xh[2 * i + 1];
        yh[2 * i] = a * c - b * s;
        yh[2 * i + 1] = a * s + b * c;
      }
    }
    return;
  }
#endif
  for (int64_t i = 0; i < D / 2; ++i) {
    // Angles in double: pos * freq loses too much in float at long positions.
    const double freq = __builtin_pow((double)SKV_THETA, -2.0 * (double)i / (double)D);
    const double ang = (double)SKV_POS * freq;
    const float c = (float)__builtin_cos(ang);
    const float s = (float)__builtin_sin(ang);
    for (int64_t h = hb; h < he; ++h) {
      const float a = x[h * D + 2 * i];
      const float b = x[h * D + 2 * i + 1];
      y[h * D + 2 * i] = a * c - b * s;
      y[h * D + 2 * i + 1] = a * s + b * c;
    }
  }
}
