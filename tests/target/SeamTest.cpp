// The back-end seam stays a seam (DESIGN section 9): what is specific to
// the cpu back end lives in its folders only. A file outside them that
// calls dlopen, names kernel_abi.c, -fPIC or -lm, or builds sk_run_args, or
// a Session that includes a cpu runtime header, fails here with the file
// and line to move.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

namespace {
namespace fs = std::filesystem;

const fs::path kRoot = SK_SOURCE_ROOT;

// The cpu back end's folders: its code, public header, runtime, templates, kernels.
bool inCpuBackEnd(const fs::path& rel) {
  const std::string s = rel.generic_string();
  for (const char* dir : {"src/target/cpu/", "include/superkernel/target/cpu/", "runtime/cpu/", "templates/cpu/",
                          "kernels/cpu/"})
    if (s.rfind(dir, 0) == 0) return true;
  return false;
}

struct Hit {
  std::string where;
  std::string line;
};

std::vector<Hit> scan(const std::vector<std::string>& roots, const std::regex& pattern) {
  std::vector<Hit> hits;
  for (const std::string& r : roots) {
    for (auto& e : fs::recursive_directory_iterator(kRoot / r)) {
      if (!e.is_regular_file()) continue;
      const fs::path rel = fs::relative(e.path(), kRoot);
      const std::string ext = rel.extension().string();
      if (ext != ".cpp" && ext != ".h" && ext != ".c" && ext != ".txt" && ext != ".cmake") continue;
      if (inCpuBackEnd(rel)) continue;
      std::ifstream in(e.path());
      std::string line;
      for (int n = 1; std::getline(in, line); ++n) {
        // Comments may name things (documentation); code may not.
        const std::string code = line.substr(0, line.find("//"));
        if (std::regex_search(code, pattern)) hits.push_back({rel.generic_string() + ":" + std::to_string(n), line});
      }
    }
  }
  return hits;
}

std::string show(const std::vector<Hit>& hits) {
  std::string s;
  for (const Hit& h : hits) s += "  " + h.where + ": " + h.line + "\n";
  return s;
}

// Library and tool code (tests and benchmarks may drive the cpu back end directly).
const std::vector<std::string> kCode = {"src", "include", "tools"};

TEST(Seam, OnlyTheCpuBackEndLoadsSharedObjects) {
  auto hits = scan(kCode, std::regex(R"(\bdlopen\s*\(|\bdlsym\s*\()"));
  EXPECT_TRUE(hits.empty()) << "dlopen/dlsym outside the cpu back end:\n" << show(hits);
}

TEST(Seam, OnlyTheCpuBackEndNamesItsBuildFlagsAndRuntime) {
  auto hits = scan(kCode, std::regex(R"(kernel_abi\.c|"-fPIC"|"-lm"|"-shared")"));
  EXPECT_TRUE(hits.empty()) << "cpu build details outside the cpu back end:\n" << show(hits);
}

TEST(Seam, OnlyTheCpuBackEndBuildsRunArgs) {
  // A declaration or initialisation of an sk_run_args value.
  auto hits = scan(kCode, std::regex(R"(\bsk_run_args\s+\w+\s*[;{=(]|\bsk_run_args\s*\{)"));
  EXPECT_TRUE(hits.empty()) << "sk_run_args built outside the cpu back end:\n" << show(hits);
}

TEST(Seam, SessionIncludesNoCpuRuntimeHeader) {
  for (const char* f : {"src/session/Session.cpp", "include/superkernel/session/Session.h"}) {
    std::ifstream in(kRoot / f);
    ASSERT_TRUE(in) << f;
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
      if (line.rfind("#include", 0) != 0) continue;
      EXPECT_EQ(line.find("superkernel/cpu/"), std::string::npos) << f << ":" << n << ": " << line;
      EXPECT_EQ(line.find("runtime/Executor.h"), std::string::npos) << f << ":" << n << ": " << line;
      EXPECT_EQ(line.find("target/cpu/"), std::string::npos) << f << ":" << n << ": " << line;
    }
  }
}

TEST(Seam, NoModuleOutsideTheRegistryNamesATarget) {
  // The if-chains over target names are gone: only the registry (and the
  // frontend's list of names an op list may use) spell "ascend" or "cuda".
  auto hits = scan({"src"}, std::regex(R"re("(ascend|cuda)")re"));
  for (auto it = hits.begin(); it != hits.end();) {
    if (it->where.rfind("src/target/Registry.cpp", 0) == 0 || it->where.rfind("src/frontend/Builtins.cpp", 0) == 0 ||
        it->where.rfind("src/frontend/Options.cpp", 0) == 0)
      it = hits.erase(it);
    else
      ++it;
  }
  EXPECT_TRUE(hits.empty()) << "target names outside the registry:\n" << show(hits);
}

}  // namespace
