// libcudart by dlopen (CudaRuntime.h).
#include "backends/cuda/CudaRuntime.h"

#include <cstdlib>
#include <mutex>
#include <vector>

#include <fmt/format.h>

#include "support/DynamicLibrary.h"

namespace sk {

std::string CudaRuntimeApi::describe(const char* call, int err) const {
  const char* s = getErrorString ? getErrorString(err) : nullptr;
  const char* n = getErrorName ? getErrorName(err) : nullptr;
  return fmt::format("{}: {} ({}, {})", call, s ? s : "unknown error", n ? n : "?", err);
}

namespace {

struct Loaded {
  CudaRuntimeApi api;
  std::string error;  // non-empty: not usable
};

// The entry points of the runtime at `h` (loaded from `path`).
Loaded bind(void* h, const std::string& path) {
  Loaded L;
  L.api.path = path;
  std::string missing;
  auto& a = L.api;
  bindSymbol(h, "cudaGetDeviceCount", a.getDeviceCount, &missing);
  bindSymbol(h, "cudaSetDevice", a.setDevice, &missing);
  bindSymbol(h, "cudaGetDevice", a.getDevice, &missing);
  bindSymbol(h, "cudaDeviceGetAttribute", a.deviceGetAttribute, &missing);
  bindSymbol(h, "cudaMalloc", a.malloc, &missing);
  bindSymbol(h, "cudaFree", a.free, &missing);
  bindSymbol(h, "cudaMemcpy", a.memcpy, &missing);
  bindSymbol(h, "cudaStreamSynchronize", a.streamSynchronize, &missing);
  bindSymbol(h, "cudaDeviceSynchronize", a.deviceSynchronize, &missing);
  bindSymbol(h, "cudaGetLastError", a.getLastError, &missing);
  bindSymbol(h, "cudaGetErrorString", a.getErrorString, &missing);
  bindSymbol(h, "cudaGetErrorName", a.getErrorName, &missing);
  if (!missing.empty()) L.error = fmt::format("{} lacks {}", L.api.path, missing);
  // cudaLaunchKernelExC is the C entry cudaLaunchKernelEx (a template in cuda_runtime.h) calls.
  bindSymbol(h, "cudaStreamCreateWithFlags", a.streamCreateWithFlags, &a.graphMissing);
  bindSymbol(h, "cudaStreamDestroy", a.streamDestroy, &a.graphMissing);
  bindSymbol(h, "cudaStreamBeginCapture", a.streamBeginCapture, &a.graphMissing);
  bindSymbol(h, "cudaStreamEndCapture", a.streamEndCapture, &a.graphMissing);
  bindSymbol(h, "cudaGraphInstantiateWithFlags", a.graphInstantiateWithFlags, &a.graphMissing);
  bindSymbol(h, "cudaGraphLaunch", a.graphLaunch, &a.graphMissing);
  bindSymbol(h, "cudaGraphExecDestroy", a.graphExecDestroy, &a.graphMissing);
  bindSymbol(h, "cudaGraphDestroy", a.graphDestroy, &a.graphMissing);
  bindSymbol(h, "cudaLaunchKernelExC", a.launchKernelExC, &a.launchExMissing);
  return L;
}

Loaded load(const std::vector<std::string>& names) {
  // RTLD_GLOBAL (openFirstLibrary): the generated modules (DT_NEEDED libcudart.so.N) bind to this same instance.
  const OpenedLibrary lib = openFirstLibrary(names);
  if (!lib.handle) {
    Loaded L;
    L.error = "libcudart not found (set SK_CUDART to its path or install the CUDA runtime)" + lib.tried;
    return L;
  }
  return bind(lib.handle, lib.path);
}

std::vector<std::string> defaultNames() {
  std::vector<std::string> names;
  if (const char* env = std::getenv("SK_CUDART"); env && *env) names.push_back(env);
  for (const char* n : {"libcudart.so.13", "libcudart.so.12", "libcudart.so", "/usr/local/cuda/lib64/libcudart.so.13",
                        "/usr/local/cuda/lib64/libcudart.so.12", "/usr/local/cuda/lib64/libcudart.so"})
    names.push_back(n);
  return names;
}

const Loaded& loaded() {
  static const Loaded L = load(defaultNames());  // never dlclose'd: modules keep using it
  return L;
}

}  // namespace

Expected<CudaRuntimeApi> loadCudaRuntimeFrom(const std::string& path) {
  // RTLD_LOCAL: its symbols must not stand in for the process's runtime (modules bind to that one).
  void* h = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* e = ::dlerror();
    return runtimeError(fmt::format("no CUDA device: cannot load {}: {}", path, e ? e : "dlopen failed"));
  }
  Loaded L = bind(h, path);
  if (!L.error.empty()) return runtimeError("no CUDA device: " + L.error);
  return std::move(L.api);
}

Expected<const CudaRuntimeApi*> cudaRuntime() {
  const Loaded& L = loaded();
  if (!L.error.empty()) return runtimeError("no CUDA device: " + L.error);
  return &L.api;
}

Expected<const CudaRuntimeApi*> cudaRuntimeWithDevice() {
  SK_ASSIGN_OR_RETURN(const CudaRuntimeApi* api, cudaRuntime());
  static std::once_flag once;
  static std::string error;
  std::call_once(once, [&] {
    int n = 0;
    int err = api->getDeviceCount(&n);
    if (err != 0) {
      error = api->describe("cudaGetDeviceCount", err);
    } else if (n <= 0) {
      error = "cudaGetDeviceCount found no device";
    }
  });
  if (!error.empty()) return runtimeError("no CUDA device: " + error + " (runtime " + api->path + ")");
  return api;
}

}  // namespace sk
