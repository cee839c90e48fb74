// The launch watchdog: a block that does not return is reported (op, block,
// worker, what the others wait for) through the handler; a handler that
// returns fails the launch, which then ends when the block returns; slow but
// progressing launches are left alone.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>

#include "superkernel/runtime/Executor.h"

namespace {

using ::testing::HasSubstr;

struct Captured {
  std::mutex mu;
  std::string report;
  std::atomic<int> calls{0};
};

sk::ExecutorOptions withHandler(uint32_t workers, uint32_t runMs, Captured& cap, std::atomic<bool>* release) {
  sk::ExecutorOptions o;
  o.numWorkers = workers;
  o.waitTimeoutMs = 60000;
  o.runTimeoutMs = runMs;
  o.onRunTimeout = [&cap, release](const std::string& report) {
    {
      std::lock_guard<std::mutex> lock(cap.mu);
      cap.report = report;
    }
    cap.calls.fetch_add(1);
    if (release) release->store(true);  // let the stuck block go: the launch must then fail with the report
  };
  return o;
}

TEST(Watchdog, StuckBlockIsNamedAndTheLaunchFailsWhenTheHandlerReturns) {
  Captured cap;
  std::atomic<bool> release{false};
  sk::Executor ex(withHandler(2, 200, cap, &release));
  EXPECT_EQ(ex.runTimeoutMs(), 200u);
  const std::string label = "step 7 (unfused op stuck_op)";
  const std::vector<std::string> names = {"stuck_op"};
  ex.setLaunchContext(&label, &names);
  struct Arg {
    std::atomic<bool>* release;
  } arg{&release};
  const auto t0 = std::chrono::steady_clock::now();
  sk::Status st = ex.launch(
      [](void* a, const sk_ctx* ctx) {
        if (ctx->block_idx != 3) return;
        while (!static_cast<Arg*>(a)->release->load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      },
      &arg, 4);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ex.setLaunchContext(nullptr, nullptr);
  ASSERT_EQ(cap.calls.load(), 1);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().kind(), sk::ErrorKind::Runtime) << st.error().message();
  EXPECT_THAT(st.error().message(), HasSubstr("launch watchdog: no progress for"));
  std::lock_guard<std::mutex> lock(cap.mu);
  EXPECT_THAT(cap.report, HasSubstr("no progress for"));
  // The caller's option set the limit: the report says so, not SK_RUN_TIMEOUT_MS (which was not set).
  EXPECT_THAT(cap.report, HasSubstr("(limit 200 ms set by the caller)"));
  EXPECT_THAT(cap.report, HasSubstr(label));
  EXPECT_THAT(cap.report, HasSubstr("worker 1: op 0 \"stuck_op\" block 3"));  // block 3 runs on worker 3 % 2
  // A hang guard, not a timing claim: the watchdog fires after 200 ms; 50x that only fails when it fires far
  // too late (or the handler's release never came).
  EXPECT_LT(s, 10.0);
  // The executor works afterwards.
  EXPECT_TRUE(ex.launch([](void*, const sk_ctx*) {}, nullptr, 8).ok());
}

TEST(Watchdog, ReportsWhatWaitingWorkersWaitFor) {
  Captured cap;
  std::atomic<bool> release{false};
  sk::Executor ex(withHandler(2, 200, cap, &release));
  struct Arg {
    sk::Executor* ex;
    std::atomic<bool>* release;
    sk_counter c{};
  } arg{&ex, &release};
  // Core 0 waits on a counter core 1 would raise after its (stuck) work.
  sk::Status st = ex.runCores(
      2,
      [](void* a, uint32_t core) {
        auto* p = static_cast<Arg*>(a);
        const sk_services* s = p->ex->services();
        if (core == 0) {
          (void)sk_wait_ge(s, &p->c, 1, "the test's counter");
        } else {
          while (!p->release->load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
          sk_counter_arrive(s, &p->c);
        }
      },
      &arg);
  ASSERT_EQ(cap.calls.load(), 1);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().kind(), sk::ErrorKind::Runtime) << st.error().message();
  EXPECT_THAT(st.error().message(), HasSubstr("launch watchdog: no progress for"));
  std::lock_guard<std::mutex> lock(cap.mu);
  EXPECT_THAT(cap.report, HasSubstr("runCores of 2 cores"));
  EXPECT_THAT(cap.report, HasSubstr("worker 0: no block started yet in this launch, waiting for the test's counter"));
  EXPECT_THAT(cap.report, HasSubstr("(value 0, needed 1)"));
  EXPECT_THAT(cap.report, HasSubstr("worker 1: no block started yet in this launch, running"));
}

TEST(Watchdog, ProgressingLaunchesAreLeftAlone) {
  Captured cap;
  sk::Executor ex(withHandler(2, 100, cap, nullptr));
  // 40 blocks of 10 ms: 200 ms per worker, longer than the limit in total,
  // but a block starts every 10 ms.
  ASSERT_TRUE(ex.launch([](void*, const sk_ctx*) { std::this_thread::sleep_for(std::chrono::milliseconds(10)); },
                        nullptr, 40)
                  .ok());
  // Idle time between launches is not a stall either.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ASSERT_TRUE(ex.launch([](void*, const sk_ctx*) {}, nullptr, 4).ok());
  EXPECT_EQ(cap.calls.load(), 0);
}

TEST(Watchdog, EnvironmentIsParsedStrictly) {
  ::setenv("SK_RUN_TIMEOUT_MS", "12x", 1);
  auto bad = sk::runTimeoutFromEnv();
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().kind(), sk::ErrorKind::BadInput) << bad.error().message();
  EXPECT_THAT(bad.error().message(), HasSubstr("SK_RUN_TIMEOUT_MS='12x': expected an integer in 1.."));
  EXPECT_EQ(sk::defaultRunTimeoutMs(), 120000u);  // warned, default used
  ::setenv("SK_RUN_TIMEOUT_MS", "2500", 1);
  EXPECT_EQ(*sk::runTimeoutFromEnv(), 2500u);
  sk::Executor ex(sk::ExecutorOptions{1, 0});
  EXPECT_EQ(ex.runTimeoutMs(), 2500u);
  ::unsetenv("SK_RUN_TIMEOUT_MS");
  EXPECT_EQ(sk::defaultRunTimeoutMs(), 120000u);
}

TEST(WatchdogDeathTest, DefaultHandlerAbortsWithTheReport) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        sk::ExecutorOptions o;
        o.numWorkers = 1;
        o.runTimeoutMs = 100;
        sk::Executor ex(o);
        (void)ex.launch([](void*, const sk_ctx*) {
          for (;;) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }, nullptr, 1);
      },
      "launch watchdog: no progress");
}

}  // namespace
