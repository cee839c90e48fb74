// libFuzzer entry: any bytes through parseOpList (which also validates);
// an accepted list must survive write -> parse unchanged. Crashes, sanitizer
// reports, uncaught exceptions and round-trip mismatches are findings.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "superkernel/frontend/OpList.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Relative sources resolve against the seed corpus's directory so that
  // valid seeds stay valid and mutations reach the deeper checks.
  static const std::filesystem::path base = std::filesystem::path(SK_SOURCE_ROOT) / "tests/plan/data";
  sk::OpListLimits limits;
  limits.maxFileBytes = 1 << 20;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto list = sk::parseOpList(text, "fuzz.json", base, limits);
  if (!list) return 0;
  std::string written = sk::writeOpList(*list);
  auto again = sk::parseOpList(written, "fuzz.json", base, limits);
  if (!again || !(*again == *list)) std::abort();
  if (sk::writeOpList(*again) != written) std::abort();
  return 0;
}
