// The cuda-sim device: SuperKernels built by CudaSimRecipe, loaded from
// verified bytes like cuda's (CudaModule), bound to the simulator's engine
// (runtime/cuda/sim: CudaSim.h) and run on host threads.
//
// It behaves like the cuda device where the difference would hide bugs:
// buffers are separate allocations reached only through upload / download
// (hostMemory() is false, so the session's device-buffer path runs), run()
// goes through the module's own run() (ABI checks, buffer-pointer caching,
// the epoch, the co-residency check against the simulated GPU). Launches are
// synchronous, so synchronize() has nothing to wait for.
//
// The simulated GPU: SK_CUDA_SIM_SMS SMs (default kCudaSimDefaultCtas), one
// CTA each; the launch watchdog is DeviceOptions::runTimeoutMs (default 60 s)
// without progress, its report for CTAs that cannot be stopped going to
// DeviceOptions::onRunTimeout;
// SK_CUDA_SIM_SKEW_US delays CTAs deterministically (tests use it to turn a
// missing wait into a wrong result). Profiling is cuda's (collectCudaProfile):
// the records come from the simulator's clock.
//
// Collectives (docs/COLLECTIVES.md, "On cuda-sim"): each rank is a process
// with its own simulated GPU. The collective kernel's CTA hands the call to
// the engine (sk_cuda_sim_ops::collective), which runs it through the
// Collectives this device sets around each launch: DeviceOptions::communicator
// (the Session's), with the wait limit (DeviceOptions::waitTimeoutMs, else
// SK_WAIT_TIMEOUT_MS, else 10 s) and the op named from the step's op names
// (setLaunchContext) by the tag's low 32 bits, FNV-1a of the op's name
// (plan/Collectives.cpp).
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

#include <fmt/format.h>

#include "superkernel/cuda/CudaSim.h"
#include "superkernel/runtime/Communicator.h"
#include "superkernel/runtime/Executor.h"
#include "superkernel/support/Paths.h"
#include "support/CollectiveTag.h"
#include "support/HostMemory.h"
#include "backends/cuda/CudaBackend.h"
#include "backends/cuda/CudaDeviceBase.h"
#include "backends/cuda/CudaModule.h"

namespace sk {
namespace {

// The step's op names of the next launch on this thread (setLaunchContext), which name its collectives.
thread_local const std::vector<std::string>* tOpNames = nullptr;

// A positive integer from the environment, or `fallback` when unset.
Expected<uint32_t> envCount(const char* name, uint32_t fallback, uint32_t lo, uint32_t hi) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  errno = 0;
  const unsigned long n = std::strtoul(v, &end, 10);
  if (errno || *end || n < lo || n > hi)
    return badInput(fmt::format("{}={}: expected a whole number from {} to {}", name, v, lo, hi));
  return static_cast<uint32_t>(n);
}

class CudaSimDevice final : public CudaDeviceBase {
 public:
  // The simulated GPU is process-wide (loaded modules share the engine's ops): the last device created sets it.
  CudaSimDevice(uint32_t sms, uint32_t skewUs, uint32_t watchdogMs,
                std::function<void(const std::string&)> onHang, std::shared_ptr<Communicator> communicator,
                uint32_t waitMs)
      : CudaDeviceBase("cuda-sim", cudaSimMachineModel(sms)), communicator_(std::move(communicator)),
        waitMs_(waitMs) {
    cuda_sim::Config c;
    c.multiprocessors = sms;
    c.skewMicros = skewUs;
    c.watchdog = std::chrono::milliseconds(watchdogMs);
    c.onHang = std::move(onHang);
    cuda_sim::setConfig(c);
  }


  Expected<std::shared_ptr<const LoadedKernel>> load(const Artifact& a) override {
    return modules_.load(a, [&](CudaModule& m) -> Status {
      if (Status st = prepareModule(m); !st) return st.error().context("SuperKernel " + a.key);
      return Status::success();
    });
  }

  // The graph baselines run as sequential launches of the graph's own module instances: the simulator has no
  // graphs, and its launches run to completion, so PDL changes nothing here but which kernels run (the PDL
  // variant, whose build the capture checks). Its times mean nothing for a GPU.
  std::string launchGraphUnavailable(GraphLaunch) const override { return ""; }

  Expected<std::unique_ptr<LaunchGraph>> captureGraph(const std::vector<GraphStep>& steps, GraphLaunch kind) override {
    auto g = std::make_unique<SimLaunchGraph>(*this);
    SK_ASSIGN_OR_RETURN(g->modules, graphModules(steps, nullptr));
    for (size_t i = 0; i < steps.size(); ++i) {
      if (kind == GraphLaunch::Pdl) {
        if (auto k = g->modules[i]->lastLaunch(); !k) return std::move(k).error();
      }
      const GraphStep& s = steps[i];
      g->steps.push_back({s.cores, std::vector<void*>(s.buffers, s.buffers + s.numBuffers)});
    }
    return std::unique_ptr<LaunchGraph>(std::move(g));
  }


  Status run(const LoadedKernel& kernel, uint32_t cores, void* stream, void* const* buffers,
             uint32_t numBuffers) override {
    const auto& module = static_cast<const CudaModule&>(kernel);
    const std::optional<uint32_t> launch = trace_.nextLaunch();  // nullopt unless profiling: no clock read then
    const uint64_t issued = launch ? steadyClockNs() : 0;
    // The launch's collectives run over this device's communicator, named from the step's op names (the session
    // sets them just before run() and keeps them until it returns).
    const std::vector<std::string>* names = tOpNames;
    cuda_sim::Collectives collectives;
    collectives.run = [this, names](const sk_cuda_sim_collective_args& a, const std::function<bool()>& stop) {
      return runCollective(a, names, stop);
    };
    collectives.name = [names](const sk_cuda_sim_collective_args& a) { return "collective op " + collectiveOpName(a.tag, names); };
    int rc = 0;
    {
      const cuda_sim::CollectivesScope scope(&collectives);
      SK_ASSIGN_OR_RETURN(rc, module.call(cores, stream, buffers, numBuffers));
    }
    if (rc > 0)
      return runtimeError(fmt::format("SuperKernel launch failed in the cuda simulator (error {}): {}", rc,
                                      cuda_sim::lastLaunchError()));
    if (launch) {  // launches are synchronous: the records are complete
      int readErr = 0;
      SK_RETURN_IF_ERROR(collectCudaProfile(module, *launch, issued, trace_, &readErr));
      if (readErr) return runtimeError(fmt::format("sk_read_profile failed in the cuda simulator (error {})", readErr));
    }
    return Status::success();
  }


  bool hostMemory() const override { return false; }

  // Per thread, not per device: two threads may run different steps on one device at once.
  void setLaunchContext(const std::string*, const std::vector<std::string>* opNames) override { tOpNames = opNames; }

  // Host memory (support/HostMemory.h), reached only through upload / download: hostMemory() is false.
  Expected<void*> allocate(size_t bytes) override { return hostAllocate(bytes); }
  void release(void* buffer) override { hostRelease(buffer); }
  Status upload(void* dst, const void* src, size_t bytes) override { return hostCopy(dst, src, bytes); }
  Status download(void* dst, const void* src, size_t bytes) override { return hostCopy(dst, src, bytes); }

 protected:
  Status prepareModule(CudaModule& m) override {
    auto bind = reinterpret_cast<sk_cuda_sim_bind_fn>(m.symbol("sk_cuda_sim_bind"));
    if (!bind)
      return runtimeError("it does not export sk_cuda_sim_bind: it was not built for the cuda simulator");
    bind(cuda_sim::ops());
    return Status::success();
  }

 private:
  struct SimLaunchGraph final : LaunchGraph {
    explicit SimLaunchGraph(CudaSimDevice& d) : device(d) {}
    Status launch() override {
      for (size_t i = 0; i < steps.size(); ++i) {
        std::vector<void*>& b = steps[i].buffers;
        SK_RETURN_IF_ERROR(device.run(*modules[i], steps[i].cores, nullptr, b.data(), static_cast<uint32_t>(b.size())));
      }
      return Status::success();
    }
    void* stream() const override { return nullptr; }
    struct Step {
      uint32_t cores;
      std::vector<void*> buffers;
    };
    CudaSimDevice& device;
    std::vector<std::shared_ptr<CudaModule>> modules;
    std::vector<Step> steps;
  };

  std::string runCollective(const sk_cuda_sim_collective_args& a, const std::vector<std::string>* names,
                            const std::function<bool()>& stop) {
    const std::string op = collectiveOpName(a.tag, names);
    if (!communicator_)
      return "collective op " + op +
             ": this cuda-sim device has no communicator (run the step through a Session created with "
             "SessionOptions::communicator, e.g. sk::mpiCommunicator(), or sk-compile under mpirun)";
    const sk_collective_args args{a.in, a.out, a.n_in, a.n_out, a.desc, a.ranks, a.tag};
    Status s = communicator_->run(args, op, waitMs_, stop);
    return s ? std::string() : s.error().message();
  }

  std::shared_ptr<Communicator> communicator_;
  uint32_t waitMs_;
};

}  // namespace

Expected<uint32_t> cudaSimSms() { return envCount("SK_CUDA_SIM_SMS", kCudaSimDefaultCtas, 1, 256); }

Expected<std::unique_ptr<Device>> makeCudaSimDevice(const DeviceOptions& options) {
  SK_ASSIGN_OR_RETURN(uint32_t sms, cudaSimSms());
  SK_ASSIGN_OR_RETURN(uint32_t skew, envCount("SK_CUDA_SIM_SKEW_US", 0, 0, 100000));
  const uint32_t watchdog = options.runTimeoutMs ? options.runTimeoutMs : 60000;
  const uint32_t waitMs = options.waitTimeoutMs ? options.waitTimeoutMs : defaultWaitTimeoutMs();
  return std::unique_ptr<Device>(std::make_unique<CudaSimDevice>(sms, skew, watchdog, options.onRunTimeout,
                                                                 options.communicator, waitMs));
}

MachineModel cudaSimMachineModel(uint32_t sms) {
  MachineModel m = cudaMachineModel("cuda-sim", sms);
  // Collectives run on the device's communicator, one rank per process, each with its own simulated GPU
  // (docs/COLLECTIVES.md). The cuda target's kernel is NCCL's device API (cudaMachineModel).
  m.collectiveSource = (dataRuntimeDir() / "cuda" / "sim" / "include" / "superkernel" / "cuda" / "collective_kernel.cu").string();
  return m;
}

}  // namespace sk
