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

#define CHECK(x)                                                                               \
  do {                                                                                         \
    cudaError_t e_ = (x);                                                                      \
    if (e_ != cudaSuccess) {                                                                   \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(2);                                                                            \
    }                                                                                          \
  } while (0)

constexpr int kThreads = 256;

// ---- one op per launch ------------------------------------------------------

__global__ void op_kernel(const float* x, float* y, int pdl) {
  if (pdl) cudaGridDependencySynchronize();  // the predecessor's writes are visible after this
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  y[i] = x[i] + 1.0f;
}

// ---- persistent ---------------------------------------------------------------

enum Mode { kLocal = 0, kFlag = 1, kCounter = 2, kBarrier = 3 };

// flags[k * G + c]: epoch when block c of op k is done; done[k]: arrivals; bar: barrier counter.
__global__ void persistent_kernel(float* a, float* b, int ops, int mode, unsigned long long epoch,
                                  unsigned long long* flags, unsigned long long* done, unsigned long long* bar) {
  const int G = gridDim.x, c = blockIdx.x;
  for (int k = 0; k < ops; ++k) {
    const float* x = (k & 1) ? b : a;
    float* y = (k & 1) ? a : b;
    int src = c;
    if (k > 0) {
      if (mode == kFlag) {
        src = (c + 1) % G;
        if (threadIdx.x == 0) sk_wait_ge(&flags[(size_t)(k - 1) * G + src], epoch);
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
    y[c * blockDim.x + threadIdx.x] = x[src * blockDim.x + threadIdx.x] + 1.0f;
    if (mode == kFlag) sk_cta_flag_set(&flags[(size_t)k * G + c], epoch);
    if (mode == kCounter) sk_cta_arrive(&done[k]);
  }
}

// ---- harness ------------------------------------------------------------------

struct Bench {
  int G = 0, ops = 64;
  float *a = nullptr, *b = nullptr;
  unsigned long long *flags = nullptr, *done = nullptr, *bar = nullptr;
  unsigned long long epoch[4] = {0, 0, 0, 0};
  cudaStream_t s{};
  cudaGraphExec_t graph{}, graphPdl{};

  void launchChain(bool pdl) {
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
      CHECK(cudaLaunchKernelEx(&cfg, op_kernel, x, y, 1));
    }
  }

  cudaGraphExec_t capture(bool pdl) {
    cudaGraph_t g;
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    launchChain(pdl);
    CHECK(cudaStreamEndCapture(s, &g));
    cudaGraphExec_t e;
    CHECK(cudaGraphInstantiate(&e, g, 0));
    CHECK(cudaGraphDestroy(g));
    return e;
  }

  void runOnce(int variant) {
    switch (variant) {
      case 0: launchChain(false); break;
      case 1: CHECK(cudaGraphLaunch(graph, s)); break;
      case 2: CHECK(cudaGraphLaunch(graphPdl, s)); break;
      default: {
        const int mode = variant - 3;
        persistent_kernel<<<G, kThreads, 0, s>>>(a, b, ops, mode, ++epoch[mode], flags, done, bar);
      }
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
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, persistent_kernel, kThreads, 0));
  if (perSm < 1) {
    std::fprintf(stderr, "the persistent kernel does not fit an SM\n");
    return 2;
  }
  const size_t n = (size_t)B.G * kThreads;
  CHECK(cudaMalloc(&B.a, n * sizeof(float)));
  CHECK(cudaMalloc(&B.b, n * sizeof(float)));
  CHECK(cudaMemset(B.a, 0, n * sizeof(float)));
  CHECK(cudaMalloc(&B.flags, (size_t)B.ops * B.G * sizeof(unsigned long long)));
  CHECK(cudaMemset(B.flags, 0, (size_t)B.ops * B.G * sizeof(unsigned long long)));
  CHECK(cudaMalloc(&B.done, (size_t)B.ops * sizeof(unsigned long long)));
  CHECK(cudaMemset(B.done, 0, (size_t)B.ops * sizeof(unsigned long long)));
  CHECK(cudaMalloc(&B.bar, sizeof(unsigned long long)));
  CHECK(cudaMemset(B.bar, 0, sizeof(unsigned long long)));
  CHECK(cudaStreamCreateWithFlags(&B.s, cudaStreamNonBlocking));
  B.graph = B.capture(false);
  B.graphPdl = B.capture(true);

  const char* names[] = {"launch", "graph", "graph_pdl", "sk_local", "sk_flag", "sk_counter", "sk_barrier"};
  constexpr int kVariants = 7;
  cudaEvent_t t0, t1;
  CHECK(cudaEventCreate(&t0));
  CHECK(cudaEventCreate(&t1));
  // Warm-up: every variant a few batches (module load, graph upload, clocks).
  for (int v = 0; v < kVariants; ++v)
    for (int i = 0; i < 3 * batch; ++i) B.runOnce(v);
  CHECK(cudaStreamSynchronize(B.s));

  std::vector<std::vector<double>> us(kVariants);
  std::vector<int> order(kVariants);
  for (int v = 0; v < kVariants; ++v) order[v] = v;
  std::mt19937 rng(12345);
  for (int smp = 0; smp < samples; ++smp) {
    std::shuffle(order.begin(), order.end(), rng);  // interleaved, in a different order each round
    for (int v : order) {
      CHECK(cudaEventRecord(t0, B.s));
      for (int i = 0; i < batch; ++i) B.runOnce(v);
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
  std::printf("chain: %d ops x %d CTAs x %d threads; %d samples of %d chains each, variants interleaved\n",
              B.ops, B.G, kThreads, samples, batch);
  std::printf("command: %s %d %d %d\n\n", argv[0], B.ops, samples, batch);
  std::printf("| variant | us per boundary, median | min | max | vs launch |\n|---|---|---|---|---|\n");
  auto med = [](std::vector<double> x) {
    std::sort(x.begin(), x.end());
    return x[x.size() / 2];
  };
  const double base = med(us[0]);
  for (int v = 0; v < kVariants; ++v) {
    auto [mn, mx] = std::minmax_element(us[v].begin(), us[v].end());
    std::printf("| %s | %.3f | %.3f | %.3f | %.2fx |\n", names[v], med(us[v]), *mn, *mx, base / med(us[v]));
  }
  return 0;
}
