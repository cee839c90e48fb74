// The disk cache CI shares among the tests that compile the same kernels, and among its test stages:
// $SK_TEST_CACHE_DIR (.ci/run empties it before the first stage, so every object is still compiled once per
// CI run, by the first test that needs it). Kernels are compiled by the same unsanitized compilers in every
// build (clang++ or $SK_CXX for cpu, nvcc for cuda, the simulators' host compiler) and keys do not depend on
// where the build tree is (docs/CACHE.md), so what the release stage compiled is a verified hit for the ASan
// stage. Tests whose assertions count compiles keep caches of their own; every test passes cold as well.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <optional>

namespace sktest {

/// $SK_TEST_CACHE_DIR, or nothing when unset (the test then uses its own fresh cache).
inline std::optional<std::filesystem::path> sharedTestCache() {
  const char* dir = std::getenv("SK_TEST_CACHE_DIR");
  if (!dir || !*dir) return std::nullopt;
  return std::filesystem::path(dir);
}

}  // namespace sktest
