#include "common/Stalls.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "common/ToolSupport.h"
#include "superkernel/driver/ChildProcesses.h"
#include "superkernel/driver/Deadline.h"

namespace sk::tools {

RunTimeoutHandler exitOnRunTimeout(const char* tool, std::function<void(const std::string& report)> beforeExit) {
  return [tool, beforeExit = std::move(beforeExit)](const std::string& report) {
    // Called on the watchdog thread while other threads are stuck: no locks
    // the stuck threads might hold (stdout's is released between writes; the
    // report itself is built), then _exit so no destructor waits on them.
    if (beforeExit) beforeExit(report);
    std::fflush(stdout);
    std::fprintf(stderr,
                 "%s: error: %s\n%s: hint: a kernel did not return within SK_RUN_TIMEOUT_MS (--run-timeout); the op "
                 "and block above are where it hangs: check that kernel's loops and early returns; raise the limit "
                 "only if it is just slow\n",
                 tool, report.c_str(), tool);
    std::fflush(stderr);
    killChildGroups();
    ::_exit(kExitRuntimeFailure);
  };
}

void installToolSignalHandlers(const char* tool) {
  if (Status st = installInterruptCleanup(); !st)
    std::fprintf(stderr, "%s: warning: %s (compilers may outlive an interrupt)\n", tool, st.error().message().c_str());
}

std::optional<Error> badTimeoutEnvironment() {
  if (auto v = waitTimeoutFromEnv(); !v) return v.error();
  if (auto v = runTimeoutFromEnv(); !v) return v.error();
  if (auto v = compileLimitsFromEnv(); !v) return v.error();
  return std::nullopt;
}

}  // namespace sk::tools
