// The one waiting loop of the runtime: spin, then yield, then futex.
//
// Spinning is the fast path when the awaited thread is running on another
// core (an op boundary inside a SuperKernel is well under a microsecond).
// When there are more workers than cores the awaited thread may not be
// running at all, and spinning would burn the very time slice it needs, so
// the spin budget drops to nearly nothing and sched_yield hands the core over;
// after a few yields the waiter sleeps on the futex so the kernel runs it only
// when an arrival wakes it.
#pragma once

#include <cstdint>

#include "superkernel/cpu/superkernel_rt.h"

namespace sk::rt {

struct Backoff {
  uint64_t spinNs = 0;        // busy-wait budget before yielding
  uint32_t yields = 0;        // sched_yield rounds before sleeping
  int64_t futexTimeoutNs = 0; // sleep slice; bounds how late `stop` is noticed
};

/// Called between sleeps; true ends the wait unsatisfied.
using StopFn = bool (*)(void* ctx);

/// Block until c->value >= target (acquire). Returns true when satisfied,
/// false when stop(ctx) asked to give up first. stop may be null.
bool waitAtLeast(sk_counter* c, uint64_t target, const Backoff& backoff, StopFn stop, void* ctx);

/// Wake every sleeper of c (what sk_services.wake does).
void wakeCounter(sk_counter* c);

/// Publish an arrival on c and wake sleepers; C++ twin of sk_counter_arrive
/// for host code that has no sk_services at hand.
void arriveCounter(sk_counter* c);

/// Raise c to v (release) and wake sleepers; twin of sk_flag_set.
void setCounter(sk_counter* c, uint64_t v);

/// Steady-clock nanoseconds.
uint64_t nowNs();

}  // namespace sk::rt
