// Shared state of the session tests: one cache directory for the whole test
// binary (identical sub-kernel objects and SuperKernels compile once across
// cases and across runs of the binary) and one Session per worker count.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include "TestCache.h"
#include "superkernel/session/Session.h"

namespace sk::testing {

inline std::filesystem::path sessionDataDir() {
  return std::filesystem::path(SK_SOURCE_ROOT) / "tests" / "session" / "data";
}

/// $SK_TEST_CACHE_DIR when CI shares one (tests/TestCache.h), else the build tree's own.
inline std::filesystem::path sharedCacheDir() {
  namespace fs = std::filesystem;
  if (auto shared = sktest::sharedTestCache()) return *shared;
  fs::path dir = fs::path(SK_BINARY_ROOT) / "test-cache" / "session";
  fs::create_directories(dir);
  // The cache refuses group/other-writable roots; make ours private.
  fs::permissions(dir.parent_path(), fs::perms::owner_all, fs::perm_options::replace);
  fs::permissions(dir, fs::perms::owner_all, fs::perm_options::replace);
  return dir;
}

/// The session with `workers` workers (created once per process).
inline Session& sessionFor(uint32_t workers) {
  static std::map<uint32_t, std::unique_ptr<Session>> sessions;
  auto it = sessions.find(workers);
  if (it != sessions.end()) return *it->second;
  SessionOptions o;
  o.workers = workers;
  o.cacheDir = sharedCacheDir();
  o.waitTimeoutMs = 20000;
  auto s = Session::create(o);
  if (!s) {
    ADD_FAILURE() << s.error().message();
    std::abort();
  }
  return *sessions.emplace(workers, std::move(*s)).first->second;
}

inline std::string msg(const Error& e) { return std::string(errorKindName(e.kind())) + ": " + e.message(); }

}  // namespace sk::testing
