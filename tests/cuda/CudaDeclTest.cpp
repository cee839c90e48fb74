// The cuda keys of a kernel declaration ("threads", "shared_bytes"): parsed,
// written back, and each bad value one clear error naming the JSON path.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "superkernel/frontend/OpList.h"

namespace sk {
namespace {

std::string listWith(const std::string& kernelExtra) {
  return R"({"format": "superkernel.oplist", "version": 1, "target": "cuda",
    "kernels": {"k": {"source": "bad.cu", "entry": "bad_kernel")" +
         kernelExtra + R"(, "params": [{"name": "y", "kind": "buffer", "dtype": "f32", "access": "write",
      "partition": "block"}]}},
    "buffers": {"y": {"dtype": "f32", "shape": [64]}},
    "ops": [{"name": "o", "kernel": "k", "block_dim": 2, "args": {"y": "y"}}]})";
}

// The source must exist (validation checks it); it is never compiled here.
Expected<OpList> parse(const std::string& text) {
  return parseOpList(text, "test.json", std::filesystem::path(SK_SOURCE_ROOT) / "tests/cuda/data");
}

TEST(CudaDecl, ThreadsAndSharedBytesParseAndRoundTrip) {
  auto l = parse(listWith(R"(, "threads": 128, "shared_bytes": 4096)"));
  ASSERT_TRUE(l.ok()) << l.error().message();
  const KernelDecl& k = l->kernels.at(0);
  EXPECT_EQ(k.attribute("threads"), 128);
  EXPECT_EQ(k.attribute("shared_bytes"), 4096);
  auto back = parse(writeOpList(*l));
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(back->kernels.at(0).attribute("threads"), 128);
  EXPECT_EQ(back->kernels.at(0).attribute("shared_bytes"), 4096);
  // Absent: 0, the target's default; and nothing is written back.
  auto plain = parse(listWith(""));
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->kernels.at(0).attributes.count("threads"));
  EXPECT_FALSE(nlohmann::json::parse(writeOpList(*plain))["kernels"]["k"].contains("threads"));
}

TEST(CudaDecl, BadValuesAreClearErrors) {
  struct Case {
    const char* extra;
    const char* expect;
  } cases[] = {
      {R"(, "threads": 48)", "kernels.k.threads: 48 is not a multiple of 32"},
      {R"(, "threads": 2048)", "kernels.k.threads"},
      {R"(, "threads": 0)", "kernels.k.threads"},
      {R"(, "threads": "256")", "kernels.k.threads"},
      {R"(, "shared_bytes": -1)", "kernels.k.shared_bytes"},
      {R"(, "shared_bytes": 1000000)", "kernels.k.shared_bytes"},
  };
  for (const Case& c : cases) {
    auto l = parse(listWith(c.extra));
    ASSERT_FALSE(l.ok()) << c.extra;
    EXPECT_EQ(l.error().kind(), ErrorKind::BadInput) << c.extra;
    EXPECT_NE(l.error().message().find(c.expect), std::string::npos) << c.extra << ": " << l.error().message();
  }
}

}  // namespace
}  // namespace sk
