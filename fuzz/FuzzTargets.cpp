// The target catalog (superkernel/target/Targets.h) for the op-list fuzzer. The fuzzer compiles only the
// frontend and support sources, so that they carry coverage instrumentation (CMakeLists.txt); the library's
// answer comes from the back-end registry, which would pull every back end in. This stands in for it with the
// built-in targets as they register (src/backends/*/*Backend.cpp): their names, kernels folders, the host, and
// their kernel keys from the back ends' own definitions, so the fuzzer parses and validates what the library
// does. Not compiled into the library.
#include <algorithm>

#include "superkernel/target/Targets.h"
#include "backends/ascend/AscendKernelKeys.h"
#include "backends/cuda/CudaKernelKeys.h"

namespace sk {
namespace {

struct FuzzTarget {
  std::string name;
  std::string kernels;
  std::vector<KernelAttribute> attributes;
};

const std::vector<FuzzTarget>& fuzzTargets() {
  static const std::vector<FuzzTarget> targets = {
      {"ascend", "", ascendKernelAttributes()},
      {"cpu", "", {}},
      {"cuda", "", cudaKernelAttributes()},
      {"cuda-sim", "cuda", {}},
  };
  return targets;
}

}  // namespace

std::vector<std::string> targetNames() {
  std::vector<std::string> names;
  for (const FuzzTarget& t : fuzzTargets()) names.push_back(t.name);
  return names;
}

bool isRegisteredTarget(std::string_view name) {
  const auto& ts = fuzzTargets();
  return std::any_of(ts.begin(), ts.end(), [&](const FuzzTarget& t) { return t.name == name; });
}

std::string kernelsFolderOf(std::string_view target) {
  for (const FuzzTarget& t : fuzzTargets())
    if (t.name == target && !t.kernels.empty()) return t.kernels;
  return std::string(target);
}

std::string hostTargetName() { return "cpu"; }

const KernelAttribute* findKernelAttribute(std::string_view key) {
  for (const FuzzTarget& t : fuzzTargets())
    for (const KernelAttribute& a : t.attributes)
      if (a.key == key) return &a;
  return nullptr;
}

std::vector<std::string> kernelAttributeKeys() {
  std::vector<std::string> keys;
  for (const FuzzTarget& t : fuzzTargets())
    for (const KernelAttribute& a : t.attributes) keys.push_back(a.key);
  std::sort(keys.begin(), keys.end());
  return keys;
}

}  // namespace sk
