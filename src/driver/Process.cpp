#include "superkernel/driver/Process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "superkernel/driver/ChildProcesses.h"
#include "superkernel/driver/Deadline.h"

extern char** environ;

namespace sk {
namespace fs = std::filesystem;

std::string ProcessResult::describe() const {
  if (cancelled) return fmt::format("cancelled after {:.1f} s: {}", static_cast<double>(elapsed.count()) / 1000.0, cancelReason);
  if (overallDeadline)
    return fmt::format("stopped at the overall compile deadline after {:.1f} s (SK_COMPILE_TIMEOUT_S)",
                       static_cast<double>(elapsed.count()) / 1000.0);
  if (timedOut) return fmt::format("timed out after {:.1f} s", static_cast<double>(elapsed.count()) / 1000.0);
  if (signal != 0) return fmt::format("killed by signal {} ({})", signal, strsignal(signal));
  return fmt::format("exit code {}", exitCode);
}

std::string shellQuote(std::string_view w) {
  if (w.empty()) return "''";
  bool safe = true;
  for (char c : w) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              std::strchr("@%+=:,./-_", c) != nullptr;
    if (!ok) { safe = false; break; }
  }
  if (safe) return std::string(w);
  std::string out = "'";
  for (char c : w) {
    if (c == '\'') out += "'\\''";
    else out += c;
  }
  out += "'";
  return out;
}

std::string formatCommand(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) {
    if (!out.empty()) out += ' ';
    out += shellQuote(a);
  }
  return out;
}

std::vector<std::string> splitLauncher(std::string_view s) {
  std::vector<std::string> words;
  std::string cur;
  for (char c : s) {
    if (c == ' ' || c == '\t' || c == '\n') {
      if (!cur.empty()) words.push_back(std::move(cur)), cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) words.push_back(std::move(cur));
  return words;
}

static bool isExecutableFile(const fs::path& p) {
  struct stat st;
  if (::stat(p.c_str(), &st) != 0) return false;
  return S_ISREG(st.st_mode) && ::access(p.c_str(), X_OK) == 0;
}

fs::path findExecutable(std::string_view name) {
  fs::path found = findExecutableUnresolved(name);
  if (found.empty()) return {};
  std::error_code ec;
  fs::path r = fs::canonical(found, ec);
  return ec ? fs::path{} : r;
}

fs::path findExecutableUnresolved(std::string_view name) {
  if (name.empty()) return {};
  std::error_code ec;
  auto resolve = [&](const fs::path& p) -> fs::path {
    if (!isExecutableFile(p)) return {};
    return p.lexically_normal();
  };
  if (name.find('/') != std::string_view::npos) return resolve(fs::absolute(fs::path(name), ec));
  const char* path = std::getenv("PATH");
  std::string_view dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  while (true) {
    size_t colon = dirs.find(':');
    std::string_view dir = dirs.substr(0, colon);
    fs::path candidate = fs::path(dir.empty() ? "." : std::string(dir)) / std::string(name);
    if (fs::path r = resolve(candidate); !r.empty()) return r;
    if (colon == std::string_view::npos) break;
    dirs.remove_prefix(colon + 1);
  }
  return {};
}

namespace {
struct Fd {
  int fd = -1;
  Fd() = default;
  explicit Fd(int f) : fd(f) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }
  void reset() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
};
}  // namespace

Expected<ProcessResult> runProcess(const std::vector<std::string>& argv, const ProcessOptions& options) {
  if (argv.empty()) return internalError("runProcess: empty argv");
  int outPipe[2], errPipe[2];
  if (::pipe2(outPipe, O_CLOEXEC) != 0) return compileError(fmt::format("pipe: {}", std::strerror(errno)));
  Fd outR(outPipe[0]), outW(outPipe[1]);
  if (::pipe2(errPipe, O_CLOEXEC) != 0) return compileError(fmt::format("pipe: {}", std::strerror(errno)));
  Fd errR(errPipe[0]), errW(errPipe[1]);

  posix_spawn_file_actions_t fa;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&fa);
  posix_spawnattr_init(&attr);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, outW.fd, 1);
  posix_spawn_file_actions_adddup2(&fa, errW.fd, 2);
  std::string cwd = options.cwd.string();
  if (!cwd.empty()) posix_spawn_file_actions_addchdir_np(&fa, cwd.c_str());
  // Own process group (killed as a whole on timeout); default signal mask
  // and dispositions for the child.
  sigset_t empty, all;
  sigemptyset(&empty);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &empty);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

  std::vector<char*> cargv;
  cargv.reserve(argv.size() + 1);
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);

  // The thread's compile budget: a spent or cancelled one starts nothing.
  const std::shared_ptr<CompileBudget> budget = currentBudget();
  if (budget && budget->cancelled()) {
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    return compileError(fmt::format("not started, cancelled: {}\n  command: {}", budget->reason(), formatCommand(argv)));
  }
  if (budget && budget->expired()) {
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    return compileError(fmt::format("not started: the overall compile deadline of {} s passed "
                                    "(SK_COMPILE_TIMEOUT_S)\n  command: {}",
                                    std::chrono::duration_cast<std::chrono::seconds>(budget->total()).count(),
                                    formatCommand(argv)));
  }
  auto start = std::chrono::steady_clock::now();
  pid_t pid = -1;
  int rc = ::posix_spawnp(&pid, cargv[0], &fa, &attr, cargv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    return compileError(fmt::format("cannot run '{}': {}\n  command: {}", argv[0], std::strerror(rc),
                                    formatCommand(argv)));
  }
  registerChildGroup(pid);  // its own group (setpgroup 0): pgid == pid
  outW.reset();
  errW.reset();

  ProcessResult result;
  bool limited = options.timeout.count() > 0;
  auto deadline = start + options.timeout;
  bool byBudget = false;
  if (budget && (!limited || budget->deadline() < deadline)) {
    limited = true;
    deadline = budget->deadline();
    byBudget = true;
  }
  bool killed = false;
  char buf[65536];
  while (outR.fd >= 0 || errR.fd >= 0) {
    pollfd pfd[2];
    int n = 0;
    if (outR.fd >= 0) pfd[n++] = {outR.fd, POLLIN, 0};
    if (errR.fd >= 0) pfd[n++] = {errR.fd, POLLIN, 0};
    int waitMs = -1;
    if (limited && !killed) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      waitMs = static_cast<int>(std::max<int64_t>(0, left.count()));
    }
    // A budget can be cancelled from another thread (a sibling compile
    // failed): look at it every 50 ms.
    if (budget) waitMs = waitMs < 0 ? 50 : std::min(waitMs, 50);
    int pr = ::poll(pfd, static_cast<nfds_t>(n), waitMs);
    if (pr < 0) {
      if (errno == EINTR) continue;
      break;
    }
    const bool cancelNow = budget && budget->cancelled();
    // Checked after every poll, not only idle ones: a child that keeps
    // writing must not outlive its deadline either.
    if (cancelNow || (limited && std::chrono::steady_clock::now() >= deadline)) {
      if (options.terminateGrace.count() > 0) {
        ::kill(-pid, SIGTERM);
        const auto until = std::chrono::steady_clock::now() + options.terminateGrace;
        siginfo_t si{};
        while (std::chrono::steady_clock::now() < until) {
          si.si_pid = 0;
          if (::waitid(P_PID, static_cast<id_t>(pid), &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == pid) break;
          std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
      }
      ::kill(-pid, SIGKILL);
      ::kill(pid, SIGKILL);
      killed = true;
      if (cancelNow) {
        result.cancelled = true;
        result.cancelReason = budget->reason();
      } else {
        result.timedOut = true;
        result.overallDeadline = byBudget;
      }
      // Grandchildren may keep the pipes open; stop reading.
      break;
    }
    if (pr == 0) continue;
    for (int i = 0; i < n; ++i) {
      if (!(pfd[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t got = ::read(pfd[i].fd, buf, sizeof buf);
      if (got < 0 && errno == EINTR) continue;
      bool isOut = pfd[i].fd == outR.fd;
      if (got <= 0) {
        (isOut ? outR : errR).reset();
      } else {
        (isOut ? result.out : result.err).append(buf, static_cast<size_t>(got));
      }
    }
  }
  // Wait without reaping, forget the group, then reap: while the child is a
  // zombie its pid cannot be reused, so killChildGroups() never hits a
  // stranger's group.
  siginfo_t info{};
  while (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT) < 0 && errno == EINTR) {
  }
  ::kill(-pid, SIGKILL);  // anything left in the group: no process outlives its run
  unregisterChildGroup(pid);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
  if (WIFEXITED(status)) {
    result.exitCode = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.signal = WTERMSIG(status);
  }
  return result;
}

}  // namespace sk
