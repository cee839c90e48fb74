// A real redis-server for the remote-cache tests: started on a free loopback
// port in a private temp dir (no persistence), stopped on destruction. Tests
// skip (with the reason) only when no redis-server binary can be started;
// CI installs one (scripts/setup.sh). $SK_REDIS_SERVER overrides the binary.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "TestUtil.h"
#include "cache/remote/RedisClient.h"

namespace sk::test {

class RedisServer {
 public:
  explicit RedisServer(std::vector<std::string> extraArgs = {}) : dir_("redis"), extra_(std::move(extraArgs)) {
    binary_ = findBinary();
    if (binary_.empty()) {
      reason_ = "redis-server not found (install it: scripts/setup.sh, or set SK_REDIS_SERVER)";
      return;
    }
    for (int attempt = 0; attempt < 5 && pid_ <= 0; ++attempt) {
      port_ = freePort();
      if (port_ <= 0) continue;
      if (!start()) pid_ = -1;
    }
    if (pid_ <= 0 && reason_.empty()) reason_ = "redis-server did not start (see " + (dir_ / "redis.log").string() + ")";
  }
  ~RedisServer() { stop(); }
  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;

  bool ok() const { return pid_ > 0; }
  const std::string& reason() const { return reason_; }
  int port() const { return port_; }
  std::string url(int db = 0) const { return fmt::format("redis://127.0.0.1:{}/{}", port_, db); }

  /// (Re)start on the same port; true once it answers PING.
  bool start() {
    std::vector<std::string> argv{binary_, "--port", std::to_string(port_), "--bind", "127.0.0.1",
                                  "--save", "", "--appendonly", "no", "--dir", dir_.path().string(),
                                  "--logfile", (dir_ / "redis.log").string(), "--daemonize", "no"};
    argv.insert(argv.end(), extra_.begin(), extra_.end());
    pid_ = spawnAsync(argv);
    if (pid_ <= 0) return false;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < deadline) {
      int st = 0;
      if (::waitpid(pid_, &st, WNOHANG) == pid_) {  // exited (port taken?)
        pid_ = -1;
        return false;
      }
      if (pingOk()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    kill();
    return false;
  }
  /// SIGKILL and reap (the "server died" fault).
  void kill() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGCONT);
    ::kill(pid_, SIGKILL);
    waitChild(pid_);
    pid_ = -1;
  }
  void stop() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGCONT);
    ::kill(pid_, SIGTERM);
    for (int i = 0; i < 300; ++i) {
      int st = 0;
      if (::waitpid(pid_, &st, WNOHANG) == pid_) {
        pid_ = -1;
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    kill();
  }
  /// SIGSTOP / SIGCONT: a server that accepts connections but never answers.
  void pause() { ::kill(pid_, SIGSTOP); }
  void resume() { ::kill(pid_, SIGCONT); }

  /// Run one command on a fresh connection (test setup and inspection).
  remote::RedisReply cmd(const std::vector<std::string>& args, int db = 0) const {
    remote::RedisUrl u;
    u.host = "127.0.0.1";
    u.port = port_;
    u.db = db;
    u.password = password_;
    remote::RedisClient c(u, std::chrono::milliseconds(2000));
    std::vector<std::string_view> argv(args.begin(), args.end());
    remote::RedisReply r;
    if (auto f = c.command(argv, r)) {
      r.type = remote::RedisReply::Type::Error;
      r.str = f->message;
    }
    return r;
  }
  /// For servers started with --requirepass (used by cmd()).
  void setPassword(std::string pw) { password_ = std::move(pw); }

 private:
  static std::string findBinary() {
    if (const char* v = std::getenv("SK_REDIS_SERVER"); v && *v) return v;
    std::vector<std::string> dirs;
    if (const char* p = std::getenv("PATH")) {
      std::string s = p;
      size_t pos = 0;
      while (pos <= s.size()) {
        size_t c = s.find(':', pos);
        if (c == std::string::npos) c = s.size();
        dirs.push_back(s.substr(pos, c - pos));
        pos = c + 1;
      }
    }
    dirs.push_back("/usr/bin");
    dirs.push_back("/usr/sbin");
    for (const auto& d : dirs) {
      std::string cand = d + "/redis-server";
      if (!d.empty() && ::access(cand.c_str(), X_OK) == 0) return cand;
    }
    return {};
  }
  // Ask the kernel for a free loopback port (a small race with other
  // processes is handled by retrying with another port).
  static int freePort() {
    int s = ::socket(AF_INET, SOCK_STREAM, 0);
    if (s < 0) return -1;
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    socklen_t len = sizeof a;
    int port = -1;
    if (::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
        ::getsockname(s, reinterpret_cast<sockaddr*>(&a), &len) == 0)
      port = ntohs(a.sin_port);
    ::close(s);
    return port;
  }
  bool pingOk() const {
    auto r = cmd({"PING"});
    return r.str == "PONG" || r.str.find("NOAUTH") != std::string::npos;
  }

  TempDir dir_;
  std::vector<std::string> extra_;
  std::string binary_, reason_;
  std::optional<std::string> password_;
  int port_ = -1;
  pid_t pid_ = -1;
};

#define SK_REQUIRE_REDIS(server)                                  \
  do {                                                            \
    if (!(server).ok()) GTEST_SKIP() << (server).reason();        \
  } while (0)

}  // namespace sk::test
