// planOpList: the planner pipeline, top to bottom (one pass per file; see
// PlanInternal.h for the list and each file's header for its guarantee).
#include "plan/PlanInternal.h"

namespace sk {

Expected<FusionPlan> planOpList(const OpList& given, const Options& options, const PlanConfig& config) {
  // The planner trusts nothing it did not check: a Graph or hand-built list
  // gets the same validation as a parsed file.
  SK_RETURN_IF_ERROR(validateOpList(given));
  if (Status s = config.machine.check(); !s) return s.error().context("plan");
  // Collectives become launches of the runtime's kernel first (Collectives.cpp),
  // so every pass below sees only launches, records and waits.
  std::map<uint32_t, std::string> collectives;
  OpList lowered;
  if (plan::hasCollectives(given)) {
    SK_ASSIGN_OR_RETURN(lowered, plan::lowerCollectives(given, config.machine, collectives));
  }
  const OpList& list = collectives.empty() ? given : lowered;

  plan::PlanContext ctx{list, options, config, {}, {}, {}};
  ctx.plan.target = list.target;
  ctx.plan.arch = list.arch;
  ctx.plan.machine = config.machine;
  ctx.plan.report.syncModel.costs = describeSyncCosts(config.machine.syncCosts);
  for (const Op& op : list.ops) ctx.plan.report.opsBefore += op.kind == Op::Kind::Launch;

  SK_RETURN_IF_ERROR(plan::resolveKernels(ctx));
  SK_RETURN_IF_ERROR(plan::buildVariants(ctx));
  SK_ASSIGN_OR_RETURN(std::vector<plan::Segment> segments, plan::formSegments(ctx));

  // One step: bound, placed and synchronised (a fused segment), or one unfused op.
  auto planStep = [&](const plan::Segment& seg) -> Expected<SuperKernelPlan> {
    SuperKernelPlan sk = plan::bindSegment(ctx, seg);
    SK_RETURN_IF_ERROR(plan::assignQueues(ctx, sk));
    plan::coarsenBlocks(ctx, sk);
    SK_RETURN_IF_ERROR(plan::specializeVariants(ctx, sk));
    if (sk.fused) {
      std::vector<plan::DepEdge> edges = plan::findDependencies(sk);
      plan::addEventEdges(ctx, seg, sk, edges);
      plan::orderCollectives(sk, collectives, edges);
      plan::selectSync(sk, edges, config.machine, ctx.plan.report.warnings);
      sk.edges = plan::reduceEdges(sk, std::move(edges), ctx.plan.report.warnings);
      plan::costSync(sk, config.machine, ctx.plan.report.syncModel);
    }
    plan::placeBarriers(sk);
    plan::schedulePreload(sk);
    return sk;
  };
  for (const plan::Segment& seg : segments) {
    SK_ASSIGN_OR_RETURN(SuperKernelPlan sk, planStep(seg));
    const auto stepIndex = static_cast<uint32_t>(ctx.plan.steps.size());
    plan::linkSides(ctx, seg, sk, stepIndex + 1);
    if (Status s = validatePlan(sk); !s) return s.error().context("plan " + sk.name);
    ctx.plan.steps.push_back(std::move(sk));
    for (const plan::Segment& side : seg.sides) {
      SK_ASSIGN_OR_RETURN(SuperKernelPlan step, planStep(side));
      step.besideStep = static_cast<int>(stepIndex);
      if (Status s = validatePlan(step); !s) return s.error().context("plan " + step.name);
      ctx.plan.steps.push_back(std::move(step));
    }
  }
  if (config.machine.staticArguments) plan::dropUnusedVariants(ctx.plan);
  plan::reportInapplicable(ctx);
  plan::fillReport(ctx.plan);
  plan::reportCollectives(ctx.plan, collectives);
  return std::move(ctx.plan);
}

}  // namespace sk
