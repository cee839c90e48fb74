// FusionPlan step -> AscendStep, for both targets (see AscendStep.h for the guarantee).
#include "backends/ascend/AscendStep.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>

#include "superkernel/codegen/Emitter.h"
#include "support/Fnv1a.h"
#include "backends/ascend/AscendBuild.h"

namespace sk::ascend {

const char* poolName(Pool p) { return p == Pool::Cube ? "cube" : "vector"; }

uint32_t AscendStep::coresToFeed(const AscendOp& op) const {
  return op.kernelSync && fused ? poolCores(op.pool) - std::min(op.blockDim, poolCores(op.pool)) : 0;
}

uint32_t AscendStep::poolCores(Pool p) const {
  const uint32_t aic = (type == KernelType::AivOnly || type == KernelType::MixAiv1_0) ? 0 : blockDim;
  if (p == Pool::Cube) return aic;
  switch (type) {
    case KernelType::AivOnly:
    case KernelType::MixAiv1_0:
    case KernelType::MixAic1_1: return blockDim;
    case KernelType::MixAic1_2: return 2 * blockDim;
    default: return 0;
  }
}

namespace {

// feed-sync-all (AscendStep::coresToFeed says who feeds). makeAscendStep refuses a cube kernel_sync op and
// one to feed without a SyncAll count, naming the kernel; a hand-built step that has one is a bug upstream.
Status checkFeedSyncAll(const AscendStep& s) {
  for (const AscendOp& op : s.ops) {
    if (!op.kernelSync) continue;
    if (op.pool != Pool::Vector) return internalError(fmt::format("op {}: a cube kernel_sync sub-kernel", op.name));
    const uint32_t feed = s.coresToFeed(op);
    if (feed == 0) continue;  // its blocks are every vector core: SyncAll is a barrier among them already
    if (op.syncAllCalls == 0) {
      return internalError(fmt::format("op {}: kernel_sync without a SyncAll count", op.name));
    }
    if (!s.options.feedSyncAll) {
      return badInput(fmt::format(
          "op {} syncs its own blocks (kernel_sync): its AscendC::SyncAll is a barrier over all {} vector cores of "
          "SuperKernel {}, but it runs on {} of them, so it would wait forever for the other {}; set "
          "feed-sync-all=1 (those cores then call SyncAll {} time(s) at the op) or give the op {} blocks",
          op.name, s.poolCores(op.pool), s.name, op.blockDim, feed, op.syncAllCalls, s.poolCores(op.pool)));
    }
  }
  return Status::success();
}

}  // namespace

Status validateAscendStep(const AscendStep& s) {
  for (const AscendOp& op : s.ops) {
    if (op.ownEarlyStart && !op.runtimeScalars.empty()) {
      return internalError(fmt::format("op {}: starts early itself but reads a runtime value (read after its waits)",
                                       op.name));
    }
    for (const auto& [param, slot] : op.runtimeScalars) {
      if (slot >= s.runtimeValues.size()) {
        return internalError(fmt::format("op {} argument {}: runtime slot {} of {}", op.name, param, slot,
                                         s.runtimeValues.size()));
      }
    }
    if (op.blockDim == 0 || op.blockDim > s.poolCores(op.pool)) {
      return internalError(fmt::format("op {}: {} block(s) on {} {} core(s)", op.name, op.blockDim,
                                       s.poolCores(op.pool), poolName(op.pool)));
    }
  }
  return checkFeedSyncAll(s);
}

Expected<AscendStep> makeAscendStep(const FusionPlan& plan, size_t stepIndex) {
  if (stepIndex >= plan.steps.size()) return internalError(fmt::format("step {} of {}", stepIndex, plan.steps.size()));
  const SuperKernelPlan& sk = plan.steps[stepIndex];
  AscendStep s;
  s.name = sk.name;
  s.fused = sk.fused;
  s.options = sk.options;
  s.buffers = sk.buffers;
  if (sk.ops.empty()) return internalError("a step without ops");
  // Runtime values: one slot each, passed by address with every launch (at most kMaxRuntimeValues).
  if (sk.runtimeValues.size() > kMaxRuntimeValues) {
    std::string which;
    for (size_t k = 0; k < sk.runtimeValues.size(); ++k) {
      const RuntimeValue& rv = sk.runtimeValues[k];
      const std::string buf = rv.buffer >= 0 && static_cast<size_t>(rv.buffer) < sk.buffers.size()
                                  ? sk.buffers[static_cast<size_t>(rv.buffer)].name
                                  : "?";
      which += fmt::format("{}{}[{}]", k ? ", " : "", buf, rv.element);
    }
    return badInput(fmt::format("step {}: its ops read {} distinct runtime values ({}); an ascend launch passes at "
                                "most {} (one slot each): read fewer distinct elements in one step, or keep the ops "
                                "in separate SuperKernels",
                                sk.name, sk.runtimeValues.size(), which, kMaxRuntimeValues));
  }
  for (const RuntimeValue& rv : sk.runtimeValues) {
    if (rv.buffer < 0 || static_cast<size_t>(rv.buffer) >= sk.buffers.size()) {
      return internalError(fmt::format("step {}: a runtime value's buffer index", sk.name));
    }
    s.runtimeValues.push_back({rv.buffer, rv.element * dtypeSize(rv.dtype), rv.dtype});
  }

  std::map<std::string, uint32_t> objectIndex;  // symbol -> object
  uint32_t maxCube = 0, maxVec = 0;
  for (const PlannedOp& op : sk.ops) {
    if (op.variant >= plan.variants.size()) return internalError(fmt::format("op {}: variant out of range", op.name));
    const KernelVariant& v = plan.variants[op.variant];
    if (v.decl.sourcePath.empty()) {
      return badInput(fmt::format("op {}: kernel {} has no Ascend C source for this plan (plan the op list for the "
                                  "ascend target: builtins resolve to kernels/ascend/<name>.json)",
                                  op.name, v.decl.name));
    }
    // The planner's declaration, resolved for the plan's target (a builtin is kernels/ascend/<name>.json's).
    const KernelDecl& decl = v.decl;
    if (decl.coreType == CoreType::Mix) {
      return badInput(fmt::format("op {}: kernel {} is a mix (cube + vector) sub-kernel; the ascend back end runs "
                                  "cube or vector sub-kernels for now",
                                  op.name, v.decl.name));
    }
    // kernel_sync on ascend: the kernel calls AscendC::SyncAll<true>, the barrier over all vector cores of
    // its launch. Alone (AIV_ONLY) those are its blocks; in a SuperKernel the emitter makes the other vector
    // cores call it as often (feed-sync-all), so the SuperKernel must know how often.
    if (v.decl.kernelSync && decl.coreType == CoreType::Cube) {
      return badInput(fmt::format("op {}: kernel {} is a cube sub-kernel that syncs its own blocks (kernel_sync); "
                                  "a cube core launched alone (AIC_ONLY) has no SyncAll (its barrier waits for "
                                  "vector cores), so on ascend only vector sub-kernels may declare kernel_sync",
                                  op.name, v.decl.name));
    }
    AscendOp a;
    a.kernelSync = v.decl.kernelSync;
    a.syncAllCalls = static_cast<uint32_t>(v.decl.attribute("sync_all_calls"));
    a.name = op.name;
    a.blockDim = op.blockDim;
    a.stream = op.stream;
    a.pool = decl.coreType == CoreType::Cube ? Pool::Cube : Pool::Vector;
    (a.pool == Pool::Cube ? maxCube : maxVec) = std::max(a.pool == Pool::Cube ? maxCube : maxVec, op.blockDim);

    // The object: the variant's macros, then the op's scalars as SK_<NAME> (objectDefines), then the entry
    // rename.
    std::vector<std::pair<std::string, std::string>> scalarLiterals;
    std::string scalars;
    if (op.args.size() != v.decl.params.size()) return internalError(fmt::format("op {}: argument count", op.name));
    for (size_t i = 0; i < op.args.size(); ++i) {
      const ParamDecl& p = v.decl.params[i];
      const BoundArg& arg = op.args[i];
      if (p.kind == ParamKind::Scalar && arg.runtime) {
        // Read from the launch's slot when the sub-kernel runs: the object names the slot, never the value.
        if (arg.runtimeSlot >= s.runtimeValues.size()) {
          return internalError(fmt::format("op {} argument {}: runtime slot {} of {}", op.name, p.name,
                                           arg.runtimeSlot, s.runtimeValues.size()));
        }
        auto macro = runtimeScalarMacro(p.dtype, arg.runtimeSlot);
        if (!macro) return std::move(macro).error().context(fmt::format("op {} argument {}", op.name, p.name));
        scalarLiterals.emplace_back(p.name, *macro);
        scalars += fmt::format("{}=@{};", p.name, arg.runtimeSlot);
        a.runtimeScalars.emplace_back(p.name, arg.runtimeSlot);
      } else if (p.kind == ParamKind::Scalar) {
        auto lit = cScalarLiteral(arg.scalar, p.dtype);
        if (!lit) return std::move(lit).error().context(fmt::format("op {} argument {}", op.name, p.name));
        scalarLiterals.emplace_back(p.name, *lit);
        scalars += p.name + "=" + *lit + ";";
      } else {
        if (arg.buffer < 0 || static_cast<size_t>(arg.buffer) >= sk.buffers.size()) {
          return internalError(fmt::format("op {} argument {}: buffer index", op.name, p.name));
        }
        a.args.push_back({arg.buffer, arg.offset * dtypeSize(p.dtype)});
      }
    }
    // Inside a SuperKernel the object also carries its block count (__SUPER_KERNEL_STATIC_BLOCK_NUM__).
    // Its own early-start points are honoured as the planner decided (PlannedOp::earlyStart: early-start=1,
    // the kernel declares it, and no runtime scalar, which must be read after the op's waits), and only
    // when this kernel's Ascend C declares them too.
    if (sk.fused && op.earlyStart && !(sk.options.earlyStart == 1 && decl.earlyStart)) {
      return internalError(fmt::format("op {}: planned to start early itself, but its ascend kernel {} does not "
                                       "declare early start (or early-start is not 1)",
                                       op.name, v.decl.name));
    }
    const bool ownEarly = sk.fused && op.earlyStart;
    if (sk.fused) scalars += fmt::format("blocks={};own_early_start={};", op.blockDim, ownEarly ? 1 : 0);
    // A variant the planner specialised (MachineModel::staticArguments) is this object already: its symbol
    // is the one the build recipe compiled it under. Otherwise the object's symbol is derived here.
    if (v.specialised && (v.staticBlocks != (sk.fused ? op.blockDim : 0) || v.ownEarlyStart != ownEarly)) {
      return internalError(fmt::format("op {}: its specialised variant {} was made for other block counts", op.name,
                                       v.symbol));
    }
    const std::string symbol = v.specialised || scalars.empty()
                                   ? v.symbol
                                   : fmt::format("{}_s{:08x}", v.symbol, fnv1a(scalars) & 0xffffffffu);
    std::vector<std::pair<std::string, std::string>> defines =
        objectDefines({v.macros.begin(), v.macros.end()}, scalarLiterals);
    defines.emplace_back(decl.entry, symbol);
    // A collective's group (the rank mask of its `ranks` scalar, compiled into its object as SK_RANKS): the
    // CANN device's HCCL context key.
    if (v.decl.name.rfind(kCollectiveKernelPrefix, 0) == 0) {
      for (size_t i = 0; i < op.args.size(); ++i)
        if (v.decl.params[i].name == "ranks" && !op.args[i].runtime)
          if (auto mask = scalarInteger(op.args[i].scalar); mask && *mask > 0 && *mask <= UINT64_MAX)
            a.hcclGroup = static_cast<uint64_t>(*mask);
      if (a.hcclGroup == 0) return internalError(fmt::format("collective op {}: no rank mask", op.name));
    }
    auto [it, inserted] = objectIndex.emplace(symbol, static_cast<uint32_t>(s.objects.size()));
    if (inserted) {
      AscendObject o;
      o.symbol = symbol;
      o.source = decl.sourcePath;
      o.defines = std::move(defines);
      o.pool = a.pool;
      o.earlyStart = decl.earlyStart;
      o.codeBytes = v.codeBytes;
      o.variant = op.variant;
      s.objects.push_back(std::move(o));
    }
    a.object = it->second;
    a.ownEarlyStart = ownEarly;
    s.ops.push_back(std::move(a));
  }

  // The launch: unfused, the op's blocks (the device runs them in waves); fused, the cores the planner laid
  // out for it (MachineModel::oneBlockPerCore: only what its ops need), pool by pool, so the plan's cores are
  // the launch's. The block dim counts AI Cores (one cube and two vector cores each), vector cores alone.
  if (!sk.fused) {
    s.type = maxCube ? KernelType::AicOnly : KernelType::AivOnly;
    s.blockDim = std::max(maxCube, maxVec);
    return s;
  }
  // The sync points are the planner's, which holds only where its placement is the launch's: ascend's two
  // pools (Pool's values are their indices), one queue per pool used.
  const bool ascendPools = plan.machine.pools.size() == 2 && plan.machine.pools[0].kind == CoreType::Cube &&
                           plan.machine.pools[1].kind == CoreType::Vector;
  if (!ascendPools) {
    return internalError(fmt::format("step {}: fused for target {}'s core pools, not ascend's (cube, vector); plan "
                                     "the op list for an ascend target",
                                     sk.name, plan.machine.target));
  }
  uint32_t planned[2] = {0, 0};  // by Pool
  int queueOfPool[2] = {-1, -1};
  for (size_t q = 0; q < sk.queues.size(); ++q) {
    const Queue& qu = sk.queues[q];
    if (qu.pool > 1 || queueOfPool[qu.pool] >= 0) {
      return internalError(fmt::format("step {}: queue {} is a second queue of pool {} (ascend runs one per pool)",
                                       sk.name, q, qu.pool));
    }
    queueOfPool[qu.pool] = static_cast<int>(q);
    planned[qu.pool] = qu.numCores;
  }
  for (size_t i = 0; i < s.ops.size(); ++i) {
    const Queue& qu = sk.queues[sk.ops[i].queue];
    if (qu.pool != static_cast<uint32_t>(s.ops[i].pool) || s.ops[i].blockDim > qu.numCores) {
      return internalError(fmt::format("op {}: planned as {} block(s) on {} core(s) of pool {}; its {} blocks run on "
                                       "cores 0..{} of the {} pool",
                                       s.ops[i].name, sk.ops[i].blockDim, qu.numCores, qu.pool, s.ops[i].blockDim,
                                       s.ops[i].blockDim - 1, poolName(s.ops[i].pool)));
    }
  }
  if (maxCube && maxVec) {
    s.type = KernelType::MixAic1_2;
    s.blockDim = planned[0];
  } else if (maxCube) {
    s.type = KernelType::MixAic1_0;
    s.blockDim = planned[0];
  } else {
    s.type = KernelType::MixAiv1_0;
    s.blockDim = planned[1];
  }
  if (s.poolCores(Pool::Cube) != planned[0] || s.poolCores(Pool::Vector) != planned[1]) {
    return internalError(fmt::format("step {}: the plan lays out {} cube and {} vector cores; a {} launch of block "
                                     "dim {} runs {} and {}",
                                     sk.name, planned[0], planned[1],
                                     s.type == KernelType::MixAic1_2 ? "MIX_AIC_1_2" : "single-pool", s.blockDim,
                                     s.poolCores(Pool::Cube), s.poolCores(Pool::Vector)));
  }

  // Feeding a kernel_sync op's SyncAll needs its count (how many the launch is known only now).
  for (size_t i = 0; i < s.ops.size(); ++i) {
    if (s.coresToFeed(s.ops[i]) == 0 || s.ops[i].syncAllCalls > 0) continue;
    return badInput(fmt::format("op {}: kernel {} syncs its own blocks (kernel_sync) but does not declare how "
                                "many times one launch calls AscendC::SyncAll; add \"sync_all_calls\": N to its "
                                "declaration (a SuperKernel with feed-sync-all=1 makes its other vector cores "
                                "call SyncAll N times)",
                                s.ops[i].name, plan.variants[sk.ops[i].variant].decl.name));
  }

  // What the printer needs of any step (the runtime slots, early start, blocks per pool, feed-sync-all).
  SK_RETURN_IF_ERROR(validateAscendStep(s));
  SK_ASSIGN_OR_RETURN(s.syncBefore, layoutPoolSync(plan, sk));

  for (const SideLaunch& side : sk.sides) {
    if (side.step >= plan.steps.size()) return internalError("side launch step out of range");
    AscendSide a;
    a.name = plan.steps[side.step].name;
    a.stream = side.stream;
    for (uint32_t o : side.after) {
      if (o >= s.ops.size()) return internalError("side launch op out of range");
      a.notifyAfter[static_cast<int>(s.ops[o].pool)] = static_cast<int>(o);  // ascending: the last one stays
    }
    for (auto it = side.before.rbegin(); it != side.before.rend(); ++it) {
      if (*it >= s.ops.size()) return internalError("side launch op out of range");
      a.waitBefore[static_cast<int>(s.ops[*it].pool)] = static_cast<int>(*it);  // descending: the first one stays
    }
    s.sides.push_back(std::move(a));
  }
  return s;
}

}  // namespace sk::ascend
