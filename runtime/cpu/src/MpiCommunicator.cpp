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
// rounds.
#ifdef SK_HAVE_MPI

#include <mpi.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "superkernel/runtime/Communicator.h"

namespace sk {

namespace {

constexpr uint64_t kMagic = 0x736b636f6c6c3031ull;  // "skcoll01"
constexpr int kHeaderTag = 32000;  // data tags are below 16000 (MPI guarantees tags up to 32767)

// The header a member sends each peer before its data.
struct Header {
  uint64_t magic = kMagic;
  uint64_t tag = 0;
  uint64_t desc = 0;
  int64_t nIn = 0;
  int64_t nOut = 0;
  uint64_t ranks = 0;
};

// Element sizes by the op list's dtype order (OpList.h DType).
constexpr size_t kDTypeSize[] = {4, 8, 2, 2, 1, 2, 4, 8, 1, 2, 4, 8, 1};
constexpr const char* kDTypeName[] = {"f32", "f64", "f16", "bf16", "i8", "i16", "i32", "i64",
                                      "u8",  "u16", "u32", "u64", "bool"};
constexpr const char* kKindName[] = {"all_reduce", "all_gather", "reduce_scatter", "all_to_all"};
constexpr const char* kReduceName[] = {"", " sum", " max"};

struct Desc {
  uint32_t kind = 0, reduce = 0, dtype = 0;
  static Desc of(uint64_t d) { return {uint32_t(d & 0xff), uint32_t((d >> 8) & 0xff), uint32_t((d >> 16) & 0xff)}; }
  bool valid() const { return kind < 4 && reduce < 3 && dtype < 13; }
};

std::string what(const Header& h) {
  Desc d = Desc::of(h.desc);
  if (!d.valid()) return "an unknown collective";
  return fmt::format("{}{} of {} {} in, {} out", kKindName[d.kind], kReduceName[d.reduce], h.nIn, kDTypeName[d.dtype],
                     h.nOut);
}

std::string rankList(uint64_t mask) {
  std::string s;
  for (uint32_t r = 0; r < 64; ++r)
    if (mask >> r & 1) s += (s.empty() ? "" : ",") + std::to_string(r);
  return s;
}

template <typename T>
void combine(T* out, const std::vector<const T*>& src, int64_t n, uint32_t reduce) {
  for (int64_t i = 0; i < n; ++i) {
    T acc = src[0][i];
    for (size_t j = 1; j < src.size(); ++j) acc = reduce == 2 ? std::max(acc, src[j][i]) : T(acc + src[j][i]);
    out[i] = acc;
  }
}

void combineAny(void* out, const std::vector<const void*>& src, int64_t n, uint32_t dtype, uint32_t reduce) {
  auto run = [&](auto tag) {
    using T = decltype(tag);
    std::vector<const T*> s;
    for (const void* p : src) s.push_back(static_cast<const T*>(p));
    combine(static_cast<T*>(out), s, n, reduce);
  };
  switch (dtype) {
    case 0: run(float{}); break;
    case 1: run(double{}); break;
    case 6: run(int32_t{}); break;
    case 7: run(int64_t{}); break;
    default: break;  // the validator allows reductions of these four only
  }
}

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

uint64_t nowNs() {
  return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::steady_clock::now().time_since_epoch())
                      .count());
}

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
      return runtimeError(fmt::format(
          "collective op {} on rank {}: no answer from {} within {} ms (a rank died, hangs, or runs another plan); "
          "every rank must run the same op list (SK_WAIT_TIMEOUT_MS sets the limit)",
          op, rank_, missing.empty() ? "a peer" : missing, timeoutMs));
    }
    // Short waits dominate decode steps: a peer a few to a few hundred microseconds behind. Poll, yielding the
    // core between polls (on a free core sched_yield returns at once; on an oversubscribed one it lets the peer
    // run), and sleep only once the wait is long (2 ms), where a sleep's late wake-up (tens of microseconds) is
    // small against the wait. A count of polls (64, as first written) is no bound on time: it could end within
    // ten microseconds and sleep through the rest of a short wait.
    const uint64_t waited = now - startNs;
    if (waited > 2'000'000) std::this_thread::sleep_for(std::chrono::microseconds(waited > 100'000'000 ? 200 : 20));
    else if (spin > 16) std::this_thread::yield();
  }
}

Status MpiCommunicator::run(const sk_collective_args& a, const std::string& op, uint32_t timeoutMs,
                            const std::function<bool()>& stop) {
  const Desc d = Desc::of(a.desc);
  if (!d.valid()) return internalError("collective op " + op + ": bad descriptor");
  std::vector<int> members;
  for (int r = 0; r < 64; ++r)
    if (a.ranks >> r & 1) members.push_back(r);
  if (members.empty() || members.back() >= size_)
    return runtimeError(fmt::format("collective op {}: its group has ranks {}, but this run has {} rank{} (start it "
                                    "with mpirun -np {})",
                                    op, rankList(a.ranks), size_, size_ == 1 ? "" : "s", members.empty() ? 1 : members.back() + 1));
  const auto me = size_t(std::find(members.begin(), members.end(), rank_) - members.begin());
  if (me == members.size())
    return runtimeError(fmt::format("collective op {}: rank {} is not in its group (ranks {}); every rank that runs "
                                    "the op list must be in the groups of its collectives",
                                    op, rank_, rankList(a.ranks)));
  const size_t g = members.size(), es = kDTypeSize[d.dtype];
  // What each member sends each peer, in elements: all of `in`
  // (all_reduce, all_gather) or the peer's chunk of it.
  const bool chunked = d.kind == 2 || d.kind == 3;
  const int64_t per = chunked ? a.n_in / int64_t(g) : a.n_in;
  const auto* in = static_cast<const char*>(a.in);
  auto* out = static_cast<char*>(a.out);
  if (g == 1) {
    if (out != in) std::memmove(out, in, size_t(a.n_out) * es);
    return Status::success();
  }
  const uint64_t deadline = nowNs() + uint64_t(timeoutMs) * 1000000;
  // Headers share one tag, so a rank running another op (another plan, other
  // sizes) is read and named, not waited for. Data goes under the op's own
  // tag, so it is never taken for another op's.
  const int hdrTag = kHeaderTag, tag = int(a.tag % 16000);
  Header mine{kMagic, a.tag, a.desc, a.n_in, a.n_out, a.ranks};
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
      MPI_Irecv(&theirs[j], sizeof(Header), MPI_BYTE, members[j], hdrTag, comm_, &reqs.back());
    }
    for (size_t j = 0; j < g; ++j) {
      if (j == me) continue;
      reqs.emplace_back();
      peerOf.push_back(j);
      MPI_Isend(&mine, sizeof(Header), MPI_BYTE, members[j], hdrTag, comm_, &reqs.back());
      const char* part = in + (chunked ? size_t(per) * j * es : 0);
      reqs.emplace_back();
      peerOf.push_back(j);
      MPI_Isend(part, int(size_t(per) * es), MPI_BYTE, members[j], tag, comm_, &reqs.back());
    }
  }
  // Headers first: the first g-1 requests. Sends may wait for peers that
  // never post their receives (a mismatch): they are polled with the data.
  std::vector<MPI_Request> hdr(reqs.begin(), reqs.begin() + long(g - 1));
  auto peerName = [&](size_t i) { return "rank " + std::to_string(members[peerOf[i]]); };
  if (Status s = poll(hdr, peerName, op, deadline, timeoutMs, stop); !s) return s;
  for (size_t j = 0; j < g; ++j) {
    if (j == me) continue;
    const Header& h = theirs[j];
    if (h.magic == kMagic && h.tag == a.tag && h.desc == a.desc && h.nIn == a.n_in && h.nOut == a.n_out &&
        h.ranks == a.ranks)
      continue;
    broken_ = true;
    std::string diff;
    if (h.magic != kMagic) diff = "a message that is not a superkernel collective";
    else if (h.desc != a.desc || h.ranks != a.ranks) diff = what(h) + " over ranks " + rankList(h.ranks);
    else if (h.nIn != a.n_in || h.nOut != a.n_out) diff = "the same collective with buffers of " + what(h);
    else diff = "another op (its op list differs from this rank's: another op here, or other collectives before it)";
    return runtimeError(fmt::format(
        "collective op {} on rank {} ({} over ranks {}): rank {} runs {}: ranks disagree on the plan (every rank must "
        "run the same op list, with the same collectives, buffer sizes and groups)",
        op, rank_, what(mine), rankList(a.ranks), members[j], diff));
  }
  std::vector<MPI_Request> data;
  std::vector<size_t> dataPeer;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (size_t j = 0; j < g; ++j) {
      if (j == me) continue;
      recv[j].resize(size_t(per) * es);
      data.emplace_back();
      dataPeer.push_back(j);
      MPI_Irecv(recv[j].data(), int(recv[j].size()), MPI_BYTE, members[j], tag, comm_, &data.back());
    }
  }
  for (size_t i = g - 1; i < reqs.size(); ++i) {
    data.push_back(reqs[i]);
    dataPeer.push_back(peerOf[i]);
  }
  auto dataName = [&](size_t i) { return "rank " + std::to_string(members[dataPeer[i]]); };
  if (Status s = poll(data, dataName, op, deadline, timeoutMs, stop); !s) return s;

  // Member j's part: what it sent (recv[j]) or, for this rank, its own.
  auto part = [&](size_t j) -> const void* {
    if (j != me) return recv[j].data();
    return in + (chunked ? size_t(per) * me * es : 0);
  };
  std::vector<const void*> src(g);
  for (size_t j = 0; j < g; ++j) src[j] = part(j);
  switch (d.kind) {
    case 0:  // all_reduce: in and out are the same elements or disjoint (validated)
    case 2:  // reduce_scatter: this rank's chunk of every input
      combineAny(out, src, per, d.dtype, d.reduce);
      break;
    case 1:  // all_gather: out = parts in group order (out never overlaps in)
      for (size_t j = 0; j < g; ++j) std::memcpy(out + size_t(per) * j * es, src[j], size_t(per) * es);
      break;
    case 3: {  // all_to_all: out chunk j = member j's chunk for this rank
      // In place, this rank's own chunk is overwritten in turn: copy it first.
      std::vector<char> own(static_cast<const char*>(src[me]), static_cast<const char*>(src[me]) + size_t(per) * es);
      src[me] = own.data();
      for (size_t j = 0; j < g; ++j) std::memcpy(out + size_t(per) * j * es, src[j], size_t(per) * es);
      break;
    }
    default: break;
  }
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

bool mpiBuiltIn() { return true; }

Expected<std::shared_ptr<Communicator>> mpiCommunicator(const void* mpiComm) {
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
  return std::shared_ptr<Communicator>(std::make_shared<MpiCommunicator>(comm, rank, size));
}

void finalizeMpi() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (gMpiInitialisedHere && !finalized) MPI_Finalize();
}

}  // namespace sk

#endif  // SK_HAVE_MPI
