// The cuda simulator's host engine (target cuda-sim; DESIGN section 9): runs
// a grid of simulated CUDA code on host threads, one thread per resident CTA
// and one fiber per CUDA thread of it. Code compiled against sim_device.h
// calls back into it (sim_abi.h) for everything that crosses threads.
//
// What it checks that a GPU would do silently wrong or hang on, each an error
// of the launch naming the CTA: a __syncthreads or warp shuffle that not
// every live thread of the CTA (warp) reaches, lanes of a warp at different
// warp operations, a shuffle with a partial mask, a launch that makes no
// progress for the watchdog's time (which CTAs wait on which word for which
// value), a fiber stack overflow, __trap(). What it does not model: the PTX memory model's
// weaker orders (host atomics are at least as strong), timing, caches.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "superkernel/cuda/sim_abi.h"

namespace sk::cuda_sim {

/// The simulated GPU. Process-wide: loaded modules keep one ops table.
struct Config {
  /// Streaming multiprocessors; each holds one CTA at a time (ctas_per_sm is 1
  /// for any CTA that fits), so a grid larger than this runs in waves, as a
  /// GPU runs a grid larger than it holds.
  uint32_t multiprocessors = 8;
  /// A launch that makes no progress (no sync-area wait satisfied, no CTA
  /// finished) for this long fails as hung, with what each CTA waits on.
  std::chrono::milliseconds watchdog{60000};
  /// Gets the report when CTAs of a failed launch do not return (a thread
  /// spinning without __nanosleep): it should end the process. Empty: print
  /// the report and abort. If it returns, the launch waits on.
  std::function<void(const std::string& report)> onHang;
  /// Deterministic delay (microseconds x a CTA-dependent factor 0..3) at each
  /// CTA's start and after each satisfied wait: turns a missing wait into a
  /// wrong result instead of a lucky one.
  uint32_t skewMicros = 0;
};

void setConfig(const Config& c);
Config config();

/// The ops table modules are bound to (sk_cuda_sim_bind).
const sk_cuda_sim_ops* ops();

/// Why the calling thread's last failed launch failed ("" if none).
std::string lastLaunchError();

/// What runs the collectives of launches (sk_cuda_sim_ops::collective): the
/// device's communicator, set by the device around each launch it makes.
struct Collectives {
  /// Runs one collective to completion: "" or the error that fails the
  /// launch (naming the op and the rank). `stop` turns true when the launch
  /// failed elsewhere (the watchdog, another CTA): the wait should end.
  std::function<std::string(const sk_cuda_sim_collective_args& args, const std::function<bool()>& stop)> run;
  /// What the watchdog's report calls the op (`collective op "ar"`).
  std::function<std::string(const sk_cuda_sim_collective_args& args)> name;
};

/// While it lives, launches made by the calling thread run their collectives
/// with `c` (null: none, and a collective fails its launch saying so).
class CollectivesScope {
 public:
  explicit CollectivesScope(const Collectives* c);
  ~CollectivesScope();
  CollectivesScope(const CollectivesScope&) = delete;
  CollectivesScope& operator=(const CollectivesScope&) = delete;

 private:
  const Collectives* previous_;
};

/// Largest CTA the simulator runs (threads), largest grid, dynamic shared memory per CTA.
constexpr uint32_t kMaxThreads = 1024;
constexpr uint64_t kMaxCtas = uint64_t{1} << 24;
constexpr size_t kMaxDynamicSmem = 227 * 1024;

}  // namespace sk::cuda_sim
