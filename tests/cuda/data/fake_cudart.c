/* A stand-in libcudart for tests that need "a GPU is present" on a machine
 * without one (SK_CUDART points the cuda back end at it). It answers the
 * device queries: FAKE_CUDART_SMS=N (N > 0) is one device with N SMs;
 * unset or 0 is no device (cudaErrorNoDevice); FAKE_CUDART_CC=XY its compute
 * capability (default 90). Memory and module launches fail with
 * cudaErrorNotSupported, so nothing can run on it by accident.
 *
 * The graph calls the cuda device binds (CudaRuntime.cpp, CudaGraph.cpp) are
 * recorded instead, one line each, for CudaGraphTest.cpp to read with
 * fake_cudart_log() (fake_cudart_reset() clears it; fake_cudart_fail(name)
 * makes the next call of that name fail). Built a second time with
 * -DFAKE_CUDART_NO_LAUNCH_EX: a runtime older than CUDA 11.8, without
 * cudaLaunchKernelExC. */
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

enum {
  kSuccess = 0,
  kInvalidValue = 1,
  kNoDevice = 100,
  kNotSupported = 801,
  kAttrMultiProcessorCount = 16,
  kAttrCcMajor = 75,
  kAttrCcMinor = 76
};

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
  const char* cc = getenv("FAKE_CUDART_CC");
  const int xy = cc ? atoi(cc) : 90;
  *value = attr == kAttrMultiProcessorCount ? fake_sms() : attr == kAttrCcMajor ? xy / 10 : attr == kAttrCcMinor ? xy % 10 : 0;
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
const char* cudaGetErrorString(int e) {
  return e == kNoDevice ? "no CUDA-capable device is detected" : e == kInvalidValue ? "invalid argument" : "not supported";
}
const char* cudaGetErrorName(int e) {
  return e == kNoDevice ? "cudaErrorNoDevice" : e == kInvalidValue ? "cudaErrorInvalidValue" : "cudaErrorNotSupported";
}

/* ---- recorded graph calls ---- */

static char g_log[1 << 16];
static size_t g_log_len;
static char g_fail[64];
static char g_handles[64]; /* streams s1.., graphs g1.., execs e1..: addresses in here */
static int g_next_handle;

const char* fake_cudart_log(void) { return g_log; }
void fake_cudart_reset(void) {
  g_log[0] = 0;
  g_log_len = 0;
  g_fail[0] = 0;
  g_next_handle = 0;
}
void fake_cudart_fail(const char* name) { snprintf(g_fail, sizeof g_fail, "%s", name); }

static void logf_(const char* line) {
  const size_t n = strlen(line);
  if (g_log_len + n + 2 > sizeof g_log) return;
  memcpy(g_log + g_log_len, line, n);
  g_log_len += n;
  g_log[g_log_len++] = '\n';
  g_log[g_log_len] = 0;
}
/* The call `name` fails (once) when fake_cudart_fail named it; the line records that. */
static int failing(const char* name) {
  if (strcmp(g_fail, name) != 0) return 0;
  g_fail[0] = 0;
  return 1;
}
static void* new_handle(void) { return &g_handles[++g_next_handle % (int)sizeof g_handles]; }
static int id_of(const void* h) { return (int)((const char*)h - g_handles); }

int cudaStreamCreateWithFlags(void** stream, unsigned flags) {
  char line[128];
  if (failing("cudaStreamCreateWithFlags")) {
    snprintf(line, sizeof line, "cudaStreamCreateWithFlags flags=%u FAILED", flags);
    logf_(line);
    return kNotSupported;
  }
  *stream = new_handle();
  snprintf(line, sizeof line, "cudaStreamCreateWithFlags flags=%u -> %d", flags, id_of(*stream));
  logf_(line);
  return kSuccess;
}
int cudaStreamDestroy(void* stream) {
  char line[64];
  snprintf(line, sizeof line, "cudaStreamDestroy %d", id_of(stream));
  logf_(line);
  return kSuccess;
}
int cudaStreamBeginCapture(void* stream, int mode) {
  char line[64];
  snprintf(line, sizeof line, "cudaStreamBeginCapture %d mode=%d", id_of(stream), mode);
  logf_(line);
  return kSuccess;
}
int cudaStreamEndCapture(void* stream, void** graph) {
  char line[64];
  *graph = new_handle();
  snprintf(line, sizeof line, "cudaStreamEndCapture %d -> %d", id_of(stream), id_of(*graph));
  logf_(line);
  return kSuccess;
}
int cudaGraphInstantiateWithFlags(void** exec, void* graph, unsigned long long flags) {
  char line[96];
  if (failing("cudaGraphInstantiateWithFlags")) {
    snprintf(line, sizeof line, "cudaGraphInstantiateWithFlags %d FAILED", id_of(graph));
    logf_(line);
    return kInvalidValue;
  }
  *exec = new_handle();
  snprintf(line, sizeof line, "cudaGraphInstantiateWithFlags %d flags=%llu -> %d", id_of(graph), flags, id_of(*exec));
  logf_(line);
  return kSuccess;
}
int cudaGraphLaunch(void* exec, void* stream) {
  char line[64];
  snprintf(line, sizeof line, "cudaGraphLaunch %d on %d", id_of(exec), id_of(stream));
  logf_(line);
  return kSuccess;
}
int cudaGraphExecDestroy(void* exec) {
  char line[64];
  snprintf(line, sizeof line, "cudaGraphExecDestroy %d", id_of(exec));
  logf_(line);
  return kSuccess;
}
int cudaGraphDestroy(void* graph) {
  char line[64];
  snprintf(line, sizeof line, "cudaGraphDestroy %d", id_of(graph));
  logf_(line);
  return kSuccess;
}

#ifndef FAKE_CUDART_NO_LAUNCH_EX
/* driver_types.h's layouts (CUDA 11.8+), written out independently of the library's CudaLaunchAbi.h. */
typedef struct {
  unsigned x, y, z;
} fake_dim3;
typedef struct {
  int id;
  char pad[4];
  union {
    char pad[64];
    int programmaticStreamSerializationAllowed;
    void* align;
  } val;
} fake_launch_attribute;
typedef struct {
  fake_dim3 gridDim, blockDim;
  size_t dynamicSmemBytes;
  void* stream;
  fake_launch_attribute* attrs;
  unsigned numAttrs;
} fake_launch_config;

int cudaLaunchKernelExC(const fake_launch_config* c, const void* func, void** args) {
  char line[256];
  int n = snprintf(line, sizeof line, "cudaLaunchKernelExC func=%p grid=%u,%u,%u block=%u,%u,%u smem=%zu stream=%d arg0=%llu attrs=",
                   func, c->gridDim.x, c->gridDim.y, c->gridDim.z, c->blockDim.x, c->blockDim.y, c->blockDim.z,
                   c->dynamicSmemBytes, id_of(c->stream), *(const unsigned long long*)args[0]);
  for (unsigned i = 0; i < c->numAttrs && n > 0 && (size_t)n < sizeof line; ++i)
    n += snprintf(line + n, sizeof line - (size_t)n, "%s%d:%d", i ? "," : "", c->attrs[i].id,
                  c->attrs[i].val.programmaticStreamSerializationAllowed);
  if (c->numAttrs == 0) snprintf(line + n, sizeof line - (size_t)n, "none");
  logf_(line);
  return kSuccess;
}
#endif
