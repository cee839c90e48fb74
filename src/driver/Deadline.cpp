#include "superkernel/driver/Deadline.h"

#include <spdlog/spdlog.h>

#include <cstdlib>
#include <string_view>

#include <fmt/format.h>

namespace sk {

namespace {

constexpr long kMaxSeconds = 86400;

bool parseSeconds(std::string_view t, long& out) {
  if (t.empty() || t.size() > 6) return false;
  long v = 0;
  for (char c : t) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  if (v < 1 || v > kMaxSeconds) return false;
  out = v;
  return true;
}

thread_local std::shared_ptr<CompileBudget> tlBudget;

}  // namespace

Expected<CompileLimits> compileLimitsFromEnv() {
  CompileLimits l;
  const char* v = std::getenv("SK_COMPILE_TIMEOUT_S");
  if (!v) return l;
  std::string_view text(v);
  const size_t comma = text.find(',');
  long per = 0, total = 0;
  const bool ok = parseSeconds(text.substr(0, comma), per) &&
                  (comma == std::string_view::npos ? (total = per, true) : parseSeconds(text.substr(comma + 1), total));
  if (!ok) {
    return badInput(fmt::format("SK_COMPILE_TIMEOUT_S='{}': expected seconds per compile, optionally followed by "
                                "',TOTAL' seconds for a whole compile, each in 1..{} (e.g. 120 or 120,600)",
                                v, kMaxSeconds));
  }
  l.perCompile = std::chrono::seconds(per);
  l.total = std::chrono::seconds(total);
  return l;
}

CompileLimits compileLimits() {
  auto l = compileLimitsFromEnv();
  if (l) return *l;
  CompileLimits d;
  spdlog::warn("{}; using {},{}", l.error().message(), d.perCompile.count(), d.total.count());
  return d;
}

CompileBudget::CompileBudget(std::chrono::milliseconds total, bool allOrNothing)
    : total_(total), deadline_(Clock::now() + total), allOrNothing_(allOrNothing) {}

void CompileBudget::cancel(const std::string& reason) {
  std::lock_guard<std::mutex> lock(mu_);
  if (cancelled_.load(std::memory_order_relaxed)) return;
  reason_ = reason;
  cancelled_.store(true, std::memory_order_release);
}

std::string CompileBudget::reason() const {
  std::lock_guard<std::mutex> lock(mu_);
  return reason_;
}

const std::shared_ptr<CompileBudget>& currentBudget() { return tlBudget; }

BudgetScope::BudgetScope(std::shared_ptr<CompileBudget> budget) : saved_(std::move(tlBudget)) {
  tlBudget = std::move(budget);
}

BudgetScope::~BudgetScope() { tlBudget = std::move(saved_); }

}  // namespace sk
