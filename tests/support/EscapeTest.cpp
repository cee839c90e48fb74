// support/Escape.h against a real compiler: every hostile string, escaped for
// a string literal and for // and /* */ comments, is compiled into one
// program that must print each string back byte for byte and run the code
// line after each comment (a comment that swallowed its next line, or a
// literal that ended early, shows up as a compile error or a wrong count).
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "CompilerPresent.h"
#include "superkernel/driver/Process.h"
#include "superkernel/driver/Toolchain.h"
#include "support/Escape.h"

namespace sk {
namespace {
namespace fs = std::filesystem;

std::vector<std::string> hostileStrings() {
  std::vector<std::string> v = {
      "plain", "quote\"inside", "back\\slash", "trailing\\", "two trailing\\\\", "new\nline", "cr\rlf\r\n",
      "end */ comment", "/* open", "// line", "#define X 1", "?\?/", "?\?=trigraph?\?/", "tab\there",
      std::string("nul\0byte", 8), "\xff\xfe not utf-8 \xc3", "utf-8 \xc3\xa9 \xe4\xb8\xad \xe2\x80\xae bidi",
      "\"); __builtin_trap(); (\"", "*/ __builtin_trap(); /*", "\n__builtin_trap();\n", "\\\n__builtin_trap();",
      "%s%n{{name}}", "'", "\\x41\\101", "?", "a?", "??", "*", "*/", "/"};
  v.push_back(std::string(5000, 'x') + "\\");
  std::string all;
  for (int c = 0; c < 256; ++c) all += static_cast<char>(c);
  v.push_back(all);
  return v;
}

TEST(Escape, CStringAndCommentsSurviveACompiler) {
  // Only an absent compiler skips (looked up without findToolchain); its failure on an installed one fails.
  if (!sktest::installed(sktest::defaultCompiler())) GTEST_SKIP() << "no compiler: " << sktest::defaultCompiler();
  auto tc = findToolchain();
  ASSERT_TRUE(tc.ok()) << tc.error().message();
  const auto strings = hostileStrings();
  std::string src = "#include <cstdio>\nint main() {\n  int lines = 0;\n";
  for (size_t i = 0; i < strings.size(); ++i) {
    const std::string& s = strings[i];
    src += fmt::format("  {{ static const char s[] = \"{}\"; std::fwrite(s, 1, sizeof s - 1, stdout); std::putchar(0); }}\n",
                       escapeCString(s));
    src += "  // " + escapeComment(s) + "\n  ++lines;\n";
    src += "  /* " + escapeComment(s) + " */ ++lines;\n";
    src += "  ++lines; // " + escapeComment(s) + "\n";
  }
  src += "  std::printf(\"%d\", lines);\n}\n";
  fs::path dir = fs::temp_directory_path() / fmt::format("sk-escape-test-{}", ::getpid());
  fs::create_directories(dir);
  std::ofstream(dir / "t.cpp", std::ios::binary) << src;
  auto cc = runProcess({tc->invocation.string(), "-std=c++17", "-Werror=comment", "-o", (dir / "t").string(),
                        (dir / "t.cpp").string()});
  ASSERT_TRUE(cc) << cc.error().message();
  ASSERT_TRUE(cc->succeeded()) << cc->err;
  auto run = runProcess({(dir / "t").string()});
  ASSERT_TRUE(run && run->succeeded());
  std::string expected;
  for (const auto& s : strings) expected += s + std::string(1, '\0');
  expected += std::to_string(3 * strings.size());
  EXPECT_EQ(run->out, expected);
  fs::remove_all(dir);
}

TEST(Escape, OutputIsPrintableAsciiAndNeverEndsAComment) {
  for (const auto& s : hostileStrings()) {
    for (const std::string& e : {escapeCString(s), escapeComment(s)}) {
      for (char c : e) EXPECT_TRUE(c >= 0x20 && c < 0x7f) << "byte " << int(static_cast<unsigned char>(c));
      EXPECT_EQ(e.find("??"), std::string::npos) << e;
    }
    const std::string c = escapeComment(s);
    EXPECT_EQ(c.find("*/"), std::string::npos) << c;
    EXPECT_EQ(c.find("/*"), std::string::npos) << c;
    EXPECT_EQ(c.find('\\', 0) == std::string::npos || c.back() != '\\', true) << c;
    EXPECT_EQ(escapeCString(s).find("\\\"") == std::string::npos && s.find('"') != std::string::npos, false);
  }
  EXPECT_EQ(escapeCString("a\"b\\c?\n\x01\xff"), "a\\\"b\\\\c\\?\\012\\001\\377");
  EXPECT_EQ(escapeCString(std::string("\0" "1", 2)), "\\0001");  // three digits: the '1' stays a character
  EXPECT_EQ(escapeComment("x\\"), "x\\x5c");
  EXPECT_EQ(escapeComment("*/"), "*\\x2f");
  EXPECT_EQ(escapeComment("?\?/"), "?\\x3f/");
  EXPECT_EQ(escapeComment("a\nb"), "a\\x0ab");
}

}  // namespace
}  // namespace sk
