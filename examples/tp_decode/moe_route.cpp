// tp_decode --moe's own kernels (declared in tp_decode.cpp, moeKernel): the
// dispatch that packs tokens by the router's top-1 expert into fixed-size
// per-expert blocks, and the combine that brings the experts' rows back to
// token order. Fixed sizes because the all-to-all between them moves a
// static number of rows (GShard/Switch-style capacity).
#include <superkernel/cpu/kernel.h>

// x [tokens, d] f32, idx [tokens] i32 (expert of each token, from
// moe_gate_topk with topk 1), send [experts * capacity, d] f32,
// slot [tokens] i32.
// Block e of send holds the first `capacity` tokens routed to expert e, in
// token order; slot[t] is token t's row in its expert's block, or -1 when
// the block was full (a dropped token). Rows past an expert's count are
// zeroed, so the all-to-all never moves an earlier step's rows and the
// expert's matmul on them is deterministic.
// Split: block b takes the experts sk_block_range(experts) and scans every
// token for them, so each expert's order is token order whatever the block
// count; every buffer is "all". An index outside [0, experts) (not one
// moe_gate_topk writes) ends the launch with an error rather than writing
// outside send.
SK_KERNEL void moe_dispatch(const sk_ctx* ctx, const float* x, const int32_t* idx, float* send, int32_t* slot,
                            int64_t tokens, int64_t d, int64_t experts, int64_t capacity) {
  if (ctx->block_idx == 0)
    for (int64_t t = 0; t < tokens; ++t)
      if (idx[t] < 0 || idx[t] >= experts) {
        sk_report_error(ctx, "moe_dispatch: an expert index outside [0, experts)");
        return;
      }
  int64_t eb, ee;
  sk_block_range(ctx, experts, &eb, &ee);
  for (int64_t e = eb; e < ee; ++e) {
    float* block = send + e * capacity * d;
    int64_t n = 0;
    for (int64_t t = 0; t < tokens; ++t) {
      if (idx[t] != (int32_t)e) continue;
      if (n == capacity) {
        slot[t] = -1;
        continue;
      }
      for (int64_t i = 0; i < d; ++i) block[n * d + i] = x[t * d + i];
      slot[t] = (int32_t)n++;
    }
    for (int64_t i = n * d; i < capacity * d; ++i) block[i] = 0.0f;
  }
}

// out[t] = x[t] + gate[t] * back[idx[t] * capacity + slot[t]], or x[t] for a
// dropped token (slot -1: it keeps only the residual). back [experts *
// capacity, d] is the experts' output in send's layout.
// Split: block b takes the tokens sk_block_range(tokens); every buffer "all".
SK_KERNEL void moe_combine(const sk_ctx* ctx, const float* x, const float* back, const int32_t* idx,
                           const int32_t* slot, const float* gate, float* out, int64_t tokens, int64_t d,
                           int64_t capacity) {
  int64_t tb, te;
  sk_block_range(ctx, tokens, &tb, &te);
  for (int64_t t = tb; t < te; ++t) {
    const float* xr = x + t * d;
    float* o = out + t * d;
    if (slot[t] < 0) {
      for (int64_t i = 0; i < d; ++i) o[i] = xr[i];
      continue;
    }
    const float* y = back + ((int64_t)idx[t] * capacity + slot[t]) * d;
    const float g = gate[t];
    for (int64_t i = 0; i < d; ++i) o[i] = xr[i] + g * y[i];
  }
}
