/* The kernel every collective op lowers to on cpu (docs/COLLECTIVES.md;
 * src/plan/Collectives.cpp makes its launches: one block, buffers "all",
 * COLL_T the element type). The block that runs it drives the exchange on
 * its worker while the SuperKernel's other workers run independent ops; the
 * runtime fails the launch with the error itself, so nothing is left to do
 * here when it returns non-zero. */
#include "superkernel/cpu/kernel.h"

SK_KERNEL void sk_collective_kernel(const sk_ctx* ctx, const COLL_T* in, COLL_T* out, int64_t n_in, int64_t n_out,
                                    uint64_t desc, uint64_t ranks, uint64_t tag) {
  sk_collective_args a = {in, out, n_in, n_out, desc, ranks, tag};
  if (sk_collective_call(ctx, &a) < 0)
    sk_report_error(ctx, "a collective op ran outside a superkernel launch (no executor, so no communicator)");
}
