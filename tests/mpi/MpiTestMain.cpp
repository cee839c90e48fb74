// The gtest main of the MPI test programs: run every test, then finalize MPI
// (sk::mpiCommunicator initialised it), so each rank leaves mpirun cleanly.
#include <gtest/gtest.h>

#include "superkernel/runtime/Communicator.h"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  const int rc = RUN_ALL_TESTS();
  sk::finalizeMpi();
  return rc;
}
