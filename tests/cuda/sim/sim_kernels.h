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

typedef void (*SimKernelFn)(void*);
extern "C" {
extern SimKernelFn simReduceKernel, simSmemKernel, simDivergentKernel, simEarlyReturnKernel, simPartialMaskKernel,
    simTrapKernel, simHangKernel, simChainKernel, simWarpMixKernel, simSpinKernel;
extern sk_cuda_sim_enter_fn simEnter;
extern sk_cuda_sim_bind_fn simBind;
}
