// What the tools do about stalls they cannot wait out (issue "nothing
// hangs"): the launch watchdog's report ends the process with exit 4, and an
// interrupt (Ctrl-C, SIGTERM, SIGHUP) takes every compiler process group
// down with the tool. Environment knobs that bound time are checked strictly.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "superkernel/runtime/Executor.h"
#include "superkernel/support/Error.h"

namespace sk::tools {

/// The tools' RunTimeoutHandler: `beforeExit(report)` when given (a tool
/// prints its report there: `--json` output must not be lost in exactly the
/// hang case), then "<tool>: error: <report>" and a hint on stderr, stdout
/// flushed, every child process group killed, then _exit(4) (a worker stuck
/// in a kernel cannot be cancelled, so the process ends).
RunTimeoutHandler exitOnRunTimeout(const char* tool,
                                   std::function<void(const std::string& report)> beforeExit = {});

/// Kill child process groups on SIGINT/SIGTERM/SIGHUP (installInterruptCleanup).
void installToolSignalHandlers(const char* tool);

/// SK_RUN_TIMEOUT_MS, SK_WAIT_TIMEOUT_MS and SK_COMPILE_TIMEOUT_S parsed
/// strictly: the first malformed one as a BadInput error, else nullopt.
std::optional<Error> badTimeoutEnvironment();

}  // namespace sk::tools
