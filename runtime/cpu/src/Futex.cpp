#include "Futex.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <climits>

namespace sk::rt {

void futexWait(uint32_t* addr, uint32_t expected, int64_t timeoutNs) {
  timespec ts{};
  ts.tv_sec = static_cast<time_t>(timeoutNs / 1000000000);
  ts.tv_nsec = static_cast<long>(timeoutNs % 1000000000);
  // PRIVATE: counters live in this process (generated .so files are dlopened
  // into it). EAGAIN (value changed), EINTR and ETIMEDOUT all just return;
  // the caller re-checks.
  (void)syscall(SYS_futex, addr, FUTEX_WAIT_PRIVATE, expected, &ts, nullptr, 0);
}

void futexWakeAll(uint32_t* addr) {
  (void)syscall(SYS_futex, addr, FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
}

}  // namespace sk::rt
