// Private: a generated cuda SuperKernel shared object loaded from verified
// bytes (memfd + dlopen, never the cache file again), shared by the cuda
// device (nvcc-built, libcudart) and the cuda-sim device (host-built, the
// simulator), and what run()'s negative returns mean.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "superkernel/runtime/Executor.h"

#include "superkernel/support/Error.h"
#include "superkernel/target/Backend.h"

namespace sk {

struct CudaRunArgs {  // superkernel_rt.cuh's sk_run_args
  uint32_t abi_version;
  uint32_t num_buffers;
  void* const* buffers;
};
using CudaRunFn = int (*)(uint32_t, void*, const CudaRunArgs*);
inline constexpr uint32_t kCudaAbiVersion = 1;

class CudaModule final : public LoadedKernel {
 public:
  /// `label` names the memfd and errors (the artifact's key).
  static Expected<std::shared_ptr<CudaModule>> fromBytes(std::string_view bytes, const std::string& label);
  ~CudaModule() override;
  /// Calls the module's run(): 0 or the cuda error of the launch (> 0); a
  /// rejection of the call (< 0) is the error describeCudaRejection gives.
  Expected<int> call(uint32_t cores, void* stream, void* const* buffers, uint32_t numBuffers) const;
  /// Profiling rows (sk_profile_shape): {0, 0} when built without profiling=1.
  uint32_t profileCtas() const { return profCtas_; }
  uint32_t profileSlots() const { return profSlots_; }
  /// A symbol of the module (nullptr if absent).
  void* symbol(const char* name) const;

 private:
  CudaModule() = default;
  void* handle_ = nullptr;
  int fd_ = -1;
  CudaRunFn run_ = nullptr;
  uint32_t profCtas_ = 0, profSlots_ = 0;
};

/// The modules a device loaded, one per key while any is in use (a step
/// loaded twice shares it, so its epoch and sync area stay one).
class CudaModuleSet {
 public:
  /// `prepare` runs once on a freshly loaded module (the simulator binds it).
  Expected<std::shared_ptr<const LoadedKernel>> load(const Artifact& a,
                                                      const std::function<Status(CudaModule&)>& prepare = {});

 private:
  std::mutex mu_;
  std::map<std::string, std::weak_ptr<const LoadedKernel>> loaded_;
};

/// Profiling of the cuda and cuda-sim devices: after each run() of a module
/// built with profiling=1, its records (sk_read_profile: per CTA, {op, kind,
/// %globaltimer}) become TraceEvents on one track per CTA; takeTrace()
/// exports them with the cpu target's trace writer. The GPU's timer is not
/// the host's: each launch's records are placed at the host time the launch
/// was issued, keeping their spacing.
class CudaProfiler {
 public:
  void setOn(bool on);
  bool on() const;
  /// Called after every run() while on (launch i is the i-th since setOn(true)); reads the records of `m`'s
  /// last launch, which must have completed. `readFailed`: the reader's cuda error, described by the caller.
  Status collect(const CudaModule& m, uint64_t hostLaunchNs, int* readError);
  std::string takeTrace(const std::vector<std::vector<std::string>>& opNamesByLaunch);

 private:
  mutable std::mutex mu_;
  bool on_ = false;
  uint32_t launches_ = 0;
  std::vector<TraceEvent> events_;
  std::map<uint32_t, std::string> tracks_;
};

/// Host steady-clock nanoseconds (where profiled launches are placed).
uint64_t cudaHostNs();

/// What run()'s negative return `rc` means (SK_RUN_* of superkernel_rt.cuh).
std::string describeCudaRejection(int rc);

}  // namespace sk
