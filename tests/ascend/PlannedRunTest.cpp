// The decode layer example through the Session on the ascend back end: the
// real planner on the ascend machine model, ascend SuperKernels built for
// and run in the simulator, against the same list unfused (one simulated
// launch per op): outputs equal bit for bit, for every option mix below. The
// example uses only builtin kernels, so it runs on the ascend builtins as is.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "superkernel/frontend/OpList.h"
#include "superkernel/target/Backend.h"
#include "SessionRun.h"

namespace fs = std::filesystem;

namespace {

// The decode layer, its router projection (gemv_f32, W [8, 512]) computed by the cube builtin matmul_f32
// instead: C [1, 8] = x [1, 512] . W read as [512, 8], the same buffers. Every gemv of the example runs on
// the vector cores; this keeps a cube op in the planned layer, so its SuperKernels span both pools (MIX_AIC_1_2,
// cube <-> vector sync points, cube cores in the profile). Only the router's values change, and moe_gate_topk
// picks experts from any logits.
sk::OpList decodeLayer() {
  const fs::path path = fs::path(SK_SOURCE_ROOT) / "examples" / "decode_layer" / "decode_layer.json";
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json j = nlohmann::json::parse(text.str(), nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << path;
  int routers = 0;
  for (nlohmann::json& op : j["ops"]) {
    if (op.value("kernel", "") != "gemv_f32") continue;
    const nlohmann::json a = op["args"];
    op["kernel"] = "matmul_f32";
    op["args"] = {{"a", a["x"]}, {"b", a["w"]}, {"c", a["y"]}, {"m", 1}, {"k", a["cols"]}, {"n", a["rows"]}};
    op.erase("macros");  // gemv's SK_ROWS / SK_COLS
    ++routers;
  }
  EXPECT_EQ(routers, 1);
  j["kernels"]["matmul_f32"] = {{"builtin", "matmul_f32"}};
  auto l = sk::parseOpList(j.dump(), path.string(), path.parent_path());
  EXPECT_TRUE(l.ok()) << (l.ok() ? "" : l.error().message());
  return l.ok() ? std::move(*l) : sk::OpList{};
}

// One test for every option mix (one process: the unfused reference is computed once).
TEST(AscendPlannedRun, DecodeLayerFusedEqualsUnfused) {
  const sk::OpList list = decodeLayer();
  auto session = sktest::ascend::ascendSession();
  ASSERT_TRUE(session);
  auto reference = sktest::ascend::referenceRun(*session, list);
  ASSERT_TRUE(reference);
  for (const char* text : {"", "early-start=0:split-mode=1", "early-start=2:preload-code=max",
                           "debug-sync-all=1:split-mode=2:profiling=1", "stream-fusion=1:split-mode=1"}) {
    auto rc = sktest::ascend::expectFusedEqualsReference(*session, list, text, *reference);
    EXPECT_GE(rc.fusedSteps, 1u) << text;
  }
}

// The device checks the buffer count a SuperKernel is run with against its launch descriptor.
TEST(AscendPlannedRun, WrongBufferCountIsBadInput) {
  const sk::OpList list = decodeLayer();
  auto session = sktest::ascend::ascendSession(8);  // the layer's 16-block gemvs fit the 16 vector cores: one step
  ASSERT_TRUE(session);
  sk::CompileRequest req;
  req.target = "ascend-sim";
  auto plan = session->compile(list, req);
  ASSERT_TRUE(plan.ok()) << plan.error().message();
  const sk::CompiledStep& step = plan->steps.at(0);
  std::vector<void*> ptrs(step.listBuffers.size() + 1, nullptr);
  sk::Status st = plan->device->run(*step.kernel, step.numCores, nullptr, ptrs.data(),
                                    static_cast<uint32_t>(ptrs.size()));
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().kind(), sk::ErrorKind::BadInput);
  EXPECT_NE(st.error().message().find("buffer(s) given, sk_ascend_decode takes 41"), std::string::npos)
      << st.error().message();
}

// profiling=1 on ascend: Session::runProfiled gives a Chrome/Perfetto trace
// with one named track per simulated core that ran, every op of the layer as
// slices, and the sync points as waits; a plan without profiling is refused.
TEST(AscendPlannedRun, ProfiledRunTracesEveryOpOnItsCores) {
  const sk::OpList list = decodeLayer();
  // 8 cube, 16 vector cores: the layer's 16-block gemvs (early start: never coarsened) fit, so it is one
  // SuperKernel whose trace has every op.
  auto session = sktest::ascend::ascendSession(8);
  ASSERT_TRUE(session);
  sk::CompileRequest req;
  req.target = "ascend-sim";
  req.options = "profiling=1:split-mode=1";
  auto plan = session->compile(list, req);
  ASSERT_TRUE(plan.ok()) << plan.error().message();
  auto bufs = sk::BufferSet::create(list);
  ASSERT_TRUE(bufs.ok());
  auto trace = session->runProfiled(*plan, *bufs);
  ASSERT_TRUE(trace.ok()) << trace.error().message();
  const nlohmann::json j = nlohmann::json::parse(*trace, nullptr, false);
  ASSERT_FALSE(j.is_discarded());
  std::map<int, std::string> tracks;
  std::set<int> busy;
  std::set<std::string> ops;
  size_t waits = 0;
  for (const nlohmann::json& e : j["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name") tracks[e["tid"].get<int>()] = e["args"]["name"];
    if (e["ph"] != "X") continue;
    EXPECT_GE(e["ts"].get<double>(), 0);
    EXPECT_GE(e["dur"].get<double>(), 0);
    EXPECT_FALSE(e["args"].contains("unfinished"));
    busy.insert(e["tid"].get<int>());
    if (e["cat"] == "wait") ++waits;
    else ops.insert(e["name"].get<std::string>());
  }
  std::set<std::string> names;
  for (const auto& [tid, name] : tracks) names.insert(name);
  for (const char* core : {"cube 0", "cube 1", "vector 0", "vector 3"}) EXPECT_TRUE(names.count(core)) << core;
  for (const auto& [tid, name] : tracks) EXPECT_TRUE(busy.count(tid)) << name << " has no slices";
  for (const sk::Op& op : list.ops) EXPECT_TRUE(ops.count(op.name)) << op.name;
  EXPECT_GT(waits, 0u);

  sk::CompileRequest plain;
  plain.target = "ascend-sim";
  auto unprofiled = session->compile(list, plain);
  ASSERT_TRUE(unprofiled.ok());
  auto notProfiled = session->runProfiled(*unprofiled, *bufs);
  ASSERT_FALSE(notProfiled.ok());
  EXPECT_EQ(notProfiled.error().kind(), sk::ErrorKind::BadInput);
  EXPECT_NE(notProfiled.error().message().find("runProfiled: the plan was not compiled with profiling=1"),
            std::string::npos)
      << notProfiled.error().message();
}

}  // namespace
