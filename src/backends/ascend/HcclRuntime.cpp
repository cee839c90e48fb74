// libhccl by dlopen, for the CANN device's collectives (HcclRuntime.h).
#include "backends/ascend/HcclRuntime.h"

#include <cstdlib>
#include <vector>

#include <fmt/format.h>

#include "backends/ascend/CannLibrary.h"

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

LoadedHccl loadHccl() {
  LoadedHccl L;
  const OpenedLibrary lib = openCannLibrary("SK_HCCL", "libhccl.so", "CANN's collective library",
                                            "--target ascend-sim runs collectives on the simulator", &L.error);
  if (!lib.handle) return L;
  L.api.path = lib.path;
  void* h = lib.handle;
  std::string missing;
  HcclApi& a = L.api;
  bindSymbol(h, "HcclGetRootInfo", a.getRootInfo, &missing);
  bindSymbol(h, "HcclCommInitRootInfo", a.commInitRootInfo, &missing);
  bindSymbol(h, "HcclCommDestroy", a.commDestroy, &missing);
  bindSymbol(h, "HcclAllocComResource", a.allocComResource, &missing);
  bindSymbol(h, "HcclGetErrorString", a.getErrorString, nullptr);
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
