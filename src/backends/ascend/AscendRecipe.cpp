// The ascend build recipe for a real device (target ascend, DESIGN section 9):
// the argv of AscendBuild.h run for real. Each specialised variant is one
// bisheng object for the core arch it runs on (its macros, scalars, block
// count and early-start macros, entry renamed: ascend::variantCompileStep,
// the same step the simulator's recipe builds from); the link compiles the
// generated SuperKernel once per core arch of its task type, makes the
// split-mode copies of each object (llvm-objcopy --redefine-sym), links them
// relocatable (CANN's ld.lld -m aicorelinux -r -Ttext=0), localizes every
// sub-kernel symbol so only the entry stays global, and writes one artifact
// (ascend::DeviceBundle): the kernel ELF, its kernel JSON and the launch
// descriptor, which the CANN device registers and launches.
//
// Tools. bisheng is the recipe's compiler: the Session's toolchain lookup
// finds it ($SK_BISHENG, else the path findAscendTools found under
// $ASCEND_HOME_PATH, else bisheng on PATH) and keys its content and version;
// without one the lookup fails with compilerHint(), naming the places tried
// and the simulator target. ld.lld and llvm-objcopy are taken from beside
// bisheng (findAscendTools); their paths and versions are in every object key
// (postProcessKey) and they run under the driver's deadlines (runTool).
//
// Unverified: there is no CANN toolkit or Ascend device where this project is
// built and tested. Its tests run this recipe end to end with stand-ins for
// bisheng, ld.lld and llvm-objcopy that check the argv and build host objects
// with the same macros (tests/ascend/DeviceRecipeTest.cpp).
#include <fmt/format.h>

#include <algorithm>
#include <mutex>
#include <optional>

#include "support/BuildFiles.h"
#include "superkernel/driver/Process.h"
#include "superkernel/support/Paths.h"
#include "superkernel/support/Sha256.h"
#include "backends/LinkFiles.h"
#include "backends/ascend/AscendBackend.h"
#include "backends/ascend/AscendMachine.h"
#include "backends/ascend/AscendBuild.h"
#include "backends/ascend/AscendLink.h"

namespace sk {
namespace fs = std::filesystem;

namespace {

// CANN's Ascend C headers, as its own kernel builds name them (only when ASCEND_HOME_PATH says where CANN is;
// bisheng finds kernel_operator.h through them).
std::vector<fs::path> cannIncludeDirs(const ascend::EnvLookup& env) {
  const std::optional<std::string> home = env("ASCEND_HOME_PATH");
  if (!home) return {};
  const fs::path h(*home);
  return {h / "compiler" / "tikcpp" / "tikcfw", h / "compiler" / "tikcpp" / "tikcfw" / "impl",
          h / "compiler" / "tikcpp" / "tikcfw" / "interface", h / "include"};
}

class AscendRecipe final : public BuildRecipe {
 public:
  explicit AscendRecipe(const ascend::EnvLookup& env) : includes_(cannIncludeDirs(env)) {
    auto tools = ascend::findAscendTools(env);
    if (tools) {
      tools_ = std::move(*tools);
      compiler_ = tools_->bisheng.string();
    } else {
      compiler_ = "bisheng";
      hint_ = tools.error().message() + "; --target ascend-sim runs the same op list on the Ascend C simulator";
    }
  }

  std::string_view target() const override { return "ascend"; }
  std::string_view defaultCompiler() const override { return compiler_; }
  std::string_view compilerEnvVar() const override { return "SK_BISHENG"; }
  std::string compilerHint() const override { return hint_; }

  Expected<std::string> runtimeDigest() const override {
    // The device build reads CANN's kernel_operator.h (keyed by bisheng, the compiler whose install it is)
    // and the kernels' own header.
    KeyBuilder kb;
    kb.add("what", "ascend-device-runtime");
    if (Status st = kb.addFile("sk_ascend_kernel.h", dataKernelsDir() / "ascend" / "sk_ascend_kernel.h"); !st)
      return Error(st.error()).context("hashing the ascend kernels' header");
    return kb.finish();
  }

  std::vector<std::string> objectFlags(const KernelVariant& v, const Options& o, const std::string&) const override {
    auto cs = ascend::variantCompileStep(v, o.compileOptions, ascend::ObjectBuild::Device, "variant " + v.symbol);
    // The planner refuses runtime values for this target (its machine model has none), so only a bug upstream
    // gets here: built with an argument bisheng rejects rather than without the value.
    if (!cs) return {"--sk-ascend-unbuildable-object", cs.error().message()};
    cs->includeDirs = includes_;
    cs->splitMode = o.effectiveSplitMode(ascend::defaultSplitMode());
    return compileFlags(*cs);
  }

  std::vector<std::string> objectArgs(const std::vector<std::string>& flags, const KernelVariant& v,
                                      const fs::path& output) const override {
    return ascend::compileArgs(flags, v.decl.sourcePath, output);
  }

  Expected<std::string> postProcessKey(const Toolchain&) const override {
    SK_ASSIGN_OR_RETURN(const ascend::AscendTools* t, tools());
    std::call_once(identityOnce_, [&] {
      identity_ = ascend::toolIdentity("ld.lld", t->ldLld) + "\n" + ascend::toolIdentity("llvm-objcopy", t->objcopy);
    });
    return identity_;
  }

  std::string linkKey(const Options& o, const std::string&) const override {
    ascend::CompileStep cs;
    cs.extra = o.compileOptions;
    cs.includeDirs = includes_;
    return "ascend-device-link\n" + joinFlags(compileFlags(cs)) +
           "\nsplit copies: llvm-objcopy --redefine-sym\nld.lld -m aicorelinux -r -Ttext=0\nlocalize sub-kernels\n";
  }

  std::string artifactName() const override { return "superkernel.ascend"; }

  Expected<LinkOutput> link(const LinkRequest& req, const RecipeTools& rt) const override {
    SK_ASSIGN_OR_RETURN(const ascend::AscendTools* t, tools());
    std::optional<ascend::KernelType> type;
    // The SuperKernel once per core arch of its task type; an unfused step launches its one object's entry,
    // so there is no SuperKernel to build.
    auto compile = [&](const fs::path& src, const ascend::LaunchDescriptor& d,
                       std::string& diagnostics) -> Expected<std::vector<fs::path>> {
      type = ascend::kernelTypeFromSuffix(d.type);
      if (!type) return internalError(fmt::format("ascend link: unknown task type {}", d.type));
      std::vector<fs::path> objects;
      if (!d.fused) return objects;
      for (ascend::CoreArch arch : ascend::archsOf(*type)) {
        ascend::CompileStep cs;
        cs.arch = arch;
        cs.includeDirs = includes_;
        cs.splitMode = d.split;
        cs.extra = req.options->compileOptions;
        const fs::path object =
            src.parent_path() / fmt::format("superkernel_{}.o", arch == ascend::CoreArch::Cube ? "aic" : "aiv");
        SK_ASSIGN_OR_RETURN(auto r, rt.runCompiler(ascend::compileArgs(compileFlags(cs), src, object), fmt::format("compiling the ascend SuperKernel for {}",
                                                                      ascend::coreArchName(arch))));
        diagnostics += r.err;
        objects.push_back(object);
      }
      return objects;
    };
    SK_ASSIGN_OR_RETURN(ascend::LinkInputs in, ascend::prepareLink(req, rt, t->objcopy, compile));
    const ascend::LaunchDescriptor& d = in.launch;
    const fs::path kernel = in.dir / "kernel.o";
    const std::vector<std::string> linkArgv = ascend::relocatableLinkArgv(*t, in.objects, kernel);
    SK_ASSIGN_OR_RETURN(auto linked, rt.runTool(linkArgv, "linking the ascend SuperKernel (ld.lld -r)"));
    for (const std::vector<std::string>& argv : ascend::localizeArgv(*t, kernel, in.subKernelSymbols))
      SK_RETURN_IF_ERROR(rt.runTool(argv, "localizing the sub-kernel symbols (only the entry stays global)"));

    ascend::DeviceBundle b;
    SK_ASSIGN_OR_RETURN(b.elf, detail::readFileBytes(kernel));
    b.meta.kernelName = d.entry;
    b.meta.binFileName = "kernel";
    b.meta.blockDim = d.blockDim;
    b.meta.kernelType = *type;
    b.meta.sha256 = sha256Hex(b.elf);
    b.launch = std::string(req.launch);
    SK_RETURN_IF_ERROR(writeScratchFile(req.outputFile, ascend::formatDeviceBundle(b)));
    LinkOutput out;
    out.command = linkArgv;
    out.diagnostics = in.diagnostics + linked.err;
    return out;
  }

 private:
  Expected<const ascend::AscendTools*> tools() const {
    if (!tools_) return compileError("the CANN tools were not found:\n" + hint_);
    return &*tools_;
  }

  static std::vector<std::string> compileFlags(const ascend::CompileStep& cs) { return ascend::deviceCompileFlags(cs); }

  std::vector<fs::path> includes_;
  std::optional<ascend::AscendTools> tools_;
  std::string compiler_;
  std::string hint_;
  mutable std::once_flag identityOnce_;
  mutable std::string identity_;
};

}  // namespace

std::shared_ptr<const BuildRecipe> makeAscendRecipe() {
  return std::make_shared<AscendRecipe>(ascend::processEnv());
}

}  // namespace sk
