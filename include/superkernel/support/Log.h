// Logging: spdlog, level from SK_LOG_LEVEL (trace|debug|info|warn|error|off),
// quiet (warn) by default. Call initLogging() once; it is idempotent and
// cheap, and every public entry point that may log calls it.
#pragma once

namespace sk {
void initLogging();
}  // namespace sk
