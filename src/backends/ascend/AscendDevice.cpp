// The ascend device on CANN (target ascend, DESIGN section 9): an artifact is
// an ascend::DeviceBundle (the relocatable kernel ELF the bisheng recipe
// linked, its kernel JSON, the launch descriptor); load() checks it and
// keeps the ELF, which the first run() registers with the runtime
// (aclrtBinaryLoadFromData, then aclrtBinaryGetFunction for the
// descriptor's entry: a machine without a device still compiles and caches
// SuperKernels, like cuda's); run() packs the entry's
// GM arguments as the descriptor says (the buffers one by one, or one GM
// table of their addresses; an unfused launch's (buffer, byte offset)
// pairs; a profile buffer when it has one) into device memory the device
// keeps and reuses (nothing is allocated per run once warm) and launches
// them with the descriptor's block dim (aclrtLaunchKernel), then waits for
// the stream, so the argument memory can be freed and a failure is this
// run's. Buffers are device memory (aclrtMalloc / aclrtMemcpy).
//
// Collectives (docs/COLLECTIVES.md "On an NPU"): a launch whose descriptor names HCCL groups (hccl=) gets one
// more GM argument, the table of their HCCL contexts, which HcclGroups makes over DeviceOptions::communicator
// (the Session's) the first time a group is needed, through libhccl by dlopen (HcclRuntime.h).
//
// What the simulator has and this device does not (its machine model says
// so, so the planner never asks): runtime-scalar slots, launches beside a
// SuperKernel, profiling records read back.
//
// Unverified: there is no CANN toolkit or Ascend device where this project is
// built and tested; what is tested here is that it is created without CANN
// and that each use then names what is missing (tests/ascend/CannDeviceTest.cpp).
#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>

#include <fmt/format.h>

#include "backends/ascend/AclRuntime.h"
#include "backends/ascend/AscendBackend.h"
#include "backends/ascend/AscendMachine.h"
#include "backends/ascend/AscendBuild.h"
#include "backends/ascend/HcclGroups.h"
#include "superkernel/runtime/Executor.h"

namespace sk {

namespace {

class CannKernel final : public LoadedKernel {
 public:
  CannKernel(std::string key, std::string elf, ascend::LaunchDescriptor d)
      : key_(std::move(key)), elf_(std::move(elf)), desc_(std::move(d)) {}
  ~CannKernel() override {
    if (bin_) (void)api_->binaryUnLoad(bin_);
  }
  CannKernel(const CannKernel&) = delete;
  CannKernel& operator=(const CannKernel&) = delete;
  const ascend::LaunchDescriptor& descriptor() const { return desc_; }

  /// The entry's function handle, registering the ELF with the runtime at the first call (so a machine
  /// without a device compiles and caches, and the first run says the device is missing).
  Expected<void*> function(const ascend::AclApi* api) const {
    std::lock_guard lock(mu_);
    if (func_) return func_;
    void* bin = nullptr;
    if (ascend::AclError e = api->binaryLoadFromData(elf_.data(), elf_.size(), nullptr, &bin); e)
      return runtimeError(api->describe("aclrtBinaryLoadFromData", e)).context("SuperKernel " + key_);
    void* func = nullptr;
    if (ascend::AclError e = api->binaryGetFunction(bin, desc_.entry.c_str(), &func); e) {
      (void)api->binaryUnLoad(bin);
      return runtimeError(api->describe(fmt::format("aclrtBinaryGetFunction({})", desc_.entry).c_str(), e))
          .context("SuperKernel " + key_);
    }
    api_ = api;
    bin_ = bin;
    func_ = func;
    return func_;
  }

 private:
  std::string key_;
  std::string elf_;
  ascend::LaunchDescriptor desc_;
  mutable std::mutex mu_;
  mutable const ascend::AclApi* api_ = nullptr;
  mutable void* bin_ = nullptr;
  mutable void* func_ = nullptr;
};

// One piece of device memory a launch needs besides the buffers (the argument area, a buffer table, the
// profile records): kept by the device and reused by every run, grown when a launch needs more, so the
// run path allocates nothing once warm. Guarded by the device's run mutex; run() waits for its launch before
// returning, so the next run may overwrite it.
class LaunchScratch {
 public:
  void release(const ascend::AclApi* api) {
    if (ptr_) (void)api->free(ptr_);
    ptr_ = nullptr;
    bytes_ = 0;
  }
  Expected<void*> reserve(const ascend::AclApi* api, size_t bytes, const char* what) {
    if (bytes <= bytes_) return ptr_;
    release(api);
    if (ascend::AclError e = api->malloc(&ptr_, bytes, ascend::kAclMemMallocHugeFirst); e) {
      ptr_ = nullptr;
      return runtimeError(api->describe(fmt::format("aclrtMalloc ({}, {} bytes)", what, bytes).c_str(), e));
    }
    bytes_ = bytes;
    return ptr_;
  }
  Expected<void*> upload(const ascend::AclApi* api, const void* src, size_t bytes, const char* what) {
    SK_ASSIGN_OR_RETURN(void* p, reserve(api, bytes, what));
    if (ascend::AclError e = api->memcpy(p, bytes, src, bytes, ascend::kAclMemcpyHostToDevice); e)
      return runtimeError(api->describe(fmt::format("aclrtMemcpy ({})", what).c_str(), e));
    return p;
  }

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

class AscendDevice final : public Device {
 public:
  explicit AscendDevice(const DeviceOptions& o)
      : machine_(ascend::ascendDeviceMachineModel(o.cores ? o.cores : ascend::kDeviceAiCores)),
        hccl_(o.communicator, o.waitTimeoutMs ? o.waitTimeoutMs : defaultWaitTimeoutMs()) {}

  ~AscendDevice() override {
    if (auto api = ascend::aclRuntime(); api) {
      for (LaunchScratch* s : {&argsDev_, &tableDev_, &hcclDev_, &profileDev_}) s->release(*api);
    }
  }

  std::string_view target() const override { return machine_.target; }
  const MachineModel& machine() const override { return machine_; }

  Expected<std::shared_ptr<const LoadedKernel>> load(const Artifact& a) override {
    if (!a.bytes) return internalError("ascend load: an artifact without bytes");
    // The artifact is checked before any runtime is needed: a bad one is the cache's problem, named as such.
    auto bundle = ascend::parseDeviceBundle(*a.bytes);
    if (!bundle) return std::move(bundle).error().context("SuperKernel " + a.key);
    auto d = ascend::parseLaunchDescriptor(bundle->launch);
    if (!d) return std::move(d).error().context("SuperKernel " + a.key);
    if (d->entry != bundle->meta.kernelName || d->blockDim != bundle->meta.blockDim) {
      return badInput(fmt::format("SuperKernel {}: its launch descriptor ({} on {} cores) and kernel JSON ({} on {}) "
                                  "disagree; remove the cache entry",
                                  a.key, d->entry, d->blockDim, bundle->meta.kernelName, bundle->meta.blockDim));
    }
    if (!d->runtime.empty() || d->notifyWords) {
      return badInput(fmt::format("SuperKernel {}: it reads runtime-scalar slots or runs launches beside it, which "
                                  "the CANN device does not provide (a plan for ascend-sim?)",
                                  a.key));
    }
    std::lock_guard lock(mu_);
    if (auto it = loaded_.find(a.key); it != loaded_.end())
      if (auto k = it->second.lock()) return std::shared_ptr<const LoadedKernel>(k);
    auto k = std::make_shared<const CannKernel>(a.key, std::move(bundle->elf), std::move(*d));
    loaded_[a.key] = k;
    return std::shared_ptr<const LoadedKernel>(k);
  }

  void* defaultStream() override { return nullptr; }  // CANN's default stream

  Status run(const LoadedKernel& kernel, uint32_t cores, void* stream, void* const* buffers,
             uint32_t numBuffers) override {
    SK_ASSIGN_OR_RETURN(const ascend::AclApi* api, ascend::aclRuntimeOnThisThread());
    const auto& k = static_cast<const CannKernel&>(kernel);
    const ascend::LaunchDescriptor& d = k.descriptor();
    if (numBuffers != d.buffers) {
      return internalError(fmt::format("ascend run: {} buffers for an entry that takes {}", numBuffers, d.buffers));
    }
    (void)cores;  // the launch's block dim is the plan's cores, compiled into the descriptor
    SK_ASSIGN_OR_RETURN(void* function, k.function(api));
    std::lock_guard lock(runMu_);
    args_.clear();
    for (const ascend::LaunchArg& a : ascend::launchArguments(d)) {
      switch (a.kind) {
        case ascend::LaunchArg::Kind::Buffer:
          args_.push_back(reinterpret_cast<uintptr_t>(buffers[a.buffer]) + a.offset);
          break;
        case ascend::LaunchArg::Kind::BufferTable: {
          table_.resize(numBuffers);
          std::transform(buffers, buffers + numBuffers, table_.begin(),
                         [](void* p) { return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p)); });
          SK_ASSIGN_OR_RETURN(void* t,
                              tableDev_.upload(api, table_.data(), table_.size() * sizeof(uint64_t), "buffer table"));
          args_.push_back(reinterpret_cast<uintptr_t>(t));
          break;
        }
        case ascend::LaunchArg::Kind::Notify:
          // Its machine model offers no side launches, so no plan of this device has notify words.
          return internalError(fmt::format("ascend run: {} has side launches, which only ascend-sim runs", d.entry));
        case ascend::LaunchArg::Kind::Hccl: {
          // The collectives' groups' contexts (made on first use: every member reaches this launch).
          SK_ASSIGN_OR_RETURN(std::vector<uint64_t> t, hccl_.table(d.hccl));
          SK_ASSIGN_OR_RETURN(void* p, hcclDev_.upload(api, t.data(), t.size() * sizeof(uint64_t), "HCCL contexts"));
          args_.push_back(reinterpret_cast<uintptr_t>(p));
          break;
        }
        case ascend::LaunchArg::Kind::Profile: {
          SK_ASSIGN_OR_RETURN(void* p, profileDev_.reserve(api, d.profileBytes, "profile records"));
          args_.push_back(reinterpret_cast<uintptr_t>(p));
          break;
        }
      }
    }
    const size_t argBytes = args_.size() * sizeof(uint64_t);
    SK_ASSIGN_OR_RETURN(void* argsDev, argsDev_.upload(api, args_.data(), argBytes, "kernel arguments"));
    if (ascend::AclError e = api->launchKernel(function, d.blockDim, argsDev, argBytes, stream); e)
      return runtimeError(api->describe(fmt::format("aclrtLaunchKernel({}, block dim {})", d.entry, d.blockDim).c_str(), e));
    // The scratch is reused by the next run: wait for this launch (a failure on the device reports here).
    if (ascend::AclError e = api->synchronizeStream(stream); e)
      return runtimeError(api->describe(fmt::format("aclrtSynchronizeStream (after {})", d.entry).c_str(), e));
    return Status::success();
  }

  bool hostMemory() const override { return false; }

  Expected<void*> allocate(size_t bytes) override {
    SK_ASSIGN_OR_RETURN(const ascend::AclApi* api, ascend::aclRuntimeOnThisThread());
    void* p = nullptr;
    if (ascend::AclError e = api->malloc(&p, std::max<size_t>(bytes, 1), ascend::kAclMemMallocHugeFirst); e)
      return runtimeError(fmt::format("cannot allocate {} bytes of device memory: {}", bytes,
                                      api->describe("aclrtMalloc", e)));
    return p;
  }
  void release(void* buffer) override {
    auto api = ascend::aclRuntime();
    if (api && buffer) (void)(*api)->free(buffer);
  }
  Status upload(void* dst, const void* src, size_t bytes) override {
    SK_ASSIGN_OR_RETURN(const ascend::AclApi* api, ascend::aclRuntimeOnThisThread());
    if (!bytes) return Status::success();
    if (ascend::AclError e = api->memcpy(dst, bytes, src, bytes, ascend::kAclMemcpyHostToDevice); e)
      return runtimeError(api->describe("aclrtMemcpy (upload)", e));
    return Status::success();
  }
  Status download(void* dst, const void* src, size_t bytes) override {
    SK_ASSIGN_OR_RETURN(const ascend::AclApi* api, ascend::aclRuntimeOnThisThread());
    if (!bytes) return Status::success();
    if (ascend::AclError e = api->memcpy(dst, bytes, src, bytes, ascend::kAclMemcpyDeviceToHost); e)
      return runtimeError(api->describe("aclrtMemcpy (download)", e));
    return Status::success();
  }

 private:
  MachineModel machine_;
  std::mutex mu_;
  std::mutex runMu_;  // the launch scratch below
  std::vector<uint64_t> args_, table_;
  LaunchScratch argsDev_, tableDev_, hcclDev_, profileDev_;
  ascend::HcclGroups hccl_;  // after the scratch: destroyed first (its communicators before the runtime's memory)
  std::map<std::string, std::weak_ptr<const CannKernel>> loaded_;
};

}  // namespace

Expected<std::unique_ptr<Device>> makeAscendDevice(const DeviceOptions& options) {
  return std::unique_ptr<Device>(std::make_unique<AscendDevice>(options));
}

}  // namespace sk
