// The ascend build steps of both targets (ascend: bisheng and CANN's binutils; ascend-sim: the host
// compiler): tool discovery, argv, the kernel JSON and both artifact bundles (see AscendBuild.h).
#include "backends/ascend/AscendBuild.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <unistd.h>

#include <cctype>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <set>

#include <nlohmann/json.hpp>

#include "superkernel/codegen/Emitter.h"
#include "superkernel/driver/Process.h"
#include "superkernel/frontend/OpList.h"
#include "superkernel/support/Sha256.h"

namespace sk::ascend {
namespace fs = std::filesystem;

EnvLookup processEnv() {
  return [](std::string_view name) -> std::optional<std::string> {
    const char* v = std::getenv(std::string(name).c_str());
    if (v == nullptr || *v == '\0') return std::nullopt;
    return std::string(v);
  };
}

namespace {

bool isExecutableFile(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
}

// A name (PATH lookup) or a path. Symlinks are kept: CANN installs its tools
// as links into versioned directories, and a tool may pick its mode from argv[0].
fs::path locate(const std::string& nameOrPath) {
  if (nameOrPath.find('/') != std::string::npos) return isExecutableFile(nameOrPath) ? fs::path(nameOrPath) : fs::path();
  return findExecutableUnresolved(nameOrPath);
}

}  // namespace

Expected<AscendTools> findAscendTools(const EnvLookup& env) {
  AscendTools t;
  std::vector<std::string> tried;
  const std::optional<std::string> explicitBisheng = env("SK_BISHENG");
  const std::optional<std::string> home = env("ASCEND_HOME_PATH");
  std::vector<fs::path> cannBins;
  if (home) {
    cannBins.push_back(fs::path(*home) / "compiler" / "ccec_compiler" / "bin");
    cannBins.push_back(fs::path(*home) / "bin");
  }
  if (explicitBisheng) {
    t.bisheng = locate(*explicitBisheng);
    if (t.bisheng.empty()) {
      return compileError(fmt::format("SK_BISHENG={} is not an executable (nor a name found on PATH); point it at the "
                                      "CANN toolkit's bisheng or unset it",
                                      *explicitBisheng));
    }
    t.foundVia = "SK_BISHENG";
  } else {
    for (const fs::path& dir : cannBins) {
      tried.push_back((dir / "bisheng").string() + " (ASCEND_HOME_PATH)");
      if (isExecutableFile(dir / "bisheng")) {
        t.bisheng = dir / "bisheng";
        t.foundVia = "ASCEND_HOME_PATH";
        break;
      }
    }
    if (t.bisheng.empty()) {
      tried.push_back("bisheng on PATH");
      t.bisheng = findExecutableUnresolved("bisheng");
      t.foundVia = "PATH";
    }
    if (t.bisheng.empty()) {
      // One line (sk-compile prints every error as one): what is missing, where it was looked for, the remedy.
      return compileError(fmt::format("bisheng (the CANN Ascend C compiler) not found ({}tried: {}); set SK_BISHENG "
                                      "to its path, or ASCEND_HOME_PATH to the CANN toolkit (source its set_env.sh)",
                                      home ? "" : "ASCEND_HOME_PATH is not set; ", fmt::join(tried, ", ")));
    }
  }
  // Binutils: beside bisheng first.
  std::vector<fs::path> dirs{t.bisheng.parent_path()};
  for (const fs::path& d : cannBins) dirs.push_back(d);
  auto tool = [&](const char* name, fs::path* out) -> Status {
    std::vector<std::string> places;
    for (const fs::path& d : dirs) {
      if (isExecutableFile(d / name)) {
        *out = d / name;
        return Status::success();
      }
      places.push_back((d / name).string());
    }
    *out = findExecutableUnresolved(name);
    if (!out->empty()) return Status::success();
    return compileError(fmt::format("{} not found next to {} nor on PATH (tried: {}); the CANN toolkit ships it in "
                                    "compiler/ccec_compiler/bin: set ASCEND_HOME_PATH",
                                    name, t.bisheng.string(), fmt::join(places, ", ")));
  };
  SK_RETURN_IF_ERROR(tool("ld.lld", &t.ldLld));
  SK_RETURN_IF_ERROR(tool("llvm-objcopy", &t.objcopy));
  return t;
}

std::string toolIdentity(std::string_view name, const fs::path& tool) {
  ProcessOptions po;
  po.timeout = std::chrono::seconds(30);
  auto r = runProcess({tool.string(), "--version"}, po);
  std::string version = r && r->succeeded() ? r->out : std::string("(--version failed)");
  while (!version.empty() && version.back() == '\n') version.pop_back();
  return fmt::format("{} {}\n{}", name, tool.string(), version);
}

namespace {

void addDefines(std::vector<std::string>& argv, const CompileStep& s) {
  for (const auto& [name, value] : s.defines) argv.push_back(value.empty() ? "-D" + name : "-D" + name + "=" + value);
  if (s.subKernel) {
    // The sub-kernel sees its own block count and, when honoured, its own early-start points.
    argv.push_back(fmt::format("-D__SUPER_KERNEL_STATIC_BLOCK_NUM__={}", s.blockNum));
    if (s.kernelEarlyStart) {
      argv.push_back("-D__ASCENDC_ENABLE_SET_NEXT_TASK_START");
      argv.push_back("-D__ASCENDC_ENABLE_WAIT_PRE_TASK_END");
      argv.push_back("-D__ASCENDC_SUPERKERNEL_EARLY_START_V2");
    }
  }
}

// What every ascend compile ends with, device (bisheng) or simulator (host
// C++): one copy, so a simulated object sees exactly the macros, include
// folders and compile-options of the device build.
// What both builds pass after their own flags: include folders, macros, compile-options.
void addCompileTail(std::vector<std::string>& argv, const CompileStep& s) {
  argv.push_back("-DTILING_KEY_VAR=0");
  for (const fs::path& d : s.includeDirs) argv.push_back("-I" + d.string());
  addDefines(argv, s);
  for (const std::string& e : s.extra) argv.push_back(e);
}

// tool, flags, then the step's input and output.
std::vector<std::string> withInputOutput(const std::string& tool, std::vector<std::string> flags, const CompileStep& s) {
  flags.insert(flags.begin(), tool);
  return compileArgs(std::move(flags), s.source, s.object);
}

}  // namespace

std::vector<std::string> compileArgs(std::vector<std::string> flags, const fs::path& source, const fs::path& object) {
  flags.insert(flags.end(), {"-c", source.string(), "-o", object.string()});
  return flags;
}

std::vector<std::string> deviceCompileFlags(const CompileStep& s) {
  std::vector<std::string> argv{"-x", "cce", "-O3", "-std=c++17",
                                fmt::format("--cce-aicore-arch={}", coreArchName(s.arch)), "--cce-aicore-only",
                                "-mllvm", "-cce-aicore-addr-transform", "-mllvm",
                                "-cce-aicore-dcci-insert-for-scalar=false", "-mllvm", "-cce-aicore-stack-size=0x8000"};
  if (s.splitMode > 1) {
    // Code copies spread over the instruction space: calls between them may exceed the short-branch range.
    for (const char* f : {"-mllvm", "-cce-aicore-jump-expand=true", "--cce-long-call=true", "-mllvm",
                          "-cce-aicore-long-call"})
      argv.push_back(f);
  }
  addCompileTail(argv, s);
  return argv;
}

std::vector<std::string> deviceCompileArgv(const AscendTools& tools, const CompileStep& s) {
  return withInputOutput(tools.bisheng.string(), deviceCompileFlags(s), s);
}

std::vector<std::string> relocatableLinkArgv(const AscendTools& tools, const std::vector<fs::path>& objects,
                                             const fs::path& output) {
  std::vector<std::string> argv{tools.ldLld.string(), "-m", "aicorelinux", "-r", "-Ttext=0"};
  for (const fs::path& o : objects) argv.push_back(o.string());
  argv.insert(argv.end(), {"-o", output.string()});
  return argv;
}

std::vector<std::vector<std::string>> localizeArgv(const AscendTools& tools, const fs::path& object,
                                                   const std::vector<std::string>& symbols) {
  constexpr size_t kBatch = 256;
  std::vector<std::string> unique;
  std::set<std::string> seen;
  for (const std::string& s : symbols)
    if (seen.insert(s).second) unique.push_back(s);
  std::vector<std::vector<std::string>> out;
  for (size_t i = 0; i < unique.size(); i += kBatch) {
    std::vector<std::string> argv{tools.objcopy.string()};
    for (size_t j = i; j < std::min(unique.size(), i + kBatch); ++j) argv.push_back("--localize-symbol=" + unique[j]);
    argv.push_back(object.string());
    out.push_back(std::move(argv));
  }
  return out;
}

std::string splitSymbol(std::string_view symbol, int k) {
  return k == 0 ? std::string(symbol) : fmt::format("{}_split{}", symbol, k);
}

std::vector<std::string> splitCopyArgv(const fs::path& objcopy, const fs::path& input, const fs::path& output,
                                       std::string_view symbol, int k) {
  return {objcopy.string(), "--redefine-sym", fmt::format("{}={}", symbol, splitSymbol(symbol, k)), input.string(),
          output.string()};
}

std::vector<std::pair<std::string, std::string>> objectDefines(
    const std::vector<std::pair<std::string, std::string>>& macros,
    const std::vector<std::pair<std::string, std::string>>& scalars) {
  std::vector<std::pair<std::string, std::string>> out = macros;
  std::set<std::string> defined;
  for (const auto& [name, value] : macros) defined.insert(name);
  for (const auto& [param, literal] : scalars) {
    std::string name = scalarMacroName(param);
    if (defined.insert(name).second) out.emplace_back(std::move(name), literal);
  }
  return out;
}

Expected<std::string> runtimeScalarMacro(DType dtype, uint32_t slot) {
  const char* t = nullptr;
  switch (dtype) {
    case DType::I32: t = "I32"; break;
    case DType::I64: t = "I64"; break;
    case DType::U32: t = "U32"; break;
    case DType::U64: t = "U64"; break;
    case DType::F32: t = "F32"; break;
    case DType::F64: t = "F64"; break;
    default:
      return badInput(fmt::format("a runtime scalar of dtype {} (ascend reads runtime scalars of dtype i32, i64, u32, "
                                  "u64, f32 or f64)",
                                  dtypeName(dtype)));
  }
  if (slot >= kMaxRuntimeValues) {
    return badInput(fmt::format("runtime value slot {} (an ascend launch passes at most {})", slot, kMaxRuntimeValues));
  }
  return fmt::format("SK_ASCEND_RUNTIME_{}_{}", t, slot);
}

Expected<CompileStep> variantCompileStep(const KernelVariant& v, const std::vector<std::string>& compileOptions,
                                         ObjectBuild build, const std::string& what) {
  CompileStep cs;
  cs.arch = v.decl.coreType == CoreType::Cube ? CoreArch::Cube : CoreArch::Vec;
  std::vector<std::pair<std::string, std::string>> scalars;
  size_t next = 0, nextRuntime = 0;
  for (const ParamDecl& p : v.decl.params) {
    if (p.kind != ParamKind::Scalar) continue;
    if (nextRuntime < v.runtimeScalars.size() && v.runtimeScalars[nextRuntime].first == p.name) {
      const uint32_t slot = v.runtimeScalars[nextRuntime++].second;
      if (build == ObjectBuild::Device) {
        return badInput(fmt::format(
            "{} argument {}: a runtime value (\"from\") cannot be built for an ascend device yet: the bisheng "
            "recipe compiles sub-kernel scalars in as -DSK_<NAME> literals and has no read of the launch's "
            "runtime slots; the ascend simulator (target ascend-sim) supports it",
            what, p.name));
      }
      // A slot or dtype the simulator has no macro for: objects are compiled before the step is emitted, and
      // makeAscendStep then refuses the step (BadInput naming it or the op), so this object is never linked;
      // it is built reading SK_ASCEND_RUNTIME_INVALID, which traps, rather than failing its compile with a
      // message about the compiler instead of the op list.
      auto macro = runtimeScalarMacro(p.dtype, slot);
      scalars.emplace_back(p.name, macro ? *macro : std::string("SK_ASCEND_RUNTIME_INVALID"));
      continue;
    }
    if (next >= v.staticScalars.size()) break;  // not specialised: the compile names the missing SK_ macro
    auto lit = cScalarLiteral(v.staticScalars[next++], p.dtype);
    // The op-list validator already proved every scalar representable; a failure here is left to the compiler.
    scalars.emplace_back(p.name, lit ? *lit : "sk_unrepresentable_scalar");
  }
  if (nextRuntime != v.runtimeScalars.size()) {
    return internalError(fmt::format("{}: runtime scalar {} is not a scalar parameter of kernel {} (in order)", what,
                                     v.runtimeScalars[nextRuntime].first, v.decl.name));
  }
  cs.defines = objectDefines({v.macros.begin(), v.macros.end()}, scalars);
  if (!v.decl.entry.empty() && !v.symbol.empty()) cs.defines.emplace_back(v.decl.entry, v.symbol);
  cs.subKernel = v.staticBlocks > 0;
  cs.blockNum = v.staticBlocks;
  cs.kernelEarlyStart = v.ownEarlyStart;
  cs.extra = compileOptions;
  return cs;
}

std::vector<std::string> simCompileFlags(const fs::path& simInclude, const CompileStep& s) {
  // -O1, not -O2: the simulator is for correctness (its timings mean nothing for an NPU), so its users wait on
  // the compile, not the run. -O1 compiles a sub-kernel about 28% faster (clang 14: 0.72 against 1.00 s for
  // kernels/ascend/add_rms_norm.cpp), runs a simulated step in about the same time, and without -ffast-math both
  // levels compute the same IEEE operations in the same order (the cpu-bit-for-bit tests hold at either).
  std::vector<std::string> argv{"-x", "c++", "-std=c++17", "-O1", "-fPIC", "-fexceptions", "-fvisibility=default",
                                "-I" + simInclude.string()};
  // The device build's arch macro, so `#if defined(__DAV_C220_CUBE__)` code takes the same branch.
  argv.push_back(s.arch == CoreArch::Cube ? "-D__DAV_C220_CUBE__" : "-D__DAV_C220_VEC__");
  addCompileTail(argv, s);
  return argv;
}

std::vector<std::string> simCompileArgv(const fs::path& cxx, const fs::path& simInclude, const CompileStep& s) {
  return withInputOutput(cxx.string(), simCompileFlags(simInclude, s), s);
}

std::vector<std::string> simLinkFlags() { return {"-shared", "-fPIC"}; }

std::vector<std::string> simLinkArgv(const fs::path& cxx, const std::vector<fs::path>& objects, const fs::path& output) {
  std::vector<std::string> argv = simLinkFlags();
  argv.insert(argv.begin(), cxx.string());
  for (const fs::path& o : objects) argv.push_back(o.string());
  argv.insert(argv.end(), {"-o", output.string()});
  return argv;
}

namespace {

const char* coreTypeOf(KernelType t) {
  switch (t) {
    case KernelType::AivOnly:
    case KernelType::MixAiv1_0: return "VectorCore";
    case KernelType::AicOnly:
    case KernelType::MixAic1_0: return "AiCore";
    default: return "MIX";
  }
}

std::string ratioOf(KernelType t) {
  switch (t) {
    case KernelType::AivOnly:
    case KernelType::MixAiv1_0: return "0:1";
    case KernelType::AicOnly:
    case KernelType::MixAic1_0: return "1:0";
    case KernelType::MixAic1_1: return "1:1";
    case KernelType::MixAic1_2: return "1:2";
  }
  return "?";
}

bool isHex64(const std::string& s) {
  if (s.size() != 64) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

nlohmann::json kernelMetaObject(const KernelMeta& m) {
  nlohmann::json j;
  j["binFileName"] = m.binFileName;
  j["binFileSuffix"] = ".o";
  j["kernelName"] = m.kernelName;
  j["blockDim"] = m.blockDim;
  j["coreType"] = coreTypeOf(m.kernelType);
  j["kernelType"] = kernelTypeName(m.kernelType);
  j["taskRation"] = ratioOf(m.kernelType);
  j["sha256"] = m.sha256;
  return j;
}

Expected<KernelMeta> kernelMetaFrom(const nlohmann::json& j) {
  if (!j.is_object()) return badInput("kernel JSON: not a JSON object");
  auto str = [&](const char* key) -> Expected<std::string> {
    if (!j.contains(key) || !j[key].is_string()) return badInput(fmt::format("kernel JSON: \"{}\" missing or not a string", key));
    return j[key].get<std::string>();
  };
  KernelMeta m;
  SK_ASSIGN_OR_RETURN(m.kernelName, str("kernelName"));
  SK_ASSIGN_OR_RETURN(m.binFileName, str("binFileName"));
  SK_ASSIGN_OR_RETURN(m.sha256, str("sha256"));
  SK_ASSIGN_OR_RETURN(std::string type, str("kernelType"));
  SK_ASSIGN_OR_RETURN(std::string coreType, str("coreType"));
  SK_ASSIGN_OR_RETURN(std::string ratio, str("taskRation"));
  if (!j.contains("blockDim") || !j["blockDim"].is_number_unsigned() || j["blockDim"].get<uint64_t>() == 0 ||
      j["blockDim"].get<uint64_t>() > 65535) {
    return badInput("kernel JSON: \"blockDim\" must be an integer in 1..65535");
  }
  m.blockDim = j["blockDim"].get<uint32_t>();
  bool known = false;
  for (KernelType t : {KernelType::AivOnly, KernelType::AicOnly, KernelType::MixAiv1_0, KernelType::MixAic1_0,
                       KernelType::MixAic1_1, KernelType::MixAic1_2}) {
    if (type == kernelTypeName(t)) {
      m.kernelType = t;
      known = true;
    }
  }
  if (!known) return badInput(fmt::format("kernel JSON: unknown kernelType \"{}\"", type));
  if (coreType != coreTypeOf(m.kernelType) || ratio != ratioOf(m.kernelType)) {
    return badInput(fmt::format("kernel JSON: coreType \"{}\" / taskRation \"{}\" contradict kernelType {}", coreType,
                                ratio, type));
  }
  if (!isHex64(m.sha256)) return badInput("kernel JSON: \"sha256\" is not 64 lowercase hex digits");
  return m;
}

}  // namespace

std::string kernelMetaJson(const KernelMeta& m) { return kernelMetaObject(m).dump(2) + "\n"; }

Expected<KernelMeta> parseKernelMetaJson(std::string_view text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded()) return badInput("kernel JSON: not a JSON object");
  return kernelMetaFrom(j);
}

namespace {

constexpr std::string_view kDeviceMagic = "SK-ASCEND-KERNEL 1 ";
constexpr std::string_view kSimMagic = "SK-ASCEND-SIM 1 ";

// "<magic><a bytes> <b bytes>\n" then the two parts: a header the loader checks before it trusts a size.
std::string formatTwoParts(std::string_view magic, std::string_view a, std::string_view b) {
  return fmt::format("{}{} {}\n", magic, a.size(), b.size()) + std::string(a) + std::string(b);
}

Error badArtifact(std::string_view what, std::string_view why) {
  return badInput(fmt::format("{}: {} (not one this version wrote; remove the cache entry)", what, why));
}

Expected<std::pair<std::string_view, std::string_view>> splitTwoParts(std::string_view bytes, std::string_view magic,
                                                                      std::string_view what) {
  auto bad = [&](std::string_view why) { return badArtifact(what, why); };
  if (bytes.substr(0, magic.size()) != magic) return bad(fmt::format("no {}header", magic));
  const size_t eol = bytes.find('\n');
  if (eol == std::string_view::npos || eol > 64) return bad("header line not terminated");
  const std::string_view sizes = bytes.substr(magic.size(), eol - magic.size());
  const size_t space = sizes.find(' ');
  uint64_t first = 0, second = 0;
  auto num = [](std::string_view s, uint64_t* out) {
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
    return !s.empty() && ec == std::errc() && p == s.data() + s.size();
  };
  if (space == std::string_view::npos || !num(sizes.substr(0, space), &first) ||
      !num(sizes.substr(space + 1), &second)) {
    return bad("header sizes are not two numbers");
  }
  const std::string_view rest = bytes.substr(eol + 1);
  if (first > rest.size() || second != rest.size() - first) {
    return bad(fmt::format("sizes {} + {} do not add up to the {} bytes present", first, second, rest.size()));
  }
  return std::pair{rest.substr(0, first), rest.substr(first)};
}

}  // namespace

std::string formatDeviceBundle(const DeviceBundle& b) {
  nlohmann::json j;
  j["kernel"] = kernelMetaObject(b.meta);
  j["launch"] = b.launch;
  return formatTwoParts(kDeviceMagic, j.dump(), b.elf);
}

Expected<DeviceBundle> parseDeviceBundle(std::string_view bytes) {
  constexpr std::string_view what = "ascend device artifact";
  SK_ASSIGN_OR_RETURN(auto parts, splitTwoParts(bytes, kDeviceMagic, what));
  auto bad = [&](std::string_view why) { return badArtifact(what, why); };
  nlohmann::json j = nlohmann::json::parse(parts.first, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("kernel") || !j["kernel"].is_object() ||
      !j.contains("launch") || !j["launch"].is_string()) {
    return bad("its JSON is not {\"kernel\": {...}, \"launch\": \"...\"}");
  }
  DeviceBundle b;
  auto meta = kernelMetaFrom(j["kernel"]);
  if (!meta) return bad(meta.error().message());
  b.meta = std::move(*meta);
  b.launch = j["launch"].get<std::string>();
  b.elf = std::string(parts.second);
  if (sha256Hex(b.elf) != b.meta.sha256) return bad("the kernel ELF's SHA-256 is not its kernel JSON's");
  return b;
}

std::string formatSimBundle(const SimBundle& b) { return formatTwoParts(kSimMagic, b.launch, b.object); }

Expected<SimBundleView> parseSimBundle(std::string_view bytes) {
  SK_ASSIGN_OR_RETURN(auto parts, splitTwoParts(bytes, kSimMagic, "ascend simulator artifact"));
  return SimBundleView{parts.first, parts.second};
}

}  // namespace sk::ascend
