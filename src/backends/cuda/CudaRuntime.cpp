// libcudart by dlopen (CudaRuntime.h).
#include "backends/cuda/CudaRuntime.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <vector>

#include <fmt/format.h>

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

template <typename F>
bool bind(void* h, const char* name, F& fn, std::string& missing) {
  fn = reinterpret_cast<F>(dlsym(h, name));
  if (!fn) missing += (missing.empty() ? "" : ", ") + std::string(name);
  return fn != nullptr;
}

Loaded load() {
  Loaded L;
  std::vector<std::string> names;
  if (const char* env = std::getenv("SK_CUDART"); env && *env) names.push_back(env);
  for (const char* n : {"libcudart.so.13", "libcudart.so.12", "libcudart.so", "/usr/local/cuda/lib64/libcudart.so.13",
                        "/usr/local/cuda/lib64/libcudart.so.12", "/usr/local/cuda/lib64/libcudart.so"})
    names.push_back(n);
  void* h = nullptr;
  std::string tried;
  for (const auto& n : names) {
    // RTLD_GLOBAL: the generated modules (DT_NEEDED libcudart.so.N) bind to this same instance.
    h = dlopen(n.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (h) {
      L.api.path = n;
      break;
    }
    const char* e = dlerror();
    tried += fmt::format("\n  {}: {}", n, e ? e : "not found");
  }
  if (!h) {
    L.error = "libcudart not found (set SK_CUDART to its path or install the CUDA runtime); tried:" + tried;
    return L;
  }
  std::string missing;
  auto& a = L.api;
  bind(h, "cudaGetDeviceCount", a.getDeviceCount, missing);
  bind(h, "cudaSetDevice", a.setDevice, missing);
  bind(h, "cudaGetDevice", a.getDevice, missing);
  bind(h, "cudaDeviceGetAttribute", a.deviceGetAttribute, missing);
  bind(h, "cudaMalloc", a.malloc, missing);
  bind(h, "cudaFree", a.free, missing);
  bind(h, "cudaMemcpy", a.memcpy, missing);
  bind(h, "cudaStreamSynchronize", a.streamSynchronize, missing);
  bind(h, "cudaDeviceSynchronize", a.deviceSynchronize, missing);
  bind(h, "cudaGetLastError", a.getLastError, missing);
  bind(h, "cudaGetErrorString", a.getErrorString, missing);
  bind(h, "cudaGetErrorName", a.getErrorName, missing);
  if (!missing.empty()) L.error = fmt::format("{} lacks {}", L.api.path, missing);
  return L;
}

const Loaded& loaded() {
  static const Loaded L = load();  // never dlclose'd: modules keep using it
  return L;
}

}  // namespace

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
