// Code generation targets: one emitter per target turns one step of a
// FusionPlan into a source file (plus a manifest) from the text templates in
// templates/<target>/. Targets know nothing about processes or files of the
// cache; the driver compiles what they emit and the cache keys it.
//
// Shaped for cpu (C++ for clang++/g++), ascend (Ascend C for bisheng) and
// cuda (a persistent grid kernel for nvcc/clang): the plan, the driver and
// the cache stay unchanged, a target only supplies text and a few facts the
// driver needs (language, extension, flags).
//
// cpu: what the generated SuperKernel source looks like and why is described
// at the top of templates/cpu/superkernel.cpp.tmpl.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "superkernel/frontend/Options.h"
#include "superkernel/plan/Plan.h"
#include "superkernel/support/Error.h"

namespace sk {

/// run()'s non-zero returns for a call the generated entry rejects before
/// launching anything (the executor's own failures come back as its code).
/// A negative value = a bad call; the Session maps these to messages.
enum RunRejection : int {
  kRunBadAbi = -1,          // args null or abi_version != SK_ABI_VERSION
  kRunBadBufferCount = -2,  // num_buffers != manifest size
  kRunBadBlockDim = -3,     // block_dim != the SuperKernel's core count
  kRunBadServices = -4,     // stream null or services version mismatch
  kRunTooFewWorkers = -5,   // executor has fewer workers than cores
};
/// Human-readable meaning of run()'s return code `rc` (0: "ok").
std::string describeRunResult(int rc);

/// One generated source file.
struct GeneratedSource {
  std::string name;                         // the step's SuperKernel name
  std::string fileName;                     // e.g. "sk1.cpp" (sanitized; for --emit-source)
  std::string language;                     // "c++" (cpu), "ascendc", "cuda"
  std::string text;
  /// JSON (one line, stable): {"format":"superkernel.manifest","version":1,
  /// "name","target","num_cores","options","buffers":[{"name","dtype",
  /// "elements"}],"ops":[{"name","symbol","block_dim","queue"}],"variants":[..]}
  std::string manifest;
  /// Indices into FusionPlan::variants that the source calls (sorted, unique):
  /// the objects to link.
  std::vector<uint32_t> variants;
};

class Target {
 public:
  virtual ~Target() = default;

  virtual std::string_view name() const = 0;
  /// Source language the driver compiles ("c++").
  virtual std::string_view language() const = 0;
  /// File extension of generated sources (".cpp").
  virtual std::string_view sourceExtension() const = 0;

  /// The source of plan.steps[step]. The plan's variants must carry codeBytes
  /// when preload-code=per-func (0 is treated as the 2 KiB minimum).
  virtual Expected<GeneratedSource> emit(const FusionPlan& plan, size_t step) const = 0;

  /// Every template file the emitter reads (hashed into cache keys).
  virtual std::vector<std::filesystem::path> templateFiles() const = 0;

  /// Extra compiler flags for the generated source beyond the driver's
  /// defaults for this target (none on cpu today).
  virtual std::vector<std::string> sourceFlags(const Options& options) const = 0;
};

/// The target registered under `name`: "cpu"; "ascend" and "cuda" are
/// reserved and answer a clear "not supported yet" (BadInput). Templates are
/// read and parsed here (errors name the file and line).
Expected<std::shared_ptr<const Target>> makeTarget(std::string_view name);
/// The names makeTarget knows, supported or not.
std::vector<std::string> targetNames();

// ---- pieces of the cpu emitter, exposed for tests and reports -------------

/// Bytes prefetched for a variant of `codeBytes` under `mode`: none -> 0;
/// per-func -> codeBytes rounded up to 2 KiB (at least 2 KiB), capped at
/// 16 KiB; max -> 16 KiB.
uint64_t preloadBytes(PreloadCode mode, uint64_t codeBytes);
/// The cpu ABI C type of a dtype (f16/bf16: uint16_t, bool: bool).
const char* cpuCType(DType t);
/// A C++ literal of `v` converted to `t` (ints exact, floating point as
/// exact hexfloat), e.g. "INT64_C(4096)", "0x1.8p+1f". BadInput if the value
/// cannot be represented (a fractional value for an integer parameter, a
/// scalar of a storage-only type such as f16).
Expected<std::string> cpuScalarLiteral(const ScalarValue& v, DType t);
/// A C identifier made from `s` (non-alnum -> '_', leading digit prefixed).
std::string sanitizeIdentifier(std::string_view s);

}  // namespace sk
