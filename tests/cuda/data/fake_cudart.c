/* A stand-in libcudart for tests that need "a GPU is present" on a machine
 * without one (SK_CUDART points the cuda back end at it). It answers only the
 * device queries: FAKE_CUDART_SMS=N (N > 0) is one device with N SMs;
 * unset or 0 is no device (cudaErrorNoDevice). Everything else fails with
 * cudaErrorNotSupported, so nothing can run on it by accident. */
#include <stddef.h>
#include <stdlib.h>

enum { kSuccess = 0, kNoDevice = 100, kNotSupported = 801, kAttrMultiProcessorCount = 16 };

static int fake_sms(void) {
  const char* v = getenv("FAKE_CUDART_SMS");
  return v ? atoi(v) : 0;
}

int cudaGetDeviceCount(int* n) {
  *n = fake_sms() > 0 ? 1 : 0;
  return *n ? kSuccess : kNoDevice;
}
int cudaSetDevice(int d) { return d == 0 && fake_sms() > 0 ? kSuccess : kNoDevice; }
int cudaGetDevice(int* d) {
  *d = 0;
  return fake_sms() > 0 ? kSuccess : kNoDevice;
}
int cudaDeviceGetAttribute(int* value, int attr, int device) {
  if (fake_sms() <= 0 || device != 0) return kNoDevice;
  *value = attr == kAttrMultiProcessorCount ? fake_sms() : 0;
  return kSuccess;
}
int cudaMalloc(void** p, size_t bytes) {
  (void)p;
  (void)bytes;
  return kNotSupported;
}
int cudaFree(void* p) { return p ? kNotSupported : kSuccess; }
int cudaMemcpy(void* dst, const void* src, size_t bytes, int kind) {
  (void)dst;
  (void)src;
  (void)bytes;
  (void)kind;
  return kNotSupported;
}
int cudaStreamSynchronize(void* s) {
  (void)s;
  return kSuccess;
}
int cudaDeviceSynchronize(void) { return kSuccess; }
int cudaGetLastError(void) { return kSuccess; }
const char* cudaGetErrorString(int e) { return e == kNoDevice ? "no CUDA-capable device is detected" : "not supported"; }
const char* cudaGetErrorName(int e) { return e == kNoDevice ? "cudaErrorNoDevice" : "cudaErrorNotSupported"; }
