// Helpers for the CLI tests: spawn the built sk-compile / sk-cache binaries
// (posix_spawn with argv, no shell), with environment overrides, captured
// stdout/stderr, a kill-on-timeout so a hang fails the test instead of
// blocking the suite, and optionally a pseudo-terminal as stderr (to see the
// progress line that only appears on a terminal).
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

extern char** environ;

namespace sk::tooltest {

namespace fs = std::filesystem;

inline const std::string kCompile = SK_COMPILE_BIN;
inline const std::string kCache = SK_CACHE_BIN;

inline fs::path sourceRoot() { return fs::path(SK_SOURCE_ROOT); }
inline std::string dataFile(const std::string& name) { return (sourceRoot() / "tests/tools/data" / name).string(); }
inline std::string seedList() { return (sourceRoot() / "examples/seed/seed.json").string(); }

struct Result {
  int code = -1;  // exit status; 128 + signal if killed
  bool timedOut = false;
  std::string out, err;
  std::string all() const { return out + err; }
};

struct Spawn {
  std::vector<std::string> argv;
  /// Environment overrides: a value sets, nullopt unsets.
  std::map<std::string, std::optional<std::string>> env;
  bool ptyStderr = false;
  int timeoutSec = 240;
};

inline Result run(const Spawn& s) {
  // Environment: ours, with the overrides applied. Quiet logs by default and
  // no inherited cache/worker settings that would make tests depend on the
  // caller's shell.
  std::map<std::string, std::optional<std::string>> env = {
      {"SK_LOG_LEVEL", std::string("warn")}, {"SK_CACHE_DIR", std::nullopt}, {"SK_NUM_WORKERS", std::nullopt},
      {"SK_WAIT_TIMEOUT_MS", std::nullopt},  {"SK_CACHE_MAX_SIZE", std::nullopt}};
  for (const auto& [k, v] : s.env) env[k] = v;
  std::vector<std::string> envStrings;
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    std::string k = kv.substr(0, kv.find('='));
    if (env.count(k)) continue;
    envStrings.push_back(kv);
  }
  for (const auto& [k, v] : env)
    if (v) envStrings.push_back(k + "=" + *v);
  std::vector<char*> envp, argv;
  for (auto& e : envStrings) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = s.argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  Result r;
  int outPipe[2], errPipe[2] = {-1, -1};
  if (pipe2(outPipe, O_CLOEXEC) != 0) return r;
  int master = -1, slave = -1;
  if (s.ptyStderr) {
    if (openpty(&master, &slave, nullptr, nullptr, nullptr) != 0) return r;
    fcntl(master, F_SETFD, FD_CLOEXEC);
    fcntl(slave, F_SETFD, FD_CLOEXEC);
  } else if (pipe2(errPipe, O_CLOEXEC) != 0) {
    return r;
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, outPipe[1], 1);
  posix_spawn_file_actions_adddup2(&fa, s.ptyStderr ? slave : errPipe[1], 2);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  close(outPipe[1]);
  if (s.ptyStderr) {
    close(slave);
  } else {
    close(errPipe[1]);
  }
  const int errFd = s.ptyStderr ? master : errPipe[0];
  if (rc != 0) {
    close(outPipe[0]);
    close(errFd);
    r.err = "posix_spawn failed: " + std::string(strerror(rc));
    return r;
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(s.timeoutSec);
  struct pollfd fds[2] = {{outPipe[0], POLLIN, 0}, {errFd, POLLIN, 0}};
  std::string* sinks[2] = {&r.out, &r.err};
  int open = 2;
  char buf[65536];
  while (open > 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      r.timedOut = true;
      kill(pid, SIGKILL);
      break;
    }
    int n = poll(fds, 2, static_cast<int>(std::min<long long>(left.count(), 1000)));
    if (n < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t got = read(fds[i].fd, buf, sizeof buf);
      if (got > 0) {
        sinks[i]->append(buf, static_cast<size_t>(got));
      } else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
        // EOF (EIO on a pty master once the child closed the slave).
        fds[i].fd = -1;
        --open;
      }
    }
  }
  close(outPipe[0]);
  close(errFd);
  int status = 0;
  waitpid(pid, &status, 0);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

inline Result run(std::vector<std::string> argv, std::map<std::string, std::optional<std::string>> env = {}) {
  Spawn s;
  s.argv = std::move(argv);
  s.env = std::move(env);
  return run(s);
}

/// A private temporary directory (0700), removed with everything in it.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "sk-tools-test.XXXXXX").string();
    if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    // Tests chmod some dirs to make them untrusted; restore so removal works.
    fs::permissions(path_, fs::perms::owner_all, ec);
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const fs::path& path() const { return path_; }
  std::string operator/(const std::string& rel) const { return (path_ / rel).string(); }

 private:
  fs::path path_;
};

inline std::string readFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void writeFile(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

/// What the warm cache's entries depend on, as a string of paths, sizes and
/// mtimes: the tools, the templates, the runtime sources, the seed example
/// and the compiler. When it changes the template is rebuilt, so a cache
/// full of STALE entries (after a template edit) never reaches a test.
inline std::string warmCacheFingerprint() {
  std::string f;
  auto add = [&](const fs::path& p) {
    std::error_code ec;
    auto t = fs::last_write_time(p, ec);
    auto size = fs::is_regular_file(p, ec) ? fs::file_size(p, ec) : 0;
    f += p.string() + " " + std::to_string(size) + " " + std::to_string(t.time_since_epoch().count()) + "\n";
  };
  add(kCompile);
  for (const char* dir : {"templates", "kernels", "runtime", "examples/seed"}) {
    std::error_code ec;
    std::vector<fs::path> files;
    for (auto& e : fs::recursive_directory_iterator(sourceRoot() / dir, ec))
      if (e.is_regular_file()) files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const auto& p : files) add(p);
  }
  const char* cxx = std::getenv("SK_CXX");
  f += std::string("SK_CXX=") + (cxx ? cxx : "") + "\n";
  for (const char* c : {"/usr/bin/clang++", "/usr/bin/g++"}) {
    std::error_code ec;
    add(fs::canonical(c, ec));
  }
  return f;
}

/// A cache directory already holding the seed example's builds (fused,
/// unfused reference, profiled) for 2 workers, copied from a template that
/// the first test to need it builds once under a lock (tests run as separate
/// processes, in parallel). Copying keeps every test on its own directory
/// while most of them skip the compiler; a stale template (library changed)
/// only means misses, never a wrong result.
inline void fillWarmCache(const fs::path& dest) {
  const fs::path tmpl = fs::path(SK_BINARY_ROOT) / "tests" / "tools-warm-cache";
  const fs::path lockFile = fs::path(SK_BINARY_ROOT) / "tests" / "tools-warm-cache.lock";
  fs::create_directories(lockFile.parent_path());
  int fd = ::open(lockFile.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(flock(fd, LOCK_EX), 0);
  const std::string fingerprint = warmCacheFingerprint();
  if (!fs::exists(tmpl / "READY") || readFile(tmpl / "READY") != fingerprint) {
    std::error_code ec;
    fs::remove_all(tmpl, ec);
    fs::create_directories(tmpl);
    fs::permissions(tmpl, fs::perms::owner_all);
    TempDir scratch;
    Result r = run({kCompile, seedList(), "--run", "--repeat", "1", "--workers", "2", "--cache-dir", tmpl.string(),
                    "--trace", scratch / "t.json"});
    ASSERT_EQ(r.code, 0) << r.all();
    writeFile(tmpl / "READY", fingerprint);
  }
  fs::create_directories(dest);
  fs::permissions(dest, fs::perms::owner_all);
  fs::copy(tmpl / "entries", dest / "entries", fs::copy_options::recursive);
  flock(fd, LOCK_UN);
  ::close(fd);
}

/// The directory of the one complete cache entry whose manifest says
/// metadata.name == name and metadata.fuse == fused (and not profiling).
inline fs::path findEntry(const fs::path& cacheDir, const std::string& name, bool fused) {
  std::error_code ec;
  for (auto& e : fs::recursive_directory_iterator(cacheDir / "entries", ec)) {
    if (e.path().filename() != "manifest.json") continue;
    auto m = nlohmann::json::parse(readFile(e.path()), nullptr, false);
    if (m.is_discarded() || !m.contains("metadata")) continue;
    const auto& meta = m["metadata"];
    if (meta.value("name", "") == name && meta.value("fuse", !fused) == fused &&
        meta.value("options", "").find("profiling=1") == std::string::npos) {
      return e.path().parent_path();
    }
  }
  return {};
}

}  // namespace sk::tooltest
