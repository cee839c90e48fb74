// `sk-compile --tokens T`: a decode loop of T steps (docs/CLI.md).
//
// A list with runtime values (OpList.h RuntimeScalar) is one step of a loop:
// each run reads the position from a buffer, and a list whose last ops write
// the next position and input needs nothing from the host between runs. So a
// step cannot be timed the way --run times a frozen step (thousands of runs of
// the same buffers would walk the position past a KV cache's capacity).
// Instead:
//   1. Check: fused and unfused, from identical initial buffers, run T tokens
//      each, and every buffer is compared bit for bit after every token (the
//      first differing token is the finding).
//   2. Time: a sample is the wall time of T consecutive runs (tokens) from the
//      initial buffers, restored before each sample (not timed); one warm-up
//      sequence per side, then samples alternate fused/unfused with the side
//      that starts rotating and a short sleep before each, as in Timing.h.
//      Tokens per second = T / sample; medians with min-max; the speedup per
//      sample pair. On a device with its own memory each sample uploads the
//      initial buffers first (not timed) and the runs then stay on the device.
#pragma once

#include <optional>
#include <vector>

#include "common/Baselines.h"
#include "common/Timing.h"
#include "superkernel/session/BufferSet.h"
#include "superkernel/session/Session.h"

namespace sk::tools {

/// Whether any op of the list takes a runtime scalar.
bool hasRuntimeValues(const OpList& list);

/// A graph baseline's figures (Baselines.h): per sample T replays, one per token.
struct TokenGraphTiming {
  Baseline kind;
  std::vector<double> seconds;
  Summary tokensPerSecond, speedup;  // speedup: its time / fused's, per sample pair
};

struct TokenRun {
  int tokens = 0;
  BufferSet fused, unfused;                 // after the checked T tokens
  std::optional<BufferMismatch> mismatch;   // nullopt: every token bit-identical
  int mismatchToken = -1;                   // 0-based token of the first difference
  Baseline mismatchBaseline = Baseline::Unfused;  // the side that differed from fused
  uint64_t bytesCompared = 0;               // over all tokens
  // Timing (only when requested and every token matched; warmups 0 and no samples otherwise).
  int warmups = 0;
  std::vector<double> fusedSeconds, unfusedSeconds;  // per sample: T tokens
  Summary fusedTokensPerSecond, unfusedTokensPerSecond, speedup;
  std::vector<TokenGraphTiming> graphs;     // one per graph side, in the order given
};

/// Runs the check and, with `time`, the timing above. `graphs` (GraphSide::capture'd from the initial
/// buffers) are checked against fused after every token too, and timed with the others (a sample: T
/// replays from the initial buffers); `timeUnfused` false leaves unfused out of the timing (it is still
/// checked). A run failure is a Runtime error naming the side and the token.
Expected<TokenRun> runTokens(Session& session, CompiledPlan& fused, CompiledPlan& unfused, int tokens,
                             const TimingConfig& config, bool time, const std::vector<GraphSide*>& graphs = {},
                             bool timeUnfused = true);

}  // namespace sk::tools
