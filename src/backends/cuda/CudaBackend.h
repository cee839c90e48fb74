// Private: the pieces of the cuda back end (src/backends/cuda/), assembled
// into a Backend (CudaBackend.cpp) and registered by the registry.
//
// What runs where: the emitter and the recipe need no GPU and no CUDA at
// build time of the library (nvcc is found at run time like any compiler);
// the device loads libcudart with dlopen when it is first used and answers
// "no CUDA device: ..." where there is none (CudaRuntime.h).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "superkernel/target/Backend.h"

namespace sk {

/// Backend{"cuda", ...}.
Backend cudaBackend();
/// Backend{"cuda-sim", ...}: cuda's emitter and kernels, run by the simulator
/// (runtime/cuda/sim) on host threads.
Backend cudaSimBackend();
std::shared_ptr<const BuildRecipe> makeCudaSimRecipe();
Expected<std::unique_ptr<Device>> makeCudaSimDevice(const DeviceOptions& options);
/// The cuda SuperKernel's exports: run, the profiling records' shape and reader, and each collective object's
/// NCCL binding (collective_kernel.cu's sk_nccl_*_<dtype>; a pattern, so a step without collectives links too).
inline constexpr const char* kCudaVersionScript =
    "{\n  global: run; sk_profile_shape; sk_read_profile; sk_nccl_*;\n  local: *;\n};\n";
/// The same plus the simulator's two entries (sim_module.h).
inline constexpr const char* kCudaSimVersionScript =
    "{\n  global: run; sk_profile_shape; sk_read_profile; sk_cuda_sim_bind; sk_cuda_sim_enter;\n  local: *;\n};\n";

/// The cuda emitter's launch metadata (GeneratedSource::launch) of a step built as the Graph + PDL variant
/// (SuperKernelPlan::graphPdl: the text defines SK_CUDA_PDL for superkernel_rt.cuh); empty for every other step.
inline constexpr const char* kCudaGraphPdlLaunch = "graph-pdl";
/// The version script for a step with launch metadata `launch`: `base` (kCudaVersionScript or
/// kCudaSimVersionScript), plus sk_last_launch for the PDL variant (only there: a linker that refuses version-script
/// names no object defines must still link the others).
std::string cudaVersionScript(std::string_view launch, const char* base);

/// One pool of `ctas` resident CTAs, and the options that do not apply on GPUs.
MachineModel cudaMachineModel(const std::string& target, uint32_t ctas);
/// cuda-sim's: cudaMachineModel plus collectives (the simulator's collective kernel, run over the device's
/// communicator; docs/COLLECTIVES.md).
MachineModel cudaSimMachineModel(uint32_t sms);
/// The planner's CTAs for an arch: one per SM of the datacenter GPU that arch names (sm_70 V100: 80, sm_80
/// A100: 108, sm_90 H100 SXM: 132, sm_100 B200: 148), kCudaDefaultCtas for any other ("native" included: the
/// plan never depends on the GPU present; debug-core-num lowers it, and a launch the GPU cannot keep resident
/// fails at its occupancy check, naming both counts).
uint32_t cudaCtasForArch(std::string_view arch);
/// The simulated GPU's SMs: SK_CUDA_SIM_SMS (1..256), else kCudaSimDefaultCtas.
Expected<uint32_t> cudaSimSms();
/// CTAs per step of the simulated GPU (its SMs); SK_CUDA_SIM_SMS overrides.
inline constexpr uint32_t kCudaSimDefaultCtas = 8;

/// Reads and parses templates/cuda/superkernel.cu.tmpl.
Expected<std::shared_ptr<const Emitter>> makeCudaEmitter();
std::shared_ptr<const BuildRecipe> makeCudaRecipe();
Expected<std::unique_ptr<Device>> makeCudaDevice(const DeviceOptions& options);

/// CTAs per step when no device answers (one per SM of an H100 SXM, sm_90).
inline constexpr uint32_t kCudaDefaultCtas = 132;
/// The arch when neither the request nor a device names one.
inline constexpr const char* kCudaDefaultArch = "sm_90";
/// Threads per CTA of a kernel that declares none.
inline constexpr uint32_t kCudaDefaultThreads = 256;

/// The -arch for a DriverConfig arch: "sm_XY" / "compute_XY" as given;
/// "native", "generic" or empty: the first device's sm_XY when a CUDA device
/// answers, else sm_90.
std::string cudaResolveArch(const std::string& arch);

}  // namespace sk
