// libhccl by dlopen, for the CANN device's collectives (HcclRuntime.h).
#include "backends/ascend/HcclRuntime.h"

#include <dlfcn.h>

#include <cstdlib>
#include <vector>

#include <fmt/format.h>

namespace sk::ascend {

std::string HcclApi::describe(const char* call, HcclStatus err) const {
  const char* msg = getErrorString ? getErrorString(err) : nullptr;
  return fmt::format("{} failed: HCCL error {}{}{}", call, err, msg && *msg ? ": " : "", msg ? msg : "");
}

namespace {

struct LoadedHccl {
  HcclApi api;
  std::string error;  // non-empty: not usable
};

template <typename F>
void bindHccl(void* h, const char* name, F& fn, std::string* missing) {
  fn = reinterpret_cast<F>(dlsym(h, name));
  if (!fn && missing) *missing += (missing->empty() ? "" : ", ") + std::string(name);
}

LoadedHccl loadHccl() {
  LoadedHccl L;
  std::vector<std::string> names;
  if (const char* env = std::getenv("SK_HCCL"); env && *env) {
    names.push_back(env);
  } else {
    names.push_back("libhccl.so");
    if (const char* home = std::getenv("ASCEND_HOME_PATH"); home && *home)
      names.push_back(std::string(home) + "/lib64/libhccl.so");
  }
  void* h = nullptr;
  std::string tried;
  for (const std::string& n : names) {
    h = dlopen(n.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (h) {
      L.api.path = n;
      break;
    }
    const char* e = dlerror();
    tried += fmt::format("\n  tried {}: {}", n, e ? e : "not found");
  }
  if (!h) {
    L.error = fmt::format(
        "CANN's collective library (libhccl.so) not found{}{}\n  install the CANN toolkit and source its set_env.sh "
        "(ASCEND_HOME_PATH), or set SK_HCCL to the library; --target ascend-sim runs collectives on the simulator",
        std::getenv("ASCEND_HOME_PATH") ? "" : " (ASCEND_HOME_PATH is not set)", tried);
    return L;
  }
  std::string missing;
  HcclApi& a = L.api;
  bindHccl(h, "HcclGetRootInfo", a.getRootInfo, &missing);
  bindHccl(h, "HcclCommInitRootInfo", a.commInitRootInfo, &missing);
  bindHccl(h, "HcclCommDestroy", a.commDestroy, &missing);
  bindHccl(h, "HcclAllocComResource", a.allocComResource, &missing);
  bindHccl(h, "HcclGetErrorString", a.getErrorString, nullptr);
  if (!missing.empty())
    L.error = fmt::format("{} lacks {} (the AI Core Hccl client's context needs CANN 8.0 or later)", a.path, missing);
  return L;
}

}  // namespace

Expected<const HcclApi*> hcclRuntime() {
  static const LoadedHccl L = loadHccl();  // never dlclose'd: communicators made with it live until the device goes
  if (!L.error.empty()) return runtimeError("no HCCL for collectives on the Ascend device: " + L.error);
  return &L.api;
}

}  // namespace sk::ascend
