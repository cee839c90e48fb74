// Private: what the cuda and cuda-sim devices share: the machine model, the
// loaded modules (CudaModuleSet), the profiling trace (LaunchTrace) and the
// target's name. Each device adds how a launch is checked and where buffers live.
#pragma once

#include <string>
#include <vector>

#include "superkernel/target/Backend.h"
#include "backends/LaunchTrace.h"
#include "backends/cuda/CudaModule.h"

namespace sk {

class CudaDeviceBase : public Device {
 public:
  CudaDeviceBase(std::string target, MachineModel machine) : target_(std::move(target)), machine_(std::move(machine)) {}

  std::string_view target() const override { return target_; }
  const MachineModel& machine() const override { return machine_; }
  // The legacy default stream (cuda: cudaMemcpy in download() orders after it).
  void* defaultStream() override { return nullptr; }

  Status setProfiling(bool on) override {
    trace_.setOn(on);
    return Status::success();
  }
  Expected<std::string> takeTrace(const std::vector<std::vector<std::string>>& opNamesByLaunch) override {
    return trace_.take(opNamesByLaunch);
  }

 protected:
  /// What a freshly loaded module needs before its first run (the simulator binds its engine). Default: nothing.
  virtual Status prepareModule(CudaModule&) { return Status::success(); }
  /// A module of the artifact's bytes that no other step shares (a launch graph's own instance: its buffer
  /// table is set once, at the capture, and no run of the shared instance with other buffers changes it).
  Expected<std::shared_ptr<CudaModule>> privateModule(const Artifact& a) {
    if (!a.bytes) return internalError("cuda load: an artifact without bytes");
    SK_ASSIGN_OR_RETURN(auto m, CudaModule::fromBytes(*a.bytes, a.key));
    if (Status st = prepareModule(*m); !st) return st.error().context("SuperKernel " + a.key);
    return m;
  }
  /// Each step's private module (privateModule), run once in order on `stream` (sets their buffer tables,
  /// the occupancy check and the PDL variant's recorded launch), for captureGraph.
  Expected<std::vector<std::shared_ptr<CudaModule>>> graphModules(const std::vector<GraphStep>& steps, void* stream) {
    std::vector<std::shared_ptr<CudaModule>> modules;
    for (const GraphStep& s : steps) {
      if (!s.artifact) return internalError("a launch graph step without its artifact");
      SK_ASSIGN_OR_RETURN(auto m, privateModule(*s.artifact));
      SK_RETURN_IF_ERROR(run(*m, s.cores, stream, s.buffers, s.numBuffers));
      modules.push_back(std::move(m));
    }
    return modules;
  }

  LaunchTrace trace_;
  CudaModuleSet modules_;

 private:
  std::string target_;
  MachineModel machine_;
};

}  // namespace sk
