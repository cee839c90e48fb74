// Ascend C pipe-to-pipe sync for the simulator (target: ascend-sim; CANN's kernel_operator_sync_intf.h under
// bisheng): SetFlag / WaitFlag<HardEvent>, which order one pipe of a vector core after another. The
// simulator checks each pair (a set waited for exactly once, a wait with a set before it) and uses it as
// ordering knowledge for its race checks (kernel_operator.h). PipeBarrier is in kernel_operator.h.
#ifndef SUPERKERNEL_ASCEND_SIM_KERNEL_OPERATOR_SYNC_INTF_H
#define SUPERKERNEL_ASCEND_SIM_KERNEL_OPERATOR_SYNC_INTF_H

#include "kernel_common.h"
#include "superkernel/ascend/vector_check.h"

#pragma GCC visibility push(hidden)

namespace AscendC {

template <HardEvent event>
__aicore__ inline void SetFlag(int32_t eventID) {
  sk_ascend_sim_vec::checker().setFlag(sk_ascend_sim_vec::core(), static_cast<int>(event), eventID, "SetFlag");
}
template <HardEvent event>
__aicore__ inline void WaitFlag(int32_t eventID) {
  sk_ascend_sim_vec::checker().waitFlag(sk_ascend_sim_vec::core(), static_cast<int>(event), eventID, "WaitFlag");
}

}  // namespace AscendC

#pragma GCC visibility pop

#endif
