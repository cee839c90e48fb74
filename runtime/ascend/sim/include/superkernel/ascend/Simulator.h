// The Ascend simulator's host side: one simulated kernel launch at a time,
// every core a thread (DESIGN section 9). Kernel code compiled against
// runtime/ascend/sim/include/kernel_operator.h calls back into it for every
// cross-core operation; this side holds the flag counters and reports what
// hardware would do silently wrong (or hang on) as an error of the launch.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "superkernel/ascend/sim_abi.h"
#include "superkernel/support/Error.h"

namespace sk::ascend_sim {

/// A launch's task type: which cores it starts per block (KERNEL_TASK_TYPE_DEFAULT).
enum class TaskType : uint32_t {
  AivOnly = 0,   // blockDim vector cores
  AicOnly = 1,   // blockDim cube cores
  MixAiv1_0 = 2, // blockDim vector cores (a mix kernel with no cube part)
  MixAic1_0 = 3, // blockDim cube cores
  MixAic1_1 = 4, // blockDim AI Cores of one cube + one vector core
  MixAic1_2 = 5, // blockDim AI Cores of one cube + two vector cores
};

const char* taskTypeName(TaskType t);
/// "MIX_AIC_1_2" etc. (the KERNEL_TYPE_ suffix); nullopt-like false on unknown.
bool parseTaskType(std::string_view name, TaskType* out);
uint32_t aicCount(TaskType t, uint32_t blockDim);
uint32_t aivCount(TaskType t, uint32_t blockDim);

struct LaunchSpec {
  TaskType type = TaskType::AivOnly;
  uint32_t blockDim = 1;
  /// extern "C" void entry(GM_ADDR, ...) with args.size() parameters.
  void* entry = nullptr;
  /// The entry's object's sk_ascend_sim_enter.
  sk_ascend_sim_enter_fn enter = nullptr;
  std::vector<void*> args;
  /// Runtime scalars: slot k's value is at runtimeValues[k], k < numRuntimeValues (every core sees them as
  /// sk_ascend_sim_core::runtime_values). A fixed array: filling it allocates nothing.
  std::array<const void*, SK_ASCEND_SIM_MAX_RUNTIME_VALUES> runtimeValues{};
  uint32_t numRuntimeValues = 0;
  std::string name = "kernel";  // for messages
  /// No progress (a set, a satisfied wait, a core finishing) for this long while
  /// every unfinished core waits or polls GM: the launch fails as hung.
  std::chrono::milliseconds watchdog{10000};
  /// Deterministic per-core delay (microseconds x a core-dependent factor 0..3)
  /// at kernel start and after every wait, to turn races into wrong results.
  uint32_t skewMicros = 0;
  /// When set, declared task types (KERNEL_TASK_TYPE_DEFAULT) must equal `type`.
  bool checkDeclaredType = true;
  /// The device's cores of the launch's kind (AIV_ONLY: vector cores, AIC_ONLY: AI Cores; 0: as many as the
  /// block dim). A single-core-type launch with more blocks runs them in waves of this many, block
  /// GetBlockIdx() = wave start + core, as the hardware schedules blocks onto free cores: blocks of one launch
  /// must then not wait for each other (a kernel_sync kernel needs all its blocks at once; the planner keeps
  /// such a launch within the cores). Mix launches (a SuperKernel) run every block at once: more blocks than
  /// this is an error.
  uint32_t residentBlocks = 0;
  /// The launch's collectives (the simulated AscendC::Hccl client's tasks, sim_abi.h hccl_run): runs one on the
  /// calling core's thread and returns "" or the error that fails the launch (naming the op). `stop` turns true
  /// once the launch has failed elsewhere (the wait should end). Unset: a kernel that calls Hccl fails the
  /// launch ("no communicator").
  std::function<std::string(const sk_ascend_sim_hccl_task& task, const std::function<bool()>& stop)> hccl;
};

/// What a launch did, for tests and traces.
struct LaunchStats {
  uint64_t sets = 0;       // ffts_cross_core_sync calls
  uint64_t waits = 0;      // wait_flag_dev calls
  uint64_t preloads = 0;   // preload calls
  uint64_t dccis = 0;
  uint32_t declaredType = UINT32_MAX;  // last KERNEL_TASK_TYPE_DEFAULT seen
};

/// Run one launch to completion. Errors (Runtime): deadlock (every unfinished
/// core waits on a flag nobody can set), watchdog, counter overflow, a flag
/// count or unmatched set left at the end, an invalid ffts config or pipe for
/// the core type, a mode-1/2 sync with no partner core, a declared task type
/// different from the launch's, preload of something that is not a function,
/// trap(), an exception escaping the kernel. Each names the cores and flags.
/// BadInput: a block dim out of 1..65535, more blocks at once than the
/// simulator runs (128 AI Cores), a mix launch wider than residentBlocks.
Status launch(const LaunchSpec& spec, LaunchStats* stats = nullptr);

// The vector model's checker every simulated core is given (sim_abi.h vector_checker; VectorChecker.cpp).
const void* vectorChecker();

/// Upper bound on a launch's argument count.
constexpr size_t kMaxArgs = 64;
/// Flag ids and the counter limit of the hardware.
constexpr uint32_t kFlagIds = 16;
constexpr uint32_t kFlagCounterMax = 15;
/// Instruction-cache preload limits in 2 KiB units (cube 16, vector 8).
constexpr int64_t kPreloadUnitsAic = 16;
constexpr int64_t kPreloadUnitsAiv = 8;

}  // namespace sk::ascend_sim

namespace sk::ascend_sim {

/// A shared object of simulated kernels (what the simulator's build links),
/// loaded privately; closed on destruction.
class Module {
 public:
  static Expected<Module> load(const std::string& path);
  Module(Module&& o) noexcept : handle_(o.handle_), enter_(o.enter_), path_(std::move(o.path_)) { o.handle_ = nullptr; }
  Module& operator=(Module&&) = delete;
  Module(const Module&) = delete;
  ~Module();
  /// A kernel entry; error names the object and the symbol.
  Expected<void*> entry(const std::string& symbol) const;
  sk_ascend_sim_enter_fn enter() const { return enter_; }

 private:
  Module(void* h, sk_ascend_sim_enter_fn e, std::string p) : handle_(h), enter_(e), path_(std::move(p)) {}
  void* handle_ = nullptr;
  sk_ascend_sim_enter_fn enter_ = nullptr;
  std::string path_;
};

}  // namespace sk::ascend_sim
