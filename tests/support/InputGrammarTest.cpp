// The grammar of op-list strings that reach argv or generated source.
#include <gtest/gtest.h>

#include <string>

#include "support/InputGrammar.h"

namespace sk::grammar {
namespace {

bool ok(const std::string& problem) { return problem.empty(); }

TEST(InputGrammar, Utf8) {
  EXPECT_TRUE(validUtf8("plain"));
  EXPECT_TRUE(validUtf8("\xc3\xa9\xe4\xb8\xad\xf0\x9f\x98\x80"));
  EXPECT_FALSE(validUtf8("\xff"));
  EXPECT_FALSE(validUtf8("\xc3"));          // truncated
  EXPECT_FALSE(validUtf8("\xc0\xaf"));      // overlong '/'
  EXPECT_FALSE(validUtf8("\xed\xa0\x80"));  // surrogate
  EXPECT_FALSE(validUtf8("\xf4\x90\x80\x80"));  // above U+10FFFF
}

TEST(InputGrammar, Names) {
  EXPECT_TRUE(ok(nameProblem("layers.0/attn:q \"x\" \\ */ # \xc3\xa9", 256)));
  EXPECT_EQ(nameProblem("", 256), "name must not be empty");
  EXPECT_EQ(nameProblem(std::string(257, 'a'), 256), "name longer than 256 bytes");
  EXPECT_EQ(nameProblem("a\nb", 256), "name contains a control character");
  EXPECT_EQ(nameProblem(std::string("a\0b", 3), 256), "name contains a control character");
  EXPECT_EQ(nameProblem("a\x7f", 256), "name contains a control character");
  EXPECT_EQ(nameProblem("a\xc2\x85", 256), "name contains a control character");  // U+0085 NEL
  EXPECT_EQ(nameProblem("a\xff", 256), "name is not valid UTF-8");
}

TEST(InputGrammar, MacroNames) {
  EXPECT_TRUE(ok(macroNameProblem("SK_N", "sk_add_f32")));
  EXPECT_TRUE(ok(macroNameProblem("TILE", "")));
  for (const char* bad : {"1X", "A-B", "X Y", "", "_X", "__x", "a__b", "if", "return", "defined", "and", "float",
                          "sk_ctx", "SK_KERNEL", "SK_ABI_VERSION", "SK_SPIN_ITERS", "SK_CUDA_POLL_NS", "SK_WAIT_FLAG",
                          "SUPERKERNEL_CUDA_SYNC_CUH", "SK_RUN_NOT_CO_RESIDENT", "SK_ASCEND_KERNEL_H",
                          "SK_ASCEND_SIMULATOR"})
    EXPECT_FALSE(ok(macroNameProblem(bad, ""))) << bad;
  EXPECT_NE(macroNameProblem("add_kernel", "add_kernel").find("the kernel's entry"), std::string::npos);
}

TEST(InputGrammar, MacroValues) {
  for (const char* good : {"", "4096", "-1", "+2", "0x10", "1e-6f", "2.5", ".5", "0x1p-3", "float", "INT32_MAX"})
    EXPECT_TRUE(ok(macroValueProblem(good))) << good;
  for (const char* bad : {"1'000", "4096); abort(", "a b", "(1)", "1+2", "\"s\"", "x\ny", "a\\", "#x", "/*", "f()",
                          "--1", "-", "a.b"})
    EXPECT_FALSE(ok(macroValueProblem(bad))) << bad;
  EXPECT_TRUE(ok(macroValueProblem("1e+")));  // a pp-number: one token, the compiler reports it
}

TEST(InputGrammar, CompileOptions) {
  for (const char* good : {"-O3", "-Ofast", "-g", "-g3", "-gdwarf-5", "-w", "-pedantic", "-pthread", "-std=c++20",
                           "-std=gnu11", "-Wall", "-Wno-unused", "-Werror=restrict", "-Wframe-larger-than=4096",
                           "-ffast-math", "-fno-math-errno", "-funroll-loops", "-fvisibility=hidden",
                           "-march=native", "-mavx2", "-mtune=x86-64-v3", "-mprefer-vector-width=256",
                           "-Wl,-z,now", "-Wl,-z,relro,-z,noexecstack", "-Wl,--gc-sections"})
    EXPECT_TRUE(ok(compileOptionProblem(good))) << good << ": " << compileOptionProblem(good);
  for (const char* bad :
       {"", "x.cpp", "@args", "-DX=1", "-UX", "-I/tmp", "-include", "-include/etc/passwd", "-imacros", "-o", "-x",
        "-B/tmp", "-L/tmp", "-lfoo", "-specs=x", "-wrapper", "-Xclang", "-Xlinker", "-fplugin=./x.so",
        "-fpass-plugin=x", "-fuse-ld=/tmp/ld", "-fprofile-generate", "-fno-profile-use", "-fdump-tree-all",
        "-fsave-optimization-record", "-finput-charset=UTF-7", "-fexec-charset=EBCDIC", "-ftrigraphs",
        "-fsanitize=address", "-fmodules", "-fstack-usage", "-mllvm", "-Wl,-rpath,/x", "-Wl,--wrap=malloc",
        "-Wl,-T,x.ld", "-Wa,--defsym,x=1", "-Wp,-DX", "-Wl", "-W", "-f", "-fx=/tmp/a", "-mx=a b", "-std=c++17;x",
        "--param=x", "-save-temps", "-nostdlib", "-static", "-O3 -fplugin=x"})
    EXPECT_FALSE(ok(compileOptionProblem(bad))) << bad;
  EXPECT_NE(compileOptionProblem("-DX=1").find("compile-options item \"-DX=1\" is not allowed"), std::string::npos);
  EXPECT_EQ(compileOptionsProblem({"-O3", "-fplugin=x"}), compileOptionProblem("-fplugin=x"));
}

TEST(InputGrammar, Arch) {
  EXPECT_TRUE(ok(archProblem("native")));
  EXPECT_TRUE(ok(archProblem("x86-64-v3")));
  EXPECT_TRUE(ok(archProblem("armv8.2-a+fp16")));
  EXPECT_FALSE(ok(archProblem("")));
  EXPECT_FALSE(ok(archProblem("native -fplugin=x")));
  EXPECT_FALSE(ok(archProblem("a/b")));
}

}  // namespace
}  // namespace sk::grammar
