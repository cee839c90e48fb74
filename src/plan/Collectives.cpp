// Collectives (docs/COLLECTIVES.md): lowering and the report's lines.
//
// Guarantees: lowerCollectives returns the list with every Collective op
// replaced, at the same index, by a one-block Launch of the target's
// collective kernel (MachineModel::collectiveSource), one kernel per dtype
// named "sk.collective.<dtype>". Its buffers are read and written with
// partition "all", so the ordinary passes give it what a collective needs:
// it starts only once every producer of its input has finished on this rank
// (the other ranks' inputs are the runtime's business: it exchanges them), its
// consumers wait for all of it, and ops that do not depend on it run beside
// it on the other cores (early start). The scalars carry everything the
// runtime checks across ranks: the kind, reduction and dtype (desc), the
// group as a rank mask, and a tag from the op's name and the plan's
// collective signature, so ranks whose plans disagree fail with one error
// naming the op instead of exchanging mismatched data. The tag's low 32 bits
// are the hash of the op's name alone (support/CollectiveTag.h): a runtime that knows the
// step's op names but not which op called it (cuda-sim's device) names the op
// by them; the high 32 bits carry the signature.
//
// orderCollectives guarantees that a fused step's collectives start in
// recorded order on every rank. Ranks pair their collectives by order (a
// peer's next header must be this rank's next collective), so two
// collectives that could start in either order would pair wrongly on ranks
// that take them differently: the mismatch error for one group, and for
// groups that overlap in a cycle (rank 0 takes {0,1} then {0,2}, rank 1
// {1,2} then {0,1}, rank 2 {0,2} then {1,2}) a wait with no end but the
// wait limit. On one queue the queue's order already is recorded order (a
// collective is one block, on the queue's first core); across queues
// (stream-fusion=1, or a machine with several core pools) an event edge
// from the previous collective says so. It costs one wait, between
// collectives that would otherwise run at once: the communicator runs one
// at a time anyway.
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "plan/PlanInternal.h"
#include "superkernel/frontend/OpListPaths.h"
#include "support/CollectiveTag.h"
#include "support/Fnv1a.h"

namespace sk::plan {

namespace {

// desc's layout, shared with the runtime (kernel.h, sk_collective_args):
// kind | reduce << 8 | dtype << 16, each the op list's enum value.
uint64_t packDesc(const Op& op, DType dt) {
  return uint64_t(op.collective) | uint64_t(op.reduce) << 8 | uint64_t(dt) << 16;
}

std::string describe(const OpList& list, const Op& op, DType dt, uint64_t nIn) {
  const CollectiveGroup& g = list.groups.at(op.group);
  std::string ranks;
  for (uint32_t r : g.ranks) ranks += (ranks.empty() ? "" : ",") + std::to_string(r);
  return fmt::format("{}{}{} of {} {} over group {} (ranks {})", collectiveKindName(op.collective),
                     op.reduce == ReduceOp::None ? "" : " ", reduceOpName(op.reduce), nIn, dtypeName(dt), op.group,
                     ranks);
}

// A u64 scalar spelt as the parser spells it: int64_t up to INT64_MAX.
ScalarValue u64(uint64_t v) {
  return v > uint64_t(INT64_MAX) ? ScalarValue{v} : ScalarValue{int64_t(v)};
}

uint64_t elementsOf(const OpList& list, const BufferRef& r) {
  return r.isView ? r.count : list.findBuffer(r.buffer)->elements();
}

}  // namespace

bool hasCollectives(const OpList& list) {
  for (const Op& op : list.ops)
    if (op.kind == Op::Kind::Collective) return true;
  return false;
}

Expected<OpList> lowerCollectives(const OpList& list, const MachineModel& machine,
                                  std::map<uint32_t, std::string>& described) {
  OpList out = list;
  // The plan's collective signature: every collective's name, kind, dtype,
  // sizes and group in order. Ranks that disagree on any of it disagree on
  // the tag of some collective (the runtime names the op and the rank).
  uint64_t signature = fnv1a(std::string("superkernel.collectives.v1"));
  for (const Op& op : list.ops) {
    if (op.kind != Op::Kind::Collective) continue;
    const BufferRef& in = op.findArg("in")->buffer();
    const BufferRef& o = op.findArg("out")->buffer();
    std::string rec = fmt::format("{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f", op.name, int(op.collective), int(op.reduce),
                                  int(list.findBuffer(in.buffer)->dtype), elementsOf(list, in), elementsOf(list, o));
    for (uint32_t r : list.groups.at(op.group).ranks) rec += std::to_string(r) + ",";
    signature = fnv1a(rec, signature);
  }
  // The largest input of each dtype's collectives, in bytes: the cuda target's kernel (NCCL's device API)
  // copies its input into a window the host registers before the SuperKernel's first run, sized by it
  // (SK_COLL_MAX_BYTES).
  std::map<DType, uint64_t> maxBytes;
  for (const Op& op : list.ops) {
    if (op.kind != Op::Kind::Collective) continue;
    const BufferRef& in = op.findArg("in")->buffer();
    const DType dt = list.findBuffer(in.buffer)->dtype;
    maxBytes[dt] = std::max(maxBytes[dt], elementsOf(list, in) * dtypeSize(dt));
  }
  std::set<DType> kernels;
  for (size_t i = 0; i < out.ops.size(); ++i) {
    Op& op = out.ops[i];
    if (op.kind != Op::Kind::Collective) continue;
    if (machine.collectiveSource.empty())
      return oplist::pathError(list.origin, oplist::opPath(i),
                               "target " + list.target + " has no collective ops yet (" + collectiveKindName(op.collective) +
                                   " " + oplist::quote(op.name) +
                                   "); run the list on a target that has them (docs/COLLECTIVES.md lists them)");
    const BufferRef in = op.findArg("in")->buffer();
    const BufferRef o = op.findArg("out")->buffer();
    const DType dt = list.findBuffer(in.buffer)->dtype;
    if (collectiveReduces(op.collective) && !machine.collectiveReduceDTypes.empty() &&
        std::find(machine.collectiveReduceDTypes.begin(), machine.collectiveReduceDTypes.end(), dt) ==
            machine.collectiveReduceDTypes.end())
      return oplist::pathError(list.origin, oplist::opPath(i),
                               fmt::format("target {} cannot reduce {} in a collective ({} {}): {}; run the list on "
                                           "another target or reduce another type",
                                           list.target, dtypeName(dt), collectiveKindName(op.collective),
                                           oplist::quote(op.name), machine.collectiveReduceWhy));
    const uint64_t nIn = elementsOf(list, in), nOut = elementsOf(list, o);
    uint64_t mask = 0;
    for (uint32_t r : list.groups.at(op.group).ranks) mask |= uint64_t{1} << r;
    described[static_cast<uint32_t>(i)] = describe(list, op, dt, nIn);
    const std::string kernel = std::string(kCollectiveKernelPrefix) + dtypeName(dt);
    if (kernels.insert(dt).second) {
      KernelDecl k;
      k.name = kernel;
      k.source = machine.collectiveSource;
      k.sourcePath = machine.collectiveSource;
      k.entry = "sk_collective_kernel";
      k.params = {
          ParamDecl{"in", ParamKind::Buffer, dt, Access::Read, Partition::All, false},
          ParamDecl{"out", ParamKind::Buffer, dt, Access::Write, Partition::All, false},
          ParamDecl{"n_in", ParamKind::Scalar, DType::I64, Access::Read, Partition::All, false},
          ParamDecl{"n_out", ParamKind::Scalar, DType::I64, Access::Read, Partition::All, false},
          ParamDecl{"desc", ParamKind::Scalar, DType::U64, Access::Read, Partition::All, false},
          ParamDecl{"ranks", ParamKind::Scalar, DType::U64, Access::Read, Partition::All, false},
          ParamDecl{"tag", ParamKind::Scalar, DType::U64, Access::Read, Partition::All, false},
      };
      k.macros["COLL_T"] = dtypeCType(dt);
      // The dtype's name (f16 and bf16 share a C type) names the object's NCCL binding on cuda.
      k.macros["SK_COLL_DTYPE"] = dtypeName(dt);
      k.macros["SK_COLL_MAX_BYTES"] = std::to_string(maxBytes[dt]);
      out.kernels.push_back(std::move(k));
    }
    Op launch;
    launch.kind = Op::Kind::Launch;
    launch.name = op.name;
    launch.kernel = kernel;
    launch.blockDim = 1;
    launch.stream = op.stream;
    launch.scope = op.scope;
    launch.scopeNull = op.scopeNull;
    launch.fusible = op.fusible;
    launch.fusibleWritten = op.fusibleWritten;
    launch.args.emplace_back("in", ArgValue{in});
    launch.args.emplace_back("out", ArgValue{o});
    launch.args.emplace_back("n_in", ArgValue{ScalarValue{int64_t(nIn)}});
    launch.args.emplace_back("n_out", ArgValue{ScalarValue{int64_t(nOut)}});
    launch.args.emplace_back("desc", ArgValue{u64(packDesc(op, dt))});
    launch.args.emplace_back("ranks", ArgValue{u64(mask)});
    launch.args.emplace_back("tag", ArgValue{u64(collectiveTag(op.name, signature))});
    op = std::move(launch);
  }
  return out;
}

void orderCollectives(const SuperKernelPlan& sk, const std::map<uint32_t, std::string>& described,
                      std::vector<DepEdge>& edges) {
  if (!sk.fused || described.empty()) return;
  std::vector<uint32_t> colls;  // sk op indices, in recorded order
  for (uint32_t i = 0; i < sk.ops.size(); ++i)
    if (described.count(sk.ops[i].opIndex)) colls.push_back(i);
  std::sort(colls.begin(), colls.end(), [&](uint32_t a, uint32_t b) { return sk.ops[a].opIndex < sk.ops[b].opIndex; });
  std::set<std::pair<uint32_t, uint32_t>> joined;
  for (const DepEdge& e : edges) joined.insert({e.edge.producer, e.edge.consumer});
  bool added = false;
  for (size_t k = 1; k < colls.size(); ++k) {
    const uint32_t p = colls[k - 1], c = colls[k];
    if (sk.ops[p].queue == sk.ops[c].queue || joined.count({p, c})) continue;
    edges.push_back(eventEdge(sk, p, c));
    added = true;
  }
  if (added) sortEdges(edges);
}

void reportCollectives(FusionPlan& plan, const std::map<uint32_t, std::string>& described) {
  plan.report.collectives.clear();
  for (const auto& entry : described) {
    // Not a structured binding: clang 14 cannot capture one in the lambda below.
    const uint32_t opIndex = entry.first;
    const std::string& what = entry.second;
    for (size_t si = 0; si < plan.steps.size(); ++si) {
      const SuperKernelPlan& sk = plan.steps[si];
      auto at = std::find_if(sk.ops.begin(), sk.ops.end(), [&](const PlannedOp& o) { return o.opIndex == opIndex; });
      if (at == sk.ops.end()) continue;
      const auto c = static_cast<uint32_t>(at - sk.ops.begin());
      std::string line = fmt::format("{}: {}, in [{}] {}", at->name, what, si, sk.name);
      if (!sk.fused) {
        plan.report.collectives.push_back(line + " (unfused: the launch boundary orders it)");
        break;
      }
      // Reachability over the step's edges, both ways: what neither reaches
      // nor is reached from the collective runs beside it.
      const size_t n = sk.ops.size();
      std::vector<std::vector<uint32_t>> succ(n), pred(n);
      for (const Edge& e : sk.edges) {
        succ[e.producer].push_back(e.consumer);
        pred[e.consumer].push_back(e.producer);
      }
      auto reach = [&](const std::vector<std::vector<uint32_t>>& g) {
        std::vector<bool> seen(n, false);
        std::vector<uint32_t> todo{c};
        while (!todo.empty()) {
          uint32_t x = todo.back();
          todo.pop_back();
          for (uint32_t y : g[x])
            if (!seen[y]) seen[y] = true, todo.push_back(y);
        }
        return seen;
      };
      const std::vector<bool> after = reach(succ), before = reach(pred);
      std::string waits, beside;
      for (const Edge& e : sk.edges)
        if (e.consumer == c) waits += (waits.empty() ? "" : ", ") + sk.ops[e.producer].name + " (" + syncKindName(e.sync) + ")";
      for (uint32_t o = 0; o < n; ++o)
        if (o != c && !after[o] && !before[o]) beside += (beside.empty() ? "" : ", ") + sk.ops[o].name;
      line += fmt::format(": waits for {}; runs beside {}", waits.empty() ? "nothing" : waits,
                          beside.empty() ? "nothing (every op depends on it or it on them)" : beside + " (early start)");
      plan.report.collectives.push_back(std::move(line));
      break;
    }
  }
}

}  // namespace sk::plan
