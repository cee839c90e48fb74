/* The kernel every collective op lowers to on cuda-sim (docs/COLLECTIVES.md,
 * "On cuda-sim"; src/plan/Collectives.cpp makes its launches: one block,
 * buffers "all", COLL_T the element type). The SuperKernel waits for the
 * producers of `in` before the call and signals its consumers after it, as for
 * any op; inside, one thread of the CTA that runs the block hands the buffers
 * to the simulator's runtime (sk_cuda_sim_ops::collective), which drives the
 * exchange over the device's communicator on that CTA's host thread while the
 * other CTAs run the ops that do not depend on it (early start). A failure
 * fails the launch inside the call, with the communicator's error naming the
 * op, so nothing is left to do here.
 *
 * On a GPU the same kernel would be one CTA driving the exchange itself:
 * NCCL's device API (or NVSHMEM) puts and signals on buffers registered when
 * the SuperKernel is loaded, then waits for the peers' signals, bounded by a
 * %globaltimer deadline that traps with the op's index. That build does not
 * exist yet (no NCCL or GPU to check it on), so the cuda target refuses
 * collectives at plan time and this file lives with the simulator. */
#include "superkernel/cuda/kernel.cuh"

#ifndef SK_CUDA_SIM
#error "collectives on cuda run only in the cuda simulator (target cuda-sim) so far: docs/COLLECTIVES.md"
#endif

SK_KERNEL void sk_collective_kernel(const sk_ctx* ctx, const COLL_T* in, COLL_T* out, int64_t n_in, int64_t n_out,
                                    uint64_t desc, uint64_t ranks, uint64_t tag) {
  (void)ctx;  /* the SuperKernel's sk_block_begin has waited for the producers (a CTA barrier) */
  if (threadIdx.x == 0) {
    const sk_cuda_sim_collective_args a = {in, out, n_in, n_out, desc, ranks, tag};
    sk_cuda_sim_module_ops->collective(sk_cuda_sim_self, &a);
  }
  __syncthreads();  /* the result is in `out` for every thread of the CTA (sk_block_end's signal follows) */
}
