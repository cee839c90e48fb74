// libascendcl by dlopen, for the CANN device (target ascend; AclRuntime.h).
#include "backends/ascend/AclRuntime.h"

#include <cstdlib>
#include <mutex>
#include <vector>

#include <fmt/format.h>

#include "backends/ascend/CannLibrary.h"

namespace sk::ascend {

std::string AclApi::describe(const char* call, AclError err) const {
  const char* msg = getRecentErrMsg ? getRecentErrMsg() : nullptr;
  return fmt::format("{} failed: error {}{}{}", call, err, msg && *msg ? ": " : "", msg ? msg : "");
}

namespace {

struct Loaded {
  AclApi api;
  std::string error;  // non-empty: not usable
};

Loaded load() {
  Loaded L;
  const OpenedLibrary lib = openCannLibrary("SK_ASCENDCL", "libascendcl.so", "CANN's runtime library",
                                            "--target ascend-sim runs the simulator instead", &L.error);
  if (!lib.handle) return L;
  L.api.path = lib.path;
  void* h = lib.handle;
  std::string missing;
  AclApi& a = L.api;
  bindSymbol(h, "aclInit", a.init, &missing);
  bindSymbol(h, "aclrtSetDevice", a.setDevice, &missing);
  bindSymbol(h, "aclrtGetDeviceCount", a.getDeviceCount, &missing);
  bindSymbol(h, "aclrtMalloc", a.malloc, &missing);
  bindSymbol(h, "aclrtFree", a.free, &missing);
  bindSymbol(h, "aclrtMemcpy", a.memcpy, &missing);
  bindSymbol(h, "aclrtSynchronizeStream", a.synchronizeStream, &missing);
  bindSymbol(h, "aclrtBinaryLoadFromData", a.binaryLoadFromData, &missing);
  bindSymbol(h, "aclrtBinaryGetFunction", a.binaryGetFunction, &missing);
  bindSymbol(h, "aclrtBinaryUnLoad", a.binaryUnLoad, &missing);
  bindSymbol(h, "aclrtLaunchKernel", a.launchKernel, &missing);
  bindSymbol(h, "aclGetRecentErrMsg", a.getRecentErrMsg, &missing);
  if (!missing.empty()) {
    L.error = fmt::format("{} lacks {} (CANN 8.0 or later has them; an older toolkit is not supported)", L.api.path,
                          missing);
  }
  return L;
}

const Loaded& loaded() {
  static const Loaded L = load();  // never dlclose'd: loaded kernels keep using it
  return L;
}

}  // namespace

Expected<const AclApi*> aclRuntime() {
  const Loaded& L = loaded();
  if (!L.error.empty()) return runtimeError("no Ascend device: " + L.error);
  return &L.api;
}

Expected<const AclApi*> aclRuntimeOnThisThread() {
  SK_ASSIGN_OR_RETURN(const AclApi* api, aclRuntime());
  static std::once_flag once;
  static std::string initError;
  std::call_once(once, [&] {
    uint32_t count = 0;
    if (AclError e = api->init(nullptr); e != kAclSuccess && e != kAclRepeatInitialize) {
      initError = api->describe("aclInit", e);
    } else if (AclError c = api->getDeviceCount(&count); c != kAclSuccess) {
      initError = api->describe("aclrtGetDeviceCount", c);
    } else if (count == 0) {
      initError = "aclrtGetDeviceCount found no Ascend device (the CANN toolkit is installed, the driver sees none)";
    }
  });
  if (!initError.empty()) return runtimeError("no Ascend device: " + initError + " (runtime " + api->path + ")");
  thread_local std::string threadError;
  thread_local bool threadSet = false;
  if (!threadSet) {
    threadSet = true;
    int32_t id = 0;
    if (const char* v = std::getenv("SK_ASCEND_DEVICE_ID"); v && *v) id = static_cast<int32_t>(std::strtol(v, nullptr, 10));
    if (AclError e = api->setDevice(id); e != kAclSuccess)
      threadError = api->describe(fmt::format("aclrtSetDevice({})", id).c_str(), e);
  }
  if (!threadError.empty()) return runtimeError("no Ascend device: " + threadError);
  return api;
}

}  // namespace sk::ascend
