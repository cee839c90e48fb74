/* superkernel cuda sub-kernel contract (DESIGN section 9).
 *
 * A cuda sub-kernel is SPMD device code called once per block with
 * block_idx in [0, block_dim), by every thread of one CTA (threads of a block
 * use threadIdx.x). Include this header and write:
 *
 *   SK_KERNEL void add_kernel(const sk_ctx* ctx, const float* x, float* z, int64_t n);
 *
 * Declarations are the op list's (same "params" as cpu) plus, for cuda,
 * "threads" (the CTA size the kernel is written for; default 256) and
 * "shared_bytes" (dynamic shared memory per CTA, at ctx->smem).
 *
 * Rules a kernel follows (the persistent SuperKernel depends on them):
 *  - blockDim.x may be larger than the declared "threads" (a fused
 *    SuperKernel runs every op with the largest CTA of its ops): loop over
 *    blockDim.x, never assume it equals "threads". It is always a multiple
 *    of 32 and at most 1024.
 *  - sk_wait_inputs / sk_signal_outputs / sk_kernel_sync are called by all
 *    threads of the CTA together, never in divergent code, and each is a CTA
 *    barrier (__syncthreads) whatever else it does, also in a plain call
 *    (ctx->op == NULL), where it waits for and signals nothing.
 *  - produced buffers are read with ordinary loads (no __ldg, no
 *    `const T* __restrict__`): the read-only path may be stale within one
 *    launch of a persistent kernel.
 *  - helper functions are `static` (or in an anonymous namespace): sub-kernel
 *    objects are device-linked together (-rdc) and only the entry is global.
 *  - return from the kernel, never from a thread early while others sync.
 *
 * The wait/signal points mean what they mean on cpu (DESIGN section 2):
 * early start kernels wait for producers at sk_wait_inputs (before the first
 * read of a produced buffer, and before the first write to a buffer an
 * earlier op still reads) and may publish their outputs at
 * sk_signal_outputs; the SuperKernel completes both after the call.
 */
#ifndef SUPERKERNEL_CUDA_KERNEL_CUH
#define SUPERKERNEL_CUDA_KERNEL_CUH

#include <stdint.h>

#include "superkernel/cuda/sync.cuh"

#ifdef __cplusplus
#define SK_KERNEL extern "C" __device__
#else
#define SK_KERNEL __device__
#endif

/* __noinline__ for nvcc; the simulator (sim_device.h) cannot define that
 * name without breaking glibc's own use of it. */
#ifdef SK_CUDA_SIM
#define SK_NOINLINE __attribute__((noinline))
#else
#define SK_NOINLINE __noinline__
#endif

/* How a consumer block waits on one producer; every target is a multiple of
 * the launch epoch e. */
enum sk_wait_kind {
  SK_WAIT_COUNTER = 0,    /* all producer blocks: done[slot] >= blocks * e */
  SK_WAIT_FLAG = 1,       /* producer block b: flags[slot + b] >= e */
  SK_WAIT_FLAG_RANGE = 2  /* producer blocks ranges[table + b][0..1]: flags[slot + p] >= e */
};

typedef struct sk_wait_desc {
  uint32_t kind;    /* sk_wait_kind */
  uint32_t slot;    /* counter slot, or the producer's first flag slot */
  uint32_t blocks;  /* counter: the producer's block count */
  uint32_t table;   /* flag range: first row of the consumer's table in sk_sync_area::ranges */
} sk_wait_desc;

/* One op of a SuperKernel step as its blocks see it (constant per step). */
typedef struct sk_op_rt {
  uint32_t blocks;      /* block_dim */
  uint32_t early;       /* the kernel's own wait/signal points are honoured */
  uint32_t num_waits;
  uint32_t first_wait;  /* into sk_sync_area::waits */
  int32_t flag_base;    /* block b done: flags[flag_base + b] = e; -1: none */
  int32_t done;         /* block done: done[slot] += 1; -1: none */
  int32_t ksync;        /* sk_kernel_sync slot (ksync[2k], ksync[2k+1]); -1: none */
  uint32_t pad;
} sk_op_rt;

/* The step's global sync area (owned by the loaded SuperKernel, zero at load,
 * never reset: targets grow with the epoch). */
typedef struct sk_sync_area {
  unsigned long long* done;
  unsigned long long* flags;
  unsigned int* ksync;
  const sk_wait_desc* waits;
  const uint32_t (*ranges)[2];
  unsigned long long epoch;  /* this launch: 1, 2, ... */
} sk_sync_area;

/* Per CTA, in shared memory: what this block's wait/signal points did. */
typedef struct sk_block_state {
  int waited;
  int signalled;
} sk_block_state;

typedef struct sk_ctx {
  uint32_t block_idx;           /* this block, 0 <= block_idx < block_dim */
  uint32_t block_dim;           /* the op's block count */
  void* smem;                   /* dynamic shared memory ("shared_bytes"), NULL if none declared */
  const sk_op_rt* op;           /* NULL: a plain call (the sync calls wait for and signal nothing) */
  const sk_sync_area* area;
  sk_block_state* state;        /* __shared__ */
} sk_ctx;

/* Thread 0 waits for every producer of ctx->op's block; the CTA follows. */
static __device__ SK_NOINLINE void sk_op_wait(const sk_ctx* ctx) {
  __syncthreads();
  if (threadIdx.x == 0) {
    const sk_op_rt* op = ctx->op;
    const sk_sync_area* a = ctx->area;
    const unsigned long long e = a->epoch;
    const uint32_t b = ctx->block_idx;
    for (uint32_t i = 0; i < op->num_waits; ++i) {
      const sk_wait_desc w = a->waits[op->first_wait + i];
      if (w.kind == SK_WAIT_COUNTER) {
        sk_wait_ge(&a->done[w.slot], (unsigned long long)w.blocks * e);
      } else if (w.kind == SK_WAIT_FLAG) {
        sk_wait_ge(&a->flags[w.slot + b], e);
      } else {
        const uint32_t first = a->ranges[w.table + b][0], last = a->ranges[w.table + b][1];
        for (uint32_t p = first; p <= last && first <= last; ++p) sk_wait_ge(&a->flags[w.slot + p], e);
      }
    }
    ctx->state->waited = 1;
  }
  __syncthreads();
}

/* This block of ctx->op is done: flag and/or counter, after the CTA's writes. */
static __device__ SK_NOINLINE void sk_op_signal(const sk_ctx* ctx) {
  __syncthreads();
  if (threadIdx.x == 0) {
    const sk_op_rt* op = ctx->op;
    const sk_sync_area* a = ctx->area;
    if (op->flag_base >= 0) sk_st_release(&a->flags[op->flag_base + ctx->block_idx], a->epoch);
    if (op->done >= 0) sk_red_release_add(&a->done[op->done], 1ull);
    ctx->state->signalled = 1;
  }
  __syncthreads();
}

/* early start: wait for producers here. All threads of the CTA call it, and
 * it is a CTA barrier whether or not there is anything to wait for: a kernel
 * may rely on it to order its own shared-memory writes (an unfused launch, a
 * block without producers and early-start=0 wait for nothing; the cuda
 * simulator found the unfused reference racing without this barrier). */
static __device__ __forceinline__ void sk_wait_inputs(const sk_ctx* ctx) {
  if (!ctx->op || !ctx->op->early || ctx->state->waited) {
    __syncthreads();
    return;
  }
  sk_op_wait(ctx);
}

/* early start: this block's outputs are done. All threads of the CTA call it;
 * a CTA barrier too, for the same reason. */
static __device__ __forceinline__ void sk_signal_outputs(const sk_ctx* ctx) {
  if (!ctx->op || !ctx->op->early || ctx->state->signalled) {
    __syncthreads();
    return;
  }
  sk_op_signal(ctx);
}

/* Barrier among this op's own blocks (kernel declared "kernel_sync": true;
 * each block runs on its own CTA). All threads of the CTA call it. */
static __device__ __forceinline__ void sk_kernel_sync(const sk_ctx* ctx) {
  if (!ctx->op || ctx->op->ksync < 0) {
    __syncthreads();
    return;
  }
  unsigned int* k = &ctx->area->ksync[2 * ctx->op->ksync];
  sk_cta_sync(&k[0], &k[1], ctx->op->blocks);
}

/* The block's slice of n elements under "partition": "block": [*begin, *end).
 * B equal contiguous slices, the last one takes the remainder (as on cpu). */
static __device__ __forceinline__ void sk_block_range(const sk_ctx* ctx, int64_t n, int64_t* begin, int64_t* end) {
  int64_t per = n / (int64_t)ctx->block_dim;
  *begin = per * (int64_t)ctx->block_idx;
  *end = (ctx->block_idx + 1 == ctx->block_dim) ? n : *begin + per;
}

/* Sum of v over the CTA (every thread gets it). `scratch`: 32 floats of
 * __shared__ memory the caller owns; call from all threads. */
static __device__ __forceinline__ float sk_cta_sum(float v, float* scratch) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5, warps = (blockDim.x + 31u) >> 5;
  __syncthreads();
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  v = lane < warps ? scratch[lane] : 0.0f;
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

/* Maximum of v over the CTA (every thread gets it); as sk_cta_sum. */
static __device__ __forceinline__ float sk_cta_max(float v, float* scratch) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5, warps = (blockDim.x + 31u) >> 5;
  __syncthreads();
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  v = lane < warps ? scratch[lane] : -__int_as_float(0x7f800000);
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

/* A kernel's bad input (cpu's sk_report_error): cuda has no error channel
 * to the host yet, so the calling thread stops the launch with `message`. On
 * a GPU it prints "superkernel: <message>" and traps (the launch, and the
 * CUDA context with it, fail: the process must exit); the simulator fails
 * the launch with the message and the thread. Call it from one thread of one
 * block, then return from the kernel on every thread. */
static __device__ void sk_trap_error(const char* message) {
#ifdef SK_CUDA_SIM
  sk_cuda_sim_module_ops->trap(sk_cuda_sim_self, message);
#else
  printf("superkernel: %s\n", message);
  __trap();
#endif
}

/* bf16 / f16 storage (uint16_t) to float; both exact. */
static __device__ __forceinline__ float sk_bf16_to_f32(uint16_t h) { return __uint_as_float((unsigned)h << 16); }
static __device__ __forceinline__ float sk_f16_to_f32(uint16_t h) {
#ifdef SK_CUDA_SIM
  return sk_cuda_sim_f16_to_f32(h);
#else
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
  return f;
#endif
}

/* One 16-byte load from global memory; p must be 16-byte aligned (the
 * simulator traps where a GPU would fault). Sub-kernel pointers are generic,
 * so a plain uint4 dereference compiles to a generic ld.v4: the explicit
 * ld.global.v4 skips the address-space check. An ordinary (weak, coherent)
 * load, not ld.global.nc: the buffer may be one an earlier op of the same
 * persistent launch wrote (see the rules above). The "memory" clobber keeps it
 * after the op's wait when the call is inlined. */
static __device__ __forceinline__ uint4 sk_ld_global_v4(const void* p) {
#ifdef SK_CUDA_SIM
  return sk_cuda_sim_ld16(p);
#else
  uint4 v;
  asm("{\n\t.reg .u64 g;\n\tcvta.to.global.u64 g, %4;\n\tld.global.v4.u32 {%0, %1, %2, %3}, [g];\n\t}"
      : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
      : "l"(p)
      : "memory");
  return v;
#endif
}

/* One 16-byte store to global memory; p must be 16-byte aligned (the
 * simulator traps where a GPU would fault). An ordinary store, like
 * sk_ld_global_v4's load; the "memory" clobber keeps it before the op's
 * signal when the call is inlined. */
static __device__ __forceinline__ void sk_st_global_v4(void* p, uint4 v) {
#ifdef SK_CUDA_SIM
  sk_cuda_sim_st16(p, v);
#else
  asm volatile("{\n\t.reg .u64 g;\n\tcvta.to.global.u64 g, %0;\n\tst.global.v4.u32 [g], {%1, %2, %3, %4};\n\t}"
               :
               : "l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
               : "memory");
#endif
}

/* 16 bytes as four floats and back (the vector kernels' f32 view of a uint4). */
static __device__ __forceinline__ void sk_u4_to_f4(uint4 q, float* f) {
  f[0] = __uint_as_float(q.x);
  f[1] = __uint_as_float(q.y);
  f[2] = __uint_as_float(q.z);
  f[3] = __uint_as_float(q.w);
}
static __device__ __forceinline__ uint4 sk_f4_to_u4(const float* f) {
  uint4 q;
  q.x = __float_as_uint(f[0]);
  q.y = __float_as_uint(f[1]);
  q.z = __float_as_uint(f[2]);
  q.w = __float_as_uint(f[3]);
  return q;
}

/* The vector kernels' row split, one rule for all of them: 16-byte accesses need 16-byte-aligned addresses, so
 * a row of f32 is a scalar head up to its first 16-byte boundary (sk_head_f32), whole 16-byte vectors where
 * every row the loop touches is aligned after that head (sk_aligned16), and a scalar tail. */
static __device__ __forceinline__ bool sk_aligned16(const void* p) { return ((uintptr_t)p & 15u) == 0; }
/* The floats of a row of n at p before its first 16-byte boundary (0..3, at most n). */
static __device__ __forceinline__ int64_t sk_head_f32(const float* p, int64_t n) {
  const int64_t mis = (int64_t)(((uintptr_t)p & 15u) >> 2);
  const int64_t h = mis == 0 ? 0 : 4 - mis;
  return h < n ? h : n;
}
/* f[0..4) = p[0..4): one 16-byte load when vec, else element by element, 0 beyond n (a tail group). */
static __device__ __forceinline__ void sk_ld4_f32(const float* p, bool vec, int64_t n, float* f) {
  if (vec) {
    sk_u4_to_f4(sk_ld_global_v4(p), f);
  } else {
    for (int i = 0; i < 4; ++i) f[i] = i < n ? p[i] : 0.0f;  // a constant trip count: nvcc unrolls it
  }
}
/* p[0..4) = f[0..4): one 16-byte store when vec, else element by element. */
static __device__ __forceinline__ void sk_st4_f32(float* p, bool vec, const float* f) {
  if (vec) {
    sk_st_global_v4(p, sk_f4_to_u4(f));
  } else {
    for (int i = 0; i < 4; ++i) p[i] = f[i];
  }
}

/* dst[0..n) = src[0..n) by the whole CTA (kv_append's row, concat's runs): split at dst's first 16-byte boundary,
 * the body in 16-byte loads and stores, four per thread per step with their loads issued first, where src is
 * 16-byte aligned at that point too, else one float at a time. A copy: the path never changes a value. */
static __device__ __forceinline__ void sk_cta_copy_f32(const float* src, float* dst, int64_t n) {
  const int64_t t = threadIdx.x, nt = blockDim.x;
  const int64_t head = sk_head_f32(dst, n), nv = (n - head) / 4;
  if (!sk_aligned16(src + head)) {
    for (int64_t i = t; i < n; i += nt) dst[i] = src[i];
    return;
  }
  const float* sb = src + head;
  float* db = dst + head;
  int64_t v = t;
  for (; v + 3 * nt < nv; v += 4 * nt) {
    uint4 q[4];  // constant trip counts: nvcc unrolls both loops (no #pragma here: host compilers include this too)
    for (int u = 0; u < 4; ++u) q[u] = sk_ld_global_v4(sb + 4 * (v + u * nt));
    for (int u = 0; u < 4; ++u) sk_st_global_v4(db + 4 * (v + u * nt), q[u]);
  }
  for (; v < nv; v += nt) sk_st_global_v4(db + 4 * v, sk_ld_global_v4(sb + 4 * v));
  if (t < head) dst[t] = src[t];
  for (int64_t i = head + 4 * nv + t; i < n; i += nt) dst[i] = src[i];
}

#endif /* SUPERKERNEL_CUDA_KERNEL_CUH */
