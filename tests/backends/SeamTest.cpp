// The back-end seam stays a seam (DESIGN section 9): what is specific to a
// back end lives in its folders only. Shared code (everything outside the
// back ends' folders) that calls dlopen, names kernel_abi.c, -fPIC, -shared
// or -lm, or builds sk_run_args, or spells a registered target's name, or a
// Session that includes a cpu runtime header, fails here with the file and
// line to move.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>
// g++ 12 with sanitizers reports a false -Wmaybe-uninitialized inside
// libstdc++'s <regex> (std::function in the NFA); it is not this file's code.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <regex>
#include <string>
#include <vector>

#include "superkernel/target/Targets.h"

namespace {
namespace fs = std::filesystem;

const fs::path kRoot = SK_SOURCE_ROOT;

// A back end's own folders: its code, public header, runtime, templates, kernels (cpu, and any other back
// end such as ascend, which builds and loads host objects for its simulator inside its own folders).
bool inBackEnd(const fs::path& rel) {
  const std::string s = rel.generic_string();
  for (const char* dir : {"src/backends/", "include/superkernel/target/", "runtime/", "templates/", "kernels/"}) {
    if (s.rfind(dir, 0) != 0) continue;
    const std::string rest = s.substr(std::string(dir).size());
    if (rest.find('/') != std::string::npos) return true;  // inside src/backends/<name>/ etc.
  }
  return false;
}

struct Hit {
  std::string where;
  std::string line;
};

// Every code line (comments cut) of the files under base/<roots> outside the back ends that matches.
std::vector<Hit> scan(const std::vector<std::string>& roots, const std::regex& pattern, const fs::path& base = kRoot,
                      const std::vector<std::string>& exempt = {}) {
  std::vector<Hit> hits;
  for (const std::string& r : roots) {
    for (auto& e : fs::recursive_directory_iterator(base / r)) {
      if (!e.is_regular_file()) continue;
      const fs::path rel = fs::relative(e.path(), base);
      const std::string ext = rel.extension().string();
      if (ext != ".cpp" && ext != ".h" && ext != ".c" && ext != ".txt" && ext != ".cmake") continue;
      if (inBackEnd(rel)) continue;
      if (std::find(exempt.begin(), exempt.end(), rel.generic_string()) != exempt.end()) continue;
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

// dlopen/dlsym, or the loader the back ends share for their vendor libraries (support/DynamicLibrary.h,
// the one shared file allowed to call dlopen: it is a helper of the back ends, and shared code that calls
// it loads a library as surely as with dlopen).
const std::regex kLoadsObjects(R"(\bdlopen\s*\(|\bdlsym\s*\(|\bopenFirstLibrary\s*\(|\bbindSymbol\s*\()");
const std::vector<std::string> kTheSharedLoader = {"src/support/DynamicLibrary.h", "src/support/DynamicLibrary.cpp"};
const std::regex kBuildDetails(R"(kernel_abi\.c|"-fPIC"|"-lm"|"-shared")");
// A declaration or initialisation of an sk_run_args value.
const std::regex kBuildsRunArgs(R"(\bsk_run_args\s+\w+\s*[;{=(]|\bsk_run_args\s*\{)");
// A string literal that is a registered target's name, "cpu" included (the registry's own list, so a back
// end added later is searched for too).
std::regex namesATarget(const std::vector<std::string>& names) {
  std::string alternatives;
  for (const std::string& n : names) {
    std::string escaped;
    for (char c : n) escaped += std::isalnum(static_cast<unsigned char>(c)) ? std::string(1, c) : std::string("\\") + c;
    alternatives += (alternatives.empty() ? "" : "|") + escaped;
  }
  return std::regex("\"(" + alternatives + ")\"");
}
const std::regex kNamesATarget = namesATarget(sk::targetNames());

// The lines of `in` that include a cpu runtime header, as "NAME:LINE: text".
std::vector<std::string> cpuRuntimeIncludes(std::istream& in, const std::string& name) {
  std::vector<std::string> found;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.rfind("#include", 0) != 0) continue;
    if (line.find("superkernel/cpu/") != std::string::npos || line.find("runtime/Executor.h") != std::string::npos ||
        line.find("backends/cpu/") != std::string::npos)
      found.push_back(name + ":" + std::to_string(n) + ": " + line);
  }
  return found;
}

TEST(Seam, OnlyBackEndsLoadSharedObjects) {
  auto hits = scan(kCode, kLoadsObjects, kRoot, kTheSharedLoader);
  EXPECT_TRUE(hits.empty()) << "dlopen/dlsym outside the back ends:\n" << show(hits);
}

TEST(Seam, OnlyBackEndsNameTheirBuildFlagsAndRuntime) {
  auto hits = scan(kCode, kBuildDetails);
  EXPECT_TRUE(hits.empty()) << "build details outside the back ends:\n" << show(hits);
}

TEST(Seam, OnlyBackEndsBuildRunArgs) {
  auto hits = scan(kCode, kBuildsRunArgs);
  EXPECT_TRUE(hits.empty()) << "sk_run_args built outside the back ends:\n" << show(hits);
}

TEST(Seam, SessionIncludesNoCpuRuntimeHeader) {
  for (const char* f : {"src/session/Session.cpp", "include/superkernel/session/Session.h"}) {
    std::ifstream in(kRoot / f);
    ASSERT_TRUE(in) << f;
    for (const std::string& hit : cpuRuntimeIncludes(in, f)) ADD_FAILURE() << hit;
  }
}

TEST(Seam, NoSharedModuleNamesATarget) {
  // Which targets exist is the registry's answer (target/Targets.h): no
  // shared file or tool spells a target's name, the registry included (it
  // registers each built-in back end by its factory).
  ASSERT_GE(sk::targetNames().size(), 4u);
  auto hits = scan({"src", "tools"}, kNamesATarget);
  EXPECT_TRUE(hits.empty()) << "target names outside the back ends:\n" << show(hits);
}

// The scans above pass when they find nothing, so a scan that can find nothing (a wrong root, an extension
// filter that drops .cpp, a pattern that never matches) would pass too. A planted tree: each offence once in
// shared code (found, with its file and line), once in a back end's folder and once in a comment (neither
// found).
TEST(Seam, TheScansFindAPlantedOffence) {
  const fs::path base = fs::temp_directory_path() / ("sk-seam-" + std::to_string(::getpid()));
  fs::remove_all(base);
  const std::string offences =
      "void* h = dlopen(\"libk.so\", 0);\n"
      "const char* flag = \"-fPIC\";\n"
      "sk_run_args args{};\n"
      "if (target == \"cuda\") {}\n";
  std::string commented;
  for (size_t b = 0, e; (e = offences.find('\n', b)) != std::string::npos; b = e + 1)
    commented += "// " + offences.substr(b, e - b + 1);
  auto plant = [&](const std::string& rel, const std::string& text) {
    fs::create_directories((base / rel).parent_path());
    std::ofstream(base / rel) << text;
  };
  plant("src/session/Planted.cpp", "int before;\n" + offences);
  plant("src/session/Commented.cpp", commented);
  plant("src/backends/cpu/Planted.cpp", offences);
  plant("tools/sk-x/Planted.txt", offences);  // CMake text is scanned too

  struct Case {
    const std::regex* pattern;
    int line;
  } cases[] = {{&kLoadsObjects, 2}, {&kBuildDetails, 3}, {&kBuildsRunArgs, 4}, {&kNamesATarget, 5}};
  for (const Case& c : cases) {
    SCOPED_TRACE("line " + std::to_string(c.line));
    auto hits = scan({"src", "tools"}, *c.pattern, base);
    std::sort(hits.begin(), hits.end(), [](const Hit& a, const Hit& b) { return a.where < b.where; });
    ASSERT_EQ(hits.size(), 2u) << show(hits);
    EXPECT_EQ(hits[0].where, "src/session/Planted.cpp:" + std::to_string(c.line)) << show(hits);
    EXPECT_EQ(hits[1].where, "tools/sk-x/Planted.txt:" + std::to_string(c.line - 1)) << show(hits);
  }
  // Every registered name is searched for, the host's too.
  plant("src/session/Host.cpp", "std::string t = \"cpu\";\nstd::string u = \"cuda-sim\";\nstd::string v = \"cpus\";\n");
  auto names = scan({"src"}, kNamesATarget, base);
  std::sort(names.begin(), names.end(), [](const Hit& a, const Hit& b) { return a.where < b.where; });
  ASSERT_EQ(names.size(), 3u) << show(names);
  EXPECT_EQ(names[0].where, "src/session/Host.cpp:1");
  EXPECT_EQ(names[1].where, "src/session/Host.cpp:2");
  EXPECT_EQ(names[2].where, "src/session/Planted.cpp:5");
  // The back ends' shared loader may call dlopen; shared code that calls the loader is an offence.
  plant("src/support/DynamicLibrary.cpp", "void* h = dlopen(\"libk.so\", 0);\n");
  plant("src/session/Loader.cpp", "auto lib = openFirstLibrary({\"libk.so\"});\n");
  auto loads = scan({"src"}, kLoadsObjects, base, kTheSharedLoader);
  std::sort(loads.begin(), loads.end(), [](const Hit& a, const Hit& b) { return a.where < b.where; });
  ASSERT_EQ(loads.size(), 2u) << show(loads);
  EXPECT_EQ(loads[0].where, "src/session/Loader.cpp:1");
  EXPECT_EQ(loads[1].where, "src/session/Planted.cpp:2");
  fs::remove_all(base);

  std::istringstream includes(
      "#include <vector>\n#include \"superkernel/cpu/kernel.h\"\n#include \"runtime/Executor.h\"\n"
      "#include \"backends/cpu/Cpu.h\"\n// #include \"superkernel/cpu/kernel.h\"\n");
  EXPECT_EQ(cpuRuntimeIncludes(includes, "x.cpp"),
            (std::vector<std::string>{"x.cpp:2: #include \"superkernel/cpu/kernel.h\"",
                                      "x.cpp:3: #include \"runtime/Executor.h\"",
                                      "x.cpp:4: #include \"backends/cpu/Cpu.h\""}));
}

}  // namespace
