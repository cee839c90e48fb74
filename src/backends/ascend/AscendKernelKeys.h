// The key ascend and ascend-sim define for their kernel declarations (target/Targets.h): how many times one launch of a
// kernel_sync kernel calls AscendC::SyncAll (docs/ASCEND.md); with feed-sync-all the SuperKernel's cores
// outside the op's blocks call it as often. A header so that the op-list fuzzer, which compiles only the
// frontend, describes the targets with the back ends' own definitions (fuzz/FuzzTargets.cpp).
#pragma once

#include <string>
#include <vector>

#include "superkernel/target/Targets.h"

namespace sk {

inline std::vector<KernelAttribute> ascendKernelAttributes() {
  return {{"sync_all_calls", 1, 65535, nullptr, [](const KernelDecl& k) {
             return k.kernelSync ? std::string()
                                 : std::string("only a kernel that syncs its own blocks declares how often it calls "
                                               "SyncAll; add \"kernel_sync\": true or drop \"sync_all_calls\"");
           }}};
}

}  // namespace sk
