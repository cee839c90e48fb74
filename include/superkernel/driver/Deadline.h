// Bounds on compiling: a per-process limit and an overall deadline
// (SK_COMPILE_TIMEOUT_S), and cancellation of the remaining compiles once one
// failed when the caller wants all or nothing.
//
// Why a thread-current budget instead of a parameter: a compile fans out over
// threads (Session::compile's steps, Driver::compileObjects' jobs, the cache's
// build callbacks) down to runProcess, through signatures that know nothing
// about time. The code that starts a fan-out copies its budget into each
// thread with a BudgetScope; runProcess reads currentBudget() and kills the
// child's process group when the budget runs out or is cancelled.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>

#include "superkernel/support/Error.h"

namespace sk {

struct CompileLimits {
  std::chrono::seconds perCompile{600};  // one compiler process (and the --version probe, capped at 60 s)
  std::chrono::seconds total{600};       // one Session::compile: every object and link of a plan
};

/// SK_COMPILE_TIMEOUT_S = "PER" or "PER,TOTAL" in seconds (1..86400; TOTAL
/// defaults to PER): unset gives the defaults above; a malformed value is a
/// BadInput error naming the variable.
Expected<CompileLimits> compileLimitsFromEnv();
/// compileLimitsFromEnv(), or the defaults with a warning when it is malformed.
CompileLimits compileLimits();

class CompileBudget {
 public:
  using Clock = std::chrono::steady_clock;
  /// `allOrNothing`: the caller needs every compile, so the first failure
  /// cancels the rest (Driver::compileObjects, Session::compile).
  CompileBudget(std::chrono::milliseconds total, bool allOrNothing);

  bool allOrNothing() const { return allOrNothing_; }
  Clock::time_point deadline() const { return deadline_; }
  std::chrono::milliseconds total() const { return total_; }
  bool expired() const { return Clock::now() >= deadline_; }
  /// Cancel every compile under this budget (the first reason is kept).
  void cancel(const std::string& reason);
  bool cancelled() const { return cancelled_.load(std::memory_order_acquire); }
  std::string reason() const;

 private:
  const std::chrono::milliseconds total_;
  const Clock::time_point deadline_;
  const bool allOrNothing_;
  std::atomic<bool> cancelled_{false};
  mutable std::mutex mu_;
  std::string reason_;
};

/// The calling thread's budget (null: none, only the per-process limit applies).
const std::shared_ptr<CompileBudget>& currentBudget();

/// Makes `budget` the calling thread's for the lifetime of the scope.
class BudgetScope {
 public:
  explicit BudgetScope(std::shared_ptr<CompileBudget> budget);
  ~BudgetScope();
  BudgetScope(const BudgetScope&) = delete;
  BudgetScope& operator=(const BudgetScope&) = delete;

 private:
  std::shared_ptr<CompileBudget> saved_;
};

}  // namespace sk
