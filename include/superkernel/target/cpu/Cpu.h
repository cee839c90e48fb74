// The cpu back end's public face: what benchmarks and tests that drive the
// host executor or a generated run() directly need. Everything else reaches
// the cpu back end through the target-neutral interfaces (target/Backend.h).
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "superkernel/runtime/Executor.h"
#include "superkernel/target/Backend.h"

struct sk_run_args;

namespace sk {

class LoadedLibrary;

/// extern "C" int run(uint32_t block_dim, void* stream, const sk_run_args* args)
using SuperKernelRunFn = int (*)(uint32_t blockDim, void* stream, const sk_run_args* args);

/// run()'s non-zero returns for a call the generated entry rejects before
/// launching anything (the executor's own failures come back as its code).
/// A negative value = a bad call; the cpu device maps these to messages.
enum RunRejection : int {
  kRunBadAbi = -1,          // args null or abi_version != SK_ABI_VERSION
  kRunBadBufferCount = -2,  // num_buffers != manifest size
  kRunBadBlockDim = -3,     // block_dim != the SuperKernel's core count
  kRunBadServices = -4,     // stream null or services version mismatch
  kRunTooFewWorkers = -5,   // executor has fewer workers than cores
};
/// Human-readable meaning of run()'s return code `rc` (0: "ok").
std::string describeRunResult(int rc);

/// The cpu runtime in the data directory (support/Paths.h): the headers generated code and kernels
/// include (.../runtime/cpu/include) and the sources linked into every SuperKernel (.../runtime/cpu/src).
std::filesystem::path cpuRuntimeIncludeDir();
std::filesystem::path cpuRuntimeSourceDir();

/// The executor of a cpu Device (nullptr for another target's device).
Executor* cpuExecutor(Device& device);
/// The generated `run` of a SuperKernel loaded by the cpu device (nullptr otherwise).
SuperKernelRunFn cpuRunFunction(const LoadedKernel& kernel);
/// Load a cpu SuperKernel's verified bytes without a device (memfd +
/// dlopen, `run` resolved): what the cpu device's load() does.
Expected<std::shared_ptr<const LoadedKernel>> cpuLoad(const Artifact& artifact);

}  // namespace sk
