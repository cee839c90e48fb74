// The cpu device: the host executor (a pool of W workers), generated shared
// objects loaded from verified bytes (memfd + dlopen), and run() calling the
// library's `run` with an sk_run_args over the executor's services table.
#include "backends/cpu/CpuBackend.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

#include <fmt/format.h>

#include "superkernel/cpu/superkernel_rt.h"
#include "support/HostMemory.h"
#include "backends/cpu/LoadedLibrary.h"

namespace sk {

namespace {

class CpuKernel final : public LoadedKernel {
 public:
  CpuKernel(std::shared_ptr<LoadedLibrary> lib, SuperKernelRunFn run) : lib_(std::move(lib)), run_(run) {}
  SuperKernelRunFn runFn() const { return run_; }

 private:
  std::shared_ptr<LoadedLibrary> lib_;
  SuperKernelRunFn run_;
};

class CpuDevice final : public Device {
 public:
  explicit CpuDevice(const DeviceOptions& o) {
    ExecutorOptions eo;
    eo.numWorkers = o.cores;
    eo.waitTimeoutMs = o.waitTimeoutMs;
    eo.runTimeoutMs = o.runTimeoutMs;
    eo.onRunTimeout = o.onRunTimeout;
    executor_ = std::make_unique<Executor>(eo);
    executor_->setCommunicator(o.communicator);
    machine_ = cpuMachineModel(executor_->numWorkers());
  }

  std::string_view target() const override { return "cpu"; }
  const MachineModel& machine() const override { return machine_; }

  Expected<std::shared_ptr<const LoadedKernel>> load(const Artifact& a) override {
    std::lock_guard<std::mutex> g(mu_);
    if (auto k = loaded_[a.key].lock()) return k;
    SK_ASSIGN_OR_RETURN(auto k, cpuLoad(a));
    loaded_[a.key] = k;
    return k;
  }

  void* defaultStream() override { return const_cast<sk_services*>(executor_->services()); }

  void setLaunchContext(const std::string* label, const std::vector<std::string>* opNames) override {
    executor_->setLaunchContext(label, opNames);
  }

  Status run(const LoadedKernel& kernel, uint32_t cores, void* stream, void* const* buffers,
             uint32_t numBuffers) override {
    sk_run_args args;
    args.abi_version = SK_ABI_VERSION;
    args.num_buffers = numBuffers;
    args.buffers = buffers;
    const int rc = static_cast<const CpuKernel&>(kernel).runFn()(cores, stream, &args);
    if (rc == 0) return Status::success();
    std::string msg = executor_->lastError();
    if (msg.empty()) msg = describeRunResult(rc);
    return runtimeError(std::move(msg));
  }

  // Buffers are host memory, allocated and copied as on every host-memory device (support/HostMemory.h).
  Expected<void*> allocate(size_t bytes) override { return hostAllocate(bytes); }
  void release(void* buffer) override { hostRelease(buffer); }
  Status upload(void* dst, const void* src, size_t bytes) override { return hostCopy(dst, src, bytes); }
  Status download(void* dst, const void* src, size_t bytes) override { return hostCopy(dst, src, bytes); }

  Status setProfiling(bool on) override {
    executor_->setProfiling(on);
    if (on) (void)executor_->takeTrace();  // launch numbering restarts here: launch i = step i
    return Status::success();
  }
  Expected<std::string> takeTrace(const std::vector<std::vector<std::string>>& names) override {
    return Executor::traceToJson(executor_->takeTrace(), names);
  }

  Executor& executor() { return *executor_; }

 private:
  std::unique_ptr<Executor> executor_;
  MachineModel machine_;
  std::mutex mu_;
  std::map<std::string, std::weak_ptr<const LoadedKernel>> loaded_;
};

}  // namespace

Expected<std::shared_ptr<const LoadedKernel>> cpuLoad(const Artifact& a) {
  if (!a.bytes) return internalError("cpuLoad: an artifact without bytes");
  SK_ASSIGN_OR_RETURN(auto lib, LoadedLibrary::fromBytes(*a.bytes, a.key));
  SuperKernelRunFn run = lib->run();
  if (!run) return runtimeError(fmt::format("SuperKernel {} does not export 'run'", a.key));
  return std::shared_ptr<const LoadedKernel>(std::make_shared<CpuKernel>(std::move(lib), run));
}

std::string describeRunResult(int rc) {
  switch (rc) {
    case 0: return "ok";
    case kRunBadAbi: return "run() rejected the call: sk_run_args missing or abi_version is not SK_ABI_VERSION";
    case kRunBadBufferCount: return "run() rejected the call: num_buffers differs from the SuperKernel's manifest";
    case kRunBadBlockDim: return "run() rejected the call: block_dim differs from the SuperKernel's core count";
    case kRunBadServices: return "run() rejected the call: the stream is not a compatible sk_services table";
    case kRunTooFewWorkers: return "run() rejected the call: the executor has fewer workers than the SuperKernel's cores";
    default: return fmt::format("run() failed with code {}", rc);
  }
}

MachineModel cpuMachineModel(uint32_t workers) {
  // The host is the device: its worker count is the one the executor picks (the cores asked for, else
  // SK_NUM_WORKERS, else the hardware threads this process may use).
  workers = std::min(workers ? workers : defaultWorkerCount(), kMaxExecutorWorkers);
  MachineModel m = MachineModel::singlePool("cpu", workers, "executor", "workers");
  m.defaultSplitMode = 1;
  // Collectives run on the executor's communicator (MPI; docs/COLLECTIVES.md).
  m.collectiveSource = (cpuRuntimeIncludeDir() / "superkernel" / "cpu" / "collective_kernel.cpp").string();
  // No code preload by default: a core's hardware prefetcher already follows the sub-kernels' code, which
  // stays in its L2 (1 MiB here, against a few KiB per sub-kernel), so the per-func preload's 32 prefetches
  // per 2 KiB only spend issue slots on the way into every op. Measured side by side on decode_small
  // (docs/PERFORMANCE.md section 13): the fused step 0.85x as fast with per-func as without. preload-code=per-func
  // or max still prefetch when asked.
  m.defaultPreloadCode = PreloadCode::None;
  // Until the machine is calibrated (sk-compile --calibrate, CpuCalibrate.cpp): a line through the two
  // machines the boundary benchmark measured. A barrier and an all-to-all counter take one arrival per worker
  // on one line, so they grow with the workers: barrier 0.34 / 2.10 us and counter 0.40 / 2.26 us at 2 / 16
  // workers (a 2-core VM, docs/PERFORMANCE.md section 1; a 16-core Xeon, 2026-11-28, where 8 workers measured
  // 1.00 / 1.14 us, near the line's 1.10 / 1.20). A flag wait reads one line whatever the width (0.38 us on
  // the VM, 0.45 us at 8 and 16 on the Xeon). Why a line and not a proportion: 170 / 200 ns per worker (the
  // VM's costs scaled) priced a 16-worker barrier at 2.72 us and a counter at 3.20 us, and the counter's
  // larger error alone tipped one boundary per decode layer into a barrier (61 on the 61-layer stack) that
  // the Xeon ran 1-5% slower than the edges it replaced (PERFORMANCE section 9b); with the line's costs the
  // stack keeps its edges, as it does with the Xeon's calibrated ones. The planner scales a counter edge
  // down to its cores (plan/SyncCost.cpp).
  const double extra = std::max<uint32_t>(workers, 2) - 2.0;
  m.syncCosts = {340 + 126 * extra, 400 + 133 * extra, 380, "defaults; sk-compile --calibrate measures this machine"};
  m.inapplicable = {
      {"split-mode", "the cpu back end runs one code copy per sub-kernel (blocks pick no copy by core id)"},
      {"feed-sync-all", "sk_kernel_sync on cpu is a barrier among the op's own blocks; idle workers never take part"},
  };
  return m;
}

Expected<std::unique_ptr<Device>> makeCpuDevice(const DeviceOptions& options) {
  return std::unique_ptr<Device>(std::make_unique<CpuDevice>(options));
}

Executor* cpuExecutor(Device& device) {
  auto* d = dynamic_cast<CpuDevice*>(&device);
  return d ? &d->executor() : nullptr;
}

SuperKernelRunFn cpuRunFunction(const LoadedKernel& kernel) {
  auto* k = dynamic_cast<const CpuKernel*>(&kernel);
  return k ? k->runFn() : nullptr;
}


}  // namespace sk
