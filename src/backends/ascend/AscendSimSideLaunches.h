// Side launches on the simulated ascend device (target ascend-sim only: the CANN device's machine model
// offers none): the host half of the GM
// notify/wait protocol (AscendBackend.h SideWords; the device half is the
// SkNotify / SkWaitDone code the emitter generates).
//
// The SuperKernel runs on the calling thread with a zeroed buffer of notify
// words; the side launches of each stream run on one host thread per stream,
// in order, each once all of its notify words are set, and each sets its
// done word when it finished (1, or 2 when it failed or never ran, so the
// SuperKernel's waiting cores go on and the failure is reported instead of a
// hang). A side launch whose words are still unset when the SuperKernel has
// finished never gets them (a missing notify): an error naming the words.
// There is no timer of its own: a SuperKernel that waits for a side launch
// that waits for it stops at the simulated launch's watchdog, and the error
// then carries both sides. The words' indices are the launch descriptor's,
// checked when it was parsed (parseLaunchDescriptor).
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "superkernel/support/Error.h"
#include "backends/ascend/AscendBackend.h"

namespace sk::ascend {

struct SideLaunchRun {
  std::string name;                         // for errors
  uint32_t stream = 0;                      // launches of one stream run in order
  std::function<Status()> launch;
};

/// Run `superKernel` (given the notify buffer) beside `sides` (descriptor
/// order; `words` says each one's notify and done words), each side launch
/// held back `delay` after its signal (a test hook: a SuperKernel that reads
/// its output without waiting then reads stale data). The first failure: the
/// SuperKernel's (with what its side launches reported), else the first side
/// launch's in order.
Status runWithSideLaunches(uint32_t notifyWords, const std::vector<SideWords>& words, const std::string& superKernelName,
                           const std::function<Status(void* notify)>& superKernel,
                           const std::vector<SideLaunchRun>& sides, std::chrono::milliseconds delay = {});

}  // namespace sk::ascend
