// The ascend back end through the Session (what sk-compile --target ascend
// --run does): an op list compiled fused with some options and unfused, both
// run in the simulator from identical initial data, buffers compared bit for
// bit (after checking that the reference changed some buffer). Shared by the
// planned-run and scenario tests.
#pragma once

#include <gtest/gtest.h>

#include "TestCache.h"

#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "OptionSquare.h"
#include "superkernel/session/BufferSet.h"
#include "superkernel/session/Session.h"

namespace sktest::ascend {

/// A session on the simulated ascend device with `aiCores` AI Cores (cube
/// pool of aiCores, vector pool of 2 x aiCores) and a memory-only cache (no
/// test depends on an earlier run), or with SK_TEST_CACHE_DIR set, that disk
/// cache. CI sets it for both of its test stages: the simulated kernels are
/// built by the same (unsanitized) host compiler in every build, so what one
/// test or stage compiled (the unfused references of every AI Core count,
/// the builtin objects the suites share) is a verified hit for the next, as
/// the cache serves any other user. Every test passes cold as well.
inline std::unique_ptr<sk::Session> ascendSession(uint32_t aiCores = 8) {
  sk::SessionOptions so;
  so.workers = aiCores;
  so.diskCache = false;
  if (auto dir = sktest::sharedTestCache()) {
    so.diskCache = true;
    so.cacheDir = *dir;
  }
  auto s = sk::Session::create(so);
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message());
  return s.ok() ? std::move(*s) : nullptr;
}

struct RunCounts {
  uint32_t fusedSteps = 0, unfusedSteps = 0;
};

/// Compile `list` for ascend (fused with `options`, or the unfused reference) and run it on `buffers`.
inline sk::Status compileAndRun(sk::Session& session, const sk::OpList& list, const std::string& options, bool fuse,
                                sk::BufferSet& buffers, RunCounts* counts = nullptr) {
  sk::CompileRequest req;
  req.options = options;
  req.fuse = fuse;
  req.target = "ascend-sim";
  auto plan = session.compile(list, req);
  if (!plan) return plan.error();
  if (counts) {
    for (const sk::SuperKernelPlan& s : plan->plan.steps) ++(s.fused ? counts->fusedSteps : counts->unfusedSteps);
  }
  return session.run(*plan, buffers);
}

/// The unfused reference's buffers.
inline std::unique_ptr<sk::BufferSet> referenceRun(sk::Session& session, const sk::OpList& list) {
  auto ref = sk::BufferSet::create(list);
  EXPECT_TRUE(ref.ok());
  if (!ref.ok()) return nullptr;
  RunCounts rc;
  sk::Status st = compileAndRun(session, list, "", false, *ref, &rc);
  EXPECT_TRUE(st.ok()) << st.error().message();
  EXPECT_EQ(rc.fusedSteps, 0u);
  if (!st.ok()) return nullptr;
  // The reference must have changed some buffer: a simulated run that computes nothing (fused and unfused alike)
  // would compare equal, so the comparisons against this reference would prove nothing.
  auto initial = sk::BufferSet::create(list);
  EXPECT_TRUE(initial.ok());
  if (!initial.ok()) return nullptr;
  auto changed = initial->compare(*ref);
  EXPECT_TRUE(changed.ok());
  EXPECT_TRUE(changed.ok() && changed->has_value()) << "the unfused reference left every buffer as initialised";
  return std::make_unique<sk::BufferSet>(std::move(*ref));
}

/// Fused with `options` on `session`, compared with `reference`; returns the fused run's counts.
inline RunCounts expectFusedEqualsReference(sk::Session& session, const sk::OpList& list, const std::string& options,
                                            const sk::BufferSet& reference) {
  SCOPED_TRACE("options: " + options);
  RunCounts rc;
  auto bufs = sk::BufferSet::create(list);
  EXPECT_TRUE(bufs.ok());
  if (!bufs.ok()) return rc;
  sk::Status st = compileAndRun(session, list, options, true, *bufs, &rc);
  EXPECT_TRUE(st.ok()) << st.error().message();
  if (!st.ok()) return rc;
  auto diff = bufs->compare(reference);
  EXPECT_TRUE(diff.ok());
  if (diff.ok()) {
    EXPECT_FALSE(diff->has_value()) << (*diff)->message();
  }
  return rc;
}

/// One session per AI Core count, made on first use (each keeps its compiled objects in memory).
class SessionsByCores {
 public:
  sk::Session* operator()(uint32_t aiCores) {
    auto& s = sessions_[aiCores];
    if (!s) s = ascendSession(aiCores);
    return s.get();
  }

 private:
  std::map<uint32_t, std::unique_ptr<sk::Session>> sessions_;
};

/// Fused == `reference` in every cell of the option square (tests/OptionSquare.h): the cell's options plus
/// `extra`, on a session of the cell's AI Core count. `check` sees each cell's counts and AI Cores.
inline void expectFusedEqualsReferenceOverSquare(SessionsByCores& sessions, const sk::OpList& list,
                                                 const sk::BufferSet& reference, const std::string& extra,
                                                 const std::function<void(const RunCounts&, uint32_t)>& check) {
  for (const OptionCell& cell : optionSquare({1, 2, 4})) {
    const std::string options = cell.options() + extra;
    SCOPED_TRACE(options + " on " + std::to_string(cell.cores) + " AI Core(s)");
    sk::Session* s = sessions(cell.cores);
    ASSERT_NE(s, nullptr);
    check(expectFusedEqualsReference(*s, list, options, reference), cell.cores);
  }
}

}  // namespace sktest::ascend
