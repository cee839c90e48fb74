// The cuda-sim build recipe: the cuda target's generated source and kernel
// sources, compiled by the host C++ compiler for the cuda simulator
// (runtime/cuda/sim): every compile force-includes sim_device.h, which maps
// the CUDA subset onto the simulator's engine, so the .cu text is the one
// nvcc builds for a GPU.
//
// Compiler: $SK_CUDA_SIM_CXX, else clang++ (resolved path, hash and version
// in every key, Toolchain). Objects, once per KernelVariant:
//   clang++ -c -std=c++17 -O2 -fPIC -fvisibility=hidden -include <sim>/sim_device.h
//     -I<runtime/cuda/sim/include> -I<runtime/cuda/include> -D<entry>=<symbol> -D<macro>=<value>...
//     <compile-options...> -o <out> -x c++ <source>
// SuperKernels: the same flags with -shared, the generated source and the
// objects, exporting what a cuda SuperKernel exports and the simulator's two
// entries (kCudaSimVersionScript):
//   clang++ -shared ... -o <so> -x c++ superkernel.cu -x none <objects> -Wl,--version-script=<map> -Wl,-z,defs
//     -pthread
// compile-options go to the host compiler here (nvcc-only flags fail, and say so).
#include <fmt/format.h>

#include "superkernel/support/Paths.h"
#include "support/BuildFiles.h"
#include "backends/LinkFiles.h"
#include "backends/cuda/CudaBackend.h"

namespace sk {
namespace fs = std::filesystem;

namespace {

fs::path cudaInclude() { return dataRuntimeDir() / "cuda" / "include"; }
fs::path simInclude() { return dataRuntimeDir() / "cuda" / "sim" / "include"; }

// Flags of every simulated compile, objects and SuperKernel alike.
std::vector<std::string> commonFlags(const Options& o) {
  std::vector<std::string> f = {"-std=c++17", "-O2", "-fPIC", "-fvisibility=hidden", "-include",
                                (simInclude() / "superkernel" / "cuda" / "sim_device.h").string()};
  f.push_back("-I" + simInclude().string());
  f.push_back("-I" + cudaInclude().string());
  for (const auto& c : o.compileOptions) f.push_back(c);
  return f;
}

class CudaSimRecipe final : public BuildRecipe {
 public:
  std::string_view target() const override { return "cuda-sim"; }
  std::string_view defaultCompiler() const override { return "clang++"; }
  std::string_view compilerEnvVar() const override { return "SK_CUDA_SIM_CXX"; }
  // Host code without -march: the op list's arch does not change it.
  std::string archKey(const std::string&) const override { return "simulator"; }

  Expected<std::string> runtimeDigest() const override {
    KeyBuilder kb;
    kb.add("what", "cuda simulator runtime");
    Status st = kb.addTree("include", cudaInclude());
    if (st) st = kb.addTree("sim-include", simInclude());
    if (!st) return Error(st.error()).context("hashing the superkernel cuda simulator's headers");
    return kb.finish();
  }

  std::vector<std::string> objectFlags(const KernelVariant& v, const Options& o, const std::string&) const override {
    std::vector<std::string> f = {"-c"};
    for (auto& c : commonFlags(o)) f.push_back(std::move(c));
    const std::string sym = v.symbol.empty() ? v.decl.entry : v.symbol;
    if (!v.decl.entry.empty() && sym != v.decl.entry) f.push_back(fmt::format("-D{}={}", v.decl.entry, sym));
    for (const auto& [k, val] : v.macros) f.push_back(fmt::format("-D{}={}", k, val));
    return f;
  }

  std::vector<std::string> objectArgs(const std::vector<std::string>& flags, const KernelVariant& v,
                                      const fs::path& output) const override {
    std::vector<std::string> tail = flags;
    tail.insert(tail.end(), {"-o", output.string(), "-x", "c++", v.decl.sourcePath.string()});
    return tail;
  }

  // As on cuda: preload-code does not apply, and the same sizes keep the
  // generated text the one nvcc builds.
  Expected<uint64_t> symbolSize(std::string_view, std::string_view) const override { return uint64_t{0}; }

  std::string linkKey(const Options& o, const std::string&) const override {
    return "cuda-sim-link\n" + joinFlags(commonFlags(o)) + "\n-shared -Wl,-z,defs -pthread\nversion-script\n" + kCudaSimVersionScript;
  }

  std::string artifactName() const override { return "superkernel_sim.so"; }

  Expected<LinkOutput> link(const LinkRequest& req, const RecipeTools& tools) const override {
    // The Graph + PDL variant exports sk_last_launch too (its launch metadata says so, and is in the key).
    SK_ASSIGN_OR_RETURN(RunOnlyLinkInputs in, writeRunOnlyLinkInputs(req, "superkernel.cu",
                                                                     cudaVersionScript(req.launch, kCudaSimVersionScript)));
    std::vector<std::string> args = {"-shared"};
    for (auto& c : commonFlags(*req.options)) args.push_back(std::move(c));
    args.insert(args.end(), {"-o", req.outputFile.string(), "-x", "c++", in.source.string(), "-x", "none"});
    for (const auto& p : in.objects) args.push_back(p.string());
    args.push_back("-Wl,--version-script=" + in.versionScript.string());
    // A CUDA function the simulator lacks fails here, naming it, not at dlopen.
    args.push_back("-Wl,-z,defs");
    args.push_back("-pthread");
    return runLinkCommand(tools, args, "compiling and linking the cuda SuperKernel for the simulator");
  }
};

}  // namespace

std::shared_ptr<const BuildRecipe> makeCudaSimRecipe() { return std::make_shared<CudaSimRecipe>(); }

}  // namespace sk
