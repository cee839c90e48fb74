// Graphviz export: ops are nodes, each step a cluster, edges labelled with
// their sync kind (and dependence kind and buffer). Every name is escaped,
// so any op-list name yields a valid DOT file.
#include <fmt/format.h>

#include "plan/PlanInternal.h"

namespace sk {

namespace {
std::string esc(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    if (c == '\n') { o += "\\n"; continue; }
    if (static_cast<unsigned char>(c) < 0x20) continue;
    o += c;
  }
  return o;
}
}  // namespace

std::string planToDot(const FusionPlan& plan) {
  std::string s = "digraph superkernel_plan {\n  rankdir=TB;\n  node [shape=box, fontname=\"monospace\"];\n";
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const SuperKernelPlan& sk = plan.steps[i];
    const std::string kind = sk.fused ? "" : sk.besideStep >= 0 ? fmt::format("beside step {}: ", sk.besideStep)
                                                                 : std::string("unfused: ");
    s += fmt::format("  subgraph cluster_{} {{\n    label=\"{}{} ({} cores)\";\n", i, kind, esc(sk.name), sk.numCores);
    if (!sk.fused) s += "    style=dashed;\n";
    for (size_t o = 0; o < sk.ops.size(); ++o) {
      const PlannedOp& op = sk.ops[o];
      s += fmt::format("    s{}_o{} [label=\"{}\\nblock_dim {} q{}{}\"];\n", i, o, esc(op.name), op.blockDim, op.queue,
                       op.barrierBefore ? " barrier" : "");
    }
    s += "  }\n";
    for (const Edge& e : sk.edges)
      s += fmt::format("  s{}_o{} -> s{}_o{} [label=\"{} {}{}\"{}];\n", i, e.producer, i, e.consumer,
                       syncKindName(e.sync), depKindName(e.dep), e.buffer.empty() ? "" : " " + esc(e.buffer),
                       e.sync == SyncKind::Event ? ", style=dashed" : "");
    // Side launches: GM notify edges from the ops they wait for, GM wait edges to the ops that wait for them.
    for (const SideLaunch& side : sk.sides) {
      for (uint32_t o : side.after)
        s += fmt::format("  s{}_o{} -> s{}_o0 [label=\"gm notify\", style=bold, color=blue];\n", i, o, side.step);
      for (uint32_t o : side.before)
        s += fmt::format("  s{}_o0 -> s{}_o{} [label=\"gm wait\", style=bold, color=blue];\n", side.step, i, o);
    }
  }
  // Steps run in order (a side launch runs with its SuperKernel: its order is the gm edges).
  size_t prev = 0;
  for (size_t i = 1; i < plan.steps.size(); ++i) {
    if (plan.steps[i].besideStep >= 0) continue;
    if (!plan.steps[prev].ops.empty() && !plan.steps[i].ops.empty())
      s += fmt::format("  s{}_o{} -> s{}_o0 [style=dotted, color=gray, label=\"step\"];\n", prev,
                       plan.steps[prev].ops.size() - 1, i);
    prev = i;
  }
  s += "}\n";
  return s;
}

}  // namespace sk
