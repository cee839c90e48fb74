// Side launches (DESIGN section 5): what a fused SuperKernel and the launches
// of other streams beside it wait for.
//
// Guarantees: for side launch k of a fused segment (Segment::sides, recorded
// order), SideLaunch::after holds every SuperKernel op recorded before it
// that conflicts with it (a buffer range both touch, one writing: the data
// edge rule of Dependencies.cpp), and SideLaunch::before every op recorded
// after it that conflicts with it; both ascending. Stream order and events
// add nothing: kernels touch memory only through their arguments, so data
// edges carry every real dependency. Every `after` op precedes every
// `before` op in the SuperKernel's op order (recorded order), and side
// launches of one stream run in recorded order, so no wait can close a
// cycle; validatePlan re-checks the indices. Side launch k is step
// firstSideStep + k.
#include "plan/PlanInternal.h"

namespace sk::plan {

void linkSides(const PlanContext& ctx, const Segment& seg, SuperKernelPlan& sk, uint32_t firstSideStep) {
  sk.sides.clear();
  for (size_t k = 0; k < seg.sides.size(); ++k) {
    const uint32_t at = seg.sides[k].ops.at(0);
    SideLaunch side;
    side.step = firstSideStep + static_cast<uint32_t>(k);
    side.stream = ctx.list.ops[at].stream;
    for (uint32_t o = 0; o < sk.ops.size(); ++o) {
      const uint32_t li = sk.ops[o].opIndex;
      if (li < at && launchesConflict(ctx, li, at)) side.after.push_back(o);
      if (li > at && launchesConflict(ctx, at, li)) side.before.push_back(o);
    }
    sk.sides.push_back(std::move(side));
  }
}

}  // namespace sk::plan
