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
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

#include <fmt/format.h>

#include "superkernel/cuda/CudaSim.h"
#include "support/HostMemory.h"
#include "backends/cuda/CudaBackend.h"
#include "backends/cuda/CudaDeviceBase.h"
#include "backends/cuda/CudaModule.h"

namespace sk {
namespace {

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
                std::function<void(const std::string&)> onHang)
      : CudaDeviceBase("cuda-sim", cudaMachineModel("cuda-sim", sms)) {
    cuda_sim::Config c;
    c.multiprocessors = sms;
    c.skewMicros = skewUs;
    c.watchdog = std::chrono::milliseconds(watchdogMs);
    c.onHang = std::move(onHang);
    cuda_sim::setConfig(c);
  }


  Expected<std::shared_ptr<const LoadedKernel>> load(const Artifact& a) override {
    return modules_.load(a, [&](CudaModule& m) -> Status {
      auto bind = reinterpret_cast<sk_cuda_sim_bind_fn>(m.symbol("sk_cuda_sim_bind"));
      if (!bind)
        return runtimeError(fmt::format("SuperKernel {} does not export sk_cuda_sim_bind: it was not built for the "
                                        "cuda simulator",
                                        a.key));
      bind(cuda_sim::ops());
      return Status::success();
    });
  }


  Status run(const LoadedKernel& kernel, uint32_t cores, void* stream, void* const* buffers,
             uint32_t numBuffers) override {
    const auto& module = static_cast<const CudaModule&>(kernel);
    const std::optional<uint32_t> launch = trace_.nextLaunch();  // nullopt unless profiling: no clock read then
    const uint64_t issued = launch ? steadyClockNs() : 0;
    SK_ASSIGN_OR_RETURN(const int rc, module.call(cores, stream, buffers, numBuffers));
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

  // Host memory (support/HostMemory.h), reached only through upload / download: hostMemory() is false.
  Expected<void*> allocate(size_t bytes) override { return hostAllocate(bytes); }
  void release(void* buffer) override { hostRelease(buffer); }
  Status upload(void* dst, const void* src, size_t bytes) override { return hostCopy(dst, src, bytes); }
  Status download(void* dst, const void* src, size_t bytes) override { return hostCopy(dst, src, bytes); }
};

}  // namespace

Expected<uint32_t> cudaSimSms() { return envCount("SK_CUDA_SIM_SMS", kCudaSimDefaultCtas, 1, 256); }

Expected<std::unique_ptr<Device>> makeCudaSimDevice(const DeviceOptions& options) {
  SK_ASSIGN_OR_RETURN(uint32_t sms, cudaSimSms());
  SK_ASSIGN_OR_RETURN(uint32_t skew, envCount("SK_CUDA_SIM_SKEW_US", 0, 0, 100000));
  const uint32_t watchdog = options.runTimeoutMs ? options.runTimeoutMs : 60000;
  return std::unique_ptr<Device>(std::make_unique<CudaSimDevice>(sms, skew, watchdog, options.onRunTimeout));
}

}  // namespace sk
