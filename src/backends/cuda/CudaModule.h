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


#include "superkernel/support/Error.h"
#include "superkernel/target/Backend.h"
#include "backends/LaunchTrace.h"
#include "backends/cuda/CudaLaunchAbi.h"

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
  /// The launch its last run() made, for a module built as the Graph + PDL variant (sk_last_launch): a
  /// BadInput error for any other module, a Runtime error before its first run.
  Expected<CudaKernelLaunch> lastLaunch() const;

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

/// After a completed launch of `m`, number `launch` of `trace`: the
/// module's profiling records (sk_read_profile: per CTA, {op, kind,
/// %globaltimer}) as trace events on one track per CTA ("CTA c"). The GPU's
/// timer is not the host's: the records are placed at `hostLaunchNs`, the
/// host time the launch was issued, keeping their spacing. Nothing for a
/// module built without profiling=1. `readError`: the reader's cuda error
/// (0: none), described by the caller.
Status collectCudaProfile(const CudaModule& m, uint32_t launch, uint64_t hostLaunchNs, LaunchTrace& trace,
                          int* readError);

/// What run()'s negative return `rc` means (SK_RUN_* of superkernel_rt.cuh).
std::string describeCudaRejection(int rc);

}  // namespace sk
