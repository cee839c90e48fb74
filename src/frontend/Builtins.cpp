// Builtin kernels: kernels/<target>/<name>.json, each one kernel object of
// the op-list format whose "source" is relative to that json file.
//
// Guarantees: a name is looked up only if it is [A-Za-z0-9_]+ (so a name can
// never escape the kernels directory); the returned declaration has an
// absolute sourcePath and keeps `builtin` set to the builtin's name.
#include <algorithm>
#include <fstream>
#include <sstream>

#include "frontend/OpListInternal.h"
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

Expected<KernelDecl> resolveKernel(const KernelDecl& k) {
  if (k.builtin.empty()) return k;
  SK_ASSIGN_OR_RETURN(KernelDecl b, findBuiltinKernel(k.builtin));
  b.name = k.name;
  return b;
}

}  // namespace detail

Expected<KernelDecl> findBuiltinKernel(std::string_view name) { return detail::findBuiltinKernelIn(dataKernelsDir() / "cpu", name); }

std::vector<std::string> builtinKernelNames() { return detail::namesIn(dataKernelsDir() / "cpu"); }

}  // namespace sk
