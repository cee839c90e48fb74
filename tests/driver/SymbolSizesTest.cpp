// readSymbolSizes on this test executable (an ELF file with a symbol table
// that needs no compiler at test time), and on corrupt copies of a small
// shared object built beside it (data/elf_probe.c): every truncation and
// header corruption is an error value, never a crash or an out-of-bounds
// read (the asan CI stage runs this).
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>

#include "superkernel/driver/Driver.h"

// Sizes the reader must find exactly (extern "C": unmangled names).
extern "C" {
__attribute__((used)) char skElfProbeArray[777] = {1};
__attribute__((used)) double skElfProbeDouble = 2.0;
}

#if defined(__SANITIZE_ADDRESS__)
#define SK_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SK_TEST_ASAN 1
#endif
#endif

namespace sk {
namespace {

// clang's ASan pads each global with its red zone and counts it in the
// symbol's size; elsewhere the size is the object's.
void expectObjectSize(uint64_t got, uint64_t want) {
#ifdef SK_TEST_ASAN
  EXPECT_GE(got, want);
  EXPECT_LT(got, want + 1024);
#else
  EXPECT_EQ(got, want);
#endif
}

std::string fileBytes(const char* path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string selfBytes() { return fileBytes("/proc/self/exe"); }

// The corruption tests' input: a few kilobytes, so each of their hundreds of
// parses is cheap (the test executable is megabytes).
std::string probeBytes() {
  std::string bytes = fileBytes(SK_TEST_ELF_PROBE);
  auto sizes = readSymbolSizes(bytes);
  EXPECT_TRUE(sizes.ok() && sizes->count("skElfTinyArray") && sizes->count("skElfTinyFunction"))
      << SK_TEST_ELF_PROBE << " should parse and define the probe's symbols";
  return bytes;
}

TEST(SymbolSizes, ReadsDefinedSymbolsOfAnElfFile) {
  std::string self = selfBytes();
  ASSERT_GT(self.size(), 1000u);
  auto sizes = readSymbolSizes(self);
  ASSERT_TRUE(sizes.ok()) << sizes.error().message();
  expectObjectSize(sizes->at("skElfProbeArray"), 777u);
  expectObjectSize(sizes->at("skElfProbeDouble"), sizeof(double));
  EXPECT_GT(sizes->at("main"), 0u);
  auto one = readSymbolSize(self, "skElfProbeArray");
  ASSERT_TRUE(one.ok());
  expectObjectSize(*one, 777u);
  // Undefined (imported) symbols are not listed: getpid comes from libc (not
  // malloc: a sanitizer runtime linked into the executable defines that).
  EXPECT_GT(::getpid(), 0);
  EXPECT_EQ(sizes->count("getpid"), 0u);
}

// The error of readSymbolSizes(bytes), "<ok>" if none; every rejection is a Compile error.
std::string sizesError(const std::string& bytes) {
  auto r = readSymbolSizes(bytes);
  if (r.ok()) return "<ok>";
  EXPECT_EQ(r.error().kind(), ErrorKind::Compile) << r.error().message();
  return r.error().message();
}

TEST(SymbolSizes, RejectsNonElfAndForeignInput) {
  EXPECT_EQ(sizesError(""), "not an object file: no ELF magic (symbol sizes need ELF)");
  EXPECT_EQ(sizesError("not an object"), "not an object file: no ELF magic (symbol sizes need ELF)");
  std::string self = selfBytes();
  std::string foreign = self;
  foreign[5] = foreign[5] == 1 ? 2 : 1;  // EI_DATA: the other byte order
  auto r = readSymbolSizes(foreign);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("byte order"), std::string::npos);
  std::string badClass = self;
  badClass[4] = 7;  // EI_CLASS
  EXPECT_EQ(sizesError(badClass), "ELF object of unknown class");
}

TEST(SymbolSizes, TruncatedFilesAreErrorsNotCrashes) {
  std::string self = probeBytes();
  ASSERT_GT(self.size(), 2048u);
  // Every prefix of the header area, then prefixes spread over the file
  // (the section headers and symbol table are near the end). A copy per
  // prefix so that ASan sees a read past the end of each one.
  size_t errors = 0;
  auto check = [&](size_t len) {
    std::string prefix = self.substr(0, len);
    if (!readSymbolSizes(prefix).ok()) ++errors;
  };
  for (size_t len = 0; len < 2048 && len < self.size(); ++len) check(len);
  for (size_t i = 1; i <= 256; ++i) check(self.size() - i * (self.size() / 257));
  EXPECT_GE(errors, 2048u);  // no section headers in any short prefix
}

TEST(SymbolSizes, CorruptHeadersAreErrorsNotCrashes) {
  std::string self = probeBytes();
  // Overwrite each byte of the ELF header and the symbol table's section
  // header area with extreme values; the reader must return (value or error).
  // One buffer, patched and restored in place.
  size_t errors = 0;
  auto patch = [&](size_t off, unsigned char v) {
    char saved = self[off];
    self[off] = static_cast<char>(v);
    if (!readSymbolSizes(self).ok()) ++errors;
    self[off] = saved;
  };
  for (size_t off = 16; off < 64; ++off)
    for (unsigned char v : {0x00, 0x7f, 0xff}) patch(off, v);
  // Section headers: the last 40 headers' worth of bytes of the file (every
  // section header of the probe), every byte.
  size_t start = self.size() > 64 * 40 ? self.size() - 64 * 40 : 0;
  for (size_t off = start; off < self.size(); ++off) patch(off, 0xff);
  EXPECT_GT(errors, 0u);
  EXPECT_TRUE(readSymbolSizes(self).ok());  // restored
}

}  // namespace
}  // namespace sk
