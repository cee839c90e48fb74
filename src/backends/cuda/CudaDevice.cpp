// The cuda device: generated shared objects (host code + device-linked
// fatbinary, nvcc) loaded from verified bytes (memfd + dlopen, as on cpu) and
// run() calling their `run` with device pointers on a cudaStream_t.
//
// No CUDA at build time: libcudart is dlopen'ed (CudaRuntime.h). Creating the
// device never fails for want of a GPU; load, run and buffers answer "no CUDA
// device: ...".
//
// Machine model. Plans use the back end's static one (cudaCtasForArch: one
// CTA per SM of the GPU the arch names, never the GPU found). The device's
// own machine() is what it has: one CTA per SM of the current device, or the
// documented default (kCudaDefaultCtas) without one. A persistent grid of one
// CTA per SM is co-resident whenever one CTA fits an SM; the module checks
// occupancy at its first launch and refuses a grid that is not.
//
// Launch graphs (captureGraph, the Graph and Graph + PDL baselines of sk-compile --run --baselines): an
// unfused plan's steps on their own module instances, captured once on a stream of the graph's (CudaGraph.h).

#include <cerrno>
#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <vector>

#include <fmt/format.h>

#include <spdlog/spdlog.h>

#include "superkernel/runtime/Executor.h"
#include "superkernel/support/Log.h"
#include "superkernel/support/Paths.h"
#include "backends/cuda/CudaBackend.h"
#include "backends/cuda/CudaDeviceBase.h"
#include "backends/cuda/CudaGraph.h"
#include "backends/cuda/CudaModule.h"
#include "backends/cuda/CudaNccl.h"
#include "backends/cuda/CudaRuntime.h"

namespace sk {
namespace {

// One CTA per SM of the current device, or the documented default without one.
uint32_t deviceCtas() {
  uint32_t ctas = kCudaDefaultCtas;
  auto api = cudaRuntimeWithDevice();
  if (api) {
    int dev = 0, sms = 0;
    if ((*api)->getDevice(&dev) == 0 && (*api)->deviceGetAttribute(&sms, kCudaAttrMultiProcessorCount, dev) == 0 &&
        sms > 0)
      ctas = static_cast<uint32_t>(sms);
  } else {
    spdlog::debug("cuda device: {}; planning for the default {} CTAs", api.error().message(), ctas);
  }
  return ctas;
}

// A launch graph and the module instances its kernels belong to (declared first: freed after the graph).
class CudaLaunchGraph final : public LaunchGraph {
 public:
  CudaLaunchGraph(std::vector<std::shared_ptr<CudaModule>> modules, std::unique_ptr<CudaGraph> graph)
      : modules_(std::move(modules)), graph_(std::move(graph)) {}
  Status launch() override { return graph_->launch(); }
  void* stream() const override { return graph_->stream(); }

 private:
  std::vector<std::shared_ptr<CudaModule>> modules_;
  std::unique_ptr<CudaGraph> graph_;
};

// Zeroes device memory (the NCCL window's header, CudaNccl.h) with the runtime's memcpy: it binds no memset.
Status zeroDeviceMemory(void* p, size_t bytes) {
  SK_ASSIGN_OR_RETURN(const CudaRuntimeApi* api, cudaRuntimeWithDevice());
  const std::vector<char> zeros(bytes, 0);
  if (int err = api->memcpy(p, zeros.data(), bytes, kCudaMemcpyHostToDevice); err != 0)
    return runtimeError(api->describe("cudaMemcpy (zeroing an NCCL window)", err));
  return Status::success();
}

class CudaDevice final : public CudaDeviceBase {
 public:
  explicit CudaDevice(const DeviceOptions& o)
      : CudaDeviceBase("cuda", cudaMachineModel("cuda", deviceCtas())),
        nccl_(o.communicator, o.waitTimeoutMs ? o.waitTimeoutMs : defaultWaitTimeoutMs(), ncclRuntime,
              zeroDeviceMemory) {}


  Expected<std::shared_ptr<const LoadedKernel>> load(const Artifact& a) override {
    // No device needed: loading registers the module's fatbinary with the
    // runtime (lazily, CUDA's module loading); plans compile on GPU-less
    // machines and run() is where "no CUDA device" is answered. The module's
    // DT_NEEDED libcudart must resolve, so the runtime is loaded first.
    if (auto api = cudaRuntime(); !api) return std::move(api).error();
    SK_ASSIGN_OR_RETURN(auto k, modules_.load(a));
    deferNccl(static_cast<const CudaModule&>(*k), a.key);
    return k;
  }


  // A launch graph's private module instances get their own NCCL window, like a shared one.
  Status prepareModule(CudaModule& m) override {
    deferNccl(m, "");
    return Status::success();
  }

  // A SuperKernel with collectives gets its NCCL window before its first run (CudaNccl.h says why not here).
  void deferNccl(const CudaModule& m, const std::string& label) {
    if (CudaNccl::needsBinding([&m](const char* s) { return m.symbol(s); })) nccl_.defer(&m, label);
  }

  Status run(const LoadedKernel& kernel, uint32_t cores, void* stream, void* const* buffers,
             uint32_t numBuffers) override {
    SK_ASSIGN_OR_RETURN(const CudaRuntimeApi* api, cudaRuntimeWithDevice());
    const auto& module = static_cast<const CudaModule&>(kernel);
    SK_RETURN_IF_ERROR(nccl_.bindPending(&module, [&module](const char* s) { return module.symbol(s); }));
    const std::optional<uint32_t> launch = trace_.nextLaunch();  // nullopt unless profiling: no clock read then
    const uint64_t issued = launch ? steadyClockNs() : 0;
    SK_ASSIGN_OR_RETURN(const int rc, module.call(cores, stream, buffers, numBuffers));
    if (rc > 0) return runtimeError(api->describe("SuperKernel launch", rc));
    if (launch && module.profileSlots()) {  // the records are complete once the launch is: wait for it
      if (int err = api->streamSynchronize(stream); err != 0)
        return runtimeError(api->describe("cudaStreamSynchronize (a profiled SuperKernel launch)", err));
      int readErr = 0;
      SK_RETURN_IF_ERROR(collectCudaProfile(module, *launch, issued, trace_, &readErr));
      if (readErr) return runtimeError(api->describe("sk_read_profile (cudaMemcpyFromSymbol)", readErr));
    }
    return Status::success();
  }


  std::string launchGraphUnavailable(GraphLaunch kind) const override {
    auto api = cudaRuntimeWithDevice();
    if (!api) return "";  // no device: the run says so
    return cudaGraphUnavailable(**api, kind == GraphLaunch::Pdl);
  }

  // Graph: each step's run() captured as it is (its buffer table is set by the untimed first run, so the
  // capture holds one kernel node per step and nothing else). Graph + PDL: each step's recorded launch again,
  // through cudaLaunchKernelExC with programmatic stream serialization from the second on.
  Expected<std::unique_ptr<LaunchGraph>> captureGraph(const std::vector<GraphStep>& steps, GraphLaunch kind) override {
    SK_ASSIGN_OR_RETURN(const CudaRuntimeApi* api, cudaRuntimeWithDevice());
    const bool pdl = kind == GraphLaunch::Pdl;
    if (std::string why = cudaGraphUnavailable(*api, pdl); !why.empty()) return runtimeError(why);
    SK_ASSIGN_OR_RETURN(std::unique_ptr<CudaGraph> graph, CudaGraph::create(*api));
    SK_ASSIGN_OR_RETURN(auto modules, graphModules(steps, graph->stream()));
    SK_RETURN_IF_ERROR(synchronize(graph->stream()));
    std::vector<CudaKernelLaunch> launches;
    if (pdl) {
      for (const auto& m : modules) {
        SK_ASSIGN_OR_RETURN(CudaKernelLaunch k, m->lastLaunch());
        launches.push_back(k);
      }
    }
    SK_RETURN_IF_ERROR(graph->capture([&](void* stream) -> Status {
      for (size_t i = 0; i < steps.size(); ++i) {
        if (pdl) {
          SK_RETURN_IF_ERROR(launchKernelEx(*api, launches[i], stream, i > 0));
        } else {
          SK_RETURN_IF_ERROR(run(*modules[i], steps[i].cores, stream, steps[i].buffers, steps[i].numBuffers));
        }
      }
      return Status::success();
    }));
    return std::unique_ptr<LaunchGraph>(std::make_unique<CudaLaunchGraph>(std::move(modules), std::move(graph)));
  }

  Status synchronize(void* stream) override {
    SK_ASSIGN_OR_RETURN(const CudaRuntimeApi* api, cudaRuntimeWithDevice());
    if (int err = api->streamSynchronize(stream); err != 0)
      return runtimeError(api->describe("cudaStreamSynchronize (a failed SuperKernel launch shows here too)", err));
    return Status::success();
  }

  bool hostMemory() const override { return false; }

  Expected<void*> allocate(size_t bytes) override {
    SK_ASSIGN_OR_RETURN(const CudaRuntimeApi* api, cudaRuntimeWithDevice());
    void* p = nullptr;
    if (int err = api->malloc(&p, std::max<size_t>(bytes, 1)); err != 0)
      return runtimeError(fmt::format("cannot allocate {} bytes of device memory: {}", bytes,
                                      api->describe("cudaMalloc", err)));
    return p;
  }
  void release(void* buffer) override {
    auto api = cudaRuntime();
    if (api && buffer) (void)(*api)->free(buffer);
  }
  Status upload(void* dst, const void* src, size_t bytes) override {
    SK_ASSIGN_OR_RETURN(const CudaRuntimeApi* api, cudaRuntimeWithDevice());
    if (!bytes) return Status::success();
    if (int err = api->memcpy(dst, src, bytes, kCudaMemcpyHostToDevice); err != 0)
      return runtimeError(api->describe("cudaMemcpy (upload)", err));
    return Status::success();
  }
  Status download(void* dst, const void* src, size_t bytes) override {
    SK_ASSIGN_OR_RETURN(const CudaRuntimeApi* api, cudaRuntimeWithDevice());
    if (!bytes) return Status::success();
    // Synchronous on the legacy default stream: it also reports a failed launch.
    if (int err = api->memcpy(dst, src, bytes, kCudaMemcpyDeviceToHost); err != 0)
      return runtimeError(api->describe("cudaMemcpy (download; a failed SuperKernel launch shows here too)", err));
    return Status::success();
  }

 private:
  CudaNccl nccl_;  // the collectives' NCCL communicator and windows (made at the first run that needs one)
};

}  // namespace

uint32_t cudaCtasForArch(std::string_view arch) {
  // Only archs one datacenter part defines: sm_86 or sm_89 name GPUs from 28 to 142 SMs.
  static constexpr std::pair<std::string_view, uint32_t> kSms[] = {
      {"sm_70", 80}, {"sm_80", 108}, {"sm_90", 132}, {"sm_90a", 132}, {"sm_100", 148}, {"sm_100a", 148}};
  for (const auto& [name, sms] : kSms)
    if (arch == name || (arch.rfind("compute_", 0) == 0 && arch.substr(8) == name.substr(3))) return sms;
  return kCudaDefaultCtas;
}

MachineModel cudaMachineModel(const std::string& target, uint32_t ctas) {
  MachineModel m = MachineModel::singlePool(target, ctas, "GPU", "resident CTAs");
  m.defaultSplitMode = 1;
  // preload-data: L2 prefetches of each CTA's slice of the step's constant inputs (cp.async.bulk.prefetch.L2 on
  // sm_90, sync.cuh's sk_prefetch_l2). Off unless asked until a GPU has measured it (issue 40). The budget: up to
  // 64 KiB of an input's slice per op (the prologue size at which Graph + PDL hid the loads, docs/PERFORMANCE.md
  // 8b) and 128 KiB ahead per CTA: 17 MB over 132 CTAs, a third of an H100's or H200's 50 MB L2, so the lines
  // are still there when their op runs.
  // Collectives: NCCL's device API (docs/COLLECTIVES.md, "On a GPU"); cuda-sim sets its simulator's kernel.
  if (target == "cuda")
    m.collectiveSource = (dataRuntimeDir() / "cuda" / "include" / "superkernel" / "cuda" / "collective_kernel.cu").string();
  m.defaultPreloadData = PreloadData::None;
  m.preloadDataSliceBytes = 64 * 1024;
  m.preloadDataLookaheadBytes = 128 * 1024;
  m.inapplicable = {
      {"split-mode", "the cuda back end runs one code copy per sub-kernel"},
      {"feed-sync-all", "sk_kernel_sync on cuda is a barrier among the op's own blocks"},
      {"preload-code", "GPUs give no user control over instruction prefetch; the plan's preloads are comments"},
      {"func-align", "nvcc places device functions itself"},
  };
  return m;
}

Expected<std::unique_ptr<Device>> makeCudaDevice(const DeviceOptions& options) {
  return std::unique_ptr<Device>(std::make_unique<CudaDevice>(options));
}

}  // namespace sk
