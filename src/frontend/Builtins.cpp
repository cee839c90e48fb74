// Builtin kernels: kernels/<target>/<name>.json, each one kernel object of
// the op-list format whose "source" is relative to that json file.
//
// One name is the same kernel on every target that implements it: its
// declaration and source for target T live in kernels/T/.
//
// Guarantees: a name is looked up only if it is [A-Za-z0-9_]+ (so a name can
// never escape the kernels directory); the returned declaration has an
// absolute sourcePath and keeps `builtin` set to the builtin's name.
#include <algorithm>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include "frontend/OpListInternal.h"
#include "superkernel/target/Targets.h"
#include "superkernel/support/Paths.h"

namespace sk {
namespace fs = std::filesystem;

namespace detail {

namespace {
bool validBuiltinName(std::string_view n) {
  if (n.empty() || n.size() > 128) return false;
  for (char c : n)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return false;
  return true;
}

std::vector<std::string> namesIn(const fs::path& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  fs::directory_iterator it(dir, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    const fs::path& p = it->path();
    if (p.extension() == ".json" && validBuiltinName(p.stem().string())) out.push_back(p.stem().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}
}  // namespace

Expected<KernelDecl> findBuiltinKernelIn(const fs::path& dir, std::string_view name) {
  std::string n(name);
  if (!validBuiltinName(n)) return badInput("invalid builtin kernel name " + quote(n) + " (letters, digits, _)");
  fs::path file = dir / (n + ".json");
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) {
    std::string avail;
    for (const auto& a : namesIn(dir)) avail += (avail.empty() ? "" : ", ") + a;
    return badInput("unknown builtin kernel " + quote(n) + " (available: " + (avail.empty() ? "none" : avail) + ")");
  }
  OpListLimits limits;
  limits.maxFileBytes = 1 << 20;
  auto size = fs::file_size(file, ec);
  if (ec || size > limits.maxFileBytes) return badInput(file.string() + ": missing or over 1 MiB");
  std::ifstream in(file, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  if (!in && !in.eof()) return ioError(file.string() + ": read failed");
  SK_ASSIGN_OR_RETURN(ojson j, parseJsonText(ss.str(), file.string(), limits));
  fs::path base = fs::absolute(file.parent_path(), ec);
  SK_ASSIGN_OR_RETURN(KernelDecl k, parseKernelObject(j, file.string(), "", ec ? file.parent_path() : base, n, limits));
  if (!k.builtin.empty()) return badInput(file.string() + ": a builtin kernel cannot itself be a \"builtin\" reference");
  k.builtin = n;
  return k;
}

Expected<KernelDecl> findBuiltinKernelFor(const fs::path& kernelsRoot, std::string_view name, std::string_view target) {
  std::string n(name);
  fs::path dir = kernelsRoot / std::string(target);
  std::error_code ec;
  if (validBuiltinName(n) && !fs::is_regular_file(dir / (n + ".json"), ec)) {
    // A builtin name is the same kernel on every target that implements it:
    // say which targets do when the chosen one does not.
    std::vector<std::string> have;
    for (fs::directory_iterator it(kernelsRoot, ec), end; !ec && it != end; it.increment(ec)) {
      std::error_code ec2;
      if (it->is_directory(ec2) && fs::is_regular_file(it->path() / (n + ".json"), ec2))
        have.push_back(it->path().filename().string());
    }
    std::sort(have.begin(), have.end());
    if (!have.empty()) {
      std::string list;
      for (const auto& t : have) list += (list.empty() ? "" : ", ") + t;
      return badInput("builtin kernel " + quote(n) + " has no " + std::string(target) + " version (targets that have it: " +
                      list + ")");
    }
  }
  return findBuiltinKernelIn(dir, name);
}

}  // namespace detail

namespace oplist {

Expected<KernelDecl> resolveKernel(const KernelDecl& k, std::string_view targetName) {
  const std::string target = kernelsFolderOf(targetName);
  if (!k.builtin.empty()) {
    SK_ASSIGN_OR_RETURN(KernelDecl b, findBuiltinKernel(k.builtin, target));
    b.name = k.name;
    // Macros set on the referring declaration (the C++ API allows them; the
    // op-list format has no key for them) apply over the builtin's own, as an
    // op's macros apply over its kernel's. Dropping them silently made
    // SK_KERNELS_BASELINE in the benchmark's baseline a no-op.
    for (const auto& [name, value] : k.macros) b.macros[name] = value;
    return b;
  }
  if (k.sources.empty()) return k;
  auto it = k.sources.find(std::string(target));
  if (it == k.sources.end()) {
    std::string have;
    for (const auto& [t, s] : k.sources) have += (have.empty() ? "" : ", ") + t;
    // The target asked for, and the key that serves it (ascend-sim compiles the "ascend" sources).
    return badInput("kernel " + quote(k.name) + " has no source for target " + std::string(targetName) +
                    " (it has: " + have + "); declare one with \"sources\": {\"" + std::string(target) +
                    "\": \"<file>\"}");
  }
  KernelDecl r = k;
  r.source = it->second;
  r.sourcePath = k.sourcePaths.at(it->first);
  return r;
}

}  // namespace oplist

namespace detail {

Expected<KernelDecl> resolveKernelForChecks(const KernelDecl& k, std::string_view target) {
  auto r = resolveKernel(k, target);
  if (r) return r;
  // One op list serves every target and --target may pick another than the
  // list's: a kernel this target lacks is checked with another target's
  // declaration here; planning for a target without it is the error.
  if (!k.builtin.empty()) {
    if (!validBuiltinName(k.builtin)) return r;
    std::error_code ec;
    for (fs::directory_iterator it(dataKernelsDir(), ec), end; !ec && it != end; it.increment(ec)) {
      std::error_code ec2;
      if (!it->is_directory(ec2) || !fs::is_regular_file(it->path() / (k.builtin + ".json"), ec2)) continue;
      auto other = resolveKernel(k, it->path().filename().string());
      if (other) return other;
    }
    return r;
  }
  if (!k.sources.empty()) return resolveKernel(k, k.sources.begin()->first);
  return r;
}

}  // namespace detail

Expected<KernelDecl> findBuiltinKernel(std::string_view name, std::string_view target) {
  // Without the data directory every name is "unknown"; say where it was looked for.
  SK_RETURN_IF_ERROR(checkDataDir());
  return detail::findBuiltinKernelFor(dataKernelsDir(), name, kernelsFolderOf(target));
}

std::vector<std::string> builtinKernelNames(std::string_view target) {
  return detail::namesIn(dataKernelsDir() / kernelsFolderOf(target));
}

}  // namespace sk
