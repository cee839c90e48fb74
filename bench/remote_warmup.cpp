// Fresh-machine warm-up with a warm remote cache tier vs cold
// (docs/PERFORMANCE.md, "Remote cache: fresh-machine warm-up").
//
//   sk_bench_remote_warmup [--ops FILE] [--reps N] [--workers W] [--csv FILE]
//
// Starts its own redis-server on a free loopback port (no persistence, a
// temp dir), writes a secret, and has one "machine" (a child process with
// its own cache dir) compile the op list once: that fills the remote tier.
// Then, per repetition, in an order rotated by the repetition, two fresh
// machines (child processes with new empty cache dirs) warm up:
//   cold   no remote tier: every object and SuperKernel compiled locally
//   warm   the remote tier: verified downloads, published locally, loaded
// Each child times Session::create + compile of the fused plan (what a
// serving process does at warm-up) and reports the cache's counters; the
// parent times the whole process (spawn..exit). Medians with min-max; the
// ratio is taken per repetition. Default op list: the 61-layer decode stack.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "superkernel/superkernel.h"

extern char** environ;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

double ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

pid_t spawn(const std::vector<std::string>& argv, const std::string& outFile) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  if (!outFile.empty()) posix_spawn_file_actions_addopen(&fa, 1, outFile.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  std::vector<char*> a;
  for (const auto& s : argv) a.push_back(const_cast<char*>(s.c_str()));
  a.push_back(nullptr);
  pid_t pid = -1;
  if (posix_spawn(&pid, a[0], &fa, nullptr, a.data(), environ) != 0) pid = -1;
  posix_spawn_file_actions_destroy(&fa);
  return pid;
}

int waitFor(pid_t pid) {
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int freePort() {
  int s = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  int port = -1;
  if (bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 && getsockname(s, reinterpret_cast<sockaddr*>(&a), &len) == 0)
    port = ntohs(a.sin_port);
  close(s);
  return port;
}

std::string findRedis() {
  if (const char* v = std::getenv("SK_REDIS_SERVER"); v && *v) return v;
  for (const char* d : {"/usr/bin", "/usr/sbin", "/usr/local/bin"}) {
    std::string c = std::string(d) + "/redis-server";
    if (access(c.c_str(), X_OK) == 0) return c;
  }
  return {};
}

struct Summary {
  double median = 0, min = 0, max = 0;
};
Summary summarize(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  Summary s;
  s.min = v.front();
  s.max = v.back();
  s.median = v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
  return s;
}

// child --ops F --cache-dir D --workers W [--remote URL --secret FILE]
int child(int argc, char** argv) {
  std::string ops, dir, remote, secret;
  uint32_t workers = 2;
  for (int i = 2; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    if (k == "--ops") ops = v;
    else if (k == "--cache-dir") dir = v;
    else if (k == "--workers") workers = static_cast<uint32_t>(std::stoul(v));
    else if (k == "--remote") remote = v;
    else if (k == "--secret") secret = v;
  }
  auto t0 = Clock::now();
  auto list = sk::loadOpList(ops);
  if (!list) {
    std::fprintf(stderr, "%s\n", list.error().message().c_str());
    return 2;
  }
  sk::SessionOptions so;
  so.workers = workers;
  so.cacheDir = dir;
  if (remote.empty()) {
    so.remoteCache.off = true;
  } else {
    so.remoteCache.url = remote;
    so.remoteCache.secretFile = secret;
  }
  auto s = sk::Session::create(so);
  if (!s) {
    std::fprintf(stderr, "%s\n", s.error().message().c_str());
    return 3;
  }
  auto cp = (*s)->compile(*list);
  if (!cp) {
    std::fprintf(stderr, "%s\n", cp.error().message().c_str());
    return 4;
  }
  const double compileMs = ms(Clock::now() - t0);
  auto st = (*s)->cache()->stats();
  nlohmann::json j{{"ms", compileMs},
                   {"compiles", st->compiles},
                   {"remote_hits", st->remoteHits},
                   {"remote_uploads", st->remoteUploads},
                   {"remote_errors", st->remoteErrors},
                   {"remote_rejected", st->remoteRejected},
                   {"steps", cp->steps.size()}};
  std::printf("%s\n", j.dump().c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "child") return child(argc, argv);
  std::string ops = std::string(SK_SOURCE_ROOT) + "/examples/decode_stack/decode_stack.json";
  int reps = 5;
  uint32_t workers = 2;
  std::string csv;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    if (k == "--ops") ops = v;
    else if (k == "--reps") reps = std::max(3, std::stoi(v));
    else if (k == "--workers") workers = static_cast<uint32_t>(std::stoul(v));
    else if (k == "--csv") csv = v;
    else {
      std::fprintf(stderr, "usage: %s [--ops FILE] [--reps N] [--workers W] [--csv FILE]\n", argv[0]);
      return 2;
    }
  }
  const std::string redis = findRedis();
  if (redis.empty()) {
    std::fprintf(stderr, "redis-server not found (scripts/setup.sh installs it; or set SK_REDIS_SERVER)\n");
    return 2;
  }
  std::string tmpl = (fs::temp_directory_path() / "sk-bench-remote.XXXXXX").string();
  if (!mkdtemp(tmpl.data())) return 4;
  const fs::path work = tmpl;
  const fs::path secret = work / "secret";
  { std::ofstream(secret) << "bench-fleet-secret-0123456789abcdef"; }
  chmod(secret.c_str(), 0600);
  const int port = freePort();
  pid_t server = spawn({redis, "--port", std::to_string(port), "--bind", "127.0.0.1", "--save", "", "--appendonly",
                        "no", "--dir", work.string(), "--logfile", (work / "redis.log").string()},
                       "");
  // Wait until it accepts connections (at most 10 s).
  for (int i = 0; i < 1000; ++i) {
    int sfd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(static_cast<uint16_t>(port));
    const bool up = connect(sfd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
    close(sfd);
    if (up) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const std::string url = fmt::format("redis://127.0.0.1:{}/0", port);
  const std::string self = fs::canonical("/proc/self/exe").string();
  int machine = 0;
  auto runMachine = [&](bool warm, nlohmann::json& out, double& wallMs) -> bool {
    const fs::path dir = work / fmt::format("machine{}", machine++);
    std::vector<std::string> a{self, "child", "--ops", ops, "--cache-dir", dir.string(), "--workers",
                               std::to_string(workers)};
    if (warm) a.insert(a.end(), {"--remote", url, "--secret", secret.string()});
    const fs::path outFile = work / "child.json";
    auto t0 = Clock::now();
    pid_t p = spawn(a, outFile.string());
    int rc = p > 0 ? waitFor(p) : -1;
    wallMs = ms(Clock::now() - t0);
    std::ifstream in(outFile);
    std::string line;
    std::getline(in, line);
    out = nlohmann::json::parse(line, nullptr, false);
    std::error_code ec;
    fs::remove_all(dir, ec);
    return rc == 0 && out.is_object();
  };
  int rc = 0;
  nlohmann::json fill;
  double fillWall = 0;
  if (!runMachine(true, fill, fillWall)) {
    std::fprintf(stderr, "filling the remote tier failed\n");
    rc = 4;
  } else {
    std::printf("remote tier filled by machine A: %s (%.0f ms wall)\n", fill.dump().c_str(), fillWall);
    std::vector<double> coldMs, warmMs, coldWall, warmWall, ratio, ratioWall;
    nlohmann::json lastCold, lastWarm;
    for (int r = 0; r < reps && rc == 0; ++r) {
      double c = 0, w = 0, cw = 0, ww = 0;
      for (int k = 0; k < 2; ++k) {
        const bool warm = ((k + r) % 2) == 1;
        nlohmann::json j;
        double wall = 0;
        if (!runMachine(warm, j, wall)) {
          rc = 4;
          break;
        }
        (warm ? w : c) = j["ms"].get<double>();
        (warm ? ww : cw) = wall;
        (warm ? lastWarm : lastCold) = j;
      }
      if (rc) break;
      coldMs.push_back(c);
      warmMs.push_back(w);
      coldWall.push_back(cw);
      warmWall.push_back(ww);
      ratio.push_back(c / w);
      ratioWall.push_back(cw / ww);
    }
    if (rc == 0) {
      auto row = [](const char* what, const Summary& s, int digits) {
        std::printf("| %s | %.*f (%.*f–%.*f) |\n", what, digits, s.median, digits, s.min, digits, s.max);
      };
      std::printf("\nops: %s, W = %u, %d repetitions (cold/warm interleaved, order rotated)\n", ops.c_str(), workers,
                  reps);
      std::printf("last cold machine: %s\nlast warm machine: %s\n\n", lastCold.dump().c_str(), lastWarm.dump().c_str());
      std::printf("| measurement | median (min–max) |\n|---|---|\n");
      row("cold: Session::create + compile, empty cache, no remote tier (ms)", summarize(coldMs), 0);
      row("warm remote: Session::create + compile, empty cache (ms)", summarize(warmMs), 0);
      row("speedup, compile (cold / warm remote, per repetition)", summarize(ratio), 1);
      row("cold: whole process, spawn..exit (ms)", summarize(coldWall), 0);
      row("warm remote: whole process, spawn..exit (ms)", summarize(warmWall), 0);
      row("speedup, whole process", summarize(ratioWall), 1);
      if (!csv.empty()) {
        std::ofstream o(csv);
        o << "rep,cold_ms,warm_ms,cold_wall_ms,warm_wall_ms\n";
        for (size_t i = 0; i < coldMs.size(); ++i)
          o << fmt::format("{},{:.1f},{:.1f},{:.1f},{:.1f}\n", i, coldMs[i], warmMs[i], coldWall[i], warmWall[i]);
      }
    }
  }
  if (server > 0) {
    kill(server, SIGTERM);
    waitFor(server);
  }
  std::error_code ec;
  fs::remove_all(work, ec);
  return rc;
}
