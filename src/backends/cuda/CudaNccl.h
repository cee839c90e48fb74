// Private: NCCL for the cuda target's collectives (docs/COLLECTIVES.md, "On a GPU: NCCL's device API").
//
// libnccl is loaded with dlopen when a loaded SuperKernel has a collective, never linked: the library builds
// and runs without NCCL, and only a plan with collectives on a real GPU needs it. Looked for: $SK_NCCL (a
// path), libnccl.so.2, then /usr/local/cuda/lib64/libnccl.so.2 (CUDA 13's toolkit ships NCCL there).
//
// What a device does with it (CudaNccl), before the first run of a SuperKernel that has a collective (not at
// its load: the Session loads a plan's steps on parallel threads, in an order that differs between ranks,
// while every rank runs them in plan order, and NCCL's set-up calls are collective; and a load that fails is
// taken for a corrupt cache entry). Once per process and device:
//   1. rank 0 of the Session's Communicator calls ncclGetUniqueId; the Communicator hands its bytes to every
//      rank (an all-gather of which each rank keeps rank 0's part: it has no broadcast, and an all-gather has
//      its checks and wait limit);
//   2. ncclCommInitRank(size, id, rank): one NCCL world over the Communicator's ranks; ncclTeamLsa must hold
//      every rank (the kernel reads its peers with NVLink loads, ncclGetLsaPointer);
// and per loaded SuperKernel with collectives (bind; its objects say whether they are bound, sk_nccl_is_bound_*):
//   3. ncclMemAlloc + ncclCommWindowRegister(NCCL_WIN_COLL_SYMMETRIC) of a window: a 4 KiB header (the
//      group barrier's arrival counts, zeroed before registration) and a data slot of the plan's largest
//      collective input (the collective objects' sk_nccl_max_bytes_<dtype>);
//   4. each collective object's binding (sk_nccl_bind_<dtype>): window, slot, rank, LSA base, wait limit.
// Teardown in reverse: windows deregistered and freed (last bound first), then ncclCommDestroy.
//
// No ncclDevComm is made: the kernel uses the window and ncclGetLsaPointer only. A devComm carries NCCL's
// LSA barriers, which the kernel does not use (they span the whole LSA team, a group may be a subset, and
// their wait has no bound: collective_kernel.cu says why).
//
// Every rank loads the same SuperKernels in the same order (the same plan: the planner's collective
// signature), so the collective NCCL calls (init, window registration) meet. Unverified on hardware: this
// workplace has one GPU, and NCCL refuses two ranks on one GPU; the fake library test checks the sequence.
#pragma once

#include <cstddef>
#include <cstdint>
#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "superkernel/runtime/Communicator.h"
#include "superkernel/support/Error.h"

namespace sk {

struct NcclUniqueId {  // ncclUniqueId (NCCL_UNIQUE_ID_BYTES)
  char internal[128];
};
struct NcclTeam {  // ncclTeam_t
  int nRanks, rank, stride;
};
inline constexpr int kNcclWinCollSymmetric = 0x01;  // NCCL_WIN_COLL_SYMMETRIC

/// The entry points used (ncclResult_t is int here; 0 is ncclSuccess).
struct NcclApi {
  std::string path;
  int (*getVersion)(int*) = nullptr;
  int (*getUniqueId)(NcclUniqueId*) = nullptr;
  int (*commInitRank)(void** comm, int nranks, NcclUniqueId id, int rank) = nullptr;
  int (*commDestroy)(void* comm) = nullptr;
  int (*memAlloc)(void** ptr, size_t size) = nullptr;
  int (*memFree)(void* ptr) = nullptr;
  int (*commWindowRegister)(void* comm, void* buff, size_t size, void** win, int flags) = nullptr;
  int (*commWindowDeregister)(void* comm, void* win) = nullptr;
  NcclTeam (*teamLsa)(void* comm) = nullptr;
  const char* (*getErrorString)(int) = nullptr;

  /// "ncclCommInitRank failed: <ncclGetErrorString> (NCCL error 3)".
  std::string describe(const char* call, int err) const;
};

/// libnccl from `path` alone (tests bind a stand-in through it). Never closed.
Expected<NcclApi> loadNcclFrom(const std::string& path);
/// The process's libnccl (the order above), loaded once: a Runtime error naming what to install when absent.
Expected<const NcclApi*> ncclRuntime();

/// collective_kernel.cu's sk_nccl_binding, field for field.
struct NcclBinding {
  void* window = nullptr;
  uint64_t dataOff = 0, dataBytes = 0, waitNs = 0;
  int32_t rank = 0, nranks = 1, lsaBase = 0, lsaSize = 1;
};
static_assert(sizeof(NcclBinding) == 48);
inline constexpr uint64_t kNcclWindowHeaderBytes = 4096;  // NCCL_WIN_REQUIRED_ALIGNMENT; inbox/sent[64], lock

class CudaNccl {
 public:
  using ApiFn = std::function<Expected<const NcclApi*>()>;
  /// Zeroes `bytes` of device memory at `p` (the cuda runtime's memcpy in the device).
  using ZeroFn = std::function<Status(void* p, size_t bytes)>;
  CudaNccl(std::shared_ptr<Communicator> communicator, uint32_t waitMs, ApiFn api, ZeroFn zero)
      : comm_(std::move(communicator)), waitMs_(waitMs), apiFn_(std::move(api)), zero_(std::move(zero)) {}
  ~CudaNccl();
  CudaNccl(const CudaNccl&) = delete;
  CudaNccl& operator=(const CudaNccl&) = delete;

  using SymbolFn = std::function<void*(const char*)>;
  /// Whether a loaded SuperKernel has a collective object not bound yet (dlsym only: no NCCL call).
  static bool needsBinding(const SymbolFn& symbol);
  /// Marks the SuperKernel `key` (its loaded instance) to be bound before its next run (bindPending).
  void defer(const void* key, const std::string& label);
  /// Before each run: binds `key` if it was deferred (else nothing, at the cost of one atomic load). A failure
  /// is returned again on every later run of it.
  Status bindPending(const void* key, const SymbolFn& symbol);
  /// Binds a loaded SuperKernel now: nothing when it has no unbound collective object (no sk_nccl_bind_<dtype>
  /// among `symbol`'s answers, or all bound), else steps 1-4 above. Errors name the NCCL call, the rank and
  /// what to do.
  Status bind(const SymbolFn& symbol, const std::string& label);

 private:
  Status init(const NcclApi& api);
  struct Window {
    void* buf = nullptr;
    void* win = nullptr;
  };
  std::shared_ptr<Communicator> comm_;
  uint32_t waitMs_;
  ApiFn apiFn_;
  ZeroFn zero_;
  std::mutex mu_;
  const NcclApi* api_ = nullptr;  // set with comm_ made
  void* nccl_ = nullptr;          // ncclComm_t
  NcclTeam lsa_{1, 0, 1};
  std::vector<Window> windows_;
  struct Pending {
    std::string label;
    std::string error;  // a failed binding, returned again
  };
  std::map<const void*, Pending> pending_;
  std::atomic<bool> anyPending_{false};
};

}  // namespace sk
