// The builtin declarations (kernels/cpu/*.json) are a contract the
// planner trusts: a wrong "partition": "block" is a data race in fused code.
// This test checks each JSON against the kernel it declares:
//  - exactly the op-list v1 kernel keys, a source that exists, an entry;
//  - params (names, kinds, dtypes, order) equal the C signature's table below;
//  - for every "block" buffer, block b of B really touches only its slice
//    [n/B*b, last ? n : n/B*(b+1)) of that argument: a written (or
//    read-written) block param keeps every byte outside the slice, and
//    poisoning a read block param outside the slice does not change what the
//    block writes;
//  - a scalar declares "runtime": true exactly where runtimeScalars() says.
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>

#include "KernelTestUtil.h"

using namespace sktest;
namespace fs = std::filesystem;

namespace {

struct Builtin {
  std::vector<std::string> params;   // "name:buffer:dtype" or "name:scalar:dtype", C order
  std::vector<size_t> counts;        // element count of each buffer param, in order
  std::function<void(const sk_ctx*, void* const*)> call;  // buffers in order, fixed shapes
};

#define F(i) static_cast<float*>(p[i])
#define H(i) static_cast<uint16_t*>(p[i])
#define I(i) static_cast<int32_t*>(p[i])
#define U(i) static_cast<uint8_t*>(p[i])
#define L(i) static_cast<int64_t*>(p[i])

const std::map<std::string, Builtin>& builtins() {
  static const std::map<std::string, Builtin> table = {
      {"add_f32", {{"x:buffer:f32", "y:buffer:f32", "z:buffer:f32", "n:scalar:i64"}, {103, 103, 103},
                   [](const sk_ctx* c, void* const* p) { sk_add_f32(c, F(0), F(1), F(2), 103); }}},
      {"mul_f32", {{"x:buffer:f32", "y:buffer:f32", "z:buffer:f32", "n:scalar:i64"}, {103, 103, 103},
                   [](const sk_ctx* c, void* const* p) { sk_mul_f32(c, F(0), F(1), F(2), 103); }}},
      {"swiglu_f32", {{"gate:buffer:f32", "up:buffer:f32", "y:buffer:f32", "n:scalar:i64"}, {103, 103, 103},
                      [](const sk_ctx* c, void* const* p) { sk_swiglu_f32(c, F(0), F(1), F(2), 103); }}},
      {"scale_f32", {{"x:buffer:f32", "y:buffer:f32", "alpha:scalar:f32", "n:scalar:i64"}, {103, 103},
                     [](const sk_ctx* c, void* const* p) { sk_scale_f32(c, F(0), F(1), 3.0f, 103); }}},
      {"copy_f32", {{"x:buffer:f32", "y:buffer:f32", "n:scalar:i64"}, {103, 103},
                    [](const sk_ctx* c, void* const* p) { sk_copy_f32(c, F(0), F(1), 103); }}},
      {"cast_f32_bf16", {{"x:buffer:f32", "y:buffer:bf16", "n:scalar:i64"}, {103, 103},
                         [](const sk_ctx* c, void* const* p) { sk_cast_f32_bf16(c, F(0), H(1), 103); }}},
      {"cast_bf16_f32", {{"x:buffer:bf16", "y:buffer:f32", "n:scalar:i64"}, {103, 103},
                         [](const sk_ctx* c, void* const* p) { sk_cast_bf16_f32(c, H(0), F(1), 103); }}},
      {"cast_f32_f16", {{"x:buffer:f32", "y:buffer:f16", "n:scalar:i64"}, {103, 103},
                        [](const sk_ctx* c, void* const* p) { sk_cast_f32_f16(c, F(0), H(1), 103); }}},
      {"cast_f16_f32", {{"x:buffer:f16", "y:buffer:f32", "n:scalar:i64"}, {103, 103},
                        [](const sk_ctx* c, void* const* p) { sk_cast_f16_f32(c, H(0), F(1), 103); }}},
      {"rms_norm_f32", {{"x:buffer:f32", "w:buffer:f32", "y:buffer:f32", "rows:scalar:i64", "cols:scalar:i64", "eps:scalar:f32"},
                        {5 * 12, 12, 5 * 12},
                        [](const sk_ctx* c, void* const* p) { sk_rms_norm_f32(c, F(0), F(1), F(2), 5, 12, 1e-5f); }}},
      {"add_rms_norm_f32", {{"x:buffer:f32", "residual:buffer:f32", "w:buffer:f32", "sum:buffer:f32", "y:buffer:f32",
                             "rows:scalar:i64", "cols:scalar:i64", "eps:scalar:f32"},
                            {60, 60, 12, 60, 60},
                            [](const sk_ctx* c, void* const* p) { sk_add_rms_norm_f32(c, F(0), F(1), F(2), F(3), F(4), 5, 12, 1e-5f); }}},
      {"softmax_f32", {{"x:buffer:f32", "y:buffer:f32", "rows:scalar:i64", "cols:scalar:i64"}, {60, 60},
                       [](const sk_ctx* c, void* const* p) { sk_softmax_f32(c, F(0), F(1), 5, 12); }}},
      {"reduce_mean_f32", {{"x:buffer:f32", "y:buffer:f32", "rows:scalar:i64", "cols:scalar:i64"}, {11 * 6, 11},
                           [](const sk_ctx* c, void* const* p) { sk_reduce_mean_f32(c, F(0), F(1), 11, 6); }}},
      {"rope_f32", {{"x:buffer:f32", "y:buffer:f32", "heads:scalar:i64", "dim:scalar:i64", "pos:scalar:i64", "theta:scalar:f32"},
                    {5 * 8, 5 * 8},
                    [](const sk_ctx* c, void* const* p) { sk_rope_f32(c, F(0), F(1), 5, 8, 3, 10000.0f); }}},
      {"gemv_f32", {{"w:buffer:f32", "x:buffer:f32", "y:buffer:f32", "rows:scalar:i64", "cols:scalar:i64"}, {13 * 9, 9, 13},
                    [](const sk_ctx* c, void* const* p) { sk_gemv_f32(c, F(0), F(1), F(2), 13, 9); }}},
      {"gemv_bf16w", {{"w:buffer:bf16", "x:buffer:f32", "y:buffer:f32", "rows:scalar:i64", "cols:scalar:i64"}, {13 * 9, 9, 13},
                      [](const sk_ctx* c, void* const* p) { sk_gemv_bf16w(c, H(0), F(1), F(2), 13, 9); }}},
      {"gemv_f16w", {{"w:buffer:f16", "x:buffer:f32", "y:buffer:f32", "rows:scalar:i64", "cols:scalar:i64"}, {13 * 9, 9, 13},
                     [](const sk_ctx* c, void* const* p) { sk_gemv_f16w(c, H(0), F(1), F(2), 13, 9); }}},
      {"gemv_q8_0", {{"w:buffer:u8", "x:buffer:f32", "y:buffer:f32", "rows:scalar:i64", "cols:scalar:i64"},
                     {13 * 2 * 34, 64, 13},
                     [](const sk_ctx* c, void* const* p) { sk_gemv_q8_0(c, U(0), F(1), F(2), 13, 64); }}},
      {"matmul_f16w", {{"a:buffer:f32", "b:buffer:f16", "c:buffer:f32", "m:scalar:i64", "k:scalar:i64", "n:scalar:i64"},
                       {3 * 5, 5 * 7, 3 * 7},
                       [](const sk_ctx* c, void* const* p) { sk_matmul_f16w(c, F(0), H(1), F(2), 3, 5, 7); }}},
      {"matmul_q8_0", {{"a:buffer:f32", "b:buffer:u8", "c:buffer:f32", "m:scalar:i64", "k:scalar:i64", "n:scalar:i64"},
                       {3 * 32, 7 * 34, 3 * 7},
                       [](const sk_ctx* c, void* const* p) { sk_matmul_q8_0(c, F(0), U(1), F(2), 3, 32, 7); }}},
      {"gemv_q4_0", {{"w:buffer:u8", "x:buffer:f32", "y:buffer:f32", "rows:scalar:i64", "cols:scalar:i64"},
                     {13 * 2 * 18, 64, 13},
                     [](const sk_ctx* c, void* const* p) { sk_gemv_q4_0(c, U(0), F(1), F(2), 13, 64); }}},
      {"matmul_q4_0", {{"a:buffer:f32", "b:buffer:u8", "c:buffer:f32", "m:scalar:i64", "k:scalar:i64", "n:scalar:i64"},
                       {3 * 32, 7 * 18, 3 * 7},
                       [](const sk_ctx* c, void* const* p) { sk_matmul_q4_0(c, F(0), U(1), F(2), 3, 32, 7); }}},
      {"matmul_f32", {{"a:buffer:f32", "b:buffer:f32", "c:buffer:f32", "m:scalar:i64", "k:scalar:i64", "n:scalar:i64"},
                      {3 * 5, 5 * 7, 3 * 7},
                      [](const sk_ctx* c, void* const* p) { sk_matmul_f32(c, F(0), F(1), F(2), 3, 5, 7); }}},
      {"matmul_bf16w", {{"a:buffer:f32", "b:buffer:bf16", "c:buffer:f32", "m:scalar:i64", "k:scalar:i64", "n:scalar:i64"},
                        {3 * 5, 5 * 7, 3 * 7},
                        [](const sk_ctx* c, void* const* p) { sk_matmul_bf16w(c, F(0), H(1), F(2), 3, 5, 7); }}},
      {"moe_expert_gemv_f32", {{"w:buffer:f32", "x:buffer:f32", "idx:buffer:i32", "y:buffer:f32", "experts:scalar:i64",
                                "topk:scalar:i64", "rows:scalar:i64", "cols:scalar:i64", "x_per_slot:scalar:i32"},
                               {2 * 7 * 4, 4, 2, 2 * 7},
                               [](const sk_ctx* c, void* const* p) { sk_moe_expert_gemv_f32(c, F(0), F(1), I(2), F(3), 2, 2, 7, 4, 0); }}},
      {"moe_expert_gemv_bf16w", {{"w:buffer:bf16", "x:buffer:f32", "idx:buffer:i32", "y:buffer:f32", "experts:scalar:i64",
                                  "topk:scalar:i64", "rows:scalar:i64", "cols:scalar:i64", "x_per_slot:scalar:i32"},
                                 {2 * 7 * 4, 4, 2, 2 * 7},
                                 [](const sk_ctx* c, void* const* p) { sk_moe_expert_gemv_bf16w(c, H(0), F(1), I(2), F(3), 2, 2, 7, 4, 0); }}},
      {"moe_gate_topk_f32", {{"logits:buffer:f32", "idx:buffer:i32", "weights:buffer:f32", "rows:scalar:i64", "experts:scalar:i64",
                              "topk:scalar:i64", "sigmoid:scalar:i32", "normalize:scalar:i32"},
                             {4 * 6, 4 * 2, 4 * 2},
                             [](const sk_ctx* c, void* const* p) { sk_moe_gate_topk_f32(c, F(0), I(1), F(2), 4, 6, 2, 0, 1); }}},
      {"moe_combine_f32", {{"weights:buffer:f32", "expert_out:buffer:f32", "y:buffer:f32", "topk:scalar:i64", "rows:scalar:i64"},
                           {2, 2 * 11, 11},
                           [](const sk_ctx* c, void* const* p) { sk_moe_combine_f32(c, F(0), F(1), F(2), 2, 11); }}},
      {"attn_scores_f32", {{"q:buffer:f32", "k:buffer:f32", "s:buffer:f32", "heads:scalar:i64", "kv_heads:scalar:i64",
                            "seq:scalar:i64", "dim:scalar:i64", "scale:scalar:f32"},
                           {4 * 3, 5 * 2 * 3, 4 * 5},
                           [](const sk_ctx* c, void* const* p) { sk_attn_scores_f32(c, F(0), F(1), F(2), 4, 2, 5, 3, 0.5f); }}},
      {"attn_weighted_sum_f32", {{"p:buffer:f32", "v:buffer:f32", "o:buffer:f32", "heads:scalar:i64", "kv_heads:scalar:i64",
                                  "seq:scalar:i64", "dim:scalar:i64"},
                                 {4 * 5, 5 * 2 * 3, 4 * 3},
                                 [](const sk_ctx* c, void* const* p) { sk_attn_weighted_sum_f32(c, F(0), F(1), F(2), 4, 2, 5, 3); }}},
      {"transpose_f32", {{"x:buffer:f32", "y:buffer:f32", "rows:scalar:i64", "cols:scalar:i64"}, {5 * 7, 5 * 7},
                         [](const sk_ctx* c, void* const* p) { sk_transpose_f32(c, F(0), F(1), 5, 7); }}},
      {"concat_f32", {{"a:buffer:f32", "b:buffer:f32", "y:buffer:f32", "rows:scalar:i64", "ca:scalar:i64", "cb:scalar:i64"},
                      {3 * 4, 3 * 5, 3 * 9},
                      [](const sk_ctx* c, void* const* p) { sk_concat_f32(c, F(0), F(1), F(2), 3, 4, 5); }}},
      {"kv_append_f32", {{"k:buffer:f32", "v:buffer:f32", "k_cache:buffer:f32", "v_cache:buffer:f32", "row:scalar:i64",
                          "cap:scalar:i64", "pos:scalar:i64"},
                         {13, 13, 4 * 13, 4 * 13},
                         [](const sk_ctx* c, void* const* p) { sk_kv_append_f32(c, F(0), F(1), F(2), F(3), 13, 4, 2); }}},
      {"attn_decode_f32", {{"q:buffer:f32", "k_cache:buffer:f32", "v_cache:buffer:f32", "out:buffer:f32",
                            "heads:scalar:i64", "kv_heads:scalar:i64", "dim:scalar:i64", "cap:scalar:i64",
                            "pos:scalar:i64", "scale:scalar:f32"},
                           {4 * 3, 6 * 2 * 3, 6 * 2 * 3, 4 * 3},
                           [](const sk_ctx* c, void* const* p) { sk_attn_decode_f32(c, F(0), F(1), F(2), F(3), 4, 2, 3, 6, 4, 0.5f); }}},
      {"increment_i64", {{"x:buffer:i64", "n:scalar:i64", "delta:scalar:i64"}, {103},
                         [](const sk_ctx* c, void* const* p) { sk_increment_i64(c, L(0), 103, 5); }}},
  };
  return table;
}

#undef F
#undef H
#undef I
#undef U
#undef L

nlohmann::json loadJson(const fs::path& p) {
  std::ifstream in(p);
  return nlohmann::json::parse(in);
}

std::vector<fs::path> jsonFiles() {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(SK_KERNELS_DIR))
    if (e.path().extension() == ".json") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

size_t dtypeBytes(const std::string& d) { return d == "i64" ? 8 : d == "f32" || d == "i32" ? 4 : d == "u8" ? 1 : 2; }

// Scalars a decode loop may give a runtime value (an element of a buffer read
// on the device): exactly these declare "runtime": true.
const std::set<std::string>& runtimeScalars() {
  static const std::set<std::string> s{"rope_f32.pos", "kv_append_f32.pos", "attn_decode_f32.pos"};
  return s;
}

TEST(Declarations, EveryJsonMatchesItsKernel) {
  auto files = jsonFiles();
  std::set<std::string> seen;
  const std::set<std::string> allowed{"source",      "entry",  "core_type", "early_start", "kernel_sync",
                                      "block_dim_invariant", "params", "macros"};
  for (const auto& f : files) {
    const std::string name = f.stem().string();
    SCOPED_TRACE(f.string());
    nlohmann::json j;
    ASSERT_NO_THROW(j = loadJson(f));
    ASSERT_TRUE(j.is_object());
    for (auto& [k, v] : j.items()) EXPECT_TRUE(allowed.count(k)) << "unknown key " << k;
    for (const char* k : {"source", "entry", "core_type", "early_start", "params", "macros"}) ASSERT_TRUE(j.contains(k)) << k;
    EXPECT_TRUE(fs::exists(f.parent_path() / j["source"].get<std::string>()));
    EXPECT_EQ(j["core_type"], "vector");
    EXPECT_EQ(j["entry"], "sk_" + name) << "entry follows the builtin name";
    for (auto& [k, v] : j["macros"].items()) EXPECT_TRUE(v.is_string()) << "macro " << k;
    auto it = builtins().find(name);
    ASSERT_NE(it, builtins().end()) << "no signature table entry for builtin " << name;
    seen.insert(name);
    const auto& params = j["params"];
    ASSERT_EQ(params.size(), it->second.params.size());
    size_t buffers = 0;
    for (size_t i = 0; i < params.size(); ++i) {
      const auto& p = params[i];
      std::string sig = p["name"].get<std::string>() + ":" + p["kind"].get<std::string>() + ":" + p["dtype"].get<std::string>();
      EXPECT_EQ(sig, it->second.params[i]) << "param " << i;
      if (p["kind"] == "buffer") {
        ++buffers;
        EXPECT_TRUE(p["access"] == "read" || p["access"] == "write" || p["access"] == "readwrite") << sig;
        EXPECT_TRUE(p["partition"] == "block" || p["partition"] == "all") << sig;
        EXPECT_EQ(p.size(), 5u) << sig;
      } else if (runtimeScalars().count(name + "." + p["name"].get<std::string>())) {
        EXPECT_EQ(p.size(), 4u) << sig << ": a runtime scalar has name, kind, dtype, runtime";
        EXPECT_EQ(p.value("runtime", false), true) << sig << " should declare \"runtime\": true";
      } else {
        EXPECT_EQ(p.size(), 3u) << sig << ": scalars have name, kind, dtype only";
      }
    }
    EXPECT_EQ(buffers, it->second.counts.size());
  }
  EXPECT_EQ(seen.size(), builtins().size()) << "a table entry without a JSON";
}

// Fill a buffer with valid values for its dtype (i32: expert ids 0/1).
void fill(std::vector<uint8_t>& b, const std::string& dtype, size_t n, uint32_t seed) {
  b.assign(n * dtypeBytes(dtype), 0);
  auto f = randomFloats(n, seed, 0.1f, 1.0f);
  for (size_t i = 0; i < n; ++i) {
    if (dtype == "f32") std::memcpy(&b[4 * i], &f[i], 4);
    else if (dtype == "i32") { int32_t v = static_cast<int32_t>(i % 2); std::memcpy(&b[4 * i], &v, 4); }
    else if (dtype == "i64") { int64_t v = static_cast<int64_t>(i * 3 + seed); std::memcpy(&b[8 * i], &v, 8); }
    else if (dtype == "u8") b[i] = static_cast<uint8_t>((i * 37 + seed) % 251);  // q8_0 / q4_0 bytes
    else { uint16_t h = dtype == "bf16" ? floatToBf16Ref(f[i]) : static_cast<uint16_t>(0x3800 + (i % 256)); std::memcpy(&b[2 * i], &h, 2); }
  }
}

void poison(std::vector<uint8_t>& b, const std::string& dtype, size_t from, size_t to) {
  const size_t e = dtypeBytes(dtype);
  for (size_t i = from; i < to; ++i) {
    if (e == 1) { b[i] = 0x7f; }
    else if (e == 8) { int64_t v = int64_t(1) << 40; std::memcpy(&b[8 * i], &v, 8); }
    else if (e == 4) { uint32_t v = dtype == "i32" ? 0x40000000u : 0x7fc00000u; std::memcpy(&b[4 * i], &v, 4); }
    else { uint16_t v = 0x7e00; std::memcpy(&b[2 * i], &v, 2); }
  }
}

TEST(Declarations, BlockPartitionsAreExact) {
  for (const auto& f : jsonFiles()) {
    const std::string name = f.stem().string();
    const Builtin& bi = builtins().at(name);
    nlohmann::json j = loadJson(f);
    struct P {
      std::string dtype, access, partition;
      size_t n;
    };
    std::vector<P> bufs;
    for (const auto& p : j["params"])
      if (p["kind"] == "buffer")
        bufs.push_back({p["dtype"], p["access"], p["partition"], bi.counts[bufs.size()]});
    for (uint32_t B : {1u, 3u, 4u, 7u})
      for (uint32_t b = 0; b < B; ++b) {
        SCOPED_TRACE(name + " block " + std::to_string(b) + "/" + std::to_string(B));
        auto slice = [&](size_t n) {
          size_t per = n / B, lo = per * b;
          return std::pair<size_t, size_t>(lo, b + 1 == B ? n : lo + per);
        };
        // Run block b alone on fresh data; writes of the others stay sentinel.
        auto runOnce = [&](const std::vector<size_t>& poisoned) {
          std::vector<std::vector<uint8_t>> data(bufs.size());
          for (size_t i = 0; i < bufs.size(); ++i) {
            fill(data[i], bufs[i].dtype, bufs[i].n, static_cast<uint32_t>(100 + i));
            if (bufs[i].access == "write") std::fill(data[i].begin(), data[i].end(), 0xA5);
          }
          for (size_t i : poisoned) {
            auto [lo, hi] = slice(bufs[i].n);
            poison(data[i], bufs[i].dtype, 0, lo);
            poison(data[i], bufs[i].dtype, hi, bufs[i].n);
          }
          std::vector<void*> ptrs;
          for (auto& d : data) ptrs.push_back(d.data());
          sk_ctx ctx{b, B, nullptr};
          bi.call(&ctx, ptrs.data());
          return data;
        };
        auto clean = runOnce({});
        for (size_t i = 0; i < bufs.size(); ++i) {
          if (bufs[i].partition != "block") continue;
          auto [lo, hi] = slice(bufs[i].n);
          const size_t e = dtypeBytes(bufs[i].dtype);
          if (bufs[i].access != "read") {
            // Outside the slice: the sentinel (write) or the data it started with (readwrite).
            std::vector<uint8_t> before;
            fill(before, bufs[i].dtype, bufs[i].n, static_cast<uint32_t>(100 + i));
            if (bufs[i].access == "write") std::fill(before.begin(), before.end(), 0xA5);
            for (size_t k = 0; k < bufs[i].n * e; ++k) {
              if (k < lo * e || k >= hi * e) {
                ASSERT_EQ(clean[i][k], before[k]) << "param " << i << " written outside its slice at byte " << k;
              }
            }
          }
          if (bufs[i].access != "write") {
            auto poisoned = runOnce({i});
            for (size_t o = 0; o < bufs.size(); ++o) {
              if (bufs[o].access != "read" && o != i) {
                EXPECT_EQ(poisoned[o], clean[o]) << "param " << i << " is read outside its slice (output " << o << " changed)";
              }
            }
          }
        }
      }
  }
}

// "block_dim_invariant": true lets a fused plan run the op with fewer blocks
// (plan/Coarsen.cpp), so every block dim must give the same bytes.
TEST(Declarations, BlockDimInvariantKernelsGiveTheSameBytesForEveryBlockDim) {
  for (const auto& f : jsonFiles()) {
    const std::string name = f.stem().string();
    nlohmann::json j = loadJson(f);
    if (!j.value("block_dim_invariant", false)) continue;
    SCOPED_TRACE(name);
    const Builtin& bi = builtins().at(name);
    std::vector<std::string> dtypes, access;
    for (const auto& p : j["params"])
      if (p["kind"] == "buffer") {
        dtypes.push_back(p["dtype"]);
        access.push_back(p["access"]);
      }
    auto run = [&](uint32_t B) {
      std::vector<std::vector<uint8_t>> data(dtypes.size());
      for (size_t i = 0; i < dtypes.size(); ++i) {
        fill(data[i], dtypes[i], bi.counts[i], static_cast<uint32_t>(200 + i));
        if (access[i] == "write") std::fill(data[i].begin(), data[i].end(), 0xA5);
      }
      std::vector<void*> ptrs;
      for (auto& d : data) ptrs.push_back(d.data());
      for (uint32_t b = 0; b < B; ++b) {
        sk_ctx ctx{b, B, nullptr};
        bi.call(&ctx, ptrs.data());
      }
      return data;
    };
    const auto one = run(1);
    for (uint32_t B : {2u, 3u, 7u, 40u}) EXPECT_EQ(run(B), one) << "block_dim " << B;
  }
}

}  // namespace
