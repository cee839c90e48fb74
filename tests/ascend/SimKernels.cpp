// Ascend C kernels for the simulator's semantics tests (SimulatorTest.cpp):
// correct uses of each sync primitive, and deliberately broken ones. Compiled
// against the simulator's kernel_operator.h like any simulated kernel.
#include "kernel_operator.h"

namespace {
__aicore__ inline __gm__ int64_t* I64(GM_ADDR p) { return reinterpret_cast<__gm__ int64_t*>(p); }
__aicore__ inline int64_t Param(GM_ADDR p, int i) { return I64(p)[i]; }
}  // namespace

// Every core writes who it is: [type, get_block_idx, GetBlockIdx, GetBlockNum, subblockid, subblockdim, coreid].
extern "C" __global__ __aicore__ void sim_identity(GM_ADDR out) {
  const int64_t slot = ASCEND_IS_AIC ? get_block_idx() : 1000 + AscendC::GetBlockIdx();
  __gm__ int64_t* o = I64(out) + slot * 8;
  o[0] = ASCEND_IS_AIC ? 0 : 1;
  o[1] = get_block_idx();
  o[2] = AscendC::GetBlockIdx();
  o[3] = AscendC::GetBlockNum();
  o[4] = get_subblockid();
  o[5] = get_subblockdim();
  o[6] = get_coreid();
  o[7] = 1;
}

// Vector cores only: write, SyncAll<true>, read the next core's value. `rounds` times.
extern "C" __global__ __aicore__ void sim_syncall_aiv(GM_ADDR data, GM_ADDR out, GM_ADDR params) {
  const int64_t rounds = Param(params, 0);
  const int64_t n = AscendC::GetBlockNum() * AscendC::GetTaskRatio();
  const int64_t me = AscendC::GetBlockIdx();
  for (int64_t r = 0; r < rounds; ++r) {
    I64(data)[me] = r * 1000 + me;
    AscendC::SyncAll<true>();
    I64(out)[r * n + me] = I64(data)[(me + 1) % n];
    AscendC::SyncAll<true>();
  }
}

// Cube and vector: cubes write, SyncAll<false>, vectors read their cube's value, SyncAll<false>, cubes read.
extern "C" __global__ __aicore__ void sim_syncall_mix(GM_ADDR data, GM_ADDR out, GM_ADDR params) {
  const int64_t rounds = Param(params, 0);
  for (int64_t r = 0; r < rounds; ++r) {
    if (ASCEND_IS_AIC) I64(data)[get_block_idx()] = r * 100 + get_block_idx();
    AscendC::SyncAll<false>();
    if (ASCEND_IS_AIV) I64(out)[1000 + r * 64 + AscendC::GetBlockIdx()] = I64(data)[get_block_idx()] + 1;
    AscendC::SyncAll<false>();
    if (ASCEND_IS_AIC) I64(out)[r * 64 + get_block_idx()] = I64(out)[1000 + r * 64 + 2 * get_block_idx()];
  }
}

// Mode 2 both ways: cube -> its vectors on flag 3, vectors -> their cube on flag 4.
extern "C" __global__ __aicore__ void sim_mode2(GM_ADDR data, GM_ADDR out) {
  if (ASCEND_IS_AIC) {
    I64(data)[get_block_idx()] = 7 + get_block_idx();
    ffts_cross_core_sync(PIPE_FIX, AscendC::GetffstMsg(2, 3));
    wait_flag_dev(4);
    I64(out)[get_block_idx()] = I64(data)[100 + 2 * get_block_idx()] + I64(data)[100 + 2 * get_block_idx() + 1];
  } else {
    wait_flag_dev(3);
    I64(data)[100 + 2 * get_block_idx() + get_subblockid()] = I64(data)[get_block_idx()] * 10;
    ffts_cross_core_sync(PIPE_MTE3, AscendC::GetffstMsg(2, 4));
  }
}

// Mode 1: the two vector cores of an AI Core exchange values.
extern "C" __global__ __aicore__ void sim_mode1(GM_ADDR data, GM_ADDR out) {
  if (ASCEND_IS_AIV) {
    const int64_t me = AscendC::GetBlockIdx();
    I64(data)[me] = 50 + me;
    ffts_cross_core_sync(PIPE_MTE3, AscendC::GetffstMsg(1, 5));
    wait_flag_dev(5);
    I64(out)[me] = I64(data)[me ^ 1];
  }
}

// Early start between two "sub-kernels" of a MIX_AIC_1_2 launch: params = {prev, cur} device types
// (0 cube, 1 vector, 2 both), and the config the waiter uses. Cores of the previous op's types write and
// SetNextTaskStart; every core then WaitPreTaskEnd(config); cores of the current op's types read.
extern "C" __global__ __aicore__ void sim_early_start(GM_ADDR data, GM_ADDR out, GM_ADDR params) {
  const int64_t prev = Param(params, 0), cur = Param(params, 1), config = Param(params, 2);
  const bool aic = ASCEND_IS_AIC;
  const bool inPrev = aic ? prev != 1 : prev != 0;
  const bool inCur = aic ? cur != 1 : cur != 0;
  const int64_t slot = aic ? get_block_idx() : 100 + AscendC::GetBlockIdx();
  if (inPrev) {
    I64(data)[slot] = 1000 + slot;
    AscendC::SetNextTaskStartImpl();
  }
  g_super_kernel_early_start_config = config;
  AscendC::WaitPreTaskEndImpl<-1>();
  if (inCur) {
    // Everything the previous op wrote is visible now: sum it.
    int64_t s = 0;
    for (int64_t i = 0; i < 200; ++i) s += I64(data)[i];
    I64(out)[slot] = s;
  }
}

// Broken: vector cores wait on flag 6 nobody sets.
extern "C" __global__ __aicore__ void sim_wait_unset(GM_ADDR) {
  if (ASCEND_IS_AIV) wait_flag_dev(6);
}

// Broken: the cube sets mode 2 for its vectors, but the cube (wrong core type) waits for it.
extern "C" __global__ __aicore__ void sim_wait_wrong_type(GM_ADDR) {
  if (ASCEND_IS_AIC) {
    ffts_cross_core_sync(PIPE_FIX, AscendC::GetffstMsg(2, 3));
    wait_flag_dev(3);
  }
}

// Broken: a set nobody waits for (a removed wait).
extern "C" __global__ __aicore__ void sim_set_unwaited(GM_ADDR) {
  if (ASCEND_IS_AIC) ffts_cross_core_sync(PIPE_FIX, AscendC::GetffstMsg(2, 3));
}

// Broken: 16 sets of one flag before any wait (mode 0 on one vector core completes every round at once).
extern "C" __global__ __aicore__ void sim_overflow(GM_ADDR) {
  for (int i = 0; i < 16; ++i) ffts_cross_core_sync(PIPE_MTE3, AscendC::GetffstMsg(0, 3));
  for (int i = 0; i < 16; ++i) wait_flag_dev(3);
}

// Broken: a mode-0 set on vector core 0 only (an all-core sync not every core takes part in).
extern "C" __global__ __aicore__ void sim_mode0_partial(GM_ADDR) {
  if (ASCEND_IS_AIV && AscendC::GetBlockIdx() == 0) ffts_cross_core_sync(PIPE_MTE3, AscendC::GetffstMsg(0, 7));
}

// params[0] selects a misuse: 1 mode 1, 2 mode 2 (in a vector-only launch), 3 config without the valid bit,
// 4 mode 3, 5 wait on flag 16, 6 pipe_barrier(PIPE_V) on a cube core, 7 PIPE_FIX on a vector core.
extern "C" __global__ __aicore__ void sim_misuse(GM_ADDR params) {
  switch (Param(params, 0)) {
    case 1: ffts_cross_core_sync(PIPE_MTE3, AscendC::GetffstMsg(1, 2)); break;
    case 2: ffts_cross_core_sync(PIPE_MTE3, AscendC::GetffstMsg(2, 2)); break;
    case 3: ffts_cross_core_sync(PIPE_MTE3, 2u << 8); break;
    case 4: ffts_cross_core_sync(PIPE_MTE3, 1u | (3u << 4)); break;
    case 5: wait_flag_dev(16); break;
    case 6: if (ASCEND_IS_AIC) pipe_barrier(PIPE_V); break;
    case 7: if (ASCEND_IS_AIV) ffts_cross_core_sync(PIPE_FIX, AscendC::GetffstMsg(0, 1)); break;
    default: break;
  }
}

extern "C" __global__ __aicore__ void sim_declares_mix12(GM_ADDR) { KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2); }

// Notify/wait through a GM word (ops on other streams): AIV 0 waits for the word, the last AIV sets it.
extern "C" __global__ __aicore__ void sim_gm_notify(GM_ADDR lock, GM_ADDR out, GM_ADDR params) {
  const bool notify = Param(params, 0) != 0;
  __gm__ volatile uint64_t* w = reinterpret_cast<__gm__ volatile uint64_t*>(lock);
  const int64_t me = AscendC::GetBlockIdx();
  if (me == 0) {
    dcci(w, SINGLE_CACHE_LINE, CACHELINE_OUT);
    while (*w != 1) dcci(w, SINGLE_CACHE_LINE, CACHELINE_OUT);
    I64(out)[0] = I64(out)[1] + 1;
  } else if (me == AscendC::GetBlockNum() - 1 && notify) {
    I64(out)[1] = 41;
    *w = 1;
    dcci(w, SINGLE_CACHE_LINE, CACHELINE_OUT);
  }
}

extern "C" __global__ __aicore__ void sim_trap(GM_ADDR) {
  if (ASCEND_IS_AIV && AscendC::GetBlockIdx() == 1) trap();
}

extern "C" __global__ __aicore__ void sim_preload_target(GM_ADDR) {}

// params[0] preload units; params[1] 1: preload a non-function address.
extern "C" __global__ __aicore__ void sim_preload(GM_ADDR params) {
  const void* f = reinterpret_cast<const void*>(&sim_preload_target);
  if (Param(params, 1)) f = static_cast<const char*>(f) + 1;
  preload(f, Param(params, 0));
}

// A sub-kernel's SyncAll inside a wider launch (feed-sync-all). params: [0] B, the vector cores that run the
// "sub-kernel" (GetBlockIdx() < B), [1] 1: the other vector cores feed its SyncAll, [2] 1: SyncAll<true>
// (vector cores only), 0: SyncAll<false> (every cube core calls it too). Twice, in round r: the sub-kernel's
// cores write data[64 r + b] = (r + 1)(b + 1), sync, and store the sum of the round's B values in out[64 r + b].
extern "C" __global__ __aicore__ void sim_syncall_some(GM_ADDR data, GM_ADDR out, GM_ADDR params) {
  const int64_t blocks = Param(params, 0), feed = Param(params, 1), aivOnly = Param(params, 2);
  auto sync = [&] {
    if (aivOnly) {
      AscendC::SyncAll<true>();
    } else {
      AscendC::SyncAll<false>();
    }
  };
  if (ASCEND_IS_AIC) {
    if (!aivOnly) {
      sync();
      sync();
    }
    return;
  }
  const int64_t b = AscendC::GetBlockIdx();
  if (b >= blocks) {
    if (feed) {
      sync();
      sync();
    }
    return;
  }
  for (int round = 0; round < 2; ++round) {
    __gm__ int64_t* slots = I64(data) + round * 64;  // a slot per round: no core overwrites what another reads
    slots[b] = (round + 1) * (b + 1);
    sync();
    int64_t sum = 0;
    for (int64_t k = 0; k < blocks; ++k) sum += slots[k];
    reinterpret_cast<__gm__ int64_t*>(out)[round * 64 + b] = sum;
  }
}

// Runtime scalars (RuntimeScalarTest.cpp): slot 0 as f32 and slot 1 as i64, the way an object compiled with
// -DSK_<NAME>=SK_ASCEND_RUNTIME_<T>_<k> reads them; block 0 writes them as doubles.
extern "C" __global__ __aicore__ void sk_test_read_runtime(GM_ADDR out) {
  const double a = SK_ASCEND_RUNTIME_F32_0;
  const double b = static_cast<double>(SK_ASCEND_RUNTIME_I64_1);
  if (AscendC::GetBlockIdx() == 0) {
    reinterpret_cast<__gm__ double*>(out)[0] = a;
    reinterpret_cast<__gm__ double*>(out)[1] = b;
  }
}
