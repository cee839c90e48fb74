// How simulated Ascend C reaches the vector model's checker (target: ascend-sim only): this object's
// per-thread checker state, the checker table of the core it runs on (vector_state.h says why the
// checker's bodies are in the simulator, not here) and a failure with a message. Internals of the
// simulated API headers (kernel_tensor.h, kernel_tpipe.h, kernel_operator_*_intf.h): kernels use the API.
#ifndef SUPERKERNEL_ASCEND_SIM_VECTOR_CHECK_H
#define SUPERKERNEL_ASCEND_SIM_VECTOR_CHECK_H

#include "superkernel/ascend/sim_core.h"
#include "superkernel/ascend/vector_state.h"

#pragma GCC visibility push(hidden)

namespace sk_ascend_sim_vec {

inline const Checker& checkerOf(const sk_ascend_sim_core* self) {
  return *static_cast<const Checker*>(self->ops->vector_checker);
}
inline const Checker& checker() { return checkerOf(sk_ascend_sim_core_now()); }

// The launch fails with the message (trap unwinds the core; it never returns).
[[noreturn]] inline void fail(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
inline void fail(const char* fmt, ...) {
  const sk_ascend_sim_core* self = sk_ascend_sim_core_now();
  va_list ap;
  va_start(ap, fmt);
  checkerOf(self).failv(self, fmt, ap);
  va_end(ap);
  abort();  // not reached
}

// One per simulated core and object: every core is its own thread (and a launch starts fresh threads).
inline thread_local Core tlCore;

// This thread's state, bound to the core it runs now (the checker traps through it).
inline Core& core() {
  tlCore.self = sk_ascend_sim_core_now();
  return tlCore;
}

}  // namespace sk_ascend_sim_vec

#pragma GCC visibility pop

#endif
