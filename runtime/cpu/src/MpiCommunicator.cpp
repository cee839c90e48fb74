// Collectives over MPI (docs/COLLECTIVES.md). Built only when CMake found
// MPI (SK_HAVE_MPI); Collective.cpp answers for a build without it.
//
// Why point-to-point and not MPI_Allreduce & co.: a blocking MPI collective
// with a dead or diverging peer never returns, and nothing can cancel it, so
// "a rank that dies or disagrees ends every rank with an error, nothing
// hangs" needs requests we can poll against a deadline. Each member sends
// every other member a small header (what op it is running, with which
// sizes) and its data; the header is checked before the data is received,
// so ranks that disagree fail with an error naming the op and the rank
// instead of reading mismatched bytes. The combine runs in group order on
// every rank (((x0 + x1) + x2) + ...), so every rank's result is bit-identical
// to the others'. The groups this is for (tensor parallelism on one host or a
// few: 2..8 ranks, vectors of a few MB at most) are small enough that each
// member receiving every other member's input costs less than a ring's extra
// rounds. Ranks that all share one host talk through shared memory instead
// (ShmCommunicator.cpp) unless SK_COLLECTIVE_TRANSPORT=mpi; collectives too
// large for its slots come back here.
#ifdef SK_HAVE_MPI

#include <mpi.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "Backoff.h"
#include "CollectiveWire.h"
#include "MpiTransports.h"
#include "superkernel/runtime/Communicator.h"

namespace sk {

namespace {

using coll::Header;
using coll::kMagic;
using rt::nowNs;

constexpr int kHeaderTag = 32000;  // data tags are below 16000 (MPI guarantees tags up to 32767)

bool gMpiInitialisedHere = false;

class MpiCommunicator final : public Communicator {
 public:
  MpiCommunicator(MPI_Comm comm, int rank, int size) : comm_(comm), rank_(rank), size_(size) {}
  ~MpiCommunicator() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized && !broken_) MPI_Comm_free(&comm_);
  }
  uint32_t rank() const override { return uint32_t(rank_); }
  uint32_t size() const override { return uint32_t(size_); }
  std::string describe() const override {
    char v[MPI_MAX_LIBRARY_VERSION_STRING] = {};
    int len = 0;
    MPI_Get_library_version(v, &len);
    std::string lib(v, size_t(std::max(len, 0)));
    if (auto nl = lib.find_first_of(",\n"); nl != std::string::npos) lib.resize(nl);
    return fmt::format("MPI ({}), rank {} of {}", lib, rank_, size_);
  }
  Status run(const sk_collective_args& a, const std::string& opName, uint32_t timeoutMs,
             const std::function<bool()>& stop) override;

 private:
  // MPI calls under one lock: MPI_THREAD_SERIALIZED is what is asked for,
  // and two workers may drive two collectives of different streams.
  Status poll(std::vector<MPI_Request>& reqs, const std::function<std::string(size_t)>& pending, const std::string& op,
              uint64_t deadlineNs, uint32_t timeoutMs, const std::function<bool()>& stop);

  MPI_Comm comm_;
  int rank_ = 0, size_ = 1;
  std::mutex mu_;
  bool broken_ = false;  // a collective failed: requests may be left pending
};

Status MpiCommunicator::poll(std::vector<MPI_Request>& reqs, const std::function<std::string(size_t)>& pending,
                             const std::string& op, uint64_t deadlineNs, uint32_t timeoutMs,
                             const std::function<bool()>& stop) {
  const uint64_t startNs = nowNs();
  for (uint32_t spin = 0;; ++spin) {
    int done = 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      int rc = MPI_Testall(int(reqs.size()), reqs.data(), &done, MPI_STATUSES_IGNORE);
      if (rc != MPI_SUCCESS) {
        char msg[MPI_MAX_ERROR_STRING] = {};
        int len = 0;
        MPI_Error_string(rc, msg, &len);
        broken_ = true;
        return runtimeError(fmt::format("collective op {} on rank {}: MPI failed: {}", op, rank_, msg));
      }
    }
    if (done) return Status::success();
    if (stop()) {
      broken_ = true;
      return runtimeError(fmt::format("collective op {} on rank {}: stopped, the launch failed", op, rank_));
    }
    const uint64_t now = nowNs();
    if (now >= deadlineNs) {
      std::string missing;
      for (size_t i = 0; i < reqs.size(); ++i)
        if (reqs[i] != MPI_REQUEST_NULL) {
          std::string p = pending(i);
          if (!p.empty() && missing.find(p) == std::string::npos) missing += (missing.empty() ? "" : ", ") + p;
        }
      broken_ = true;
      return runtimeError(coll::noAnswer(op, rank_, missing, timeoutMs));
    }
    coll::pace(now - startNs, spin);
  }
}

Status MpiCommunicator::run(const sk_collective_args& a, const std::string& op, uint32_t timeoutMs,
                            const std::function<bool()>& stop) {
  auto call = coll::callOf(a, op, rank_, size_);
  if (!call) return call.error();
  const coll::Call& c = *call;
  const size_t g = c.size(), me = c.me, bytes = c.perPeerBytes();
  const auto* in = static_cast<const char*>(a.in);
  if (g == 1) {
    if (a.out != a.in) std::memmove(a.out, a.in, size_t(a.n_out) * c.elementSize);
    return Status::success();
  }
  const uint64_t deadline = nowNs() + uint64_t(timeoutMs) * 1000000;
  // Headers share one tag, so a rank running another op (another plan, other
  // sizes) is read and named, not waited for. Data goes under the op's own
  // tag, so it is never taken for another op's.
  const int hdrTag = kHeaderTag, tag = int(a.tag % 16000);
  const Header mine{kMagic, a.tag, a.desc, a.n_in, a.n_out, a.ranks};
  std::vector<Header> theirs(g);
  std::vector<std::vector<char>> recv(g);
  std::vector<MPI_Request> reqs;
  std::vector<size_t> peerOf;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (size_t j = 0; j < g; ++j) {
      if (j == me) continue;
      reqs.emplace_back();
      peerOf.push_back(j);
      MPI_Irecv(&theirs[j], sizeof(Header), MPI_BYTE, c.members[j], hdrTag, comm_, &reqs.back());
    }
    for (size_t j = 0; j < g; ++j) {
      if (j == me) continue;
      reqs.emplace_back();
      peerOf.push_back(j);
      MPI_Isend(&mine, sizeof(Header), MPI_BYTE, c.members[j], hdrTag, comm_, &reqs.back());
      const char* part = in + (c.chunked ? bytes * j : 0);
      reqs.emplace_back();
      peerOf.push_back(j);
      MPI_Isend(part, int(bytes), MPI_BYTE, c.members[j], tag, comm_, &reqs.back());
    }
  }
  // Headers first: the first g-1 requests. Sends may wait for peers that
  // never post their receives (a mismatch): they are polled with the data.
  std::vector<MPI_Request> hdr(reqs.begin(), reqs.begin() + long(g - 1));
  auto peerName = [&](size_t i) { return "rank " + std::to_string(c.members[peerOf[i]]); };
  if (Status s = poll(hdr, peerName, op, deadline, timeoutMs, stop); !s) return s;
  for (size_t j = 0; j < g; ++j) {
    if (j == me) continue;
    if (std::string e = coll::mismatch(mine, theirs[j], op, rank_, c.members[j]); !e.empty()) {
      broken_ = true;
      return runtimeError(e);
    }
  }
  std::vector<MPI_Request> data;
  std::vector<size_t> dataPeer;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (size_t j = 0; j < g; ++j) {
      if (j == me) continue;
      recv[j].resize(bytes);
      data.emplace_back();
      dataPeer.push_back(j);
      MPI_Irecv(recv[j].data(), int(recv[j].size()), MPI_BYTE, c.members[j], tag, comm_, &data.back());
    }
  }
  for (size_t i = g - 1; i < reqs.size(); ++i) {
    data.push_back(reqs[i]);
    dataPeer.push_back(peerOf[i]);
  }
  auto dataName = [&](size_t i) { return "rank " + std::to_string(c.members[dataPeer[i]]); };
  if (Status s = poll(data, dataName, op, deadline, timeoutMs, stop); !s) return s;

  // Member j's part: what it sent (recv[j]) or, for this rank, its own.
  coll::Parts src{};
  for (size_t j = 0; j < g; ++j) src[j] = j != me ? static_cast<const void*>(recv[j].data()) : in + (c.chunked ? bytes * me : 0);
  coll::finish(c, a, src);
  return Status::success();
}

const char* levelName(int level) {
  switch (level) {
    case MPI_THREAD_SINGLE: return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED: return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED: return "MPI_THREAD_SERIALIZED";
    default: return "MPI_THREAD_MULTIPLE";
  }
}

}  // namespace

std::unique_ptr<Communicator> mpiTransport(MPI_Comm comm, int rank, int size) {
  return std::make_unique<MpiCommunicator>(comm, rank, size);
}

bool mpiBuiltIn() { return true; }

Expected<std::shared_ptr<Communicator>> mpiCommunicator(const void* mpiComm, const CollectiveOptions& options) {
  int initialised = 0, provided = 0;
  MPI_Initialized(&initialised);
  if (!initialised) {
    // SERIALIZED: the worker that reaches a collective calls MPI, one at a
    // time (the communicator's lock); MULTIPLE is not needed.
    if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS)
      return runtimeError("MPI_Init_thread failed");
    gMpiInitialisedHere = true;
  } else {
    MPI_Query_thread(&provided);
  }
  if (provided < MPI_THREAD_SERIALIZED)
    return badInput(fmt::format("MPI runs at thread level {}, but superkernel's collectives call MPI from whichever "
                                "worker reaches them: initialise MPI with MPI_Init_thread(..., MPI_THREAD_SERIALIZED "
                                "or MPI_THREAD_MULTIPLE, ...)",
                                levelName(provided)));
  MPI_Comm base = mpiComm ? *static_cast<const MPI_Comm*>(mpiComm) : MPI_COMM_WORLD;
  MPI_Comm comm;
  if (MPI_Comm_dup(base, &comm) != MPI_SUCCESS) return runtimeError("MPI_Comm_dup failed");
  // Errors come back as return codes (poll() reports them), not an abort.
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  if (size > 64) {
    MPI_Comm_free(&comm);
    return badInput(fmt::format("the communicator has {} ranks; superkernel's collectives address at most 64", size));
  }
  return withSharedMemory(comm, rank, size, mpiTransport(comm, rank, size), options);
}

void finalizeMpi() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (gMpiInitialisedHere && !finalized) MPI_Finalize();
}

}  // namespace sk

#endif  // SK_HAVE_MPI
