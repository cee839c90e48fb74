// The rewritten rope and MoE gate builtins (issue 40 item 3: kernels/cuda/attention.cu's rope_f32, a CTA-shared
// table of each pair's (cos, sin) computed once per call in double as on cpu, rotated with 16-byte, 8-byte or
// scalar accesses; kernels/cuda/moe.cu's moe_gate_topk_f32, a warp per row with shuffle arg-max selection) against
// the cpu target's kernels of the same names, built like CudaBuiltinsTest.cpp: in sk_test_cuda_gpu (target cuda,
// needs a GPU) and, where tests/cuda/tests.cmake lists it, in sk_test_cuda_sim_run (cuda-sim, which traps on a
// misaligned 16-byte or 8-byte access, as a GPU faults).
// rope: rows of 16-byte units (dim % 4 == 0, aligned), of 8-byte units (dim % 4 == 2, or x at offset 2), of
// scalars (x at offset 1), in place (y the same buffer as x), a dim above the 256-pair table (passes of 256 pairs),
// long positions; 3 blocks over heads they do not divide. Each output within |cuda - cpu| <= 1e-5 + 1e-5 |cpu|
// (angles in double on both; f32 products may contract to FMA on one side).
// moe_gate_topk: logits from a few values (many ties: the first maximal expert wins), random ones, rows holding
// NaN (cpu's scan keeps a NaN only when it is the first expert not taken), experts above the 256 a warp caches in
// registers, topk above 32 (lanes holding several picks) and equal to experts, softmax and sigmoid, normalized or
// not. The indices are cpu's exactly, the weights within 1e-5 + 1e-5 |cpu| (NaN where cpu has NaN).
// One op list, one cpu run and one cuda run: fused equal to unfused bit for bit (sk-compile --run's check).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>

#include <nlohmann/json.hpp>

#include "TestCache.h"
#include "cuda/gpu/RunTarget.h"

// Names in their own namespace: the test targets are unity builds (one translation unit with the other files).
namespace sk {
namespace {
namespace attentiontest {
namespace fs = std::filesystem;
using gputest::kTarget;
using json = nlohmann::ordered_json;

struct TempDir : cudatest::TempDir {
  TempDir() : cudatest::TempDir("attention") {}
};

enum class Cmp { Tolerance, Exact };

struct Output {
  std::string buffer;
  Cmp cmp;
};

struct List {
  const TempDir& dir;
  json kernels = json::object(), buffers = json::object(), ops = json::array();
  std::vector<Output> outputs;
  uint64_t seed = 0x5eed;

  explicit List(const TempDir& d) : dir(d) {}

  std::string buf(const std::string& name, int64_t n, const std::string& dtype = "f32") {
    buffers[name] = {{"dtype", dtype}, {"shape", {n}}, {"init", "random"}};
    return name;
  }
  // f32 values from a file.
  std::string file(const std::string& name, const std::vector<float>& v) {
    const fs::path p = dir.path / (name + ".f32");
    std::ofstream(p, std::ios::binary).write(reinterpret_cast<const char*>(v.data()), std::streamsize(v.size() * 4));
    buffers[name] = {{"dtype", "f32"}, {"shape", {int64_t(v.size())}}, {"init", {{"file", p.string()}}}};
    return name;
  }
  // A view of `count` floats at `offset` of buffer `name` (offset + count floats).
  json view(const std::string& name, int64_t count, int64_t offset) {
    buf(name, count + offset);
    if (offset == 0) return name;
    return {{"buffer", name}, {"offset", offset}, {"count", count}};
  }
  void op(const std::string& name, const std::string& kernel, int64_t blocks, json args,
          std::initializer_list<Output> outs) {
    kernels[kernel] = {{"builtin", kernel}};
    ops.push_back(
        {{"name", name}, {"kernel", kernel}, {"block_dim", blocks}, {"scope", "s"}, {"args", std::move(args)}});
    outputs.insert(outputs.end(), outs);
  }
  fs::path write() const {
    json j = {{"format", "superkernel.oplist"}, {"version", 1}, {"target", "cuda"},
              {"kernels", kernels}, {"buffers", buffers}, {"ops", ops}};
    const fs::path p = dir.path / "attention.json";
    std::ofstream(p) << j.dump(1);
    return p;
  }
};

// rope over heads x dim at pos, x at offset xOff (y aligned), or in place (y the view x is).
void addRope(List& l, int64_t heads, int64_t dim, int64_t pos, int64_t xOff, bool inPlace, int64_t blocks = 3) {
  const std::string n = std::to_string(heads) + "x" + std::to_string(dim) + "_p" + std::to_string(pos) + "_o" +
                        std::to_string(xOff) + (inPlace ? "_inplace" : "") + "_b" + std::to_string(blocks);
  const json x = l.view("rope_x_" + n, heads * dim, xOff);
  const json y = inPlace ? x : json(l.buf("rope_y_" + n, heads * dim));
  l.op("rope_" + n, "rope_f32", blocks,
       {{"x", x}, {"y", y}, {"heads", heads}, {"dim", dim}, {"pos", pos}, {"theta", 10000.0}},
       {{inPlace ? "rope_x_" + n : "rope_y_" + n, Cmp::Tolerance}});
}

// moe_gate_topk over rows x experts of `logits`.
void addGate(List& l, const std::string& tag, const std::vector<float>& logits, int64_t rows, int64_t experts,
             int64_t topk, int sigmoid, int normalize, int64_t blocks = 3) {
  const std::string n = tag + "_" + std::to_string(rows) + "x" + std::to_string(experts) + "_k" +
                        std::to_string(topk) + "_s" + std::to_string(sigmoid) + "_n" + std::to_string(normalize);
  l.op("gate_" + n, "moe_gate_topk_f32", blocks,
       {{"logits", l.file("gate_l_" + n, logits)}, {"idx", l.buf("gate_i_" + n, rows * topk, "i32")},
        {"weights", l.buf("gate_w_" + n, rows * topk)}, {"rows", rows}, {"experts", experts}, {"topk", topk},
        {"sigmoid", sigmoid}, {"normalize", normalize}},
       {{"gate_i_" + n, Cmp::Exact}, {"gate_w_" + n, Cmp::Tolerance}});
}

// rows x experts logits: `levels` > 0 draws from that many values in [-1, 1] (ties), 0 from [-4, 4].
std::vector<float> logits(uint64_t& seed, int64_t rows, int64_t experts, int levels) {
  std::vector<float> v(size_t(rows * experts));
  for (float& f : v) {
    const uint64_t r = gputest::nextRandom(seed);
    f = levels > 0 ? -1.0f + 2.0f * float(r % uint64_t(levels)) / float(levels)
                   : -4.0f + 8.0f * float(r >> 40) / float(1ull << 24);
  }
  return v;
}

TEST(CudaAttention, RopeAndMoeGateMatchCpuOnEveryPath) {
  SK_REQUIRE_GPU();
  TempDir dir;
  List l(dir);
  addRope(l, 5, 128, 1000, 0, false);    // 16-byte units; 3 blocks over 5 heads: 1, 1 and 3 heads
  addRope(l, 7, 6, 7, 0, false);         // dim % 4 == 2: 8-byte units
  addRope(l, 4, 64, 37, 2, false);       // x at offset 2: 8-byte units, y 16-byte aligned
  addRope(l, 4, 64, 37, 1, false);       // x at offset 1: scalar pairs
  addRope(l, 3, 128, 5, 0, true);        // in place, 16-byte units
  addRope(l, 3, 2, 3, 1, true);          // in place at offset 1, one pair a head
  addRope(l, 2, 1032, 123456, 0, false); // 516 pairs: passes of 256, 256 and 4 pairs; a long position
  addRope(l, 2, 1030, 9, 1, false, 1);   // 515 pairs, scalar, one block
  addRope(l, 33, 128, 4095, 0, false, 2);  // more units than threads: four per thread in flight

  uint64_t& seed = l.seed;
  addGate(l, "ties", logits(seed, 7, 8, 3), 7, 8, 2, 0, 1);         // 3 blocks over 7 rows; many ties
  addGate(l, "ties", logits(seed, 5, 64, 4), 5, 64, 6, 0, 0);
  addGate(l, "rand", logits(seed, 9, 64, 0), 9, 64, 8, 1, 1);       // sigmoid, normalized
  addGate(l, "rand", logits(seed, 4, 300, 0), 4, 300, 8, 0, 1);     // experts beyond the 256 in registers
  addGate(l, "ties", logits(seed, 3, 300, 5), 3, 300, 40, 1, 0);    // topk > 32, ties beyond the registers
  addGate(l, "ties", logits(seed, 3, 40, 2), 3, 40, 40, 0, 1);      // topk == experts
  addGate(l, "one", logits(seed, 2, 1, 0), 2, 1, 1, 0, 0, 1);       // a single expert
  {
    // NaN: first (kept at pick 0), in the middle (never picked while a number is left), all NaN, NaN and -inf.
    const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
    std::vector<float> v = logits(seed, 6, 40, 3);
    v[0] = nan;                  // row 0: expert 0
    v[40 + 17] = nan;            // row 1: expert 17
    v[40 + 3] = nan;             // and 3
    for (int e = 0; e < 40; ++e) v[2 * 40 + e] = e % 3 == 1 ? nan : 0.5f;  // row 2: every third NaN
    for (int e = 0; e < 40; ++e) v[3 * 40 + e] = nan;                       // row 3: all NaN
    for (int e = 0; e < 40; ++e) v[4 * 40 + e] = e < 5 ? -inf : nan;       // row 4: -inf, then NaN
    v[5 * 40 + 1] = inf;         // row 5: +inf twice, -inf
    v[5 * 40 + 30] = inf;
    v[5 * 40 + 2] = -inf;
    addGate(l, "nan", v, 6, 40, 6, 0, 1);
    addGate(l, "nan", v, 6, 40, 6, 1, 0);
  }
  const fs::path list = l.write();
  const fs::path cache = sktest::sharedTestCache() ? *sktest::sharedTestCache() / "attention" : dir.path / "cache";
  gputest::runOnCpuAndTarget(list, cache, dir.path);
  if (HasFatalFailure()) return;
  for (const Output& o : l.outputs) {
    const std::string as = cudatest::readFile(dir.path / "cpu" / (o.buffer + ".bin")),
                      bs = cudatest::readFile(dir.path / "dev" / (o.buffer + ".bin"));
    ASSERT_EQ(as.size(), bs.size()) << o.buffer;
    ASSERT_FALSE(as.empty()) << o.buffer;
    if (o.cmp == Cmp::Exact) {
      EXPECT_EQ(as, bs) << o.buffer;
      std::printf("%-36s exact: %s\n", o.buffer.c_str(), as == bs ? "yes" : "NO");
      continue;
    }
    const std::vector<float> a = gputest::readFloats(dir.path / "cpu" / (o.buffer + ".bin")),
                             b = gputest::readFloats(dir.path / "dev" / (o.buffer + ".bin"));
    bool nonzero = false, bitEqual = true;
    size_t nans = 0;
    double worstAbs = 0.0, worstRel = 0.0;
    for (size_t i = 0; i < a.size(); ++i) {
      bitEqual &= std::memcmp(&a[i], &b[i], 4) == 0;
      if (std::isnan(a[i])) {
        ASSERT_TRUE(std::isnan(b[i])) << o.buffer << "[" << i << "]: cpu NaN, " << kTarget << " " << b[i];
        ++nans;
        continue;
      }
      nonzero |= a[i] != 0.0f;
      const double d = std::fabs(double(a[i]) - double(b[i]));
      worstAbs = std::max(worstAbs, d);
      if (a[i] != 0.0f) worstRel = std::max(worstRel, d / std::fabs(double(a[i])));
      ASSERT_LE(d, 1e-5 + 1e-5 * std::fabs(double(a[i])))
          << o.buffer << "[" << i << "]: cpu " << a[i] << ", " << kTarget << " " << b[i];
    }
    // A softmax over a row holding a NaN is NaN throughout (on cpu too): such an output may be all NaN.
    EXPECT_TRUE(nonzero || nans == a.size()) << o.buffer << ": all zero, the comparison proves nothing";
    std::printf("%-36s worst |cuda - cpu| %.3g, relative %.3g%s%s\n", o.buffer.c_str(), worstAbs, worstRel,
                bitEqual ? " (bit for bit)" : "", nans ? ", NaN where cpu has NaN" : "");
  }
}

}  // namespace attentiontest
}  // namespace
}  // namespace sk
