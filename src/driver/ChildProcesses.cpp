#include "superkernel/driver/ChildProcesses.h"

#include <signal.h>
#include <time.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace sk {

namespace {

// A fixed table of atomics: the interrupt handler may only use
// async-signal-safe operations (no locks, no allocation).
constexpr int kSlots = 1024;
std::atomic<pid_t> gGroups[kSlots];
static_assert(std::atomic<pid_t>::is_always_lock_free, "the signal handler needs lock-free atomics");

void onInterrupt(int sig) {
  const int savedErrno = errno;
  killChildGroups();
  // Default action, then re-raise: the process ends by this signal as it
  // would have without us (a shell sees 128 + sig).
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  ::sigaction(sig, &dfl, nullptr);
  ::raise(sig);
  errno = savedErrno;
}

}  // namespace

void registerChildGroup(pid_t pgid) {
  if (pgid <= 0) return;
  for (auto& slot : gGroups) {
    pid_t expected = 0;
    if (slot.compare_exchange_strong(expected, pgid, std::memory_order_acq_rel)) return;
  }
  spdlog::warn("more than {} child processes at once: process group {} is not tracked for cleanup", kSlots, pgid);
}

void unregisterChildGroup(pid_t pgid) {
  if (pgid <= 0) return;
  for (auto& slot : gGroups) {
    pid_t expected = pgid;
    if (slot.compare_exchange_strong(expected, 0, std::memory_order_acq_rel)) return;
  }
}

int killChildGroups() {
  // SIGTERM first, so that a child with process groups of its own (an
  // sk-cache replay process and its compilers) can take them down in its
  // handler; then SIGKILL for everything still there.
  int n = 0;
  for (auto& slot : gGroups) {
    const pid_t pgid = slot.load(std::memory_order_acquire);
    if (pgid > 0 && ::kill(-pgid, SIGTERM) == 0) ++n;
  }
  if (n == 0) return 0;
  struct timespec pause {0, 50 * 1000 * 1000};  // nanosleep: async-signal-safe
  ::nanosleep(&pause, nullptr);
  for (auto& slot : gGroups) {
    const pid_t pgid = slot.load(std::memory_order_acquire);
    if (pgid > 0) ::kill(-pgid, SIGKILL);
  }
  return n;
}

Status installInterruptCleanup() {
  struct sigaction sa {};
  sa.sa_handler = onInterrupt;
  sigemptyset(&sa.sa_mask);
  // SA_RESETHAND too: a second signal while the first is handled ends the
  // process at once.
  sa.sa_flags = SA_RESETHAND;
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    if (::sigaction(sig, &sa, nullptr) != 0) {
      return internalError(fmt::format("sigaction({}): {}", sig, std::strerror(errno)));
    }
  }
  return Status::success();
}

}  // namespace sk
