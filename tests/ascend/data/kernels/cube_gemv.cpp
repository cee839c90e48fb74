// A cube-core projection with its own early start, for the emitter goldens (tests/ascend/AscendTestSteps.h:
// chain, cubeOnly, feedMix): y[r] = sum_c W[r, c] * x[c], W [rows, cols] f32 (fx_cube_gemv_f32) or bf16
// (-DSK_WEIGHT_BF16, fx_cube_gemv_bf16w), x [cols], y [rows]. The gemv builtin was a cube kernel like this
// until it moved to the vector cores; the goldens keep a cube sub-kernel that declares early start (no builtin does:
// matmul, the one cube builtin, declares none), so the cube pool's own WaitPreTaskEnd / SetNextTaskStart
// stay covered. Scalar code over GM: the simulator models no cube unit (docs/ASCEND.md).
// Split: rows by block (the cpu builtins' block range). Compile-time: SK_ROWS, SK_COLS.
#include "kernel_operator.h"

#ifdef SK_WEIGHT_BF16
#define FX_ENTRY fx_cube_gemv_bf16w
typedef uint16_t fx_weight_t;
static inline float fxW(fx_weight_t v) {  // bf16: the top half of an f32
  const uint32_t u = static_cast<uint32_t>(v) << 16;
  float f;
  __builtin_memcpy(&f, &u, 4);
  return f;
}
#else
#define FX_ENTRY fx_cube_gemv_f32
typedef float fx_weight_t;
static inline float fxW(fx_weight_t v) { return v; }
#endif

extern "C" __global__ __aicore__ void FX_ENTRY(GM_ADDR w, GM_ADDR x, GM_ADDR y) {
  const int64_t blocks = AscendC::GetBlockNum(), b = AscendC::GetBlockIdx(), per = (SK_ROWS) / blocks;
  const int64_t begin = per * b, end = b + 1 == blocks ? (SK_ROWS) : begin + per;
  AscendC::WaitPreTaskEnd();  // the row range above overlaps the previous sub-kernel
  const __gm__ fx_weight_t* ws = reinterpret_cast<__gm__ fx_weight_t*>(w);
  const __gm__ float* xs = reinterpret_cast<__gm__ float*>(x);
  for (int64_t r = begin; r < end; ++r) {
    float s = 0.0f;
    for (int64_t c = 0; c < (SK_COLS); ++c) s += fxW(ws[r * (SK_COLS) + c]) * xs[c];
    reinterpret_cast<__gm__ float*>(y)[r] = s;
  }
  AscendC::SetNextTaskStart();
}
