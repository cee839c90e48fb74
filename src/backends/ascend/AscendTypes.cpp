// The ascend ISA vocabulary's names and implications (see AscendTypes.h).
#include "backends/ascend/AscendTypes.h"

#include <string>

namespace sk::ascend {

const char* coreArchName(CoreArch arch) { return arch == CoreArch::Cube ? "dav-c220-cube" : "dav-c220-vec"; }

const char* kernelTypeName(KernelType t) {
  switch (t) {
    case KernelType::AivOnly: return "KERNEL_TYPE_AIV_ONLY";
    case KernelType::AicOnly: return "KERNEL_TYPE_AIC_ONLY";
    case KernelType::MixAiv1_0: return "KERNEL_TYPE_MIX_AIV_1_0";
    case KernelType::MixAic1_0: return "KERNEL_TYPE_MIX_AIC_1_0";
    case KernelType::MixAic1_1: return "KERNEL_TYPE_MIX_AIC_1_1";
    case KernelType::MixAic1_2: return "KERNEL_TYPE_MIX_AIC_1_2";
  }
  return "KERNEL_TYPE_?";
}

std::vector<CoreArch> archsOf(KernelType t) {
  switch (t) {
    case KernelType::AivOnly:
    case KernelType::MixAiv1_0: return {CoreArch::Vec};
    case KernelType::AicOnly:
    case KernelType::MixAic1_0: return {CoreArch::Cube};
    default: return {CoreArch::Cube, CoreArch::Vec};
  }
}

uint32_t taskRatio(KernelType t) {
  switch (t) {
    case KernelType::AicOnly:
    case KernelType::MixAic1_0: return 0;
    case KernelType::MixAic1_2: return 2;
    default: return 1;
  }
}

std::optional<KernelType> kernelTypeFromSuffix(std::string_view suffix) {
  for (KernelType t : {KernelType::AivOnly, KernelType::AicOnly, KernelType::MixAiv1_0, KernelType::MixAic1_0,
                       KernelType::MixAic1_1, KernelType::MixAic1_2}) {
    if (std::string_view(kernelTypeName(t)) == "KERNEL_TYPE_" + std::string(suffix)) return t;
  }
  return std::nullopt;
}

}  // namespace sk::ascend
