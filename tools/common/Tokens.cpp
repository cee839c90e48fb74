#include "common/Tokens.h"

#include <chrono>
#include <functional>
#include <memory>
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

// One side of the token timing: `restore` puts the initial buffers on the device (untimed), `token` enqueues
// one token, `sync` waits for the sequence.
struct TokenSide {
  const char* name;
  std::function<Status()> restore;
  std::function<Status(int t)> token;
  std::function<Status()> sync;
  std::vector<double>* samples;
};

Expected<double> sequence(const TokenSide& s, int tokens) {
  SK_RETURN_IF_ERROR(s.restore());
  const auto t0 = Clock::now();
  for (int t = 0; t < tokens; ++t) {
    Status st = s.token(t);
    if (!st) return Error(st.error()).context(tokenContext(s.name, t) + " (timing)");
  }
  if (Status st = s.sync(); !st) return Error(st.error()).context(std::string(s.name));
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// A plan's side: each sample on fresh device copies of `initial` (memory, re-made by restore).
TokenSide planTokenSide(Session& session, CompiledPlan& plan, BufferSet& work, const BufferSet& initial,
                        std::unique_ptr<DeviceBuffers>& memory, const char* name, std::vector<double>* samples) {
  Device* dev = plan.device;
  return TokenSide{name,
                   [&work, &initial, &memory, dev]() -> Status {
                     memory.reset();
                     SK_RETURN_IF_ERROR(work.copyFrom(initial));
                     memory = std::make_unique<DeviceBuffers>(*dev, work);
                     return memory->upload();
                   },
                   [&session, &plan, &memory](int) { return session.run(plan, memory->pointers(), memory->size()); },
                   [dev] { return dev->synchronize(dev->defaultStream()); }, samples};
}
}  // namespace

Expected<TokenRun> runTokens(Session& session, CompiledPlan& fused, CompiledPlan& unfused, int tokens,
                             const TimingConfig& cfg, bool time, const std::vector<GraphSide*>& graphs,
                             bool timeUnfused) {
  if (tokens < 1) return badInput("--tokens must be at least 1");
  if (!fused.device || !unfused.device) return badInput("tokens: the plans were not compiled by a session");
  auto initial = BufferSet::create(fused.list);
  if (!initial) return std::move(initial).error().context("while creating the buffers");
  TokenRun r;
  r.tokens = tokens;
  SK_ASSIGN_OR_RETURN(r.fused, initial->clone());
  SK_ASSIGN_OR_RETURN(r.unfused, initial->clone());
  auto countBytes = [&] {
    for (size_t i = 0; i < r.fused.size(); ++i) r.bytesCompared += r.fused.bytes(i);
  };
  for (int t = 0; t < tokens; ++t) {
    if (Status s = session.run(fused, r.fused); !s) return Error(s.error()).context(tokenContext("fused", t));
    if (Status s = session.run(unfused, r.unfused); !s) return Error(s.error()).context(tokenContext("unfused", t));
    auto diff = r.unfused.compare(r.fused);
    if (!diff) return std::move(diff).error().context("while comparing token " + std::to_string(t));
    countBytes();
    if (diff->has_value()) {
      r.mismatch = std::move(*diff);
      r.mismatchToken = t;
      return r;
    }
  }
  // Each graph baseline in lockstep with a fused run of its own, from the initial buffers (fused's are
  // deterministic: the first pass above already matched unfused token by token).
  for (GraphSide* g : graphs) {
    const char* name = baselineLabel(g->kind());
    SK_ASSIGN_OR_RETURN(BufferSet f, initial->clone());
    SK_RETURN_IF_ERROR(g->restore(*initial));
    for (int t = 0; t < tokens; ++t) {
      if (Status s = session.run(fused, f); !s) return Error(s.error()).context(tokenContext("fused", t));
      Status s = g->launch();
      if (s) s = g->synchronize();
      if (s) s = g->download();
      if (!s) return Error(s.error()).context(tokenContext(name, t));
      auto diff = g->buffers().compare(f);
      if (!diff) return std::move(diff).error().context("while comparing token " + std::to_string(t));
      countBytes();
      if (diff->has_value()) {
        r.mismatch = std::move(*diff);
        r.mismatchToken = t;
        r.mismatchBaseline = g->kind();
        return r;
      }
    }
  }
  if (!time) return r;

  auto work = initial->clone();
  if (!work) return std::move(work).error();
  std::unique_ptr<DeviceBuffers> memory;  // the plan sides' current device copies (one side runs at a time)
  std::vector<TokenSide> sides = {planTokenSide(session, fused, *work, *initial, memory, "fused", &r.fusedSeconds)};
  if (timeUnfused)
    sides.push_back(planTokenSide(session, unfused, *work, *initial, memory, "unfused", &r.unfusedSeconds));
  r.graphs.resize(graphs.size());
  for (size_t i = 0; i < graphs.size(); ++i) {
    GraphSide* g = graphs[i];
    r.graphs[i].kind = g->kind();
    sides.push_back(TokenSide{baselineLabel(g->kind()), [g, &initial] { return g->restore(*initial); },
                              [g](int) { return g->launch(); }, [g] { return g->synchronize(); },
                              &r.graphs[i].seconds});
  }
  r.warmups = 1;
  for (const TokenSide& s : sides) SK_RETURN_IF_ERROR(sequence(s, tokens));
  const size_t n = sides.size();
  for (int i = 0; i < cfg.samples; ++i) {
    for (size_t j = 0; j < n; ++j) {
      const TokenSide& s = sides[(static_cast<size_t>(i) + j) % n];  // the side that goes first rotates
      std::this_thread::sleep_for(std::chrono::milliseconds(cfg.settleMs));
      SK_ASSIGN_OR_RETURN(double seconds, sequence(s, tokens));
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
  for (TokenGraphTiming& g : r.graphs) {
    g.tokensPerSecond = perSecond(g.seconds);
    g.speedup = pairedSpeedup(r.fusedSeconds, g.seconds);
  }
  return r;
}

}  // namespace sk::tools
