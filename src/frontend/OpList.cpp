// Small helpers of the op-list data model (dtypes, lookups) and the message
// helpers every front-end error goes through, so that all of them read
// "<file>: <json path>: <what>".
#include <cctype>
#include <nlohmann/json.hpp>

#include "frontend/OpListInternal.h"
#include "superkernel/target/Targets.h"
#include "superkernel/support/Paths.h"

namespace sk {

namespace {
struct DTypeInfo {
  DType t;
  const char* name;
  const char* ctype;
  size_t size;
};
constexpr DTypeInfo kDTypes[] = {
    {DType::F32, "f32", "float", 4},      {DType::F64, "f64", "double", 8},
    {DType::F16, "f16", "uint16_t", 2},   {DType::BF16, "bf16", "uint16_t", 2},
    {DType::I8, "i8", "int8_t", 1},       {DType::I16, "i16", "int16_t", 2},
    {DType::I32, "i32", "int32_t", 4},    {DType::I64, "i64", "int64_t", 8},
    {DType::U8, "u8", "uint8_t", 1},      {DType::U16, "u16", "uint16_t", 2},
    {DType::U32, "u32", "uint32_t", 4},   {DType::U64, "u64", "uint64_t", 8},
    // bool is one byte in both the op list and the C ABI (C11/C++ bool).
    {DType::Bool, "bool", "bool", 1},
};
const DTypeInfo& info(DType t) {
  for (const auto& d : kDTypes)
    if (d.t == t) return d;
  return kDTypes[0];
}
}  // namespace

size_t dtypeSize(DType t) { return info(t).size; }
const char* dtypeName(DType t) { return info(t).name; }
const char* dtypeCType(DType t) { return info(t).ctype; }
bool dtypeIsFloat(DType t) { return t == DType::F32 || t == DType::F64 || t == DType::F16 || t == DType::BF16; }
std::string scalarMacroName(std::string_view param) {
  std::string macro = "SK_";
  for (char c : param) macro += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return macro;
}

std::optional<__int128> scalarInteger(const ScalarValue& v) {
  if (const auto* i = std::get_if<int64_t>(&v)) return *i;
  if (const auto* u = std::get_if<uint64_t>(&v)) return *u;
  return std::nullopt;
}

double scalarAsDouble(const ScalarValue& v) {
  if (const auto* d = std::get_if<double>(&v)) return *d;
  return static_cast<double>(*scalarInteger(v));
}

std::pair<__int128, __int128> dtypeIntRange(DType t) {
  switch (t) {
    case DType::I8: return {INT8_MIN, INT8_MAX};
    case DType::I16: return {INT16_MIN, INT16_MAX};
    case DType::I32: return {INT32_MIN, INT32_MAX};
    case DType::I64: return {INT64_MIN, INT64_MAX};
    case DType::U8: return {0, UINT8_MAX};
    case DType::U16: return {0, UINT16_MAX};
    case DType::U32: return {0, UINT32_MAX};
    case DType::U64: return {0, static_cast<__int128>(UINT64_MAX)};
    case DType::Bool: return {0, 1};
    default: return {0, 0};
  }
}
std::optional<DType> parseDType(std::string_view s) {
  for (const auto& d : kDTypes)
    if (s == d.name) return d.t;
  return std::nullopt;
}

const char* coreTypeName(CoreType t) {
  switch (t) {
    case CoreType::Vector: return "vector";
    case CoreType::Cube: return "cube";
    case CoreType::Mix: return "mix";
  }
  return "?";
}
std::optional<CoreType> parseCoreType(std::string_view s) {
  for (CoreType t : {CoreType::Vector, CoreType::Cube, CoreType::Mix})
    if (s == coreTypeName(t)) return t;
  return std::nullopt;
}

const char* collectiveKindName(CollectiveKind k) {
  switch (k) {
    case CollectiveKind::AllReduce: return "all_reduce";
    case CollectiveKind::AllGather: return "all_gather";
    case CollectiveKind::ReduceScatter: return "reduce_scatter";
    case CollectiveKind::AllToAll: return "all_to_all";
  }
  return "?";
}
std::optional<CollectiveKind> parseCollectiveKind(std::string_view s) {
  for (CollectiveKind k : {CollectiveKind::AllReduce, CollectiveKind::AllGather, CollectiveKind::ReduceScatter,
                           CollectiveKind::AllToAll})
    if (s == collectiveKindName(k)) return k;
  return std::nullopt;
}
const char* reduceOpName(ReduceOp r) {
  switch (r) {
    case ReduceOp::None: return "";
    case ReduceOp::Sum: return "sum";
    case ReduceOp::Max: return "max";
  }
  return "";
}
std::optional<ReduceOp> parseReduceOp(std::string_view s) {
  if (s == "sum") return ReduceOp::Sum;
  if (s == "max") return ReduceOp::Max;
  return std::nullopt;
}

const char* accessName(Access a) {
  switch (a) {
    case Access::Read: return "read";
    case Access::Write: return "write";
    case Access::ReadWrite: return "readwrite";
  }
  return "read";
}
const char* partitionName(Partition p) { return p == Partition::Block ? "block" : "all"; }

int64_t KernelDecl::attribute(std::string_view key, int64_t fallback) const {
  auto it = attributes.find(std::string(key));
  return it == attributes.end() ? fallback : it->second;
}

const ParamDecl* KernelDecl::findParam(std::string_view n) const {
  for (const auto& p : params)
    if (p.name == n) return &p;
  return nullptr;
}

uint64_t BufferDecl::elements() const {
  // Saturates instead of wrapping; validateBuffer rejects such shapes.
  uint64_t n = 1;
  for (int64_t d : shape) {
    if (d <= 0) return 0;
    if (n > UINT64_MAX / static_cast<uint64_t>(d)) return UINT64_MAX;
    n *= static_cast<uint64_t>(d);
  }
  return n;
}

const ArgValue* Op::findArg(std::string_view param) const {
  for (const auto& [k, v] : args)
    if (k == param) return &v;
  return nullptr;
}

const KernelDecl* OpList::findKernel(std::string_view name) const {
  for (const auto& k : kernels)
    if (k.name == name) return &k;
  return nullptr;
}
const BufferDecl* OpList::findBuffer(std::string_view name) const {
  int i = bufferIndex(name);
  return i < 0 ? nullptr : &buffers[static_cast<size_t>(i)];
}
int OpList::bufferIndex(std::string_view name) const {
  for (size_t i = 0; i < buffers.size(); ++i)
    if (buffers[i].name == name) return static_cast<int>(i);
  return -1;
}

std::filesystem::path templatesDir() { return dataTemplatesDir(); }

OpList retargetOpList(OpList list, const std::string& target) {
  if (target.empty() || target == list.target) return list;
  // A target that compiles another's kernels (cuda-sim: cuda's) reads a plain source as that target's.
  const std::string own = kernelsFolderOf(list.target);
  if (own != kernelsFolderOf(target)) {
    for (KernelDecl& k : list.kernels) {
      if (!k.builtin.empty() || !k.sources.empty()) continue;
      k.sources[own] = k.source;
      k.sourcePaths[own] = k.sourcePath;
    }
  }
  list.target = target;
  return list;
}

namespace detail {

bool isIdentifier(std::string_view s) {
  if (s.empty()) return false;
  auto alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  if (!alpha(s[0])) return false;
  for (char c : s)
    if (!alpha(c) && !(c >= '0' && c <= '9')) return false;
  return true;
}

}  // namespace detail

namespace oplist {

using detail::ojson;

std::string quote(std::string_view s) {
  // nlohmann's dump escapes control characters and quotes; invalid UTF-8 is
  // replaced rather than thrown on, since messages must never throw.
  return ojson(std::string(s)).dump(-1, ' ', false, ojson::error_handler_t::replace);
}

std::string pathKey(std::string_view key) {
  bool simple = !key.empty();
  for (char c : key)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-'))
      simple = false;
  if (simple) return "." + std::string(key);
  return "[" + quote(key) + "]";
}

Error pathError(const std::string& origin, const std::string& path, const std::string& msg) {
  std::string p = path;
  if (!p.empty() && p[0] == '.') p.erase(0, 1);
  std::string out;
  if (!origin.empty()) out = origin + ": ";
  if (!p.empty()) out += p + ": ";
  return badInput(out + msg);
}

std::string opPath(size_t i) { return "ops[" + std::to_string(i) + "]"; }

}  // namespace oplist
}  // namespace sk
