// The executor's side of a collective: the services table's entry, which
// hands the call to the communicator with the op's name for its messages,
// and what a build without MPI answers.
#include <spdlog/spdlog.h>

#include <cstdlib>

#include "ExecutorImpl.h"
#include "superkernel/runtime/Communicator.h"

namespace sk {

int Executor::Impl::collective(const sk_collective_args* args) {
  const uint32_t w = tlWorker.exec == this ? tlWorker.worker : 0;
  const std::string op = watchdog->opName(w);
  if (!communicator) {
    fail(("collective op " + op +
          ": this executor has no communicator (run the step through a Session created with "
          "SessionOptions::communicator, e.g. sk::mpiCommunicator(), or sk-compile under mpirun)")
             .c_str());
    return 1;
  }
  if (failed()) return 1;
  Status s = communicator->run(*args, op, timeoutMs, [this] { return failed(); });
  if (!s) {
    fail(s.error().message().c_str());
    return 1;
  }
  return 0;
}

void Executor::setCommunicator(std::shared_ptr<Communicator> c) {
  std::lock_guard<std::mutex> lock(impl_->launchMu);
  impl_->communicator = std::move(c);
}

Communicator* Executor::communicator() const { return impl_->communicator.get(); }

bool startedByMpirun() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"})
    if (std::getenv(v)) return true;
  return false;
}

#ifndef SK_HAVE_MPI
bool mpiBuiltIn() { return false; }
Expected<std::shared_ptr<Communicator>> mpiCommunicator(const void*, const CollectiveOptions&) {
  return Error(ErrorKind::BadInput,
               "this superkernel was built without MPI, so collective ops cannot run: install it "
               "(scripts/setup.sh installs openmpi-bin and libopenmpi-dev) and rebuild (CMake finds it with FindMPI)");
}
void finalizeMpi() {}
#endif

}  // namespace sk
