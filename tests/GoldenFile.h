// Golden files of generated source (tests/codegen/golden, tests/cuda/golden,
// tests/ascend/golden): one comparison for every back end's golden tests.
// Goldens change only through the regen scripts, which set
// SK_REGEN_GOLDENS=1; a normal run compares, and any difference fails,
// naming the first differing line — or the end of one file, or "the lines
// are equal but the bytes are not" (line endings, a missing final newline),
// so no difference can pass.
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace sktest {

inline bool regeneratingGoldens() {
  const char* v = std::getenv("SK_REGEN_GOLDENS");
  return v && std::string(v) == "1";
}

inline std::string readGolden(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// Compare `text` with `dir`/`name` (with SK_REGEN_GOLDENS=1: rewrite it). `regenScript` is what the failure
/// tells the reader to run when the change is intended.
inline void checkGoldenFile(const std::filesystem::path& dir, const std::string& name, const std::string& text,
                            const std::string& regenScript) {
  const std::filesystem::path file = dir / name;
  if (regeneratingGoldens()) {
    std::filesystem::create_directories(dir);
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out << text;
    ASSERT_TRUE(out.good()) << "cannot write " << file;
    std::printf("regenerated %s\n", file.c_str());
    return;
  }
  ASSERT_TRUE(std::filesystem::exists(file)) << file << " is missing; run " << regenScript << " and review the diff";
  const std::string golden = readGolden(file);
  if (golden == text) return;
  std::istringstream a(golden), b(text);
  std::string la, lb;
  for (int line = 1;; ++line) {
    const bool ga = static_cast<bool>(std::getline(a, la)), gb = static_cast<bool>(std::getline(b, lb));
    if (!ga && !gb) break;
    if (!ga || !gb || la != lb) {
      FAIL() << name << " differs from the generated source at line " << line << ":\n  golden:    "
             << (ga ? la : "<end of file>") << "\n  generated: " << (gb ? lb : "<end of file>")
             << "\nIf the change is intended, run " << regenScript << " and review the diff.";
    }
  }
  FAIL() << name << ": the lines are equal but the bytes are not (line endings or the final newline); run "
         << regenScript << " if the change is intended";
}

}  // namespace sktest
