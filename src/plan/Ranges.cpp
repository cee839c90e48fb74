// Element ranges per block and the producer blocks a consumer block needs.
//
// Guarantees: exact for "block" partitions (the same arithmetic as
// sk_block_range in the cpu ABI), conservative for "all" (every block may
// touch every element of its argument); a consumer block's requirement is
// the hull of the exact per-argument intervals, so it never misses a
// producer block that writes (or reads, for WAR) an element it touches.
#include <algorithm>

#include "plan/PlanInternal.h"

namespace sk::plan {

ElemRange blockRange(const BoundArg& a, uint32_t B, uint32_t b) {
  if (a.partition == Partition::All || B <= 1) return {a.offset, a.offset + a.count};
  uint64_t per = a.count / B;
  uint64_t lo = a.offset + per * b;
  uint64_t hi = (b + 1 == B) ? a.offset + a.count : lo + per;
  return {lo, hi};
}

}  // namespace sk::plan

namespace sk {
uint64_t blockFirstElement(const BoundArg& a, uint32_t B, uint32_t b) { return plan::blockRange(a, B, b).lo; }
}  // namespace sk

namespace sk::plan {

BlockInterval overlappingBlocks(const BoundArg& pa, uint32_t Bp, ElemRange r) {
  uint64_t lo = std::max(r.lo, pa.offset);
  uint64_t hi = std::min(r.hi, pa.offset + pa.count);
  if (lo >= hi || Bp == 0) return BlockInterval::none();
  if (pa.partition == Partition::All || Bp == 1) return {0, Bp - 1};
  uint64_t per = pa.count / Bp;
  // Element e (relative) belongs to block min(e / per, Bp - 1); with per == 0
  // every element is in the last block.
  if (per == 0) return {Bp - 1, Bp - 1};
  uint64_t klo = std::min<uint64_t>((lo - pa.offset) / per, Bp - 1);
  uint64_t khi = std::min<uint64_t>((hi - 1 - pa.offset) / per, Bp - 1);
  return {static_cast<uint32_t>(klo), static_cast<uint32_t>(khi)};
}

namespace {
int depRank(DepKind d) { return d == DepKind::RAW ? 3 : d == DepKind::WAW ? 2 : 1; }
}  // namespace

Requirement requirement(const PlannedOp& p, const PlannedOp& c) {
  Requirement req;
  bool any = false;
  int best = 0;
  for (const BoundArg& pa : p.args) {
    if (!pa.touchesBuffer()) continue;
    for (const BoundArg& ca : c.args) {
      if (!ca.touchesBuffer() || ca.buffer != pa.buffer) continue;
      if (!writes(pa.access) && !writes(ca.access)) continue;
      // Whole-argument overlap first: most pairs are disjoint.
      if (std::max(pa.offset, ca.offset) >= std::min(pa.offset + pa.count, ca.offset + ca.count)) continue;
      bool pairAny = false;
      if (req.need.empty()) req.need.assign(c.blockDim, BlockInterval::none());
      for (uint32_t b = 0; b < c.blockDim; ++b) {
        BlockInterval k = overlappingBlocks(pa, p.blockDim, blockRange(ca, c.blockDim, b));
        if (!k.empty()) pairAny = true;
        req.need[b].merge(k);
      }
      if (!pairAny) continue;
      any = true;
      DepKind d = writes(pa.access) && reads(ca.access) ? DepKind::RAW
                  : writes(pa.access) && writes(ca.access) ? DepKind::WAW
                                                           : DepKind::WAR;
      if (depRank(d) > best) {
        best = depRank(d);
        req.dep = d;
        req.buffer = pa.buffer;
      }
    }
  }
  if (!any) req.need.clear();
  return req;
}

}  // namespace sk::plan
