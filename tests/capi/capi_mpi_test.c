/* The C API's communicator (sk_communicator_mpi), run by ctest under
 * `mpirun -np 2` (tests/mpi/tests.cmake, label mpi): a communicator split
 * from MPI_COMM_WORLD with the ranks reversed, passed by its Fortran handle;
 * an all-gather shows the session uses that communicator's rank order and an
 * all-reduce its sum, on both ranks; then the handles that are not
 * communicators. Compiled as C11 against MPI's C bindings. */
#include <mpi.h>
#include <superkernel/superkernel_c.h>

#include <stdio.h>
#include <string.h>

#include "capi_check.h"

enum { N = 64 };
static const char kOpList[] =
    "{\"format\": \"superkernel.oplist\", \"version\": 1, \"kernels\": {},\n"
    " \"buffers\": {\"x\": {\"dtype\": \"f32\", \"shape\": [64]}, \"ag\": {\"dtype\": \"f32\", \"shape\": [128]},\n"
    "             \"sum\": {\"dtype\": \"f32\", \"shape\": [64]}},\n"
    " \"groups\": {\"tp\": {\"ranks\": [0, 1]}},\n"
    " \"ops\": [\n"
    "   {\"name\": \"ag\", \"collective\": \"all_gather\", \"group\": \"tp\", \"scope\": \"s\", \"args\": {\"in\": \"x\", \"out\": \"ag\"}},\n"
    "   {\"name\": \"ar\", \"collective\": \"all_reduce\", \"reduce\": \"sum\", \"group\": \"tp\", \"scope\": \"s\",\n"
    "    \"args\": {\"in\": \"x\", \"out\": \"sum\"}}]}\n";

int main(void) {
  int provided = 0, world = 0, size = 0;
  MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &world);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) {
    fprintf(stderr, "run under mpirun -np 2\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }

  /* Not communicators: an unknown handle and MPI_COMM_NULL's. */
  sk_communicator* c = NULL;
  CHECK(sk_communicator_mpi(12345, &c) == SK_ERR_BAD_INPUT && c == NULL);
  CHECK(strstr(sk_last_error(), "Fortran handle 12345 is not an MPI intracommunicator") != NULL);
  CHECK(sk_communicator_mpi((int)MPI_Comm_c2f(MPI_COMM_NULL), &c) == SK_ERR_BAD_INPUT);
  CHECK(strstr(sk_last_error(), "MPI_COMM_NULL") != NULL);
  CHECK(sk_communicator_mpi(0, NULL) == SK_ERR_INVALID_ARGUMENT);

  /* World: the caller's MPI, the world's ranks. */
  CHECK(sk_communicator_mpi_world(&c) == SK_OK);
  CHECK(sk_communicator_rank(c) == (uint32_t)world && sk_communicator_size(c) == 2);
  sk_communicator_destroy(c);

  /* Reversed: world rank 1 is rank 0 here. Freed at once: the library has its own duplicate. */
  MPI_Comm rev;
  MPI_Comm_split(MPI_COMM_WORLD, 0, size - 1 - world, &rev);
  c = NULL;
  CHECK(sk_communicator_mpi((int)MPI_Comm_c2f(rev), &c) == SK_OK);
  MPI_Comm_free(&rev);
  if (!c) MPI_Abort(MPI_COMM_WORLD, 1);
  const uint32_t rank = sk_communicator_rank(c);
  CHECK(rank == (uint32_t)(1 - world) && sk_communicator_size(c) == 2);

  sk_session_options so;
  sk_session_options_init(&so);
  so.workers = 1;
  so.communicator = c;
  sk_session* s = NULL;
  CHECK(sk_session_create(&so, &s) == SK_OK);
  sk_communicator_destroy(c); /* the session keeps its reference */
  if (!s) MPI_Abort(MPI_COMM_WORLD, 1);
  sk_plan* p = NULL;
  CHECK(sk_compile_json(s, kOpList, sizeof kOpList - 1, NULL, NULL, 0, NULL, 1, &p) == SK_OK);
  if (!p) MPI_Abort(MPI_COMM_WORLD, 1);
  static float x[N], ag[2 * N], sum[N];
  for (int i = 0; i < N; ++i) x[i] = (float)(i + 100 * (int)rank);
  void* bufs[3];
  for (size_t b = 0; b < 3; ++b) {
    const char* name = sk_plan_buffer_name(p, b);
    bufs[b] = strcmp(name, "x") == 0 ? (void*)x : strcmp(name, "ag") == 0 ? (void*)ag : (void*)sum;
  }
  CHECK(sk_run(s, p, bufs, 3) == SK_OK);
  int bad = 0;
  for (int i = 0; i < N; ++i)
    bad += sum[i] != (float)(2 * i + 100) || ag[i] != (float)i || ag[N + i] != (float)(i + 100);
  CHECK(bad == 0);
  sk_plan_destroy(p);
  sk_session_destroy(s);
  printf("capi_mpi_test: world rank %d (rank %u of the reversed communicator): %s\n", world, rank,
         failures ? "FAILED" : "ok");
  MPI_Finalize();
  return failures ? 1 : 0;
}
