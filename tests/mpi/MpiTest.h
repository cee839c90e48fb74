// What the MPI test programs share (MpiTestMain.cpp): the world communicator,
// made once per process (MPI is initialised once), and a failed test rather
// than a crash where MPI cannot start.
#pragma once

#include <memory>

#include "superkernel/runtime/Communicator.h"

namespace sktest {
/// sk::mpiCommunicator() of MPI_COMM_WORLD, made on first use; null (and the calling test failed) if it failed.
std::shared_ptr<sk::Communicator> comm();
}  // namespace sktest
