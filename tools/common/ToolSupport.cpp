#include "common/ToolSupport.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <new>

#include "superkernel/codegen/Emitter.h"

namespace sk::tools {

namespace fs = std::filesystem;

std::string hintFor(const Error& error) {
  const std::string& m = error.message();
  auto has = [&](std::string_view s) { return m.find(s) != std::string::npos; };
  // Before the compiler rule: "compiler launcher ... not found" names the launcher, not the compiler.
  if (has("SK_COMPILER_LAUNCHER")) {
    return "install the launcher (ccache: apt-get install ccache) or unset SK_COMPILER_LAUNCHER to run the compiler "
           "directly";
  }
  // The host compiler's (SK_CXX): another target's compiler error already says what to install or set
  // (nvcc's variable, CANN's; BuildRecipe::compilerHint), and clang would not help there.
  if (error.kind() == ErrorKind::Compile && has("not found") && has("compiler") && has("SK_CXX")) {
    return "install clang (e.g. apt-get install clang) or point SK_CXX at a C++ compiler, e.g. SK_CXX=g++";
  }
  if (error.kind() == ErrorKind::Compile && has("timed out")) {
    // The driver's per-process limit, not a wait inside a launch.
    return "the compiler was stopped at its time limit: a SuperKernel this large compiles slowly; split it into "
           "smaller scopes in the op list, or try another compiler (SK_CXX=g++)";
  }
  if (has("timed out")) {
    return "a wait outlasted SK_WAIT_TIMEOUT_MS (default 10000 ms): raise it if the kernels are only slow; if they "
           "hang, check each kernel's declared access/partition and retry with --options debug-sync-all=1";
  }
  if (has("not trusted") || has("untrusted")) {
    // Each reason has its own remedy: chmod cannot make a symbolic link or another user's directory trusted.
    if (has("symbolic link")) {
      return "a cache root is never reached through a symbolic link: set SK_CACHE_DIR (or --cache-dir) to the "
             "directory it points to, if that one is yours and private";
    }
    if (has("owned by uid")) {
      return "the cache directory belongs to another user: set SK_CACHE_DIR (or --cache-dir) to a directory of your "
             "own";
    }
    return "the cache directory must be yours and not writable by group/others: chmod 700 it, or set SK_CACHE_DIR "
           "(or --cache-dir) to a private directory";
  }
  return "";
}

void printError(std::string_view tool, const Error& error) {
  // One line that says what went wrong and where (the library's messages
  // carry their context outermost-first); compiler diagnostics follow it
  // verbatim because they are what the user needs to fix the kernel.
  std::string text = error.message();
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  std::fprintf(stderr, "%.*s: error: %s\n", static_cast<int>(tool.size()), tool.data(), text.c_str());
  if (std::string hint = hintFor(error); !hint.empty()) {
    std::fprintf(stderr, "%.*s: hint: %s\n", static_cast<int>(tool.size()), tool.data(), hint.c_str());
  }
  std::fflush(stderr);
}

std::string formatSeconds(double s) {
  if (s < 0) s = 0;
  if (s < 1e-6) return fmt::format("{:.0f} ns", s * 1e9);
  if (s < 1e-3) return fmt::format("{:.1f} us", s * 1e6);
  if (s < 1.0) return fmt::format("{:.2f} ms", s * 1e3);
  return fmt::format("{:.2f} s", s);
}

double toSeconds(std::chrono::nanoseconds d) { return std::chrono::duration<double>(d).count(); }

Table::Table(std::vector<std::string> header, std::string rightAligned)
    : header_(std::move(header)), right_(std::move(rightAligned)) {
  right_.resize(header_.size(), 'l');
}

void Table::add(std::vector<std::string> row) {
  row.resize(header_.size());
  rows_.push_back(std::move(row));
}

std::string Table::str(std::string_view indent) const {
  std::vector<size_t> width(header_.size(), 0);
  auto measure = [&](const std::vector<std::string>& r) {
    for (size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], r[i].size());
  };
  measure(header_);
  for (const auto& r : rows_) measure(r);
  std::string out;
  auto line = [&](const std::vector<std::string>& r) {
    std::string l(indent);
    for (size_t i = 0; i < r.size(); ++i) {
      const bool last = i + 1 == r.size();
      if (right_[i] == 'r') {
        l += std::string(width[i] - r[i].size(), ' ') + r[i];
      } else {
        l += r[i];
        if (!last) l += std::string(width[i] - r[i].size(), ' ');
      }
      if (!last) l += "  ";
    }
    while (!l.empty() && l.back() == ' ') l.pop_back();
    out += l + "\n";
  };
  line(header_);
  for (const auto& r : rows_) line(r);
  return out;
}

void makePathsAbsolute(OpList& list) {
  for (KernelDecl& k : list.kernels) {
    if (!k.builtin.empty()) continue;
    for (auto& [target, source] : k.sources) source = k.sourcePaths.at(target).lexically_normal().string();
    if (k.sourcePath.empty()) continue;
    k.source = k.sourcePath.lexically_normal().string();
  }
  for (BufferDecl& b : list.buffers) {
    if (b.init.kind != BufferInit::Kind::File || b.init.file.empty()) continue;
    fs::path p(b.init.file);
    if (p.is_relative() && !list.baseDir.empty()) b.init.file = (list.baseDir / p).lexically_normal().string();
  }
}

Expected<Replay> runAndCompare(Session& session, CompiledPlan& fused, CompiledPlan& unfused) {
  // One initialization, cloned: "random" init is seeded per buffer name, so
  // two create() calls would agree too, but a clone is cheaper for large
  // weights and leaves no doubt that both runs start from the same bytes.
  auto initial = BufferSet::create(fused.list);
  if (!initial) return std::move(initial).error().context("while creating the buffers");
  auto copy = initial->clone();
  if (!copy) return std::move(copy).error().context("while copying the buffers");
  Replay r;
  r.fused = std::move(*initial);
  r.unfused = std::move(*copy);
  if (Status s = session.run(fused, r.fused); !s) return Error(s.error()).context("fused run");
  if (Status s = session.run(unfused, r.unfused); !s) return Error(s.error()).context("unfused run");
  // The unfused run is the reference: "expected" is its value, "got" the fused one.
  auto diff = r.unfused.compare(r.fused);
  if (!diff) return std::move(diff).error().context("while comparing fused and unfused results");
  r.mismatch = std::move(*diff);
  for (size_t i = 0; i < r.fused.size(); ++i) r.bytesCompared += r.fused.bytes(i);
  return r;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

uint64_t preloadBytesOf(const SuperKernelPlan& step, const FusionPlan& plan) {
  uint64_t total = 0;
  for (const PlannedOp& op : step.ops) {
    if (op.preloadVariant < 0 || static_cast<size_t>(op.preloadVariant) >= plan.variants.size()) continue;
    total += preloadBytes(step.options.preloadCode, plan.variants[static_cast<size_t>(op.preloadVariant)].codeBytes);
  }
  return total;
}

int guardedMain(const char* tool, int (*realMain)(int, char**), int argc, char** argv) {
  try {
    return realMain(argc, argv);
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "%s: error: out of memory\n", tool);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: error: internal error: %s\n", tool, e.what());
  }
  return kExitRuntimeFailure;
}

}  // namespace sk::tools
