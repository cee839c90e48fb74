#include "Watchdog.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <new>

#include "Backoff.h"

namespace sk {

void defaultRunTimeoutHandler(const std::string& report) {
  spdlog::critical("{}", report);
  // spdlog may be off (SK_LOG_LEVEL=off): the report must still be seen
  // before the process dies.
  std::fprintf(stderr, "superkernel: %s\nsuperkernel: aborting (a block that never returns cannot be cancelled)\n",
               report.c_str());
  std::fflush(stderr);
  std::abort();
}

namespace rt {

void Watchdog::ProgressDeleter::operator()(sk_progress* p) const {
  ::operator delete[](p, std::align_val_t{SK_CACHELINE});
}

Watchdog::Watchdog(uint32_t numWorkers, uint32_t timeoutMs, std::string limitText, RunTimeoutHandler handler,
                   std::function<void(const std::string&)> failLaunch, std::function<std::string()> launchError)
    : numWorkers_(numWorkers),
      timeoutMs_(timeoutMs),
      limitText_(std::move(limitText)),
      handler_(std::move(handler)),
      failLaunch_(std::move(failLaunch)),
      launchError_(std::move(launchError)),
      host_(new HostSlot[numWorkers]),
      seen_(numWorkers) {
  auto* raw = static_cast<sk_progress*>(
      ::operator new[](sizeof(sk_progress) * numWorkers, std::align_val_t{SK_CACHELINE}));
  for (uint32_t w = 0; w < numWorkers; ++w) new (&raw[w]) sk_progress{};
  progress_.reset(raw);
  if (!handler_) handler_ = defaultRunTimeoutHandler;
  thread_ = std::thread([this] { threadMain(); });
}

Watchdog::~Watchdog() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Watchdog::setContext(const std::string* label, const std::vector<std::string>* opNames) {
  label_.store(label, std::memory_order_relaxed);
  opNames_.store(opNames, std::memory_order_relaxed);
}

void Watchdog::launchBegin(const char* kind, uint32_t count, uint32_t participants) {
  kind_.store(kind, std::memory_order_relaxed);
  count_.store(count, std::memory_order_relaxed);
  participants_.store(participants, std::memory_order_relaxed);
  // "Last waited for" is per launch: the strings live in the code of the
  // launch that waited, which may be unloaded by the next one.
  for (uint32_t w = 0; w < participants && w < numWorkers_; ++w) host_[w].lastWaited.store(nullptr, std::memory_order_relaxed);
  launchEvents_.fetch_add(1, std::memory_order_release);
}

void Watchdog::launchEnd() { launchEvents_.fetch_add(1, std::memory_order_release); }

void Watchdog::block(uint32_t w, uint32_t op, uint32_t block) {
  sk_services table{};
  table.progress = progress_.get();
  sk_progress_mark(&table, w, op, block);
}

void Watchdog::waitBegin(uint32_t w, const char* what, const sk_counter* c, uint64_t target) {
  HostSlot& h = host_[w];
  h.waitCounter.store(c, std::memory_order_relaxed);
  h.waitTarget.store(target, std::memory_order_relaxed);
  h.waitSinceNs.store(nowNs(), std::memory_order_relaxed);
  h.lastWaited.store(what, std::memory_order_relaxed);
  h.waiting.store(what ? what : "an unnamed counter", std::memory_order_release);
}

void Watchdog::waitEnd(uint32_t w) { host_[w].waiting.store(nullptr, std::memory_order_release); }

void Watchdog::threadMain() {
  // Checks come often enough that a stall is reported well within a second
  // of the limit, and rarely enough that an idle executor costs nothing
  // measurable (2 wake-ups a second at the default limit).
  const auto period = std::chrono::milliseconds(std::clamp<uint32_t>(timeoutMs_ / 10, 10, 500));
  const uint64_t limitNs = uint64_t{timeoutMs_} * 1000000;
  uint64_t lastEvents = ~uint64_t{0};
  uint64_t lastSum = 0;
  uint64_t lastChangeNs = nowNs();
  uint64_t firedFor = ~uint64_t{0};  // launchEvents_ value of the launch already reported
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    cv_.wait_for(lock, period);
    if (stop_) break;
    const uint64_t now = nowNs();
    const uint64_t events = launchEvents_.load(std::memory_order_acquire);
    uint64_t sum = 0;
    for (uint32_t w = 0; w < numWorkers_; ++w) {
      const uint64_t seq = __atomic_load_n(&progress_[w].seq, __ATOMIC_ACQUIRE);
      if (seq != seen_[w].seq) {
        seen_[w].seq = seq;
        seen_[w].sinceNs = now;
      }
      sum += seq;
    }
    if (events != lastEvents || sum != lastSum) {
      if (events != lastEvents) launchSeenNs_ = now;
      lastEvents = events;
      lastSum = sum;
      lastChangeNs = now;
      continue;
    }
    if ((events & 1) == 0 || firedFor == events || now - lastChangeNs < limitNs) continue;
    firedFor = events;
    const std::string text = report(now, now - lastChangeNs);
    lock.unlock();
    handler_(text);
    // The handler returned: fail the launch so that waiting cores stop; the
    // stuck block is left to return on its own.
    failLaunch_(text);
    lock.lock();
  }
}

std::string Watchdog::report(uint64_t now, uint64_t stalledNs) {
  auto secs = [](uint64_t ns) { return fmt::format("{:.1f} s", static_cast<double>(ns) / 1e9); };
  const std::string* label = label_.load(std::memory_order_relaxed);
  const std::vector<std::string>* opNames = opNames_.load(std::memory_order_relaxed);
  const std::string kind = kind_.load(std::memory_order_relaxed);
  const uint32_t participants = participants_.load(std::memory_order_relaxed);
  auto opName = [&](uint32_t op) -> std::string {
    if (opNames && op < opNames->size()) return fmt::format("op {} \"{}\"", op, (*opNames)[op]);
    return fmt::format("op {}", op);
  };
  std::string s = fmt::format(
      "launch watchdog: no progress for {} ({}) in {}: {} of {} {} on {} workers, running for at least {}",
      secs(stalledNs), limitText_, label ? *label : std::string("a launch"), kind,
      count_.load(std::memory_order_relaxed), kind == "runCores" ? "cores" : "blocks", participants,
      secs(now - launchSeenNs_));
  uint32_t busy = 0;
  for (uint32_t w = 0; w < numWorkers_ && w < participants; ++w) {
    const HostSlot& h = host_[w];
    if (!h.inShare.load(std::memory_order_acquire)) continue;
    ++busy;
    const sk_progress& p = progress_[w];
    const uint64_t seq = __atomic_load_n(&p.seq, __ATOMIC_ACQUIRE);
    std::string line = fmt::format("\n  worker {}: ", w);
    // A worker with no block started in this launch has not reached one
    // (e.g. it waits at a barrier first); otherwise op/block is its current block.
    if (seq != h.seqAtShare.load(std::memory_order_relaxed)) {
      line += fmt::format("{} block {}", opName(__atomic_load_n(&p.op, __ATOMIC_RELAXED)),
                          __atomic_load_n(&p.block, __ATOMIC_RELAXED));
    } else {
      line += "no block started yet in this launch";
    }
    if (const char* waiting = h.waiting.load(std::memory_order_acquire)) {
      const sk_counter* c = h.waitCounter.load(std::memory_order_relaxed);
      line += fmt::format(", waiting for {} for {} (value {}, needed {})", waiting,
                          secs(now - h.waitSinceNs.load(std::memory_order_relaxed)),
                          c ? __atomic_load_n(&c->value, __ATOMIC_ACQUIRE) : 0,
                          h.waitTarget.load(std::memory_order_relaxed));
    } else {
      line += fmt::format(", running its kernel for at least {}",
                          secs(now - std::max(seen_[w].sinceNs, launchSeenNs_)));
      const char* last = h.lastWaited.load(std::memory_order_relaxed);
      line += fmt::format("; last waited for {}", last ? last : "nothing in this launch");
    }
    s += line;
  }
  if (busy == 0) s += "\n  no worker is inside the launch (it is finishing)";
  if (std::string err = launchError_(); !err.empty()) s += "\n  the launch had already failed: " + err;
  return s;
}

std::string Watchdog::opName(uint32_t w) const {
  if (w >= numWorkers_ || !progress_) return "?";
  const uint32_t op = __atomic_load_n(&progress_[w].op, __ATOMIC_RELAXED);
  const std::vector<std::string>* names = opNames_.load(std::memory_order_relaxed);
  if (names && op < names->size()) return "\"" + (*names)[op] + "\"";
  return "op " + std::to_string(op);
}

}  // namespace rt
}  // namespace sk
