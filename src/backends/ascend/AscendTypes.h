// The ascend back end's ISA vocabulary (both targets: ascend and ascend-sim): the AI Core instruction sets
// (cube, vector), a launch's task type and what it implies (which archs its code is built for, vector cores
// per cube core), and the runtime-scalar slots one launch passes. A header of its own so that the step, the
// printer and both recipes and devices name these without the build's argv and bundles (AscendBuild.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace sk::ascend {

/// The two AI Core instruction sets of the c220 generation (Atlas A2/A3).
enum class CoreArch : uint8_t { Cube, Vec };
/// "dav-c220-cube" / "dav-c220-vec".
const char* coreArchName(CoreArch arch);

/// A launch's task type (KERNEL_TASK_TYPE_DEFAULT): the AIC:AIV ratio.
enum class KernelType : uint8_t { AivOnly, AicOnly, MixAiv1_0, MixAic1_0, MixAic1_1, MixAic1_2 };
/// "KERNEL_TYPE_MIX_AIC_1_2" etc.
const char* kernelTypeName(KernelType t);
/// Which core archs a kernel type's code is compiled for.
std::vector<CoreArch> archsOf(KernelType t);
/// Vector cores per cube core ("task ratio"): 0 (no vector), 1, 2; AIV-only: 1.
uint32_t taskRatio(KernelType t);

/// The KernelType whose name is "KERNEL_TYPE_" + `suffix` (a launch
/// descriptor's type, "MIX_AIC_1_2"); nullopt for another.
std::optional<KernelType> kernelTypeFromSuffix(std::string_view suffix);

/// Runtime scalars (KernelVariant::runtimeScalars): the slots one launch passes
/// at most (the simulator's SK_ASCEND_SIM_MAX_RUNTIME_VALUES). A step with more
/// distinct runtime values is bad input (makeAscendStep).
constexpr uint32_t kMaxRuntimeValues = 16;

}  // namespace sk::ascend
