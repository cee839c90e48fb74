// Nothing hangs (issue 15): a kernel that never returns, a compiler that
// never finishes, an interrupt during a cold compile, and a full disk, each
// through the real tools with short limits.
#include <dirent.h>
#include <sys/mount.h>

#include <random>
#include <thread>

#include "ToolTestUtil.h"

namespace sk::tooltest {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;
using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// hang.json with x all zeros: the same kernels and keys, but nothing hangs.
// Kernel paths made absolute so the copy can live anywhere.
std::string harmlessHangList(const TempDir& dir) {
  std::string text = readFile(dataFile("hang.json"));
  auto replace = [&](const std::string& from, const std::string& to) {
    const size_t p = text.find(from);
    EXPECT_NE(p, std::string::npos) << from;
    if (p != std::string::npos) text.replace(p, from.size(), to);
  };
  replace(R"("x": {"dtype": "f32", "shape": [2], "init": "ones"})", R"("x": {"dtype": "f32", "shape": [2], "init": "zeros"})");
  replace("\"kernels/hang.cpp\"", "\"" + dataFile("kernels/hang.cpp") + "\"");
  replace("\"../../../examples/seed/kernels/add.cpp\"", "\"" + (sourceRoot() / "examples/seed/kernels/add.cpp").string() + "\"");
  const std::string path = dir / "harmless.json";
  writeFile(path, text);
  return path;
}

// Processes whose command line contains `marker` (zombies have none).
std::vector<std::string> processesWith(const std::string& marker) {
  std::vector<std::string> found;
  DIR* d = ::opendir("/proc");
  if (!d) return found;
  while (dirent* e = ::readdir(d)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    std::string cmd = readFile(fs::path("/proc") / e->d_name / "cmdline");
    std::replace(cmd.begin(), cmd.end(), '\0', ' ');
    if (cmd.find(marker) != std::string::npos) found.push_back(std::string(e->d_name) + ": " + cmd);
  }
  ::closedir(d);
  return found;
}

// A "compiler" that answers --version at once and otherwise sleeps forever,
// with a child of its own (so a kill of the shell alone would leave one).
// The sleep length doubles as a marker for the process table.
struct SleepingCompiler {
  std::string path, marker;
  explicit SleepingCompiler(const TempDir& dir) {
    std::mt19937 rng(std::random_device{}());
    marker = std::to_string(700000 + rng() % 100000);
    path = dir / "sleepy-c++";
    writeFile(path, "#!/bin/sh\n"
                    "case \"$1\" in --version) echo 'clang version 99.0 (a test compiler that never finishes)'; exit 0;; esac\n"
                    "sleep " + marker + " &\nsleep " + marker + "\n");
    fs::permissions(path, fs::perms::owner_all);
  }
  // SIGKILL is delivered asynchronously: a killed process may still be on
  // its way out when the tool returns, so allow it a moment (a leak stays).
  std::vector<std::string> left() const {
    const auto t0 = Clock::now();
    std::vector<std::string> found = processesWith("sleep " + marker);
    while (!found.empty() && secondsSince(t0) < 2.0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      found = processesWith("sleep " + marker);
    }
    return found;
  }
  bool running() const { return !processesWith("sleep " + marker).empty(); }
};

TEST(Stall, NeverReturningKernelIsReportedWithOpAndBlockAndExits4) {
  TempDir dir, cache;
  // Warm every key with the harmless twin, so the timed run only loads.
  Result warm = run({kCompile, harmlessHangList(dir), "--run", "--repeat", "1", "--workers", "2", "--cache-dir",
                     cache.path().string()});
  ASSERT_EQ(warm.code, 0) << warm.all();
  const auto t0 = Clock::now();
  Spawn s;
  s.argv = {kCompile, dataFile("hang.json"), "--run", "--repeat", "1", "--workers", "2", "--cache-dir",
            cache.path().string()};
  s.env = {{"SK_RUN_TIMEOUT_MS", std::string("1000")}};
  s.timeoutSec = 30;
  Result r = run(s);
  const double elapsed = secondsSince(t0);
  ASSERT_FALSE(r.timedOut) << r.all();
  EXPECT_EQ(r.code, 4) << r.all();
  EXPECT_THAT(r.err, HasSubstr("(SK_RUN_TIMEOUT_MS=1000)"));
  EXPECT_THAT(r.err, HasSubstr("op 1 \"hang_1\" block 1"));
  EXPECT_THAT(r.err, HasSubstr("SuperKernel sk1"));
  // Reported within limit + 1 s of the last progress (the watchdog's own
  // latency, what the report states) ...
  const std::string tag = "launch watchdog: no progress for ";
  const size_t at = r.err.find(tag);
  ASSERT_NE(at, std::string::npos) << r.err;
  const double stalled = std::stod(r.err.substr(at + tag.size()));
  EXPECT_GE(stalled, 1.0);
  EXPECT_LE(stalled, 1.0 + 1.0) << r.err;
  // ... and the whole process, which only loads from the warm cache, ends.
  // A hang guard, not a timing claim: without the watchdog it never ends.
  EXPECT_LT(elapsed, 1.0 + 1.0 + 15.0) << r.all();
  // The option does the same as the variable.
  // The plan report is still printed after a watchdog stop, as after any later failure (docs/CLI.md).
  EXPECT_THAT(r.out, HasSubstr("Fusion:"));
  // The option does the same as the variable, and the report names the option's limit, not the variable.
  r = run({kCompile, dataFile("hang.json"), "--run", "--workers", "2", "--run-timeout", "500", "--cache-dir",
           cache.path().string()});
  EXPECT_EQ(r.code, 4) << r.all();
  EXPECT_THAT(r.err, HasSubstr("(limit 500 ms set by the caller)"));
  EXPECT_THAT(r.err, Not(HasSubstr("SK_RUN_TIMEOUT_MS=500")));
}

// --json "is printed on failure too, with "ok": false" (docs/CLI.md): the hang, which ends the process from
// the watchdog thread, included.
TEST(Stall, JsonReportSurvivesAWatchdogStop) {
  TempDir dir, cache;
  Result warm = run({kCompile, harmlessHangList(dir), "--run", "--repeat", "1", "--workers", "2", "--cache-dir",
                     cache.path().string()});
  ASSERT_EQ(warm.code, 0) << warm.all();
  Spawn s;
  s.argv = {kCompile, dataFile("hang.json"), "--run", "--json", "--workers", "2", "--run-timeout", "1000",
            "--cache-dir", cache.path().string()};
  s.timeoutSec = 60;
  Result r = run(s);
  ASSERT_FALSE(r.timedOut) << r.all();
  EXPECT_EQ(r.code, 4) << r.all();
  nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << "stdout is not one JSON object:\n" << r.out;
  EXPECT_EQ(j["ok"], false);
  EXPECT_EQ(j["exit_code"], 4);
  EXPECT_EQ(j["error"]["kind"], "runtime error");
  EXPECT_THAT(j["error"]["message"].get<std::string>(), HasSubstr("launch watchdog: no progress"));
  EXPECT_THAT(j["error"]["message"].get<std::string>(), HasSubstr("op 1 \"hang_1\" block 1"));
  EXPECT_EQ(j["plan"]["superkernels"], 1);
  EXPECT_THAT(r.err, HasSubstr("sk-compile: error: launch watchdog"));
}

TEST(Stall, MalformedTimeoutVariablesAreBadInput) {
  TempDir cache;
  for (auto [var, value] : {std::pair{"SK_RUN_TIMEOUT_MS", "soon"}, std::pair{"SK_COMPILE_TIMEOUT_S", "10,"},
                            std::pair{"SK_COMPILE_TIMEOUT_S", "0"}}) {
    Result r = run({kCompile, seedList(), "--cache-dir", cache.path().string()}, {{var, std::string(value)}});
    EXPECT_EQ(r.code, 2) << var << "=" << value << "\n" << r.all();
    EXPECT_THAT(r.err, HasSubstr(var));
  }
}

TEST(Stall, VerifyReportsAHungEntryAndReplaysTheRest) {
  TempDir cache;
  const std::string dir = cache.path().string();
  // An entry whose stored op list hangs when replayed, and a healthy one.
  ASSERT_EQ(run({kCompile, dataFile("hang.json"), "--workers", "2", "--cache-dir", dir}).code, 0);
  ASSERT_EQ(run({kCompile, seedList(), "--workers", "2", "--cache-dir", dir}).code, 0);
  Spawn s;
  s.argv = {kCache, "verify", "--json", "--cache-dir", dir};
  s.env = {{"SK_RUN_TIMEOUT_MS", std::string("1000")}};
  s.timeoutSec = 120;
  Result r = run(s);
  ASSERT_FALSE(r.timedOut) << r.all();
  EXPECT_EQ(r.code, 1) << r.all();
  json j = json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  std::map<std::string, std::string> results;
  for (const json& rep : j["replays"]) results[rep.value("result", "")] += rep.dump();
  EXPECT_EQ(results.count("identical"), 1u) << j.dump(2);     // the seed still replayed
  EXPECT_EQ(results.count("replay_failed"), 1u) << j.dump(2);
  bool named = false;
  for (const json& it : j["items"]) {
    if (it["status"] == "replay_failed") named = it["problem"].get<std::string>().find("\"hang_1\" block 1") != std::string::npos;
  }
  EXPECT_TRUE(named) << j.dump(2);
  EXPECT_EQ(j["counts"]["ok"], j["entries"].get<size_t>() - 1) << j.dump(2);
}

TEST(Stall, SleepingCompilerIsKilledWithEveryChildAndExits3) {
  TempDir dir, cache;
  SleepingCompiler cc(dir);
  const auto t0 = Clock::now();
  Spawn s;
  s.argv = {kCompile, seedList(), "--workers", "2", "--cache-dir", cache.path().string()};
  s.env = {{"SK_CXX", cc.path}, {"SK_COMPILE_TIMEOUT_S", std::string("2")}};
  s.timeoutSec = 60;
  Result r = run(s);
  const double elapsed = secondsSince(t0);
  ASSERT_FALSE(r.timedOut) << r.all();
  EXPECT_EQ(r.code, 3) << r.all();
  EXPECT_THAT(r.err, HasSubstr("SK_COMPILE_TIMEOUT_S"));
  EXPECT_THAT(r.err, HasSubstr("sleepy-c++"));  // the command line is shown
  EXPECT_LT(elapsed, 2.0 + 15.0) << r.all();  // hang guard: the sleeping compiler never returns by itself
  EXPECT_THAT(cc.left(), ::testing::IsEmpty());
}

TEST(Stall, CompilerThatHangsOnVersionIsBoundedToo) {
  TempDir dir, cache;
  std::mt19937 rng(std::random_device{}());
  const std::string marker = std::to_string(800000 + rng() % 100000);
  const std::string cc = dir / "mute-c++";
  writeFile(cc, "#!/bin/sh\nsleep " + marker + "\n");
  fs::permissions(cc, fs::perms::owner_all);
  const auto t0 = Clock::now();
  Spawn s;
  s.argv = {kCompile, seedList(), "--workers", "2", "--cache-dir", cache.path().string()};
  s.env = {{"SK_CXX", cc}, {"SK_COMPILE_TIMEOUT_S", std::string("1")}};
  s.timeoutSec = 60;
  Result r = run(s);
  ASSERT_FALSE(r.timedOut) << r.all();
  EXPECT_EQ(r.code, 3) << r.all();
  EXPECT_THAT(r.err, HasSubstr("--version"));
  EXPECT_LT(secondsSince(t0), 1.0 + 15.0) << r.all();  // a hang guard under the old fixed 60 s
  const auto t1 = Clock::now();
  while (!processesWith("sleep " + marker).empty() && secondsSince(t1) < 2.0)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_THAT(processesWith("sleep " + marker), ::testing::IsEmpty());
}

TEST(Stall, OverallDeadlineBoundsManyHungCompiles) {
  // 7+ kernels on 2 jobs: per-compile limits alone would take ceil(n/2) x 2 s;
  // the overall deadline (and all-or-nothing cancel) ends it at once.
  TempDir dir, cache;
  SleepingCompiler cc(dir);
  const auto t0 = Clock::now();
  Spawn s;
  s.argv = {kCompile, (sourceRoot() / "examples/decode_layer/decode_layer.json").string(), "--jobs", "2",
            "--cache-dir", cache.path().string()};
  s.env = {{"SK_CXX", cc.path}, {"SK_COMPILE_TIMEOUT_S", std::string("2,2")}};
  s.timeoutSec = 60;
  Result r = run(s);
  ASSERT_FALSE(r.timedOut) << r.all();
  EXPECT_EQ(r.code, 3) << r.all();
  // Per-compile limits alone take about 20 s here (19 variants, 2 jobs, 2 s each); the bound is a hang guard
  // that still tells the overall deadline from them, and "cancelled" says which limit ended it.
  EXPECT_LT(secondsSince(t0), 2.0 + 15.0) << r.all();
  EXPECT_THAT(r.err, HasSubstr("cancelled"));
  EXPECT_THAT(cc.left(), ::testing::IsEmpty());
}

TEST(Stall, SigtermDuringAColdCompileLeavesNoChildAndTheNextRunIsClean) {
  TempDir dir, cache;
  SleepingCompiler cc(dir);
  // Start sk-compile without waiting for it.
  std::vector<std::string> args = {kCompile, seedList(), "--workers", "2", "--cache-dir", cache.path().string()};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> envs;
  for (char** e = environ; *e; ++e)
    if (std::string(*e).rfind("SK_", 0) != 0) envs.push_back(*e);
  envs.push_back("SK_CXX=" + cc.path);
  envs.push_back("SK_LOG_LEVEL=warn");
  std::vector<char*> envp;
  for (auto& e : envs) envp.push_back(e.data());
  envp.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  pid_t pid = -1;
  ASSERT_EQ(posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), envp.data()), 0);
  posix_spawn_file_actions_destroy(&fa);
  // Wait until the compiler runs (its sleep is in the process table).
  const auto t0 = Clock::now();
  while (!cc.running() && secondsSince(t0) < 30) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_TRUE(cc.running()) << "the compiler never started";
  ASSERT_EQ(::kill(pid, SIGTERM), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status)) << status;
  EXPECT_EQ(WTERMSIG(status), SIGTERM);
  EXPECT_THAT(cc.left(), ::testing::IsEmpty());
  // The killed run's staging directory is still there; the next run (a real
  // compiler) removes it and builds normally.
  size_t leftover = 0;
  std::error_code ec;
  for (auto& e : fs::directory_iterator(cache.path() / "tmp", ec)) leftover += e.is_directory() ? 1 : 0;
  EXPECT_GE(leftover, 1u);
  Result next = run({kCompile, seedList(), "--run", "--repeat", "1", "--workers", "2", "--cache-dir",
                     cache.path().string()});
  ASSERT_EQ(next.code, 0) << next.all();
  EXPECT_TRUE(fs::is_empty(cache.path() / "tmp", ec)) << "stale staging directories were not removed";
}

// ---- full disk ----------------------------------------------------------------

// A tmpfs of `bytes` mounted on `dir` for the scope (needs CAP_SYS_ADMIN).
class SmallDisk {
 public:
  SmallDisk(const fs::path& dir, uint64_t bytes) : dir_(dir) {
    fs::create_directories(dir);
    const std::string opts = "size=" + std::to_string(bytes) + ",mode=0700";
    mounted_ = ::mount("tmpfs", dir.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, opts.c_str()) == 0;
    if (!mounted_) error_ = std::strerror(errno);
  }
  ~SmallDisk() {
    if (mounted_) ::umount2(dir_.c_str(), MNT_DETACH);
  }
  bool mounted() const { return mounted_; }
  const std::string& error() const { return error_; }

 private:
  fs::path dir_;
  bool mounted_ = false;
  std::string error_;
};

TEST(Stall, FullCacheDiskAtSeveralFreeSizesFallsBackToAPrivateCache) {
  TempDir dir;
  {
    SmallDisk probe(dir.path() / "probe", 4096);
    if (!probe.mounted())
      GTEST_SKIP() << "cannot mount a small tmpfs here (" << probe.error()
                   << "; needs root or CAP_SYS_ADMIN): the full-disk behaviour is not tested";
  }
  // From nothing free to more than the seed's cold build needs (fused +
  // unfused reference: ~6 objects and shared objects plus scratch files).
  for (uint64_t kib : {4, 16, 64, 256, 4096}) {
    SCOPED_TRACE(std::to_string(kib) + " KiB");
    const fs::path mnt = dir.path() / ("disk" + std::to_string(kib));
    SmallDisk disk(mnt, kib * 1024);
    ASSERT_TRUE(disk.mounted()) << disk.error();
    const fs::path tmp = dir.path() / ("tmp" + std::to_string(kib));
    fs::create_directories(tmp);
    Result r = run({kCompile, seedList(), "--run", "--repeat", "1", "--workers", "2", "--json", "--cache-dir",
                    (mnt / "cache").string()},
                   {{"TMPDIR", tmp.string()}});
    // The documented behaviour: the build never fails for a full cache disk
    // while TMPDIR has room; the fallback is noted (and warned once).
    ASSERT_EQ(r.code, 0) << r.all();
    json j = json::parse(r.out, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << r.out;
    EXPECT_TRUE(j["run"]["identical"].get<bool>());
    const std::string notes = j.value("notes", json::array()).dump();
    const bool fellBack = notes.find("ran out of space") != std::string::npos;
    if (kib <= 16) {
      EXPECT_TRUE(fellBack) << r.all();
    }
    if (kib >= 4096) {
      EXPECT_FALSE(fellBack) << r.all();
    }
    if (fellBack) {
      size_t warnings = 0;
      for (size_t p = r.err.find("no space left"); p != std::string::npos; p = r.err.find("no space left", p + 1)) ++warnings;
      EXPECT_EQ(warnings, 1u) << r.err;
    }
    // Nothing of the private cache is left behind in TMPDIR.
    std::error_code ec;
    EXPECT_TRUE(fs::is_empty(tmp, ec)) << tmp;
  }
}

TEST(Stall, NoSpaceAnywhereIsOneIoErrorExit4) {
  TempDir dir;
  SmallDisk cacheDisk(dir.path() / "cache-disk", 8 * 1024), tmpDisk(dir.path() / "tmp-disk", 8 * 1024);
  if (!cacheDisk.mounted() || !tmpDisk.mounted())
    GTEST_SKIP() << "cannot mount a small tmpfs here (" << cacheDisk.error() << tmpDisk.error() << ")";
  Result r = run({kCompile, seedList(), "--workers", "2", "--cache-dir", (dir.path() / "cache-disk/c").string()},
                 {{"TMPDIR", (dir.path() / "tmp-disk").string()}});
  EXPECT_EQ(r.code, 4) << r.all();
  EXPECT_THAT(r.err, HasSubstr("no space left on device"));
  EXPECT_THAT(r.err, HasSubstr("TMPDIR"));
}

}  // namespace
}  // namespace sk::tooltest

namespace sk::tooltest {
namespace {

TEST(U64Scalar, MaxValueReachesTheKernel) {
  TempDir cache, dump;
  Result r = run({kCompile, dataFile("u64_max.json"), "--run", "--repeat", "1", "--workers", "2", "--dump",
                  dump.path().string(), "--cache-dir", cache.path().string()});
  ASSERT_EQ(r.code, 0) << r.all();
  const std::string z = readFile(dump.path() / "z.bin");
  ASSERT_EQ(z.size(), 2 * sizeof(float));
  float v[2];
  std::memcpy(v, z.data(), sizeof v);
  EXPECT_EQ(v[0], 1.0f);
  EXPECT_EQ(v[1], 1.0f);
}

}  // namespace
}  // namespace sk::tooltest
