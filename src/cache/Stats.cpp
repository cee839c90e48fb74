#include "cache/Stats.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <fmt/format.h>

#include "support/Fd.h"

namespace sk::cache {
namespace fs = std::filesystem;
using detail::UniqueFd;

const char* const kCounterNames[kNumCounters] = {"hits",    "misses",    "compiles",    "compile_failures", "corrupt",
                                                 "untrusted", "evicted", "memory_hits", "disk_hits"};

std::atomic<uint64_t>& Counters::at(int i) {
  std::atomic<uint64_t>* a[] = {&hits,      &misses,  &compiles,   &compileFailures, &corrupt,
                                &untrusted, &evicted, &memoryHits, &diskHits};
  return *a[i];
}

namespace {
uint64_t field(const nlohmann::json& j, const char* name) {
  return j.contains(name) && j[name].is_number_unsigned() ? j[name].get<uint64_t>() : 0;
}
}  // namespace

void StatsFile::flush(Counters& pending, bool force) {
  if (root_.empty()) return;
  std::lock_guard<std::mutex> g(mutex_);
  auto now = std::chrono::steady_clock::now();
  if (!force && now - last_ < std::chrono::milliseconds(200)) return;
  last_ = now;
  uint64_t delta[kNumCounters];
  bool any = false;
  for (int i = 0; i < kNumCounters; ++i) {
    delta[i] = pending.at(i).exchange(0);
    any |= delta[i] != 0;
  }
  if (!any) return;
  auto restore = [&] {
    for (int i = 0; i < kNumCounters; ++i) pending.at(i).fetch_add(delta[i]);
  };
  UniqueFd lock(::open((root_ / "stats.lock").c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!lock.valid() || ::flock(lock.get(), LOCK_EX) != 0) {
    restore();
    return;
  }
  nlohmann::json j = read();
  for (int i = 0; i < kNumCounters; ++i) j[kCounterNames[i]] = field(j, kCounterNames[i]) + delta[i];
  fs::path tmp = root_ / fmt::format("stats.json.{}.tmp", ::getpid());
  ::unlink(tmp.c_str());
  Status st = detail::writeNewFile(tmp, j.dump(2) + "\n", 0600, false);
  if (!st || ::rename(tmp.c_str(), (root_ / "stats.json").c_str()) != 0) {
    ::unlink(tmp.c_str());
    restore();
  }
}

nlohmann::json StatsFile::read() const {
  if (root_.empty()) return nlohmann::json::object();
  UniqueFd fd(::open((root_ / "stats.json").c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid()) return nlohmann::json::object();
  auto text = detail::readAllFd(fd.get(), "stats.json");
  if (!text) return nlohmann::json::object();
  auto j = nlohmann::json::parse(*text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return nlohmann::json::object();
  return j;
}

void StatsFile::totals(const Counters& pending, uint64_t out[kNumCounters]) const {
  nlohmann::json j = read();
  for (int i = 0; i < kNumCounters; ++i)
    out[i] = field(j, kCounterNames[i]) + const_cast<Counters&>(pending).at(i).load();
}

}  // namespace sk::cache
