// Private: the launch graphs of the cuda device (Device::captureGraph): the Graph and Graph + PDL baselines that
// `sk-compile --run --baselines` times against the fused SuperKernel. A CudaGraph owns a non-blocking stream;
// capture() records what its callback enqueues there (stream capture, thread-local mode: other threads' CUDA
// calls are not disturbed) into a graph instantiated once; launch() replays it on the same stream. The
// destructor frees the executable graph, the graph and the stream, in that order.
//
// Graph + PDL: the callback launches each kernel with launchKernelEx, the programmatic-stream-serialization
// attribute set on every launch but the first, so inside the graph each kernel may start while the previous
// one runs and waits for it at griddepcontrol.wait (superkernel_rt.cuh's SK_CUDA_PDL variant).
//
// Everything here goes through a CudaRuntimeApi, so tests drive it with a stand-in libcudart that records the
// calls (tests/cuda/data/fake_cudart.c, CudaGraphTest.cpp).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "superkernel/support/Error.h"
#include "backends/cuda/CudaModule.h"
#include "backends/cuda/CudaRuntime.h"

namespace sk {

class CudaGraph {
 public:
  /// A graph-to-be with its own stream (cudaStreamNonBlocking). The runtime must outlive it.
  static Expected<std::unique_ptr<CudaGraph>> create(const CudaRuntimeApi& api);
  ~CudaGraph();
  CudaGraph(const CudaGraph&) = delete;
  CudaGraph& operator=(const CudaGraph&) = delete;

  void* stream() const { return stream_; }
  /// Records what `enqueue` issues on stream() and instantiates it; once per graph. A failure inside the
  /// capture ends it (the partial graph is freed) and is returned.
  Status capture(const std::function<Status(void* stream)>& enqueue);
  /// One replay on stream() (cudaGraphLaunch), enqueued.
  Status launch();

 private:
  explicit CudaGraph(const CudaRuntimeApi& api) : api_(api) {}
  const CudaRuntimeApi& api_;
  void* stream_ = nullptr;
  void* graph_ = nullptr;
  void* exec_ = nullptr;
};

/// `k` launched on `stream` with cudaLaunchKernelExC; with `programmatic`, the launch attribute
/// cudaLaunchAttributeProgrammaticStreamSerialization = 1 (no attribute otherwise).
Status launchKernelEx(const CudaRuntimeApi& api, const CudaKernelLaunch& k, void* stream, bool programmatic);

/// Why `api` (and its current device) cannot run a launch graph, `pdl`: Graph + PDL; "" when it can. Names the
/// missing libcudart symbols, or for PDL a device below compute capability 9.0 ("needs sm_90 or newer: this
/// GPU is sm_80"). A runtime without a device answers "": the run itself reports that.
std::string cudaGraphUnavailable(const CudaRuntimeApi& api, bool pdl);

}  // namespace sk
