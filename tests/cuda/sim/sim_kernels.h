// The engine tests' kernels (sim_kernels.cpp, compiled as simulated CUDA)
// as the test (ordinary C++) sees them: plain function pointers and argument
// structs, nothing of sim_device.h.
#pragma once

#include <cstdint>

#include "superkernel/cuda/sim_abi.h"

struct SimReduceArgs {
  const float* x;
  uint32_t n;
  float* sum;
  float* max;
};
struct SimSmemArgs {
  uint32_t* out;
};
struct SimFlagArgs {
  unsigned long long* flag;
};
struct SimChainArgs {
  unsigned long long* flags;
  uint32_t* data;
  int wait;
};

struct SimSpinArgs {
  int* stop;
  unsigned long long* flag;
};

struct SimCollectiveArgs {
  const float* in;
  float* out;
  int64_t n;
  uint64_t tag;
  unsigned long long* flag;  // CTA 1 sets it while CTA 0 is in the collective
  float* seen;               // what each thread of CTA 0 reads of out[0] after it
};

typedef void (*SimKernelFn)(void*);
extern "C" {
extern SimKernelFn simReduceKernel, simSmemKernel, simDivergentKernel, simEarlyReturnKernel, simPartialMaskKernel,
    simTrapKernel, simHangKernel, simChainKernel, simWarpMixKernel, simSpinKernel, simCollectiveKernel;
extern sk_cuda_sim_enter_fn simEnter;
extern sk_cuda_sim_bind_fn simBind;
}
