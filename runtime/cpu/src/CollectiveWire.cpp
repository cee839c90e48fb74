// The transports' shared checks, combine and messages (CollectiveWire.h).
#include "CollectiveWire.h"

#include "superkernel/cpu/superkernel_rt.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

namespace sk::coll {

namespace {

// Element sizes and names by the op list's dtype order (OpList.h DType).
constexpr size_t kDTypeSize[] = {4, 8, 2, 2, 1, 2, 4, 8, 1, 2, 4, 8, 1};
constexpr const char* kDTypeName[] = {"f32", "f64", "f16", "bf16", "i8", "i16", "i32", "i64",
                                      "u8",  "u16", "u32", "u64", "bool"};
constexpr const char* kKindName[] = {"all_reduce", "all_gather", "reduce_scatter", "all_to_all"};
constexpr const char* kReduceName[] = {"", " sum", " max"};

std::string what(const Header& h) {
  Desc d = Desc::of(h.desc);
  if (!d.valid()) return "an unknown collective";
  return fmt::format("{}{} of {} {} in, {} out", kKindName[d.kind], kReduceName[d.reduce], h.nIn, kDTypeName[d.dtype],
                     h.nOut);
}

std::string rankList(uint64_t mask) {
  std::string s;
  for (uint32_t r = 0; r < 64; ++r)
    if (mask >> r & 1) s += (s.empty() ? "" : ",") + std::to_string(r);
  return s;
}

// Element by element, every member's value in group order: (((x0 op x1) op x2) ...). One pass, so a source
// that aliases `out` (the MPI transport's in-place all_reduce reads this rank's part from `in`) is read at i
// before i is written. Two members, the tensor-parallel pair, get a loop of their own that the compiler
// vectorises (it checks the overlap at run time); the reduction is chosen outside the loops.
template <typename T, typename Op>
void combineWith(T* out, const T* const* src, size_t members, int64_t n, Op op) {
  if (members == 2) {
    const T* a = src[0];
    const T* b = src[1];
    for (int64_t i = 0; i < n; ++i) out[i] = op(a[i], b[i]);
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    T acc = src[0][i];
    for (size_t j = 1; j < members; ++j) acc = op(acc, src[j][i]);
    out[i] = acc;
  }
}

template <typename T>
void combine(T* out, const T* const* src, size_t members, int64_t n, uint32_t reduce) {
  if (reduce == 2) combineWith(out, src, members, n, [](T x, T y) { return std::max(x, y); });
  else combineWith(out, src, members, n, [](T x, T y) { return T(x + y); });
}

void combineAny(void* out, const Parts& src, size_t members, int64_t n, uint32_t dtype, uint32_t reduce) {
  auto run = [&](auto tag) {
    using T = decltype(tag);
    std::array<const T*, Call::kMaxMembers> s{};
    for (size_t j = 0; j < members; ++j) s[j] = static_cast<const T*>(src[j]);
    combine(static_cast<T*>(out), s.data(), members, n, reduce);
  };
  switch (dtype) {
    case 0: run(float{}); break;
    case 1: run(double{}); break;
    case 6: run(int32_t{}); break;
    case 7: run(int64_t{}); break;
    default: break;  // the validator allows reductions of these four only
  }
}

}  // namespace

Expected<Call> callOf(const sk_collective_args& a, const std::string& op, int rank, int size) {
  Call c;
  c.desc = Desc::of(a.desc);
  if (!c.desc.valid()) return internalError("collective op " + op + ": bad descriptor");
  for (int r = 0; r < 64; ++r)
    if (a.ranks >> r & 1) c.members[c.count++] = r;
  if (c.count == 0 || c.members[c.count - 1] >= size)
    return runtimeError(fmt::format("collective op {}: its group has ranks {}, but this run has {} rank{} (start it "
                                    "with mpirun -np {})",
                                    op, rankList(a.ranks), size, size == 1 ? "" : "s",
                                    c.count == 0 ? 1 : c.members[c.count - 1] + 1));
  c.me = size_t(std::find(c.members.begin(), c.members.begin() + long(c.count), rank) - c.members.begin());
  if (c.me == c.count)
    return runtimeError(fmt::format("collective op {}: rank {} is not in its group (ranks {}); every rank that runs "
                                    "the op list must be in the groups of its collectives",
                                    op, rank, rankList(a.ranks)));
  c.elementSize = kDTypeSize[c.desc.dtype];
  c.chunked = c.desc.kind == 2 || c.desc.kind == 3;
  c.perPeer = c.chunked ? a.n_in / int64_t(c.size()) : a.n_in;
  return c;
}

std::string mismatch(const Header& mine, const Header& h, const std::string& op, int rank, int peerRank) {
  if (h.magic == kMagic && h.tag == mine.tag && h.desc == mine.desc && h.nIn == mine.nIn && h.nOut == mine.nOut &&
      h.ranks == mine.ranks)
    return {};
  std::string diff;
  if (h.magic != kMagic) diff = "a message that is not a superkernel collective";
  else if (h.desc != mine.desc || h.ranks != mine.ranks) diff = what(h) + " over ranks " + rankList(h.ranks);
  else if (h.nIn != mine.nIn || h.nOut != mine.nOut) diff = "the same collective with buffers of " + what(h);
  else diff = "another op (its op list differs from this rank's: another op here, or other collectives before it)";
  return fmt::format(
      "collective op {} on rank {} ({} over ranks {}): rank {} runs {}: ranks disagree on the plan (every rank must "
      "run the same op list, with the same collectives, buffer sizes and groups)",
      op, rank, what(mine), rankList(mine.ranks), peerRank, diff);
}

std::string noAnswer(const std::string& op, int rank, const std::string& missing, uint32_t timeoutMs) {
  return fmt::format(
      "collective op {} on rank {}: no answer from {} within {} ms (a rank died, hangs, or runs another plan); "
      "every rank must run the same op list (SK_WAIT_TIMEOUT_MS sets the limit)",
      op, rank, missing.empty() ? "a peer" : missing, timeoutMs);
}

void finish(const Call& c, const sk_collective_args& a, Parts src) {
  auto* out = static_cast<char*>(a.out);
  const size_t bytes = c.perPeerBytes();
  switch (c.desc.kind) {
    case 0:  // all_reduce: in and out are the same elements or disjoint (validated)
    case 2:  // reduce_scatter: this rank's chunk of every input
      combineAny(out, src, c.size(), c.perPeer, c.desc.dtype, c.desc.reduce);
      break;
    case 1:  // all_gather: out = parts in group order (out never overlaps in)
      for (size_t j = 0; j < c.size(); ++j) std::memcpy(out + bytes * j, src[j], bytes);
      break;
    case 3: {  // all_to_all: out chunk j = member j's chunk for this rank
      // In place (the MPI transport reads this rank's chunk from `in`, which may be `out`), that chunk would be
      // overwritten before it is copied: copy it aside first. Shared memory reads it from the slot: no copy.
      const char* own = static_cast<const char*>(src[c.me]);
      std::vector<char> aside;
      if (own < out + bytes * c.size() && out < own + bytes) {
        aside.assign(own, own + bytes);
        src[c.me] = aside.data();
      }
      for (size_t j = 0; j < c.size(); ++j) std::memcpy(out + bytes * j, src[j], bytes);
      break;
    }
    default: break;
  }
}

void pace(uint64_t waitedNs, uint32_t spin) {
  if (waitedNs > 2'000'000) std::this_thread::sleep_for(std::chrono::microseconds(waitedNs > 100'000'000 ? 200 : 20));
  else if (spin > 16) std::this_thread::yield();
  else sk_cpu_relax();
}

}  // namespace sk::coll
