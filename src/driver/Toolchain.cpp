#include "superkernel/driver/Toolchain.h"

#include "superkernel/driver/Deadline.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>
#include <tuple>

#include <fmt/format.h>

#include "superkernel/cache/Key.h"
#include "superkernel/driver/Process.h"
#include "superkernel/support/Log.h"
#include "superkernel/target/Targets.h"

namespace sk {
namespace fs = std::filesystem;

const char* compilerFamilyName(CompilerFamily f) {
  switch (f) {
    case CompilerFamily::Clang: return "clang";
    case CompilerFamily::Gcc: return "gcc";
    case CompilerFamily::Unknown: break;
  }
  return "unknown";
}

std::string Toolchain::identity() const {
  // The name it is spawned under is part of it: clang and clang++ are one
  // binary with two behaviours.
  return path.string() + "\n" + invocation.filename().string() + "\n" + contentHash + "\n" + version;
}

std::string Toolchain::versionLine() const {
  // The first line that names a version: clang and gcc put it first, nvcc
  // after a banner and a copyright ("Cuda compilation tools, release 13.0").
  for (size_t at = 0; at < version.size();) {
    const size_t end = std::min(version.find('\n', at), version.size());
    const std::string line = version.substr(at, end - at);
    if (line.find("version") != std::string::npos || line.find("release") != std::string::npos) return line;
    at = end + 1;
  }
  return version.substr(0, version.find('\n'));
}

namespace {
struct Identity {
  std::string hash;
  std::string version;
};
using FileId = std::tuple<dev_t, ino_t, off_t, int64_t, int64_t>;

std::mutex& memoMutex() {
  static std::mutex m;
  return m;
}
std::map<FileId, Identity>& memo() {
  static std::map<FileId, Identity> m;
  return m;
}

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}
}  // namespace

Expected<Toolchain> findToolchain(const ToolchainRequest& request) {
  initLogging();
  Toolchain tc;
  tc.target = request.target.empty() ? hostTargetName() : request.target;
  // The target's recipe names its default compiler and variable; none given
  // means the cpu target's.
  const std::string envVar = request.compilerEnvVar.empty() ? "SK_CXX" : request.compilerEnvVar;
  const std::string fallback = request.defaultCompiler.empty() ? "clang++" : request.defaultCompiler;
  std::string source = "requested";
  tc.requested = request.compiler;
  if (tc.requested.empty()) {
    const char* env = std::getenv(envVar.c_str());
    if (env && *env) {
      tc.requested = env;
      source = envVar;
    } else {
      tc.requested = fallback;
      source = "default";
    }
  }
  tc.path = findExecutable(tc.requested);
  tc.invocation = findExecutableUnresolved(tc.requested);
  if (tc.path.empty()) {
    const std::string todo = request.hint.empty()
                                 ? fmt::format("set {} or install {}", envVar, fallback == "clang++" ? "clang" : fallback)
                                 : request.hint;
    const bool path = tc.requested.find('/') != std::string::npos;
    return compileError(fmt::format("compiler '{}'{} not found{}; {}", tc.requested,
                                    source == envVar ? " (from " + envVar + ")" : "",
                                    path ? " (not an executable file)" : " on PATH", todo));
  }

  if (request.launcher) {
    tc.launcher = *request.launcher;
  } else if (const char* env = std::getenv("SK_COMPILER_LAUNCHER"); env && *env) {
    tc.launcher = splitLauncher(env);
  }
  if (!tc.launcher.empty() && findExecutable(tc.launcher[0]).empty()) {
    return compileError(fmt::format("compiler launcher '{}' (SK_COMPILER_LAUNCHER) not found on PATH", tc.launcher[0]));
  }

  struct stat st;
  if (::stat(tc.path.c_str(), &st) != 0) return compileError(fmt::format("cannot stat compiler {}", tc.path.string()));
  FileId id{st.st_dev, st.st_ino, st.st_size, static_cast<int64_t>(st.st_mtim.tv_sec),
            static_cast<int64_t>(st.st_mtim.tv_nsec)};
  {
    std::lock_guard<std::mutex> lock(memoMutex());
    auto it = memo().find(id);
    if (it != memo().end()) {
      tc.contentHash = it->second.hash;
      tc.version = it->second.version;
    }
  }
  if (tc.contentHash.empty()) {
    auto hash = sha256File(tc.path);
    if (!hash) return compileError(fmt::format("cannot read compiler {}: {}", tc.path.string(), hash.error().message()));
    ProcessOptions po;
    // Bounded like a compile (SK_COMPILE_TIMEOUT_S), and never above 60 s:
    // a compiler that hangs on --version should not cost a compile's limit.
    po.timeout = std::min<std::chrono::milliseconds>(std::chrono::seconds(60), compileLimits().perCompile);
    std::vector<std::string> argv = {tc.invocation.string(), "--version"};
    auto res = runProcess(argv, po);
    if (!res) return std::move(res).error();
    if (!res->succeeded()) {
      return compileError(fmt::format("compiler {} does not answer --version ({})\n  command: {}\n{}",
                                      tc.path.string(), res->describe(), formatCommand(argv), res->err));
    }
    tc.contentHash = *hash;
    tc.version = trim(res->out);
    std::lock_guard<std::mutex> lock(memoMutex());
    memo()[id] = Identity{tc.contentHash, tc.version};
  }
  if (tc.version.find("clang") != std::string::npos) {
    tc.family = CompilerFamily::Clang;
  } else if (tc.version.find("Free Software Foundation") != std::string::npos ||
             tc.version.find("g++") != std::string::npos || tc.version.find("gcc") != std::string::npos) {
    tc.family = CompilerFamily::Gcc;
  }
  return tc;
}

Expected<Toolchain> findToolchain(std::string_view target, std::string_view compiler) {
  ToolchainRequest r;
  r.target = std::string(target);
  r.compiler = std::string(compiler);
  return findToolchain(r);
}

}  // namespace sk
