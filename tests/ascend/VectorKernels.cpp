// Simulated Ascend C kernels for the vector programming model's tests (VectorApiTest.cpp): each API used
// correctly, and each misuse the simulator reports. Compiled against the simulator's kernel_operator.h
// like any simulated kernel. Kernel classes live in an anonymous namespace: the simulator's types are
// hidden (one copy per loaded object), and g++ warns when a visible class holds a hidden one.
#include "kernel_operator.h"

namespace {

using AscendC::DataCopy;
using AscendC::GlobalTensor;
using AscendC::HardEvent;
using AscendC::LocalTensor;
using AscendC::TBuf;
using AscendC::TPipe;
using AscendC::TPosition;
using AscendC::TQue;

constexpr uint32_t kVecN = 64;  // elements per operand in the elementwise kernels

__aicore__ inline int64_t VecParam(GM_ADDR p, int i) { return reinterpret_cast<__gm__ int64_t*>(p)[i]; }

// Loads `n` elements of `src` into a VECIN buffer and returns it dequeued (MTE2 -> V through the queue).
template <class T, class Q>
__aicore__ inline LocalTensor<T> VecLoad(Q& q, const GlobalTensor<T>& src, uint32_t n) {
  LocalTensor<T> t = q.template AllocTensor<T>();
  DataCopy(t, src, n);
  q.EnQue(t);
  return q.template DeQue<T>();
}
// Writes a VECOUT tensor to `dst` (V -> MTE3 through the queue).
template <class T, class Q>
__aicore__ inline void VecStore(Q& q, LocalTensor<T>& t, const GlobalTensor<T>& dst, uint32_t n) {
  q.EnQue(t);
  LocalTensor<T> o = q.template DeQue<T>();
  DataCopy(dst, o, n);
  q.FreeTensor(o);
}

// out[k * kVecN ..] = op_k(x, y) for the binary ops, then the scalar and unary ops of x:
// Add Sub Mul Div Max Min | Adds(0.5) Muls(-2) Maxs(0.25) Mins(0.25) | Exp Ln(|x|) Abs Sqrt(|x|) Rsqrt(|x|)
// Reciprocal Relu | Duplicate(3) | UB -> UB DataCopy.
template <class T>
__aicore__ inline void VecElementwise(GM_ADDR x, GM_ADDR y, GM_ADDR out) {
  TPipe pipe;
  TQue<TPosition::VECIN, 1> inX, inY;
  TQue<TPosition::VECOUT, 2> outQ;
  TBuf<TPosition::VECCALC> absBuf;
  pipe.InitBuffer(inX, 1, kVecN * sizeof(T));
  pipe.InitBuffer(inY, 1, kVecN * sizeof(T));
  pipe.InitBuffer(outQ, 2, kVecN * sizeof(T));
  pipe.InitBuffer(absBuf, kVecN * sizeof(T));
  GlobalTensor<T> xg, yg, og;
  xg.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(x), kVecN);
  yg.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(y), kVecN);
  og.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(out), 19 * kVecN);
  LocalTensor<T> a = VecLoad(inX, xg, kVecN);
  LocalTensor<T> b = VecLoad(inY, yg, kVecN);
  LocalTensor<T> abs = absBuf.Get<T>();
  AscendC::Abs(abs, a, kVecN);
  for (int k = 0; k < 19; ++k) {
    LocalTensor<T> d = outQ.AllocTensor<T>();
    switch (k) {
      case 0: AscendC::Add(d, a, b, kVecN); break;
      case 1: AscendC::Sub(d, a, b, kVecN); break;
      case 2: AscendC::Mul(d, a, b, kVecN); break;
      case 3: AscendC::Div(d, a, b, kVecN); break;
      case 4: AscendC::Max(d, a, b, kVecN); break;
      case 5: AscendC::Min(d, a, b, kVecN); break;
      case 6: AscendC::Adds(d, a, 0.5f, kVecN); break;
      case 7: AscendC::Muls(d, a, -2.0f, kVecN); break;
      case 8: AscendC::Maxs(d, a, 0.25f, kVecN); break;
      case 9: AscendC::Mins(d, a, 0.25f, kVecN); break;
      case 10: AscendC::Exp(d, a, kVecN); break;
      case 11: AscendC::Ln(d, abs, kVecN); break;
      case 12: AscendC::Abs(d, a, kVecN); break;
      case 13: AscendC::Sqrt(d, abs, kVecN); break;
      case 14: AscendC::Rsqrt(d, abs, kVecN); break;
      case 15: AscendC::Reciprocal(d, a, kVecN); break;
      case 16: AscendC::Relu(d, a, kVecN); break;
      case 17: AscendC::Duplicate(d, 3.0f, kVecN); break;
      default: DataCopy(d, a, kVecN); break;
    }
    VecStore(outQ, d, og[k * kVecN], kVecN);
  }
  inX.FreeTensor(a);
  inY.FreeTensor(b);
}

}  // namespace

extern "C" __global__ __aicore__ void vapi_elementwise_f32(GM_ADDR x, GM_ADDR y, GM_ADDR out) {
  VecElementwise<float>(x, y, out);
}
extern "C" __global__ __aicore__ void vapi_elementwise_f16(GM_ADDR x, GM_ADDR y, GM_ADDR out) {
  VecElementwise<half>(x, y, out);
}

namespace {

// Cast: x (f32, kVecN) -> out: [f16 bits as f32 round trip | bf16 round trip | int32 RINT FLOOR CEIL ROUND TRUNC
// | back to f32 from the RINT ints], all as f32 / int32 words.
__aicore__ inline void VecCasts(GM_ADDR x, GM_ADDR out) {
  TPipe pipe;
  TQue<TPosition::VECIN, 1> in;
  TQue<TPosition::VECOUT, 1> outQ;
  TBuf<> h16, b16, i32;
  pipe.InitBuffer(in, 1, kVecN * 4);
  pipe.InitBuffer(outQ, 1, kVecN * 4);
  pipe.InitBuffer(h16, kVecN * 2);
  pipe.InitBuffer(b16, kVecN * 2);
  pipe.InitBuffer(i32, kVecN * 4);
  GlobalTensor<float> xg, og;
  xg.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(x), kVecN);
  og.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(out), 8 * kVecN);
  GlobalTensor<int32_t> oi;
  oi.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(out), 8 * kVecN);
  LocalTensor<float> a = VecLoad(in, xg, kVecN);
  LocalTensor<half> h = h16.Get<half>();
  LocalTensor<bfloat16_t> bf = b16.Get<bfloat16_t>();
  LocalTensor<int32_t> iv = i32.Get<int32_t>();
  using AscendC::RoundMode;
  {
    LocalTensor<float> d = outQ.AllocTensor<float>();
    AscendC::Cast(h, a, RoundMode::CAST_NONE, kVecN);
    AscendC::Cast(d, h, RoundMode::CAST_NONE, kVecN);
    VecStore(outQ, d, og[0], kVecN);
  }
  {
    LocalTensor<float> d = outQ.AllocTensor<float>();
    AscendC::Cast(bf, a, RoundMode::CAST_RINT, kVecN);
    AscendC::Cast(d, bf, RoundMode::CAST_NONE, kVecN);
    VecStore(outQ, d, og[kVecN], kVecN);
  }
  const RoundMode modes[] = {RoundMode::CAST_RINT, RoundMode::CAST_FLOOR, RoundMode::CAST_CEIL, RoundMode::CAST_ROUND,
                             RoundMode::CAST_TRUNC};
  for (int m = 0; m < 5; ++m) {
    LocalTensor<int32_t> d = outQ.AllocTensor<int32_t>();
    AscendC::Cast(d, a, modes[m], kVecN);
    VecStore(outQ, d, oi[(2 + m) * kVecN], kVecN);
  }
  {
    LocalTensor<float> d = outQ.AllocTensor<float>();
    AscendC::Cast(iv, a, RoundMode::CAST_RINT, kVecN);
    AscendC::Cast(d, iv, RoundMode::CAST_NONE, kVecN);
    VecStore(outQ, d, og[7 * kVecN], kVecN);
  }
  in.FreeTensor(a);
}

// Reductions over x (n = 200 f32): out[0] ReduceSum, out[1] ReduceMax, out[2] its index, out[3] ReduceMin,
// out[4] its index, out[8 + r] WholeReduceSum of the first 40 elements of each 64-element repeat (3 repeats),
// out[16] = ReduceSum read back through the scalar unit (V_S sync) and doubled.
__aicore__ inline void VecReduce(GM_ADDR x, GM_ADDR out) {
  constexpr uint32_t n = 200, padded = 256;
  TPipe pipe;
  TQue<TPosition::VECIN, 1> in;
  TQue<TPosition::VECOUT, 1> outQ;
  TBuf<> work;
  pipe.InitBuffer(in, 1, padded * 4);
  pipe.InitBuffer(outQ, 1, 32 * 4);
  pipe.InitBuffer(work, 64 * 4);
  GlobalTensor<float> xg, og;
  xg.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(x), padded);
  og.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(out), 32);
  LocalTensor<float> a = VecLoad(in, xg, padded);
  LocalTensor<float> w = work.Get<float>();
  LocalTensor<float> d = outQ.AllocTensor<float>();
  AscendC::Duplicate(d, 0.0f, 32);
  AscendC::ReduceSum(d, a, w, n);
  AscendC::ReduceMax(d[8], a, w, n, true);
  AscendC::ReduceMin(d[16], a, w, n, true);
  AscendC::WholeReduceSum(d[24], a, 40, 3, 1, 1, 8);
  // The scalar unit reads the sum after the vector unit wrote it: V_S.
  AscendC::SetFlag<HardEvent::V_S>(EVENT_ID0);
  AscendC::WaitFlag<HardEvent::V_S>(EVENT_ID0);
  const float sum = d.GetValue(0);
  const uint32_t maxIdx = d.ReinterpretCast<uint32_t>().GetValue(9), minIdx = d.ReinterpretCast<uint32_t>().GetValue(17);
  d.SetValue(1, d.GetValue(8));
  d.SetValue(3, d.GetValue(16));
  d.SetValue(2, static_cast<float>(maxIdx));
  d.SetValue(4, static_cast<float>(minIdx));
  d.SetValue(5, sum * 2.0f);
  // ... and the copy-out reads what the scalar unit wrote: S_MTE3 (the queue syncs V only).
  AscendC::SetFlag<HardEvent::S_MTE3>(EVENT_ID0);
  AscendC::WaitFlag<HardEvent::S_MTE3>(EVENT_ID0);
  VecStore(outQ, d, og, 32);
  in.FreeTensor(a);
}

// Strided copies: from x (16 blocks of 8 f32) take blocks 0, 2, 4, ... (DataCopyParams 8 x 1 block, srcStride
// 1) into UB, write them to out at blocks 0, 3, 6, ... (dstStride 2); then DataCopyPad 5 bursts of 12 bytes
// (3 floats) from x + 1 every 20 bytes, padded with -1 to the 32-byte block, written back unpadded to out + 200
// as 5 bursts 4 bytes apart; out[250], out[251] = two of the UB words (a datum and a pad value).
__aicore__ inline void VecCopies(GM_ADDR x, GM_ADDR out) {
  TPipe pipe;
  TQue<TPosition::VECIN, 1> in;
  pipe.InitBuffer(in, 1, 1024);
  GlobalTensor<float> xg, og;
  xg.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(x), 128);
  og.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(out), 256);
  LocalTensor<float> t = in.AllocTensor<float>();
  DataCopy(t, xg, AscendC::DataCopyParams(8, 1, 1, 0));
  in.EnQue(t);
  LocalTensor<float> u = in.DeQue<float>();
  // Copy-out of a VECIN tensor: MTE2 wrote it, MTE3 reads it.
  AscendC::SetFlag<HardEvent::MTE2_MTE3>(EVENT_ID1);
  AscendC::WaitFlag<HardEvent::MTE2_MTE3>(EVENT_ID1);
  DataCopy(og, u, AscendC::DataCopyParams(8, 1, 0, 2));
  in.FreeTensor(u);
  LocalTensor<float> p = in.AllocTensor<float>();
  // MTE2 overwrites what MTE3 read: MTE3_MTE2 (the queue's FreeTensor orders V, not MTE3).
  AscendC::SetFlag<HardEvent::MTE3_MTE2>(EVENT_ID2);
  AscendC::WaitFlag<HardEvent::MTE3_MTE2>(EVENT_ID2);
  AscendC::DataCopyPad(p, xg[1], AscendC::DataCopyExtParams(5, 12, 8, 0, 0),
                       AscendC::DataCopyPadExtParams<float>(true, 0, 5, -1.0f));
  in.EnQue(p);
  LocalTensor<float> q = in.DeQue<float>();
  AscendC::SetFlag<HardEvent::MTE2_MTE3>(EVENT_ID1);
  AscendC::WaitFlag<HardEvent::MTE2_MTE3>(EVENT_ID1);
  AscendC::DataCopyPad(og[200], q, AscendC::DataCopyExtParams(5, 12, 0, 4, 0));
  // The pad values, through the scalar unit (MTE2 wrote them): MTE2_S.
  AscendC::SetFlag<HardEvent::MTE2_S>(EVENT_ID0);
  AscendC::WaitFlag<HardEvent::MTE2_S>(EVENT_ID0);
  og.SetValue(250, q.GetValue(3));
  og.SetValue(251, q.GetValue(7));
  in.FreeTensor(q);
}

// Gather: x (64 f32) into UB; the scalar unit writes the byte offsets (k ^ 1) * 4 (each pair swapped);
// out[k] = x[k ^ 1] for k < 64 (base 0), out[64 + k] = x[8 + (k ^ 1)] for k < 56 (base 32 bytes).
__aicore__ inline void VecGather(GM_ADDR x, GM_ADDR out) {
  TPipe pipe;
  TQue<TPosition::VECIN, 1> in;
  TQue<TPosition::VECOUT, 1> outQ;
  TBuf<> offsets;
  pipe.InitBuffer(in, 1, 64 * 4);
  pipe.InitBuffer(outQ, 1, 128 * 4);
  pipe.InitBuffer(offsets, 64 * 4);
  GlobalTensor<float> xg, og;
  xg.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(x), 64);
  og.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(out), 128);
  LocalTensor<float> a = VecLoad(in, xg, 64);
  LocalTensor<uint32_t> o = offsets.Get<uint32_t>();
  for (uint32_t k = 0; k < 64; ++k) o.SetValue(k, (k ^ 1u) * 4u);
  // The vector unit reads what the scalar unit wrote: S_V.
  AscendC::SetFlag<HardEvent::S_V>(EVENT_ID0);
  AscendC::WaitFlag<HardEvent::S_V>(EVENT_ID0);
  LocalTensor<float> d = outQ.AllocTensor<float>();
  AscendC::Duplicate(d, -7.0f, 128);
  AscendC::Gather(d, a, o, 0u, 64u);
  AscendC::Gather(d[64], a, o, 32u, 56u);
  VecStore(outQ, d, og, 128);
  in.FreeTensor(a);
}

}  // namespace

extern "C" __global__ __aicore__ void vapi_gather(GM_ADDR x, GM_ADDR out) { VecGather(x, out); }
extern "C" __global__ __aicore__ void vapi_casts(GM_ADDR x, GM_ADDR out) { VecCasts(x, out); }
extern "C" __global__ __aicore__ void vapi_reduce(GM_ADDR x, GM_ADDR out) { VecReduce(x, out); }
extern "C" __global__ __aicore__ void vapi_copies(GM_ADDR x, GM_ADDR out) { VecCopies(x, out); }

namespace {

// One misuse per case (params[0]); each must fail the launch with its own message. Case 0 is the correct
// use the misuses break, so a test can show it passes.
__aicore__ inline void VecMisuse(int64_t which, GM_ADDR buf) {
  GlobalTensor<float> g;
  g.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(buf), 1024);
  TPipe pipe;
  TQue<TPosition::VECIN, 1> in;
  TQue<TPosition::VECOUT, 1> out;
  TBuf<> scratch;
  pipe.InitBuffer(in, 2, 256);
  pipe.InitBuffer(out, 1, 256);
  pipe.InitBuffer(scratch, 256);
  LocalTensor<float> s = scratch.Get<float>();
  switch (which) {
    case 0: {  // correct: copy in, add, copy out, with the queues' syncs
      LocalTensor<float> a = VecLoad(in, g, 64);
      LocalTensor<float> d = out.AllocTensor<float>();
      AscendC::Add(d, a, a, 64);
      VecStore(out, d, g[64], 64);
      in.FreeTensor(a);
      break;
    }
    case 1: {  // UB overflow
      TBuf<> big;
      pipe.InitBuffer(big, 192 * 1024);
      break;
    }
    case 2: {  // DeQue without EnQue
      LocalTensor<float> a = in.DeQue<float>();
      (void)a;
      break;
    }
    case 3: {  // FreeTensor twice
      LocalTensor<float> a = VecLoad(in, g, 64);
      in.FreeTensor(a);
      in.FreeTensor(a);
      break;
    }
    case 4: {  // EnQue past the depth (depth 1, two buffers)
      LocalTensor<float> a = in.AllocTensor<float>();
      LocalTensor<float> b = in.AllocTensor<float>();
      DataCopy(a, g, 64);
      DataCopy(b, g, 64);
      in.EnQue(a);
      in.EnQue(b);
      break;
    }
    case 5: {  // AllocTensor with every buffer in use
      LocalTensor<float> a = in.AllocTensor<float>();
      LocalTensor<float> b = in.AllocTensor<float>();
      LocalTensor<float> c = in.AllocTensor<float>();
      (void)a, (void)b, (void)c;
      break;
    }
    case 6: {  // a tensor used after its EnQue
      LocalTensor<float> a = in.AllocTensor<float>();
      DataCopy(a, g, 64);
      in.EnQue(a);
      AscendC::Adds(s, a, 1.0f, 64);
      break;
    }
    case 7: {  // a tensor used after its FreeTensor
      LocalTensor<float> a = VecLoad(in, g, 64);
      in.FreeTensor(a);
      AscendC::Adds(s, a, 1.0f, 64);
      break;
    }
    case 8: {  // a queue ending with a tensor queued
      LocalTensor<float> a = in.AllocTensor<float>();
      DataCopy(a, g, 64);
      in.EnQue(a);
      break;
    }
    case 9: {  // missing WaitFlag: the scalar unit reads what the vector unit wrote, no V_S
      AscendC::Duplicate(s, 2.0f, 64);
      g.SetValue(0, s.GetValue(0));
      break;
    }
    case 10: {  // missing sync MTE2 -> V on a TBuf (no queue to sync it)
      DataCopy(s, g, 64);
      AscendC::Muls(s, s, 2.0f, 64);
      break;
    }
    case 11: {  // the same with SetFlag / WaitFlag<MTE2_V>: correct, then copied out with V_MTE3
      DataCopy(s, g, 64);
      AscendC::SetFlag<HardEvent::MTE2_V>(EVENT_ID0);
      AscendC::WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);
      AscendC::Muls(s, s, 2.0f, 64);
      AscendC::SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
      AscendC::WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
      DataCopy(g[64], s, 64);
      break;
    }
    case 12:  // WaitFlag with no SetFlag
      AscendC::WaitFlag<HardEvent::V_MTE3>(EVENT_ID3);
      break;
    case 13:  // SetFlag never waited for
      AscendC::SetFlag<HardEvent::V_MTE3>(EVENT_ID3);
      break;
    case 14:  // DataCopy of a length that is not whole 32-byte blocks
      DataCopy(s, g, 10);
      break;
    case 15:  // a vector instruction past its operand
      AscendC::Duplicate(s, 1.0f, 65);
      break;
    case 16:  // an operand not 32-byte aligned
      AscendC::Duplicate(s[3], 1.0f, 8);
      break;
    case 17: {  // WaitPreTaskEnd after a GM transfer
      LocalTensor<float> a = VecLoad(in, g, 64);
      in.FreeTensor(a);
      AscendC::WaitPreTaskEnd();
      break;
    }
    case 18: {  // a GM transfer after SetNextTaskStart
      AscendC::SetNextTaskStart();
      LocalTensor<float> a = VecLoad(in, g, 64);
      in.FreeTensor(a);
      break;
    }
    case 19: {  // SetNextTaskStart on the V pipe, not ordered after the copy-out
      AscendC::Duplicate(s, 1.0f, 64);
      AscendC::SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
      AscendC::WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
      DataCopy(g, s, 64);
      AscendC::SetNextTaskStart<PIPE_V>();
      break;
    }
    case 20: {  // GM written by MTE3 read back by MTE2 with no MTE3_MTE2
      AscendC::Duplicate(s, 1.0f, 64);
      AscendC::SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
      AscendC::WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
      DataCopy(g, s, 64);
      LocalTensor<float> a = VecLoad(in, g, 64);
      in.FreeTensor(a);
      break;
    }
    case 21: {  // a second TPipe while one is alive
      TPipe second;
      break;
    }
    case 22: {  // past the GlobalTensor's SetGlobalBuffer size
      LocalTensor<float> a = in.AllocTensor<float>();
      DataCopy(a, g[1000], 64);
      break;
    }
    case 23: {  // AllocTensor and no FreeTensor
      LocalTensor<float> a = in.AllocTensor<float>();
      (void)a;
      break;
    }
    case 24:    // a Gather offset past its source
    case 25: {  // a Gather offset inside an element
      LocalTensor<float> a = VecLoad(in, g, 64);
      LocalTensor<uint32_t> o = s.ReinterpretCast<uint32_t>();
      o.SetValue(0, which == 24 ? 256u : 2u);
      AscendC::SetFlag<HardEvent::S_V>(EVENT_ID0);
      AscendC::WaitFlag<HardEvent::S_V>(EVENT_ID0);
      LocalTensor<float> d = out.AllocTensor<float>();
      AscendC::Gather(d, a, o, 0u, 1u);
      out.FreeTensor(d);
      in.FreeTensor(a);
      break;
    }
    default: break;
  }
}

}  // namespace

extern "C" __global__ __aicore__ void vapi_misuse(GM_ADDR params, GM_ADDR buf) { VecMisuse(VecParam(params, 0), buf); }

// A vector instruction on a cube core (AIC_ONLY launch): the cube core has no UB or vector unit.
extern "C" __global__ __aicore__ void vapi_on_cube(GM_ADDR) {
  TPipe pipe;
  TBuf<> b;
  pipe.InitBuffer(b, 256);
}
