// The option registry (DESIGN section 4) and the "key=value:key=value" parser.
//
// Guarantees: every key of section 4 is in optionRegistry(); parseOptions
// accepts exactly the values listed there and rejects unknown keys, a key
// given twice in one string, items without '=', empty values and ill-typed
// values with a BadInput error that names the key and the accepted values;
// canonical() prints a string that parses back to an equal Options.
//
// Escaping: ':' separates items and ',' separates list items, so a
// compile-options item that itself contains ':' or ',' (e.g. -Wl,-rpath,/x)
// is written with a backslash before it ("-Wl\,-rpath\,/x"); "\\" is a
// backslash. canonical() escapes the same way. No shell ever sees these
// values (the driver passes them as argv items), so the only characters
// rejected in compile-options items are NUL and newlines (which no compiler
// flag needs and which would corrupt cache-key records and reports).
#include "superkernel/frontend/Options.h"

#include "support/EscapedSplit.h"
#include "support/InputGrammar.h"

#include <algorithm>
#include <charconv>
#include <set>

namespace sk {

namespace {

constexpr int kMaxDebugCoreNum = 65536;     // same bound as OpListLimits::maxBlockDim
constexpr int kMaxFuncAlign = 1 << 20;      // 1 MiB: beyond that alignment is a typo

const std::vector<OptionInfo> kRegistry = {
    {"early-start", "0, 1, 2", "1",
     "0: a full barrier between dependent ops; 1: per-edge waits, kernels' early-start points honoured; "
     "2: per-edge waits before each call"},
    {"preload-code", "auto, none, per-func, max", "auto", "prefetch the next sub-kernel's code (auto: the target's choice)"},
    {"preload-data", "auto, none, first-block, lookahead", "auto",
     "prefetch inputs no op of the step writes: an op that waits, the start of its first block of each before "
     "the wait (first-block), and the next ops' slices too (lookahead); auto: the target's choice"},
    {"stream-fusion", "0, 1", "0", "1: streams run concurrently on separate core queues"},
    {"split-mode", "1..64", "1 (cpu), 4 (ascend)", "code copies per sub-kernel"},
    {"func-align", "0 or a power of 2 up to 1048576", "512", "alignment of entry and sub-kernel copies"},
    {"feed-sync-all", "0, 1", "0", "idle cores take part in an op's internal syncs"},
    {"debug-sync-all", "0, 1", "0", "a full barrier after every op"},
    {"profiling", "0, 1", "0", "record per-core timestamps"},
    {"compile-options", "comma-separated compiler flags (no empty items, NUL or newline)", "",
     "extra compiler argv items"},
    {"strict-scope-check", "bypass, abort", "bypass", "a broken scope warns and splits, or fails"},
    {"debug-core-num", "0..65536", "0", "force the SuperKernel's core count (0: worker count)"},
    {"sync-model", "on, off", "on",
     "on: among the correct syncs of an op boundary pick the cheapest by the machine's measured costs "
     "(a barrier where it costs less than the edges' waits); off: the correctness rules' choice alone"},
};

const OptionInfo* findInfo(std::string_view key) {
  for (const auto& info : kRegistry)
    if (key == info.key) return &info;
  return nullptr;
}

std::string validKeys() {
  std::vector<std::string> keys;
  for (const auto& info : kRegistry) keys.emplace_back(info.key);
  std::sort(keys.begin(), keys.end());
  std::string out;
  for (const auto& k : keys) out += (out.empty() ? "" : ", ") + k;
  return out;
}

Error invalidValue(const OptionInfo& info, std::string_view value, std::string_view why = {}) {
  std::string msg = "option \"" + std::string(info.key) + "\": invalid value \"" + std::string(value) + "\"";
  if (!why.empty()) msg += " (" + std::string(why) + ")";
  msg += " (accepted: " + std::string(info.values) + ")";
  return badInput(std::move(msg));
}

// Strict decimal: digits only, no sign, no spaces, fits an int.
std::optional<int> parseInt(std::string_view s) {
  if (s.empty() || s.size() > 9) return std::nullopt;
  for (char c : s)
    if (c < '0' || c > '9') return std::nullopt;
  int v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

Expected<int> intIn(const OptionInfo& info, std::string_view v, int lo, int hi) {
  auto n = parseInt(v);
  if (!n || *n < lo || *n > hi) return invalidValue(info, v);
  return *n;
}

Expected<bool> boolValue(const OptionInfo& info, std::string_view v) {
  if (v == "0") return false;
  if (v == "1") return true;
  return invalidValue(info, v);
}


std::string escapeItem(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '\\' || c == ':' || c == ',') out += '\\';
    out += c;
  }
  return out;
}

Status applyOption(Options& o, const OptionInfo& info, std::string_view key, std::string_view raw) {
  // `raw` still carries the list-level escapes; scalar values never need
  // them, so a backslash in one is simply an invalid value.
  std::string value(raw);
  if (key == "early-start") {
    SK_ASSIGN_OR_RETURN(o.earlyStart, intIn(info, value, 0, 2));
  } else if (key == "preload-code") {
    if (value == "auto") o.preloadCode = PreloadCode::Auto;
    else if (value == "none") o.preloadCode = PreloadCode::None;
    else if (value == "per-func") o.preloadCode = PreloadCode::PerFunc;
    else if (value == "max") o.preloadCode = PreloadCode::Max;
    else return invalidValue(info, value);
  } else if (key == "stream-fusion") {
    SK_ASSIGN_OR_RETURN(o.streamFusion, boolValue(info, value));
  } else if (key == "split-mode") {
    SK_ASSIGN_OR_RETURN(int v, intIn(info, value, 1, 64));
    o.splitMode = v;
  } else if (key == "func-align") {
    SK_ASSIGN_OR_RETURN(int v, intIn(info, value, 0, kMaxFuncAlign));
    if (v != 0 && (v & (v - 1)) != 0) return invalidValue(info, value, "not a power of 2");
    o.funcAlign = v;
  } else if (key == "feed-sync-all") {
    SK_ASSIGN_OR_RETURN(o.feedSyncAll, boolValue(info, value));
  } else if (key == "debug-sync-all") {
    SK_ASSIGN_OR_RETURN(o.debugSyncAll, boolValue(info, value));
  } else if (key == "profiling") {
    SK_ASSIGN_OR_RETURN(o.profiling, boolValue(info, value));
  } else if (key == "compile-options") {
    std::vector<std::string> items = splitEscaped(raw, ',', true);
    for (size_t i = 0; i < items.size(); ++i) {
      const std::string& it = items[i];
      if (it.empty())
        return invalidValue(info, raw, "item " + std::to_string(i + 1) + " is empty");
      if (it.find('\0') != std::string::npos || it.find('\n') != std::string::npos ||
          it.find('\r') != std::string::npos)
        return invalidValue(info, raw, "item " + std::to_string(i + 1) + " contains NUL or a newline");
    }
    o.compileOptions = std::move(items);
  } else if (key == "strict-scope-check") {
    if (value == "bypass") o.strictScopeCheck = StrictScope::Bypass;
    else if (value == "abort") o.strictScopeCheck = StrictScope::Abort;
    else return invalidValue(info, value);
  } else if (key == "preload-data") {
    if (value == "auto") o.preloadData = PreloadData::Auto;
    else if (value == "none") o.preloadData = PreloadData::None;
    else if (value == "first-block") o.preloadData = PreloadData::FirstBlock;
    else if (value == "lookahead") o.preloadData = PreloadData::Lookahead;
    else return invalidValue(info, value);
  } else if (key == "sync-model") {
    if (value == "on") o.syncModel = true;
    else if (value == "off") o.syncModel = false;
    else return invalidValue(info, value);
  } else if (key == "debug-core-num") {
    SK_ASSIGN_OR_RETURN(o.debugCoreNum, intIn(info, value, 0, kMaxDebugCoreNum));
  } else {
    return internalError("option \"" + std::string(key) + "\" is registered but not handled");
  }
  return Status::success();
}

}  // namespace

const std::vector<OptionInfo>& optionRegistry() { return kRegistry; }

const char* preloadCodeName(PreloadCode p) {
  switch (p) {
    case PreloadCode::Auto: return "auto";
    case PreloadCode::None: return "none";
    case PreloadCode::PerFunc: return "per-func";
    case PreloadCode::Max: return "max";
  }
  return "per-func";
}

const char* preloadDataName(PreloadData p) {
  switch (p) {
    case PreloadData::Auto: return "auto";
    case PreloadData::None: return "none";
    case PreloadData::FirstBlock: return "first-block";
    case PreloadData::Lookahead: return "lookahead";
  }
  return "auto";
}

int Options::effectiveSplitMode(int targetDefault) const { return splitMode ? *splitMode : targetDefault; }

std::string Options::canonical() const {
  // Sorted by key. Keys whose value is "unset" are left out because no
  // written value means unset: split-mode (target default) and an empty
  // compile-options list (an empty value is an error by design).
  std::vector<std::pair<std::string, std::string>> kv;
  if (!compileOptions.empty()) {
    std::string list;
    for (size_t i = 0; i < compileOptions.size(); ++i)
      list += (i ? "," : "") + escapeItem(compileOptions[i]);
    kv.emplace_back("compile-options", list);
  }
  kv.emplace_back("debug-core-num", std::to_string(debugCoreNum));
  kv.emplace_back("debug-sync-all", debugSyncAll ? "1" : "0");
  kv.emplace_back("early-start", std::to_string(earlyStart));
  kv.emplace_back("feed-sync-all", feedSyncAll ? "1" : "0");
  kv.emplace_back("func-align", std::to_string(funcAlign));
  kv.emplace_back("preload-code", preloadCodeName(preloadCode));
  kv.emplace_back("preload-data", preloadDataName(preloadData));
  kv.emplace_back("profiling", profiling ? "1" : "0");
  if (splitMode) kv.emplace_back("split-mode", std::to_string(*splitMode));
  kv.emplace_back("stream-fusion", streamFusion ? "1" : "0");
  kv.emplace_back("strict-scope-check", strictScopeCheck == StrictScope::Abort ? "abort" : "bypass");
  kv.emplace_back("sync-model", syncModel ? "on" : "off");
  std::string out;
  for (const auto& [k, v] : kv) out += (out.empty() ? "" : ":") + k + "=" + v;
  return out;
}

Expected<Options> parseOptions(std::string_view text, const Options& base) {
  Options o = base;
  if (text.empty()) return o;
  std::set<std::string> seen;
  // Split on unescaped ':' but keep escapes for the value's own list split.
  for (const std::string& item : splitEscaped(text, ':', false)) {
    if (item.empty())
      return badInput("options \"" + std::string(text) + "\": empty item (expected key=value)");
    size_t eq = item.find('=');
    std::string key = item.substr(0, eq);
    const OptionInfo* info = findInfo(key);
    if (!info) return badInput("unknown option \"" + key + "\" (valid keys: " + validKeys() + ")");
    if (eq == std::string::npos)
      return badInput("option \"" + key + "\": missing \"=value\" (accepted: " + info->values + ")");
    if (!seen.insert(key).second) return badInput("option \"" + key + "\" given twice");
    std::string_view value = std::string_view(item).substr(eq + 1);
    if (value.empty())
      return badInput("option \"" + key + "\": empty value (accepted: " + info->values + ")");
    SK_RETURN_IF_ERROR(applyOption(o, *info, key, value));
  }
  return o;
}

Status checkOptionString(std::string_view text) {
  auto o = parseOptions(text);
  if (!o) return o.error();
  if (std::string p = grammar::compileOptionsProblem(o->compileOptions); !p.empty()) return badInput(p);
  return Status::success();
}

}  // namespace sk
