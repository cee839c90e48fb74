// Which targets exist, answered by the back-end registry (src/backends/Registry.cpp) and nowhere else.
// Code below the back ends (the op-list parser and validator, the tools) asks here instead of keeping
// its own list of names: a back end registered later (a test back end, a plugin) is known at once, and
// adding a built-in one edits no shared file.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "superkernel/frontend/OpList.h"

namespace sk {

/// Every registered target's name, sorted.
std::vector<std::string> targetNames();
/// Whether a back end is registered as `name`.
bool isRegisteredTarget(std::string_view name);
/// The folder whose kernel sources and builtins `target` compiles (kernels/<folder>/, an op list's
/// "sources" key): the back end's `kernels` (cuda-sim: cuda), else its own name. An unregistered name
/// answers itself (the validator reports it).
std::string kernelsFolderOf(std::string_view target);
/// The target of the machine the library runs on (the back end registered with `host`): what a Session
/// sets up first and what the `compiler` option names the compiler of.
std::string hostTargetName();

/// A kernel declaration key that one back end defines (cuda's "threads"): an integer in [min, max] that the
/// shared parser and validator accept because the back end declares it (Backend::kernelAttributes), keep in
/// KernelDecl::attributes and write back out, with the back end's own rules and documentation.
struct KernelAttribute {
  std::string key;
  int64_t min = 0;
  int64_t max = 0;
  /// A further rule on the value, "" if it holds ("is not a multiple of 32 (the warp size)").
  std::function<std::string(int64_t value)> checkValue;
  /// A rule across the declaration, "" if it holds (ascend: sync_all_calls needs "kernel_sync": true).
  std::function<std::string(const KernelDecl& decl)> checkDecl;
};

/// The definition of kernel key `key` by the registered back end that defines it (null: none does). It
/// lives as long as the registry.
const KernelAttribute* findKernelAttribute(std::string_view key);
/// Every key some registered back end defines, sorted.
std::vector<std::string> kernelAttributeKeys();

}  // namespace sk
