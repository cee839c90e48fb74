// The emitter of a back end (target/Backend.h): turns one step of a
// FusionPlan into a source file plus a manifest, from the text templates in
// templates/<target>/. What to print is decided before: the plan (sync
// kinds, queues, barriers, preloads) and the shared sync layout
// (codegen/SyncLayout.h: slots, deduplicated waits, the manifest). Emitters
// know nothing about processes or files of the cache; the driver compiles
// what they emit with the target's BuildRecipe.
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

/// One generated source file.
struct GeneratedSource {
  std::string name;                         // the step's SuperKernel name
  std::string fileName;                     // e.g. "sk1.cpp" (sanitized; for --emit-source)
  std::string language;                     // "c++" (cpu), "ascendc", "cuda": for --emit-source readers
  std::string text;
  /// JSON (one line, stable): {"format":"superkernel.manifest","version":1,
  /// "name","target","num_cores","options","buffers":[{"name","dtype",
  /// "elements"}],"ops":[{"name","symbol","block_dim","queue"}],"variants":[..]}
  std::string manifest;
  /// Indices into FusionPlan::variants that the source calls (sorted, unique):
  /// the objects to link.
  std::vector<uint32_t> variants;
  /// Target-defined launch metadata for the build recipe's link (ascend: its
  /// launch descriptor: entry, task type, block dim, objects to split-copy),
  /// passed beside the text (LinkRequest::launch) and hashed into the key, so
  /// no recipe reads it back out of the source. Empty: none.
  std::string launch;
};

class Emitter {
 public:
  virtual ~Emitter() = default;

  virtual std::string_view name() const = 0;

  /// The source of plan.steps[step]. The plan's variants must carry codeBytes
  /// when preload-code=per-func (0 is treated as the 2 KiB minimum).
  virtual Expected<GeneratedSource> emit(const FusionPlan& plan, size_t step) const = 0;

  /// Every template file the emitter reads (for reports and tests; the
  /// generated text, which the SuperKernel key hashes, carries their content).
  virtual std::vector<std::filesystem::path> templateFiles() const = 0;
};

/// The emitter of the back end registered as `name` (target/Backend.h); an
/// unknown name is BadInput naming the registered ones. Templates are read and parsed
/// here (errors name the file and line).
Expected<std::shared_ptr<const Emitter>> makeEmitter(std::string_view name);

// ---- pieces every C-family emitter prints alike (codegen/CLiterals.cpp) -----
// (preloadBytes is the preload-code rule every emitter prints.)

/// Bytes prefetched for a variant of `codeBytes` under `mode`: none -> 0;
/// per-func -> codeBytes rounded up to 2 KiB (at least 2 KiB), capped at
/// 16 KiB; max -> 16 KiB.
uint64_t preloadBytes(PreloadCode mode, uint64_t codeBytes);
/// The C type of a dtype in generated code and kernel ABIs (f16/bf16: uint16_t, bool: bool).
const char* cType(DType t);
/// The C type of a kernel parameter: cType of its dtype, a pointer to it for a buffer (to const when read-only).
std::string cParamType(const ParamDecl& p);
/// A C++ literal of `v` converted to `t` (ints exact, floating point as
/// exact hexfloat), e.g. "INT64_C(4096)", "0x1.8p+1f". BadInput if the value
/// cannot be represented (a fractional value for an integer parameter, a
/// scalar of a storage-only type such as f16).
Expected<std::string> cScalarLiteral(const ScalarValue& v, DType t);
/// A C identifier made from `s` (non-alnum -> '_', leading digit prefixed).
std::string sanitizeIdentifier(std::string_view s);

}  // namespace sk
