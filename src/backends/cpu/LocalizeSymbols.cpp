// The symbol table comes from the bounds-checked ELF reader shared with preload
// sizing (support/ElfSymbols.h); the rewrite itself is objcopy's, run with argv.
#include "backends/cpu/LocalizeSymbols.h"

#include <elf.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include <fmt/format.h>

#include "support/ElfSymbols.h"

namespace sk {
namespace fs = std::filesystem;

namespace {

// Bump when the rewrite changes: it is part of every object's cache key.
constexpr const char* kRecipe = "localize-v1";

fs::path besideCompiler(const Toolchain& tc, const char* name) {
  for (const fs::path& p : {tc.path, tc.invocation}) {
    if (p.empty()) continue;
    fs::path candidate = p.parent_path() / name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return {};
}

}  // namespace

Expected<ObjcopyTool> findObjcopy(const Toolchain& tc) {
  static std::mutex m;
  static std::map<std::string, ObjcopyTool> memo;
  std::lock_guard<std::mutex> g(m);
  const char* env = std::getenv("SK_OBJCOPY");
  const std::string memoKey = tc.path.string() + '\n' + (env ? env : "");
  if (auto it = memo.find(memoKey); it != memo.end()) return it->second;

  fs::path found;
  std::string searched;
  if (env && *env) {
    found = findExecutable(env);
    if (found.empty()) return compileError(fmt::format("SK_OBJCOPY={} not found", env));
  } else {
    const bool gcc = tc.family == CompilerFamily::Gcc;
    const char* order[] = {gcc ? "objcopy" : "llvm-objcopy", gcc ? "llvm-objcopy" : "objcopy"};
    for (const char* name : order) {
      if (found.empty()) found = besideCompiler(tc, name);
      searched += fmt::format("{}{} beside {}", searched.empty() ? "" : ", ", name, tc.path.parent_path().string());
    }
    for (const char* name : order) {
      if (found.empty()) found = findExecutable(name);
      searched += fmt::format(", {} on PATH", name);
    }
  }
  if (found.empty())
    return compileError(fmt::format(
        "no objcopy to keep fused kernels' helper symbols apart (searched {}); install binutils or llvm, or set "
        "SK_OBJCOPY",
        searched));
  auto v = runProcess({found.string(), "--version"});
  if (!v || !v->succeeded())
    return compileError(fmt::format("{} --version failed: {}", found.string(),
                                    v ? v->describe() + " " + v->err : v.error().message()));
  ObjcopyTool tool;
  tool.path = found;
  tool.identity = fmt::format("{} {} {}", kRecipe, found.string(), v->out.substr(0, v->out.find('\n')));
  memo.emplace(memoKey, tool);
  return tool;
}

Expected<std::vector<std::string>> definedGlobalSymbols(std::string_view objectBytes) {
  SK_ASSIGN_OR_RETURN(std::vector<ElfSymbol> symbols, readElfSymbols(objectBytes));
  std::vector<std::string> out;
  for (const ElfSymbol& sym : symbols) {
    if (!sym.defined) continue;
    if (sym.binding != STB_GLOBAL && sym.binding != STB_WEAK && sym.binding != STB_GNU_UNIQUE) continue;
    out.push_back(sym.name);
  }
  return out;
}

Status localizeObjectSymbols(const ObjcopyTool& tool, const fs::path& object, const std::string& keep,
                             const ProcessOptions& options) {
  std::ifstream in(object, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  if (!in) return ioError(fmt::format("cannot read {}: {}", object.string(), std::strerror(errno)));
  const std::string bytes = ss.str();
  SK_ASSIGN_OR_RETURN(std::vector<std::string> globals, definedGlobalSymbols(bytes));
  std::string map;
  for (const std::string& s : globals) {
    if (s == keep) continue;
    if (s.find_first_of(" \t\r\n") != std::string::npos)
      return compileError(fmt::format("{}: symbol '{}' contains white space; it cannot be renamed", object.string(), s));
    map += s + ' ' + s + ".sk." + keep + '\n';
  }
  const fs::path mapFile = object.parent_path() / "localize.map";
  std::error_code ec;
  {
    std::ofstream out(mapFile, std::ios::binary | std::ios::trunc);
    out << map;
    if (!out.flush()) return ioError(fmt::format("cannot write {}: {}", mapFile.string(), std::strerror(errno)));
  }
  std::vector<std::string> argv = {tool.path.string(), "--redefine-syms=" + mapFile.string(),
                                   "--keep-global-symbol=" + keep, object.string()};
  auto res = runProcess(argv, options);
  fs::remove(mapFile, ec);
  if (!res) return Error(res.error()).context("localizing the kernel's symbols");
  if (!res->succeeded())
    return compileError(fmt::format("localizing the kernel's symbols failed ({})\n  command: {}\n{}", res->describe(),
                                    formatCommand(argv), res->err.empty() ? res->out : res->err));
  return Status::success();
}

}  // namespace sk
