// Core and queue assignment.
//
// Guarantees:
// - Fused SuperKernel: numCores = debug-core-num if set, else numWorkers.
//   stream-fusion=0: one queue (stream of the first op) on all cores, ops in
//   recorded order. stream-fusion=1: one queue per stream present, ordered
//   by stream id, cores split evenly (the first numCores % k queues get one
//   more), each >= 1 core (segment formation guarantees k <= numCores).
// - Unfused step: one queue, numCores = min(numWorkers, blockDim) — the
//   executor's plain launch puts block b on worker b % numWorkers, which is
//   the same core mapping (block b -> core b % numCores).
// - Block b of an op runs on core queue.firstCore + b % queue.numCores.
// - A kernel_sync op's blockDim fits its queue (else BadInput, never a hang).
#include <set>

#include "frontend/OpListInternal.h"
#include "plan/PlanInternal.h"

namespace sk::plan {

Status assignQueues(const PlanContext& ctx, SuperKernelPlan& sk) {
  uint32_t workers = ctx.config.numWorkers;
  if (!sk.fused) {
    PlannedOp& op = sk.ops.at(0);
    sk.numCores = std::max<uint32_t>(1, std::min(workers, op.blockDim));
    sk.queues = {Queue{op.stream, 0, sk.numCores, {0}}};
    op.queue = 0;
  } else {
    sk.numCores = sk.options.debugCoreNum > 0 ? static_cast<uint32_t>(sk.options.debugCoreNum) : workers;
    if (!sk.options.streamFusion) {
      Queue q{sk.ops.at(0).stream, 0, sk.numCores, {}};
      for (uint32_t i = 0; i < sk.ops.size(); ++i) {
        q.ops.push_back(i);
        sk.ops[i].queue = 0;
      }
      sk.queues = {q};
    } else {
      std::set<uint32_t> streams;
      for (const auto& op : sk.ops) streams.insert(op.stream);
      uint32_t k = static_cast<uint32_t>(streams.size());
      if (k > sk.numCores)
        return internalError("SuperKernel " + sk.name + ": " + std::to_string(k) + " streams on " +
                             std::to_string(sk.numCores) + " cores (segment formation should have split)");
      std::map<uint32_t, uint32_t> queueOf;
      uint32_t first = 0, qi = 0;
      for (uint32_t s : streams) {
        uint32_t n = sk.numCores / k + (qi < sk.numCores % k ? 1 : 0);
        sk.queues.push_back(Queue{s, first, n, {}});
        queueOf[s] = qi++;
        first += n;
      }
      for (uint32_t i = 0; i < sk.ops.size(); ++i) {
        sk.ops[i].queue = queueOf.at(sk.ops[i].stream);
        sk.queues[sk.ops[i].queue].ops.push_back(i);
      }
    }
  }
  for (const auto& op : sk.ops)
    if (op.kernelSync && op.blockDim > sk.queues[op.queue].numCores)
      return detail::pathError(ctx.list.origin, detail::opPath(op.opIndex),
                               "kernel_sync op " + detail::quote(op.name) + " needs " + std::to_string(op.blockDim) +
                                   " cores at once, its queue has " + std::to_string(sk.queues[op.queue].numCores));
  return Status::success();
}

}  // namespace sk::plan
