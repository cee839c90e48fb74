// Where the executor's threads run (issue 13: "workers that stay apart").
//
// Guarantee: with placement on, worker w >= 1 is pinned to its own CPU
// cpus[w] (distinct CPUs, one per worker), and cpus[0] is kept for the
// launching thread (worker 0 for the duration of a launch). The launching
// thread is not pinned for good (it is the user's thread); instead every
// launch checks where it runs (sched_getcpu, a few ns): if it sits on a
// pinned worker's CPU (the scheduler woke it next to the worker that woke
// it, the "stacked" case that cost ~75 us per launch), it moves itself to
// cpus[0] for the launch and restores its own mask afterwards.
//
// Placement is on when the allowed CPUs (the creating thread's affinity mask,
// intersected with SK_CPU_MASK / ExecutorOptions::cpuMask) number at least
// the workers; otherwise (more workers than CPUs, "off", an invalid mask:
// logged) nothing is pinned. CPUs are taken one per physical core first
// (the first hyperthread of each core), then the siblings.
#pragma once

#include <sched.h>

#include <cstdint>
#include <string>
#include <vector>

#include "superkernel/runtime/Executor.h"

namespace sk::rt {

struct Placement {
  bool pinned = false;
  std::vector<int> cpus;  // cpus[w] for worker w (empty when not pinned)
  std::string note;       // why not pinned, or the CPU list
};

/// The CPUs a mask text selects: "0x3" / "3" (hex bit mask, CPU 0 = bit 0,
/// like ggml's --cpu-mask) or a list "0-3,8". "auto"/"" and "off" are
/// handled by planPlacement. Errors name the text and the accepted forms.
Expected<std::vector<int>> parseCpuMask(const std::string& text);

/// Decide the placement of `workers` workers. `mask`: ExecutorOptions::
/// cpuMask, or SK_CPU_MASK when that is empty.
Placement planPlacement(uint32_t workers, const std::string& mask);

/// Pin the calling thread to one CPU (false, logged, when the kernel refuses).
bool pinThisThread(int cpu);

/// RAII around a launch on the launching thread: moves it to `placement`'s
/// cpus[0] if it currently runs on another worker's CPU, and restores its
/// previous affinity mask on destruction.
class CallerPlacement {
 public:
  CallerPlacement(const Placement& p, uint64_t* moves);
  ~CallerPlacement();
  CallerPlacement(const CallerPlacement&) = delete;
  CallerPlacement& operator=(const CallerPlacement&) = delete;

 private:
  bool moved_ = false;
  cpu_set_t saved_;
};

}  // namespace sk::rt
