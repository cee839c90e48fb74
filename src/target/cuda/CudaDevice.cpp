// The cuda device: generated shared objects (host code + device-linked
// fatbinary, nvcc) loaded from verified bytes (memfd + dlopen, as on cpu) and
// run() calling their `run` with device pointers on a cudaStream_t.
//
// No CUDA at build time: libcudart is dlopen'ed (CudaRuntime.h). Creating the
// device never fails for want of a GPU, so plans compile anywhere: the
// machine model then holds the documented default (kCudaDefaultCtas, one CTA
// per SM of an H100); load, run and buffers answer "no CUDA device: ...".
//
// Machine model: one pool of resident CTAs, one per SM of the current device
// (a persistent grid of one CTA per SM is co-resident whenever one CTA fits an
// SM; the module checks occupancy at its first launch and refuses a grid that
// is not). debug-core-num lowers it.
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>

#include <fmt/format.h>

#include <spdlog/spdlog.h>

#include "superkernel/support/Log.h"
#include "support/Fd.h"
#include "target/cuda/CudaBackend.h"
#include "target/cuda/CudaRuntime.h"

namespace sk {
namespace {

struct RunArgs {  // superkernel_rt.cuh's sk_run_args
  uint32_t abi_version;
  uint32_t num_buffers;
  void* const* buffers;
};
using RunFn = int (*)(uint32_t, void*, const RunArgs*);
constexpr uint32_t kAbiVersion = 1;

// A generated module: the shared object's bytes in a memfd, dlopen'ed.
class CudaModule final : public LoadedKernel {
 public:
  static Expected<std::shared_ptr<CudaModule>> fromBytes(std::string_view bytes, const std::string& name) {
    std::string label = "sk-cuda-" + name.substr(0, 200);
    int fd = ::memfd_create(label.c_str(), MFD_CLOEXEC);
    if (fd < 0) return runtimeError(fmt::format("cannot load {}: memfd_create: {}", name, std::strerror(errno)));
    if (!detail::writeAllFd(fd, bytes)) {
      int e = errno;
      ::close(fd);
      return runtimeError(fmt::format("cannot load {}: writing its bytes: {}", name, std::strerror(e)));
    }
    std::string path = fmt::format("/proc/self/fd/{}", fd);
    void* h = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      const char* e = ::dlerror();
      ::close(fd);
      return runtimeError(fmt::format("dlopen of {} failed: {}", name, e ? e : "unknown error"));
    }
    auto m = std::shared_ptr<CudaModule>(new CudaModule());
    m->handle_ = h;
    m->fd_ = fd;
    m->run_ = reinterpret_cast<RunFn>(::dlsym(h, "run"));
    if (!m->run_) return runtimeError(fmt::format("SuperKernel {} does not export 'run'", name));
    return m;
  }
  ~CudaModule() override {
    if (handle_) ::dlclose(handle_);
    if (fd_ >= 0) ::close(fd_);
  }
  RunFn runFn() const { return run_; }

 private:
  CudaModule() = default;
  void* handle_ = nullptr;
  int fd_ = -1;
  RunFn run_ = nullptr;
};

std::string describeRejection(int rc) {
  switch (rc) {
    case -1: return "run() rejected the call: sk_run_args missing or abi_version is not SK_ABI_VERSION";
    case -2: return "run() rejected the call: num_buffers differs from the SuperKernel's manifest";
    case -3: return "run() rejected the call: block_dim differs from the SuperKernel's CTA count";
    case -6:
      return "run() refused the launch: the SuperKernel's CTAs cannot all be resident on this GPU at once (a grid "
             "wait would deadlock); lower debug-core-num or the kernels' threads / shared_bytes";
    default: return fmt::format("run() failed with code {}", rc);
  }
}

class CudaDevice final : public Device {
 public:
  explicit CudaDevice(const DeviceOptions&) {
    uint32_t ctas = kCudaDefaultCtas;
    auto api = cudaRuntimeWithDevice();
    if (api) {
      int dev = 0, sms = 0;
      if ((*api)->getDevice(&dev) == 0 && (*api)->deviceGetAttribute(&sms, kCudaAttrMultiProcessorCount, dev) == 0 &&
          sms > 0)
        ctas = static_cast<uint32_t>(sms);
    } else {
      spdlog::debug("cuda device: {}; planning for the default {} CTAs", api.error().message(), ctas);
    }
    machine_ = MachineModel::singlePool("cuda", ctas, "GPU", "resident CTAs");
    machine_.defaultSplitMode = 1;
    machine_.inapplicable = {
        {"split-mode", "the cuda back end runs one code copy per sub-kernel"},
        {"feed-sync-all", "sk_kernel_sync on cuda is a barrier among the op's own blocks"},
        {"preload-code", "GPUs give no user control over instruction prefetch; the plan's preloads are comments"},
        {"func-align", "nvcc places device functions itself"},
    };
  }

  std::string_view target() const override { return "cuda"; }
  const MachineModel& machine() const override { return machine_; }

  Expected<std::shared_ptr<const LoadedKernel>> load(const Artifact& a) override {
    if (!a.bytes) return internalError("cuda load: an artifact without bytes");
    // No device needed: loading registers the module's fatbinary with the
    // runtime (lazily, CUDA's module loading); plans compile on GPU-less
    // machines and run() is where "no CUDA device" is answered. The module's
    // DT_NEEDED libcudart must resolve, so the runtime is loaded first.
    if (auto api = cudaRuntime(); !api) return std::move(api).error();
    std::lock_guard<std::mutex> g(mu_);
    if (auto k = loaded_[a.key].lock()) return k;
    SK_ASSIGN_OR_RETURN(auto m, CudaModule::fromBytes(*a.bytes, a.key));
    std::shared_ptr<const LoadedKernel> k = m;
    loaded_[a.key] = k;
    return k;
  }

  // The legacy default stream: cudaMemcpy in download() orders after it.
  void* defaultStream() override { return nullptr; }

  Status run(const LoadedKernel& kernel, uint32_t cores, void* stream, void* const* buffers,
             uint32_t numBuffers) override {
    SK_ASSIGN_OR_RETURN(const CudaRuntimeApi* api, cudaRuntimeWithDevice());
    RunArgs args{kAbiVersion, numBuffers, buffers};
    const int rc = static_cast<const CudaModule&>(kernel).runFn()(cores, stream, &args);
    if (rc == 0) return Status::success();
    if (rc < 0) return runtimeError(describeRejection(rc));
    return runtimeError(api->describe("SuperKernel launch", rc));
  }

  // UNVERIFIED on a GPU (none in the sessions so far).
  Status synchronize(void* stream) override {
    SK_ASSIGN_OR_RETURN(const CudaRuntimeApi* api, cudaRuntimeWithDevice());
    if (int err = api->streamSynchronize(stream); err != 0)
      return runtimeError(api->describe("cudaStreamSynchronize (a failed SuperKernel launch shows here too)", err));
    return Status::success();
  }

  bool hostMemory() const override { return false; }

  Expected<void*> allocate(size_t bytes) override {
    SK_ASSIGN_OR_RETURN(const CudaRuntimeApi* api, cudaRuntimeWithDevice());
    void* p = nullptr;
    if (int err = api->malloc(&p, std::max<size_t>(bytes, 1)); err != 0)
      return runtimeError(fmt::format("cannot allocate {} bytes of device memory: {}", bytes,
                                      api->describe("cudaMalloc", err)));
    return p;
  }
  void release(void* buffer) override {
    auto api = cudaRuntime();
    if (api && buffer) (void)(*api)->free(buffer);
  }
  Status upload(void* dst, const void* src, size_t bytes) override {
    SK_ASSIGN_OR_RETURN(const CudaRuntimeApi* api, cudaRuntimeWithDevice());
    if (!bytes) return Status::success();
    if (int err = api->memcpy(dst, src, bytes, kCudaMemcpyHostToDevice); err != 0)
      return runtimeError(api->describe("cudaMemcpy (upload)", err));
    return Status::success();
  }
  Status download(void* dst, const void* src, size_t bytes) override {
    SK_ASSIGN_OR_RETURN(const CudaRuntimeApi* api, cudaRuntimeWithDevice());
    if (!bytes) return Status::success();
    // Synchronous on the legacy default stream: it also reports a failed launch.
    if (int err = api->memcpy(dst, src, bytes, kCudaMemcpyDeviceToHost); err != 0)
      return runtimeError(api->describe("cudaMemcpy (download; a failed SuperKernel launch shows here too)", err));
    return Status::success();
  }

 private:
  MachineModel machine_;
  std::mutex mu_;
  std::map<std::string, std::weak_ptr<const LoadedKernel>> loaded_;
};

}  // namespace

Expected<std::unique_ptr<Device>> makeCudaDevice(const DeviceOptions& options) {
  return std::unique_ptr<Device>(std::make_unique<CudaDevice>(options));
}

}  // namespace sk
