// The ascend emitter on the seam (codegen/Emitter.h): a fused step is
// makeAscendStep + emitAscend (AscendEmitter.h says what the SuperKernel looks
// like); an unfused step launches its one sub-kernel directly (AIV_ONLY /
// AIC_ONLY), so its source holds only the launch descriptor. Both end with
// the descriptor the recipe and the device read (AscendBackend.h).
//
// Objects: one per AscendObject. The plan's variants are specialised for
// ascend (MachineModel::staticArguments: scalars, block count, own early
// start), so each object is exactly one variant and GeneratedSource::variants
// lists them; a plan whose variants were not specialised is refused here
// rather than linked against the wrong object.
#include <fmt/format.h>

#include <map>

#include "superkernel/codegen/SyncLayout.h"
#include "superkernel/support/Paths.h"
#include "backends/ascend/AscendBackend.h"
#include "backends/ascend/AscendEmitter.h"
#include "backends/ascend/AscendStep.h"

namespace sk {

namespace {

std::string taskTypeSuffix(ascend::KernelType t) {
  std::string name = ascend::kernelTypeName(t);
  const std::string prefix = "KERNEL_TYPE_";
  return name.rfind(prefix, 0) == 0 ? name.substr(prefix.size()) : name;
}

// The descriptor goes beside the source (GeneratedSource::launch: what the
// recipe's link reads) and into it as a C string literal the device reads
// back from the loaded object, never escaped: it may only hold what its fields
// are made of (identifiers, numbers, '=', ',', ':', ' '); anything else is a
// bug upstream, refused rather than printed into the literal.
Expected<std::string> descriptorLine(const ascend::LaunchDescriptor& d) {
  const std::string text = ascend::formatLaunchDescriptor(d);
  for (char c : text) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                       c == '=' || c == ',' || c == ':' || c == ' ';
    if (!plain) return internalError(fmt::format("ascend launch descriptor \"{}\" holds a character it may not", text));
  }
  return fmt::format(
      "\n// The launch the ascend device makes of this artifact (read back from the loaded object).\n"
      "extern \"C\" const char {}[] = \"{}\";\n",
      ascend::kLaunchSymbol, text);
}

class AscendSeamEmitter final : public Emitter {
 public:
  AscendSeamEmitter(std::string target, bool descriptorInSource)
      : target_(std::move(target)), descriptorInSource_(descriptorInSource) {}
  std::string_view name() const override { return target_; }

  Expected<GeneratedSource> emit(const FusionPlan& plan, size_t stepIndex) const override {
    if (stepIndex >= plan.steps.size()) return internalError("ascend emit: step out of range");
    const SuperKernelPlan& sk = plan.steps[stepIndex];
    SK_ASSIGN_OR_RETURN(ascend::AscendStep step, ascend::makeAscendStep(plan, stepIndex));

    // The objects the source calls, one per variant.
    std::map<uint32_t, std::string> symbolOfVariant;
    for (const ascend::AscendOp& op : step.ops) {
      const ascend::AscendObject& o = step.objects.at(op.object);
      if (!plan.variants.at(o.variant).specialised) {
        return internalError(fmt::format("op {}: the plan's variants are not specialised for ascend (plan it with "
                                         "the ascend back end's machine model)",
                                         op.name));
      }
      auto [it, inserted] = symbolOfVariant.emplace(o.variant, o.symbol);
      if (!inserted && it->second != o.symbol) {
        return internalError(fmt::format("variant {} is two ascend objects ({}, {})", o.variant, it->second, o.symbol));
      }
    }
    GeneratedSource g;
    g.name = sk.name;
    g.fileName = sanitizeIdentifier(sk.name) + ".cpp";
    g.language = "ascendc";
    ascend::LaunchDescriptor d;
    for (const auto& [v, symbol] : symbolOfVariant) {
      g.variants.push_back(v);
      d.objects.push_back(symbol);
    }
    d.buffers = static_cast<uint32_t>(step.buffers.size());
    d.blockDim = step.blockDim;
    d.type = taskTypeSuffix(step.type);
    // Runtime scalars: the slots' sources, so the device passes their addresses (never their values).
    for (const ascend::AscendRuntimeValue& rv : step.runtimeValues)
      d.runtime.emplace_back(static_cast<uint32_t>(rv.buffer), rv.byteOffset);
    if (step.fused) {
      SK_ASSIGN_OR_RETURN(ascend::AscendSource src, ascend::emitAscend(step));
      d.entry = src.entry;
      d.profileBytes = src.profileBytes;
      d.split = src.splitMode;
      d.bufferTable = src.bufferTable;
      d.notifyWords = src.notifyWords;
      d.sides = src.sides;
      SK_ASSIGN_OR_RETURN(std::string line, descriptorLine(d));
      g.text = std::move(src.text) + (descriptorInSource_ ? line : "");
      g.launch = ascend::formatLaunchDescriptor(d);
    } else {
      const ascend::AscendOp& op = step.ops.at(0);
      d.entry = step.objects.at(op.object).symbol;
      for (const ascend::AscendArg& a : op.args) d.args.emplace_back(static_cast<uint32_t>(a.buffer), a.byteOffset);
      g.text = fmt::format(
          "// Generated by superkernel (target ascend) from a FusionPlan. Do not edit.\n"
          "// An unfused op: its sub-kernel {} is launched directly ({} on {} core(s)).\n"
          "#include \"kernel_operator.h\"\n",
          d.entry, d.type, d.blockDim);
      SK_ASSIGN_OR_RETURN(std::string line, descriptorLine(d));
      if (descriptorInSource_) g.text += line;
      g.launch = ascend::formatLaunchDescriptor(d);
    }
    SyncLayout layout;  // the manifest's shared part: which variants the source uses
    layout.variants = g.variants;
    g.manifest = stepManifest(plan, sk, target_, layout);
    return g;
  }

  std::vector<std::filesystem::path> templateFiles() const override { return {}; }

 private:
  std::string target_;  // ascend (bisheng) or ascend-sim: one emitter, one Ascend C source for both
  bool descriptorInSource_;
};

}  // namespace

Expected<std::shared_ptr<const Emitter>> makeAscendEmitter(std::string target, bool descriptorInSource) {
  return std::shared_ptr<const Emitter>(std::make_shared<AscendSeamEmitter>(std::move(target), descriptorInSource));
}

}  // namespace sk
