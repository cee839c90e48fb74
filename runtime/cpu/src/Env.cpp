// Environment knobs of the executor. A typo in SK_NUM_WORKERS must not turn
// into "0 workers" or a silently huge pool, so values are parsed strictly.
#include <sched.h>
#include <spdlog/spdlog.h>

#include <cerrno>
#include <cstdlib>
#include <thread>

#include "superkernel/runtime/Executor.h"

namespace sk {

static constexpr uint32_t kMaxWorkers = kMaxExecutorWorkers;
static constexpr uint32_t kMaxTimeoutMs = 86400000;  // one day
static constexpr uint32_t kDefaultTimeoutMs = 10000;
// The launch watchdog's default: far above any block of a real kernel (the
// 61-layer decode step is ~20 ms for all 15921 blocks), so it only ever
// fires on a hang.
static constexpr uint32_t kDefaultRunTimeoutMs = 120000;

Expected<uint32_t> parseBoundedU32(const std::string& what, const char* text, uint32_t lo, uint32_t hi) {
  auto bad = [&] {
    return badInput(what + "='" + std::string(text ? text : "") + "': expected an integer in " +
                    std::to_string(lo) + ".." + std::to_string(hi));
  };
  if (!text || !*text) return bad();
  // strtoull alone accepts "  12", "+12", "-1" (wrapping) and "12abc"'s
  // prefix; digits only, then a range check, rejects all of those.
  for (const char* p = text; *p; ++p)
    if (*p < '0' || *p > '9') return bad();
  errno = 0;
  char* end = nullptr;
  unsigned long long v = std::strtoull(text, &end, 10);
  if (errno == ERANGE || v < lo || v > hi) return bad();
  return static_cast<uint32_t>(v);
}

uint32_t hardwareThreads() {
  // The affinity mask, not the machine: a container or `taskset` may allow
  // fewer cores than hardware_concurrency reports.
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    int n = CPU_COUNT(&set);
    if (n > 0) return static_cast<uint32_t>(n);
  }
  unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1u : n;
}

static Expected<uint32_t> fromEnv(const char* name, uint32_t lo, uint32_t hi) {
  const char* v = std::getenv(name);
  if (!v) return uint32_t{0};
  return parseBoundedU32(name, v, lo, hi);
}

Expected<uint32_t> workerCountFromEnv() { return fromEnv("SK_NUM_WORKERS", 1, kMaxWorkers); }
Expected<uint32_t> waitTimeoutFromEnv() { return fromEnv("SK_WAIT_TIMEOUT_MS", 1, kMaxTimeoutMs); }
Expected<uint32_t> runTimeoutFromEnv() { return fromEnv("SK_RUN_TIMEOUT_MS", 1, kMaxTimeoutMs); }

uint32_t defaultRunTimeoutMs() {
  auto env = runTimeoutFromEnv();
  if (!env) {
    spdlog::warn("{}; using {} ms", env.error().message(), kDefaultRunTimeoutMs);
  } else if (*env != 0) {
    return *env;
  }
  return kDefaultRunTimeoutMs;
}

uint32_t defaultWorkerCount() {
  auto env = workerCountFromEnv();
  if (!env) {
    spdlog::warn("{}; using {} (hardware threads)", env.error().message(), hardwareThreads());
  } else if (*env != 0) {
    return *env;
  }
  return std::min(hardwareThreads(), kMaxWorkers);
}

uint32_t defaultWaitTimeoutMs() {
  auto env = waitTimeoutFromEnv();
  if (!env) {
    spdlog::warn("{}; using {} ms", env.error().message(), kDefaultTimeoutMs);
  } else if (*env != 0) {
    return *env;
  }
  return kDefaultTimeoutMs;
}

}  // namespace sk
