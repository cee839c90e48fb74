// The part of an Emitter (codegen/Emitter.h) that the cpu and cuda emitters
// had in two identical copies: both print each step through one template
// file, check the step index the same way and name the back end and the step
// in every error. A back end derives from TemplateEmitter and writes only
// emitStep (what it prints); the values both print alike are StepValues.h's.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "superkernel/codegen/SyncLayout.h"
#include "superkernel/codegen/Emitter.h"
#include "superkernel/codegen/Template.h"
#include "superkernel/plan/Plan.h"
#include "superkernel/support/Error.h"

namespace sk {

class TemplateEmitter : public Emitter {
 public:
  /// `name` is the back end's ("cpu"), `file` the template `tmpl` was read from.
  TemplateEmitter(std::string name, Template tmpl, std::filesystem::path file);

  std::string_view name() const override { return name_; }
  std::vector<std::filesystem::path> templateFiles() const override { return {file_}; }

  /// Internal error for a step out of range; else emitStep, its errors in the
  /// context "while generating <name> code for SuperKernel <step name>".
  Expected<GeneratedSource> emit(const FusionPlan& plan, size_t step) const final;

 protected:
  virtual Expected<GeneratedSource> emitStep(const FusionPlan& plan, const SuperKernelPlan& sk) const = 0;
  /// The template rendered with `values` as step `sk`'s source: file
  /// <sanitised step name><extension>, `language`, the layout's variants and
  /// the step manifest for this target.
  Expected<GeneratedSource> renderStep(const FusionPlan& plan, const SuperKernelPlan& sk, const SyncLayout& layout,
                                       const TemplateValues& values, std::string_view extension,
                                       std::string_view language) const;

 private:
  std::string name_;
  Template tmpl_;
  std::filesystem::path file_;
};

/// Reads and parses a template file; errors name the file.
Expected<Template> readTemplateFile(const std::filesystem::path& file);

}  // namespace sk
