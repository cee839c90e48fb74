// One CompiledPlan run from 8 threads at once (Session.h, "Thread-safety"):
// every run, each on its own buffers, computes exactly what a run alone
// does. Here (label runtime) so CI's TSan stage checks it: a run that shared
// argument arrays with another would race on them and, with different
// buffers per thread, read or write another thread's memory.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "session/SessionFixture.h"
#include "superkernel/superkernel.h"

namespace sk {
namespace concurrent_run_test {
namespace fs = std::filesystem;

TEST(ConcurrentRun, OnePlanFromEightThreadsGivesTheSingleThreadedResult) {
  SessionOptions o;
  o.workers = 2;
  o.cacheDir = testing::sharedCacheDir();  // the session tests' (tests/session/SessionFixture.h)
  auto session = Session::create(o);
  ASSERT_TRUE(session.ok()) << session.error().message();
  auto list = loadOpList(fs::path(SK_SOURCE_ROOT) / "examples" / "seed" / "seed.json");
  ASSERT_TRUE(list.ok()) << list.error().message();
  auto plan = (*session)->compile(*list);
  ASSERT_TRUE(plan.ok()) << plan.error().message();
  auto initial = BufferSet::create(*list);
  ASSERT_TRUE(initial.ok());
  auto expected = initial->clone();
  ASSERT_TRUE(expected.ok());
  ASSERT_TRUE((*session)->run(*plan, *expected).ok());

  constexpr int kThreads = 8, kRuns = 40;
  std::atomic<int> failures{0}, mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kRuns; ++i) {
        auto bufs = initial->clone();
        // Alternate the two entry points: BufferSet and raw pointers (the C API's and Python's path).
        const bool ok = bufs.ok() && ((t + i) % 2 == 0
                                          ? (*session)->run(*plan, *bufs).ok()
                                          : (*session)->run(*plan, bufs->pointers(), bufs->size()).ok());
        if (!ok) {
          failures.fetch_add(1);
          continue;
        }
        auto diff = bufs->compare(*expected);
        if (!diff.ok() || diff->has_value()) mismatches.fetch_add(1);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(mismatches.load(), 0) << "of " << kThreads * kRuns << " runs";
}

}  // namespace concurrent_run_test
}  // namespace sk
