// Prototypes of the builtin kernels compiled into this test binary
// (tests/kernels/extra.cmake), with the signatures their JSON declares.
#pragma once

#include <cstdint>

#include "superkernel/cpu/kernel.h"

#define SK_DECLARE_BOTH(ret_name, ...)      \
  void ret_name(const sk_ctx*, __VA_ARGS__); \
  void ret_name##_static(const sk_ctx*, __VA_ARGS__);

extern "C" {
SK_DECLARE_BOTH(sk_add_f32, const float*, const float*, float*, int64_t)
SK_DECLARE_BOTH(sk_mul_f32, const float*, const float*, float*, int64_t)
SK_DECLARE_BOTH(sk_swiglu_f32, const float*, const float*, float*, int64_t)
SK_DECLARE_BOTH(sk_scale_f32, const float*, float*, float, int64_t)
SK_DECLARE_BOTH(sk_copy_f32, const float*, float*, int64_t)
SK_DECLARE_BOTH(sk_cast_f32_bf16, const float*, uint16_t*, int64_t)
void sk_cast_bf16_f32(const sk_ctx*, const uint16_t*, float*, int64_t);
void sk_cast_f32_f16(const sk_ctx*, const float*, uint16_t*, int64_t);
SK_DECLARE_BOTH(sk_cast_f16_f32, const uint16_t*, float*, int64_t)
SK_DECLARE_BOTH(sk_rms_norm_f32, const float*, const float*, float*, int64_t, int64_t, float)
SK_DECLARE_BOTH(sk_add_rms_norm_f32, const float*, const float*, const float*, float*, float*, int64_t, int64_t,
                float)
SK_DECLARE_BOTH(sk_softmax_f32, const float*, float*, int64_t, int64_t)
SK_DECLARE_BOTH(sk_reduce_mean_f32, const float*, float*, int64_t, int64_t)
SK_DECLARE_BOTH(sk_rope_f32, const float*, float*, int64_t, int64_t, int64_t, float)
SK_DECLARE_BOTH(sk_gemv_f32, const float*, const float*, float*, int64_t, int64_t)
SK_DECLARE_BOTH(sk_gemv_bf16w, const uint16_t*, const float*, float*, int64_t, int64_t)
void sk_gemv_f16w(const sk_ctx*, const uint16_t*, const float*, float*, int64_t, int64_t);
void sk_gemv_q8_0(const sk_ctx*, const uint8_t*, const float*, float*, int64_t, int64_t);
void sk_matmul_f16w(const sk_ctx*, const float*, const uint16_t*, float*, int64_t, int64_t, int64_t);
void sk_matmul_q8_0(const sk_ctx*, const float*, const uint8_t*, float*, int64_t, int64_t, int64_t);
void sk_gemv_q4_0(const sk_ctx*, const uint8_t*, const float*, float*, int64_t, int64_t);
void sk_matmul_q4_0(const sk_ctx*, const float*, const uint8_t*, float*, int64_t, int64_t, int64_t);
SK_DECLARE_BOTH(sk_matmul_f32, const float*, const float*, float*, int64_t, int64_t, int64_t)
SK_DECLARE_BOTH(sk_matmul_bf16w, const float*, const uint16_t*, float*, int64_t, int64_t, int64_t)
SK_DECLARE_BOTH(sk_moe_expert_gemv_f32, const float*, const float*, const int32_t*, float*, int64_t, int64_t, int64_t,
                int64_t, int32_t)
void sk_moe_expert_gemv_bf16w(const sk_ctx*, const uint16_t*, const float*, const int32_t*, float*, int64_t, int64_t,
                              int64_t, int64_t, int32_t);
SK_DECLARE_BOTH(sk_moe_gate_topk_f32, const float*, int32_t*, float*, int64_t, int64_t, int64_t, int32_t, int32_t)
SK_DECLARE_BOTH(sk_moe_combine_f32, const float*, const float*, float*, int64_t, int64_t)
SK_DECLARE_BOTH(sk_attn_scores_f32, const float*, const float*, float*, int64_t, int64_t, int64_t, int64_t, float)
SK_DECLARE_BOTH(sk_attn_weighted_sum_f32, const float*, const float*, float*, int64_t, int64_t, int64_t, int64_t)
SK_DECLARE_BOTH(sk_transpose_f32, const float*, float*, int64_t, int64_t)
SK_DECLARE_BOTH(sk_concat_f32, const float*, const float*, float*, int64_t, int64_t, int64_t)
SK_DECLARE_BOTH(sk_kv_append_f32, const float*, const float*, float*, float*, int64_t, int64_t, int64_t)
SK_DECLARE_BOTH(sk_attn_decode_f32, const float*, const float*, const float*, float*, int64_t, int64_t, int64_t, int64_t,
                int64_t, float)
SK_DECLARE_BOTH(sk_increment_i64, int64_t*, int64_t, int64_t)
}
