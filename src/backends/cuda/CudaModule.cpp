// CudaModule.h. The bytes go to a memfd (never a path another process could
// swap) and are dlopen'ed privately; `run` must be exported.
#include "backends/cuda/CudaModule.h"

#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include <spdlog/spdlog.h>

#include "support/Fd.h"

namespace sk {

Expected<std::shared_ptr<CudaModule>> CudaModule::fromBytes(std::string_view bytes, const std::string& name) {
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
  m->run_ = reinterpret_cast<CudaRunFn>(::dlsym(h, "run"));
  if (!m->run_) return runtimeError(fmt::format("SuperKernel {} does not export 'run'", name));
  using ShapeFn = void (*)(uint32_t*, uint32_t*);
  if (auto shape = reinterpret_cast<ShapeFn>(::dlsym(h, "sk_profile_shape"))) shape(&m->profCtas_, &m->profSlots_);
  return m;
}

CudaModule::~CudaModule() {
  if (handle_) ::dlclose(handle_);
  if (fd_ >= 0) ::close(fd_);
}

void* CudaModule::symbol(const char* name) const { return ::dlsym(handle_, name); }

Expected<CudaKernelLaunch> CudaModule::lastLaunch() const {
  using LastFn = int (*)(CudaKernelLaunch*);
  auto last = reinterpret_cast<LastFn>(symbol("sk_last_launch"));
  if (!last)
    return badInput("the step was not built as the Graph + PDL variant (CompileRequest::graphPdl): it has no launch "
                    "for a Graph + PDL capture");
  CudaKernelLaunch k;
  if (last(&k) != 0 || !k.func) return runtimeError("sk_last_launch: the SuperKernel has not been launched yet");
  return k;
}

Expected<int> CudaModule::call(uint32_t cores, void* stream, void* const* buffers, uint32_t numBuffers) const {
  CudaRunArgs args{kCudaAbiVersion, numBuffers, buffers};
  const int rc = run_(cores, stream, &args);
  if (rc < 0) return runtimeError(describeCudaRejection(rc));
  return rc;
}

Expected<std::shared_ptr<const LoadedKernel>> CudaModuleSet::load(const Artifact& a,
                                                                   const std::function<Status(CudaModule&)>& prepare) {
  if (!a.bytes) return internalError("cuda load: an artifact without bytes");
  std::lock_guard<std::mutex> g(mu_);
  if (auto k = loaded_[a.key].lock()) return k;
  SK_ASSIGN_OR_RETURN(auto m, CudaModule::fromBytes(*a.bytes, a.key));
  if (prepare) SK_RETURN_IF_ERROR(prepare(*m));
  std::shared_ptr<const LoadedKernel> k = m;
  loaded_[a.key] = k;
  return k;
}

Status collectCudaProfile(const CudaModule& m, uint32_t launch, uint64_t hostLaunchNs, LaunchTrace& trace,
                          int* readError) {
  *readError = 0;
  const uint32_t ctas = m.profileCtas(), slots = m.profileSlots();
  if (ctas == 0 || slots == 0) return Status::success();  // built without profiling=1
  struct Rec {  // superkernel_rt.cuh's sk_prof_rec
    uint32_t op, kind;
    unsigned long long ns;
  };
  using ReadFn = int (*)(unsigned int*, Rec*);
  auto read = reinterpret_cast<ReadFn>(m.symbol("sk_read_profile"));
  if (!read) return internalError("a profiled cuda SuperKernel without sk_read_profile");
  std::vector<unsigned int> counts(ctas);
  std::vector<Rec> recs(static_cast<size_t>(ctas) * slots);
  if ((*readError = read(counts.data(), recs.data())) != 0) return Status::success();
  unsigned long long first = ~0ull;
  for (uint32_t c = 0; c < ctas; ++c)
    for (uint32_t r = 0; r < std::min(counts[c], slots); ++r) first = std::min(first, recs[size_t(c) * slots + r].ns);
  std::vector<TraceEvent> events;
  std::map<uint32_t, std::string> tracks;
  uint64_t dropped = 0;
  for (uint32_t c = 0; c < ctas; ++c) {
    const uint32_t n = std::min(counts[c], slots);
    dropped += counts[c] - n;
    if (n) tracks.emplace(c, fmt::format("CTA {}", c));
    for (uint32_t r = 0; r < n; ++r) {
      const Rec& rec = recs[size_t(c) * slots + r];
      events.push_back(TraceEvent{c, c, rec.kind, rec.op, launch, hostLaunchNs + (rec.ns - first)});
    }
  }
  if (dropped) spdlog::warn("cuda profiling: launch {} dropped {} record(s) that did not fit their CTA's row", launch,
                            dropped);
  trace.add(std::move(events), tracks);
  return Status::success();
}

std::string describeCudaRejection(int rc) {
  switch (rc) {
    case -1: return "run() rejected the call: sk_run_args missing or abi_version is not SK_ABI_VERSION";
    case -2: return "run() rejected the call: num_buffers differs from the SuperKernel's manifest";
    case -3: return "run() rejected the call: block_dim differs from the SuperKernel's CTA count";
    case -6:
      return "run() refused the launch: the SuperKernel's CTAs cannot all be resident on this GPU at once (a grid "
             "wait would deadlock). The plan has one CTA per SM of the GPU the op list's arch names (132 for native or "
             "an arch no one GPU defines): set arch to this GPU's sm_XY, lower debug-core-num, or lower the "
             "kernels' threads / shared_bytes";
    default: return fmt::format("run() failed with code {}", rc);
  }
}

}  // namespace sk
