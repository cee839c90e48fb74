// The cpu end-to-end planner scenarios (tests/session/data/scenarios.json:
// every sync kind, early start, kernel_sync, streams, views, unfusible and
// unscoped ops) as a cuda op list: the same ops, buffers and scopes, each
// kernel's source its cuda port in tests/cuda/data/kernels (same entry, same
// parameters). Written to a file so sk-compile can plan, build and run it.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "superkernel/frontend/OpList.h"

namespace sk::cudatest {

inline std::string writeCudaScenarios(const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  const fs::path root(SK_SOURCE_ROOT);
  auto l = loadOpList(root / "tests" / "session" / "data" / "scenarios.json");
  EXPECT_TRUE(l.ok()) << (l.ok() ? "" : l.error().message());
  if (!l.ok()) return {};
  OpList list = std::move(*l);
  list.target = "cuda";
  const fs::path ports = root / "tests" / "cuda" / "data" / "kernels";
  for (KernelDecl& k : list.kernels) {
    const fs::path port = ports / fs::path(k.source).filename().replace_extension(".cu");
    EXPECT_TRUE(fs::exists(port)) << "kernel " << k.name << " has no cuda port " << port;
    k.source = port.string();
    k.sourcePath = port;
  }
  const fs::path file = dir / "scenarios_cuda.json";
  std::ofstream(file) << writeOpList(list);
  return file.string();
}

}  // namespace sk::cudatest
