// Thin wrappers over the Linux futex syscall, on the low 32 bits of an
// sk_counter's 64-bit value. Waiting on the low half is enough: a waiter
// passes the half it last saw, and the kernel returns at once if the half
// changed meanwhile (an arrival between the waiter's check and its sleep), so
// no wake-up is lost; the half would have to move by exactly 2^32 between two
// reads to fool it.
#pragma once

#include <cstdint>

#include "superkernel/cpu/superkernel_rt.h"

namespace sk::rt {

/// Address of the low 32 bits of c->value (endianness-aware).
inline uint32_t* counterLowWord(sk_counter* c) {
  auto* words = reinterpret_cast<uint32_t*>(&c->value);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  return words + 1;
#else
  return words;
#endif
}

/// Sleep while *addr == expected, at most timeoutNs (a safety net: callers
/// re-check their condition after every return, spurious or not).
void futexWait(uint32_t* addr, uint32_t expected, int64_t timeoutNs);

/// Wake every thread sleeping on addr.
void futexWakeAll(uint32_t* addr);

}  // namespace sk::rt
