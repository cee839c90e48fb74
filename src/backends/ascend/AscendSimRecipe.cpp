// The ascend build recipe for the simulator (target ascend-sim, DESIGN section 9): the generated
// Ascend C and every sub-kernel compiled by the host C++ compiler against
// runtime/ascend/sim/include (the argv of AscendBuild.h's simCompileArgv, the
// device build's macros included), split-mode copies made with llvm-objcopy
// --redefine-sym as for the device, one shared object the simulator device
// loads.
//
// Objects. One per specialised variant (= one AscendObject): the variant's
// macros, its scalars as -DSK_<NAME>=<literal> (a runtime scalar as
// -DSK_<NAME>=SK_ASCEND_RUNTIME_<T>_<slot>, a read of the launch's slot: the
// value is never in the object), its entry renamed to the variant's symbol,
// and inside a SuperKernel its block count and early-start macros
// (ascend::variantCompileStep). All of them are objectFlags, so they are in the object's key: two
// ops with different scalars or block counts never share an object.
//
// Split copies are made at link time, not in postProcessObject: the copies
// depend on the step's split-mode, which postProcessObject does not see (and
// the object itself does not depend on it); the link gets the options, and the
// launch descriptor beside the source (LinkRequest::launch) names the object
// symbols to copy. The artifact is an ascend::SimBundle: that descriptor and
// the shared object, so the device reads what to launch from beside the code
// (the source never carries it). llvm-objcopy
// runs under the driver's deadlines (RecipeTools::runTool), and its path and
// version are in every object's key (postProcessKey), so the SuperKernels it
// copied are keyed by it too.
//
// The device's build (target ascend: bisheng, ld.lld -r, localize, kernel JSON) is AscendRecipe.cpp, from
// the same argv builders (AscendBuild.h).
#include <fmt/format.h>

#include <cctype>

#include "support/BuildFiles.h"
#include "support/Fd.h"
#include "superkernel/codegen/Emitter.h"
#include "superkernel/driver/Process.h"
#include "superkernel/support/Paths.h"
#include "backends/ascend/AscendBackend.h"
#include "backends/ascend/AscendBuild.h"
#include "backends/ascend/AscendLink.h"
#include "backends/LinkFiles.h"

namespace sk {
namespace fs = std::filesystem;

namespace {

// The llvm-objcopy on PATH, looked up once: its path and `--version` output, or that there is none (a
// split-mode=1 build needs none; a split copy then fails naming it).
struct SimObjcopy {
  fs::path path;
  std::string identity;
};

const SimObjcopy& simObjcopy() {
  static const SimObjcopy tool = [] {
    SimObjcopy t;
    t.path = findExecutableUnresolved("llvm-objcopy");
    if (t.path.empty()) {
      t.identity = "llvm-objcopy: none on PATH";
      return t;
    }
    t.identity = ascend::toolIdentity("llvm-objcopy", t.path);
    return t;
  }();
  return tool;
}

fs::path simInclude() { return dataRuntimeDir() / "ascend" / "sim" / "include"; }
fs::path kernelHeader() { return dataKernelsDir() / "ascend" / "sk_ascend_kernel.h"; }

std::vector<std::string> compileFlags(const ascend::CompileStep& cs) { return ascend::simCompileFlags(simInclude(), cs); }

class AscendSimRecipe final : public BuildRecipe {
 public:
  std::string_view target() const override { return "ascend-sim"; }
  std::string_view defaultCompiler() const override { return "clang++"; }
  std::string_view compilerEnvVar() const override { return "SK_ASCEND_CXX"; }
  // Simulated objects are host code built without -march: the arch of the op list does not change them.
  std::string archKey(const std::string&) const override { return "simulator"; }

  Expected<std::string> runtimeDigest() const override {
    KeyBuilder kb;
    kb.add("what", "ascend-simulator-runtime");
    Status st = kb.addTree("sim-include", simInclude());
    if (st) st = kb.addFile("sk_ascend_kernel.h", kernelHeader());
    if (!st) return Error(st.error()).context("hashing the ascend simulator's headers");
    return kb.finish();
  }

  std::vector<std::string> objectFlags(const KernelVariant& v, const Options& o, const std::string&) const override {
    auto cs = ascend::variantCompileStep(v, o.compileOptions, ascend::ObjectBuild::Simulator, "variant " + v.symbol);
    // Only an inconsistent variant (a runtime scalar that is no scalar parameter) fails here: a bug upstream,
    // built with an argument the compiler rejects rather than without the scalar.
    if (!cs) return {"-x", "c++", "--sk-ascend-unbuildable-object", "-DSK_ASCEND_OBJECT_ERROR"};
    return compileFlags(*cs);
  }

  std::vector<std::string> objectArgs(const std::vector<std::string>& flags, const KernelVariant& v,
                                      const fs::path& output) const override {
    return ascend::compileArgs(flags, v.decl.sourcePath, output);
  }

  Expected<std::string> postProcessKey(const Toolchain&) const override { return simObjcopy().identity; }

  std::string linkKey(const Options& o, const std::string&) const override {
    return "ascend-simulator-link\n" + joinFlags(superKernelFlags(o)) + "\nlink\n" +
           joinFlags(ascend::simLinkArgv("cxx", {}, "out")) +
           "\nsplit copies: llvm-objcopy --redefine-sym\nartifact: SK-ASCEND-SIM 1 (descriptor, shared object)\n";
  }

  std::string artifactName() const override { return "superkernel.ascend-sim"; }

  Expected<LinkOutput> link(const LinkRequest& req, const RecipeTools& tools) const override {
    // The SuperKernel source is compiled whether or not the step is fused (unfused, it is a comment).
    auto compile = [&](const fs::path& src, const ascend::LaunchDescriptor&,
                       std::string& diagnostics) -> Expected<std::vector<fs::path>> {
      const fs::path skObj = src.parent_path() / "superkernel.o";
      SK_ASSIGN_OR_RETURN(auto compiled, tools.runCompiler(ascend::compileArgs(superKernelFlags(*req.options), src, skObj),
                                                            "compiling the ascend SuperKernel for the simulator"));
      diagnostics += compiled.err;
      return std::vector<fs::path>{skObj};
    };
    SK_ASSIGN_OR_RETURN(ascend::LinkInputs in, ascend::prepareLink(req, tools, simObjcopy().path, compile));
    const fs::path shared = in.dir / "superkernel_sim.so";
    std::vector<std::string> linkArgs = ascend::simLinkFlags();
    for (const fs::path& o : in.objects) linkArgs.push_back(o.string());
    linkArgs.insert(linkArgs.end(), {"-o", shared.string()});
    SK_ASSIGN_OR_RETURN(auto linked, tools.runCompiler(linkArgs, "linking the ascend SuperKernel for the simulator"));
    ascend::SimBundle bundle;
    bundle.launch = std::string(req.launch);
    SK_ASSIGN_OR_RETURN(bundle.object, detail::readFileBytes(shared));
    SK_RETURN_IF_ERROR(writeScratchFile(req.outputFile, ascend::formatSimBundle(bundle)));
    LinkOutput out;
    out.command = tools.command(linkArgs);
    out.diagnostics = in.diagnostics + linked.err;
    return out;
  }

 private:
  // The generated source's compile: the simulator's flags plus compile-options (no sub-kernel macros).
  static std::vector<std::string> superKernelFlags(const Options& o) {
    ascend::CompileStep cs;
    cs.extra = o.compileOptions;
    return compileFlags(cs);
  }
};

}  // namespace

std::shared_ptr<const BuildRecipe> makeAscendSimRecipe() { return std::make_shared<AscendSimRecipe>(); }

}  // namespace sk
