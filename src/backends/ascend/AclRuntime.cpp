// libascendcl by dlopen, for the CANN device (target ascend; AclRuntime.h).
#include "backends/ascend/AclRuntime.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <vector>

#include <fmt/format.h>

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

template <typename F>
void bind(void* h, const char* name, F& fn, std::string& missing) {
  fn = reinterpret_cast<F>(dlsym(h, name));
  if (!fn) missing += (missing.empty() ? "" : ", ") + std::string(name);
}

Loaded load() {
  Loaded L;
  std::vector<std::string> names;
  if (const char* env = std::getenv("SK_ASCENDCL"); env && *env) {
    names.push_back(env);
  } else {
    names.push_back("libascendcl.so");
    if (const char* home = std::getenv("ASCEND_HOME_PATH"); home && *home)
      names.push_back(std::string(home) + "/lib64/libascendcl.so");
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
        "CANN's runtime library (libascendcl.so) not found{}{}\n  install the CANN toolkit and source its "
        "set_env.sh (ASCEND_HOME_PATH), or set SK_ASCENDCL to the library; --target ascend-sim runs the "
        "simulator instead",
        std::getenv("ASCEND_HOME_PATH") ? "" : " (ASCEND_HOME_PATH is not set)", tried);
    return L;
  }
  std::string missing;
  AclApi& a = L.api;
  bind(h, "aclInit", a.init, missing);
  bind(h, "aclrtSetDevice", a.setDevice, missing);
  bind(h, "aclrtGetDeviceCount", a.getDeviceCount, missing);
  bind(h, "aclrtMalloc", a.malloc, missing);
  bind(h, "aclrtFree", a.free, missing);
  bind(h, "aclrtMemcpy", a.memcpy, missing);
  bind(h, "aclrtSynchronizeStream", a.synchronizeStream, missing);
  bind(h, "aclrtBinaryLoadFromData", a.binaryLoadFromData, missing);
  bind(h, "aclrtBinaryGetFunction", a.binaryGetFunction, missing);
  bind(h, "aclrtBinaryUnLoad", a.binaryUnLoad, missing);
  bind(h, "aclrtLaunchKernel", a.launchKernel, missing);
  bind(h, "aclGetRecentErrMsg", a.getRecentErrMsg, missing);
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
