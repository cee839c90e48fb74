// The ranks a cpu SuperKernel's collectives run over (docs/COLLECTIVES.md).
//
// A Communicator is what an Executor hands the collective ops of its
// launches to (Executor::setCommunicator): the worker whose block reaches
// the collective runs it while the other workers go on with ops that do not
// depend on it. The library's implementation is MPI (mpiCommunicator); MPI
// stays private to the library, so this header, like every public one,
// needs no mpi.h.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "superkernel/cpu/kernel.h"
#include "superkernel/support/Error.h"

namespace sk {

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual uint32_t rank() const = 0;
  virtual uint32_t size() const = 0;
  /// "MPI (Open MPI v4.1.4), rank 0 of 2".
  virtual std::string describe() const = 0;
  /// Runs one collective (the args the collective kernel passed). Every
  /// error names `opName`, the rank and what to do: a rank whose op differs
  /// (another op, kind, size or group: "ranks disagree on the plan"), one
  /// that never arrives within `timeoutMs` (dead, hung, or elsewhere in its
  /// plan). `stop` is polled while waiting: true ends the wait (the launch
  /// failed elsewhere).
  virtual Status run(const sk_collective_args& args, const std::string& opName, uint32_t timeoutMs,
                     const std::function<bool()>& stop) = 0;
};

/// How the library's communicator moves collectives between ranks
/// (docs/COLLECTIVES.md, "Between ranks of one host").
enum class CollectiveTransport {
  /// Shared memory when every rank shares this host, else MPI messages.
  Auto,
  /// Shared memory; an error when the ranks do not all share this host.
  SharedMemory,
  /// MPI point-to-point messages, wherever the ranks are.
  Mpi,
};

/// Settings of mpiCommunicator. Unset fields come from the environment
/// (SK_COLLECTIVE_TRANSPORT=auto|shm|mpi, SK_COLLECTIVE_SHM_BYTES), else
/// the defaults (Auto, 4 MiB). Every rank must end up with the same: they
/// are compared when the communicator is made, and ranks that differ each
/// get an error naming both settings.
struct CollectiveOptions {
  std::optional<CollectiveTransport> transport;
  /// Bytes of a rank's shared-memory data slot (64 .. 1 GiB): collectives
  /// with a larger input send their data over MPI.
  std::optional<uint32_t> shmSlotBytes;
};

/// Whether the library was built with MPI (CMake found it).
bool mpiBuiltIn();
/// Whether this process looks started by mpirun (its rank variables are set).
bool startedByMpirun();
/// A communicator over `*static_cast<const MPI_Comm*>(mpiComm)`, or
/// MPI_COMM_WORLD when null (a duplicate: the library's messages never mix
/// with the caller's). Initialises MPI at MPI_THREAD_SERIALIZED or better
/// when the caller has not; an MPI initialised below that level is an error
/// (a collective runs on whichever worker reaches it). Built without MPI:
/// an error saying how to build with it.
/// A collective call: every rank of the communicator makes it, with the
/// same options.
Expected<std::shared_ptr<Communicator>> mpiCommunicator(const void* mpiComm = nullptr,
                                                        const CollectiveOptions& options = {});
/// MPI_Finalize, if mpiCommunicator initialised MPI (after a successful
/// run; after a failed collective a process should just exit, since peers
/// may never match what it left pending).
void finalizeMpi();

}  // namespace sk
