// The template values the cpu and cuda emitters share (codegen/StepValues.h).
// Moved here unchanged from the two emitters, which repeated them line for
// line: the golden tests of both back ends prove the text did not change.
#include "superkernel/codegen/StepValues.h"

#include <fmt/format.h>

#include "superkernel/codegen/Emitter.h"
#include "support/Escape.h"

namespace sk {

std::string stepOpLabel(const FusionPlan& plan, const SuperKernelPlan& sk, const PlannedOp& op) {
  return sk.fused ? op.name : plan.variants[op.variant].decl.name;
}

std::string stepLabel(const FusionPlan& plan, const SuperKernelPlan& sk) {
  return sk.fused || sk.ops.empty() ? sk.name : "unfused " + stepOpLabel(plan, sk, sk.ops[0]);
}

std::string formatFlagRanges(const std::vector<std::pair<uint32_t, uint32_t>>& ranges) {
  std::string s;
  for (size_t b = 0; b < ranges.size(); ++b) {
    if (b) s += (b % 8 == 0) ? ",\n    " : ", ";
    // An empty range is written {1, 0} so the wait loop does not run.
    if (ranges[b].first > ranges[b].second) {
      s += "{1, 0}";
    } else {
      s += fmt::format("{{{}, {}}}", ranges[b].first, ranges[b].second);
    }
  }
  return s;
}

std::string describeWait(const SuperKernelPlan& sk, const Edge& e) {
  return fmt::format("{} ({}, {} on {})", sk.ops[e.producer].name, syncKindName(e.sync), depKindName(e.dep),
                     e.buffer);
}

void setStepCounts(TemplateValues& v, const FusionPlan& plan, const SuperKernelPlan& sk) {
  v.set("name", escapeComment(stepLabel(plan, sk)));
  v.set("num_ops", static_cast<uint64_t>(sk.ops.size()));
  v.set("num_queues", static_cast<uint64_t>(sk.queues.size()));
  v.set("num_cores", sk.numCores);
  v.set("num_buffers", static_cast<uint64_t>(sk.buffers.size()));
}

void addKernelDecls(TemplateValues& v, const FusionPlan& plan, const SyncLayout& layout) {
  v.list("kernels");
  for (uint32_t vi : layout.variants) {
    const KernelVariant& var = plan.variants[vi];
    auto& k = v.add("kernels");
    k.set("symbol", var.symbol);
    k.list("params");
    for (const ParamDecl& p : var.decl.params) {
      auto& pi = k.add("params");
      pi.set("ctype", cParamType(p));
      pi.set("pname", "/*" + sanitizeIdentifier(p.name) + "*/");
    }
  }
}

TemplateValues& addOpFn(TemplateValues& v, const FusionPlan& plan, const SuperKernelPlan& sk,
                        const SyncLayout& layout, size_t i) {
  const PlannedOp& op = sk.ops[i];
  auto& of = v.add("op_fns");
  of.set("op", static_cast<uint64_t>(i));
  of.set("op_name", escapeComment(stepOpLabel(plan, sk, op)));
  of.set("symbol", plan.variants[op.variant].symbol);
  of.set("blocks", op.blockDim);
  std::string comment;
  if (op.earlyStart) comment += "; early start";
  if (op.kernelSync) comment += "; kernel_sync";
  of.set("comment", comment);
  of.list("waits_summary");
  if (!layout.waits[i].empty()) {
    std::string summary;
    for (const SyncWait& wt : layout.waits[i]) {
      if (!summary.empty()) summary += ", ";
      summary += describeWait(sk, *wt.edge);
    }
    of.add("waits_summary").set("summary", escapeComment(summary));
  }
  return of;
}

Expected<bool> addCallArgs(TemplateValues& of, const KernelVariant& var, const PlannedOp& op,
                           std::string_view bufArray, RuntimeScalarArg runtime) {
  bool usesBuf = false;
  of.list("args");
  for (size_t a = 0; a < op.args.size(); ++a) {
    const BoundArg& arg = op.args[a];
    const ParamDecl& decl = var.decl.params[a];
    std::string text;
    if (arg.kind == ParamKind::Buffer) {
      usesBuf = true;
      text = fmt::format("static_cast<{}{}*>({}[{}])", decl.access == Access::Read ? "const " : "",
                         cType(decl.dtype), bufArray, arg.buffer);
      if (arg.offset) text += fmt::format(" + {}", arg.offset);
    } else if (arg.runtime) {
      // Read when the call is made: after the op's waits (Bind never lets an op with a runtime scalar
      // start early), so an op of this step that writes the element has finished.
      usesBuf = true;
      text = fmt::format("static_cast<const {}*>({}[{}])", cType(decl.dtype), bufArray, arg.buffer);
      if (runtime == RuntimeScalarArg::Value) text += fmt::format("[{}]", arg.offset);
      else if (arg.offset) text += fmt::format(" + {}", arg.offset);
    } else {
      auto lit = cScalarLiteral(arg.scalar, decl.dtype);
      if (!lit) return std::move(lit).error().context(fmt::format("op {} argument {}", op.name, decl.name));
      text = *lit;
    }
    of.add("args").set("arg", text);
  }
  return usesBuf;
}

bool addQueues(TemplateValues& v, const FusionPlan& plan, const SuperKernelPlan& sk, std::string_view intSuffix,
               const std::function<void(TemplateValues& item, const PlannedOp& op)>& perOp) {
  bool anyPreload = false;
  v.list("queues");
  for (size_t q = 0; q < sk.queues.size(); ++q) {
    const Queue& qu = sk.queues[q];
    auto& qv = v.add("queues");
    qv.set("q", static_cast<uint64_t>(q));
    qv.set("stream", qu.stream);
    qv.set("first", qu.firstCore);
    qv.set("end", qu.firstCore + qu.numCores);
    qv.set("cores", qu.numCores);
    qv.set("core_test", qu.firstCore == 0 ? fmt::format("core < {}{}", qu.numCores, intSuffix)
                                          : fmt::format("core >= {1}{0} && core < {2}{0}", intSuffix, qu.firstCore,
                                                        qu.firstCore + qu.numCores));
    uint64_t barriers = 0;
    for (uint32_t i : qu.ops) barriers += sk.ops[i].barrierBefore ? 1 : 0;
    qv.set("barriers_per_launch", barriers);
    qv.setIf("queue_has_barriers", barriers > 0);
    qv.list("ops");
    uint64_t k = 0;
    for (uint32_t i : qu.ops) {
      const PlannedOp& op = sk.ops[i];
      auto& ov = qv.add("ops");
      ov.set("op", i);
      ov.set("op_name", escapeComment(stepOpLabel(plan, sk, op)));
      ov.list("barrier");
      if (op.barrierBefore) ov.add("barrier").set("k", ++k);
      ov.list("preload");
      if (op.preloadVariant >= 0) {
        const KernelVariant& pv = plan.variants[static_cast<size_t>(op.preloadVariant)];
        uint64_t bytes = preloadBytes(sk.options.preloadCode, pv.codeBytes);
        if (bytes > 0) {
          anyPreload = true;
          auto& p = ov.add("preload");
          p.set("preload_symbol", pv.symbol);
          p.set("preload_bytes", bytes);
        }
      }
      if (perOp) perOp(ov, op);
    }
  }
  return anyPreload;
}

bool addDataPreloads(TemplateValues& item, const std::vector<DataPreload>& preloads, std::string_view intSuffix,
                     std::string_view coreExpr,
                     const std::function<void(TemplateValues& dp, const DataPreload& d)>& perItem) {
  item.list("data_preload");
  for (const DataPreload& d : preloads) {
    auto& dp = item.add("data_preload");
    dp.set("buf", static_cast<uint64_t>(d.buffer));
    dp.set("offset", d.strideBytes == 0 ? fmt::format("{}{}", d.offsetBytes, intSuffix)
                                        : fmt::format("{}{} + {} * {}{}", d.offsetBytes, intSuffix, coreExpr,
                                                      d.strideBytes, intSuffix));
    dp.set("bytes", d.bytes);
    dp.set("blocks", d.blocks);
    if (perItem) perItem(dp, d);
  }
  return !preloads.empty();
}

}  // namespace sk
