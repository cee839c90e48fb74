// Static-shape builds (extra.cmake: -DSK_<PARAM>=<value>, entry renamed
// *_static) must honour the macros and ignore the run-time scalars: they are
// called here with bogus shapes (0, or a wrong alpha) and compared with the
// run-time-shape kernel called with the right ones.
#include "KernelTestUtil.h"

using namespace sktest;

namespace {

template <class F>
void both(uint32_t bd, F&& f) {
  ASSERT_TRUE(runBlocks(executor(3), bd, [&](const sk_ctx* c) { f(c); }).ok());
}

TEST(StaticShape, Elementwise) {
  const int64_t n = 1000;
  auto x = randomFloats(n, 41), y = randomFloats(n, 42);
  for (uint32_t bd : {1u, 7u, 40u}) {
    std::vector<float> a(n, NAN), b(n, NAN);
    both(bd, [&](const sk_ctx* c) { sk_add_f32(c, x.data(), y.data(), a.data(), n); sk_add_f32_static(c, x.data(), y.data(), b.data(), 0); });
    EXPECT_TRUE(near(b, a, 0, 0)) << "add";
    both(bd, [&](const sk_ctx* c) { sk_mul_f32(c, x.data(), y.data(), a.data(), n); sk_mul_f32_static(c, x.data(), y.data(), b.data(), 0); });
    EXPECT_TRUE(near(b, a, 0, 0)) << "mul";
    both(bd, [&](const sk_ctx* c) { sk_swiglu_f32(c, x.data(), y.data(), a.data(), n); sk_swiglu_f32_static(c, x.data(), y.data(), b.data(), 0); });
    EXPECT_TRUE(near(b, a, 0, 0)) << "swiglu";
    both(bd, [&](const sk_ctx* c) { sk_scale_f32(c, x.data(), a.data(), 0.5f, n); sk_scale_f32_static(c, x.data(), b.data(), 9.0f, 0); });
    EXPECT_TRUE(near(b, a, 0, 0)) << "scale";
    both(bd, [&](const sk_ctx* c) { sk_copy_f32(c, x.data(), a.data(), n); sk_copy_f32_static(c, x.data(), b.data(), 0); });
    EXPECT_TRUE(near(b, a, 0, 0)) << "copy";
    std::vector<uint16_t> ha(n, 1), hb(n, 2);
    both(bd, [&](const sk_ctx* c) { sk_cast_f32_bf16(c, x.data(), ha.data(), n); sk_cast_f32_bf16_static(c, x.data(), hb.data(), 0); });
    EXPECT_EQ(ha, hb) << "cast f32->bf16";
    both(bd, [&](const sk_ctx* c) { sk_cast_f16_f32(c, ha.data(), a.data(), n); sk_cast_f16_f32_static(c, ha.data(), b.data(), 0); });
    EXPECT_TRUE(near(b, a, 0, 0)) << "cast f16->f32";
  }
}

TEST(StaticShape, RowKernels) {
  for (uint32_t bd : {1u, 2u, 40u}) {
    {
      auto x = randomFloats(3 * 64, 43), r = randomFloats(3 * 64, 44), w = randomFloats(64, 45);
      std::vector<float> a(192, NAN), b(192, NAN), sa(192, NAN), sb(192, NAN);
      both(bd, [&](const sk_ctx* c) { sk_rms_norm_f32(c, x.data(), w.data(), a.data(), 3, 64, 1e-5f); sk_rms_norm_f32_static(c, x.data(), w.data(), b.data(), 0, 0, 1.0f); });
      EXPECT_TRUE(near(b, a, 0, 0)) << "rms_norm";
      both(bd, [&](const sk_ctx* c) {
        sk_add_rms_norm_f32(c, x.data(), r.data(), w.data(), sa.data(), a.data(), 3, 64, 1e-5f);
        sk_add_rms_norm_f32_static(c, x.data(), r.data(), w.data(), sb.data(), b.data(), 0, 0, 1.0f);
      });
      EXPECT_TRUE(near(b, a, 0, 0)) << "add_rms_norm";
      EXPECT_TRUE(near(sb, sa, 0, 0)) << "add_rms_norm sum";
    }
    {
      auto x = randomFloats(5 * 33, 46);
      std::vector<float> a(165, NAN), b(165, NAN);
      both(bd, [&](const sk_ctx* c) { sk_softmax_f32(c, x.data(), a.data(), 5, 33); sk_softmax_f32_static(c, x.data(), b.data(), 0, 0); });
      EXPECT_TRUE(near(b, a, 0, 0)) << "softmax";
    }
    {
      auto x = randomFloats(7 * 19, 47);
      std::vector<float> a(7, NAN), b(7, NAN);
      both(bd, [&](const sk_ctx* c) { sk_reduce_mean_f32(c, x.data(), a.data(), 7, 19); sk_reduce_mean_f32_static(c, x.data(), b.data(), 0, 0); });
      EXPECT_TRUE(near(b, a, 0, 0)) << "reduce_mean";
    }
    {
      auto x = randomFloats(64, 48);
      std::vector<float> a(64, NAN), b(64, NAN);
      both(bd, [&](const sk_ctx* c) { sk_rope_f32(c, x.data(), a.data(), 4, 16, 7, 10000.0f); sk_rope_f32_static(c, x.data(), b.data(), 0, 0, 0, 1.0f); });
      EXPECT_TRUE(near(b, a, 0, 0)) << "rope";
    }
  }
}

TEST(StaticShape, LinearAndMoe) {
  for (uint32_t bd : {1u, 3u, 40u}) {
    {
      auto w = randomFloats(37 * 64, 51), x = randomFloats(64, 52);
      auto wb = toBf16(w);
      std::vector<float> a(37, NAN), b(37, NAN);
      both(bd, [&](const sk_ctx* c) { sk_gemv_f32(c, w.data(), x.data(), a.data(), 37, 64); sk_gemv_f32_static(c, w.data(), x.data(), b.data(), 0, 0); });
      EXPECT_TRUE(near(b, a, 1e-6, 1e-6)) << "gemv";
      both(bd, [&](const sk_ctx* c) { sk_gemv_bf16w(c, wb.data(), x.data(), a.data(), 37, 64); sk_gemv_bf16w_static(c, wb.data(), x.data(), b.data(), 0, 0); });
      EXPECT_TRUE(near(b, a, 1e-6, 1e-6)) << "gemv bf16w";
    }
    {
      auto A = randomFloats(3 * 16, 53), B = randomFloats(16 * 24, 54);
      auto Bb = toBf16(B);
      std::vector<float> a(72, NAN), b(72, NAN);
      both(bd, [&](const sk_ctx* c) { sk_matmul_f32(c, A.data(), B.data(), a.data(), 3, 16, 24); sk_matmul_f32_static(c, A.data(), B.data(), b.data(), 0, 0, 0); });
      EXPECT_TRUE(near(b, a, 1e-6, 1e-6)) << "matmul";
      both(bd, [&](const sk_ctx* c) { sk_matmul_bf16w(c, A.data(), Bb.data(), a.data(), 3, 16, 24); sk_matmul_bf16w_static(c, A.data(), Bb.data(), b.data(), 0, 0, 0); });
      EXPECT_TRUE(near(b, a, 1e-6, 1e-6)) << "matmul bf16w";
    }
    {
      auto w = randomFloats(4 * 8 * 16, 55), x = randomFloats(16, 56);
      std::vector<int32_t> idx{3, 1};
      std::vector<float> a(16, NAN), b(16, NAN);
      both(bd, [&](const sk_ctx* c) {
        sk_moe_expert_gemv_f32(c, w.data(), x.data(), idx.data(), a.data(), 4, 2, 8, 16, 0);
        sk_moe_expert_gemv_f32_static(c, w.data(), x.data(), idx.data(), b.data(), 0, 0, 0, 0, 1);
      });
      EXPECT_TRUE(near(b, a, 1e-6, 1e-6)) << "moe_expert_gemv";
      auto gw = randomFloats(2, 57, 0, 1);
      std::vector<float> ca(8, NAN), cb(8, NAN);
      both(bd, [&](const sk_ctx* c) { sk_moe_combine_f32(c, gw.data(), a.data(), ca.data(), 2, 8); sk_moe_combine_f32_static(c, gw.data(), a.data(), cb.data(), 0, 0); });
      EXPECT_TRUE(near(cb, ca, 0, 0)) << "moe_combine";
      auto logits = randomFloats(16, 58);
      std::vector<int32_t> ia(4, -1), ib(4, -2);
      std::vector<float> wa(4, NAN), wb(4, NAN);
      both(bd, [&](const sk_ctx* c) {
        sk_moe_gate_topk_f32(c, logits.data(), ia.data(), wa.data(), 2, 8, 2, 0, 1);
        sk_moe_gate_topk_f32_static(c, logits.data(), ib.data(), wb.data(), 0, 0, 0, 1, 0);
      });
      EXPECT_EQ(ia, ib) << "moe_gate_topk idx";
      EXPECT_TRUE(near(wb, wa, 0, 0)) << "moe_gate_topk weights";
    }
  }
}

TEST(StaticShape, AttentionAndLayout) {
  for (uint32_t bd : {1u, 5u, 40u}) {
    auto q = randomFloats(64, 61), k = randomFloats(9 * 2 * 16, 62), v = randomFloats(9 * 2 * 16, 63);
    std::vector<float> a(36, NAN), b(36, NAN);
    both(bd, [&](const sk_ctx* c) { sk_attn_scores_f32(c, q.data(), k.data(), a.data(), 4, 2, 9, 16, 0.25f); sk_attn_scores_f32_static(c, q.data(), k.data(), b.data(), 0, 0, 0, 0, 1.0f); });
    EXPECT_TRUE(near(b, a, 0, 0)) << "attn_scores";
    std::vector<float> oa(64, NAN), ob(64, NAN);
    both(bd, [&](const sk_ctx* c) { sk_attn_weighted_sum_f32(c, a.data(), v.data(), oa.data(), 4, 2, 9, 16); sk_attn_weighted_sum_f32_static(c, a.data(), v.data(), ob.data(), 0, 0, 0, 0); });
    EXPECT_TRUE(near(ob, oa, 0, 0)) << "attn_weighted_sum";
    auto x = randomFloats(35, 64);
    std::vector<float> ta(35, NAN), tb(35, NAN);
    both(bd, [&](const sk_ctx* c) { sk_transpose_f32(c, x.data(), ta.data(), 5, 7); sk_transpose_f32_static(c, x.data(), tb.data(), 0, 0); });
    EXPECT_TRUE(near(tb, ta, 0, 0)) << "transpose";
    auto ca = randomFloats(12, 65), cb = randomFloats(15, 66);
    std::vector<float> ya(27, NAN), yb(27, NAN);
    both(bd, [&](const sk_ctx* c) { sk_concat_f32(c, ca.data(), cb.data(), ya.data(), 3, 4, 5); sk_concat_f32_static(c, ca.data(), cb.data(), yb.data(), 0, 0, 0); });
    EXPECT_TRUE(near(yb, ya, 0, 0)) << "concat";
  }
}

TEST(StaticShape, DecodeLoop) {
  for (uint32_t bd : {1u, 5u, 40u}) {
    auto k = randomFloats(37, 67), v = randomFloats(37, 68);
    const auto k0 = randomFloats(37 * 5, 69), v0 = randomFloats(37 * 5, 70);
    auto ka = k0, va = v0, kb = k0, vb = v0;
    both(bd, [&](const sk_ctx* c) {
      sk_kv_append_f32(c, k.data(), v.data(), ka.data(), va.data(), 37, 5, 3);
      sk_kv_append_f32_static(c, k.data(), v.data(), kb.data(), vb.data(), 0, 0, -1);
    });
    EXPECT_TRUE(near(kb, ka, 0, 0)) << "kv_append k";
    EXPECT_TRUE(near(vb, va, 0, 0)) << "kv_append v";
    auto q = randomFloats(64, 75), kc = randomFloats(9 * 2 * 16, 76), vc = randomFloats(9 * 2 * 16, 77);
    for (size_t i = 7 * 2 * 16; i < kc.size(); ++i) kc[i] = vc[i] = NAN;  // rows above pos 6
    std::vector<float> oa(64, NAN), ob(64, NAN);
    both(bd, [&](const sk_ctx* c) {
      sk_attn_decode_f32(c, q.data(), kc.data(), vc.data(), oa.data(), 4, 2, 16, 9, 6, 0.25f);
      sk_attn_decode_f32_static(c, q.data(), kc.data(), vc.data(), ob.data(), 0, 0, 0, 0, -1, 1.0f);
    });
    EXPECT_TRUE(near(ob, oa, 0, 0)) << "attn_decode";
    std::vector<int64_t> xa(1000), xb(1000);
    for (size_t i = 0; i < xa.size(); ++i) xa[i] = xb[i] = int64_t(i) - 500;
    both(bd, [&](const sk_ctx* c) { sk_increment_i64(c, xa.data(), 1000, 3); sk_increment_i64_static(c, xb.data(), 0, 0); });
    EXPECT_EQ(xa, xb) << "increment";
  }
}

}  // namespace
