/* What one simulated module (a cuda-sim SuperKernel shared object) defines
 * once: the ops table and CTA pointer that sim_device.h reads, the launch
 * error of cudaGetLastError, and the two exported entries the engine and
 * the device call (sim_abi.h). Included by superkernel_rt.cuh under
 * SK_CUDA_SIM, i.e. only by the generated source: one definition per module. */
#ifndef SUPERKERNEL_CUDA_SIM_MODULE_H
#define SUPERKERNEL_CUDA_SIM_MODULE_H

#include <cuda_runtime.h>

#include "superkernel/cuda/sim_abi.h"

extern "C" {
__attribute__((visibility("hidden"))) const sk_cuda_sim_ops* sk_cuda_sim_module_ops;
__attribute__((visibility("hidden"))) int sk_cuda_sim_last_error;
__attribute__((visibility("default"))) void sk_cuda_sim_bind(const sk_cuda_sim_ops* ops) { sk_cuda_sim_module_ops = ops; }
__attribute__((visibility("default"))) void sk_cuda_sim_enter(sk_cuda_sim_cta* cta) { sk_cuda_sim_self = cta; }
}
__attribute__((visibility("hidden"))) __thread sk_cuda_sim_cta* sk_cuda_sim_self;

/* sk_superkernel<<<grid, threads, smem, stream>>>(epoch), run to completion. */
static inline void sk_cuda_sim_launch_epoch(void (*kernel)(unsigned long long), unsigned grid, unsigned threads,
                                            size_t smem, cudaStream_t, unsigned long long epoch) {
  struct Call {
    void (*kernel)(unsigned long long);
    unsigned long long epoch;
  } call{kernel, epoch};
  void (*thunk)(void*) = [](void* p) {
    Call* c = static_cast<Call*>(p);
    c->kernel(c->epoch);
  };
  sk_cuda_sim_last_error = sk_cuda_sim_module_ops->launch(sk_cuda_sim_enter, sk_cuda_sim_dim3{grid, 1, 1},
                                                          sk_cuda_sim_dim3{threads, 1, 1}, smem, thunk, &call);
}

#endif
