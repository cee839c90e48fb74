#include "Backoff.h"

#include <sched.h>

#include <chrono>

#include "Futex.h"

namespace sk::rt {

uint64_t nowNs() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

static inline bool ready(sk_counter* c, uint64_t target) {
  return __atomic_load_n(&c->value, __ATOMIC_ACQUIRE) >= target;
}

bool waitAtLeast(sk_counter* c, uint64_t target, const Backoff& b, StopFn stop, void* ctx) {
  if (ready(c, target)) return true;

  // Phase 1: spin. The clock is read only every 64 pauses, so the spin stays
  // cheap and still ends close to its budget.
  if (b.spinNs != 0) {
    const uint64_t end = nowNs() + b.spinNs;
    do {
      for (int i = 0; i < 64; ++i) {
        if (ready(c, target)) return true;
        sk_cpu_relax();
      }
    } while (nowNs() < end);
  }

  // Phase 2: yield, so an awaited thread sharing this core can run.
  for (uint32_t i = 0; i < b.yields; ++i) {
    if (ready(c, target)) return true;
    if (stop && stop(ctx)) return false;
    sched_yield();
  }

  // Phase 3: sleep. Announce ourselves in `waiters` BEFORE re-reading the
  // value: arrivers increment the value and then read `waiters` (both
  // seq_cst), so either they see us and wake, or we see their value. The
  // futex compares the low word we saw, closing the window between our read
  // and our sleep.
  uint32_t* word = counterLowWord(c);
  for (;;) {
    if (ready(c, target)) return true;
    if (stop && stop(ctx)) return false;
    __atomic_fetch_add(&c->waiters, 1, __ATOMIC_SEQ_CST);
    const uint64_t seen = __atomic_load_n(&c->value, __ATOMIC_SEQ_CST);
    if (seen < target) futexWait(word, static_cast<uint32_t>(seen), b.futexTimeoutNs);
    __atomic_fetch_sub(&c->waiters, 1, __ATOMIC_SEQ_CST);
  }
}

void wakeCounter(sk_counter* c) { futexWakeAll(counterLowWord(c)); }

void arriveCounter(sk_counter* c) {
  __atomic_fetch_add(&c->value, 1, __ATOMIC_SEQ_CST);
  if (__atomic_load_n(&c->waiters, __ATOMIC_SEQ_CST) != 0) wakeCounter(c);
}

void setCounter(sk_counter* c, uint64_t v) {
  __atomic_store_n(&c->value, v, __ATOMIC_SEQ_CST);
  if (__atomic_load_n(&c->waiters, __ATOMIC_SEQ_CST) != 0) wakeCounter(c);
}

}  // namespace sk::rt
