/* Test kernel (tests/mpi): copies x to y, but first kills its own process
 * with SIGKILL (no cleanup, no message: a crashed or OOM-killed rank) when
 * this rank is $SK_TEST_DIE_RANK, or sleeps a minute (a rank that hangs)
 * when it is $SK_TEST_STALL_RANK, so a test can lose a rank mid-step. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "superkernel/cpu/kernel.h"

SK_KERNEL void die_if_rank(const sk_ctx* ctx, const float* x, float* y, int64_t n) {
  const char* rank = getenv("OMPI_COMM_WORLD_RANK");
  const char* die = getenv("SK_TEST_DIE_RANK");
  const char* stall = getenv("SK_TEST_STALL_RANK");
  if (rank && die && strcmp(rank, die) == 0) raise(SIGKILL);
  if (rank && stall && strcmp(rank, stall) == 0) sleep(60);
  int64_t b, e;
  sk_block_range(ctx, n, &b, &e);
  for (int64_t i = b; i < e; ++i) y[i] = x[i];
}
