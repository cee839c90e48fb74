// The suites' option square (tests/OptionSquare.h): all 9 cells a Latin square (each pair of values once),
// and its diagonal (CI's sanitizer stage) each early-start level, preload mode and core count once.
#include <gtest/gtest.h>

#include <cstdlib>
#include <set>
#include <string>

#include "OptionSquare.h"

namespace option_square_test {

TEST(OptionSquare, FullSquareIsLatinAndTheDiagonalCoversEachValueOnce) {
  ::unsetenv("SK_TEST_OPTION_SQUARE");
  auto full = sktest::optionSquare({1, 2, 4});
  ASSERT_EQ(full.size(), 9u);
  std::set<std::string> esCores, preloadCores;
  for (const auto& c : full) {
    esCores.insert(std::to_string(c.earlyStart) + "/" + std::to_string(c.cores));
    preloadCores.insert(std::string(c.preload) + "/" + std::to_string(c.cores));
  }
  EXPECT_EQ(esCores.size(), 9u);
  EXPECT_EQ(preloadCores.size(), 9u);
  EXPECT_EQ(full[0].options(), "early-start=0:preload-code=none");

  ::setenv("SK_TEST_OPTION_SQUARE", "diagonal", 1);
  auto diag = sktest::optionSquare({1, 2, 4});
  ::unsetenv("SK_TEST_OPTION_SQUARE");
  ASSERT_EQ(diag.size(), 3u);
  std::set<int> es;
  std::set<std::string> preloads;
  std::set<uint32_t> cores;
  for (const auto& c : diag) {
    es.insert(c.earlyStart);
    preloads.insert(c.preload);
    cores.insert(c.cores);
  }
  EXPECT_EQ(es.size(), 3u);
  EXPECT_EQ(preloads.size(), 3u);
  EXPECT_EQ(cores, (std::set<uint32_t>{1, 2, 4}));
}

}  // namespace option_square_test
