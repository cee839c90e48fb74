// The tools' --help and their documentation agree (issue: every documented
// behaviour holds): every flag and subcommand `sk-compile --help` and
// `sk-cache [SUBCOMMAND] --help` print is described in docs/CLI.md, every flag
// of CLI.md's sk-compile table exists in --help, and every SK_* variable the
// help names is documented in docs/CLI.md or README.md.
#include <functional>
#include <regex>
#include <set>
#include <sstream>

#include "ToolTestUtil.h"

namespace sk::tooltest {
namespace {

std::set<std::string> matches(const std::string& text, const std::regex& re, int group = 0) {
  std::set<std::string> out;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator(); ++it)
    out.insert((*it)[group].str());
  return out;
}

// `word` appears in `doc` as a whole token (not as part of a longer flag or name).
bool mentions(const std::string& doc, const std::string& word) {
  for (size_t p = doc.find(word); p != std::string::npos; p = doc.find(word, p + 1)) {
    auto part = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_'; };
    const bool before = p > 0 && part(doc[p - 1]) && doc[p - 1] != '`' && !(word[0] == '-' && doc[p - 1] == '-');
    const bool after = p + word.size() < doc.size() && part(doc[p + word.size()]);
    if (!before && !after) return true;
  }
  return false;
}

const std::regex kFlag("(^|[^a-zA-Z0-9-])(--[a-z][a-z0-9-]*)");
const std::regex kVar("SK_[A-Z][A-Z0-9_]*");

std::string helpOf(const std::vector<std::string>& argv) {
  Result r = run(argv);
  EXPECT_EQ(r.code, 0) << r.all();
  return r.out;
}

TEST(HelpDocs, EverySkCompileFlagIsDocumentedAndEveryDocumentedFlagExists) {
  const std::string help = helpOf({kCompile, "--help"});
  const std::string cli = readFile(sourceRoot() / "docs/CLI.md");
  const std::set<std::string> flags = matches(help, kFlag, 2);
  ASSERT_GE(flags.size(), 15u) << help;  // positive control: the scan finds the flags
  for (const std::string& f : flags) EXPECT_TRUE(mentions(cli, f)) << f << " (sk-compile --help) is not in docs/CLI.md";
  // The reverse: the first column of CLI.md's sk-compile table.
  const size_t table = cli.find("| flag | meaning |");
  ASSERT_NE(table, std::string::npos);
  const std::string rows = cli.substr(table, cli.find("\n\n", table) - table);
  const std::set<std::string> documented = matches(rows, std::regex("\\n\\| `(--[a-z][a-z0-9-]*)"), 1);
  ASSERT_GE(documented.size(), 15u) << rows.substr(0, 400);
  for (const std::string& f : documented) EXPECT_TRUE(flags.count(f)) << f << " (docs/CLI.md) is not a flag of sk-compile";
  EXPECT_FALSE(mentions(cli, "--no-such-flag")) << "negative control";
}

TEST(HelpDocs, EverySkCacheFlagAndSubcommandIsDocumented) {
  const std::string cli = readFile(sourceRoot() / "docs/CLI.md");
  const std::string help = helpOf({kCache, "--help"});
  // Subcommands: the lines of the "Subcommands:" block.
  const size_t sub = help.find("Subcommands:");
  ASSERT_NE(sub, std::string::npos) << help;
  const std::set<std::string> subcommands = matches(help.substr(sub), std::regex("\\n  ([a-z][a-z-]*) "), 1);
  ASSERT_GE(subcommands.size(), 8u) << help;
  for (const std::string& s : subcommands) {
    EXPECT_TRUE(mentions(cli, s)) << "sk-cache " << s << " is not in docs/CLI.md";
    const std::string subHelp = helpOf({kCache, s, "--help"});
    for (const std::string& f : matches(subHelp, kFlag, 2))
      EXPECT_TRUE(mentions(cli, f)) << "sk-cache " << s << " " << f << " is not in docs/CLI.md";
  }
  for (const std::string& f : matches(help, kFlag, 2))
    EXPECT_TRUE(mentions(cli, f)) << "sk-cache " << f << " is not in docs/CLI.md";
}

// The reverse for sk-cache: every subcommand of CLI.md's sk-cache table and
// every flag its sk-cache section names is one the tool has.
TEST(HelpDocs, EveryDocumentedSkCacheSubcommandAndFlagExists) {
  const std::string cli = readFile(sourceRoot() / "docs/CLI.md");
  const size_t section = cli.find("\n## `sk-cache`");
  ASSERT_NE(section, std::string::npos);
  const std::string doc = cli.substr(section);
  std::set<std::string> subcommands, flags;
  std::function<void(std::vector<std::string>)> walk = [&](std::vector<std::string> argv) {
    argv.push_back("--help");
    const std::string h = helpOf(argv);
    argv.pop_back();
    for (const std::string& f : matches(h, kFlag, 2)) flags.insert(f);
    const size_t sub = h.find("Subcommands:");
    if (sub == std::string::npos) return;
    for (const std::string& s : matches(h.substr(sub), std::regex("\\n  ([a-z][a-z-]*) "), 1)) {
      subcommands.insert(s);
      std::vector<std::string> next = argv;
      next.push_back(s);
      walk(next);
    }
  };
  walk({kCache});
  const size_t table = doc.find("| command | does |");
  ASSERT_NE(table, std::string::npos);
  const std::string rows = doc.substr(table, doc.find("\n\n", table) - table);
  // "| `explain KEY [OTHER]` |", "| `remote ping\|ls\|verify [--remote URL]` |": the words before any argument.
  const std::set<std::string> documented = matches(rows, std::regex("\\n\\| `([a-z][a-z-]*)"), 1);
  ASSERT_GE(documented.size(), 8u) << rows.substr(0, 400);
  for (const std::string& s : documented)
    EXPECT_TRUE(subcommands.count(s)) << "sk-cache " << s << " (docs/CLI.md) is not a subcommand of sk-cache";
  const std::set<std::string> docFlags = matches(doc, kFlag, 2);
  ASSERT_GE(docFlags.size(), 6u);
  for (const std::string& f : docFlags)
    EXPECT_TRUE(flags.count(f)) << f << " (docs/CLI.md, sk-cache section) is not a flag of sk-cache";
  EXPECT_FALSE(flags.count("--no-such-flag")) << "negative control";
}

// Every SK_* variable the docs name is read by the code (or is a build
// option): a documented variable that nothing reads is a false promise.
TEST(HelpDocs, EveryDocumentedVariableIsRead) {
  std::string code;
  for (const char* dir : {"src", "tools", "runtime", "include", "cmake", "scripts"}) {
    for (auto& e : fs::recursive_directory_iterator(sourceRoot() / dir)) {
      const std::string ext = e.path().extension().string();
      if (e.is_regular_file() && (ext == ".cpp" || ext == ".h" || ext == ".c" || ext == ".cmake" || ext == ".sh"))
        code += readFile(e.path());
    }
  }
  code += readFile(sourceRoot() / "CMakeLists.txt");
  // The test suite's own knobs (SK_TEST_*) count where a test reads them: a getenv line of tests/, not a test
  // that merely sets a variable for the program it runs.
  for (auto& e : fs::recursive_directory_iterator(sourceRoot() / "tests")) {
    const std::string ext = e.path().extension().string();
    if (!e.is_regular_file() || (ext != ".cpp" && ext != ".h")) continue;
    std::istringstream lines(readFile(e.path()));
    for (std::string line; std::getline(lines, line);)
      if (line.find("getenv(") != std::string::npos) code += line + "\n";
  }
  std::set<std::string> vars;
  for (const char* doc : {"README.md", "docs/CLI.md", "docs/CACHE.md"})
    for (const std::string& v : matches(readFile(sourceRoot() / doc), kVar)) vars.insert(v);
  ASSERT_GE(vars.size(), 20u);
  for (const std::string& v : vars) EXPECT_TRUE(mentions(code, v)) << v << " is documented but read nowhere in the code";
  EXPECT_FALSE(mentions(code, "SK_NO_SUCH_VARIABLE")) << "negative control";
}

TEST(HelpDocs, EveryVariableTheHelpNamesIsDocumented) {
  const std::string docs = readFile(sourceRoot() / "docs/CLI.md") + readFile(sourceRoot() / "README.md");
  std::set<std::string> vars;
  for (const std::string& h : {helpOf({kCompile, "--help"}), helpOf({kCache, "--help"})})
    for (const std::string& v : matches(h, kVar)) vars.insert(v);
  ASSERT_GE(vars.size(), 3u);
  for (const std::string& v : vars) EXPECT_TRUE(mentions(docs, v)) << v << " (--help) is in neither docs/CLI.md nor README.md";
}

}  // namespace
}  // namespace sk::tooltest
