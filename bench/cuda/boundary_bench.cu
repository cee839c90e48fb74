// Per-boundary cost on a GPU (issue 11): a chain of N tiny dependent ops, each
// op one block per CTA (G CTAs of 256 threads, one float4-free add per thread),
// run seven ways, interleaved in one process:
//   launch     one kernel launch per op on a stream
//   graph      the same launches captured in a CUDA Graph
//   graph_pdl  CUDA Graph + programmatic dependent launch: each kernel waits
//              with cudaGridDependencySynchronize() before touching data
//   sk_local   one persistent kernel, no sync (each CTA reads its own slice):
//              the floor of a fused op sequence
//   sk_flag    persistent; op k's CTA c reads the slice CTA (c + 1) % G wrote,
//              waiting on that one producer block's flag (acquire/release)
//   sk_counter persistent; every block of op k waits for all G blocks of op k-1
//   sk_barrier persistent; a grid barrier between ops
// Issue 40 adds (same chain, same harness, interleaved with the above):
//   sk_flag_relaxed       sk_flag, but the waiting lane spins on ld.relaxed.gpu (no L1 invalidation per poll)
//                         and issues ONE fence.acq_rel.gpu after it sees the epoch. sk_flag keeps the wait the
//                         runtime had before issue 40 (ld.acquire.gpu every poll, __nanosleep(32)) so the row
//                         compares with the 2026-11-26 numbers; sk_counter / sk_barrier use sync.cuh's sk_wait_ge,
//                         which polls acquire by default (-DSK_CUDA_POLL_RELAXED=1 for the relaxed one; the
//                         2026-11-28 H200 run had it relaxed: docs/PERFORMANCE.md section 8b)
//   sk_flag_relaxed_sleep the same with __nanosleep(32) between relaxed polls (= sync.cuh's sk_wait_ge when
//                         built with -DSK_CUDA_POLL_RELAXED=1)
//   sk_dataflag           1:1 edge without a flag: each thread polls the 64-bit data word it reads,
//                         {epoch << 32 | payload bits}, written with st.relaxed.gpu (single-copy atomic), until the
//                         epoch is this launch's; no fence: the thread reads only the word it polled
//   *_pK  (K = 16/64/128) each op of CTA c first copies K KB of "weights" (a per-op, per-CTA slice of a 256 MB
//         buffer nobody writes, larger than L2, so it streams from HBM) into shared memory with 16-byte loads:
//           sk_local_pK   no wait at all: the floor = load time + op
//           sk_flag_pre_pK   weights loaded BEFORE the relaxed-poll flag wait (the wait hides behind the load)
//           sk_flag_post_pK  weights loaded AFTER the wait (nothing hidden)
//         exposed cost of an edge with a K KB prologue = sk_flag_pre_pK - sk_local_pK (per boundary)
//           graph_pdl_pre_pK / graph_pdl_post_pK  CUDA Graph + PDL of the same op kernel, which triggers its
//           dependants at its start (cudaTriggerProgrammaticLaunchCompletion) and loads its weights before / after
//           cudaGridDependencySynchronize() (griddepcontrol.wait)
//         every row is batch time / N: a _pK row includes the K KB load, compare rows of one K only.
//   cluster edges (sm_90 thread block clusters of 2 and 4 CTAs; issue 40 items 2 and 4): the chain on a grid
//   launched with a cluster dimension, op k's CTA c reading the slice its cluster neighbour (rank + 1) % S wrote:
//           sk_cluster_local_cS  the same grid and cluster shape, each CTA reading its own slice, no sync: the floor
//           sk_cluster_bar_cS    the cluster's hardware barrier between ops (barrier.cluster.arrive.release /
//                                wait.acquire): every CTA of the cluster, no memory word at all
//           sk_cluster_flag_cS   a 1:1 edge whose flag lives in the CONSUMER's shared memory: the producer's lane 0
//                                stores the op number there through the distributed shared memory window
//                                (st.release.cluster), the consumer's lane 0 polls its own SM's shared memory
//                                (ld.acquire.cluster): no L2 round trip per poll
//         exposed cost of a cluster edge = sk_cluster_{bar,flag}_cS - sk_cluster_local_cS. Each CTA reserves
//         kClusterSmem of shared memory, so no two share an SM (a SuperKernel runs one CTA per SM; two CTAs of a
//         cluster on one SM would make the edge look cheaper than it is). The grid is the largest multiple of S
//         that cudaOccupancyMaxActiveClusters lets run at once (every cluster resident, as a SuperKernel needs),
//         printed with the table. With S = 4 an op may overwrite a slice its consumer is still reading (the flag
//         orders producer to consumer only): values race as in sk_flag, the sync work measured does not. What this decides: whether the planner should place a
//         consumer in its producer's cluster and give such edges a cluster sync (not built; docs/CUDA.md).
// The persistent variants use the SuperKernel's own primitives
// (runtime/cuda/include/superkernel/cuda/sync.cuh) on monotonic epochs, as the
// generated code does. Reported: microseconds per op boundary (batch time / N),
// median and min-max over samples; GPU name, driver, clocks.
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -Iruntime/cuda/include bench/cuda/boundary_bench.cu -o boundary_bench
//   ./boundary_bench [ops=64] [samples=30] [batch=20]
//
// Values are not checked: only timing is measured. In sk_flag / sk_counter / sk_barrier an op overwrites a
// buffer its predecessor's neighbour CTA may still read (a WAR edge the planner would add); the race changes
// values, never the sync work measured.
//
// First run on an H200, 2026-11-26 (docs/PERFORMANCE.md section 8); scripts/gpu-check.sh runs it.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "superkernel/cuda/sync.cuh"

#include "check.cuh"


constexpr int kThreads = 256;

// ---- helpers (issue 40 variants) ----------------------------------------------

// Relaxed poll, then one fence: the fence after the last (relaxed) read of the flag that saw the release makes the
// producer's writes visible (PTX memory model: release pattern -> relaxed read -> fence.acq_rel = synchronizes).
__device__ __forceinline__ unsigned long long ld_relaxed(const unsigned long long* p) {
  unsigned long long v;
  asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ void st_relaxed(unsigned long long* p, unsigned long long v) {
  asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
__device__ __forceinline__ void wait_relaxed(const unsigned long long* p, unsigned long long target, bool sleep) {
  while (ld_relaxed(p) < target)
    if (sleep) __nanosleep(32);
  asm volatile("fence.acq_rel.gpu;" ::: "memory");
}

// The runtime's wait before issue 40 (sync.cuh now polls relaxed): ld.acquire.gpu every poll, __nanosleep(32).
__device__ __forceinline__ void wait_acquire(const unsigned long long* p, unsigned long long target) {
  while (sk_ld_acquire(p) < target) __nanosleep(32);
}

// K KB of weights into shared memory, 16-byte loads; returns one word so the copy is not dead code.
__device__ __forceinline__ float load_weights(const float4* w, size_t slice, int kb, float4* sm) {
  if (kb == 0) return 0.0f;
  const int n = kb * 1024 / 16;
  const float4* src = w + slice * (size_t)n;
  for (int i = threadIdx.x; i < n; i += blockDim.x) sm[i] = src[i];
  __syncthreads();
  return reinterpret_cast<const float*>(sm)[(threadIdx.x * 7) % (n * 4)];
}

// ---- one op per launch ------------------------------------------------------

__global__ void op_kernel(const float* x, float* y, int pdl) {
  if (pdl) cudaGridDependencySynchronize();  // the predecessor's writes are visible after this
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  y[i] = x[i] + 1.0f;
}

// PDL with a weight prologue (issue 40): trigger the dependant at once so its CTAs may start (and load their
// weights) while this one runs; pre: weights before griddepcontrol.wait, else after.
__global__ void op_kernel_w(const float* x, float* y, const float4* w, size_t slice, int kb, int pre) {
  extern __shared__ float4 sm[];
  cudaTriggerProgrammaticLaunchCompletion();
  const size_t sl = slice + blockIdx.x;
  float wv = 0.0f;
  if (pre) wv = load_weights(w, sl, kb, sm);
  cudaGridDependencySynchronize();
  if (!pre) wv = load_weights(w, sl, kb, sm);
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  y[i] = x[i] + 1.0f + wv;
}

// ---- persistent ---------------------------------------------------------------

enum Mode { kLocal = 0, kFlag = 1, kCounter = 2, kBarrier = 3, kFlagRelaxed = 4, kFlagRelaxedSleep = 5, kDataFlag = 6 };

// flags[k * G + c]: epoch when block c of op k is done; done[k]: arrivals; bar: barrier counter.
// w / wslices / kb / pre: the weight prologue (kb KB per op per CTA, loaded before the wait when pre, after otherwise).
// d0 / d1: the data-as-flag buffers (u64 words).
__global__ void persistent_kernel(float* a, float* b, int ops, int mode, unsigned long long epoch,
                                  unsigned long long* flags, unsigned long long* done, unsigned long long* bar,
                                  const float4* w, size_t wslices, int kb, int pre, unsigned long long* d0,
                                  unsigned long long* d1) {
  extern __shared__ float4 sm[];
  const int G = gridDim.x, c = blockIdx.x;
  for (int k = 0; k < ops; ++k) {
    const float* x = (k & 1) ? b : a;
    float* y = (k & 1) ? a : b;
    const size_t slice = ((size_t)k * G + c) % (wslices ? wslices : 1);
    float wv = 0.0f;
    if (pre) wv = load_weights(w, slice, kb, sm);
    int src = c;
    if (k > 0) {
      if (mode == kFlag) {
        src = (c + 1) % G;
        if (threadIdx.x == 0) wait_acquire(&flags[(size_t)(k - 1) * G + src], epoch);
        __syncthreads();
      } else if (mode == kFlagRelaxed || mode == kFlagRelaxedSleep) {
        src = (c + 1) % G;
        if (threadIdx.x == 0) wait_relaxed(&flags[(size_t)(k - 1) * G + src], epoch, mode == kFlagRelaxedSleep);
        __syncthreads();
      } else if (mode == kCounter) {
        src = (c + 1) % G;
        if (threadIdx.x == 0) sk_wait_ge(&done[k - 1], (unsigned long long)G * epoch);
        __syncthreads();
      } else if (mode == kBarrier) {
        src = (c + 1) % G;
        sk_cta_barrier(bar, (unsigned)G, (epoch - 1) * (unsigned long long)(ops - 1) + (unsigned long long)k);
      }
    }
    if (!pre) wv = load_weights(w, slice, kb, sm);
    if (mode == kDataFlag) {
      // 1:1 edge, the data is the flag: thread t polls the word of CTA (c+1)%G that it reads.
      const unsigned long long* xd = (k & 1) ? d1 : d0;
      unsigned long long* yd = (k & 1) ? d0 : d1;
      float v = 0.0f;
      if (k > 0) {
        src = (c + 1) % G;
        unsigned long long word;
        while (((word = ld_relaxed(&xd[src * blockDim.x + threadIdx.x])) >> 32) != (epoch & 0xffffffffull)) {
        }
        v = __uint_as_float((unsigned)word);
      }
      st_relaxed(&yd[c * blockDim.x + threadIdx.x],
                 (epoch << 32) | __float_as_uint(v + 1.0f + wv));
      if (kb) __syncthreads();  // the next op's prologue overwrites sm
      continue;
    }
    y[c * blockDim.x + threadIdx.x] = x[src * blockDim.x + threadIdx.x] + 1.0f + wv;
    if (mode == kFlag || mode == kFlagRelaxed || mode == kFlagRelaxedSleep)
      sk_cta_flag_set(&flags[(size_t)k * G + c], epoch);  // its __syncthreads also guards sm reuse
    else if (mode == kCounter)
      sk_cta_arrive(&done[k]);
    else if (kb)
      __syncthreads();
  }
}

// ---- cluster edges (sm_90) -----------------------------------------------------

// mode: kLocal (no sync), kClusterBar, kClusterFlag. A flag in shared memory does not outlive a launch, so its value
// is the op number k + 1 (monotonic within the launch), set to 0 before the first cluster barrier; the last cluster
// barrier keeps every CTA resident until no neighbour can still store into its shared memory.
enum ClusterMode { kClusterBar = 1, kClusterFlag = 2 };
// More than half of an H100's or H200's 228 KB of shared memory per SM: one cluster CTA per SM.
constexpr size_t kClusterSmem = 160 * 1024;

__device__ __forceinline__ unsigned cluster_rank() {
  unsigned r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}
__device__ __forceinline__ unsigned cluster_size() {
  unsigned n;
  asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(n));
  return n;
}
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}

__global__ void cluster_kernel(float* a, float* b, int ops, int mode) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  __shared__ unsigned long long flag;  // set by the cluster neighbour that this CTA reads from
  const unsigned rank = cluster_rank(), S = cluster_size();
  const int c = blockIdx.x, base = c - (int)rank;
  // The CTA this one reads (its producer) and the CTA that reads this one (its consumer), inside the cluster.
  const int src = mode == kLocal ? c : base + (int)((rank + 1) % S);
  const unsigned consumer = (rank + S - 1) % S;
  if (threadIdx.x == 0) flag = 0;
  cluster_sync();  // every flag is 0 before any neighbour may store into it
  const unsigned local = (unsigned)__cvta_generic_to_shared(&flag);
  unsigned remote = 0;  // the consumer's flag, a shared::cluster address
  if (threadIdx.x == 0) asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(local), "r"(consumer));
  for (int k = 0; k < ops; ++k) {
    const float* x = (k & 1) ? b : a;
    float* y = (k & 1) ? a : b;
    if (k > 0) {
      if (mode == kClusterBar) {
        cluster_sync();
      } else if (mode == kClusterFlag) {
        if (threadIdx.x == 0) {
          unsigned long long v;
          do {
            asm volatile("ld.acquire.cluster.shared::cta.u64 %0, [%1];" : "=l"(v) : "r"(local) : "memory");
          } while (v < (unsigned long long)k);
        }
        __syncthreads();
      }
    }
    y[c * blockDim.x + threadIdx.x] = x[src * blockDim.x + threadIdx.x] + 1.0f;
    if (mode == kClusterFlag) {
      __syncthreads();  // the CTA's writes of op k before lane 0's release
      if (threadIdx.x == 0)
        asm volatile("st.release.cluster.shared::cluster.u64 [%0], %1;" ::"r"(remote),
                     "l"((unsigned long long)(k + 1))
                     : "memory");
    }
  }
  cluster_sync();  // no CTA leaves while a neighbour may still store into its shared memory
#else
  (void)a, (void)b, (void)ops, (void)mode;
#endif
}

// ---- harness ------------------------------------------------------------------

constexpr size_t kWeightBytes = 256ull << 20;  // > H200's 50 MB L2: prologue loads stream from HBM

struct Variant {
  const char* name;
  int kind;  // 0 launch, 1 graph, 2 graph_pdl, 3 persistent, 4 graph_pdl with weights, 5 cluster (kb: its size)
  int mode, kb, pre;
};

struct Bench {
  int G = 0, ops = 64;
  int clusterG[5] = {};  // per cluster size 2 / 4: the grid of the cluster variants (0: cannot run)
  float *a = nullptr, *b = nullptr;
  float4* w = nullptr;
  unsigned long long *flags = nullptr, *done = nullptr, *bar = nullptr, *d0 = nullptr, *d1 = nullptr;
  unsigned long long epoch[8] = {};
  cudaStream_t s{};
  cudaGraphExec_t graph{}, graphPdl{};
  std::vector<cudaGraphExec_t> graphW;  // per variant index, kind 4

  size_t slices(int kb) const { return kb ? kWeightBytes / ((size_t)kb * 1024) : 0; }

  void launchChain(bool pdl, int kb = -1, int pre = 0) {
    for (int k = 0; k < ops; ++k) {
      const float* x = (k & 1) ? b : a;
      float* y = (k & 1) ? a : b;
      if (!pdl) {
        op_kernel<<<G, kThreads, 0, s>>>(x, y, 0);
        continue;
      }
      cudaLaunchConfig_t cfg = {};
      cfg.gridDim = dim3(G);
      cfg.blockDim = dim3(kThreads);
      cfg.stream = s;
      cudaLaunchAttribute attr[1];
      attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
      attr[0].val.programmaticStreamSerializationAllowed = 1;
      cfg.attrs = attr;
      cfg.numAttrs = 1;
      if (kb < 0) {
        CHECK(cudaLaunchKernelEx(&cfg, op_kernel, x, y, 1));
      } else {
        cfg.dynamicSmemBytes = (size_t)kb * 1024;
        const size_t slice = ((size_t)k * G) % (slices(kb) - G);  // CTA c reads slice + c
        CHECK(cudaLaunchKernelEx(&cfg, op_kernel_w, x, y, (const float4*)w, slice, kb, pre));
      }
    }
  }

  cudaGraphExec_t capture(bool pdl, int kb = -1, int pre = 0) {
    cudaGraph_t g;
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    launchChain(pdl, kb, pre);
    CHECK(cudaStreamEndCapture(s, &g));
    cudaGraphExec_t e;
    CHECK(cudaGraphInstantiate(&e, g, 0));
    CHECK(cudaGraphDestroy(g));
    return e;
  }

  void runOnce(int vi, const Variant& v) {
    switch (v.kind) {
      case 0: launchChain(false); break;
      case 1: CHECK(cudaGraphLaunch(graph, s)); break;
      case 2: CHECK(cudaGraphLaunch(graphPdl, s)); break;
      case 4: CHECK(cudaGraphLaunch(graphW[vi], s)); break;
      case 5: {
        cudaLaunchConfig_t cfg = {};
        cfg.gridDim = dim3(clusterG[v.kb]);
        cfg.blockDim = dim3(kThreads);
        cfg.dynamicSmemBytes = kClusterSmem;
        cfg.stream = s;
        cudaLaunchAttribute attr[1];
        attr[0].id = cudaLaunchAttributeClusterDimension;
        attr[0].val.clusterDim.x = (unsigned)v.kb;
        attr[0].val.clusterDim.y = 1;
        attr[0].val.clusterDim.z = 1;
        cfg.attrs = attr;
        cfg.numAttrs = 1;
        CHECK(cudaLaunchKernelEx(&cfg, cluster_kernel, a, b, ops, v.mode));
        break;
      }
      default:
        persistent_kernel<<<G, kThreads, (size_t)v.kb * 1024, s>>>(a, b, ops, v.mode, ++epoch[v.mode], flags, done,
                                                                    bar, w, slices(v.kb), v.kb, v.pre, d0, d1);
    }
  }
};

int main(int argc, char** argv) {
  Bench B;
  B.ops = argc > 1 ? std::atoi(argv[1]) : 64;
  const int samples = argc > 2 ? std::atoi(argv[2]) : 30;
  const int batch = argc > 3 ? std::atoi(argv[3]) : 20;
  if (B.ops < 2 || samples < 1 || batch < 1) {
    std::fprintf(stderr, "usage: %s [ops>=2] [samples>=1] [batch>=1]\n", argv[0]);
    return 2;
  }
  int dev = 0, driver = 0, runtime = 0, perSm = 0;
  CHECK(cudaGetDevice(&dev));
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, dev));
  CHECK(cudaDriverGetVersion(&driver));
  CHECK(cudaRuntimeGetVersion(&runtime));
  int smClock = 0, memClock = 0;
  (void)cudaDeviceGetAttribute(&smClock, cudaDevAttrClockRate, dev);
  (void)cudaDeviceGetAttribute(&memClock, cudaDevAttrMemoryClockRate, dev);
  B.G = prop.multiProcessorCount;
  constexpr int kMaxKb = 128;
  CHECK(cudaFuncSetAttribute(persistent_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kMaxKb * 1024));
  CHECK(cudaFuncSetAttribute(op_kernel_w, cudaFuncAttributeMaxDynamicSharedMemorySize, kMaxKb * 1024));
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, persistent_kernel, kThreads, kMaxKb * 1024));
  if (perSm < 1) {
    std::fprintf(stderr, "the persistent kernel does not fit an SM\n");
    return 2;
  }
  const size_t n = (size_t)B.G * kThreads;
  CHECK(cudaMalloc(&B.a, n * sizeof(float)));
  CHECK(cudaMalloc(&B.b, n * sizeof(float)));
  CHECK(cudaMemset(B.a, 0, n * sizeof(float)));
  CHECK(cudaMalloc(&B.d0, n * sizeof(unsigned long long)));
  CHECK(cudaMalloc(&B.d1, n * sizeof(unsigned long long)));
  CHECK(cudaMemset(B.d0, 0, n * sizeof(unsigned long long)));
  CHECK(cudaMemset(B.d1, 0, n * sizeof(unsigned long long)));
  CHECK(cudaMalloc(&B.w, kWeightBytes));
  CHECK(cudaMemset(B.w, 0, kWeightBytes));
  CHECK(cudaMalloc(&B.flags, (size_t)B.ops * B.G * sizeof(unsigned long long)));
  CHECK(cudaMemset(B.flags, 0, (size_t)B.ops * B.G * sizeof(unsigned long long)));
  CHECK(cudaMalloc(&B.done, (size_t)B.ops * sizeof(unsigned long long)));
  CHECK(cudaMemset(B.done, 0, (size_t)B.ops * sizeof(unsigned long long)));
  CHECK(cudaMalloc(&B.bar, sizeof(unsigned long long)));
  CHECK(cudaMemset(B.bar, 0, sizeof(unsigned long long)));
  CHECK(cudaStreamCreateWithFlags(&B.s, cudaStreamNonBlocking));
  B.graph = B.capture(false);
  B.graphPdl = B.capture(true);

  std::vector<Variant> V = {
      {"launch", 0, 0, 0, 0},          {"graph", 1, 0, 0, 0},
      {"graph_pdl", 2, 0, 0, 0},       {"sk_local", 3, kLocal, 0, 0},
      {"sk_flag", 3, kFlag, 0, 0},     {"sk_counter", 3, kCounter, 0, 0},
      {"sk_barrier", 3, kBarrier, 0, 0}, {"sk_flag_relaxed", 3, kFlagRelaxed, 0, 0},
      {"sk_flag_relaxed_sleep", 3, kFlagRelaxedSleep, 0, 0}, {"sk_dataflag", 3, kDataFlag, 0, 0},
  };
  static char namebuf[16][40];
  int nb = 0;
  for (int kb : {16, 64, 128}) {
    const char* fmt[] = {"sk_local_p%d", "sk_flag_pre_p%d", "sk_flag_post_p%d", "graph_pdl_pre_p%d",
                         "graph_pdl_post_p%d"};
    const Variant proto[] = {{nullptr, 3, kLocal, kb, 1},
                             {nullptr, 3, kFlagRelaxed, kb, 1},
                             {nullptr, 3, kFlagRelaxed, kb, 0},
                             {nullptr, 4, 0, kb, 1},
                             {nullptr, 4, 0, kb, 0}};
    for (int j = 0; j < 5; ++j) {
      std::snprintf(namebuf[nb], sizeof namebuf[nb], fmt[j], kb);
      Variant v = proto[j];
      v.name = namebuf[nb++];
      V.push_back(v);
    }
  }
  // The cluster variants (sm_90 and later): the grid every cluster of which is resident at once.
  std::string clusterNote;
  if (prop.major >= 9)
    CHECK(cudaFuncSetAttribute(cluster_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)kClusterSmem));
  for (int cs : {2, 4}) {
    if (prop.major < 9) break;
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3((unsigned)(B.G - B.G % cs));
    cfg.blockDim = dim3(kThreads);
    cfg.dynamicSmemBytes = kClusterSmem;
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = (unsigned)cs;
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    int clusters = 0;
    if (cudaOccupancyMaxActiveClusters(&clusters, cluster_kernel, &cfg) != cudaSuccess || clusters < 1) {
      (void)cudaGetLastError();
      clusterNote += " clusters of " + std::to_string(cs) + ": cannot run;";
      continue;
    }
    B.clusterG[cs] = std::min(B.G - B.G % cs, clusters * cs);
    clusterNote += " clusters of " + std::to_string(cs) + ": " + std::to_string(B.clusterG[cs]) + " CTAs;";
    static char cname[6][32];
    const char* fmt[] = {"sk_cluster_local_c%d", "sk_cluster_bar_c%d", "sk_cluster_flag_c%d"};
    const int modes[] = {kLocal, kClusterBar, kClusterFlag};
    for (int j = 0; j < 3; ++j) {
      char* nm = cname[(cs == 4) * 3 + j];
      std::snprintf(nm, sizeof cname[0], fmt[j], cs);
      V.push_back({nm, 5, modes[j], cs, 0});
    }
  }
  const int kVariants = (int)V.size();
  B.graphW.assign(kVariants, cudaGraphExec_t{});
  for (int v = 0; v < kVariants; ++v)
    if (V[v].kind == 4) B.graphW[v] = B.capture(true, V[v].kb, V[v].pre);

  cudaEvent_t t0, t1;
  CHECK(cudaEventCreate(&t0));
  CHECK(cudaEventCreate(&t1));
  // Warm-up: every variant a few batches (module load, graph upload, clocks).
  for (int v = 0; v < kVariants; ++v)
    for (int i = 0; i < 3 * batch; ++i) B.runOnce(v, V[v]);
  CHECK(cudaStreamSynchronize(B.s));

  std::vector<std::vector<double>> us(kVariants);
  std::vector<int> order(kVariants);
  for (int v = 0; v < kVariants; ++v) order[v] = v;
  std::mt19937 rng(12345);
  for (int smp = 0; smp < samples; ++smp) {
    std::shuffle(order.begin(), order.end(), rng);  // interleaved, in a different order each round
    for (int v : order) {
      CHECK(cudaEventRecord(t0, B.s));
      for (int i = 0; i < batch; ++i) B.runOnce(v, V[v]);
      CHECK(cudaEventRecord(t1, B.s));
      CHECK(cudaEventSynchronize(t1));
      float ms = 0;
      CHECK(cudaEventElapsedTime(&ms, t0, t1));
      us[v].push_back(1000.0 * ms / batch / B.ops);  // per op boundary
    }
  }
  CHECK(cudaGetLastError());

  std::printf("# superkernel cuda boundary bench (timing only: values are not checked)\n\n");
  std::printf("GPU: %s, %d SMs, sm_%d%d; driver %d, runtime %d; SM clock %d MHz (max), memory clock %d MHz\n",
              prop.name, prop.multiProcessorCount, prop.major, prop.minor, driver, runtime, smClock / 1000,
              memClock / 1000);
  std::printf("chain: %d ops x %d CTAs x %d threads; %d samples of %d chains each, variants interleaved; cluster "
              "variants:%s\n",
              B.ops, B.G, kThreads, samples, batch, clusterNote.empty() ? " none (below sm_90)" : clusterNote.c_str());
  std::printf("command: %s %d %d %d\n\n", argv[0], B.ops, samples, batch);
  std::printf("| variant | us per boundary, median | min | max | vs launch |\n|---|---|---|---|---|\n");
  auto med = [](std::vector<double> x) {
    std::sort(x.begin(), x.end());
    return x[x.size() / 2];
  };
  const double base = med(us[0]);
  for (int v = 0; v < kVariants; ++v) {
    auto [mn, mx] = std::minmax_element(us[v].begin(), us[v].end());
    std::printf("| %s | %.3f | %.3f | %.3f | %.2fx |\n", V[v].name, med(us[v]), *mn, *mx, base / med(us[v]));
  }
  return 0;
}
