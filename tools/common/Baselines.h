// `sk-compile --run --baselines`: what the fused SuperKernel is compared with (docs/CLI.md). Besides one
// launch per op (unfused, the reference every run checks), the same unfused kernels as a launch graph captured
// once and replayed (graph: a CUDA graph), and as one whose launches after the first are programmatic
// dependent launches (graph-pdl: CUDA Graph + PDL, the kernels built as the PDL variant), which is what a GPU
// user has without fusion. Each baseline is checked bit for bit against the fused run (after every token
// with --tokens) and timed interleaved with it.
//
// A graph baseline computes on its own copies of the buffers (GraphSide): capturing runs the plan once, so the
// copies are restored to the initial buffers afterwards and before every checked or timed sequence.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "superkernel/session/BufferSet.h"
#include "superkernel/session/DeviceBuffers.h"
#include "superkernel/session/Session.h"
#include "superkernel/support/Error.h"

namespace sk::tools {

enum class Baseline : uint8_t { Unfused, Graph, GraphPdl };

/// "unfused", "graph", "graph-pdl": the --baselines spelling.
const char* baselineName(Baseline b);
/// The report's row: "unfused", "graph", "graph+pdl".
const char* baselineLabel(Baseline b);
/// The baseline of a --baselines name (baselineName), or nullopt.
std::optional<Baseline> baselineNamed(std::string_view name);
/// --baselines: a comma-separated list of the names above, or "all"; each at most once, at least one. The
/// result is in the order above. BadInput naming the accepted values.
Expected<std::vector<Baseline>> parseBaselines(std::string_view text);

/// A launch graph of an unfused plan on its own device copies of the buffers.
class GraphSide {
 public:
  /// Copies `initial` to the device, captures `plan` on the copies (Session::captureGraph: one untimed run),
  /// then restores them to `initial`.
  static Expected<std::unique_ptr<GraphSide>> capture(Session& session, CompiledPlan& plan, Baseline kind,
                                                      const BufferSet& initial);
  GraphSide(const GraphSide&) = delete;
  GraphSide& operator=(const GraphSide&) = delete;

  Baseline kind() const { return kind_; }
  /// The device copies back to `initial`'s contents (untimed).
  Status restore(const BufferSet& initial);
  /// One replay, enqueued; and the wait for it.
  Status launch();
  Status synchronize();
  /// The device copies into buffers(), for a comparison.
  Status download();
  const BufferSet& buffers() const { return buffers_; }

 private:
  GraphSide(Baseline kind, Device& device, BufferSet buffers)
      : kind_(kind), device_(device), buffers_(std::move(buffers)), memory_(device_, buffers_) {}
  Baseline kind_;
  Device& device_;
  BufferSet buffers_;
  DeviceBuffers memory_;  // over buffers_ (declared after it)
  std::unique_ptr<LaunchGraph> graph_;
};

}  // namespace sk::tools
