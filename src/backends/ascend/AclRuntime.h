// CANN's runtime (libascendcl) by dlopen, for target ascend (the CANN device): the device needs no CANN at
// build time, and creating it never fails for want of one; the first call
// that needs the runtime answers what is missing (load, run, buffers).
//
// Only the calls the device makes are bound, with the prototypes of CANN's
// acl/acl_rt.h (8.x: aclrtBinaryLoadFromData, aclrtBinaryGetFunction,
// aclrtLaunchKernel). Unverified: no CANN toolkit or Ascend device is present
// where this project is built and tested.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "superkernel/support/Error.h"

namespace sk::ascend {

using AclError = int;
constexpr AclError kAclSuccess = 0;
constexpr AclError kAclRepeatInitialize = 100002;  // aclInit called before in this process: fine
constexpr int kAclMemcpyHostToDevice = 1;
constexpr int kAclMemcpyDeviceToHost = 2;
constexpr int kAclMemMallocHugeFirst = 0;

struct AclApi {
  std::string path;  // the library loaded
  AclError (*init)(const char* configPath) = nullptr;
  AclError (*setDevice)(int32_t deviceId) = nullptr;
  AclError (*getDeviceCount)(uint32_t* count) = nullptr;
  AclError (*malloc)(void** devPtr, size_t size, int policy) = nullptr;
  AclError (*free)(void* devPtr) = nullptr;
  AclError (*memcpy)(void* dst, size_t destMax, const void* src, size_t count, int kind) = nullptr;
  AclError (*synchronizeStream)(void* stream) = nullptr;
  AclError (*binaryLoadFromData)(const void* data, size_t length, const void* options, void** binHandle) = nullptr;
  AclError (*binaryGetFunction)(void* binHandle, const char* kernelName, void** funcHandle) = nullptr;
  AclError (*binaryUnLoad)(void* binHandle) = nullptr;
  AclError (*launchKernel)(void* funcHandle, uint32_t blockDim, const void* argsData, size_t argsSize,
                           void* stream) = nullptr;
  const char* (*getRecentErrMsg)() = nullptr;

  /// "<call> failed: error <err>: <aclGetRecentErrMsg>".
  std::string describe(const char* call, AclError err) const;
};

/// The runtime library, loaded once: $SK_ASCENDCL (a path), else
/// libascendcl.so through the loader's path, else
/// $ASCEND_HOME_PATH/lib64/libascendcl.so. A Runtime error naming each place
/// tried and what to set when none loads or one lacks a call.
Expected<const AclApi*> aclRuntime();

/// aclRuntime(), initialised (aclInit once per process; no device found is an error) with device
/// $SK_ASCEND_DEVICE_ID (default 0) set on the calling thread (CANN's device
/// is per thread; once per thread).
Expected<const AclApi*> aclRuntimeOnThisThread();

}  // namespace sk::ascend
