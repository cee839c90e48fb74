// Private: the ascend back ends on the seam (target/Backend.h), assembled by
// the registry: `ascend` (a real device) and `ascend-sim` (the simulator),
// as cuda and cuda-sim. Both share the emitter (AscendEmitter.cpp:
// makeAscendStep + emitAscend, the printer AscendSuperKernel.h), the machine
// model (AscendMachine.h) and the build steps (AscendBuild.h); each has its
// recipe (AscendRecipe.cpp: bisheng; AscendSimRecipe.cpp: the host compiler)
// and its device (AscendDevice.cpp: CANN's runtime; AscendSimDevice.cpp: the
// simulator, with its side launches, AscendSimSideLaunches.h).
//
// What ties them together is the launch descriptor, "entry=... type=MIX_AIC_1_2
// block_dim=8 ...": the emitter passes it beside the source
// (GeneratedSource::launch), which the recipe's link reads (which objects to
// split-copy), the SuperKernel key hashes, and the link stores beside the
// code in the artifact (SimBundle, DeviceBundle: AscendBuild.h), where the
// device reads it (what to launch: entry, task type, block dim, how buffers
// map to parameters, where the runtime scalars' slots point). So an artifact
// from the cache carries its own, and no host data is printed into code.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "superkernel/target/Backend.h"

namespace sk::ascend {

/// A side launch's GM words in a SuperKernel's sk_notify buffer (64 bytes
/// apart, zeroed before the launch): the device starts side launch k once
/// words [first, first + count) are all set (the SuperKernel's cores set
/// them after the ops it needs) and sets word `done` when it completed (1;
/// 2: it failed), which the cores of the ops that need it poll.
struct SideWords {
  uint32_t done = 0, first = 0, count = 0;
};
constexpr uint32_t kNotifyWordBytes = 64;

struct LaunchDescriptor {
  std::string entry;            // the global symbol launched
  std::string type;             // task type without KERNEL_TYPE_: "MIX_AIC_1_2", "AIV_ONLY", ...
  uint32_t blockDim = 1;
  uint32_t buffers = 0;         // run()'s buffer count (the step's buffers, manifest order)
  uint64_t profileBytes = 0;    // fused with profiling=1: an extra GM buffer appended by the device
  int split = 1;                // split-mode copies of every object (fused)
  /// A SuperKernel (fused=1), not one sub-kernel launched directly: what the links build and localize.
  bool fused = false;
  bool bufferTable = false;     // fused: the entry takes one GM table of the buffers' addresses (table=1)
  /// Fused with side launches: words of the sk_notify buffer (an extra GM
  /// argument after the buffers, before the profile buffer) and each side
  /// launch's words, in the plan's order.
  uint32_t notifyWords = 0;
  std::vector<SideWords> sides;
  std::vector<std::string> objects;  // object symbols, in GeneratedSource::variants order
  /// Unfused: the sub-kernel's parameters as (buffer index, byte offset); empty: buffers in order.
  std::vector<std::pair<uint32_t, uint64_t>> args;
  /// Runtime scalars' sources by slot, as (buffer index, byte offset): the device passes each launch their
  /// addresses (ascend_sim::LaunchSpec::runtimeValues), fused or not; at most kMaxRuntimeValues.
  std::vector<std::pair<uint32_t, uint64_t>> runtime;
  /// Target ascend, a step with collectives: the rank masks of their groups (key hccl=, distinct, plan
  /// order). The entry then takes one more GM argument, the table of their HCCL contexts ({mask, context
  /// address} per group, then {0, 0}; HcclGroups.h), which the collective sub-kernels read theirs from.
  std::vector<uint64_t> hccl;
};

/// One GM argument of a launch's entry. Both devices map the same list
/// (launchArguments) to their addresses: host pointers in the simulator,
/// device memory on CANN.
struct LaunchArg {
  enum class Kind : uint8_t { Buffer, BufferTable, Notify, Hccl, Profile };
  Kind kind = Kind::Buffer;
  uint32_t buffer = 0;  // Buffer: which of run()'s buffers
  uint64_t offset = 0;  // Buffer: bytes into it
};
/// The entry's GM arguments in order: an unfused launch's parameters
/// (`args`: buffer, byte offset); else the buffers one by one, or (table=1)
/// one GM table of their addresses; then the notify words (notify_words),
/// the HCCL context table (hccl, after an unfused launch's parameters too)
/// and the profile records (profile_bytes), each when the launch has them.
std::vector<LaunchArg> launchArguments(const LaunchDescriptor& d);

/// The simulator's and the emitter tests' map of a fused SuperKernel's
/// launchArguments to host pointers: the `n` buffers one by one, or
/// (bufferTable) the address of `table`, filled with theirs; then `notify`
/// and `profile`, each when it is not null. `table` must outlive the launch.
std::vector<void*> fusedLaunchArguments(bool bufferTable, void* const* buffers, uint32_t n,
                                        std::vector<uint64_t>& table, void* notify, void* profile);

std::string formatLaunchDescriptor(const LaunchDescriptor& d);
Expected<LaunchDescriptor> parseLaunchDescriptor(std::string_view text);

}  // namespace sk::ascend

namespace sk {

/// Backend{"ascend", ...}: a real device. bisheng builds the objects and the
/// SuperKernel (AscendRecipe.cpp), CANN's runtime runs them
/// (AscendDevice.cpp, libascendcl by dlopen).
Backend ascendBackend();
/// Backend{"ascend-sim", ...}: the same Ascend C sources built by the host
/// compiler and run by the simulator (runtime/ascend/sim).
Backend ascendSimBackend();

/// The emitter of both (one Ascend C source); `target` names it in manifests. The launch descriptor goes
/// beside the source only (GeneratedSource::launch); each recipe stores it in its artifact's bundle.
Expected<std::shared_ptr<const Emitter>> makeAscendEmitter(std::string target);
std::shared_ptr<const BuildRecipe> makeAscendSimRecipe();
/// The simulator device: options.cores AI Cores (0: SK_ASCEND_AI_CORES, else 8).
Expected<std::unique_ptr<Device>> makeAscendSimDevice(const DeviceOptions& options);
/// bisheng and CANN's binutils, found when the recipe is made (AscendBuild.h findAscendTools); when they
/// are missing, the Session's toolchain lookup says so with compilerHint().
std::shared_ptr<const BuildRecipe> makeAscendRecipe();
/// The CANN device (never fails to be created: without CANN, load, run and buffers say what is missing).
Expected<std::unique_ptr<Device>> makeAscendDevice(const DeviceOptions& options);

}  // namespace sk
