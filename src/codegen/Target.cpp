#include "superkernel/codegen/Target.h"

#include <fmt/format.h>

#include "codegen/TargetRegistry.h"

namespace sk {

std::string describeRunResult(int rc) {
  switch (rc) {
    case 0: return "ok";
    case kRunBadAbi: return "run() rejected the call: sk_run_args missing or abi_version is not SK_ABI_VERSION";
    case kRunBadBufferCount: return "run() rejected the call: num_buffers differs from the SuperKernel's manifest";
    case kRunBadBlockDim: return "run() rejected the call: block_dim differs from the SuperKernel's core count";
    case kRunBadServices: return "run() rejected the call: the stream is not a compatible sk_services table";
    case kRunTooFewWorkers: return "run() rejected the call: the executor has fewer workers than the SuperKernel's cores";
    default: return fmt::format("run() failed with code {}", rc);
  }
}

Expected<std::shared_ptr<const Target>> makeTarget(std::string_view name) {
  if (name == "cpu") return makeCpuTarget();
  if (name == "ascend" || name == "cuda") {
    return badInput(fmt::format("target '{}' is not supported yet (supported: cpu)", name));
  }
  return badInput(fmt::format("unknown target '{}' (known: cpu, ascend, cuda; supported: cpu)", name));
}

std::vector<std::string> targetNames() { return {"cpu", "ascend", "cuda"}; }

}  // namespace sk
