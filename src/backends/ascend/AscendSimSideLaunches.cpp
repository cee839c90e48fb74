// The host half of the side-launch protocol, for the simulated device (target ascend-sim; see
// AscendSimSideLaunches.h).
#include "backends/ascend/AscendSimSideLaunches.h"

#include <fmt/format.h>

#include <atomic>
#include <map>
#include <thread>

namespace sk::ascend {

Status runWithSideLaunches(uint32_t notifyWords, const std::vector<SideWords>& words, const std::string& superKernelName,
                           const std::function<Status(void* notify)>& superKernel,
                           const std::vector<SideLaunchRun>& sides, std::chrono::milliseconds delay) {
  if (words.size() != sides.size()) {
    return badInput(fmt::format("SuperKernel {} has {} side launch(es), {} given", superKernelName, words.size(),
                                sides.size()));
  }
  // One word per 64 bytes (kNotifyWordBytes), as the generated code addresses them; zeroed here.
  constexpr size_t kStride = kNotifyWordBytes / sizeof(uint64_t);
  std::vector<uint64_t> buffer(static_cast<size_t>(notifyWords) * kStride, 0);
  auto word = [&](uint32_t w) { return std::atomic_ref<uint64_t>(buffer[w * kStride]); };
  std::atomic<bool> superKernelDone{false};
  std::vector<Status> status(sides.size(), Status::success());

  auto runStream = [&](const std::vector<size_t>& order) {
    bool earlierFailed = false;
    for (size_t i : order) {
      const SideWords& sw = words[i];
      const SideLaunchRun& side = sides[i];
      auto signalled = [&] {
        for (uint32_t w = sw.first; w < sw.first + sw.count; ++w)
          if (word(w).load(std::memory_order_acquire) == 0) return false;
        return true;
      };
      Status st = Status::success();
      if (earlierFailed) {
        st = runtimeError(fmt::format("side launch {} did not run: an earlier launch of stream {} failed", side.name,
                                      side.stream));
      } else {
        while (!signalled()) {
          // The flag first: a SuperKernel that finished has set every word it ever will.
          const bool finished = superKernelDone.load(std::memory_order_acquire);
          if (signalled()) break;
          if (finished) {
            st = runtimeError(fmt::format("side launch {} (stream {}) never started: SuperKernel {} finished without "
                                          "setting its notify words [{}, {}) (a missing notify)",
                                          side.name, side.stream, superKernelName, sw.first, sw.first + sw.count));
            break;
          }
          std::this_thread::sleep_for(std::chrono::microseconds(20));
        }
        if (st && delay.count() > 0) std::this_thread::sleep_for(delay);
        if (st) st = side.launch();
      }
      earlierFailed = earlierFailed || !st;
      status[i] = std::move(st);
      word(sw.done).store(status[i] ? 1 : 2, std::memory_order_release);
    }
  };
  std::map<uint32_t, std::vector<size_t>> byStream;
  for (size_t i = 0; i < sides.size(); ++i) byStream[sides[i].stream].push_back(i);
  std::vector<std::thread> threads;
  for (const auto& [stream, order] : byStream) threads.emplace_back(runStream, std::cref(order));
  Status st = superKernel(buffer.empty() ? nullptr : buffer.data());
  superKernelDone.store(true, std::memory_order_release);
  for (std::thread& t : threads) t.join();
  if (!st) {
    // A SuperKernel stopped by its watchdog while waiting for a side launch that waited for it: say both.
    std::string more;
    for (const Status& s : status)
      if (!s) more += "; " + s.error().message();
    return Error(st.error().kind(), st.error().message() + more);
  }
  for (Status& s : status)
    if (!s) return std::move(s);
  return Status::success();
}

}  // namespace sk::ascend
