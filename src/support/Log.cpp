#include "superkernel/support/Log.h"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <mutex>

namespace sk {

void initLogging() {
  static std::once_flag once;
  std::call_once(once, [] {
    // Diagnostics go to stderr so tool output on stdout stays machine-readable.
    auto logger = spdlog::stderr_color_mt("superkernel");
    logger->set_pattern("[superkernel %l] %v");
    spdlog::set_default_logger(logger);
    spdlog::level::level_enum level = spdlog::level::warn;
    if (const char* env = std::getenv("SK_LOG_LEVEL"); env && *env) {
      level = spdlog::level::from_str(env);
      // from_str maps unknown names to "off"; say so instead of going silent.
      if (level == spdlog::level::off && std::string(env) != "off") {
        level = spdlog::level::warn;
        spdlog::warn("SK_LOG_LEVEL={} is not one of trace, debug, info, warn, error, off; using warn", env);
      }
    }
    spdlog::set_level(level);
  });
}

}  // namespace sk
