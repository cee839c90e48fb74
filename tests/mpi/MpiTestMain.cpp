// The gtest main of the MPI test programs: run every test, then finalize MPI
// (sk::mpiCommunicator initialised it), so each rank leaves mpirun cleanly.
#include <gtest/gtest.h>

#include "MpiTest.h"

namespace sktest {
std::shared_ptr<sk::Communicator> comm() {
  static std::shared_ptr<sk::Communicator> c = [] {
    auto r = sk::mpiCommunicator();
    if (!r) ADD_FAILURE() << r.error().message();
    return r ? *r : nullptr;
  }();
  return c;
}
}  // namespace sktest

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  const int rc = RUN_ALL_TESTS();
  sk::finalizeMpi();
  return rc;
}
