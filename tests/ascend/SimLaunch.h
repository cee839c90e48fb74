// One simulated launch of kernels linked into the test executable (SimKernels.cpp, VectorKernels.cpp):
// the spec with this executable's sk_ascend_sim_enter and a 2 s watchdog, and its outcome as a string
// ("<ok>" or the launch error's message). Shared by the simulator and vector API tests.
#pragma once

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "superkernel/ascend/Simulator.h"

extern "C" void sk_ascend_sim_enter(const sk_ascend_sim_core*);

namespace sktest::ascend {

template <class F>
sk::ascend_sim::LaunchSpec simSpec(F* fn, sk::ascend_sim::TaskType type, uint32_t blockDim,
                                   std::vector<void*> args) {
  sk::ascend_sim::LaunchSpec s;
  s.type = type;
  s.blockDim = blockDim;
  s.entry = reinterpret_cast<void*>(fn);
  s.enter = &sk_ascend_sim_enter;
  s.args = std::move(args);
  s.watchdog = std::chrono::milliseconds(2000);
  return s;
}

inline std::string simOutcome(const sk::ascend_sim::LaunchSpec& s) {
  sk::Status st = sk::ascend_sim::launch(s);
  return st.ok() ? std::string("<ok>") : st.error().message();
}

}  // namespace sktest::ascend
