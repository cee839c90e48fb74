// Code shared by sk-compile and sk-cache: exit codes, one-line error
// reporting, human-readable units, a small text-table printer, the trust
// check of a cache directory, and the replay both tools perform (compile an
// op list fused and unfused, run both from identical buffers, compare every
// buffer bit-for-bit, time them).
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "superkernel/session/BufferSet.h"
#include "superkernel/session/Session.h"
#include "superkernel/support/Error.h"

namespace sk::tools {

// DESIGN section 7 (normative for sk-compile; sk-cache uses the same numbers
// where they mean the same thing).
enum ExitCode : int {
  kExitOk = 0,
  kExitMismatch = 1,        // fused and unfused differ (sk-cache verify: any problem)
  kExitBadInput = 2,        // op list, options, arguments
  kExitCompileFailure = 3,  // compiler missing or failed, link failure
  kExitRuntimeFailure = 4,  // a wait timed out, a kernel reported an error, I/O
};

/// "sk-compile: error: <message>" on stderr, then a hint line ("  hint: ...")
/// when the message matches a known situation (no compiler, a wait that
/// timed out, an untrusted cache directory). Multi-line messages (compiler
/// diagnostics) are printed as they are, after the first line.
void printError(std::string_view tool, const Error& error);
/// The hint printError would add, "" if none.
std::string hintFor(const Error& error);

/// "812 ns", "12.3 us", "4.56 ms", "1.23 s".
std::string formatSeconds(double seconds);
double toSeconds(std::chrono::nanoseconds d);

/// Left/right aligned columns; the last column is never padded (free text).
class Table {
 public:
  explicit Table(std::vector<std::string> header, std::string rightAligned = "");
  void add(std::vector<std::string> row);
  size_t rows() const { return rows_.size(); }
  /// Each line starts with `indent`.
  std::string str(std::string_view indent = "  ") const;

 private:
  std::vector<std::string> header_;
  std::string right_;  // one char per column: 'r' = right aligned
  std::vector<std::vector<std::string>> rows_;
};

/// Kernel sources and init files made absolute (against list.baseDir), so
/// the op list the Session stores in the cache manifest replays from any
/// directory (sk-cache verify). Keys do not change: they hash source bytes,
/// not path spellings.
void makePathsAbsolute(OpList& list);

/// Fused and unfused, run once each from identical initial buffers.
struct Replay {
  BufferSet fused;                          // the fused plan's buffers after one run
  BufferSet unfused;
  std::optional<BufferMismatch> mismatch;   // nullopt: bit-identical
  uint64_t bytesCompared = 0;
};
/// Creates the buffers once and clones them, runs `fused` then `unfused`,
/// compares every buffer. A run failure is a Runtime error naming which run.
Expected<Replay> runAndCompare(Session& session, CompiledPlan& fused, CompiledPlan& unfused);

struct Timing {
  std::vector<double> fusedSeconds, unfusedSeconds;  // one per repetition
  double fusedMedian = 0, unfusedMedian = 0;
};
/// `warmups` untimed runs of each, then `repeat` timed runs, alternating
/// fused and unfused so that a load change on a shared machine hits both.
Expected<Timing> timeRuns(Session& session, CompiledPlan& fused, BufferSet& fusedBuffers, CompiledPlan& unfused,
                          BufferSet& unfusedBuffers, int warmups, int repeat);

double median(std::vector<double> v);

/// Sum of the preload-code bytes the plan's steps prefetch.
uint64_t preloadBytesOf(const SuperKernelPlan& step, const FusionPlan& plan);

/// Run a tool's main so that no exception escapes as a crash: anything
/// unexpected becomes one "internal error" line and exit 4.
int guardedMain(const char* tool, int (*realMain)(int, char**), int argc, char** argv);

}  // namespace sk::tools
