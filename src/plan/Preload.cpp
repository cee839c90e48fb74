// Preload schedule.
//
// Guarantees: for each op, preloadVariant is the variant of the next op in
// the same queue whose variant differs from this op's (the code the core
// will need next and does not already run), or -1 when there is none, the
// step is a single unfused op, or preload-code=none. Byte counts come from
// KernelVariant::codeBytes, which the driver fills from the object file.
#include "plan/PlanInternal.h"

namespace sk::plan {

void schedulePreload(SuperKernelPlan& sk) {
  for (auto& op : sk.ops) op.preloadVariant = -1;
  if (!sk.fused || sk.options.preloadCode == PreloadCode::None) return;
  for (const Queue& q : sk.queues) {
    int next = -1;  // preloadVariant of the op after the current one
    for (size_t i = q.ops.size(); i-- > 0;) {
      PlannedOp& op = sk.ops[q.ops[i]];
      if (i + 1 < q.ops.size()) {
        const PlannedOp& after = sk.ops[q.ops[i + 1]];
        next = after.variant != op.variant ? static_cast<int>(after.variant) : next;
      }
      op.preloadVariant = next;
    }
  }
}

}  // namespace sk::plan
