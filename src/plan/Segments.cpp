// Segment formation (DESIGN section 5): which launches become one SuperKernel.
//
// Guarantees:
// - Segments are contiguous runs of the recorded op order, so running the
//   steps in order respects every dependency of the recorded program.
// - A fused segment holds launches of one scope name only, all fusible, and
//   is one SuperKernel; it ends at: a scope change, an unscoped op, a
//   "scope": null op (never fused), an unfusible op, a kernel_sync op that
//   cannot have all its blocks on distinct cores, an op with more blocks than
//   its pool's cores on a machine that runs one block per core inside a
//   SuperKernel (MachineModel::oneBlockPerCore), a cross-stream wait with
//   stream-fusion=0 (only when the open segment holds ops the wait orders;
//   a wait on work of earlier steps needs nothing), with stream-fusion=1 a
//   stream more than there are cores (each stream queue needs >= 1 core,
//   so the segment is split rather than failing; not on a one-block-per-core
//   machine, whose streams share their pool's queue), and the end of the list.
//   Every end carries a reason ("ops[5] (x): <why>").
// - Ends that break a scope in the middle (the scope's next op continues
//   after the split: unfusible op, kernel_sync or one-block-per-core op too wide, cross-stream wait,
//   too many streams) follow strict-scope-check: abort -> BadInput naming the
//   op and the reason; bypass -> a warning (PlanReport::warnings and
//   spdlog) and the split. Scope changes, unscoped and never-fuse ops are
//   intended ends and never warn.
// - Side launches (MachineModel::sideLaunches, DESIGN section 5): an op
//   that would run unfused (unscoped, never-fuse, unfusible, kernel_sync too
//   wide) while a fused segment is open, on a stream none of the segment's
//   ops use, does not end the segment: it becomes a side launch of it (its
//   own single-op segment in Segment::sides), run beside the SuperKernel and
//   ordered with it by data edges only (plan/Sides.cpp). A scoped op that
//   leaves its scope this way warns (or aborts) as when it runs alone. Not
//   when it conflicts with a side launch of another stream already there:
//   two side streams have no way to wait for each other, so the segment ends
//   as before. An op that needs a side launch waits for it while its
//   SuperKernel holds its cores, and on a device the side launch can only run
//   on cores left free: the segment ends before an op that would leave its
//   waited-for side launches no room (MachineModel::unitsHeld). A
//   cross-stream wait on a stream with no op in the segment ends nothing by
//   itself; it ends the segment when an op of that stream joins, or when a
//   stream of the segment waits for it in turn.
// - Unscoped, never-fuse and unfusible launches become single-op steps
//   (fused = false); with PlanConfig::fuse = false every launch does.
// - A kernel_sync op with block_dim > the machine's cores can never run: BadInput.
// - debug-core-num > the machine's cores (several pools: its first pool's): BadInput.
#include <spdlog/spdlog.h>

#include <set>

#include "superkernel/frontend/OpListPaths.h"
#include "plan/PlanInternal.h"
#include "superkernel/support/Log.h"

namespace sk::plan {

namespace {

struct Former {
  PlanContext& ctx;
  std::vector<Segment> out;
  std::optional<Segment> open;
  std::set<uint32_t> openStreams;
  std::map<std::string, int> pieces;        // scope -> segments so far (for "#k" names)
  std::map<std::string, std::pair<uint32_t, uint32_t>> lastRecord;  // event -> (stream, list index)
  std::optional<std::string> pendingEnd;    // a wait decided the open segment must end
  uint32_t pendingAt = 0;
  // Side launches: a stream's pending end if one of its ops joins the open segment (a wait on a stream
  // that, so far, only has side launches there), where that wait is and which stream it waited for.
  struct SideStreamWait {
    std::string reason;
    uint32_t at = 0, waitedFor = 0;
  };
  std::map<uint32_t, SideStreamWait> sideStreamWaits;
  std::set<size_t> waitedSides;  // indices into open->sides that an op of the open segment waits for

  const OpList& list() const { return ctx.list; }
  std::string where(uint32_t i) const {
    const Op& op = list().ops[i];
    std::string what = op.kind == Op::Kind::Launch ? op.name : (op.kind == Op::Kind::Record ? "record " : "wait ") + op.event;
    return oplist::opPath(i) + " (" + what + ")";
  }
  Error err(uint32_t i, const std::string& msg) const { return oplist::pathError(list().origin, oplist::opPath(i), msg); }

  Expected<Options> optionsFor(const std::optional<std::string>& scope) const {
    if (!scope) return ctx.options;
    auto it = list().scopes.find(*scope);
    if (it == list().scopes.end()) return ctx.options;
    auto o = parseOptions(it->second.options, ctx.options);
    if (!o) return oplist::pathError(list().origin, "scopes" + oplist::pathKey(*scope) + ".options", o.error().message());
    return o;
  }

  uint32_t coresFor(const Options& o) const { return plan::coresFor(o, ctx.config); }

  // Close the open segment. `broken`: the scope continues after this end.
  Status close(const std::string& reason, bool broken) {
    if (!open) return Status::success();
    open->endReason = reason;
    if (broken) {
      std::string msg = "scope " + oplist::quote(open->scope) + " split: " + reason;
      if (open->options.strictScopeCheck == StrictScope::Abort)
        return oplist::pathError(list().origin, "", msg + " (strict-scope-check=abort)");
      initLogging();
      spdlog::warn("{}{}", list().origin.empty() ? "" : list().origin + ": ", msg);
      ctx.plan.report.warnings.push_back(msg);
    }
    out.push_back(std::move(*open));
    open.reset();
    openStreams.clear();
    pendingEnd.reset();
    sideStreamWaits.clear();
    waitedSides.clear();
    return Status::success();
  }

  // A scoped op that runs outside its scope's SuperKernel without splitting it: a warning, or (abort) an error.
  Status leavesScope(uint32_t i, const Options& o, const std::string& why) {
    std::string msg = "scope " + oplist::quote(*list().ops[i].scope) + ": " + where(i) + ": " + why;
    if (o.strictScopeCheck == StrictScope::Abort)
      return oplist::pathError(list().origin, "", msg + " (strict-scope-check=abort)");
    initLogging();
    spdlog::warn("{}{}", list().origin.empty() ? "" : list().origin + ": ", msg);
    ctx.plan.report.warnings.push_back(msg);
    return Status::success();
  }

  static Segment singleSegment(const Op& op, uint32_t i, const Options& o, std::string endReason) {
    Segment s;
    s.ops = {i};
    s.firstListOp = i;
    s.endListOp = i + 1;
    s.fused = false;
    s.scope = op.scope.value_or("");
    s.name = op.name;
    s.endReason = std::move(endReason);
    s.options = o;
    return s;
  }

  void single(uint32_t i, const Options& o, const std::string& reason) {
    out.push_back(singleSegment(list().ops[i], i, o, where(i) + ": " + reason));
  }

  // Op i would run unfused (`why`): with side launches, it runs beside the open segment if it may.
  Expected<bool> beside(uint32_t i, const Options& o, const std::string& why) {
    const Op& op = list().ops[i];
    if (!ctx.config.machine.sideLaunches || !open || openStreams.count(op.stream)) return false;
    for (const Segment& side : open->sides) {
      const uint32_t j = side.ops.at(0);
      if (list().ops[j].stream != op.stream && launchesConflict(ctx, j, i)) return false;
    }
    const std::string how = "runs beside SuperKernel " + oplist::quote(open->name) + " on stream " +
                               std::to_string(op.stream) + ", ordered with it by GM notify/wait words";
    if (op.scope) SK_RETURN_IF_ERROR(leavesScope(i, o, why + ", " + how));
    open->sides.push_back(singleSegment(op, i, o, where(i) + ": " + how));
    return true;
  }

  // The device units (MachineModel::unitsHeld) op i occupies, and those a side launch needs to make progress
  // (one core, or all its blocks at once for kernel_sync).
  uint32_t unitsOf(uint32_t i, bool sideNeed) const {
    const Op& op = list().ops[i];
    const KernelDecl& k = ctx.kernels.at(op.kernel);
    const MachineModel& m = ctx.config.machine;
    auto pool = m.poolFor(k.coreType);
    if (!pool) return m.deviceCores();  // assignQueues reports it
    return m.unitsHeld(*pool, sideNeed && !k.kernelSync ? 1 : op.blockDim);
  }

  // Op i joining the open segment: the side launches it waits for (added to waitedSides), or why it cannot
  // (the SuperKernel would hold the cores its waited-for side launches need).
  std::string roomForSides(uint32_t i, std::set<size_t>& waited) const {
    waited = waitedSides;
    if (!open) return {};
    for (size_t k = 0; k < open->sides.size(); ++k)
      if (launchesConflict(ctx, open->sides[k].ops.at(0), i)) waited.insert(k);
    if (waited.empty()) return {};
    uint32_t held = unitsOf(i, false), need = 0;
    for (uint32_t j : open->ops) held = std::max(held, unitsOf(j, false));
    std::string names;
    for (size_t k : waited) {
      need += unitsOf(open->sides[k].ops.at(0), true);
      names += (names.empty() ? "" : ", ") + oplist::quote(open->sides[k].name);
    }
    const MachineModel& m = ctx.config.machine;
    if (held + need <= m.deviceCores()) return {};
    return "waits for side launch(es) " + names + ", which need " + std::to_string(need) + " of the device's " +
           std::to_string(m.deviceCores()) + " " + m.unitNoun + " while SuperKernel " + oplist::quote(open->name) +
           " holds " + std::to_string(held) + " (a side launch runs on cores the SuperKernel leaves free)";
  }

  // MachineModel::oneBlockPerCore: why op (of kernel k) cannot run inside a SuperKernel with options o, or "".
  std::string tooWideForOneBlockPerCore(const Op& op, const KernelDecl& k, const Options& o) const {
    if (!ctx.config.machine.oneBlockPerCore || coarsensToCores(k)) return {};  // coarsening fits it (Coarsen.cpp)
    const MachineModel fm = machineFor(o, ctx.config);
    auto pool = fm.poolFor(k.coreType);
    if (!pool) return {};  // assignQueues reports it
    const uint32_t cores = fm.pools.size() == 1 ? fm.totalCores() : fm.pools[*pool].count;
    if (op.blockDim <= cores) return {};
    return std::to_string(op.blockDim) + " blocks, more than the " + std::to_string(cores) + " " +
           (fm.pools.size() == 1 ? std::string() : coreTypeName(fm.pools[*pool].kind) + std::string(" ")) +
           "cores of a SuperKernel (inside one, each block of an op runs on a core of its own; alone, its blocks "
           "run in waves)";
  }

  void start(uint32_t i, const std::string& scope, const Options& o) {
    Segment s;
    s.firstListOp = i;
    s.fused = true;
    s.scope = scope;
    int k = ++pieces[scope];
    s.name = k == 1 ? scope : scope + "#" + std::to_string(k);
    s.options = o;
    open = std::move(s);
  }

  void append(uint32_t i) {
    open->ops.push_back(i);
    open->endListOp = i + 1;
    openStreams.insert(list().ops[i].stream);
  }

  // With stream-fusion=1, can op i join the open segment? "" if yes, else why not.
  std::string streamFit(uint32_t i, uint32_t cores) const {
    std::set<uint32_t> streams = openStreams;
    streams.insert(list().ops[i].stream);
    if (streams.size() > cores)
      return std::to_string(streams.size()) + " streams need more than the " + std::to_string(cores) + " cores";
    uint32_t perQueue = cores / static_cast<uint32_t>(streams.size());
    std::vector<uint32_t> ops = open->ops;
    ops.push_back(i);
    for (uint32_t j : ops) {
      const Op& op = list().ops[j];
      if (ctx.kernels.at(op.kernel).kernelSync && !kernelSyncFits(op.blockDim, perQueue))
        return "kernel_sync op " + oplist::quote(op.name) + " needs " + std::to_string(op.blockDim) + " cores, " +
               std::to_string(streams.size()) + " stream queues leave " + std::to_string(perQueue) + " each";
    }
    return {};
  }

  Status launch(uint32_t i) {
    const Op& op = list().ops[i];
    const KernelDecl& k = ctx.kernels.at(op.kernel);
    const MachineModel& m = ctx.config.machine;
    if (k.kernelSync && !kernelSyncFits(op.blockDim, m.totalCores()))
      return err(i, "kernel_sync kernel " + oplist::quote(op.kernel) + " needs all " + std::to_string(op.blockDim) +
                        " blocks at once but the " + m.coreOwner + " has " + std::to_string(m.totalCores()) + " " +
                        m.coreNoun);
    SK_ASSIGN_OR_RETURN(Options o, optionsFor(op.scope));
    if (!ctx.config.fuse) {
      SK_RETURN_IF_ERROR(close(where(i) + ": fusion disabled", false));
      single(i, o, "fusion disabled (unfused reference plan)");
      return Status::success();
    }
    // Why the op runs unfused ("": it may fuse).
    std::string unfused;
    if (!op.scope) {
      unfused = op.scopeNull ? "never-fuse op (\"scope\": null)" : "unscoped op (runs unfused)";
    } else {
      if (o.debugCoreNum > 0 && static_cast<uint32_t>(o.debugCoreNum) > m.deviceCores())
        return oplist::pathError(list().origin, "scopes" + oplist::pathKey(*op.scope),
                                 "debug-core-num=" + std::to_string(o.debugCoreNum) + " exceeds " +
                                     (m.pools.size() == 1 ? m.describeCores(m.totalCores())
                                                          : m.describeCores(m.deviceCores()) + " of its first pool (" +
                                                                coreTypeName(m.pools[0].kind) + ")"));
      if (!op.fusible) {
        unfused = "unfusible op (fusible: false)";
      } else if (k.kernelSync && !kernelSyncFits(op.blockDim, coresFor(o))) {
        unfused = "kernel_sync op needs " + std::to_string(op.blockDim) + " cores at once, the SuperKernel has " +
                  std::to_string(coresFor(o));
      } else if (std::string wide = tooWideForOneBlockPerCore(op, k, o); !wide.empty()) {
        unfused = std::move(wide);
      }
    }
    if (!unfused.empty()) {
      SK_ASSIGN_OR_RETURN(bool isSide, beside(i, o, unfused));
      if (isSide) return Status::success();
    }
    if (pendingEnd) {
      bool continues = open && op.scope && *op.scope == open->scope;
      std::string reason = *pendingEnd;
      SK_RETURN_IF_ERROR(close(reason, continues));
    }
    if (!op.scope) {
      SK_RETURN_IF_ERROR(close(where(i) + ": " + unfused, false));
      single(i, o, unfused);
      return Status::success();
    }
    const std::string& scope = *op.scope;
    uint32_t cores = coresFor(o);
    if (!unfused.empty()) {
      if (open) {
        SK_RETURN_IF_ERROR(close(where(i) + ": " + unfused, open->scope == scope));
      } else {
        // Not splitting anything, but the op still leaves its scope.
        SK_RETURN_IF_ERROR(leavesScope(i, o, unfused + ", runs unfused"));
      }
      single(i, o, unfused);
      return Status::success();
    }
    if (open && open->scope != scope)
      SK_RETURN_IF_ERROR(close(where(i) + ": scope change to " + oplist::quote(scope), false));
    if (open) {
      if (auto w = sideStreamWaits.find(op.stream); w != sideStreamWaits.end()) {
        std::string reason = w->second.reason;
        SK_RETURN_IF_ERROR(close(reason, true));
      }
    }
    // One block per core: a pool's streams share its one queue (Queues.cpp), so streams need no cores of
    // their own.
    if (open && o.streamFusion && !ctx.config.machine.oneBlockPerCore) {
      std::string why = streamFit(i, cores);
      if (!why.empty()) SK_RETURN_IF_ERROR(close(where(i) + ": " + why, true));
    }
    std::set<size_t> waited;
    if (std::string why = roomForSides(i, waited); !why.empty()) {
      SK_RETURN_IF_ERROR(close(where(i) + ": " + why, true));
      waited.clear();
    }
    if (!open) start(i, scope, o);
    append(i);
    waitedSides = std::move(waited);
    return Status::success();
  }

  void record(uint32_t i) {
    const Op& op = list().ops[i];
    lastRecord[op.event] = {op.stream, i};
  }

  void wait(uint32_t i) {
    const Op& op = list().ops[i];
    auto rec = lastRecord.find(op.event);
    if (!open || rec == lastRecord.end()) return;
    auto [srcStream, recAt] = rec->second;
    if (srcStream == op.stream || open->options.streamFusion) return;  // same stream, or expressed as Event edges
    // Only a wait that orders ops inside the open segment needs a split.
    bool ordersInside = false;
    for (uint32_t j : open->ops)
      if (j < recAt && list().ops[j].stream == srcStream) ordersInside = true;
    // A side stream that waited for another stream of the segment before the record passes that order on
    // (waiting, through it, for the waiting stream's own earlier ops is what one queue does anyway).
    if (auto w = sideStreamWaits.find(srcStream);
        w != sideStreamWaits.end() && w->second.at < recAt && w->second.waitedFor != op.stream)
      ordersInside = true;
    if (!ordersInside) return;
    std::string reason = where(i) + ": cross-stream wait on event " + oplist::quote(op.event) + " (stream " +
                         std::to_string(op.stream) + " waits for stream " + std::to_string(srcStream) +
                         ") cannot be expressed inside one queue (stream-fusion=0)";
    if (ctx.config.machine.sideLaunches && !openStreams.count(op.stream)) {
      // Only side launches (ordered by data edges) may follow on that stream, unless one of its ops joins.
      sideStreamWaits.emplace(op.stream, SideStreamWait{std::move(reason), i, srcStream});
      return;
    }
    if (!pendingEnd) {
      pendingEnd = std::move(reason);
      pendingAt = i;
    }
  }
};

}  // namespace

Expected<std::vector<Segment>> formSegments(PlanContext& ctx) {
  Former f{ctx, {}, std::nullopt, {}, {}, {}, std::nullopt, 0, {}, {}};
  for (uint32_t i = 0; i < ctx.list.ops.size(); ++i) {
    switch (ctx.list.ops[i].kind) {
      case Op::Kind::Launch: SK_RETURN_IF_ERROR(f.launch(i)); break;
      case Op::Kind::Record: f.record(i); break;
      case Op::Kind::Wait: f.wait(i); break;
      case Op::Kind::Collective: return internalError("a collective op reached the planner's passes unlowered");
    }
  }
  std::string reason = f.pendingEnd ? *f.pendingEnd : "end of op list";
  SK_RETURN_IF_ERROR(f.close(reason, false));
  return std::move(f.out);
}

}  // namespace sk::plan
