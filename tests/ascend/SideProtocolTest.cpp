// The host half of the side-launch protocol (src/backends/ascend/AscendSimSideLaunches.h)
// on its own: a stand-in SuperKernel sets and reads the words itself, so each
// rule is checked without compiling anything — a side launch starts only once
// all of its notify words are set; launches of one stream run in order, after
// a failure the rest of that stream does not run; the done word says 1 or 2;
// a SuperKernel that finishes without setting a side launch's words is an
// error naming the words; a count mismatch is bad input.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "backends/ascend/AscendSimSideLaunches.h"

namespace {

using sk::ascend::SideLaunchRun;
using sk::ascend::SideWords;

constexpr size_t kStride = sk::ascend::kNotifyWordBytes / sizeof(uint64_t);

std::atomic_ref<uint64_t> word(void* notify, uint32_t w) {
  return std::atomic_ref<uint64_t>(static_cast<uint64_t*>(notify)[w * kStride]);
}

// Polls word w until it is non-zero (or 2 s pass) and returns it.
uint64_t awaitWord(void* notify, uint32_t w) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (word(notify, w).load() == 0 && std::chrono::steady_clock::now() < end) std::this_thread::yield();
  return word(notify, w).load();
}

TEST(AscendSideProtocol, ASideLaunchStartsOnlyOnceEveryNotifyWordIsSet) {
  // Words: side 0 notify [0, 3), done 3.
  std::atomic<int> started{0};
  std::vector<SideLaunchRun> sides = {{"s", 1, [&] {
                                         ++started;
                                         return sk::Status::success();
                                       }}};
  sk::Status st = sk::ascend::runWithSideLaunches(
      4, {SideWords{3, 0, 3}}, "sk",
      [&](void* notify) -> sk::Status {
        word(notify, 0).store(1);
        word(notify, 2).store(1);
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        EXPECT_EQ(started.load(), 0) << "started with word 1 unset";
        word(notify, 1).store(1);
        EXPECT_EQ(awaitWord(notify, 3), 1u);  // its done word: completed
        EXPECT_EQ(started.load(), 1);
        return sk::Status::success();
      },
      sides);
  EXPECT_TRUE(st.ok()) << st.error().message();
}

TEST(AscendSideProtocol, AFailedLaunchStopsItsStreamAndSaysSoInItsDoneWord) {
  // Two launches on stream 1 (the first fails) and one on stream 2; none waits for a notify word.
  std::atomic<bool> thirdRan{false}, secondRan{false};
  std::vector<SideLaunchRun> sides = {
      {"first", 1, [] { return sk::runtimeError("first failed"); }},
      {"second", 1, [&] {
         secondRan = true;
         return sk::Status::success();
       }},
      {"third", 2, [&] {
         thirdRan = true;
         return sk::Status::success();
       }}};
  sk::Status st = sk::ascend::runWithSideLaunches(
      3, {SideWords{0, 0, 0}, SideWords{1, 0, 0}, SideWords{2, 0, 0}}, "sk",
      [&](void* notify) -> sk::Status {
        EXPECT_EQ(awaitWord(notify, 0), 2u);
        EXPECT_EQ(awaitWord(notify, 1), 2u);  // did not run: still released, the SuperKernel goes on
        EXPECT_EQ(awaitWord(notify, 2), 1u);
        return sk::Status::success();
      },
      sides);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message().find("first failed"), std::string::npos) << st.error().message();
  EXPECT_FALSE(secondRan.load());
  EXPECT_TRUE(thirdRan.load());
}

TEST(AscendSideProtocol, AMissingNotifyIsAnErrorNamingTheWords) {
  std::vector<SideLaunchRun> sides = {{"tiling", 1, [] { return sk::Status::success(); }}};
  sk::Status st = sk::ascend::runWithSideLaunches(
      3, {SideWords{2, 0, 2}}, "sk_layer", [](void* notify) -> sk::Status {
        word(notify, 0).store(1);  // word 1 never set
        return sk::Status::success();
      },
      sides);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message().find("side launch tiling (stream 1) never started: SuperKernel sk_layer finished "
                                      "without setting its notify words [0, 2) (a missing notify)"),
            std::string::npos)
      << st.error().message();
}

TEST(AscendSideProtocol, TheSuperKernelsFailureComesFirstWithTheSideLaunchesAndCountsMustMatch) {
  std::vector<SideLaunchRun> sides = {{"s", 1, [] { return sk::runtimeError("side failed"); }}};
  sk::Status st = sk::ascend::runWithSideLaunches(
      1, {SideWords{0, 0, 0}}, "sk", [](void*) { return sk::runtimeError("the SuperKernel failed"); }, sides);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().message(), "the SuperKernel failed; side failed");

  sk::Status mismatch = sk::ascend::runWithSideLaunches(
      1, {SideWords{0, 0, 0}}, "sk", [](void*) { return sk::Status::success(); }, {});
  ASSERT_FALSE(mismatch.ok());
  EXPECT_EQ(mismatch.error().kind(), sk::ErrorKind::BadInput);
  EXPECT_NE(mismatch.error().message().find("has 1 side launch(es), 0 given"), std::string::npos);
}

}  // namespace
