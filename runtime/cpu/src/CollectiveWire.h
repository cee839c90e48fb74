// What every transport of the cpu communicator shares (docs/COLLECTIVES.md):
// the header a member shows each peer before its data, the check of a peer's
// header against this rank's, the group of one call as this rank sees it, the
// combine in group order that makes the ranks bit-identical, and the error
// texts. MPI (MpiCommunicator.cpp) and shared memory (ShmCommunicator.cpp)
// move the bytes differently; what they check, how they combine and what
// they say when a rank disagrees or never answers live here, once, so the
// two transports cannot drift apart.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "superkernel/cpu/kernel.h"
#include "superkernel/support/Error.h"

namespace sk::coll {

constexpr uint64_t kMagic = 0x736b636f6c6c3031ull;  // "skcoll01"

// The header a member shows each peer before its data.
struct Header {
  uint64_t magic = kMagic;
  uint64_t tag = 0;
  uint64_t desc = 0;
  int64_t nIn = 0;
  int64_t nOut = 0;
  uint64_t ranks = 0;
};

// sk_collective_args::desc: kind | reduce << 8 | dtype << 16 (the planner's packDesc).
struct Desc {
  uint32_t kind = 0, reduce = 0, dtype = 0;
  static Desc of(uint64_t d) { return {uint32_t(d & 0xff), uint32_t((d >> 8) & 0xff), uint32_t((d >> 16) & 0xff)}; }
  bool valid() const { return kind < 4 && reduce < 3 && dtype < 13; }
};

/// One call as this rank sees it: the group's ranks in group order, this
/// rank's place in it, and what each member sends each peer.
struct Call {
  /// At most 64 ranks (the group is a 64-bit mask). Fixed arrays, not
  /// vectors: a decode step makes dozens of calls, none should allocate.
  static constexpr size_t kMaxMembers = 64;
  Desc desc;
  std::array<int, kMaxMembers> members{};
  size_t count = 0;
  size_t me = 0;
  size_t elementSize = 0;
  /// reduce_scatter and all_to_all: each peer gets its own chunk of `in`.
  bool chunked = false;
  /// Elements each member sends each peer: all of `in`, or one chunk.
  int64_t perPeer = 0;
  size_t size() const { return count; }
  size_t perPeerBytes() const { return size_t(perPeer) * elementSize; }
};

/// The call's group, or the error naming `op`: a bad descriptor, a group
/// with ranks this run does not have, this rank outside the group.
Expected<Call> callOf(const sk_collective_args& a, const std::string& op, int rank, int size);

/// "" when `theirs` (member `peerRank`'s header) is the same collective as
/// `mine`; otherwise the error saying how the ranks' plans disagree.
std::string mismatch(const Header& mine, const Header& theirs, const std::string& op, int rank, int peerRank);

/// The error of a wait that ran past `timeoutMs`: `missing` names the ranks.
std::string noAnswer(const std::string& op, int rank, const std::string& missing, uint32_t timeoutMs);

/// Member j's part (its contribution to this rank), for finish().
using Parts = std::array<const void*, Call::kMaxMembers>;

/// Writes `out` from every member's part in group order: `src[j]` is member
/// j's contribution to this rank (all of its `in`, or its chunk for this
/// rank). Sums and maxima are taken (((x0 + x1) + x2) ...), the same on every
/// rank, so every rank's result is bit-identical to the others'. `src[me]`
/// may alias `out` (in-place all_to_all copies it first).
void finish(const Call& c, const sk_collective_args& a, Parts src);

/// How a waiting member paces its polls: short waits (a peer a few to a
/// few hundred microseconds behind) dominate decode steps, so it polls,
/// yields the core between polls once the wait is not immediate (on a free
/// core sched_yield returns at once; on an oversubscribed one it lets the
/// peer run), and sleeps only once the wait is long (2 ms), where a sleep's
/// late wake-up (tens of microseconds) is small against the wait. A count
/// of polls alone is no bound on time: it could end within ten microseconds
/// and sleep through the rest of a short wait.
void pace(uint64_t waitedNs, uint32_t spin);

}  // namespace sk::coll
