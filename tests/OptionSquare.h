// The suites' option square: early-start {0,1,2} x preload-code {none, per-func, max}, with the core count
// {1,2,4} as the third coordinate of a Latin square (each pair of values meets once: 9 cells).
//
// SK_TEST_OPTION_SQUARE=diagonal keeps the 3 diagonal cells: each early-start level, each preload mode and each
// core count once. CI's sanitizer stage sets it for the simulator suites, whose 9 cells compile and run the
// same generated code 9 times with the same library paths; the release stage runs every cell.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace sktest {

struct OptionCell {
  int earlyStart;
  const char* preload;
  uint32_t cores;
  /// "early-start=E:preload-code=P".
  std::string options() const { return "early-start=" + std::to_string(earlyStart) + ":preload-code=" + preload; }
};

/// The square's cells, row by row; `cores` are the three core counts (the first cell gets cores[0]).
inline std::vector<OptionCell> optionSquare(const uint32_t (&cores)[3]) {
  static const char* const kPreloads[] = {"none", "per-func", "max"};
  const char* mode = std::getenv("SK_TEST_OPTION_SQUARE");
  const bool diagonal = mode && std::strcmp(mode, "diagonal") == 0;
  std::vector<OptionCell> cells;
  for (int es = 0; es < 3; ++es)
    for (int p = 0; p < 3; ++p)
      if (!diagonal || es == p) cells.push_back({es, kPreloads[p], cores[(es + p) % 3]});
  return cells;
}

}  // namespace sktest
