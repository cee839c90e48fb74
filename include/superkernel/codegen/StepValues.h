// The template values that the cpu and cuda emitters fill the same way.
//
// Both print one step of a FusionPlan through a Template (codegen/Template.h)
// and name the same things in it: the step's counts, the kernels it declares,
// per op its label, blocks and wait summary, and per queue its cores, its
// ops, barriers and preloads. Those values are computed from the plan and the
// sync layout alone, so one copy here keeps the two back ends from drifting
// apart; each emitter adds only what its runtime prints differently (wait
// descriptors, call arguments' buffer array, integer suffixes). Nothing here
// changes the generated text: the goldens of both back ends pin it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "superkernel/codegen/SyncLayout.h"
#include "superkernel/codegen/Template.h"
#include "superkernel/plan/DataPreload.h"
#include "superkernel/plan/Plan.h"
#include "superkernel/support/Error.h"

namespace sk {

/// How generated text names an op: an unfused step's text names its kernel,
/// not its op, so the layers of a decode stack share one compiled object per
/// distinct op (the text is the cache key; the step keeps its op names in
/// the manifest and traces).
std::string stepOpLabel(const FusionPlan& plan, const SuperKernelPlan& sk, const PlannedOp& op);
/// The step's name in generated text: its own when fused, else
/// "unfused <kernel>" (see stepOpLabel).
std::string stepLabel(const FusionPlan& plan, const SuperKernelPlan& sk);

/// A FlagTable's per-consumer-block producer ranges as C initialisers, eight
/// to a line; an empty range is written {1, 0} so the wait loop does not run.
std::string formatFlagRanges(const std::vector<std::pair<uint32_t, uint32_t>>& ranges);

/// "<producer> (<sync>, <dep> on <buffer>)": how a wait on edge `e` reads in
/// comments and diagnostics.
std::string describeWait(const SuperKernelPlan& sk, const Edge& e);

/// name (the escaped stepLabel), num_ops, num_queues, num_cores, num_buffers.
void setStepCounts(TemplateValues& v, const FusionPlan& plan, const SuperKernelPlan& sk);

/// List "kernels": per variant the step calls, its symbol and its "params"
/// (ctype: cType, pointer to const for read buffers; pname: the
/// sanitised name as a comment).
void addKernelDecls(TemplateValues& v, const FusionPlan& plan, const SyncLayout& layout);

/// Appends op `i` to list "op_fns" with op, op_name, symbol, blocks, comment
/// ("; early start", "; kernel_sync") and its "waits_summary" list (one item
/// when it waits); returns the item for the back end's own values.
TemplateValues& addOpFn(TemplateValues& v, const FusionPlan& plan, const SuperKernelPlan& sk,
                        const SyncLayout& layout, size_t i);

/// How addCallArgs prints a runtime scalar: its value, read where the text is evaluated, or the address of
/// its element, for a helper that reads it at the call (after the op's waits).
enum class RuntimeScalarArg { Value, Pointer };

/// List "args" of an op's call: a buffer is `static_cast<[const ]T*>(<bufArray>[b]) [+ offset]`,
/// a scalar its cScalarLiteral, a runtime scalar `static_cast<const T*>(<bufArray>[b])[index]` (Value: read
/// at the call) or `static_cast<const T*>(<bufArray>[b]) + index` (Pointer). Returns whether any argument
/// reads the buffer array; BadInput naming the op and argument for a scalar that cannot be printed.
Expected<bool> addCallArgs(TemplateValues& of, const KernelVariant& var, const PlannedOp& op,
                           std::string_view bufArray, RuntimeScalarArg runtime = RuntimeScalarArg::Value);

/// List "queues": per queue q, stream, first, end, cores, core_test (the
/// core range test, its integer literals followed by `intSuffix`),
/// barriers_per_launch, queue_has_barriers and its "ops" (op, op_name,
/// "barrier" with its 1-based index k, "preload" with preload_symbol and
/// preload_bytes when preloadBytes is not 0). `perOp`, when set, adds a back
/// end's own values to each op item. Returns whether any op preloads.
bool addQueues(TemplateValues& v, const FusionPlan& plan, const SuperKernelPlan& sk, std::string_view intSuffix,
               const std::function<void(TemplateValues& item, const PlannedOp& op)>& perOp = {});

/// List "data_preload" of an op's item: per prefetch of the plan's data-preload rule (plan/DataPreload.h),
/// buf, offset (`<first><intSuffix>`, or `<first><intSuffix> + <coreExpr> * <stride><intSuffix>` for the
/// slice of the core at index coreExpr), bytes and blocks; `perItem`, when set, adds a back end's own values
/// to each. Returns whether it added any.
bool addDataPreloads(TemplateValues& item, const std::vector<DataPreload>& preloads, std::string_view intSuffix,
                     std::string_view coreExpr,
                     const std::function<void(TemplateValues& dp, const DataPreload& d)>& perItem = {});

}  // namespace sk
