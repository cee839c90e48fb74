// The back-end registry: the one place that knows which targets exist. The
// cpu, ascend (simulated), cuda and cuda-sim back ends are built in; registerBackend() adds
// others (a test back end from its own file, a plugin).
#include <fmt/format.h>

#include <map>
#include <mutex>

#include "superkernel/frontend/OpList.h"
#include "superkernel/driver/Driver.h"
#include "superkernel/target/Backend.h"
#include "target/ascend/AscendBackend.h"
#include "target/cpu/CpuBackend.h"
#include "target/cuda/CudaBackend.h"

namespace sk {

namespace {

// Op lists may now name it; its kernels are looked up where it says.
void announce(const Backend& b) {
  addAcceptedTargetName(b.name);
  if (!b.kernels.empty()) addTargetKernelsAlias(b.name, b.kernels);
}

struct Registry {
  std::mutex mu;
  std::map<std::string, std::unique_ptr<Backend>, std::less<>> backends;
  Registry() {
    for (Backend b : {cpuBackend(), ascendBackend(), cudaBackend(), cudaSimBackend()}) {
      std::string name = b.name;
      announce(b);
      backends.emplace(name, std::make_unique<Backend>(std::move(b)));
    }
  }
};

Registry& registry() {
  static Registry r;
  return r;
}

std::string knownNames(Registry& r) {
  std::string s;
  for (const auto& [n, b] : r.backends) s += (s.empty() ? "" : ", ") + n;
  return s;
}

}  // namespace

Status registerBackend(Backend backend) {
  if (backend.name.empty() || !backend.makeEmitter || !backend.makeRecipe || !backend.makeDevice)
    return internalError("registerBackend: a back end needs a name, an emitter, a recipe and a device factory");
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  if (r.backends.count(backend.name)) return internalError(fmt::format("target '{}' is already registered", backend.name));
  std::string name = backend.name;
  announce(backend);
  r.backends.emplace(name, std::make_unique<Backend>(std::move(backend)));
  return Status::success();
}

Expected<const Backend*> findBackend(std::string_view name) {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  auto it = r.backends.find(name);
  if (it != r.backends.end()) return static_cast<const Backend*>(it->second.get());
  return badInput(fmt::format("unknown target '{}' (supported: {})", name, knownNames(r)));
}

std::vector<std::string> targetNames() {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  std::vector<std::string> out;
  for (const auto& [n, b] : r.backends) out.push_back(n);
  return out;
}

Expected<std::shared_ptr<const Target>> makeTarget(std::string_view name) {
  SK_ASSIGN_OR_RETURN(const Backend* b, findBackend(name));
  return b->makeEmitter();
}

Status BuildRecipe::postProcessObject(const std::filesystem::path&, const KernelVariant&, const RecipeTools&) const {
  return Status::success();
}

Expected<uint64_t> BuildRecipe::symbolSize(std::string_view objectBytes, std::string_view symbol) const {
  return readSymbolSize(objectBytes, symbol);
}

Status Device::runBeside(const LoadedKernel&, uint32_t, void*, void* const*, uint32_t, const std::vector<SideRun>&) {
  return badInput(fmt::format("target {} runs no launches beside a SuperKernel (a plan for another machine model?)",
                              target()));
}

Status Device::setProfiling(bool on) {
  if (!on) return Status::success();
  return badInput(fmt::format("profiling is not supported on target {}", target()));
}

Expected<std::string> Device::takeTrace(const std::vector<std::vector<std::string>>&) {
  return badInput(fmt::format("profiling is not supported on target {}", target()));
}

}  // namespace sk
