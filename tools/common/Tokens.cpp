#include "common/Tokens.h"

#include <chrono>
#include <string>
#include <thread>

#include "superkernel/session/DeviceBuffers.h"
#include "superkernel/target/Backend.h"

namespace sk::tools {

bool hasRuntimeValues(const OpList& list) {
  for (const Op& op : list.ops)
    for (const auto& [name, a] : op.args)
      if (a.isRuntime()) return true;
  return false;
}

namespace {
using Clock = std::chrono::steady_clock;

std::string tokenContext(const char* side, int t) { return std::string(side) + " run of token " + std::to_string(t); }

// One side's T tokens from `initial`, on memory that stays on the device between the runs.
Expected<double> sequence(Session& session, CompiledPlan& plan, BufferSet& work, const BufferSet& initial, int tokens,
                          const char* side) {
  SK_RETURN_IF_ERROR(work.copyFrom(initial));
  DeviceBuffers memory(*plan.device, work);
  SK_RETURN_IF_ERROR(memory.upload());
  Device& dev = *plan.device;
  const auto t0 = Clock::now();
  for (int t = 0; t < tokens; ++t) {
    Status st = session.run(plan, memory.pointers(), memory.size());
    if (!st) return Error(st.error()).context(tokenContext(side, t) + " (timing)");
  }
  if (Status st = dev.synchronize(dev.defaultStream()); !st) return Error(st.error()).context(std::string(side));
  return std::chrono::duration<double>(Clock::now() - t0).count();
}
}  // namespace

Expected<TokenRun> runTokens(Session& session, CompiledPlan& fused, CompiledPlan& unfused, int tokens,
                             const TimingConfig& cfg, bool time) {
  if (tokens < 1) return badInput("--tokens must be at least 1");
  if (!fused.device || !unfused.device) return badInput("tokens: the plans were not compiled by a session");
  auto initial = BufferSet::create(fused.list);
  if (!initial) return std::move(initial).error().context("while creating the buffers");
  TokenRun r;
  r.tokens = tokens;
  SK_ASSIGN_OR_RETURN(r.fused, initial->clone());
  SK_ASSIGN_OR_RETURN(r.unfused, initial->clone());
  for (int t = 0; t < tokens; ++t) {
    if (Status s = session.run(fused, r.fused); !s) return Error(s.error()).context(tokenContext("fused", t));
    if (Status s = session.run(unfused, r.unfused); !s) return Error(s.error()).context(tokenContext("unfused", t));
    auto diff = r.unfused.compare(r.fused);
    if (!diff) return std::move(diff).error().context("while comparing token " + std::to_string(t));
    for (size_t i = 0; i < r.fused.size(); ++i) r.bytesCompared += r.fused.bytes(i);
    if (diff->has_value()) {
      r.mismatch = std::move(*diff);
      r.mismatchToken = t;
      return r;
    }
  }
  if (!time) return r;

  auto work = initial->clone();
  if (!work) return std::move(work).error();
  struct Side {
    CompiledPlan* plan;
    const char* name;
    std::vector<double>* samples;
  } sides[2] = {{&fused, "fused", &r.fusedSeconds}, {&unfused, "unfused", &r.unfusedSeconds}};
  r.warmups = 1;
  for (Side& s : sides) SK_RETURN_IF_ERROR(sequence(session, *s.plan, *work, *initial, tokens, s.name));
  for (int i = 0; i < cfg.samples; ++i) {
    for (int j = 0; j < 2; ++j) {
      Side& s = sides[(i + j) % 2];  // the side that goes first alternates
      std::this_thread::sleep_for(std::chrono::milliseconds(cfg.settleMs));
      SK_ASSIGN_OR_RETURN(double seconds, sequence(session, *s.plan, *work, *initial, tokens, s.name));
      s.samples->push_back(seconds);
    }
  }
  auto perSecond = [&](const std::vector<double>& seconds) {
    std::vector<double> v;
    for (double s : seconds) v.push_back(s > 0 ? tokens / s : 0);
    return summarize(std::move(v));
  };
  r.fusedTokensPerSecond = perSecond(r.fusedSeconds);
  r.unfusedTokensPerSecond = perSecond(r.unfusedSeconds);
  r.speedup = pairedSpeedup(r.fusedSeconds, r.unfusedSeconds);
  return r;
}

}  // namespace sk::tools
