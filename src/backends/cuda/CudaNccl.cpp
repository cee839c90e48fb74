// NCCL for the cuda target's collectives (CudaNccl.h).
#include "backends/cuda/CudaNccl.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include <spdlog/spdlog.h>

#include "superkernel/frontend/OpList.h"
#include "support/CollectiveTag.h"
#include "support/DynamicLibrary.h"

namespace sk {

std::string NcclApi::describe(const char* call, int err) const {
  const char* s = getErrorString ? getErrorString(err) : nullptr;
  return fmt::format("{} failed: {} (NCCL error {})", call, s ? s : "unknown error", err);
}

namespace {

struct NcclLoaded {
  NcclApi api;
  std::string error;  // non-empty: not usable
};

NcclLoaded bindNccl(void* h, const std::string& path) {
  NcclLoaded L;
  L.api.path = path;
  std::string missing;
  auto& a = L.api;
  bindSymbol(h, "ncclGetVersion", a.getVersion, &missing);
  bindSymbol(h, "ncclGetUniqueId", a.getUniqueId, &missing);
  bindSymbol(h, "ncclCommInitRank", a.commInitRank, &missing);
  bindSymbol(h, "ncclCommDestroy", a.commDestroy, &missing);
  bindSymbol(h, "ncclMemAlloc", a.memAlloc, &missing);
  bindSymbol(h, "ncclMemFree", a.memFree, &missing);
  bindSymbol(h, "ncclCommWindowRegister", a.commWindowRegister, &missing);
  bindSymbol(h, "ncclCommWindowDeregister", a.commWindowDeregister, &missing);
  bindSymbol(h, "ncclTeamLsa", a.teamLsa, &missing);
  bindSymbol(h, "ncclGetErrorString", a.getErrorString, &missing);
  // Windows and ncclTeamLsa came with NCCL's device API (2.27/2.28): an older NCCL lacks them.
  if (!missing.empty())
    L.error = fmt::format("{} lacks {} (the cuda target's collectives need NCCL 2.28 or newer, with its device "
                          "API: CUDA 13's toolkit ships it)",
                          path, missing);
  return L;
}

constexpr const char* kNcclInstall =
    "install NCCL 2.28 or newer (CUDA 13's toolkit ships libnccl.so.2 in /usr/local/cuda/lib64; or the "
    "libnccl2 package), or set SK_NCCL to the library's path";

const NcclLoaded& ncclLoaded() {
  static const NcclLoaded L = [] {
    std::vector<std::string> names;
    if (const char* env = std::getenv("SK_NCCL"); env && *env) names.push_back(env);
    for (const char* n : {"libnccl.so.2", "/usr/local/cuda/lib64/libnccl.so.2", "/usr/local/cuda/lib/libnccl.so.2"})
      names.push_back(n);
    const OpenedLibrary lib = openFirstLibrary(names);
    if (!lib.handle) {
      NcclLoaded e;
      e.error = std::string("libnccl.so.2 not found: ") + kNcclInstall + lib.tried;
      return e;
    }
    return bindNccl(lib.handle, lib.path);
  }();
  return L;
}

std::string ncclWhere(const Communicator& c) { return fmt::format("NCCL on rank {} of {}", c.rank(), c.size()); }

}  // namespace

Expected<NcclApi> loadNcclFrom(const std::string& path) {
  void* h = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* e = ::dlerror();
    return runtimeError(fmt::format("cannot load {}: {}; {}", path, e ? e : "dlopen failed", kNcclInstall));
  }
  NcclLoaded L = bindNccl(h, path);
  if (!L.error.empty()) return runtimeError(L.error);
  return std::move(L.api);
}

Expected<const NcclApi*> ncclRuntime() {
  const NcclLoaded& L = ncclLoaded();
  if (!L.error.empty()) return runtimeError("the cuda target's collectives need NCCL: " + L.error);
  return &L.api;
}

CudaNccl::~CudaNccl() {
  if (!api_) return;  // never loaded NCCL: a device that ran no collective
  // Reverse order: the windows, last registered first, then the communicator.
  for (auto it = windows_.rbegin(); it != windows_.rend(); ++it) {
    if (it->win)
      if (int e = api_->commWindowDeregister(nccl_, it->win); e != 0)
        spdlog::warn("{}", api_->describe("ncclCommWindowDeregister", e));
    if (it->buf)
      if (int e = api_->memFree(it->buf); e != 0) spdlog::warn("{}", api_->describe("ncclMemFree", e));
  }
  if (nccl_)
    if (int e = api_->commDestroy(nccl_); e != 0) spdlog::warn("{}", api_->describe("ncclCommDestroy", e));
}

Status CudaNccl::init(const NcclApi& api) {
  const uint32_t rank = comm_->rank(), size = comm_->size();
  if (size > 64) return runtimeError(fmt::format("{}: collectives run over at most 64 ranks", ncclWhere(*comm_)));
  // Rank 0's unique id to every rank: an all-gather of i32 words over all ranks, each keeping rank 0's part.
  static_assert(sizeof(NcclUniqueId) % 4 == 0);
  constexpr int64_t kWords = sizeof(NcclUniqueId) / 4;
  NcclUniqueId id{};
  if (rank == 0)
    if (int e = api.getUniqueId(&id); e != 0) return runtimeError(ncclWhere(*comm_) + ": " + api.describe("ncclGetUniqueId", e));
  std::vector<int32_t> mine(kWords), all(static_cast<size_t>(kWords) * size);
  std::memcpy(mine.data(), &id, sizeof id);
  const uint64_t mask = size == 64 ? ~uint64_t{0} : (uint64_t{1} << size) - 1;
  const std::string name = "sk.nccl.unique_id";
  const uint64_t desc = uint64_t(CollectiveKind::AllGather) | uint64_t(DType::I32) << 16;
  const sk_collective_args args{mine.data(), all.data(), kWords, kWords * int64_t(size), desc, mask,
                                collectiveTag(name, 0)};
  SK_RETURN_IF_ERROR(comm_->run(args, name, waitMs_, [] { return false; }));
  std::memcpy(&id, all.data(), sizeof id);  // rank 0's part

  void* c = nullptr;
  if (int e = api.commInitRank(&c, int(size), id, int(rank)); e != 0)
    return runtimeError(ncclWhere(*comm_) + ": " +
                        api.describe(fmt::format("ncclCommInitRank({} ranks, rank {})", size, rank).c_str(), e) +
                        (size > 1 ? " (each rank needs a GPU of its own: NCCL refuses two ranks on one GPU)" : ""));
  api_ = &api;
  nccl_ = c;
  lsa_ = api.teamLsa(c);
  // The kernel reads every member with NVLink loads: every rank must be load/store accessible.
  if (lsa_.nRanks != int(size) || lsa_.stride != 1)
    return runtimeError(fmt::format(
        "{}: NCCL's LSA team (ranks reachable by load/store, one NVLink domain) has {} of the {} ranks; the cuda "
        "target's collectives need every rank in it (run the ranks on one node's NVLink-connected GPUs)",
        ncclWhere(*comm_), lsa_.nRanks, size));
  return Status::success();
}

bool CudaNccl::needsBinding(const SymbolFn& symbol) {
  using BoundFn = int (*)();
  for (int t = 0; t <= int(DType::Bool); ++t)
    if (auto b = reinterpret_cast<BoundFn>(symbol(("sk_nccl_is_bound_" + std::string(dtypeName(DType(t)))).c_str())))
      if (!b()) return true;
  return false;
}

void CudaNccl::defer(const void* key, const std::string& label) {
  std::lock_guard lock(mu_);
  pending_[key] = Pending{label, ""};
  anyPending_.store(true, std::memory_order_release);
}

Status CudaNccl::bindPending(const void* key, const SymbolFn& symbol) {
  if (!anyPending_.load(std::memory_order_acquire)) return Status::success();
  std::string label;
  {
    std::lock_guard lock(mu_);
    auto it = pending_.find(key);
    if (it == pending_.end()) return Status::success();
    if (!it->second.error.empty()) return runtimeError(it->second.error);
    label = it->second.label;
  }
  Status s = bind(symbol, label);
  std::lock_guard lock(mu_);
  if (!s) {
    pending_[key].error = s.error().message();
    return s;
  }
  pending_.erase(key);
  anyPending_.store(!pending_.empty(), std::memory_order_release);
  return s;
}

Status CudaNccl::bind(const SymbolFn& symbol, const std::string& label) {
  using MaxFn = unsigned long long (*)();
  using BindFn = int (*)(const void*, size_t);
  using BoundFn = int (*)();
  struct Object {
    std::string dtype;
    BindFn bindFn;
  };
  std::vector<Object> objects;
  uint64_t maxBytes = 0;
  for (int t = 0; t <= int(DType::Bool); ++t) {
    const std::string dt = dtypeName(DType(t));
    auto b = reinterpret_cast<BindFn>(symbol(("sk_nccl_bind_" + dt).c_str()));
    if (!b) continue;
    auto m = reinterpret_cast<MaxFn>(symbol(("sk_nccl_max_bytes_" + dt).c_str()));
    auto bound = reinterpret_cast<BoundFn>(symbol(("sk_nccl_is_bound_" + dt).c_str()));
    if (!m || !bound)
      return internalError(fmt::format("SuperKernel {}: sk_nccl_bind_{} without sk_nccl_max_bytes_{} or "
                                       "sk_nccl_is_bound_{}", label, dt, dt, dt));
    if (bound()) continue;  // this loaded instance has its window already
    maxBytes = std::max<uint64_t>(maxBytes, m());
    objects.push_back({dt, b});
  }
  if (objects.empty()) return Status::success();  // no collective in this SuperKernel, or bound already
  const std::string where = label.empty() ? "a SuperKernel's collectives" : "SuperKernel " + label + "'s collectives";
  if (!comm_)
    return runtimeError(where + ": this cuda device has no communicator (run the step through a Session created "
                                "with SessionOptions::communicator, e.g. sk::mpiCommunicator(), or sk-compile under "
                                "mpirun)");
  std::lock_guard lock(mu_);
  if (!api_) {
    SK_ASSIGN_OR_RETURN(const NcclApi* api, apiFn_());
    SK_RETURN_IF_ERROR(init(*api));
    int v = 0;
    if (api->getVersion(&v) == 0)
      spdlog::debug("cuda collectives: NCCL {} ({}), {}", v, api->path, comm_->describe());
  }
  const NcclApi& api = *api_;
  Window w;
  const uint64_t bytes = kNcclWindowHeaderBytes + ((std::max<uint64_t>(maxBytes, 1) + 4095) / 4096) * 4096;
  if (int e = api.memAlloc(&w.buf, bytes); e != 0 || !w.buf)
    return runtimeError(fmt::format("{}: {}: {}", where, ncclWhere(*comm_),
                                    e != 0 ? api.describe(fmt::format("ncclMemAlloc({} bytes)", bytes).c_str(), e)
                                           : std::string("ncclMemAlloc gave no memory")));
  // The barrier's arrival counts start at zero on every rank before any peer can write them: registration
  // is collective, so no rank passes it before every rank has zeroed its header.
  if (Status s = zero_(w.buf, kNcclWindowHeaderBytes); !s) {
    (void)api.memFree(w.buf);
    return s.error().context(where + ": zeroing the NCCL window's header");
  }
  if (int e = api.commWindowRegister(nccl_, w.buf, bytes, &w.win, kNcclWinCollSymmetric); e != 0 || !w.win) {
    (void)api.memFree(w.buf);
    return runtimeError(fmt::format("{}: {}: {}", where, ncclWhere(*comm_),
                                    e != 0 ? api.describe("ncclCommWindowRegister", e)
                                           : std::string("ncclCommWindowRegister gave no window")));
  }
  windows_.push_back(w);
  NcclBinding b;
  b.window = w.win;
  b.dataOff = kNcclWindowHeaderBytes;
  b.dataBytes = bytes - kNcclWindowHeaderBytes;
  b.waitNs = uint64_t(waitMs_) * 1000000;
  b.rank = int32_t(comm_->rank());
  b.nranks = int32_t(comm_->size());
  b.lsaBase = b.rank - lsa_.rank;
  b.lsaSize = lsa_.nRanks;
  for (const Object& o : objects)
    if (int e = o.bindFn(&b, sizeof b); e != 0)
      return runtimeError(fmt::format("{}: binding the {} collective object to its NCCL window: {}", where, o.dtype,
                                      e < 0 ? std::string("its binding's layout differs from the host's (rebuild)")
                                            : fmt::format("cudaMemcpyToSymbol failed (cuda error {})", e)));
  return Status::success();
}

}  // namespace sk
