// The cpu build recipe: clang++ (or g++) objects with -fPIC, one shared
// object per SuperKernel linked with the runtime's kernel_abi.c, exporting
// only `run`.
//
// Objects. Each KernelVariant compiles into one relocatable object:
//   <launcher...> <compiler> -c -O2 -fPIC -std=c++17 (C sources: -std=c11, -x c)
//     [-march=<arch>] -I<runtime/cpu/include> -D<entry>=<symbol> -D<macro>=<value>...
//     <compile-options...> [-falign-functions=<func-align>] -o <out> -x c++ <source>
//
// SuperKernels. The generated source is compiled and linked with the objects
// and runtime/cpu/src/kernel_abi.c (compiled once per driver with
// -DSK_BUILDING_SUPERKERNEL -fvisibility=hidden; it does not get
// compile-options) into one shared object:
//   -shared -fPIC -O2 -std=c++17 -fvisibility=hidden [-march] -I<runtime include>
//   <compile-options...> [-falign-functions=N] -Wl,-z,defs
//   -Wl,--version-script=<exports only run> -o <so> -x c++ superkernel.cpp -x none <objects> kernel_abi.o -lm
// so `run` (which the generated code marks extern "C" and visible) is the
// only exported symbol.
#include "backends/cpu/CpuBackend.h"

#include <algorithm>
#include <fstream>
#include <map>

#include <fmt/format.h>

#include "backends/cpu/LocalizeSymbols.h"
#include "support/BuildFiles.h"
#include "support/Fd.h"
#include "backends/LinkFiles.h"
#include "superkernel/support/Paths.h"

namespace sk {
namespace fs = std::filesystem;

namespace {

bool isCSource(const fs::path& p) { return p.extension() == ".c"; }

std::string symbolOf(const KernelVariant& v) { return v.symbol.empty() ? v.decl.entry : v.symbol; }

// Model and feature flags of this CPU: what -march=native depends on.
std::string hostCpuFingerprint() {
  std::ifstream in("/proc/cpuinfo");
  std::string line, out;
  bool seenModel = false, seenFlags = false, seenVendor = false;
  while (std::getline(in, line)) {
    auto take = [&](const char* key, bool& seen) {
      if (!seen && line.rfind(key, 0) == 0) {
        out += line + "\n";
        seen = true;
      }
    };
    take("vendor_id", seenVendor);
    take("model name", seenModel);
    take("flags", seenFlags);
    take("Features", seenFlags);
    take("CPU part", seenModel);
    if (seenModel && seenFlags && seenVendor) break;
  }
  return out;
}

class CpuRecipe final : public BuildRecipe {
 public:
  std::string_view target() const override { return "cpu"; }
  std::string_view defaultCompiler() const override { return "clang++"; }
  std::string_view compilerEnvVar() const override { return "SK_CXX"; }

  std::string archKey(const std::string& arch) const override {
    return arch == "native" ? arch + "\n" + hostCpuFingerprint() : arch;
  }

  Expected<std::string> runtimeDigest() const override {
    KeyBuilder kb;
    kb.add("what", "runtime");
    Status st = kb.addTree("include", cpuRuntimeIncludeDir());
    if (st) st = kb.addFile("kernel_abi.c", abiSource());
    if (!st) return Error(st.error()).context("hashing the superkernel runtime");
    return kb.finish();
  }

  std::vector<std::string> objectFlags(const KernelVariant& v, const Options& o,
                                       const std::string& arch) const override {
    std::vector<std::string> f = {"-c", "-O2", "-fPIC"};
    f.push_back(isCSource(v.decl.sourcePath) ? "-std=c11" : "-std=c++17");
    for (auto& a : archFlags(arch)) f.push_back(a);
    f.push_back("-I" + cpuRuntimeIncludeDir().string());
    std::string sym = symbolOf(v);
    if (!v.decl.entry.empty() && sym != v.decl.entry) f.push_back(fmt::format("-D{}={}", v.decl.entry, sym));
    for (const auto& [k, val] : v.macros) f.push_back(fmt::format("-D{}={}", k, val));
    for (const auto& c : o.compileOptions) f.push_back(c);
    for (auto& a : alignFlags(o)) f.push_back(a);
    return f;
  }

  std::vector<std::string> objectArgs(const std::vector<std::string>& flags, const KernelVariant& v,
                                      const fs::path& output) const override {
    std::vector<std::string> tail = flags;
    tail.insert(tail.end(), {"-o", output.string(), "-x", isCSource(v.decl.sourcePath) ? "c" : "c++",
                             v.decl.sourcePath.string()});
    return tail;
  }

  // Only the entry stays global: sub-kernels fused into one library never
  // collide (target/cpu/LocalizeSymbols.h; the tool is part of the object key).
  Expected<std::string> postProcessKey(const Toolchain& tc) const override {
    SK_ASSIGN_OR_RETURN(ObjcopyTool objcopy, findObjcopy(tc));
    return objcopy.identity;
  }

  Status postProcessObject(const fs::path& object, const KernelVariant& v, const RecipeTools& tools) const override {
    SK_ASSIGN_OR_RETURN(ObjcopyTool objcopy, findObjcopy(tools.toolchain()));
    ProcessOptions po;
    po.timeout = std::chrono::minutes(2);
    const std::string keep = v.symbol.empty() ? v.decl.entry : v.symbol;
    if (Status st = localizeObjectSymbols(objcopy, object, keep, po); !st)
      return Error(st.error()).context(fmt::format("kernel '{}' ({})", v.decl.name, v.decl.sourcePath.string()));
    return Status::success();
  }

  std::string linkKey(const Options& o, const std::string& arch) const override {
    return "link-flags\n" + joinFlags(linkFlags(o, arch)) + "\nabi-flags\n" + joinFlags(abiFlags(arch)) +
           "\nversion-script\n" + kRunOnlyVersionScript;
  }

  std::string artifactName() const override { return "superkernel.so"; }

  Expected<LinkOutput> link(const LinkRequest& req, const RecipeTools& tools) const override {
    SK_ASSIGN_OR_RETURN(RunOnlyLinkInputs in, writeRunOnlyLinkInputs(req, "superkernel.cpp"));
    const fs::path& dir = in.dir;
    const fs::path& src = in.source;
    const fs::path& script = in.versionScript;
    const std::vector<fs::path>& objs = in.objects;
    // kernel_abi.c: hidden copies of sk_wait_inputs & co. Compiled once per
    // driver: every SuperKernel links the same object, so a cold plan of N
    // steps runs the compiler N times, not 2N.
    fs::path abiObj = dir / "kernel_abi.o";
    SK_ASSIGN_OR_RETURN(auto abiBytes, tools.once("kernel_abi.o", [&]() -> Expected<std::string> {
      fs::path obj = dir / "kernel_abi.build.o";
      std::vector<std::string> tail = abiFlags(tools.arch());
      tail.insert(tail.end(), {"-o", obj.string(), "-x", "c", abiSource().string()});
      SK_ASSIGN_OR_RETURN(auto res, tools.runCompiler(tail, "compiling the runtime's kernel_abi.c"));
      (void)res;
      return detail::readFileBytes(obj);
    }));
    SK_RETURN_IF_ERROR(writeScratchFile(abiObj, *abiBytes));
    const Options& o = *req.options;
    std::vector<std::string> tail = linkFlags(o, tools.arch());
    tail.push_back("-Wl,--version-script=" + script.string());
    tail.insert(tail.end(), {"-o", req.outputFile.string(), "-x", "c++", src.string(), "-x", "none"});
    for (const auto& p : objs) tail.push_back(p.string());
    tail.push_back(abiObj.string());
    // Kernels call libm (expf, sqrtf, ...); -z defs would reject them otherwise.
    tail.push_back("-lm");
    return runLinkCommand(tools, tail, "compiling and linking the SuperKernel");
  }

 private:
  static fs::path abiSource() { return cpuRuntimeSourceDir() / "kernel_abi.c"; }

  static std::vector<std::string> archFlags(const std::string& arch) {
    if (arch.empty() || arch == "generic") return {};
    return {"-march=" + arch};
  }

  static std::vector<std::string> alignFlags(const Options& o) {
    if (o.funcAlign > 0) return {fmt::format("-falign-functions={}", o.funcAlign)};
    return {};
  }

  static std::vector<std::string> linkFlags(const Options& o, const std::string& arch) {
    std::vector<std::string> f = {"-shared", "-fPIC", "-O2", "-std=c++17", "-fvisibility=hidden"};
    for (auto& a : archFlags(arch)) f.push_back(a);
    f.push_back("-I" + cpuRuntimeIncludeDir().string());
    for (const auto& c : o.compileOptions) f.push_back(c);
    for (auto& a : alignFlags(o)) f.push_back(a);
    f.push_back("-Wl,-z,defs");
    return f;
  }

  static std::vector<std::string> abiFlags(const std::string& arch) {
    std::vector<std::string> f = {"-c", "-O2", "-fPIC", "-std=c11", "-DSK_BUILDING_SUPERKERNEL", "-fvisibility=hidden"};
    for (auto& a : archFlags(arch)) f.push_back(a);
    f.push_back("-I" + cpuRuntimeIncludeDir().string());
    return f;
  }
};

}  // namespace

std::shared_ptr<const BuildRecipe> makeCpuRecipe() { return std::make_shared<CpuRecipe>(); }

}  // namespace sk
