// Collectives through shared memory, for ranks that all share one host
// (docs/COLLECTIVES.md, "Between ranks of one host").
//
// Why: a decode step's collectives are small (a hidden vector: kilobytes)
// and many (two per layer), so what one costs is latency. Over MPI each is
// two rounds of non-blocking messages (the header, then the data), each
// round a few MPI calls under the communicator's lock; here it is one copy
// into this rank's slot, one release store per peer, and the combine reading
// the peers' slots in place.
//
// The protocol keeps what the MPI transport guarantees (CollectiveWire.h):
// every member shows each peer a header first and the peer checks it before
// reading any data (ranks that disagree fail with the same error naming the
// op and the rank), every wait is bounded by the wait limit and ends early
// when the launch fails, and the combine runs in group order on every rank.
//
// Each rank owns one segment and is its only writer. For every peer it has
// an outbox (a sequence number and the header of its latest collective with
// that peer) and an ack (how many of that peer's collectives it has finished
// reading), then one data slot holding the `in` of its latest collective.
// Counting per pair of ranks, not per rank, is what lets groups be subsets:
// two tensor-parallel pairs of a 4-rank run never see each other's counts.
// A collective:
//   1. waits until every peer it published to has acked (its slot and
//      outboxes are free again: nobody still reads them);
//   2. copies `in` to its slot, writes each group peer's outbox header and
//      publishes it (release store of the next sequence number);
//   3. waits for each group peer's publication to it (acquire) and checks
//      the header;
//   4. combines from the peers' slots, in group order, into `out`;
//   5. acks each group peer.
// Waiting for acks at the start of the next collective instead of the end of
// this one saves a second meeting per collective: a peer that is still
// reading is almost always done by then.
//
// Segments are POSIX shared memory: each rank creates its own under a
// random name, the names are all-gathered over MPI, every rank maps every
// peer's, and once all have mapped (an all-reduce of success) each unlinks
// its own. From then on nothing is left in /dev/shm, whatever happens to the
// ranks, and teardown is local (munmap): no collective call in a destructor
// that a dead peer could hang. Space is reserved with posix_fallocate, so a
// full /dev/shm is an error at creation, never a SIGBUS in a collective.
#ifdef SK_HAVE_MPI

#include <fcntl.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <random>
#include <vector>

#include "Backoff.h"
#include "CollectiveWire.h"
#include "MpiTransports.h"
#include "superkernel/runtime/Executor.h"

namespace sk {

namespace {

constexpr uint64_t kSegmentMagic = 0x736b73686d303031ull;  // "skshm001"
constexpr size_t kMaxRanks = 64;
constexpr uint32_t kDefaultSlotBytes = 4u << 20;
constexpr uint32_t kMinSlotBytes = 64, kMaxSlotBytes = 1u << 30;

// Cache lines written by one rank and polled by another each get their own
// (128 bytes: adjacent-line prefetch pairs 64-byte lines on x86).
struct alignas(128) Outbox {
  uint64_t seq;  // collectives published to this peer (atomic_ref)
  coll::Header header;
};
struct alignas(128) Ack {
  uint64_t done;  // this peer's collectives finished reading (atomic_ref)
};
struct Control {
  uint64_t magic;
  uint64_t slotBytes;
  Outbox out[kMaxRanks];
  Ack ack[kMaxRanks];
};
constexpr size_t kSlotOffset = (sizeof(Control) + 4095) / 4096 * 4096;

uint64_t load(uint64_t& v) { return std::atomic_ref<uint64_t>(v).load(std::memory_order_acquire); }
void store(uint64_t& v, uint64_t x) { std::atomic_ref<uint64_t>(v).store(x, std::memory_order_release); }

enum class Transport : int32_t { Invalid = -1, Auto = 0, Shm = 1, Mpi = 2 };

// This rank's settings, parsed strictly: a typo must not quietly pick
// another transport on one rank than on the others.
struct Settings {
  Transport transport = Transport::Auto;
  uint32_t slotBytes = kDefaultSlotBytes;
  std::string error;  // why Invalid
};

// `options` first, then the environment, then the defaults.
Settings settingsOf(const CollectiveOptions& options) {
  Settings s;
  if (options.transport) {
    s.transport = *options.transport == CollectiveTransport::Mpi            ? Transport::Mpi
                  : *options.transport == CollectiveTransport::SharedMemory ? Transport::Shm
                                                                            : Transport::Auto;
  } else if (const char* t = std::getenv("SK_COLLECTIVE_TRANSPORT"); t && *t) {
    const std::string v = t;
    if (v == "auto") s.transport = Transport::Auto;
    else if (v == "shm") s.transport = Transport::Shm;
    else if (v == "mpi") s.transport = Transport::Mpi;
    else {
      s.transport = Transport::Invalid;
      s.error = "SK_COLLECTIVE_TRANSPORT='" + v + "': expected auto, shm or mpi";
    }
  }
  if (options.shmSlotBytes) {
    if (*options.shmSlotBytes < kMinSlotBytes || *options.shmSlotBytes > kMaxSlotBytes) {
      s.transport = Transport::Invalid;
      s.error = fmt::format("CollectiveOptions::shmSlotBytes {}: expected {}..{}", *options.shmSlotBytes,
                            kMinSlotBytes, kMaxSlotBytes);
    } else {
      s.slotBytes = *options.shmSlotBytes;
    }
  } else if (const char* b = std::getenv("SK_COLLECTIVE_SHM_BYTES"); b && s.transport != Transport::Invalid) {
    auto v = parseBoundedU32("SK_COLLECTIVE_SHM_BYTES", b, kMinSlotBytes, kMaxSlotBytes);
    if (v) {
      s.slotBytes = *v;
    } else {
      s.transport = Transport::Invalid;
      s.error = v.error().message();
    }
  }
  return s;
}

const char* transportName(Transport t) {
  switch (t) {
    case Transport::Auto: return "auto";
    case Transport::Shm: return "shm";
    case Transport::Mpi: return "mpi";
    default: return "invalid";
  }
}

// One rank's segment as this process maps it.
struct Mapping {
  void* base = nullptr;
  size_t bytes = 0;
  Control& control() const { return *static_cast<Control*>(base); }
  char* slot() const { return static_cast<char*>(base) + kSlotOffset; }
};

void unmapAll(std::vector<Mapping>& maps) {
  for (Mapping& m : maps)
    if (m.base) munmap(m.base, m.bytes), m.base = nullptr;
}

class ShmCommunicator final : public Communicator {
 public:
  ShmCommunicator(std::unique_ptr<Communicator> mpi, int rank, int size, uint32_t slotBytes, std::vector<Mapping> maps)
      : mpi_(std::move(mpi)), rank_(rank), size_(size), slotBytes_(slotBytes), maps_(std::move(maps)) {}
  ~ShmCommunicator() override { unmapAll(maps_); }
  uint32_t rank() const override { return uint32_t(rank_); }
  uint32_t size() const override { return uint32_t(size_); }
  std::string describe() const override {
    // Whole KiB in KiB, any other size in bytes: a slot of 100 or 1500 bytes (both allowed) must not read as
    // "0 KiB" or "1 KiB", which tells whoever reads it that collectives of that size fit when they do not.
    const std::string slot =
        slotBytes_ % 1024 == 0 ? fmt::format("{} KiB", slotBytes_ / 1024) : fmt::format("{}-byte", slotBytes_);
    return fmt::format("{}, through shared memory on this host ({} slots)", mpi_->describe(), slot);
  }
  Status run(const sk_collective_args& a, const std::string& opName, uint32_t timeoutMs,
             const std::function<bool()>& stop) override;

 private:
  // Polls `ready` until it holds; the error names `peer` when the deadline passes first.
  template <typename Ready>
  Status waitFor(Ready ready, int peer, const std::string& op, uint64_t deadlineNs, uint32_t timeoutMs,
                 const std::function<bool()>& stop);
  Control& control(int r) const { return maps_[size_t(r)].control(); }

  std::unique_ptr<Communicator> mpi_;
  int rank_ = 0, size_ = 1;
  uint32_t slotBytes_ = 0;
  std::vector<Mapping> maps_;
  // One collective at a time on this rank (two workers may reach two of
  // different streams): the counts below are this rank's side of each pair.
  std::mutex mu_;
  uint64_t published_[kMaxRanks] = {};  // collectives published to each peer
  uint64_t received_[kMaxRanks] = {};   // each peer's collectives read
  // A collective failed after this rank published: its counts no longer
  // match its peers', so any later collective would read stale slots.
  std::string broken_;
};

template <typename Ready>
Status ShmCommunicator::waitFor(Ready ready, int peer, const std::string& op, uint64_t deadlineNs, uint32_t timeoutMs,
                                const std::function<bool()>& stop) {
  if (ready()) return Status::success();  // most often: the peer got there first
  const uint64_t startNs = rt::nowNs();
  for (uint32_t spin = 1;; ++spin) {
    if (ready()) return Status::success();
    // The launch failing elsewhere ends the wait; polled every 64th time, it is a call through std::function.
    if (spin % 64 == 0 && stop())
      return runtimeError(fmt::format("collective op {} on rank {}: stopped, the launch failed", op, rank_));
    // The first polls only pause: a clock read costs more than a poll (a profile of back-to-back collectives
    // spent a sixth of rank 0's time in clock_gettime).
    if (spin < 16) {
      coll::pace(0, spin);
      continue;
    }
    const uint64_t now = rt::nowNs();
    if (now >= deadlineNs) return runtimeError(coll::noAnswer(op, rank_, "rank " + std::to_string(peer), timeoutMs));
    coll::pace(now - startNs, spin);
  }
}

Status ShmCommunicator::run(const sk_collective_args& a, const std::string& op, uint32_t timeoutMs,
                            const std::function<bool()>& stop) {
  std::lock_guard<std::mutex> lock(mu_);
  auto call = coll::callOf(a, op, rank_, size_);
  if (!call) return call.error();
  const coll::Call& c = *call;
  const size_t g = c.size(), bytes = c.perPeerBytes();
  if (g == 1) {
    if (a.out != a.in) std::memmove(a.out, a.in, size_t(a.n_out) * c.elementSize);
    return Status::success();
  }
  if (!broken_.empty())
    return runtimeError(fmt::format("collective op {} on rank {}: an earlier collective on this communicator failed "
                                    "({}); its ranks are out of step, so no later one can run: end the run",
                                    op, rank_, broken_));
  const uint64_t deadline = rt::nowNs() + uint64_t(timeoutMs) * 1000000;
  const coll::Header mine{coll::kMagic, a.tag, a.desc, a.n_in, a.n_out, a.ranks};
  const size_t inBytes = size_t(a.n_in) * c.elementSize;
  // Both sides decide from sizes their headers then prove equal, so a
  // collective larger than a slot goes over MPI on every member.
  const bool fits = inBytes <= slotBytes_;
  Control& self = control(rank_);
  auto fail = [&](Status s) {
    broken_ = s.error().message();
    return s;
  };

  // 1. This rank's slot and outboxes are free once every peer it published to has read its latest collective.
  for (int p = 0; p < size_; ++p) {
    if (published_[p] == 0) continue;
    Ack& theirs = control(p).ack[rank_];
    if (Status s = waitFor([&] { return load(theirs.done) >= published_[p]; }, p, op, deadline, timeoutMs, stop); !s)
      return s;  // nothing published yet: the counts still match
  }
  // 2. Publish: data first, then each peer's header, then its sequence number (release: orders both before it).
  if (fits) std::memcpy(maps_[size_t(rank_)].slot(), a.in, inBytes);
  for (size_t j = 0; j < g; ++j) {
    if (j == c.me) continue;
    Outbox& box = self.out[c.members[j]];
    box.header = mine;
    store(box.seq, ++published_[c.members[j]]);
  }
  // 3. Each peer's publication to this rank, then its header.
  for (size_t j = 0; j < g; ++j) {
    if (j == c.me) continue;
    const int p = c.members[j];
    Outbox& box = control(p).out[rank_];
    const uint64_t want = received_[p] + 1;
    if (Status s = waitFor([&] { return load(box.seq) >= want; }, p, op, deadline, timeoutMs, stop); !s)
      return fail(s);
    received_[p] = want;
    coll::Header theirs;
    std::memcpy(&theirs, &box.header, sizeof theirs);
    if (std::string e = coll::mismatch(mine, theirs, op, rank_, p); !e.empty()) return fail(runtimeError(e));
  }
  // 4. Combine from the slots in group order (this rank's own part from its slot too: `out` may alias `in`).
  Status result = Status::success();
  if (fits) {
    coll::Parts src{};
    for (size_t j = 0; j < g; ++j) src[j] = maps_[size_t(c.members[j])].slot() + (c.chunked ? bytes * c.me : 0);
    coll::finish(c, a, src);
  } else {
    const uint64_t now = rt::nowNs();
    const auto leftMs = uint32_t(std::max<uint64_t>(1, (deadline > now ? deadline - now : 0) / 1000000));
    result = mpi_->run(a, op, leftMs, stop);
    if (!result) return fail(result);
  }
  // 5. Done reading every group peer's slot and header.
  for (size_t j = 0; j < g; ++j)
    if (j != c.me) store(self.ack[c.members[j]].done, received_[c.members[j]]);
  return result;
}

// Every rank's answer to one yes/no question, over MPI: whether all said yes.
bool allAgree(MPI_Comm comm, bool mine) {
  int in = mine ? 1 : 0, out = 0;
  if (MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS) return false;
  return out == 1;
}

// Creates and maps this rank's segment; "" or why not.
std::string createOwn(size_t bytes, const std::string& name, Mapping& m) {
  const int fd = shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd < 0) return fmt::format("shm_open({}) failed: {}", name, std::strerror(errno));
  std::string why;
  if (int e = posix_fallocate(fd, 0, off_t(bytes)); e != 0)
    why = fmt::format("reserving {} bytes of shared memory for {} failed: {} (is /dev/shm full or too small?)", bytes,
                      name, std::strerror(e));
  if (why.empty()) {
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) why = fmt::format("mmap of {} failed: {}", name, std::strerror(errno));
    else m = {p, bytes};
  }
  close(fd);
  if (!why.empty()) shm_unlink(name.c_str());
  return why;
}

std::string mapPeer(size_t bytes, const std::string& name, Mapping& m) {
  const int fd = shm_open(name.c_str(), O_RDWR, 0);
  if (fd < 0) return fmt::format("shm_open({}) failed: {}", name, std::strerror(errno));
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  const int e = errno;
  close(fd);
  if (p == MAP_FAILED) return fmt::format("mmap of {} failed: {}", name, std::strerror(e));
  m = {p, bytes};
  if (m.control().magic != kSegmentMagic) return fmt::format("{} is not a superkernel collective segment", name);
  return {};
}

}  // namespace

Expected<std::shared_ptr<Communicator>> withSharedMemory(MPI_Comm comm, int rank, int size,
                                                         std::unique_ptr<Communicator> mpi,
                                                         const CollectiveOptions& options) {
  // Every rank's settings, so that ranks never run different transports (they would never meet).
  const Settings mine = settingsOf(options);
  int64_t my[2] = {int64_t(mine.transport), int64_t(mine.slotBytes)};
  std::vector<int64_t> all(size_t(size) * 2);
  if (MPI_Allgather(my, 2, MPI_INT64_T, all.data(), 2, MPI_INT64_T, comm) != MPI_SUCCESS)
    return runtimeError("MPI_Allgather of the collective transport settings failed");
  if (mine.transport == Transport::Invalid) return badInput(mine.error);
  for (int r = 0; r < size; ++r) {
    const auto t = Transport(all[size_t(r) * 2]);
    const auto b = all[size_t(r) * 2 + 1];
    if (t == Transport::Invalid)
      return badInput(fmt::format("rank {} has an invalid collective transport setting (its own error says which); "
                                  "every rank must set the same",
                                  r));
    if (t != mine.transport || b != int64_t(mine.slotBytes))
      return badInput(fmt::format(
          "ranks disagree on the collective transport: rank {} has transport {} with {}-byte slots, rank {} has {} "
          "with {}; set the same on every rank (SK_COLLECTIVE_TRANSPORT and SK_COLLECTIVE_SHM_BYTES, which mpirun -x "
          "passes on, or CollectiveOptions)",
          rank, transportName(mine.transport), mine.slotBytes, r, transportName(t), b));
  }
  auto plain = [&] { return std::shared_ptr<Communicator>(std::move(mpi)); };
  if (mine.transport == Transport::Mpi || size == 1) return plain();

  // Shared memory only if every rank shares this host.
  MPI_Comm node = MPI_COMM_NULL;
  int nodeSize = 0;
  if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node) != MPI_SUCCESS)
    return runtimeError("MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) failed");
  MPI_Comm_size(node, &nodeSize);
  MPI_Comm_free(&node);
  if (nodeSize != size) {
    if (mine.transport == Transport::Shm)
      return badInput(fmt::format("SK_COLLECTIVE_TRANSPORT=shm, but only {} of the {} ranks share rank {}'s host; "
                                  "shared memory needs every rank on one host (auto uses MPI here)",
                                  nodeSize, size, rank));
    spdlog::info("collectives: {} of {} ranks on this host: MPI messages", nodeSize, size);
    return plain();
  }
  if (size_t(size) > kMaxRanks) return plain();  // mpiCommunicator refuses more already

  const size_t bytes = kSlotOffset + mine.slotBytes;
  std::vector<Mapping> maps(static_cast<size_t>(size));
  std::random_device rd;
  const std::string name =
      fmt::format("/superkernel-coll-{}-{:08x}{:08x}", getpid(), uint32_t(rd()), uint32_t(rd()));
  std::string why = createOwn(bytes, name, maps[size_t(rank)]);
  if (why.empty()) {
    maps[size_t(rank)].control().magic = kSegmentMagic;
    maps[size_t(rank)].control().slotBytes = mine.slotBytes;
  }
  const bool created = allAgree(comm, why.empty());
  char names[kMaxRanks][64] = {};
  if (created) {
    char own[64] = {};
    std::snprintf(own, sizeof own, "%s", name.c_str());
    if (MPI_Allgather(own, 64, MPI_CHAR, names, 64, MPI_CHAR, comm) != MPI_SUCCESS) why = "MPI_Allgather failed";
    for (int r = 0; r < size && why.empty(); ++r)
      if (r != rank) why = mapPeer(bytes, std::string(names[r], strnlen(names[r], 64)), maps[size_t(r)]);
  }
  // All mapped (or not): each unlinks its own, so nothing is left behind whatever happens next.
  const bool mapped = created && allAgree(comm, why.empty());
  if (maps[size_t(rank)].base) shm_unlink(name.c_str());
  if (!mapped) {
    unmapAll(maps);
    const std::string what = why.empty() ? "another rank could not set up shared memory" : why;
    if (mine.transport == Transport::Shm)
      return runtimeError("SK_COLLECTIVE_TRANSPORT=shm: rank " + std::to_string(rank) + ": " + what);
    spdlog::warn("collectives: shared memory between the ranks failed ({}); using MPI messages", what);
    return plain();
  }
  return std::shared_ptr<Communicator>(
      std::make_shared<ShmCommunicator>(std::move(mpi), rank, size, mine.slotBytes, std::move(maps)));
}

}  // namespace sk

#endif  // SK_HAVE_MPI
