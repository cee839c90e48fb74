#include "common/Baselines.h"

#include <fmt/format.h>

#include "superkernel/target/Backend.h"

namespace sk::tools {

namespace {
constexpr Baseline kAll[] = {Baseline::Unfused, Baseline::Graph, Baseline::GraphPdl};
}

const char* baselineName(Baseline b) {
  switch (b) {
    case Baseline::Unfused: return "unfused";
    case Baseline::Graph: return "graph";
    case Baseline::GraphPdl: return "graph-pdl";
  }
  return "?";
}

const char* baselineLabel(Baseline b) { return b == Baseline::GraphPdl ? "graph+pdl" : baselineName(b); }

std::optional<Baseline> baselineNamed(std::string_view name) {
  for (Baseline b : kAll)
    if (name == baselineName(b)) return b;
  return std::nullopt;
}

Expected<std::vector<Baseline>> parseBaselines(std::string_view text) {
  const std::string accepted = "unfused, graph, graph-pdl (comma-separated), or all";
  if (text == "all") return std::vector<Baseline>(std::begin(kAll), std::end(kAll));
  std::vector<bool> on(std::size(kAll), false);
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    const std::string_view item =
        text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    const std::optional<Baseline> b = baselineNamed(item);
    if (!b) return badInput(fmt::format("--baselines: '{}' is not a baseline; accepted: {}", item, accepted));
    const size_t k = static_cast<size_t>(*b);  // kAll is in enum order
    if (on[k]) return badInput(fmt::format("--baselines: '{}' is listed twice", item));
    on[k] = true;
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  std::vector<Baseline> out;
  for (size_t k = 0; k < std::size(kAll); ++k)
    if (on[k]) out.push_back(kAll[k]);
  return out;
}

Expected<std::unique_ptr<GraphSide>> GraphSide::capture(Session& session, CompiledPlan& plan, Baseline kind,
                                                        const BufferSet& initial) {
  if (kind == Baseline::Unfused) return internalError("the unfused baseline is not a launch graph");
  if (!plan.device) return badInput("a graph baseline: the plan was not compiled by a session");
  SK_ASSIGN_OR_RETURN(BufferSet copy, initial.clone());
  std::unique_ptr<GraphSide> g(new GraphSide(kind, *plan.device, std::move(copy)));
  SK_RETURN_IF_ERROR(g->restore(initial));
  SK_ASSIGN_OR_RETURN(g->graph_, session.captureGraph(plan, g->memory_.pointers(), g->memory_.size(),
                                                      kind == Baseline::GraphPdl ? GraphLaunch::Pdl
                                                                                 : GraphLaunch::Plain));
  SK_RETURN_IF_ERROR(g->restore(initial));
  return g;
}

Status GraphSide::restore(const BufferSet& initial) {
  SK_RETURN_IF_ERROR(buffers_.copyFrom(initial));
  SK_RETURN_IF_ERROR(memory_.upload());
  // The upload goes through the default stream, which the graph's stream does not wait for (cuda's is
  // non-blocking, and a pageable cudaMemcpy may return before its DMA lands): wait for it here.
  return device_.synchronize(device_.defaultStream());
}

Status GraphSide::launch() {
  Status st = graph_->launch();
  if (!st) return Error(st.error()).context(std::string(baselineLabel(kind_)) + " replay");
  return st;
}

Status GraphSide::synchronize() {
  Status st = device_.synchronize(graph_->stream());
  if (!st) return Error(st.error()).context(std::string(baselineLabel(kind_)) + " replay");
  return st;
}

Status GraphSide::download() { return memory_.download(); }

}  // namespace sk::tools
