// Worker placement (runtime/src/Placement.h): SK_CPU_MASK / cpuMask parsing,
// pinning to distinct CPUs, and a co-location detector that samples
// sched_getcpu() in every block of a launch.
#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <set>
#include <thread>
#include <vector>

#include "superkernel/runtime/Executor.h"

namespace {

std::vector<int> allowedCpus() {
  cpu_set_t s;
  CPU_ZERO(&s);
  std::vector<int> out;
  if (sched_getaffinity(0, sizeof(s), &s) != 0) return out;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &s)) out.push_back(c);
  return out;
}

// Each of a launch's blocks spins ~spinUs, sampling sched_getcpu().
struct Samples {
  std::vector<std::vector<int>> cpus;  // per block, in order
};
void sampleBlock(void* arg, const sk_ctx* ctx) {
  auto* s = static_cast<Samples*>(arg);
  auto& v = s->cpus[ctx->block_idx];
  const auto end = std::chrono::steady_clock::now() + std::chrono::microseconds(150);
  while (std::chrono::steady_clock::now() < end) v.push_back(sched_getcpu());
}

struct Detection {
  int launches = 0;
  int colocatedAtStart = 0;  // block 0's first CPU (the caller at launch start) was one block 1 ran on
  int colocatedAny = 0;      // the two blocks' CPU sets intersect at all
  std::set<int> worker1Cpus;
};

// The detector: `launches` launches of 2 blocks (block 0 on the launching
// thread, block 1 on worker 1).
Detection detect(sk::Executor& ex, int launches) {
  Detection d;
  for (int i = 0; i < launches; ++i) {
    Samples s;
    s.cpus.resize(2);
    EXPECT_TRUE(ex.launch(sampleBlock, &s, 2).ok());
    if (s.cpus[0].empty() || s.cpus[1].empty()) continue;
    ++d.launches;
    std::set<int> a(s.cpus[0].begin(), s.cpus[0].end()), b(s.cpus[1].begin(), s.cpus[1].end());
    d.worker1Cpus.insert(b.begin(), b.end());
    if (b.count(s.cpus[0].front())) ++d.colocatedAtStart;
    if (std::any_of(a.begin(), a.end(), [&](int c) { return b.count(c) != 0; })) ++d.colocatedAny;
  }
  return d;
}

TEST(Placement, WorkersPinnedToDistinctCpusByDefault) {
  const auto cpus = allowedCpus();
  if (cpus.size() < 2) GTEST_SKIP() << "needs 2 allowed CPUs";
  ::unsetenv("SK_CPU_MASK");
  sk::Executor ex({2, 5000});
  const sk::PlacementInfo p = ex.placement();
  ASSERT_TRUE(p.pinned) << p.note;
  ASSERT_EQ(p.cpus.size(), 2u);
  EXPECT_NE(p.cpus[0], p.cpus[1]);
  for (int c : p.cpus) EXPECT_TRUE(std::count(cpus.begin(), cpus.end(), c)) << "CPU " << c << " not allowed";
  const Detection d = detect(ex, 200);
  // Worker 1 never leaves its CPU (it is pinned).
  EXPECT_EQ(d.worker1Cpus, std::set<int>{p.cpus[1]});
  // At launch start the caller is never on worker 1's CPU (moved there when found; a
  // preemption in the ns between the check and the first sample could migrate it, hence <= 1).
  EXPECT_LE(d.colocatedAtStart, 1) << "of " << d.launches << " launches; caller moves: " << ex.placement().callerMoves;
  RecordProperty("colocated_any", d.colocatedAny);
  RecordProperty("caller_moves", static_cast<int>(ex.placement().callerMoves));
}

// The detector does detect co-location: every thread confined to one CPU
// (2 workers > 1 allowed CPU: nothing is pinned) shares it in most launches.
TEST(Placement, DetectorSeesForcedColocation) {
  const auto cpus = allowedCpus();
  if (cpus.empty()) GTEST_SKIP();
  Detection d;
  sk::PlacementInfo p;
  std::thread t([&] {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpus[0], &one);
    ASSERT_EQ(pthread_setaffinity_np(pthread_self(), sizeof(one), &one), 0);
    sk::Executor ex({.numWorkers = 2, .waitTimeoutMs = 5000, .cpuMask = ""});  // workers inherit the one-CPU mask
    p = ex.placement();
    d = detect(ex, 50);
  });
  t.join();
  EXPECT_FALSE(p.pinned);
  EXPECT_NE(p.note.find("2 workers but 1 allowed CPU"), std::string::npos) << p.note;
  EXPECT_EQ(d.colocatedAny, d.launches);
  EXPECT_GE(d.colocatedAtStart, d.launches * 9 / 10);
}

TEST(Placement, MaskSelectsCpusAndOffDisables) {
  const auto cpus = allowedCpus();
  if (cpus.size() < 2) GTEST_SKIP() << "needs 2 allowed CPUs";
  const int a = cpus[0], b = cpus[1];
  {
    sk::Executor ex({.numWorkers = 2, .waitTimeoutMs = 5000, .cpuMask = std::to_string(a) + "," + std::to_string(b)});
    EXPECT_TRUE(ex.placement().pinned) << ex.placement().note;
    EXPECT_EQ(ex.placement().cpus, (std::vector<int>{a, b}));
  }
  if (a < 32 && b < 32) {
    char hex[16];
    std::snprintf(hex, sizeof hex, "0x%x", (1u << a) | (1u << b));
    sk::Executor ex({.numWorkers = 2, .waitTimeoutMs = 5000, .cpuMask = hex});
    EXPECT_TRUE(ex.placement().pinned) << hex << ": " << ex.placement().note;
  }
  {
    sk::Executor ex({.numWorkers = 2, .waitTimeoutMs = 5000, .cpuMask = "off"});
    EXPECT_FALSE(ex.placement().pinned);
    EXPECT_NE(ex.placement().note.find("off"), std::string::npos);
  }
  {
    // One allowed CPU in the mask for two workers: not pinned, and said why.
    sk::Executor ex({.numWorkers = 2, .waitTimeoutMs = 5000, .cpuMask = std::to_string(a) + "-" + std::to_string(a)});
    EXPECT_FALSE(ex.placement().pinned);
    EXPECT_NE(ex.placement().note.find("1 allowed CPU"), std::string::npos) << ex.placement().note;
  }
  {
    // SK_CPU_MASK is read when the option is empty.
    ::setenv("SK_CPU_MASK", "off", 1);
    sk::Executor ex({2, 5000});
    EXPECT_FALSE(ex.placement().pinned);
    ::unsetenv("SK_CPU_MASK");
  }
}

TEST(Placement, InvalidMasksAreReportedAndPinNothing) {
  for (const char* bad : {"0xZZ", "0x", "3-1", "1,,2", "-", "1,5000", "0-99999", "x", "0x0", "1;2", " 1"}) {
    SCOPED_TRACE(bad);
    sk::Executor ex({.numWorkers = 1, .waitTimeoutMs = 5000, .cpuMask = bad});
    const sk::PlacementInfo p = ex.placement();
    EXPECT_FALSE(p.pinned);
    EXPECT_NE(p.note.find(std::string("SK_CPU_MASK='") + bad + "'"), std::string::npos) << p.note;
    EXPECT_NE(p.note.find("expected a hex mask"), std::string::npos) << p.note;
    // Still a working pool.
    EXPECT_TRUE(ex.launch([](void*, const sk_ctx*) {}, nullptr, 3).ok());
  }
}

}  // namespace
