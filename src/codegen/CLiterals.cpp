// The pieces every C-family emitter prints alike (codegen/Emitter.h): a dtype's
// C type, a scalar's exact C++ literal, an identifier made from a name, and
// the preload-code rule. Shared code: the cpu, cuda and ascend back ends call
// these, so none of them reaches into another's emitter.
#include <fmt/format.h>

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <limits>

#include "superkernel/codegen/Emitter.h"

namespace sk {
namespace {

constexpr uint64_t kPreloadGranule = 2048;
constexpr uint64_t kPreloadMax = 16384;
// The templates' sk_preload prefetches whole 2 KiB steps.
static_assert(kPreloadGranule % 2048 == 0 && kPreloadMax % 2048 == 0, "sk_preload works in 2 KiB steps");

// An exact C++ literal of v: hexfloat, or the builtins for NaN and infinities.
std::string hexFloat(double v, const char* suffix) {
  if (std::isnan(v)) return std::string("__builtin_nan") + (suffix[0] ? "f" : "") + "(\"\")";
  if (std::isinf(v)) return std::string(v < 0 ? "-" : "") + "__builtin_inf" + (suffix[0] ? "f" : "") + "()";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%a", v);
  return std::string(buf) + suffix;
}

}  // namespace

uint64_t preloadBytes(PreloadCode mode, uint64_t codeBytes) {
  switch (mode) {
    case PreloadCode::None:
      return 0;
    case PreloadCode::Max:
      return kPreloadMax;
    case PreloadCode::Auto:  // the planner resolves auto (plan/Bind.cpp); a hand-built step reads as per-func
    case PreloadCode::PerFunc: {
      // Unknown size (0): one granule, the smallest useful prefetch.
      uint64_t rounded = std::max<uint64_t>(kPreloadGranule, (codeBytes + kPreloadGranule - 1) / kPreloadGranule *
                                                                 kPreloadGranule);
      return std::min(rounded, kPreloadMax);
    }
  }
  return 0;
}

const char* cType(DType t) { return dtypeCType(t); }

std::string cParamType(const ParamDecl& p) {
  if (p.kind != ParamKind::Buffer) return cType(p.dtype);
  return std::string(p.access == Access::Read ? "const " : "") + cType(p.dtype) + "*";
}

Expected<std::string> cScalarLiteral(const ScalarValue& v, DType t) {
  if (t == DType::F16 || t == DType::BF16) {
    return badInput(fmt::format("scalar of dtype {} is not supported (2-byte storage types are buffers only)",
                                dtypeName(t)));
  }
  if (t == DType::F64 || t == DType::F32) {
    double d = scalarAsDouble(v);
    if (t == DType::F32) {
      // Round to float here so the literal is exactly the value passed.
      if (std::isfinite(d) && std::fabs(d) > std::numeric_limits<float>::max()) {
        return badInput(fmt::format("{} does not fit in f32", d));
      }
      return hexFloat(static_cast<double>(static_cast<float>(d)), "f");
    }
    return hexFloat(d, "");
  }
  // Integral types: the value must be an exact integer in range.
  __int128 value = 0;
  if (auto i = scalarInteger(v)) {
    value = *i;
  } else {
    double d = std::get<double>(v);
    if (!std::isfinite(d) || std::trunc(d) != d || std::fabs(d) > 1.8446744073709552e19) {
      return badInput(fmt::format("{} is not an integer value for a {} parameter", d, dtypeName(t)));
    }
    value = static_cast<__int128>(d);
  }
  auto [lo, hi] = dtypeIntRange(t);
  if (value < lo || value > hi) {
    return badInput(fmt::format("{} is out of range for a {} parameter", static_cast<long long>(value), dtypeName(t)));
  }
  switch (t) {
    case DType::Bool:
      return std::string(value ? "true" : "false");
    case DType::I64:
      if (value == INT64_MIN) return std::string("(-INT64_C(9223372036854775807) - 1)");
      return fmt::format("INT64_C({})", static_cast<int64_t>(value));
    case DType::U64:
      return fmt::format("UINT64_C({})", static_cast<uint64_t>(value));
    case DType::I32:
      if (value == INT32_MIN) return std::string("(-2147483647 - 1)");
      return fmt::format("{}", static_cast<int64_t>(value));
    case DType::U32:
      return fmt::format("{}u", static_cast<uint64_t>(value));
    default:
      return fmt::format("static_cast<{}>({})", cType(t), static_cast<int64_t>(value));
  }
}

std::string sanitizeIdentifier(std::string_view s) {
  std::string out;
  for (char c : s) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    out += ok ? c : '_';
  }
  if (out.empty() || (out[0] >= '0' && out[0] <= '9')) out.insert(out.begin(), '_');
  return out;
}

}  // namespace sk
