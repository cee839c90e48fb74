// The data preload rule (preload-data, DESIGN section 4; plan/DataPreload.cpp): which slices of which inputs a
// core prefetches when it starts an op, before the op's waits. One rule for every target: the cpu emitter prints
// each prefetch as cache-line prefetches, the cuda emitter as L2 prefetches of the CTA's slice.
#pragma once

#include <cstdint>
#include <vector>

#include "superkernel/frontend/Options.h"
#include "superkernel/plan/MachineModel.h"
#include "superkernel/plan/Plan.h"

namespace sk {

/// One prefetch a core of a queue issues: bytes [offsetBytes + c * strideBytes, + bytes) of buffer `buffer`,
/// issued by the core at index c of the queue when c < blocks (block c's slice of the input; a core whose c is
/// not a block of that op skips it).
struct DataPreload {
  uint32_t forOp = 0;         // index into SuperKernelPlan::ops: the op that reads it (the issuing op or a later one)
  uint32_t arg = 0;           // index into that op's args
  int buffer = -1;            // index into SuperKernelPlan::buffers
  uint64_t offsetBytes = 0;   // block 0's slice, from the buffer's start
  uint64_t strideBytes = 0;   // from block b's slice to block b + 1's (0: a one-block op)
  uint64_t bytes = 0;         // per core, > 0
  uint32_t blocks = 1;        // forOp's block count
  bool operator==(const DataPreload&) const = default;
};

/// preload-data as the step runs it: auto is the machine's defaultPreloadData.
PreloadData effectivePreloadData(PreloadData option, const MachineModel& m);

/// Per op of `sk` (indices as sk.ops), the prefetches its core issues when it starts the op, before its
/// waits (a barrier's arrival comes first), in order. Empty with preload-data=none and for every op of an
/// unfused step, except the Graph + PDL variant's (markGraphPdlSteps), which prefetches the slices of its
/// inputs that no op of the plan writes whatever preload-data says: the baseline loads its weights before
/// griddepcontrol.wait.
std::vector<std::vector<DataPreload>> scheduleDataPreload(const SuperKernelPlan& sk, const MachineModel& m);

/// Makes every unfused step of `plan` the Graph + PDL variant (SuperKernelPlan::graphPdl,
/// CompileRequest::graphPdl) and marks each of its buffers that no op of any step writes
/// (PlanBuffer::readOnlyInPlan): those are the weights it may prefetch before it waits for the previous launch.
void markGraphPdlSteps(FusionPlan& plan);

}  // namespace sk
