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
  LaunchTrace trace_;
  CudaModuleSet modules_;

 private:
  std::string target_;
  MachineModel machine_;
};

}  // namespace sk
