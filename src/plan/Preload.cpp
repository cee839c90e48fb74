// Preload schedule.
//
// Guarantees: for each op, preloadVariant is the variant of the next op in
// the same queue whose variant differs from this op's (the code the core
// will need next and does not already run), or -1 when there is none, the
// step is a single unfused op, preload-code=none, or that code is still hot:
// one of the kHotOps ops before this one in the queue ran the same variant.
// Byte counts come from KernelVariant::codeBytes, which the driver fills from
// the object file.
#include "plan/PlanInternal.h"

namespace sk::plan {
namespace {

// Why a window of two ops: the code a core ran one or two ops ago is still in
// its instruction cache (three sub-kernels of a few KiB each against an L1i
// of 32 KiB or more), so prefetching it again only spends issue slots on the
// path into the op. A chain that alternates two kernels (llama.cpp's
// test-barrier graph) preloaded the other kernel before every op: 32
// prefetches per boundary for code the core had just run. The code sizes are
// not known here (the driver measures them after planning), hence a count of
// ops rather than of bytes.
constexpr size_t kHotOps = 2;

}  // namespace

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
      for (size_t back = 1; back <= kHotOps && back <= i && op.preloadVariant >= 0; ++back)
        if (static_cast<int>(sk.ops[q.ops[i - back]].variant) == op.preloadVariant) op.preloadVariant = -1;
    }
  }
}

}  // namespace sk::plan
