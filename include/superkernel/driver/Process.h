// Spawning compilers: argv only (posix_spawn, never a shell), stdout/stderr
// captured, a wall-clock timeout that kills the whole process group, exit
// status. Thread-safe: many compiles run at once from worker threads.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "superkernel/support/Error.h"

namespace sk {

struct ProcessOptions {
  /// Kill the process group (SIGKILL) after this long; 0 = no limit. The
  /// calling thread's CompileBudget (Deadline.h), if any, bounds it further
  /// and can cancel it.
  std::chrono::milliseconds timeout{0};
  /// On a timeout or cancel, SIGTERM the group first and SIGKILL only after
  /// this grace (0: SIGKILL at once). For children that have children of
  /// their own in other process groups (sk-cache's replay processes): their
  /// SIGTERM handler takes those down first.
  std::chrono::milliseconds terminateGrace{0};
  /// Working directory of the child; empty = inherit.
  std::filesystem::path cwd;
};

struct ProcessResult {
  int exitCode = -1;        // valid when !signaled && !timedOut
  int signal = 0;           // terminating signal, 0 if it exited
  bool timedOut = false;
  bool overallDeadline = false;  // timedOut by the CompileBudget's deadline, not `timeout`
  bool cancelled = false;        // killed because its CompileBudget was cancelled
  std::string cancelReason;
  std::string out;          // captured stdout
  std::string err;          // captured stderr
  std::chrono::milliseconds elapsed{0};

  bool succeeded() const { return !timedOut && !cancelled && signal == 0 && exitCode == 0; }
  /// "exit code 1" / "killed by signal 9" / "timed out after 300 s" /
  /// "stopped at the overall compile deadline ..." / "cancelled: ...".
  std::string describe() const;
};

/// Run argv[0] (a path, or a name looked up on PATH) with argv. The returned
/// Error (ErrorKind::Compile) covers only "could not start" (or a budget that
/// was already spent or cancelled); a child that ran and failed is a
/// ProcessResult with !succeeded(). The child's process group is registered
/// (ChildProcesses.h) until it is reaped.
Expected<ProcessResult> runProcess(const std::vector<std::string>& argv, const ProcessOptions& options = {});

/// POSIX-shell quoting for display (never executed): abc -> abc, a b -> 'a b'.
std::string shellQuote(std::string_view word);
/// argv joined with spaces, each word shellQuote'd.
std::string formatCommand(const std::vector<std::string>& argv);

/// Split a launcher string the way CMake's <LANG>_COMPILER_LAUNCHER is used:
/// on runs of spaces/tabs ("ccache", "distcc -j4" -> {"distcc","-j4"}).
std::vector<std::string> splitLauncher(std::string_view launcher);

/// Find an executable: a name containing '/' is used as is; otherwise each
/// $PATH entry is tried. Returns the resolved real path, or empty if none.
std::filesystem::path findExecutable(std::string_view name);
/// The same lookup without resolving symlinks: the path to spawn. A compiler
/// driver picks its mode from argv[0] (clang++ vs clang), and launcher
/// symlinks (/usr/lib/ccache/clang++) only work under their own name.
std::filesystem::path findExecutableUnresolved(std::string_view name);

}  // namespace sk
