// The back-end registry: the one place that knows which targets exist
// (target/Targets.h answers for code below the back ends). The built-in back
// ends are one line each below; registerBackend() adds others (a test back
// end from its own file, a plugin).
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <mutex>

#include "superkernel/driver/Driver.h"
#include "superkernel/target/Backend.h"
#include "superkernel/target/Targets.h"
#include "backends/ascend/AscendBackend.h"
#include "backends/cpu/CpuBackend.h"
#include "backends/cuda/CudaBackend.h"

namespace sk {

namespace {

struct Registry {
  std::mutex mu;
  std::map<std::string, std::unique_ptr<Backend>, std::less<>> backends;
  // The built-in back ends: one registration each.
  Registry() {
    for (Backend b : {cpuBackend(), ascendBackend(), ascendSimBackend(), cudaBackend(), cudaSimBackend()}) {
      std::string name = b.name;
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
  if (backend.name.empty() || !backend.machineModel || !backend.makeEmitter || !backend.makeRecipe ||
      !backend.makeDevice)
    return internalError(
        "registerBackend: a back end needs a name, a machine model, an emitter, a recipe and a device factory");
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  if (r.backends.count(backend.name)) return internalError(fmt::format("target '{}' is already registered", backend.name));
  for (const KernelAttribute& a : backend.kernelAttributes) {
    for (const auto& [n, b] : r.backends)
      for (const KernelAttribute& other : b->kernelAttributes)
        if (other.key == a.key)
          return internalError(fmt::format("registerBackend: kernel key '{}' is defined by '{}' already", a.key, n));
  }
  if (backend.host) {
    for (const auto& [n, b] : r.backends)
      if (b->host) return internalError(fmt::format("registerBackend: '{}' is the host target already", n));
  }
  std::string name = backend.name;
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

bool isRegisteredTarget(std::string_view name) {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  return r.backends.find(name) != r.backends.end();
}

std::string kernelsFolderOf(std::string_view target) {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  auto it = r.backends.find(target);
  if (it == r.backends.end() || it->second->kernels.empty()) return std::string(target);
  return it->second->kernels;
}

const KernelAttribute* findKernelAttribute(std::string_view key) {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  for (const auto& [n, b] : r.backends)
    for (const KernelAttribute& a : b->kernelAttributes)
      if (a.key == key) return &a;
  return nullptr;
}

std::vector<std::string> kernelAttributeKeys() {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  std::vector<std::string> keys;
  for (const auto& [n, b] : r.backends)
    for (const KernelAttribute& a : b->kernelAttributes) keys.push_back(a.key);
  std::sort(keys.begin(), keys.end());
  return keys;
}

std::string hostTargetName() {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  for (const auto& [n, b] : r.backends)
    if (b->host) return n;
  return {};  // unreachable: a built-in back end is the host's
}

Expected<std::shared_ptr<const Emitter>> makeEmitter(std::string_view name) {
  SK_ASSIGN_OR_RETURN(const Backend* b, findBackend(name));
  return b->makeEmitter();
}

Status BuildRecipe::postProcessObject(const std::filesystem::path&, const KernelVariant&, const RecipeTools&) const {
  return Status::success();
}

Expected<std::string> BuildRecipe::postProcessKey(const Toolchain&) const { return std::string(); }

Expected<uint64_t> BuildRecipe::symbolSize(std::string_view objectBytes, std::string_view symbol) const {
  return readSymbolSize(objectBytes, symbol);
}

Status Device::runBeside(const LoadedKernel&, uint32_t, void*, void* const*, uint32_t, const std::vector<SideRun>&) {
  return badInput(fmt::format("target {} runs no launches beside a SuperKernel (a plan for another machine model?)",
                              target()));
}

std::string Device::launchGraphUnavailable(GraphLaunch) const {
  return fmt::format("target {} has no launch graphs (Device::captureGraph)", target());
}

Expected<std::unique_ptr<LaunchGraph>> Device::captureGraph(const std::vector<GraphStep>&, GraphLaunch kind) {
  return badInput(launchGraphUnavailable(kind));
}

Status Device::setProfiling(bool on) {
  if (!on) return Status::success();
  return badInput(fmt::format("profiling is not supported on target {}", target()));
}

Expected<std::string> Device::takeTrace(const std::vector<std::vector<std::string>>&) {
  return badInput(fmt::format("profiling is not supported on target {}", target()));
}

}  // namespace sk
