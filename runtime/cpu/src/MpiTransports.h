// The two transports of the library's communicator (docs/COLLECTIVES.md),
// private to the runtime: both need mpi.h, which no public header includes.
#pragma once
#ifdef SK_HAVE_MPI

#include <mpi.h>

#include <memory>

#include "superkernel/runtime/Communicator.h"

namespace sk {

/// Collectives as MPI point-to-point messages over `comm` (which it owns:
/// freed with it). Works between any ranks, on one host or many.
std::unique_ptr<Communicator> mpiTransport(MPI_Comm comm, int rank, int size);

/// Called on every rank of `comm` (collective): where every rank shares
/// this host and the transport allows it (Auto or SharedMemory: `options`,
/// else SK_COLLECTIVE_TRANSPORT), a communicator whose collectives go
/// through shared memory, with `mpi` kept for those larger than a slot;
/// otherwise `mpi` itself. Every rank gets the same answer: an error on one
/// (a bad setting, shared memory that cannot be made) is an error on all.
Expected<std::shared_ptr<Communicator>> withSharedMemory(MPI_Comm comm, int rank, int size,
                                                         std::unique_ptr<Communicator> mpi,
                                                         const CollectiveOptions& options);

}  // namespace sk

#endif  // SK_HAVE_MPI
