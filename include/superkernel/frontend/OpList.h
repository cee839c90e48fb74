// The op list: the in-memory form of DESIGN section 3 (format v1).
//
// This is the single value type between the front end (JSON parser, Graph
// recorder) and the planner. It holds exactly what the file says (plus the
// directory that relative kernel sources resolve against), so parse -> write
// is lossless. Validation beyond syntax lives in validateOpList().
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "superkernel/support/Error.h"

namespace sk {

enum class DType : uint8_t { F32, F64, F16, BF16, I8, I16, I32, I64, U8, U16, U32, U64, Bool };

/// Storage size in bytes (f16/bf16: 2).
size_t dtypeSize(DType t);
/// The op-list spelling ("f32", "bool", ...).
const char* dtypeName(DType t);
std::optional<DType> parseDType(std::string_view s);

/// The cores a kernel's blocks run on (the planner picks the core pool by
/// it, plan/MachineModel.h). Ascend has separate cube and vector cores; on a
/// single-pool target (cpu, cuda) every type runs on the one pool.
enum class CoreType : uint8_t { Vector, Cube, Mix };
const char* coreTypeName(CoreType t);
std::optional<CoreType> parseCoreType(std::string_view s);
/// The cpu-ABI C type ("float", "uint16_t" for f16/bf16, "bool").
const char* dtypeCType(DType t);
/// f32, f64, f16, bf16.
bool dtypeIsFloat(DType t);
/// [lo, hi] of an integral dtype (bool: [0, 1]); wide enough for INT64_MIN
/// and UINT64_MAX. Float dtypes: [0, 0].
std::pair<__int128, __int128> dtypeIntRange(DType t);

enum class ParamKind : uint8_t { Buffer, Scalar };
enum class Access : uint8_t { Read, Write, ReadWrite };
enum class Partition : uint8_t { Block, All };

const char* accessName(Access a);
const char* partitionName(Partition p);
inline bool writes(Access a) { return a != Access::Read; }
inline bool reads(Access a) { return a != Access::Write; }

struct ParamDecl {
  std::string name;
  ParamKind kind = ParamKind::Buffer;
  DType dtype = DType::F32;
  Access access = Access::Read;            // buffers only
  Partition partition = Partition::All;    // buffers only
  /// Scalars only ("runtime": true): the parameter may take a runtime value,
  /// an element of a buffer read on the device when the op is called
  /// (RuntimeScalar), so one compiled object serves every value. A kernel
  /// declares it where its code uses the parameter only as an ordinary value:
  /// on ascend a scalar's SK_<NAME> macro then expands to a read of device
  /// memory, never usable in `#if` or a constant expression.
  bool runtime = false;
  bool operator==(const ParamDecl&) const = default;
};

/// "SK_<NAME>" (upper case): the macro by which a scalar parameter is
/// compiled in where a target takes scalars at compile time (ascend) and
/// by which every target's builtins take a static shape.
std::string scalarMacroName(std::string_view param);

struct KernelDecl {
  std::string name;                        // key in "kernels"
  std::string builtin;                     // non-empty: a kernel of kernels/<target>/
  std::string source;                      // as written in the file (relative to it)
  std::filesystem::path sourcePath;        // resolved absolute path of the source
  /// "sources": one source per target, in place of "source" (DESIGN section
  /// 9). resolveKernel() picks the list's target into source/sourcePath.
  std::map<std::string, std::string> sources;
  std::map<std::string, std::filesystem::path> sourcePaths;
  std::string entry;                       // function name in the source
  CoreType coreType = CoreType::Vector;
  bool earlyStart = false;                 // calls sk_wait_inputs itself
  bool kernelSync = false;                 // calls sk_kernel_sync: all blocks must run at once
  /// "block_dim_invariant": the outputs do not depend on block_dim (blocks only
  /// split the work), so a fused plan may run the op with fewer blocks
  /// (plan/Coarsen.cpp: one block per core when block_dim exceeds the cores).
  bool blockDimInvariant = false;
  /// Keys one back end defines for its kernels (target/Targets.h,
  /// KernelAttribute): cuda's "threads" and "shared_bytes", ascend's
  /// "sync_all_calls". The shared parser carries them as integers, the back
  /// end that defines a key checks and reads it, other targets ignore it.
  std::map<std::string, int64_t> attributes;
  /// attributes[key], or `fallback` when the declaration does not set it.
  int64_t attribute(std::string_view key, int64_t fallback = 0) const;
  std::vector<ParamDecl> params;
  std::map<std::string, std::string> macros;

  const ParamDecl* findParam(std::string_view n) const;
  bool operator==(const KernelDecl&) const = default;
};

struct BufferInit {
  enum class Kind : uint8_t { Zeros, Ones, Random, Iota, File };
  Kind kind = Kind::Zeros;
  std::string file;                        // Kind::File: as written (relative to op list)
  bool explicitZeros = false;              // "init": "zeros" was written (round trip)
  bool operator==(const BufferInit&) const = default;
};

struct BufferDecl {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  BufferInit init;

  uint64_t elements() const;               // product of shape (validated not to overflow)
  uint64_t bytes() const { return elements() * dtypeSize(dtype); }
  bool operator==(const BufferDecl&) const = default;
};

/// A buffer argument: the whole buffer, or a view of `count` elements at `offset`.
struct BufferRef {
  std::string buffer;
  bool isView = false;
  uint64_t offset = 0;
  uint64_t count = 0;                      // views only; whole buffer: elements()
  bool operator==(const BufferRef&) const = default;
};

/// A scalar argument; the JSON number's form decides int vs float. Integers
/// are int64_t, except those above INT64_MAX (only a u64 parameter takes
/// them), which are uint64_t: one spelling per value, so equal values compare
/// equal.
using ScalarValue = std::variant<int64_t, double, uint64_t>;
/// The integer value of an int64_t or uint64_t scalar (nullopt for double).
std::optional<__int128> scalarInteger(const ScalarValue& v);
/// Any scalar as a double (what a float parameter receives).
double scalarAsDouble(const ScalarValue& v);

/// A runtime scalar argument (`{"from": "step", "index": 0}`): element
/// `index` of buffer `from`, whose dtype is the parameter's, read on the device
/// each time the op is called. Neither the generated source nor the cache key
/// depends on the value, so a decode loop that changes the position in that
/// buffer between (or inside) runs compiles once. The op reads the element
/// like a read argument: an op of the same plan that writes it orders before.
struct RuntimeScalar {
  std::string buffer;
  uint64_t index = 0;
  bool operator==(const RuntimeScalar&) const = default;
};

struct ArgValue {
  std::variant<BufferRef, ScalarValue, RuntimeScalar> value;
  bool isBuffer() const { return value.index() == 0; }
  /// A literal number (not a buffer, not a runtime scalar).
  bool isScalar() const { return value.index() == 1; }
  bool isRuntime() const { return value.index() == 2; }
  const BufferRef& buffer() const { return std::get<0>(value); }
  const ScalarValue& scalar() const { return std::get<1>(value); }
  const RuntimeScalar& runtime() const { return std::get<2>(value); }
  bool operator==(const ArgValue&) const = default;
};

/// A collective over a group of ranks (docs/COLLECTIVES.md). Ranks are the
/// processes of one communicator (MPI on cpu); every rank of the group runs
/// the same op with its own buffers.
enum class CollectiveKind : uint8_t { AllReduce, AllGather, ReduceScatter, AllToAll };
/// The reduction of all_reduce and reduce_scatter (None for the others).
enum class ReduceOp : uint8_t { None, Sum, Max };
const char* collectiveKindName(CollectiveKind k);   // "all_reduce", ...
std::optional<CollectiveKind> parseCollectiveKind(std::string_view s);
const char* reduceOpName(ReduceOp r);               // "sum", "max" ("" for None)
std::optional<ReduceOp> parseReduceOp(std::string_view s);
/// Whether `k` combines elements (all_reduce, reduce_scatter: needs a reduce op).
inline bool collectiveReduces(CollectiveKind k) {
  return k == CollectiveKind::AllReduce || k == CollectiveKind::ReduceScatter;
}

/// A named group of ranks ("groups": {"tp": {"ranks": [0, 1]}}). Ranks are
/// strictly ascending and below kMaxCollectiveRanks: a rank's place in the
/// list is its index in the group (all_gather's order, reduce_scatter's and
/// all_to_all's chunks).
struct CollectiveGroup {
  std::vector<uint32_t> ranks;
  bool operator==(const CollectiveGroup&) const = default;
};
/// Ranks a group may name: the runtime identifies a group by a 64-bit rank
/// mask, so a plan needs no table of groups at run time.
inline constexpr uint32_t kMaxCollectiveRanks = 64;
/// Names of the kernels the planner lowers collectives to ("sk.collective.f32"):
/// reserved, a declared kernel may not start with it.
inline constexpr const char* kCollectiveKernelPrefix = "sk.collective.";

struct Op {
  /// Collective: `collective`, `reduce` and `group` below; `args` holds the
  /// two buffer arguments "in" and "out" (names or views), `kernel` is empty.
  /// The planner lowers it to a one-block launch of the runtime's collective
  /// kernel (plan/Collectives.cpp).
  enum class Kind : uint8_t { Launch, Record, Wait, Collective };
  Kind kind = Kind::Launch;

  // Launch
  std::string name;
  std::string kernel;
  uint32_t blockDim = 1;
  uint32_t stream = 0;
  /// Scope: std::nullopt with scopeNull=false -> no "scope" key (not fused);
  /// std::nullopt with scopeNull=true -> "scope": null (never fused).
  std::optional<std::string> scope;
  bool scopeNull = false;
  bool fusible = true;
  bool fusibleWritten = false;             // "fusible" key present (round trip)
  std::vector<std::pair<std::string, ArgValue>> args;   // in file order
  std::map<std::string, std::string> macros;            // override kernel macros

  // Record / Wait
  std::string event;

  // Collective
  CollectiveKind collective = CollectiveKind::AllReduce;
  ReduceOp reduce = ReduceOp::None;
  std::string group;

  const ArgValue* findArg(std::string_view param) const;
  bool operator==(const Op&) const = default;
};

struct ScopeConfig {
  std::string options;
  bool operator==(const ScopeConfig&) const = default;
};

struct OpList {
  static constexpr int kFormatVersion = 1;
  int version = kFormatVersion;
  std::string target = "cpu";
  std::string arch = "native";
  std::string options;                      // option string, parsed by parseOptions
  std::vector<KernelDecl> kernels;          // file order
  std::vector<BufferDecl> buffers;          // file order (= manifest order)
  std::vector<Op> ops;
  std::map<std::string, ScopeConfig> scopes;
  /// "groups": the rank groups collective ops name.
  std::map<std::string, CollectiveGroup> groups;
  /// Directory relative paths (sources, init files) resolve against.
  std::filesystem::path baseDir;
  /// Where it came from, for error messages ("" for in-memory lists).
  std::string origin;

  const KernelDecl* findKernel(std::string_view name) const;
  const BufferDecl* findBuffer(std::string_view name) const;
  int bufferIndex(std::string_view name) const;   // -1 if absent
  /// Structural equality (what a write -> parse round trip preserves).
  bool operator==(const OpList&) const = default;
};

/// Limits that keep a hostile file from exhausting memory or the stack.
struct OpListLimits {
  uint64_t maxFileBytes = 64ull << 20;
  uint32_t maxDepth = 16;
  uint32_t maxOps = 200000;
  uint32_t maxKernels = 10000;
  uint32_t maxBuffers = 100000;
  uint32_t maxParams = 256;
  uint32_t maxBlockDim = 65536;
  uint64_t maxBufferBytes = 16ull << 30;    // one buffer
  uint64_t maxTotalBytes = 64ull << 30;     // all buffers
  uint32_t maxStreams = 1024;               // stream ids are < maxStreams
  uint32_t maxArgs = 256;                   // args / macros per op or kernel
  uint32_t maxNameBytes = 256;              // names of kernels, buffers, ops, events, scopes
};

/// Parse op-list JSON text. `origin` names the file in messages; `baseDir`
/// resolves relative sources. Errors name the JSON path: `ops[3].args.z: ...`.
/// Runs validateOpList() last: a list it returns is valid (sources and
/// builtins exist). Never throws, on any input.
Expected<OpList> parseOpList(std::string_view json, const std::string& origin,
                             const std::filesystem::path& baseDir,
                             const OpListLimits& limits = {});
/// Read and parse a file (origin = its path, baseDir = its directory).
Expected<OpList> loadOpList(const std::filesystem::path& file, const OpListLimits& limits = {});
/// Serialize (format v1, pretty-printed, stable order).
std::string writeOpList(const OpList& list);
/// Semantic checks (params vs args, views in bounds, events, sizes, target).
Status validateOpList(const OpList& list, const OpListLimits& limits = {});
/// The list compiled for `target` (sk-compile --target, CompileRequest::target).
/// A plain "source" is written for the list's own target (its headers, its
/// language): it becomes that target's entry of "sources", so a kernel with
/// no source for `target` is one clear error when the plan resolves it,
/// instead of a failure inside the other target's compiler. Empty or the
/// same target: the list unchanged. The one place both the Session and
/// plan-only runs apply the rule.
OpList retargetOpList(OpList list, const std::string& target);

/// The library's builtin kernels (kernels/<target>/*.json), resolved to
/// absolute source paths. Looked up by name ("scale_f32"); one name is the
/// same kernel on every target that has it. A name another target has but
/// `target` lacks is an error naming the targets that have it.
Expected<KernelDecl> findBuiltinKernel(std::string_view name, std::string_view target = "cpu");
std::vector<std::string> builtinKernelNames(std::string_view target = "cpu");

/// Root of the installed/source templates directory (SK_TEMPLATES_DIR env overrides).
std::filesystem::path templatesDir();

}  // namespace sk
