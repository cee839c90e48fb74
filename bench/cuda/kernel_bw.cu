// Bandwidth of the builtin cuda gemv kernels and the other decode builtins (issue 40 item 3): each kernel of
// kernels/cuda/gemv.cu (f32, bf16, f16, q8_0 and q4_0 weights; the same source the SuperKernel links, included here
// with the descriptor's macros) alone, one plain call per launch (ctx->op == NULL, as an unfused op), against the
// device's copy bandwidth measured in the same process by a D2D copy kernel (16-byte loads and stores over 1 GiB).
//   GB/s = bytes that must move / time: the weights (rows x cols of their format; q8_0 34 bytes per 32, q4_0 18),
//   x (cols f32) and y (rows f32) for a gemv; read + written bytes for the copy. "% of copy" = gemv GB/s over copy
//   GB/s (issue 40's bar: >= 70%).
// Shapes are decode projections, rows x cols: 4096 x 4096, 11008 x 4096 (up/gate), 4096 x 11008 (down). Grid: one
// block per 8 rows (256 threads, one warp per row, as the declarations' "threads"). The weights rotate through
// copies totalling at least 256 MB (more than an H200's L2) so every launch streams them from HBM. Each sample is
// a batch of launches timed with events (time per launch = batch / launches), after warm-up; reported: median and
// min-max over the samples.
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -Iruntime/cuda/include bench/cuda/kernel_bw.cu -o kernel_bw
//   ./kernel_bw [samples=15] [launches per sample=16]
//
// Then the other decode-step builtins (norm.cu, attention.cu's attn_decode and kv_append, elementwise.cu's add and
// swiglu) at decode shapes, one plain call per launch with the op list's blocks (rms_norm: 1 row, so 1 block; attn_decode:
// one block per head, its contract: a head is one block's), bytes = what each must read and write once (attn_decode:
// the K and V rows 0..pos of the head's kv heads, q and out). Their buffers rotate through the same 256 MB ring, so
// the KV cache streams from HBM; the small kernels (a row of 4096 floats) are bound by launch and latency, not
// bandwidth, and their "% of copy" says how far from it they are.
//
// Then matmul.cu (f32, bf16, q8_0 and q4_0 weights of 4096 x 4096 with 1, 4 and 16 rows of A; the shape and grid
// are explained at its rows below).
//
// Then mul (elementwise.cu) and the four casts (cast.cu) over 16M elements (a weight-sized tensor: 64 MB of f32)
// with 4 blocks per SM: bytes = what they read and write (f32 4 bytes an element, bf16 and f16 2), so "% of copy"
// is how close they stream to the copy kernel.
//
// Values are not checked here (tests/cuda/gpu/CudaGemvTest.cpp and CudaMatmulTest.cpp check the kernels against the
// cpu target); the weights are a byte pattern (0x3c), finite in every format. scripts/gpu-check.sh runs it (step 6).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "superkernel/cuda/kernel.cuh"

#include "check.cuh"


// ---- the builtin kernels, one inclusion per weight format ----------------------------------------------------
// gemv.cu defines its helpers for one format per translation unit; a namespace per inclusion keeps them apart,
// and the macros it defines are undefined before the next one.
#define SK_GEMV 1
namespace gemv_f32 {
#include "../../kernels/cuda/gemv.cu"
}
#undef SK_GEMV_ENTRY
#undef SK_MOE_ENTRY
#undef SK_VW
#undef SK_W_COLS_ERROR
namespace gemv_bf16 {
#define SK_WEIGHT_BF16 1
#include "../../kernels/cuda/gemv.cu"
#undef SK_WEIGHT_BF16
}
#undef SK_GEMV_ENTRY
#undef SK_MOE_ENTRY
#undef SK_VW
#undef SK_W_COLS_ERROR
namespace gemv_f16 {
#define SK_WEIGHT_F16 1
#include "../../kernels/cuda/gemv.cu"
#undef SK_WEIGHT_F16
}
#undef SK_GEMV_ENTRY
#undef SK_MOE_ENTRY
#undef SK_VW
#undef SK_W_COLS_ERROR
namespace gemv_q8_0 {
#define SK_WEIGHT_Q8_0 1
#include "../../kernels/cuda/gemv.cu"
#undef SK_WEIGHT_Q8_0
}
// The block formats' macros differ from q8_0 to q4_0 (sk_weight.cuh).
#undef SK_GEMV_ENTRY
#undef SK_W_COLS_ERROR
#undef SK_WB_BYTES
#undef SK_W_NAME
#undef SK_WB_GROUP_WORDS
#undef SK_WB_BLOCK_WORDS
namespace gemv_q4_0 {
#define SK_WEIGHT_Q4_0 1
#include "../../kernels/cuda/gemv.cu"
#undef SK_WEIGHT_Q4_0
}
#undef SK_WB_BYTES
#undef SK_W_NAME
#undef SK_WB_GROUP_WORDS
#undef SK_WB_BLOCK_WORDS

// matmul.cu, one inclusion per weight format as for gemv.cu.
namespace mm_f32 {
#include "../../kernels/cuda/matmul.cu"
}
#undef SK_MATMUL_ENTRY
namespace mm_bf16 {
#define SK_WEIGHT_BF16 1
#include "../../kernels/cuda/matmul.cu"
#undef SK_WEIGHT_BF16
}
#undef SK_MATMUL_ENTRY
#undef SK_VW
namespace mm_q8_0 {
#define SK_WEIGHT_Q8_0 1
#include "../../kernels/cuda/matmul.cu"
#undef SK_WEIGHT_Q8_0
}
#undef SK_MATMUL_ENTRY
#undef SK_WB_BYTES
#undef SK_W_NAME
#undef SK_WB_GROUP_WORDS
#undef SK_WB_BLOCK_WORDS
namespace mm_q4_0 {
#define SK_WEIGHT_Q4_0 1
#include "../../kernels/cuda/matmul.cu"
#undef SK_WEIGHT_Q4_0
}
#undef SK_MATMUL_ENTRY

// The other builtins, one inclusion per kernel (each file defines one kernel per translation unit by its macro).
#define SK_NORM_RMS 1
namespace rms_norm {
#include "../../kernels/cuda/norm.cu"
}
#undef SK_NORM_RMS
#undef SK_NORM_NT
#define SK_NORM_ADD_RMS 1
namespace add_rms_norm {
#include "../../kernels/cuda/norm.cu"
}
#undef SK_NORM_ADD_RMS
#undef SK_NORM_NT
#define SK_ATTN_DECODE 1
namespace attn_decode {
#include "../../kernels/cuda/attention.cu"
}
#undef SK_ATTN_DECODE
#define SK_ROPE 1
namespace rope {
#include "../../kernels/cuda/attention.cu"
}
#undef SK_ROPE
#define SK_MOE_GATE 1
namespace moe_gate {
#include "../../kernels/cuda/moe.cu"
}
#undef SK_MOE_GATE
#undef SK_AD_CHUNK
#undef SK_AD_NT
#define SK_KV_APPEND 1
namespace kv_append {
#include "../../kernels/cuda/attention.cu"
}
#undef SK_KV_APPEND
#define SK_ELT_ADD 1
namespace elt_add {
#include "../../kernels/cuda/elementwise.cu"
}
#undef SK_ELT_ADD
#define SK_ELT_SWIGLU 1
namespace elt_swiglu {
#include "../../kernels/cuda/elementwise.cu"
}
#undef SK_ELT_SWIGLU
#define SK_ELT_MUL 1
namespace elt_mul {
#include "../../kernels/cuda/elementwise.cu"
}
#undef SK_ELT_MUL
// cast.cu, one inclusion per direction.
#define SK_CAST_F32_BF16 1
namespace cast_f32_bf16 {
#include "../../kernels/cuda/cast.cu"
}
#undef SK_CAST_F32_BF16
#undef SK_CAST_TO_16
#undef SK_CAST_ENTRY
#undef SK_CAST_IN_WORDS
#define SK_CAST_BF16_F32 1
namespace cast_bf16_f32 {
#include "../../kernels/cuda/cast.cu"
}
#undef SK_CAST_BF16_F32
#undef SK_CAST_ENTRY
#undef SK_CAST_IN_WORDS
#define SK_CAST_F32_F16 1
namespace cast_f32_f16 {
#include "../../kernels/cuda/cast.cu"
}
#undef SK_CAST_F32_F16
#undef SK_CAST_TO_16
#undef SK_CAST_ENTRY
#undef SK_CAST_IN_WORDS
#define SK_CAST_F16_F32 1
namespace cast_f16_f32 {
#include "../../kernels/cuda/cast.cu"
}
#undef SK_CAST_F16_F32

constexpr int kThreads = 256, kRowsPerBlock = kThreads / 32;

// A plain call of a builtin, as an unfused launch makes it: block b of gridDim.x, no op (no waits or signals).
#define SK_BENCH_WRAPPER(name, ns, entry, wt)                                                              \
  __global__ void name(const wt* w, const float* x, float* y, int64_t rows, int64_t cols) {              \
    sk_ctx ctx = {blockIdx.x, gridDim.x, nullptr, nullptr, nullptr, nullptr};                             \
    ns::entry(&ctx, w, x, y, rows, cols);                                                                 \
  }
SK_BENCH_WRAPPER(launch_f32, gemv_f32, sk_gemv_f32, float)
SK_BENCH_WRAPPER(launch_bf16, gemv_bf16, sk_gemv_bf16w, uint16_t)
SK_BENCH_WRAPPER(launch_f16, gemv_f16, sk_gemv_f16w, uint16_t)
SK_BENCH_WRAPPER(launch_q8_0, gemv_q8_0, sk_gemv_q8_0, uint8_t)
SK_BENCH_WRAPPER(launch_q4_0, gemv_q4_0, sk_gemv_q4_0, uint8_t)

#define SK_BENCH_MATMUL(name, ns, entry, wt)                                                               \
  __global__ void name(const float* a, const wt* b, float* c, int64_t m, int64_t k, int64_t n) {           \
    sk_ctx ctx = {blockIdx.x, gridDim.x, nullptr, nullptr, nullptr, nullptr};                              \
    ns::entry(&ctx, a, b, c, m, k, n);                                                                     \
  }
SK_BENCH_MATMUL(launch_matmul_f32, mm_f32, sk_matmul_f32, float)
SK_BENCH_MATMUL(launch_matmul_bf16, mm_bf16, sk_matmul_bf16w, uint16_t)
SK_BENCH_MATMUL(launch_matmul_q8_0, mm_q8_0, sk_matmul_q8_0, uint8_t)
SK_BENCH_MATMUL(launch_matmul_q4_0, mm_q4_0, sk_matmul_q4_0, uint8_t)

#define SK_BENCH_CTX sk_ctx ctx = {blockIdx.x, gridDim.x, nullptr, nullptr, nullptr, nullptr}
__global__ void launch_rms_norm(const float* x, const float* w, float* y, int64_t rows, int64_t cols) {
  SK_BENCH_CTX;
  rms_norm::sk_rms_norm_f32(&ctx, x, w, y, rows, cols, 1e-6f);
}
__global__ void launch_add_rms_norm(const float* x, const float* r, const float* w, float* sum, float* y, int64_t rows,
                                    int64_t cols) {
  SK_BENCH_CTX;
  add_rms_norm::sk_add_rms_norm_f32(&ctx, x, r, w, sum, y, rows, cols, 1e-6f);
}
__global__ void launch_attn_decode(const float* q, const float* k, const float* v, float* o, int64_t heads,
                                   int64_t kv_heads, int64_t dim, int64_t cap, int64_t pos) {
  SK_BENCH_CTX;
  attn_decode::sk_attn_decode_f32(&ctx, q, k, v, o, heads, kv_heads, dim, cap, pos, 0.088388f);
}
// rope at theta 10000; the gate as softmax, normalized (idx is i32: the ring's floats hold it).
__global__ void launch_rope(const float* x, float* y, int64_t heads, int64_t dim, int64_t pos) {
  SK_BENCH_CTX;
  rope::sk_rope_f32(&ctx, x, y, heads, dim, pos, 10000.0f);
}
__global__ void launch_moe_gate(const float* logits, float* idx, float* w, int64_t rows, int64_t experts,
                                int64_t topk) {
  SK_BENCH_CTX;
  moe_gate::sk_moe_gate_topk_f32(&ctx, logits, (int32_t*)idx, w, rows, experts, topk, 0, 1);
}
__global__ void launch_kv_append(const float* k, const float* v, float* kc, float* vc, int64_t row, int64_t cap,
                                 int64_t pos) {
  SK_BENCH_CTX;
  kv_append::sk_kv_append_f32(&ctx, k, v, kc, vc, row, cap, pos);
}
__global__ void launch_add(const float* x, const float* y, float* z, int64_t n) {
  SK_BENCH_CTX;
  elt_add::sk_add_f32(&ctx, x, y, z, n);
}
__global__ void launch_swiglu(const float* g, const float* u, float* y, int64_t n) {
  SK_BENCH_CTX;
  elt_swiglu::sk_swiglu_f32(&ctx, g, u, y, n);
}
__global__ void launch_mul(const float* x, const float* y, float* z, int64_t n) {
  SK_BENCH_CTX;
  elt_mul::sk_mul_f32(&ctx, x, y, z, n);
}
// The casts: 16-bit sides as uint16_t (the buffers are f32 slots of the ring, reinterpreted).
__global__ void launch_cast_f32_bf16(const float* x, uint16_t* y, int64_t n) {
  SK_BENCH_CTX;
  cast_f32_bf16::sk_cast_f32_bf16(&ctx, x, y, n);
}
__global__ void launch_cast_bf16_f32(const uint16_t* x, float* y, int64_t n) {
  SK_BENCH_CTX;
  cast_bf16_f32::sk_cast_bf16_f32(&ctx, x, y, n);
}
__global__ void launch_cast_f32_f16(const float* x, uint16_t* y, int64_t n) {
  SK_BENCH_CTX;
  cast_f32_f16::sk_cast_f32_f16(&ctx, x, y, n);
}
__global__ void launch_cast_f16_f32(const uint16_t* x, float* y, int64_t n) {
  SK_BENCH_CTX;
  cast_f16_f32::sk_cast_f16_f32(&ctx, x, y, n);
}

// The reference: n 16-byte words copied, grid-stride.
__global__ void copy_kernel(const uint4* __restrict__ src, uint4* __restrict__ dst, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    dst[i] = src[i];
}

struct Stats {
  double med, mn, mx;
};
Stats stats(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return {n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]), v.front(), v.back()};
}

// Seconds per launch of `launch(i)` (i: the launch's index in the batch), `samples` batches after 3 warm-up batches.
template <class F>
std::vector<double> timeLaunches(F launch, int samples, int batch) {
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  std::vector<double> out;
  for (int s = -3; s < samples; ++s) {
    CHECK(cudaEventRecord(a));
    for (int i = 0; i < batch; ++i) launch(i);
    CHECK(cudaEventRecord(b));
    CHECK(cudaEventSynchronize(b));
    CHECK(cudaGetLastError());
    float ms = 0.0f;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    if (s >= 0) out.push_back(ms * 1e-3 / batch);
  }
  CHECK(cudaEventDestroy(a));
  CHECK(cudaEventDestroy(b));
  return out;
}

struct Format {
  const char* name;
  int kind;  // 0 f32, 1 bf16, 2 f16, 3 q8_0, 4 q4_0
  size_t rowBytes(int64_t cols) const {
    return kind == 0   ? 4 * (size_t)cols
           : kind == 3 ? (size_t)cols / 32 * 34
           : kind == 4 ? (size_t)cols / 32 * 18
                       : 2 * (size_t)cols;
  }
};

int main(int argc, char** argv) {
  const int samples = argc > 1 ? std::atoi(argv[1]) : 15;
  const int batch = argc > 2 ? std::atoi(argv[2]) : 16;
  if (samples < 1 || batch < 1) {
    std::fprintf(stderr, "usage: %s [samples>=1] [launches per sample>=1]\n", argv[0]);
    return 2;
  }
  int dev = 0, driver = 0, runtime = 0, smClock = 0, memClock = 0, busWidth = 0;
  CHECK(cudaGetDevice(&dev));
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, dev));
  CHECK(cudaDriverGetVersion(&driver));
  CHECK(cudaRuntimeGetVersion(&runtime));
  (void)cudaDeviceGetAttribute(&smClock, cudaDevAttrClockRate, dev);
  (void)cudaDeviceGetAttribute(&memClock, cudaDevAttrMemoryClockRate, dev);
  (void)cudaDeviceGetAttribute(&busWidth, cudaDevAttrGlobalMemoryBusWidth, dev);

  // Copy bandwidth: 1 GiB to 1 GiB, 8 CTAs of 256 threads per SM (a full SM's threads, grid-stride).
  const size_t copyBytes = 1ull << 30, words = copyBytes / 16;
  uint4 *src = nullptr, *dst = nullptr;
  CHECK(cudaMalloc(&src, copyBytes));
  CHECK(cudaMalloc(&dst, copyBytes));
  CHECK(cudaMemset(src, 0x3c, copyBytes));
  const int copyGrid = prop.multiProcessorCount * 8;
  const std::vector<double> copyT = timeLaunches(
      [&](int) { copy_kernel<<<copyGrid, kThreads>>>(src, dst, words); }, samples, std::max(1, batch / 8));
  std::vector<double> copyGbs;
  for (double t : copyT) copyGbs.push_back(2.0 * copyBytes / t * 1e-9);
  const Stats copy = stats(copyGbs);
  CHECK(cudaFree(src));
  CHECK(cudaFree(dst));

  std::printf("# superkernel cuda kernel bandwidth (timing only: values are not checked)\n\n");
  std::printf("GPU: %s, %d SMs, sm_%d%d, %d-bit bus, L2 %d MB; driver %d, runtime %d; SM clock %d MHz (max), memory "
              "clock %d MHz\n",
              prop.name, prop.multiProcessorCount, prop.major, prop.minor, busWidth, prop.l2CacheSize >> 20, driver,
              runtime, smClock / 1000, memClock / 1000);
  std::printf("command: %s %d %d\n", argv[0], samples, batch);
  std::printf("copy: %.1f GB/s median (min %.1f, max %.1f), D2D copy kernel, 1 GiB read + 1 GiB written\n\n",
              copy.med, copy.mn, copy.mx);
  std::printf("| kernel | shape (rows x cols) | MB moved | us per launch, median | GB/s, median | min | max | %% of copy "
              "|\n|---|---|---|---|---|---|---|---|\n");

  const Format formats[] = {
      {"gemv_f32", 0}, {"gemv_bf16w", 1}, {"gemv_f16w", 2}, {"gemv_q8_0", 3}, {"gemv_q4_0", 4}};
  const int64_t shapes[][2] = {{4096, 4096}, {11008, 4096}, {4096, 11008}};
  constexpr size_t kRing = 256ull << 20;  // weights bytes cycled through: more than L2
  for (const auto& sh : shapes) {
    const int64_t rows = sh[0], cols = sh[1];
    float *x = nullptr, *y = nullptr;
    CHECK(cudaMalloc(&x, (size_t)cols * 4));
    CHECK(cudaMalloc(&y, (size_t)rows * 4));
    CHECK(cudaMemset(x, 0x3c, (size_t)cols * 4));
    for (const Format& f : formats) {
      const size_t wBytes = f.rowBytes(cols) * (size_t)rows;
      const int copies = (int)std::max<size_t>(1, (kRing + wBytes - 1) / wBytes);
      std::vector<void*> w(copies);
      for (auto& p : w) {
        CHECK(cudaMalloc(&p, wBytes));
        CHECK(cudaMemset(p, 0x3c, wBytes));
      }
      const int grid = (int)((rows + kRowsPerBlock - 1) / kRowsPerBlock);
      auto launch = [&](int i) {
        const void* wi = w[i % copies];
        switch (f.kind) {
          case 0: launch_f32<<<grid, kThreads>>>((const float*)wi, x, y, rows, cols); break;
          case 1: launch_bf16<<<grid, kThreads>>>((const uint16_t*)wi, x, y, rows, cols); break;
          case 2: launch_f16<<<grid, kThreads>>>((const uint16_t*)wi, x, y, rows, cols); break;
          case 3: launch_q8_0<<<grid, kThreads>>>((const uint8_t*)wi, x, y, rows, cols); break;
          default: launch_q4_0<<<grid, kThreads>>>((const uint8_t*)wi, x, y, rows, cols); break;
        }
      };
      const std::vector<double> t = timeLaunches(launch, samples, batch);
      const double bytes = (double)wBytes + 4.0 * (double)cols + 4.0 * (double)rows;
      std::vector<double> gbs;
      for (double s : t) gbs.push_back(bytes / s * 1e-9);
      const Stats g = stats(gbs), us = stats(t);
      std::printf("| %s | %lld x %lld | %.1f | %.2f | %.1f | %.1f | %.1f | %.0f%% |\n", f.name, (long long)rows,
                  (long long)cols, bytes * 1e-6, us.med * 1e6, g.med, g.mn, g.mx, 100.0 * g.med / copy.med);
      for (void* p : w) CHECK(cudaFree(p));
    }
    CHECK(cudaFree(x));
    CHECK(cudaFree(y));
  }

  // matmul: C[m, 4096] = A[m, 4096] x B for m = 1, 4, 16 (f32 and bf16: B [K, N]; q8_0: W [N, K]), one block
  // per SM (what a fused step's coarsening gives a block_dim_invariant op). The blocks split the m x N elements of
  // C row-major (the cpu contract), so a block holds whole rows only when m exceeds the grid: at these shapes each
  // block computes a column range of one or two rows and the weights are read about m times in all (from L2 where
  // they stay there). "MB moved" counts them once (weights + A + C), so GB/s is the kernel against the floor.
  const Format mmFormats[] = {{"matmul_f32", 0}, {"matmul_bf16w", 1}, {"matmul_q8_0", 3}, {"matmul_q4_0", 4}};
  for (const int64_t m : {1, 4, 16}) {
    const int64_t K = 4096, N = 4096;
    float *a = nullptr, *c = nullptr;
    CHECK(cudaMalloc(&a, (size_t)(m * K) * 4));
    CHECK(cudaMalloc(&c, (size_t)(m * N) * 4));
    CHECK(cudaMemset(a, 0x3c, (size_t)(m * K) * 4));
    for (const Format& f : mmFormats) {
      const size_t wBytes = f.rowBytes(K) * (size_t)N;
      const int copies = (int)std::max<size_t>(1, (kRing + wBytes - 1) / wBytes);
      std::vector<void*> w(copies);
      for (auto& p : w) {
        CHECK(cudaMalloc(&p, wBytes));
        CHECK(cudaMemset(p, 0x3c, wBytes));
      }
      const int grid = prop.multiProcessorCount;
      auto launch = [&](int i) {
        const void* wi = w[i % copies];
        switch (f.kind) {
          case 0: launch_matmul_f32<<<grid, kThreads>>>(a, (const float*)wi, c, m, K, N); break;
          case 1: launch_matmul_bf16<<<grid, kThreads>>>(a, (const uint16_t*)wi, c, m, K, N); break;
          case 3: launch_matmul_q8_0<<<grid, kThreads>>>(a, (const uint8_t*)wi, c, m, K, N); break;
          default: launch_matmul_q4_0<<<grid, kThreads>>>(a, (const uint8_t*)wi, c, m, K, N); break;
        }
      };
      const std::vector<double> t = timeLaunches(launch, samples, batch);
      const double bytes = (double)wBytes + 4.0 * (double)(m * K) + 4.0 * (double)(m * N);
      std::vector<double> gbs;
      for (double s : t) gbs.push_back(bytes / s * 1e-9);
      const Stats g = stats(gbs), us = stats(t);
      std::printf("| %s | m %lld: %lld x %lld weights | %.1f | %.2f | %.1f | %.1f | %.1f | %.0f%% |\n", f.name,
                  (long long)m, (long long)K, (long long)N, bytes * 1e-6, us.med * 1e6, g.med, g.mn, g.mx,
                  100.0 * g.med / copy.med);
      for (void* p : w) CHECK(cudaFree(p));
    }
    CHECK(cudaFree(a));
    CHECK(cudaFree(c));
  }

  // The other builtins: `floats` f32 elements per instance (every buffer of one launch, back to back, each at a
  // 256-byte boundary), instances cycled through the ring; `moved` the bytes one launch must read and write.
  struct Other {
    const char* name;
    const char* shape;
    int which;                 // 0 rms_norm, 1 add_rms_norm, 2 attn_decode, 3 kv_append, 4 add, 5 swiglu, 6 mul,
                               // 7 cast_f32_bf16, 8 cast_bf16_f32, 9 cast_f32_f16, 10 cast_f16_f32,
                               // 11 rope (a heads x b dim at pos c), 12 moe_gate_topk (a rows x b experts, top c)
    int64_t a, b, c, d, e;     // the kernel's sizes (below)
    int grid;                  // 0: 4 blocks per SM
  };
  const Other others[] = {
      {"rms_norm_f32", "1 x 4096", 0, 1, 4096, 0, 0, 0, 1},
      {"rms_norm_f32", "1 x 8192", 0, 1, 8192, 0, 0, 0, 1},
      {"add_rms_norm_f32", "1 x 4096", 1, 1, 4096, 0, 0, 0, 1},
      {"attn_decode_f32", "32 heads / 8 kv x 128, pos 1023", 2, 32, 8, 128, 1024, 1023, 32},
      {"attn_decode_f32", "32 heads / 8 kv x 128, pos 4095", 2, 32, 8, 128, 4096, 4095, 32},
      {"kv_append_f32", "row 1024 (8 x 128)", 3, 1024, 4096, 100, 0, 0, 8},
      // rope of a decode step's q (32 heads) and k (8 kv heads), one block per head; the table costs a pow and a
      // sincos in double per pair once per block.
      {"rope_f32", "32 heads x 128, pos 4095", 11, 32, 128, 4095, 0, 0, 32},
      {"rope_f32", "8 heads x 128, pos 4095", 11, 8, 128, 4095, 0, 0, 8},
      // the MoE router of one token (a warp per row) and of 64 rows over 8 blocks; the logits all equal (0x3c):
      // every pick a tie.
      {"moe_gate_topk_f32", "1 x 256 experts, top 8", 12, 1, 256, 8, 0, 0, 1},
      {"moe_gate_topk_f32", "64 x 64 experts, top 6", 12, 64, 64, 6, 0, 0, 8},
      {"add_f32", "4096", 4, 4096, 0, 0, 0, 0, 8},
      {"swiglu_f32", "11008", 5, 11008, 0, 0, 0, 0, 8},
      {"mul_f32", "11008", 6, 11008, 0, 0, 0, 0, 8},
      {"mul_f32", "16M", 6, 1 << 24, 0, 0, 0, 0, 0},
      // The casts of a weight-sized tensor (16M elements: 64 MB of f32) over 4 blocks per SM.
      {"cast_f32_bf16", "16M", 7, 1 << 24, 0, 0, 0, 0, 0},
      {"cast_bf16_f32", "16M", 8, 1 << 24, 0, 0, 0, 0, 0},
      {"cast_f32_f16", "16M", 9, 1 << 24, 0, 0, 0, 0, 0},
      {"cast_f16_f32", "16M", 10, 1 << 24, 0, 0, 0, 0, 0},
  };
  for (const Other& k : others) {
    auto up = [](int64_t n) { return (n + 63) / 64 * 64; };  // floats to the next 256-byte boundary
    std::vector<int64_t> parts;  // f32 elements of each buffer of the launch
    double moved = 0.0;
    switch (k.which) {
      case 0: parts = {k.a * k.b, k.b, k.a * k.b}; moved = 4.0 * (3 * k.a * k.b); break;
      case 1: parts = {k.a * k.b, k.a * k.b, k.b, k.a * k.b, k.a * k.b}; moved = 4.0 * (5 * k.a * k.b); break;
      case 2:
        parts = {k.a * k.c, k.d * k.b * k.c, k.d * k.b * k.c, k.a * k.c};
        moved = 4.0 * (2.0 * (double)(k.e + 1) * k.b * k.c + 2.0 * k.a * k.c);
        break;
      case 3: parts = {k.a, k.a, k.b * k.a, k.b * k.a}; moved = 4.0 * 4 * k.a; break;
      case 11: parts = {k.a * k.b, k.a * k.b}; moved = 4.0 * 2 * k.a * k.b; break;
      case 12: parts = {k.a * k.b, k.a * k.c, k.a * k.c}; moved = 4.0 * (k.a * k.b + 2 * k.a * k.c); break;
      case 7:
      case 9: parts = {k.a, (k.a + 1) / 2}; moved = 6.0 * k.a; break;  // f32 in, 16-bit out
      case 8:
      case 10: parts = {(k.a + 1) / 2, k.a}; moved = 6.0 * k.a; break;
      default: parts = {k.a, k.a, k.a}; moved = 4.0 * 3 * k.a; break;
    }
    int64_t instance = 0;
    std::vector<int64_t> at;
    for (int64_t p : parts) {
      at.push_back(instance);
      instance += up(p);
    }
    const size_t instBytes = 4 * (size_t)instance;
    const int copies = (int)std::min<size_t>(4096, std::max<size_t>(1, (kRing + instBytes - 1) / instBytes));
    float* ring = nullptr;
    CHECK(cudaMalloc(&ring, instBytes * copies));
    CHECK(cudaMemset(ring, 0x3c, instBytes * copies));  // 0x3c3c3c3c: about 0.0115 in f32, finite everywhere
    const int grid = k.grid > 0 ? k.grid : 4 * prop.multiProcessorCount;
    auto launch = [&](int i) {
      float* base = ring + (size_t)(i % copies) * instance;
      float* p[5];
      for (size_t j = 0; j < at.size(); ++j) p[j] = base + at[j];
      switch (k.which) {
        case 0: launch_rms_norm<<<grid, kThreads>>>(p[0], p[1], p[2], k.a, k.b); break;
        case 1: launch_add_rms_norm<<<grid, kThreads>>>(p[0], p[1], p[2], p[3], p[4], k.a, k.b); break;
        case 2: launch_attn_decode<<<grid, kThreads>>>(p[0], p[1], p[2], p[3], k.a, k.b, k.c, k.d, k.e); break;
        case 3: launch_kv_append<<<grid, kThreads>>>(p[0], p[1], p[2], p[3], k.a, k.b, k.c); break;
        case 11: launch_rope<<<grid, kThreads>>>(p[0], p[1], k.a, k.b, k.c); break;
        case 12: launch_moe_gate<<<grid, kThreads>>>(p[0], p[1], p[2], k.a, k.b, k.c); break;
        case 4: launch_add<<<grid, kThreads>>>(p[0], p[1], p[2], k.a); break;
        case 5: launch_swiglu<<<grid, kThreads>>>(p[0], p[1], p[2], k.a); break;
        case 6: launch_mul<<<grid, kThreads>>>(p[0], p[1], p[2], k.a); break;
        case 7: launch_cast_f32_bf16<<<grid, kThreads>>>(p[0], (uint16_t*)p[1], k.a); break;
        case 8: launch_cast_bf16_f32<<<grid, kThreads>>>((const uint16_t*)p[0], p[1], k.a); break;
        case 9: launch_cast_f32_f16<<<grid, kThreads>>>(p[0], (uint16_t*)p[1], k.a); break;
        default: launch_cast_f16_f32<<<grid, kThreads>>>((const uint16_t*)p[0], p[1], k.a); break;
      }
    };
    const std::vector<double> t = timeLaunches(launch, samples, batch);
    std::vector<double> gbs;
    for (double s : t) gbs.push_back(moved / s * 1e-9);
    const Stats g = stats(gbs), us = stats(t);
    std::printf("| %s | %s | %.2f | %.2f | %.1f | %.1f | %.1f | %.0f%% |\n", k.name, k.shape, moved * 1e-6, us.med * 1e6,
                g.med, g.mn, g.mx, 100.0 * g.med / copy.med);
    CHECK(cudaFree(ring));
  }
  return 0;
}
