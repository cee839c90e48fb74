// The ascend key of a kernel declaration, "sync_all_calls" (how many times
// one launch of a kernel_sync kernel calls AscendC::SyncAll; feed-sync-all
// repeats it on the SuperKernel's other cores): parsed, written back, and
// each bad value one clear error naming the JSON path.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "superkernel/frontend/Graph.h"
#include "superkernel/frontend/OpList.h"

namespace sk {
namespace {

std::string listWith(const std::string& kernelExtra) {
  return R"({"format": "superkernel.oplist", "version": 1, "target": "ascend",
    "kernels": {"k": {"source": "kernels/k.cpp", "entry": "ksync")" +
         kernelExtra + R"(, "params": [{"name": "x", "kind": "buffer", "dtype": "f32", "access": "readwrite",
      "partition": "all"}]}},
    "buffers": {"x": {"dtype": "f32", "shape": [64]}},
    "ops": [{"name": "o", "kernel": "k", "block_dim": 2, "args": {"x": "x"}}]})";
}

// The source must exist (validation checks it); it is never compiled here.
Expected<OpList> parse(const std::string& text) {
  return parseOpList(text, "test.json", std::filesystem::path(SK_SOURCE_ROOT) / "tests/plan/data");
}

TEST(SyncAllCalls, ParsesAndRoundTrips) {
  auto l = parse(listWith(R"(, "kernel_sync": true, "sync_all_calls": 3)"));
  ASSERT_TRUE(l.ok()) << l.error().message();
  EXPECT_TRUE(l->kernels.at(0).kernelSync);
  EXPECT_EQ(l->kernels.at(0).attribute("sync_all_calls"), 3);
  auto back = parse(writeOpList(*l));
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(back->kernels.at(0).attribute("sync_all_calls"), 3);
  // Absent: 0 (not declared), and nothing is written back.
  auto plain = parse(listWith(R"(, "kernel_sync": true)"));
  ASSERT_TRUE(plain.ok()) << plain.error().message();
  EXPECT_FALSE(plain->kernels.at(0).attributes.count("sync_all_calls"));
  EXPECT_FALSE(nlohmann::json::parse(writeOpList(*plain))["kernels"]["k"].contains("sync_all_calls"));
}

TEST(SyncAllCalls, BadValuesAreClearErrors) {
  struct Case {
    const char* extra;
    const char* expect;
  } cases[] = {
      {R"(, "kernel_sync": true, "sync_all_calls": 0)", "kernels.k.sync_all_calls: integer 0 out of range 1..65535"},
      {R"(, "kernel_sync": true, "sync_all_calls": -2)", "kernels.k.sync_all_calls: integer"},
      {R"(, "kernel_sync": true, "sync_all_calls": 65536)", "kernels.k.sync_all_calls"},
      {R"(, "kernel_sync": true, "sync_all_calls": "2")", "kernels.k.sync_all_calls"},
      {R"(, "kernel_sync": true, "sync_all_calls": 1.5)", "kernels.k.sync_all_calls"},
      {R"(, "sync_all_calls": 1)",
       "kernels.k.sync_all_calls: only a kernel that syncs its own blocks declares how often it calls SyncAll; "
       "add \"kernel_sync\": true"},
      {R"(, "kernel_sync": false, "sync_all_calls": 1)", "kernels.k.sync_all_calls: only a kernel that syncs"},
  };
  for (const Case& c : cases) {
    auto l = parse(listWith(c.extra));
    ASSERT_FALSE(l.ok()) << c.extra;
    EXPECT_EQ(l.error().kind(), ErrorKind::BadInput) << c.extra;
    EXPECT_NE(l.error().message().find(c.expect), std::string::npos) << c.extra << ": " << l.error().message();
  }
}

// A declaration built through the C++ API skips the parser: the validator checks the same rules.
TEST(SyncAllCalls, GraphApiChecksTheSameRules) {
  Graph g("ascend");
  g.setBaseDir(std::filesystem::path(SK_SOURCE_ROOT) / "tests/plan/data");
  KernelDecl k;
  k.name = "k";
  k.source = "kernels/k.cpp";
  k.entry = "ksync";
  k.params = {{"x", ParamKind::Buffer, DType::F32, Access::ReadWrite, Partition::All}};
  k.attributes["sync_all_calls"] = 2;
  Status st = g.addKernel(k);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message().find("kernels.k.sync_all_calls: only a kernel that syncs its own blocks"),
            std::string::npos)
      << st.error().message();
  k.kernelSync = true;
  k.attributes["sync_all_calls"] = 70000;
  st = g.addKernel(k);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message().find("kernels.k.sync_all_calls: integer 70000 out of range 1..65535"),
            std::string::npos)
      << st.error().message();
  k.attributes["sync_all_calls"] = 2;
  EXPECT_TRUE(g.addKernel(k).ok());
}

}  // namespace
}  // namespace sk
