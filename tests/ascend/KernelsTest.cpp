// The ascend builtin kernels (kernels/ascend) against the cpu builtins of the
// same name: same static shapes, same inputs, every block dim in {1, 3, 7}
// (one not dividing most sizes), outputs compared bit for bit (sums the ascend kernels add in ReduceSum's
// order and the cpu builtins in another, to a 1e-5 relative tolerance, unless the inputs make every order
// exact; an f32 -> f16 NaN as a NaN of the same sign). The ascend
// kernel runs in the simulator as an unfused launch of its core type (vector:
// AIV_ONLY, cube: AIC_ONLY); the cpu kernel is called block by block.
// tests.cmake compiles both with the shapes used here.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <random>
#include <sstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "superkernel/ascend/Simulator.h"
#include "superkernel/cpu/kernel.h"

#define ASC(name, ...) void asc_##name(__VA_ARGS__)
extern "C" {
void sk_ascend_sim_enter(const sk_ascend_sim_core*);
ASC(add, uint8_t*, uint8_t*, uint8_t*);
ASC(copy, uint8_t*, uint8_t*);
ASC(swiglu, uint8_t*, uint8_t*, uint8_t*);
ASC(rms_norm, uint8_t*, uint8_t*, uint8_t*);
ASC(add_rms_norm, uint8_t*, uint8_t*, uint8_t*, uint8_t*, uint8_t*);
ASC(softmax, uint8_t*, uint8_t*);
ASC(rope, uint8_t*, uint8_t*);
ASC(rope_odd, uint8_t*, uint8_t*);
ASC(attn_scores, uint8_t*, uint8_t*, uint8_t*);
ASC(attn_wsum, uint8_t*, uint8_t*, uint8_t*);
ASC(gemv, uint8_t*, uint8_t*, uint8_t*);
ASC(gemv_bf16w, uint8_t*, uint8_t*, uint8_t*);
ASC(moe_expert, uint8_t*, uint8_t*, uint8_t*, uint8_t*);
ASC(moe_expert_slot, uint8_t*, uint8_t*, uint8_t*, uint8_t*);
ASC(moe_gate, uint8_t*, uint8_t*, uint8_t*);
ASC(moe_gate_sig, uint8_t*, uint8_t*, uint8_t*);
ASC(moe_combine, uint8_t*, uint8_t*, uint8_t*);
ASC(mul, uint8_t*, uint8_t*, uint8_t*);
ASC(scale, uint8_t*, uint8_t*);
ASC(concat, uint8_t*, uint8_t*, uint8_t*);
ASC(transpose, uint8_t*, uint8_t*);
ASC(reduce_mean, uint8_t*, uint8_t*);
ASC(cast_f32_f16, uint8_t*, uint8_t*);
ASC(cast_f16_f32, uint8_t*, uint8_t*);
ASC(cast_f32_bf16, uint8_t*, uint8_t*);
ASC(cast_bf16_f32, uint8_t*, uint8_t*);
ASC(matmul, uint8_t*, uint8_t*, uint8_t*);
ASC(matmul_bf16w, uint8_t*, uint8_t*, uint8_t*);
ASC(kv_append, uint8_t*, uint8_t*, uint8_t*, uint8_t*);
ASC(kv_append_bad, uint8_t*, uint8_t*, uint8_t*, uint8_t*);
ASC(attn_decode, uint8_t*, uint8_t*, uint8_t*, uint8_t*);
ASC(attn_decode_long, uint8_t*, uint8_t*, uint8_t*, uint8_t*);
ASC(attn_decode_bad, uint8_t*, uint8_t*, uint8_t*, uint8_t*);
ASC(increment, uint8_t*);
ASC(add_tiles, uint8_t*, uint8_t*, uint8_t*);
ASC(cast_f32_bf16_tiles, uint8_t*, uint8_t*);
ASC(rope_tiles, uint8_t*, uint8_t*);
ASC(softmax_wide, uint8_t*, uint8_t*);
ASC(attn_decode_wide, uint8_t*, uint8_t*, uint8_t*, uint8_t*);
ASC(rms_norm_too_wide, uint8_t*, uint8_t*, uint8_t*);
ASC(gemv_wide, uint8_t*, uint8_t*, uint8_t*);
ASC(gemv_bf16w_chunks, uint8_t*, uint8_t*, uint8_t*);
ASC(gemv_bf16w_tall, uint8_t*, uint8_t*, uint8_t*);
ASC(moe_expert_wide, uint8_t*, uint8_t*, uint8_t*, uint8_t*);
ASC(moe_gate_wide, uint8_t*, uint8_t*, uint8_t*);
ASC(moe_gate_wide_softmax, uint8_t*, uint8_t*, uint8_t*);
ASC(moe_gate_too_wide, uint8_t*, uint8_t*, uint8_t*);

// The cpu builtins (scalars are ignored: the static shapes are compiled in).
void cpu_add(const sk_ctx*, const float*, const float*, float*, int64_t);
void cpu_copy(const sk_ctx*, const float*, float*, int64_t);
void cpu_swiglu(const sk_ctx*, const float*, const float*, float*, int64_t);
void cpu_rms_norm(const sk_ctx*, const float*, const float*, float*, int64_t, int64_t, float);
void cpu_add_rms_norm(const sk_ctx*, const float*, const float*, const float*, float*, float*, int64_t, int64_t, float);
void cpu_softmax(const sk_ctx*, const float*, float*, int64_t, int64_t);
void cpu_rope(const sk_ctx*, const float*, float*, int64_t, int64_t, int64_t, float);
void cpu_attn_scores(const sk_ctx*, const float*, const float*, float*, int64_t, int64_t, int64_t, int64_t, float);
void cpu_attn_wsum(const sk_ctx*, const float*, const float*, float*, int64_t, int64_t, int64_t, int64_t);
void cpu_gemv(const sk_ctx*, const float*, const float*, float*, int64_t, int64_t);
void cpu_gemv_bf16w(const sk_ctx*, const uint16_t*, const float*, float*, int64_t, int64_t);
void cpu_moe_expert(const sk_ctx*, const uint16_t*, const float*, const int32_t*, float*, int64_t, int64_t, int64_t,
                    int64_t, int32_t);
void cpu_moe_expert_slot(const sk_ctx*, const float*, const float*, const int32_t*, float*, int64_t, int64_t, int64_t,
                         int64_t, int32_t);
void cpu_moe_gate(const sk_ctx*, const float*, int32_t*, float*, int64_t, int64_t, int64_t, int32_t, int32_t);
void cpu_moe_gate_sig(const sk_ctx*, const float*, int32_t*, float*, int64_t, int64_t, int64_t, int32_t, int32_t);
void cpu_moe_combine(const sk_ctx*, const float*, const float*, float*, int64_t, int64_t);
void cpu_mul(const sk_ctx*, const float*, const float*, float*, int64_t);
void cpu_scale(const sk_ctx*, const float*, float*, float, int64_t);
void cpu_concat(const sk_ctx*, const float*, const float*, float*, int64_t, int64_t, int64_t);
void cpu_transpose(const sk_ctx*, const float*, float*, int64_t, int64_t);
void cpu_reduce_mean(const sk_ctx*, const float*, float*, int64_t, int64_t);
void cpu_cast_f32_f16(const sk_ctx*, const float*, uint16_t*, int64_t);
void cpu_cast_f16_f32(const sk_ctx*, const uint16_t*, float*, int64_t);
void cpu_cast_f32_bf16(const sk_ctx*, const float*, uint16_t*, int64_t);
void cpu_cast_bf16_f32(const sk_ctx*, const uint16_t*, float*, int64_t);
void cpu_matmul(const sk_ctx*, const float*, const float*, float*, int64_t, int64_t, int64_t);
void cpu_matmul_bf16w(const sk_ctx*, const float*, const uint16_t*, float*, int64_t, int64_t, int64_t);
void cpu_kv_append(const sk_ctx*, const float*, const float*, float*, float*, int64_t, int64_t, int64_t);
void cpu_attn_decode(const sk_ctx*, const float*, const float*, const float*, float*, int64_t, int64_t, int64_t, int64_t,
                     int64_t, float);
void cpu_attn_decode_long(const sk_ctx*, const float*, const float*, const float*, float*, int64_t, int64_t, int64_t,
                          int64_t, int64_t, float);
void cpu_increment(const sk_ctx*, int64_t*, int64_t, int64_t);
void cpu_add_tiles(const sk_ctx*, const float*, const float*, float*, int64_t);
void cpu_cast_f32_bf16_tiles(const sk_ctx*, const float*, uint16_t*, int64_t);
void cpu_rope_tiles(const sk_ctx*, const float*, float*, int64_t, int64_t, int64_t, float);
void cpu_softmax_wide(const sk_ctx*, const float*, float*, int64_t, int64_t);
void cpu_attn_decode_wide(const sk_ctx*, const float*, const float*, const float*, float*, int64_t, int64_t, int64_t,
                          int64_t, int64_t, float);
void cpu_rms_norm_too_wide(const sk_ctx*, const float*, const float*, float*, int64_t, int64_t, float);
void cpu_gemv_wide(const sk_ctx*, const float*, const float*, float*, int64_t, int64_t);
void cpu_gemv_bf16w_chunks(const sk_ctx*, const uint16_t*, const float*, float*, int64_t, int64_t);
void cpu_gemv_bf16w_tall(const sk_ctx*, const uint16_t*, const float*, float*, int64_t, int64_t);
void cpu_moe_expert_wide(const sk_ctx*, const float*, const float*, const int32_t*, float*, int64_t, int64_t, int64_t,
                         int64_t, int32_t);
void cpu_moe_gate_wide(const sk_ctx*, const float*, int32_t*, float*, int64_t, int64_t, int64_t, int32_t, int32_t);
void cpu_moe_gate_wide_softmax(const sk_ctx*, const float*, int32_t*, float*, int64_t, int64_t, int64_t, int32_t,
                               int32_t);
}

namespace ascend_kernels_test {

using sk::ascend_sim::TaskType;

// Raw bytes of one buffer; `words` 4-byte elements (bf16 weights: pairs).
struct Buf {
  std::vector<uint32_t> w;
  uint8_t* p() { return reinterpret_cast<uint8_t*>(w.data()); }
  template <class T>
  T* as() {
    return reinterpret_cast<T*>(w.data());
  }
};

Buf randomBuf(size_t words, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  Buf b;
  b.w.resize(words);
  for (auto& x : b.w) {
    const float f = d(gen);
    std::memcpy(&x, &f, 4);
  }
  return b;
}

// How an output is compared with the cpu builtin's.
enum class Cmp : uint8_t {
  Bits,     // bit for bit
  Close,    // f32 within 1e-5 relative (+ 1e-6): a sum the ascend kernel adds in ReduceSum's order
  HalfNaN,  // f16 bit for bit, but two NaNs of the same sign are equal: the cpu builtin writes the one quiet
            // NaN sign | 0x7e00, the simulator's Cast keeps the payload's top bits (as x86's F16C), and which
            // NaN a device writes is not known here
};

struct KernelPairCase {
  const char* name;
  TaskType type;
  std::vector<size_t> sizes;   // words per buffer
  std::vector<size_t> outputs; // indices of written buffers
  void* asc;
  std::function<void(const sk_ctx*, std::vector<Buf>&)> cpu;
  std::function<void(std::vector<Buf>&)> prepare = {};  // fix up inputs (indices etc.)
  bool inPlace = false;  // the outputs are readwrite: they keep their inputs instead of the garbage fill
  std::vector<Cmp> cmp = {};  // per output; empty: Close for the kernels reduces() names, else Bits
};

// Kernels whose cpu builtin sums in a different (vectorized) order: compared to a relative tolerance of
// 1e-5 instead of bit for bit. Everything else must match exactly.
bool reduces(const std::string& name) {
  for (const char* r : {"rms_norm_f32", "add_rms_norm_f32", "softmax_f32", "attn_scores_f32", "attn_weighted_sum_f32",
                        "gemv_f32", "gemv_bf16w", "moe_expert_gemv_bf16w", "moe_expert_gemv_f32 x_per_slot",
                        "moe_combine_f32", "softmax_f32 wide", "attn_decode_f32 wide"})
    if (name == r) return true;
  return false;
}

Cmp cmpOf(const KernelPairCase& k, size_t i) {
  if (!k.cmp.empty()) return k.cmp.at(i);
  return reduces(k.name) ? Cmp::Close : Cmp::Bits;
}

// f16 pairs in each word: equal bits, or NaNs of the same sign.
void expectHalvesOrNaNs(const Buf& a, const Buf& b, size_t output) {
  auto isNaN = [](uint16_t h) { return (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0; };
  for (size_t i = 0; i < a.w.size() * 2; ++i) {
    uint16_t x, y;
    std::memcpy(&x, reinterpret_cast<const uint16_t*>(a.w.data()) + i, 2);
    std::memcpy(&y, reinterpret_cast<const uint16_t*>(b.w.data()) + i, 2);
    const bool same = x == y || (isNaN(x) && isNaN(y) && (x & 0x8000u) == (y & 0x8000u));
    ASSERT_TRUE(same) << "output " << output << " half " << i << ": " << std::hex << x << " vs " << y;
  }
}

void expectClose(const Buf& a, const Buf& b, size_t output) {
  for (size_t i = 0; i < a.w.size(); ++i) {
    float x, y;
    std::memcpy(&x, &a.w[i], 4);
    std::memcpy(&y, &b.w[i], 4);
    ASSERT_NEAR(x, y, 1e-6f + 1e-5f * std::fabs(y)) << "output " << output << " element " << i;
  }
}

template <class F>
void* fn(F* f) {
  return reinterpret_cast<void*>(f);
}

std::vector<KernelPairCase> cases() {
  // bf16 weights: both halves of each word the top half of a float in [-1, 1] (finite bf16 values).
  auto bf16 = [](std::vector<Buf>& b) {
    for (uint32_t& w : b[0].w) w = (w & 0xffff0000u) | (w >> 16);
  };
  // The f32 -> f16 / bf16 casts see every kind of float, not only [-1, 1]: half of the words are random
  // bit patterns (NaN, inf, f32 subnormals, values past 65504, half subnormals).
  auto anyBits = [](std::vector<Buf>& b) {
    std::mt19937 gen(99);
    for (size_t i = 0; i < b[0].w.size(); i += 2) b[0].w[i] = static_cast<uint32_t>(gen());
  };
  // KV caches [cap, row] with the rows above pos NaN: attn_decode must never read them.
  auto nanAbove = [](size_t row, size_t pos) {
    return [=](std::vector<Buf>& b) {
      for (size_t i = (pos + 1) * row; i < b[1].w.size(); ++i) b[1].w[i] = b[2].w[i] = 0x7fc00000u;
    };
  };
  auto idx = [](std::vector<Buf>& b) {  // expert indices in range for moe_expert
    b[2].as<int32_t>()[0] = 3;
    b[2].as<int32_t>()[1] = 1;
  };
  // Dot products whose every summation order is exact: weights k / 8 (0 < |k| <= 8) and activations j / 16
  // (0 < |j| <= 16) make each product a nonzero multiple of 2^-7 of magnitude at most 1, so sums of fewer
  // than 2^17 of them are exact in f32. The vector kernels' ReduceSum order and the cpu builtin's give the
  // same bits, and a term missed, added twice or taken from the wrong row or column shows. f32 or bf16 (both
  // halves of a word; k / 8 is exact in bf16) weights in buffer 0, activations in buffer 1.
  auto dyadic = [](uint32_t bits, int range, float unit) {
    const int k = static_cast<int>(bits % static_cast<uint32_t>(2 * range)) - range;  // -range .. range - 1
    return static_cast<float>(k < 0 ? k : k + 1) * unit;
  };
  auto exactDots = [=](bool bf16) {
    return [=](std::vector<Buf>& b) {
      for (uint32_t& w : b[0].w) {
        if (!bf16) {
          const float f = dyadic(w, 8, 0.125f);
          std::memcpy(&w, &f, 4);
          continue;
        }
        uint32_t lo, hi;
        const float fl = dyadic(w, 8, 0.125f), fh = dyadic(w >> 16, 8, 0.125f);
        std::memcpy(&lo, &fl, 4);
        std::memcpy(&hi, &fh, 4);
        w = (hi & 0xffff0000u) | (lo >> 16);
      }
      for (uint32_t& w : b[1].w) {
        const float f = dyadic(w, 16, 0.0625f);
        std::memcpy(&w, &f, 4);
      }
    };
  };
  // Logits on a grid of 1/8: many ties, which the top-k breaks by the lower index.
  auto tiedLogits = [=](std::vector<Buf>& b) {
    for (uint32_t& w : b[0].w) {
      const float f = dyadic(w, 8, 0.125f);
      std::memcpy(&w, &f, 4);
    }
  };
  return {
      {"add_f32", TaskType::AivOnly, {1000, 1000, 1000}, {2}, fn(asc_add),
       [](const sk_ctx* c, std::vector<Buf>& b) { cpu_add(c, b[0].as<float>(), b[1].as<float>(), b[2].as<float>(), 0); }},
      {"copy_f32", TaskType::AivOnly, {1000, 1000}, {1}, fn(asc_copy),
       [](const sk_ctx* c, std::vector<Buf>& b) { cpu_copy(c, b[0].as<float>(), b[1].as<float>(), 0); }},
      {"swiglu_f32", TaskType::AivOnly, {1000, 1000, 1000}, {2}, fn(asc_swiglu),
       [](const sk_ctx* c, std::vector<Buf>& b) { cpu_swiglu(c, b[0].as<float>(), b[1].as<float>(), b[2].as<float>(), 0); }},
      {"rms_norm_f32", TaskType::AivOnly, {192, 64, 192}, {2}, fn(asc_rms_norm),
       [](const sk_ctx* c, std::vector<Buf>& b) {
         cpu_rms_norm(c, b[0].as<float>(), b[1].as<float>(), b[2].as<float>(), 0, 0, 0);
       }},
      {"add_rms_norm_f32", TaskType::AivOnly, {192, 192, 64, 192, 192}, {3, 4}, fn(asc_add_rms_norm),
       [](const sk_ctx* c, std::vector<Buf>& b) {
         cpu_add_rms_norm(c, b[0].as<float>(), b[1].as<float>(), b[2].as<float>(), b[3].as<float>(), b[4].as<float>(), 0,
                          0, 0);
       }},
      {"softmax_f32", TaskType::AivOnly, {165, 165}, {1}, fn(asc_softmax),
       [](const sk_ctx* c, std::vector<Buf>& b) { cpu_softmax(c, b[0].as<float>(), b[1].as<float>(), 0, 0); }},
      {"rope_f32", TaskType::AivOnly, {64, 64}, {1}, fn(asc_rope),
       [](const sk_ctx* c, std::vector<Buf>& b) { cpu_rope(c, b[0].as<float>(), b[1].as<float>(), 0, 0, 0, 0); }},
      {"attn_scores_f32", TaskType::AivOnly, {64, 9 * 2 * 16, 36}, {2}, fn(asc_attn_scores),
       [](const sk_ctx* c, std::vector<Buf>& b) {
         cpu_attn_scores(c, b[0].as<float>(), b[1].as<float>(), b[2].as<float>(), 0, 0, 0, 0, 0);
       }},
      {"attn_weighted_sum_f32", TaskType::AivOnly, {36, 9 * 2 * 16, 64}, {2}, fn(asc_attn_wsum),
       [](const sk_ctx* c, std::vector<Buf>& b) {
         cpu_attn_wsum(c, b[0].as<float>(), b[1].as<float>(), b[2].as<float>(), 0, 0, 0, 0);
       }},
      {"gemv_f32", TaskType::AivOnly, {37 * 64, 64, 37}, {2}, fn(asc_gemv),
       [](const sk_ctx* c, std::vector<Buf>& b) { cpu_gemv(c, b[0].as<float>(), b[1].as<float>(), b[2].as<float>(), 0, 0); }},
      {"gemv_bf16w", TaskType::AivOnly, {37 * 64 / 2, 64, 37}, {2}, fn(asc_gemv_bf16w),
       [](const sk_ctx* c, std::vector<Buf>& b) {
         cpu_gemv_bf16w(c, b[0].as<uint16_t>(), b[1].as<float>(), b[2].as<float>(), 0, 0);
       },
       bf16},
      {"moe_expert_gemv_bf16w", TaskType::AivOnly, {4 * 8 * 16 / 2, 16, 2, 16}, {3}, fn(asc_moe_expert),
       [](const sk_ctx* c, std::vector<Buf>& b) {
         cpu_moe_expert(c, b[0].as<uint16_t>(), b[1].as<float>(), b[2].as<int32_t>(), b[3].as<float>(), 0, 0, 0, 0, 0);
       },
       [=](std::vector<Buf>& b) {
         bf16(b);
         idx(b);
       }},
      {"moe_expert_gemv_f32 x_per_slot", TaskType::AivOnly, {4 * 8 * 16, 32, 2, 16}, {3}, fn(asc_moe_expert_slot),
       [](const sk_ctx* c, std::vector<Buf>& b) {
         cpu_moe_expert_slot(c, b[0].as<float>(), b[1].as<float>(), b[2].as<int32_t>(), b[3].as<float>(), 0, 0, 0, 0, 0);
       },
       idx},
      {"moe_gate_topk_f32", TaskType::AivOnly, {16, 4, 4}, {1, 2}, fn(asc_moe_gate),
       [](const sk_ctx* c, std::vector<Buf>& b) {
         cpu_moe_gate(c, b[0].as<float>(), b[1].as<int32_t>(), b[2].as<float>(), 0, 0, 0, 0, 0);
       }},
      {"moe_gate_topk_f32 sigmoid", TaskType::AivOnly, {18, 9, 9}, {1, 2}, fn(asc_moe_gate_sig),
       [](const sk_ctx* c, std::vector<Buf>& b) {
         cpu_moe_gate_sig(c, b[0].as<float>(), b[1].as<int32_t>(), b[2].as<float>(), 0, 0, 0, 0, 0);
       }},
      {"moe_combine_f32", TaskType::AivOnly, {2, 16, 8}, {2}, fn(asc_moe_combine),
       [](const sk_ctx* c, std::vector<Buf>& b) {
         cpu_moe_combine(c, b[0].as<float>(), b[1].as<float>(), b[2].as<float>(), 0, 0);
       }},
      {"mul_f32", TaskType::AivOnly, {1000, 1000, 1000}, {2}, fn(asc_mul),
       [](const sk_ctx* c, std::vector<Buf>& b) { cpu_mul(c, b[0].as<float>(), b[1].as<float>(), b[2].as<float>(), 0); }},
      {"scale_f32", TaskType::AivOnly, {1000, 1000}, {1}, fn(asc_scale),
       [](const sk_ctx* c, std::vector<Buf>& b) { cpu_scale(c, b[0].as<float>(), b[1].as<float>(), 0, 0); }},
      {"concat_f32", TaskType::AivOnly, {15, 21, 36}, {2}, fn(asc_concat),
       [](const sk_ctx* c, std::vector<Buf>& b) {
         cpu_concat(c, b[0].as<float>(), b[1].as<float>(), b[2].as<float>(), 0, 0, 0);
       }},
      {"transpose_f32", TaskType::AivOnly, {63, 63}, {1}, fn(asc_transpose),
       [](const sk_ctx* c, std::vector<Buf>& b) { cpu_transpose(c, b[0].as<float>(), b[1].as<float>(), 0, 0); }},
      {"reduce_mean_f32", TaskType::AivOnly, {165, 5}, {1}, fn(asc_reduce_mean),
       [](const sk_ctx* c, std::vector<Buf>& b) { cpu_reduce_mean(c, b[0].as<float>(), b[1].as<float>(), 0, 0); }},
      {"cast_f32_f16", TaskType::AivOnly, {1000, 500}, {1}, fn(asc_cast_f32_f16),
       [](const sk_ctx* c, std::vector<Buf>& b) { cpu_cast_f32_f16(c, b[0].as<float>(), b[1].as<uint16_t>(), 0); },
       anyBits, false, {Cmp::HalfNaN}},
      {"cast_f16_f32", TaskType::AivOnly, {500, 1000}, {1}, fn(asc_cast_f16_f32),
       [](const sk_ctx* c, std::vector<Buf>& b) { cpu_cast_f16_f32(c, b[0].as<uint16_t>(), b[1].as<float>(), 0); },
       anyBits},
      {"cast_f32_bf16", TaskType::AivOnly, {1000, 500}, {1}, fn(asc_cast_f32_bf16),
       [](const sk_ctx* c, std::vector<Buf>& b) { cpu_cast_f32_bf16(c, b[0].as<float>(), b[1].as<uint16_t>(), 0); },
       anyBits},
      {"cast_bf16_f32", TaskType::AivOnly, {500, 1000}, {1}, fn(asc_cast_bf16_f32),
       [](const sk_ctx* c, std::vector<Buf>& b) { cpu_cast_bf16_f32(c, b[0].as<uint16_t>(), b[1].as<float>(), 0); },
       anyBits},
      {"matmul_f32", TaskType::AicOnly, {3 * 19, 19 * 11, 3 * 11}, {2}, fn(asc_matmul),
       [](const sk_ctx* c, std::vector<Buf>& b) {
         cpu_matmul(c, b[0].as<float>(), b[1].as<float>(), b[2].as<float>(), 0, 0, 0);
       }},
      {"matmul_bf16w", TaskType::AicOnly, {3 * 19, 19 * 12 / 2, 3 * 12}, {2}, fn(asc_matmul_bf16w),
       [](const sk_ctx* c, std::vector<Buf>& b) {
         cpu_matmul_bf16w(c, b[0].as<float>(), b[1].as<uint16_t>(), b[2].as<float>(), 0, 0, 0);
       },
       [](std::vector<Buf>& b) {
         for (uint32_t& w : b[1].w) w = (w & 0xffff0000u) | (w >> 16);
       }},
      {"kv_append_f32", TaskType::AivOnly, {37, 37, 37 * 5, 37 * 5}, {2, 3}, fn(asc_kv_append),
       [](const sk_ctx* c, std::vector<Buf>& b) {
         cpu_kv_append(c, b[0].as<float>(), b[1].as<float>(), b[2].as<float>(), b[3].as<float>(), 0, 0, 0);
       },
       {}, true},
      {"attn_decode_f32", TaskType::AivOnly, {64, 9 * 2 * 16, 9 * 2 * 16, 64}, {3}, fn(asc_attn_decode),
       [](const sk_ctx* c, std::vector<Buf>& b) {
         cpu_attn_decode(c, b[0].as<float>(), b[1].as<float>(), b[2].as<float>(), b[3].as<float>(), 0, 0, 0, 0, 0, 0);
       },
       nanAbove(2 * 16, 6)},
      {"attn_decode_f32 long", TaskType::AivOnly, {6 * 8, 300 * 3 * 8, 300 * 3 * 8, 6 * 8}, {3}, fn(asc_attn_decode_long),
       [](const sk_ctx* c, std::vector<Buf>& b) {
         cpu_attn_decode_long(c, b[0].as<float>(), b[1].as<float>(), b[2].as<float>(), b[3].as<float>(), 0, 0, 0, 0, 0,
                              0);
       },
       nanAbove(3 * 8, 290)},
      {"increment_i64", TaskType::AivOnly, {2 * 10}, {0}, fn(asc_increment),
       [](const sk_ctx* c, std::vector<Buf>& b) { cpu_increment(c, b[0].as<int64_t>(), 0, 0); }, {}, true},
      // Past one UB tile (the vector builtins' tiles): several per block, the last shorter.
      {"add_f32 tiles", TaskType::AivOnly, {20003, 20003, 20003}, {2}, fn(asc_add_tiles),
       [](const sk_ctx* c, std::vector<Buf>& b) { cpu_add_tiles(c, b[0].as<float>(), b[1].as<float>(), b[2].as<float>(), 0); }},
      {"cast_f32_bf16 tiles", TaskType::AivOnly, {20003, 10002}, {1}, fn(asc_cast_f32_bf16_tiles),
       [](const sk_ctx* c, std::vector<Buf>& b) { cpu_cast_f32_bf16_tiles(c, b[0].as<float>(), b[1].as<uint16_t>(), 0); },
       anyBits},
      {"rope_f32 tiles", TaskType::AivOnly, {600 * 16, 600 * 16}, {1}, fn(asc_rope_tiles),
       [](const sk_ctx* c, std::vector<Buf>& b) { cpu_rope_tiles(c, b[0].as<float>(), b[1].as<float>(), 0, 0, 0, 0); }},
      {"softmax_f32 wide", TaskType::AivOnly, {4 * 3001, 4 * 3001}, {1}, fn(asc_softmax_wide),
       [](const sk_ctx* c, std::vector<Buf>& b) { cpu_softmax_wide(c, b[0].as<float>(), b[1].as<float>(), 0, 0); }},
      // dim 200 (past one 64-element repeat: the dot products are ReduceSum's order), k / v rows in several loads.
      {"attn_decode_f32 wide", TaskType::AivOnly, {4 * 200, 100 * 2 * 200, 100 * 2 * 200, 4 * 200}, {3},
       fn(asc_attn_decode_wide),
       [](const sk_ctx* c, std::vector<Buf>& b) {
         cpu_attn_decode_wide(c, b[0].as<float>(), b[1].as<float>(), b[2].as<float>(), b[3].as<float>(), 0, 0, 0, 0, 0,
                              0);
       },
       nanAbove(2 * 200, 90)},
      // gemv past one tile (sk_ascend_kernel.h SkGemvRows: 8,192-column chunks, W tiles of 8,192 weights, y tiles
      // of 256 rows), with sums exact in any order.
      {"gemv_f32 3001 columns", TaskType::AivOnly, {37 * 3001, 3001, 37}, {2}, fn(asc_gemv_wide),
       [](const sk_ctx* c, std::vector<Buf>& b) {
         cpu_gemv_wide(c, b[0].as<float>(), b[1].as<float>(), b[2].as<float>(), 0, 0);
       },
       exactDots(false)},
      {"gemv_bf16w 20001 columns", TaskType::AivOnly, {(5 * 20001 + 1) / 2, 20001, 5}, {2}, fn(asc_gemv_bf16w_chunks),
       [](const sk_ctx* c, std::vector<Buf>& b) {
         cpu_gemv_bf16w_chunks(c, b[0].as<uint16_t>(), b[1].as<float>(), b[2].as<float>(), 0, 0);
       },
       exactDots(true)},
      {"gemv_bf16w 2003 rows", TaskType::AivOnly, {2003 * 24 / 2, 24, 2003}, {2}, fn(asc_gemv_bf16w_tall),
       [](const sk_ctx* c, std::vector<Buf>& b) {
         cpu_gemv_bf16w_tall(c, b[0].as<uint16_t>(), b[1].as<float>(), b[2].as<float>(), 0, 0);
       },
       exactDots(true)},
      {"moe_expert_gemv_f32 9000 columns", TaskType::AivOnly, {3 * 130 * 9000, 2 * 9000, 2, 2 * 130}, {3},
       fn(asc_moe_expert_wide),
       [](const sk_ctx* c, std::vector<Buf>& b) {
         cpu_moe_expert_wide(c, b[0].as<float>(), b[1].as<float>(), b[2].as<int32_t>(), b[3].as<float>(), 0, 0, 0, 0, 0);
       },
       [=](std::vector<Buf>& b) {
         exactDots(false)(b);
         b[2].as<int32_t>()[0] = 2;
         b[2].as<int32_t>()[1] = 0;
       }},
      // 96 experts: ReduceMax over two repeats, ties everywhere; sigmoid (no sum) is every bit the cpu's, the
      // softmax's sum of 96 exponentials is ReduceSum's order (its indices still exact).
      {"moe_gate_topk_f32 96 experts", TaskType::AivOnly, {5 * 96, 5 * 6, 5 * 6}, {1, 2}, fn(asc_moe_gate_wide),
       [](const sk_ctx* c, std::vector<Buf>& b) {
         cpu_moe_gate_wide(c, b[0].as<float>(), b[1].as<int32_t>(), b[2].as<float>(), 0, 0, 0, 0, 0);
       },
       tiedLogits},
      {"moe_gate_topk_f32 96 experts softmax", TaskType::AivOnly, {3 * 96, 3 * 4, 3 * 4}, {1, 2},
       fn(asc_moe_gate_wide_softmax),
       [](const sk_ctx* c, std::vector<Buf>& b) {
         cpu_moe_gate_wide_softmax(c, b[0].as<float>(), b[1].as<int32_t>(), b[2].as<float>(), 0, 0, 0, 0, 0);
       },
       tiedLogits, false, {Cmp::Bits, Cmp::Close}},
  };
}

TEST(AscendKernels, MatchTheCpuBuiltinsBitForBit) {
  for (const KernelPairCase& k : cases()) {
    for (uint32_t blocks : {1u, 3u, 7u}) {
      SCOPED_TRACE(std::string(k.name) + " block dim " + std::to_string(blocks));
      std::vector<Buf> in;
      for (size_t i = 0; i < k.sizes.size(); ++i) in.push_back(randomBuf(k.sizes[i], 17 + static_cast<uint32_t>(i)));
      if (k.prepare) k.prepare(in);
      std::vector<Buf> asc = in, cpu = in;
      // Outputs start as different garbage so an element nobody writes shows up.
      for (size_t o : k.outputs) {
        if (k.inPlace) continue;
        std::fill(asc[o].w.begin(), asc[o].w.end(), 0x7fc00001u);
        std::fill(cpu[o].w.begin(), cpu[o].w.end(), 0x7fc00002u);
      }
      sk::ascend_sim::LaunchSpec s;
      s.type = k.type;
      s.blockDim = blocks;
      s.entry = k.asc;
      s.enter = &sk_ascend_sim_enter;
      s.name = k.name;
      for (Buf& b : asc) s.args.push_back(b.p());
      sk::Status st = sk::ascend_sim::launch(s);
      ASSERT_TRUE(st.ok()) << st.error().message();
      for (uint32_t b = 0; b < blocks; ++b) {
        const sk_ctx ctx{b, blocks, nullptr};
        k.cpu(&ctx, cpu);
      }
      for (size_t i = 0; i < k.outputs.size(); ++i) {
        const size_t o = k.outputs[i];
        if (k.inPlace) {
          EXPECT_NE(0, std::memcmp(asc[o].w.data(), in[o].w.data(), in[o].w.size() * 4)) << "output " << o << " unchanged";
        }
        switch (cmpOf(k, i)) {
          case Cmp::Close: expectClose(asc[o], cpu[o], o); break;
          case Cmp::HalfNaN: expectHalvesOrNaNs(asc[o], cpu[o], o); break;
          case Cmp::Bits:
            EXPECT_EQ(0, std::memcmp(asc[o].w.data(), cpu[o].w.data(), asc[o].w.size() * 4)) << "output " << o;
            break;
        }
      }
    }
  }
}

// One launch of a two-buffer (x, y) kernel compiled with n = 1000 elements, on 3 blocks.
void launch2(void* entry, void* x, void* y) {
  sk::ascend_sim::LaunchSpec s;
  s.type = TaskType::AivOnly;
  s.blockDim = 3;
  s.entry = entry;
  s.enter = &sk_ascend_sim_enter;
  s.name = "cast";
  s.args = {x, y};
  sk::Status st = sk::ascend_sim::launch(s);
  ASSERT_TRUE(st.ok()) << st.error().message();
}

// The f16 casts are the vector unit's Cast on the ascend side (the simulator's half conversion is bit
// arithmetic) and use the FPU (rintf) for half subnormals on the cpu side: every half value converts alike,
// and so does every f32 at, between and just beside two neighbouring halves (the round-to-nearest-even ties,
// subnormal ones included, and the overflow edge at 65520). A NaN becomes a NaN of its sign on both sides;
// which payload bits a device keeps is not known here (Cmp::HalfNaN), so the payload is not compared.
TEST(AscendKernels, HalfCastsAgreeWithTheCpuBuiltinOnEveryHalfAndTie) {
  const sk_ctx one{0, 1, nullptr};
  std::vector<uint16_t> halves(65536);
  for (uint32_t h = 0; h < 65536; ++h) halves[h] = static_cast<uint16_t>(h);
  std::vector<float> asc(1000), cpu(1000), all(65536);
  for (size_t at = 0; at < halves.size(); at += 1000) {
    std::vector<uint16_t> in(1000, 0);
    std::copy(halves.begin() + at, halves.begin() + std::min(halves.size(), at + 1000), in.begin());
    launch2(fn(asc_cast_f16_f32), in.data(), asc.data());
    cpu_cast_f16_f32(&one, in.data(), cpu.data(), 0);
    ASSERT_EQ(0, std::memcmp(asc.data(), cpu.data(), 4000)) << "halves from " << at;
    std::copy(cpu.begin(), cpu.begin() + std::min<size_t>(1000, 65536 - at), all.begin() + at);
  }
  std::vector<float> floats;
  for (uint32_t h = 0; h < 0x7c00; ++h) {  // finite positive halves and their upper neighbour
    const float lo = all[h], hi = h + 1 < 0x7c00 ? all[h + 1] : 65536.0f;
    const float mid = (lo + hi) / 2;  // exact: both have 11 significant bits
    for (float f : {lo, mid, std::nextafter(mid, 0.0f), std::nextafter(mid, hi)}) {
      floats.push_back(f);
      floats.push_back(-f);
    }
  }
  for (float f : {std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                  std::numeric_limits<float>::denorm_min(), 1e-30f, 1e30f})
    floats.push_back(f);
  const size_t firstNaN = floats.size();
  for (uint32_t bits : {0x7fc00000u, 0xffc00000u, 0x7f800001u, 0xff800001u, 0x7fffffffu, 0xffffffffu, 0x7fa5a5a5u,
                        0xffc12345u}) {  // quiet and signalling, both signs, payloads low and high
    float f;
    std::memcpy(&f, &bits, 4);
    floats.push_back(f);
  }
  std::vector<uint16_t> ha(1000), hc(1000);
  for (size_t at = 0; at < floats.size(); at += 1000) {
    std::vector<float> in(1000, 0.0f);
    std::copy(floats.begin() + at, floats.begin() + std::min(floats.size(), at + 1000), in.begin());
    launch2(fn(asc_cast_f32_f16), in.data(), ha.data());
    cpu_cast_f32_f16(&one, in.data(), hc.data(), 0);
    for (size_t i = 0; i < 1000 && at + i < floats.size(); ++i) {
      if (at + i < firstNaN) {
        ASSERT_EQ(ha[i], hc[i]) << "f32 " << in[i] << " (element " << at + i << ")";
        continue;
      }
      uint32_t bits;
      std::memcpy(&bits, &in[i], 4);
      const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
      EXPECT_EQ(hc[i], static_cast<uint16_t>(sign | 0x7e00u)) << std::hex << bits << ": the cpu builtin's one quiet NaN";
      EXPECT_EQ(static_cast<uint16_t>(ha[i] & 0xfe00u), static_cast<uint16_t>(sign | 0x7e00u)) << std::hex << bits << ": a quiet NaN of the input's sign";
    }
  }
  // Spot values: ties to even in the normal and subnormal range, overflow.
  const std::pair<float, uint16_t> spots[] = {{1.0f + 0x1p-11f, 0x3c00}, {1.0f + 3 * 0x1p-11f, 0x3c02},
                                              {0x1p-25f, 0x0000},        {3 * 0x1p-25f, 0x0002},
                                              {65519.0f, 0x7bff},        {65520.0f, 0x7c00}};
  std::vector<float> in(1000, 0.0f);
  for (size_t i = 0; i < std::size(spots); ++i) in[i] = spots[i].first;
  launch2(fn(asc_cast_f32_f16), in.data(), ha.data());
  for (size_t i = 0; i < std::size(spots); ++i) EXPECT_EQ(ha[i], spots[i].second) << spots[i].first;
}

TEST(AscendKernels, ShapeErrorsFailTheLaunch) {
  std::vector<float> x(60), y(60);
  sk::ascend_sim::LaunchSpec s;
  s.type = TaskType::AivOnly;
  s.blockDim = 2;
  s.entry = fn(asc_rope_odd);
  s.enter = &sk_ascend_sim_enter;
  s.args = {x.data(), y.data()};
  sk::Status st = sk::ascend_sim::launch(s);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message().find("sk_rope_f32: dim must be even on AIV 0"), std::string::npos)
      << st.error().message();

  // An expert index out of range (slot 1, block 1's outputs): the launch fails before the block writes.
  std::vector<uint16_t> w(4 * 8 * 16);
  std::vector<float> xs(16), out(16, 7.0f);
  std::vector<int32_t> bad{0, 4};
  s.entry = fn(asc_moe_expert);
  s.args = {w.data(), xs.data(), bad.data(), out.data()};
  st = sk::ascend_sim::launch(s);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message().find("expert index out of range"), std::string::npos) << st.error().message();
  for (size_t i = 8; i < 16; ++i) ASSERT_EQ(out[i], 7.0f) << i;

  // pos outside [0, cap) (compiled with pos = cap): the launch fails and nothing is written.
  std::vector<float> kv(37, 1.0f), cache(37 * 5, 2.0f), cache2(37 * 5, 3.0f);
  s.entry = fn(asc_kv_append_bad);
  s.args = {kv.data(), kv.data(), cache.data(), cache2.data()};
  st = sk::ascend_sim::launch(s);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message().find("kv_append_f32: pos out of range [0, cap) on AIV 0"), std::string::npos)
      << st.error().message();
  for (float f : cache) ASSERT_EQ(f, 2.0f);
  for (float f : cache2) ASSERT_EQ(f, 3.0f);
  std::vector<float> q(64, 1.0f), kc(9 * 32, 1.0f), vc(9 * 32, 1.0f), o(64, 4.0f);
  s.entry = fn(asc_attn_decode_bad);
  s.args = {q.data(), kc.data(), vc.data(), o.data()};
  st = sk::ascend_sim::launch(s);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message().find("attn_decode_f32: pos out of range [0, cap) on AIV 0"), std::string::npos)
      << st.error().message();
  for (float f : o) ASSERT_EQ(f, 4.0f);

  // A row past what the vector builtin keeps in UB (rms_norm: 8192 columns) fails the launch, writing nothing.
  std::vector<float> rx(2 * 8193, 1.0f), rw(8193, 1.0f), ry(2 * 8193, 5.0f);
  s.entry = fn(asc_rms_norm_too_wide);
  s.args = {rx.data(), rw.data(), ry.data()};
  st = sk::ascend_sim::launch(s);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message().find("sk_rms_norm_f32: cols past 8192"), std::string::npos) << st.error().message();
  for (float f : ry) ASSERT_EQ(f, 5.0f);
  // moe_gate_topk keeps a row of logits in UB: 4097 experts fail the launch, writing nothing.
  std::vector<float> logits(4097, 1.0f), weights(1, 5.0f);
  std::vector<int32_t> top(1, -7);
  s.entry = fn(asc_moe_gate_too_wide);
  s.args = {logits.data(), top.data(), weights.data()};
  st = sk::ascend_sim::launch(s);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message().find("sk_moe_gate_topk_f32: experts past 4096"), std::string::npos)
      << st.error().message();
  EXPECT_EQ(top[0], -7);
  EXPECT_EQ(weights[0], 5.0f);
}

// Each ascend builtin declares the same parameters as the cpu builtin of the
// same name (one op list serves both targets) and a core type the simulator
// can launch; only the source, the core type and early start may differ.
TEST(AscendKernels, DeclarationsMirrorTheCpuBuiltins) {
  const std::string dir = SK_ASCEND_KERNELS_DIR;
  const std::string cpuDir = std::string(SK_SOURCE_ROOT) + "/templates/kernels";
  const char* names[] = {"add_f32",      "copy_f32",           "swiglu_f32",     "rms_norm_f32",
                         "add_rms_norm_f32", "softmax_f32",    "rope_f32",       "attn_scores_f32",
                         "attn_weighted_sum_f32", "gemv_f32",  "gemv_bf16w",     "moe_expert_gemv_f32",
                         "moe_expert_gemv_bf16w", "moe_combine_f32", "moe_gate_topk_f32",
                         "mul_f32",      "scale_f32",          "concat_f32",     "transpose_f32",
                         "reduce_mean_f32", "cast_f32_f16",    "cast_f16_f32",   "cast_f32_bf16",
                         "cast_bf16_f32", "matmul_f32",        "matmul_bf16w",   "kv_append_f32",
                         "attn_decode_f32", "increment_i64"};
  auto load = [](const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return nlohmann::json::parse(ss.str(), nullptr, false);
  };
  for (const char* n : names) {
    SCOPED_TRACE(n);
    nlohmann::json a = load(dir + "/" + n + ".json");
    nlohmann::json c = load(std::string(SK_SOURCE_ROOT) + "/kernels/cpu/" + n + ".json");
    if (c.is_discarded()) c = load(cpuDir + "/" + n + ".json");
    ASSERT_FALSE(a.is_discarded());
    ASSERT_FALSE(c.is_discarded());
    EXPECT_EQ(a["params"], c["params"]);
    EXPECT_EQ(a["entry"], c["entry"]);
    EXPECT_EQ(a["macros"], c["macros"]);
    EXPECT_TRUE(a["core_type"] == "vector" || a["core_type"] == "cube");
    std::ifstream src(dir + "/" + a["source"].get<std::string>());
    EXPECT_TRUE(src.good());
  }
}

}  // namespace ascend_kernels_test
