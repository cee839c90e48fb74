/* Definitions of the sub-kernel ABI's sync calls (kernel.h). Linked into the
 * host runtime and into every shared object superkernel builds, hidden there,
 * so each SuperKernel resolves them to its own copy. With ctx->rt NULL (a
 * plain call outside any launch) they are no-ops. */
#include "superkernel/cpu/superkernel_rt.h"

#if defined(SK_BUILDING_SUPERKERNEL)
#define SK_ABI_VISIBILITY __attribute__((visibility("hidden")))
#else
#define SK_ABI_VISIBILITY
#endif

SK_ABI_VISIBILITY void sk_wait_inputs(const sk_ctx* ctx) {
  sk_block_rt* rt = (sk_block_rt*)ctx->rt;
  if (!rt || rt->ignore_kernel_points || rt->waited) return;
  rt->waited = 1;
  (void)rt->wait_inputs(rt, ctx->block_idx);
}

SK_ABI_VISIBILITY void sk_signal_outputs(const sk_ctx* ctx) {
  sk_block_rt* rt = (sk_block_rt*)ctx->rt;
  if (!rt || rt->ignore_kernel_points || rt->signalled) return;
  rt->signalled = 1;
  rt->signal_outputs(rt, ctx->block_idx);
}

SK_ABI_VISIBILITY void sk_kernel_sync(const sk_ctx* ctx) {
  sk_block_rt* rt = (sk_block_rt*)ctx->rt;
  if (!rt || !rt->kernel_sync) return;
  rt->kernel_sync(rt, ctx->block_idx);
}

SK_ABI_VISIBILITY void sk_report_error(const sk_ctx* ctx, const char* message) {
  sk_block_rt* rt = (sk_block_rt*)ctx->rt;
  if (!rt || !rt->services || !rt->services->fail) return;
  rt->services->fail(rt->services->self, message);
}

SK_ABI_VISIBILITY int sk_collective_call(const sk_ctx* ctx, const sk_collective_args* args) {
  sk_block_rt* rt = (sk_block_rt*)ctx->rt;
  /* A plain call (no launch) has no executor and so no communicator. */
  if (!rt || !rt->services || !rt->services->collective) return -1;
  return rt->services->collective(rt->services->self, args);
}
