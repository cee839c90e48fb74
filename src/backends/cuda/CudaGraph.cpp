// CudaGraph.h.
#include "backends/cuda/CudaGraph.h"

#include <fmt/format.h>

namespace sk {

Expected<std::unique_ptr<CudaGraph>> CudaGraph::create(const CudaRuntimeApi& api) {
  if (!api.graphMissing.empty())
    return runtimeError(fmt::format("no CUDA graphs: {} lacks {}", api.path, api.graphMissing));
  std::unique_ptr<CudaGraph> g(new CudaGraph(api));
  // Non-blocking: the legacy default stream (where the session's other runs go) cannot be captured, and work
  // on it must not be drawn into this stream's capture.
  if (int err = api.streamCreateWithFlags(&g->stream_, kCudaStreamNonBlocking); err != 0)
    return runtimeError(api.describe("cudaStreamCreateWithFlags (a launch graph's stream)", err));
  return g;
}

CudaGraph::~CudaGraph() {
  if (exec_) (void)api_.graphExecDestroy(exec_);
  if (graph_) (void)api_.graphDestroy(graph_);
  if (stream_) (void)api_.streamDestroy(stream_);
}

Status CudaGraph::capture(const std::function<Status(void* stream)>& enqueue) {
  if (exec_) return internalError("a launch graph is captured once");
  if (int err = api_.streamBeginCapture(stream_, kCudaStreamCaptureModeThreadLocal); err != 0)
    return runtimeError(api_.describe("cudaStreamBeginCapture", err));
  Status st = enqueue(stream_);
  // The capture ends whatever happened: a stream left capturing would fail every later call on it.
  void* graph = nullptr;
  const int endErr = api_.streamEndCapture(stream_, &graph);
  graph_ = graph;
  if (!st) return st.error().context("while capturing a launch graph");
  if (endErr != 0 || !graph_) return runtimeError(api_.describe("cudaStreamEndCapture", endErr));
  if (int err = api_.graphInstantiateWithFlags(&exec_, graph_, 0); err != 0) {
    exec_ = nullptr;
    return runtimeError(api_.describe("cudaGraphInstantiateWithFlags", err));
  }
  return Status::success();
}

Status CudaGraph::launch() {
  if (!exec_) return internalError("a launch graph replayed before its capture");
  if (int err = api_.graphLaunch(exec_, stream_); err != 0) return runtimeError(api_.describe("cudaGraphLaunch", err));
  return Status::success();
}

Status launchKernelEx(const CudaRuntimeApi& api, const CudaKernelLaunch& k, void* stream, bool programmatic) {
  if (!api.launchKernelExC) return runtimeError(fmt::format("{} lacks cudaLaunchKernelExC", api.path));
  CudaLaunchAttribute attr;
  attr.id = kCudaLaunchAttributeProgrammaticStreamSerialization;
  attr.val.programmaticStreamSerializationAllowed = 1;
  CudaLaunchConfig cfg;
  cfg.gridDim.x = k.grid;
  cfg.blockDim.x = k.threads;
  cfg.dynamicSmemBytes = k.smem;
  cfg.stream = stream;
  cfg.attrs = programmatic ? &attr : nullptr;
  cfg.numAttrs = programmatic ? 1 : 0;
  unsigned long long epoch = k.epoch;
  void* args[] = {&epoch};  // sk_superkernel(unsigned long long epoch)
  if (int err = api.launchKernelExC(&cfg, k.func, args); err != 0)
    return runtimeError(api.describe(programmatic ? "cudaLaunchKernelExC (programmatic stream serialization)"
                                                  : "cudaLaunchKernelExC",
                                     err));
  return Status::success();
}

std::string cudaGraphUnavailable(const CudaRuntimeApi& api, bool pdl) {
  std::string missing = api.graphMissing;
  if (pdl && !api.launchExMissing.empty()) missing += (missing.empty() ? "" : ", ") + api.launchExMissing;
  if (!missing.empty()) return fmt::format("{} lacks {}", api.path, missing);
  if (!pdl) return "";
  int dev = 0, major = 0, minor = 0;
  if (api.getDevice(&dev) != 0 || api.deviceGetAttribute(&major, kCudaAttrComputeCapabilityMajor, dev) != 0 ||
      api.deviceGetAttribute(&minor, kCudaAttrComputeCapabilityMinor, dev) != 0)
    return "";  // no device: the run reports it
  if (major < 9)
    return fmt::format("programmatic dependent launch needs sm_90 or newer: this GPU is sm_{}{}", major, minor);
  return "";
}

}  // namespace sk
