// The one option registry (DESIGN section 4), shared by the C++ API, the op
// list ("options" and "scopes.*.options") and sk-compile --options.
//
// Format "key=value:key=value"; list values comma-separated. Unknown keys,
// duplicate keys, empty or ill-typed values are errors that name the key and
// the accepted values.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "superkernel/support/Error.h"

namespace sk {

/// Which code an op prefetches for the next sub-kernel. Auto: the target's MachineModel::defaultPreloadCode
/// (the planner resolves it into every step's options, plan/Bind.cpp).
enum class PreloadCode : uint8_t { Auto, None, PerFunc, Max };
/// What a core prefetches of the inputs no op of the step writes (its weights; plan/DataPreload.cpp): nothing;
/// first-block: an op that waits, the start of its core's first block of each such input, before the wait;
/// lookahead: that, and the next ops' slices too (within the machine's budget), so their loads overlap the ops
/// before them. Auto: the target's MachineModel::defaultPreloadData (the planner resolves it, plan/Bind.cpp).
enum class PreloadData : uint8_t { Auto, None, FirstBlock, Lookahead };
enum class StrictScope : uint8_t { Bypass, Abort };

struct Options {
  int earlyStart = 1;                      // 0, 1, 2
  PreloadCode preloadCode = PreloadCode::Auto;
  bool streamFusion = false;
  std::optional<int> splitMode;            // unset: the target's MachineModel::defaultSplitMode
  int funcAlign = 512;                     // 0 or power of two
  bool feedSyncAll = false;
  bool debugSyncAll = false;
  bool profiling = false;
  std::vector<std::string> compileOptions; // extra compiler argv items
  StrictScope strictScopeCheck = StrictScope::Bypass;
  int debugCoreNum = 0;                    // 0: executor's worker count
  bool syncModel = true;                   // false: syncs chosen by the correctness rules alone
  PreloadData preloadData = PreloadData::Auto;

  /// split-mode, or `targetDefault` (the machine model's defaultSplitMode) when unset.
  int effectiveSplitMode(int targetDefault) const;
  /// Every key, sorted, with its value: the form hashed into cache keys and
  /// shown in reports. Parsing it back yields an equal Options.
  std::string canonical() const;
  bool operator==(const Options&) const = default;
};

struct OptionInfo {
  const char* key;
  const char* values;                      // accepted values, human readable
  const char* defaultValue;
  const char* meaning;
};
const std::vector<OptionInfo>& optionRegistry();

/// Parse `text` over `base` (keys in text override base; a key twice in
/// `text` is an error). Empty text returns base.
Expected<Options> parseOptions(std::string_view text, const Options& base = {});

/// Every check an op list's "options" get (parseOptions, then the
/// compile-options grammar of docs/OPLIST.md "What strings may contain"): the
/// one rule for option strings from anywhere, the file, `sk-compile
/// --options`, SessionOptions::options and CompileRequest::options. BadInput
/// with the problem; the caller says where the string came from.
Status checkOptionString(std::string_view text);

const char* preloadCodeName(PreloadCode p);
const char* preloadDataName(PreloadData p);

}  // namespace sk
