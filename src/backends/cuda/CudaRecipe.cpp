// The cuda build recipe: nvcc, relocatable device code, one shared object per
// SuperKernel.
//
// Compiler: $SK_NVCC, else `nvcc` on PATH, else /usr/local/cuda/bin/nvcc; its
// resolved path, content hash and --version are in every key (Toolchain).
// Arch: DriverConfig::arch when it names one (sm_XY, compute_XY), else the
// device's sm_XY when a CUDA device answers, else sm_90 (cudaResolveArch);
// the resolved arch is the arch key.
//
// Objects. Each KernelVariant compiles once into a relocatable object (host
// stub + device code for -rdc):
//   <launcher...> nvcc -c -rdc=true -O3 -std=c++17 -arch=<arch> -Xcompiler=-fPIC
//     -I<runtime/cuda/include> -D<entry>=<symbol> -D<macro>=<value>... <compile-options...>
//     -o <out> -x cu <source>
// SuperKernels. The generated source is compiled, device-linked with the
// objects (nvlink, which nvcc runs for -rdc=true) and linked into one shared
// object that needs libcudart.so (-cudart=shared: the same runtime instance
// the device dlopen's) and exports only `run` and the profiling reader
// (kCudaVersionScript):
//   nvcc -shared -rdc=true -O3 -std=c++17 -arch=<arch> -Xcompiler=-fPIC,-fvisibility=hidden
//     -I<runtime/cuda/include> <compile-options...> -cudart=shared
//     -Xlinker=--version-script=<exports.map> -Xlinker=-rpath=<cuda lib64>
//     -o <so> superkernel.cu <objects>
// Processes are spawned with argv (RecipeTools), never a shell; a failure
// carries the command line and nvcc's diagnostics.
#include <fmt/format.h>

#include <cstdlib>
#include <mutex>

#include <unistd.h>

#include "superkernel/support/Paths.h"
#include "support/BuildFiles.h"
#include "backends/LinkFiles.h"
#include "backends/cuda/CudaBackend.h"
#include "backends/cuda/CudaRuntime.h"

namespace sk {
namespace fs = std::filesystem;

namespace {

std::string symbolOf(const KernelVariant& v) { return v.symbol.empty() ? v.decl.entry : v.symbol; }

fs::path cudaIncludeDir() { return dataRuntimeDir() / "cuda" / "include"; }

bool onPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  if (!path) return false;
  std::string p = path;
  size_t start = 0;
  while (start <= p.size()) {
    size_t end = p.find(':', start);
    if (end == std::string::npos) end = p.size();
    std::string dir = p.substr(start, end - start);
    if (!dir.empty()) {
      std::error_code ec;
      fs::path f = fs::path(dir) / name;
      if (fs::is_regular_file(f, ec) && ::access(f.c_str(), X_OK) == 0) return true;
    }
    start = end + 1;
  }
  return false;
}

// `nvcc` where PATH has it, else the usual install location (nvcc is often
// not on PATH). SK_NVCC overrides both (findToolchain reads it).
const std::string& defaultNvcc() {
  static const std::string nvcc = onPath("nvcc") ? std::string("nvcc") : std::string("/usr/local/cuda/bin/nvcc");
  return nvcc;
}

class CudaRecipe final : public BuildRecipe {
 public:
  std::string_view target() const override { return "cuda"; }
  std::string_view defaultCompiler() const override { return defaultNvcc(); }
  std::string_view compilerEnvVar() const override { return "SK_NVCC"; }

  std::string archKey(const std::string& arch) const override { return cudaResolveArch(arch); }

  Expected<std::string> runtimeDigest() const override {
    KeyBuilder kb;
    kb.add("what", "cuda runtime");
    Status st = kb.addTree("include", cudaIncludeDir());
    if (!st) return Error(st.error()).context("hashing the superkernel cuda runtime");
    return kb.finish();
  }

  std::vector<std::string> objectFlags(const KernelVariant& v, const Options& o,
                                       const std::string& arch) const override {
    std::vector<std::string> f = {"-c", "-rdc=true", "-O3", "-std=c++17", "-arch=" + cudaResolveArch(arch),
                                  "-Xcompiler=-fPIC"};
    f.push_back("-I" + cudaIncludeDir().string());
    std::string sym = symbolOf(v);
    if (!v.decl.entry.empty() && sym != v.decl.entry) f.push_back(fmt::format("-D{}={}", v.decl.entry, sym));
    for (const auto& [k, val] : v.macros) f.push_back(fmt::format("-D{}={}", k, val));
    for (const auto& c : o.compileOptions) f.push_back(c);
    return f;
  }

  std::string objectName() const override { return "object.o"; }

  std::vector<std::string> objectArgs(const std::vector<std::string>& flags, const KernelVariant& v,
                                      const fs::path& output) const override {
    std::vector<std::string> tail = flags;
    tail.insert(tail.end(), {"-o", output.string(), "-x", "cu", v.decl.sourcePath.string()});
    return tail;
  }

  // Device code sizes are not in the host object's symbol table, and nothing
  // uses them on GPUs (preload-code has no effect): 0, "unknown".
  Expected<uint64_t> symbolSize(std::string_view, std::string_view) const override { return uint64_t{0}; }

  std::string linkKey(const Options& o, const std::string& arch) const override {
    return "link-flags\n" + joinFlags(linkFlags(o, arch, fs::path("<nvcc>"))) + "\nversion-script\n" +
           kCudaVersionScript;
  }

  std::string artifactName() const override { return "superkernel.so"; }

  Expected<LinkOutput> link(const LinkRequest& req, const RecipeTools& tools) const override {
    // The Graph + PDL variant exports sk_last_launch too (its launch metadata says so, and is in the key).
    SK_ASSIGN_OR_RETURN(RunOnlyLinkInputs in, writeRunOnlyLinkInputs(req, "superkernel.cu",
                                                                     cudaVersionScript(req.launch, kCudaVersionScript)));
    const fs::path& src = in.source;
    const fs::path& script = in.versionScript;
    const std::vector<fs::path>& objs = in.objects;
    std::vector<std::string> tail = linkFlags(*req.options, tools.arch(), tools.toolchain().path);
    tail.push_back("-Xlinker=--version-script=" + script.string());
    // nvcc types inputs by extension (superkernel.cu, *.o); its -x would apply to every input.
    tail.insert(tail.end(), {"-o", req.outputFile.string(), src.string()});
    for (const auto& p : objs) tail.push_back(p.string());
    return runLinkCommand(tools, tail, "compiling and device-linking the cuda SuperKernel");
  }

 private:
  // `nvcc` is the resolved compiler: its ../lib64 is the rpath that finds
  // libcudart.so (the key hashes "<nvcc>" instead: the compiler's identity is
  // in the key already).
  static std::vector<std::string> linkFlags(const Options& o, const std::string& arch, const fs::path& nvcc) {
    std::vector<std::string> f = {"-shared", "-rdc=true", "-O3", "-std=c++17", "-arch=" + cudaResolveArch(arch),
                                  "-Xcompiler=-fPIC,-fvisibility=hidden"};
    f.push_back("-I" + cudaIncludeDir().string());
    for (const auto& c : o.compileOptions) f.push_back(c);
    f.push_back("-cudart=shared");
    if (nvcc != fs::path("<nvcc>")) {
      f.push_back("-Xlinker=-rpath=" + (nvcc.parent_path().parent_path() / "lib64").string());
    } else {
      f.push_back("-Xlinker=-rpath=<nvcc>/../lib64");
    }
    return f;
  }
};

}  // namespace

std::string cudaResolveArch(const std::string& arch) {
  if (arch.rfind("sm_", 0) == 0 || arch.rfind("compute_", 0) == 0) return arch;
  static std::once_flag once;
  static std::string native;
  std::call_once(once, [] {
    native = kCudaDefaultArch;
    auto api = cudaRuntimeWithDevice();
    if (!api) return;
    int dev = 0, major = 0, minor = 0;
    if ((*api)->getDevice(&dev) == 0 &&
        (*api)->deviceGetAttribute(&major, kCudaAttrComputeCapabilityMajor, dev) == 0 &&
        (*api)->deviceGetAttribute(&minor, kCudaAttrComputeCapabilityMinor, dev) == 0 && major > 0)
      native = fmt::format("sm_{}{}", major, minor);
  });
  return native;
}

std::shared_ptr<const BuildRecipe> makeCudaRecipe() { return std::make_shared<CudaRecipe>(); }

}  // namespace sk
