// A work directory for simulator builds at a stable path per test
// (build/<config>/ascend-sim/<suite>.<test>/<sub>), emptied first: generated
// sources keep the same path from run to run, so a compiler launcher such as
// ccache (SK_COMPILER_LAUNCHER) hits on the second run.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

namespace sktest::ascend {

inline std::filesystem::path workDir(const std::string& sub = "") {
  const ::testing::TestInfo* t = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = std::string(t->test_suite_name()) + "." + t->name();
  for (char& c : name)
    if (c == '/') c = '_';
  std::filesystem::path p = std::filesystem::path(SK_BINARY_ROOT) / "ascend-sim" / name;
  if (!sub.empty()) p /= sub;
  std::error_code ec;
  std::filesystem::remove_all(p, ec);
  std::filesystem::create_directories(p, ec);
  return p;
}

}  // namespace sktest::ascend
