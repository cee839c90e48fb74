// The template-driven Emitter the cpu and cuda emitters share (see TemplateEmitter.h).
#include "superkernel/codegen/TemplateEmitter.h"

#include <fmt/format.h>

#include <fstream>
#include <sstream>
#include <utility>

namespace sk {

TemplateEmitter::TemplateEmitter(std::string name, Template tmpl, std::filesystem::path file)
    : name_(std::move(name)), tmpl_(std::move(tmpl)), file_(std::move(file)) {}

Expected<GeneratedSource> TemplateEmitter::emit(const FusionPlan& plan, size_t step) const {
  if (step >= plan.steps.size()) {
    return internalError(fmt::format("step {} out of range (the plan has {})", step, plan.steps.size()));
  }
  const SuperKernelPlan& sk = plan.steps[step];
  auto out = emitStep(plan, sk);
  if (!out) return std::move(out).error().context("while generating " + name_ + " code for SuperKernel " + sk.name);
  return out;
}

Expected<GeneratedSource> TemplateEmitter::renderStep(const FusionPlan& plan, const SuperKernelPlan& sk,
                                                     const SyncLayout& layout, const TemplateValues& values,
                                                     std::string_view extension, std::string_view language) const {
  auto text = tmpl_.render(values);
  if (!text) return std::move(text).error();

  GeneratedSource src;
  src.name = sk.name;
  src.fileName = sanitizeIdentifier(sk.name) + std::string(extension);
  src.language = std::string(language);
  src.text = std::move(*text);
  src.variants = layout.variants;
  src.manifest = stepManifest(plan, sk, name_, layout);
  return src;
}

Expected<Template> readTemplateFile(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return ioError(fmt::format("cannot read template {}", file.string()));
  std::stringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return ioError(fmt::format("cannot read template {}", file.string()));
  return Template::parse(ss.str(), file.string());
}

}  // namespace sk
