// Block coarsening: many blocks of one op on one core become one block.
//
// A core runs an op's blocks b = c, c + cores, ... one call each; with
// block_dim >> cores that is block_dim / cores calls per op per core, each
// paying the call, its sk_block_rt setup and the kernel's own prologue
// (~10 ns), which on tiny ops costs more than the work (block_dim 40 on 2
// cores was 12x the block_dim-2 time on a chain of 64-float adds).
//
// Guarantees: in a fused step, an op
// whose kernel declares "block_dim_invariant": true (its outputs do not
// depend on block_dim; blocks only split the work) and neither early_start
// nor kernel_sync, and whose block_dim exceeds its queue's cores, runs with
// block_dim = the queue's cores: one block, one call per core, covering the
// contiguous union of the slices its declared blocks would have had. Every
// later pass (dependencies, sync selection, flags) sees the new block_dim,
// so the synchronization is derived for what really runs. Unfused steps
// keep the declared block_dim: the unfused reference run checks the
// declaration (fused and unfused results must be identical).
#include <spdlog/spdlog.h>

#include "plan/PlanInternal.h"

namespace sk::plan {

void coarsenBlocks(const PlanContext& ctx, SuperKernelPlan& sk) {
  if (!sk.fused) return;
  uint32_t changed = 0;
  for (PlannedOp& op : sk.ops) {
    const KernelDecl& k = ctx.kernels.at(ctx.list.ops[op.opIndex].kernel);
    const uint32_t cores = sk.queues.at(op.queue).numCores;
    if (!coarsensToCores(k) || op.blockDim <= cores) continue;
    op.blockDim = cores;
    ++changed;
  }
  if (changed) spdlog::debug("plan {}: {} op(s) coarsened to one block per core", sk.name, changed);
}

}  // namespace sk::plan
