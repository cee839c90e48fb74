// The data preload rule (plan/DataPreload.cpp): which inputs each op prefetches, which slice each core reads,
// how far ahead lookahead goes within the machine's budget, and that an input an op of the step writes is never
// prefetched. A hand-built step, so each number is the rule's alone.
#include <gtest/gtest.h>

#include "superkernel/plan/DataPreload.h"
#include "superkernel/plan/Plan.h"

namespace sk {
namespace {

BoundArg buf(int buffer, DType t, Access a, Partition p, uint64_t count, uint64_t offset = 0) {
  BoundArg b;
  b.kind = ParamKind::Buffer;
  b.dtype = t;
  b.access = a;
  b.partition = p;
  b.buffer = buffer;
  b.count = count;
  b.offset = offset;
  return b;
}

PlannedOp op(const char* name, uint32_t blocks, std::vector<BoundArg> args) {
  PlannedOp o;
  o.name = name;
  o.blockDim = blocks;
  o.args = std::move(args);
  return o;
}

Edge edge(uint32_t p, uint32_t c, SyncKind k) {
  Edge e;
  e.producer = p;
  e.consumer = c;
  e.sync = k;
  return e;
}

// Buffers: 0 x (activations in), 1 w0 (f32 4096), 2 a, 3 w1 (f16 8192, a view from element 512 on), 4 b,
// 5 w2 (f32 1024), 6 wr (weights op D overwrites), 7 c. One queue of 4 cores.
//   A: x, w0 ("all") -> a        no waits
//   B: a, w1 (block)  -> b       flag edge A->B
//   C: b, w2, wr      -> c       counter edge B->C; 2 blocks
//   D: c              -> wr      local edge C->D, a barrier before it
SuperKernelPlan step(PreloadData mode) {
  SuperKernelPlan sk;
  sk.name = "s";
  sk.fused = true;
  sk.numCores = 4;
  sk.options.preloadData = mode;
  for (const char* n : {"x", "w0", "a", "w1", "b", "w2", "wr", "c"}) sk.buffers.push_back(PlanBuffer{n, DType::F32, 8192, 0});
  const auto R = Access::Read, W = Access::Write;
  sk.ops.push_back(op("A", 4, {buf(0, DType::F32, R, Partition::Block, 64), buf(1, DType::F32, R, Partition::All, 4096),
                               buf(2, DType::F32, W, Partition::Block, 64)}));
  sk.ops.push_back(op("B", 4, {buf(2, DType::F32, R, Partition::Block, 64), buf(3, DType::F16, R, Partition::Block, 4096, 512),
                               buf(4, DType::F32, W, Partition::Block, 64)}));
  sk.ops.push_back(op("C", 2, {buf(4, DType::F32, R, Partition::All, 64), buf(5, DType::F32, R, Partition::Block, 1024),
                               buf(6, DType::F32, R, Partition::Block, 64), buf(7, DType::F32, W, Partition::Block, 64)}));
  sk.ops.push_back(op("D", 4, {buf(7, DType::F32, R, Partition::Block, 64), buf(6, DType::F32, W, Partition::Block, 64)}));
  sk.ops[3].barrierBefore = true;
  sk.edges = {edge(0, 1, SyncKind::Flag), edge(1, 2, SyncKind::Counter), edge(2, 3, SyncKind::Local)};
  Queue q;
  q.numCores = 4;
  q.ops = {0, 1, 2, 3};
  sk.queues = {q};
  return sk;
}

MachineModel machine(uint64_t sliceBytes, uint64_t lookahead) {
  MachineModel m = MachineModel::singlePool("cpu", 4);
  m.preloadDataSliceBytes = sliceBytes;
  m.preloadDataLookaheadBytes = lookahead;
  return m;
}

// "op:buffer@offset+c*stride:bytes/blocks" per prefetch of each op.
std::vector<std::vector<std::string>> describe(const std::vector<std::vector<DataPreload>>& all) {
  std::vector<std::vector<std::string>> out;
  for (const auto& list : all) {
    out.emplace_back();
    for (const DataPreload& d : list)
      out.back().push_back(std::to_string(d.forOp) + ":" + std::to_string(d.buffer) + "@" +
                           std::to_string(d.offsetBytes) + "+c*" + std::to_string(d.strideBytes) + ":" +
                           std::to_string(d.bytes) + "/" + std::to_string(d.blocks));
  }
  return out;
}
using L = std::vector<std::vector<std::string>>;

TEST(DataPreload, FirstBlockPrefetchesTheWaitingOpsOwnConstantInputs) {
  // A does not wait; B's w1: block c's slice of the view (1024 f16 per block from element 512: 1024 bytes on from
  // byte 1024 per core, capped at 2 KiB); C's w2 (512 f32 per block of 2; not b, which B writes, nor wr, which D
  // writes); D reads only c, which C writes.
  const auto got = describe(scheduleDataPreload(step(PreloadData::FirstBlock), machine(2048, 0)));
  EXPECT_EQ(got, (L{{}, {"1:3@1024+c*2048:2048/4"}, {"2:5@0+c*2048:2048/2"}, {}}));
  // The cap is the machine's.
  EXPECT_EQ(describe(scheduleDataPreload(step(PreloadData::FirstBlock), machine(256, 0))),
            (L{{}, {"1:3@1024+c*2048:256/4"}, {"2:5@0+c*2048:256/2"}, {}}));
}

TEST(DataPreload, AnInputAnOpOfTheStepWritesIsNeverPrefetched) {
  for (PreloadData mode : {PreloadData::FirstBlock, PreloadData::Lookahead})
    for (const auto& list : scheduleDataPreload(step(mode), machine(1 << 20, 1 << 30)))
      for (const DataPreload& d : list) {
        EXPECT_NE(d.buffer, 2);  // a
        EXPECT_NE(d.buffer, 4);  // b
        EXPECT_NE(d.buffer, 6);  // wr: only read by C, but D writes it
        EXPECT_NE(d.buffer, 7);  // c
      }
}

TEST(DataPreload, LookaheadPrefetchesLaterOpsOnceWithinTheBudget) {
  // Budget 0: one op ahead. A prefetches B's slice (and not its own w0: A does not wait); B, C's; C and D
  // nothing left. x, read by A only and never written, is A's own and A does not wait.
  EXPECT_EQ(describe(scheduleDataPreload(step(PreloadData::Lookahead), machine(2048, 0))),
            (L{{"1:3@1024+c*2048:2048/4"}, {"2:5@0+c*2048:2048/2"}, {}, {}}));
  // A budget that holds B's and C's slices (2 KiB + 2 KiB): A prefetches both, each once.
  EXPECT_EQ(describe(scheduleDataPreload(step(PreloadData::Lookahead), machine(2048, 4096))),
            (L{{"1:3@1024+c*2048:2048/4", "2:5@0+c*2048:2048/2"}, {}, {}, {}}));
  // One byte short of that: C's slice waits for B.
  EXPECT_EQ(describe(scheduleDataPreload(step(PreloadData::Lookahead), machine(2048, 4095))),
            (L{{"1:3@1024+c*2048:2048/4"}, {"2:5@0+c*2048:2048/2"}, {}, {}}));
}

TEST(DataPreload, LookaheadPrefetchesAWaitingFirstOpsOwnSlices) {
  SuperKernelPlan sk = step(PreloadData::Lookahead);
  sk.ops[0].barrierBefore = true;  // A now waits: its own constant inputs go before the wait, then B's
  EXPECT_EQ(describe(scheduleDataPreload(sk, machine(2048, 0))),
            (L{{"0:0@0+c*64:64/4", "0:1@0+c*4096:2048/4", "1:3@1024+c*2048:2048/4"}, {"2:5@0+c*2048:2048/2"}, {}, {}}));
}

TEST(DataPreload, NoneAutoAndUnfused) {
  const MachineModel cpu = machine(2048, 0);
  for (const auto& list : scheduleDataPreload(step(PreloadData::None), cpu)) EXPECT_TRUE(list.empty());
  // auto: the machine's default.
  EXPECT_EQ(describe(scheduleDataPreload(step(PreloadData::Auto), cpu)),
            describe(scheduleDataPreload(step(PreloadData::FirstBlock), cpu)));
  MachineModel off = cpu;
  off.defaultPreloadData = PreloadData::None;
  for (const auto& list : scheduleDataPreload(step(PreloadData::Auto), off)) EXPECT_TRUE(list.empty());
  EXPECT_EQ(effectivePreloadData(PreloadData::Auto, off), PreloadData::None);
  EXPECT_EQ(effectivePreloadData(PreloadData::Lookahead, off), PreloadData::Lookahead);
  // An unfused step prefetches nothing.
  SuperKernelPlan unfused = step(PreloadData::Lookahead);
  unfused.fused = false;
  for (const auto& list : scheduleDataPreload(unfused, cpu)) EXPECT_TRUE(list.empty());
}

// The planner writes the resolved mode into each step's options, from the machine's default unless asked.
TEST(DataPreload, PlannerResolvesAutoToTheMachinesDefault) {
  auto lo = loadOpList(std::filesystem::path(SK_SOURCE_ROOT) / "tests/plan/data/chain.json");
  ASSERT_TRUE(lo.ok()) << lo.error().message();
  MachineModel off = MachineModel::singlePool("cpu", 4);
  off.defaultPreloadData = PreloadData::None;
  auto byDefault = planOpList(*lo, Options{}, PlanConfig{off, true});
  ASSERT_TRUE(byDefault.ok()) << byDefault.error().message();
  EXPECT_EQ(byDefault->steps.at(0).options.preloadData, PreloadData::None);
  auto asked = parseOptions("preload-data=lookahead");
  ASSERT_TRUE(asked.ok());
  auto on = planOpList(*lo, *asked, PlanConfig{off, true});
  ASSERT_TRUE(on.ok()) << on.error().message();
  EXPECT_EQ(on->steps.at(0).options.preloadData, PreloadData::Lookahead);
  auto cpu = planOpList(*lo, Options{}, PlanConfig{MachineModel::singlePool("cpu", 4), true});
  ASSERT_TRUE(cpu.ok());
  EXPECT_EQ(cpu->steps.at(0).options.preloadData, PreloadData::FirstBlock);
}

// The Graph + PDL variant of an unfused plan (markGraphPdlSteps): each launch prefetches, before its wait, the
// slices of the inputs no op of the plan writes (here the chain's a, read by A only), whatever preload-data says,
// and never an input an earlier launch writes (b, c), which may still be running.
TEST(DataPreload, TheGraphPdlVariantPrefetchesOnlyInputsNoOpOfThePlanWrites) {
  auto lo = loadOpList(std::filesystem::path(SK_SOURCE_ROOT) / "tests/plan/data/chain.json");
  ASSERT_TRUE(lo.ok()) << lo.error().message();
  auto none = parseOptions("preload-data=none");
  ASSERT_TRUE(none.ok());
  const MachineModel m = machine(2048, 0);
  auto unfused = planOpList(*lo, *none, PlanConfig{m, false});
  ASSERT_TRUE(unfused.ok()) << unfused.error().message();
  ASSERT_EQ(unfused->steps.size(), 3u);
  for (const SuperKernelPlan& s : unfused->steps)  // not the variant: nothing
    for (const auto& list : scheduleDataPreload(s, m)) EXPECT_TRUE(list.empty());
  markGraphPdlSteps(*unfused);
  std::vector<L> got;
  for (const SuperKernelPlan& s : unfused->steps) {
    EXPECT_TRUE(s.graphPdl);
    got.push_back(describe(scheduleDataPreload(s, m)));
  }
  // A's x is buffer 0 of its step (a): block c's 256 floats.
  EXPECT_EQ(got, (std::vector<L>{L{{"0:0@0+c*1024:1024/4"}}, L{{}}, L{{}}}));
  // A fused step is never the variant.
  auto fused = planOpList(*lo, *none, PlanConfig{m, true});
  ASSERT_TRUE(fused.ok());
  markGraphPdlSteps(*fused);
  EXPECT_FALSE(fused->steps.at(0).graphPdl);
  for (const auto& list : scheduleDataPreload(fused->steps.at(0), m)) EXPECT_TRUE(list.empty());
}

}  // namespace
}  // namespace sk
