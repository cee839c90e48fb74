// Every compiler (or other tool) process group that runProcess started and
// has not reaped yet, so that none outlives a run that is stopped: on a
// compile deadline or error (runProcess kills its own group), on the launch
// watchdog, and on SIGINT/SIGTERM/SIGHUP when a tool installs
// installInterruptCleanup(). Children run in process groups of their own
// (a Ctrl-C in the terminal does not reach them), so without this they would
// keep compiling after the tool is gone.
#pragma once

#include <sys/types.h>

#include "superkernel/support/Error.h"

namespace sk {

/// Record / forget a child process group (runProcess does both). Lock-free;
/// a full table (1024 groups at once) is logged and the group goes untracked.
void registerChildGroup(pid_t pgid);
void unregisterChildGroup(pid_t pgid);

/// SIGTERM every registered process group, 50 ms later SIGKILL them; returns
/// how many were signalled. Async-signal-safe (what the interrupt handler
/// and the tools' watchdog handler call).
int killChildGroups();

/// For tools (a library does not take over signals): SIGINT, SIGTERM and
/// SIGHUP kill every child process group, then the signal is re-raised with
/// its default action, so the process ends as it would have (exit status
/// 128 + signal). Cache build directories left behind are removed by the next
/// process that opens the cache.
Status installInterruptCleanup();

}  // namespace sk
