// Building an ascend step for the simulator (see SimBuild.h).
#include "target/ascend/SimBuild.h"

#include <fmt/format.h>

#include <fstream>

#include "superkernel/driver/Process.h"

namespace sk::ascend {
namespace fs = std::filesystem;

namespace {

Status run(const std::vector<std::string>& argv) {
  ProcessOptions po;
  po.timeout = std::chrono::minutes(5);
  auto r = runProcess(argv, po);
  if (!r) return std::move(r).error();
  if (!r->succeeded()) {
    return compileError(fmt::format("{} failed ({})\n  command: {}\n{}{}", fs::path(argv[0]).filename().string(),
                                    r->describe(), formatCommand(argv), r->out, r->err));
  }
  return Status::success();
}

}  // namespace

Expected<SimBuildConfig> defaultSimBuildConfig(const fs::path& workDir) {
  SimBuildConfig c;
  c.workDir = workDir;
  c.cxx = findExecutableUnresolved("clang++");
  if (c.cxx.empty()) return compileError("clang++ not found on PATH (the ascend simulator compiles kernels with it)");
  c.objcopy = findExecutableUnresolved("llvm-objcopy");
  if (c.objcopy.empty()) return compileError("llvm-objcopy not found on PATH (split-mode copies need it)");
  c.simInclude = fs::path(SK_SOURCE_ROOT) / "runtime" / "ascend" / "sim" / "include";
  return c;
}

Expected<SimArtifact> buildForSimulator(const AscendStep& step, const AscendSource* source, const SimBuildConfig& cfg) {
  std::error_code ec;
  fs::create_directories(cfg.workDir, ec);
  if (ec) return ioError(fmt::format("cannot create {}: {}", cfg.workDir.string(), ec.message()));
  const int split = source ? source->splitMode : 1;
  std::vector<fs::path> objects;
  std::vector<bool> used(step.objects.size(), false);
  std::vector<uint32_t> blocksOf(step.objects.size(), 0);
  std::vector<bool> ownEarly(step.objects.size(), false);
  for (const AscendOp& op : step.ops) {
    used[op.object] = true;
    blocksOf[op.object] = op.blockDim;
    ownEarly[op.object] = ownEarly[op.object] || op.ownEarlyStart;
  }
  for (size_t i = 0; i < step.objects.size(); ++i) {
    if (!used[i]) continue;
    const AscendObject& o = step.objects[i];
    CompileStep cs;
    cs.source = o.source;
    cs.object = cfg.workDir / (o.symbol + ".o");
    cs.arch = o.pool == Pool::Cube ? CoreArch::Cube : CoreArch::Vec;
    cs.defines = o.defines;
    cs.subKernel = step.fused;
    cs.blockNum = blocksOf[i];
    cs.kernelEarlyStart = ownEarly[i];
    cs.splitMode = split;
    SK_RETURN_IF_ERROR(run(simCompileArgv(cfg.cxx, cfg.simInclude, cs)));
    objects.push_back(cs.object);
    for (int k = 1; k < split; ++k) {
      const fs::path copy = cfg.workDir / fmt::format("{}.split{}.o", o.symbol, k);
      SK_RETURN_IF_ERROR(run(splitCopyArgv(cfg.objcopy, cs.object, copy, o.symbol, k)));
      objects.push_back(copy);
    }
  }
  SimArtifact a;
  if (source) {
    const fs::path src = cfg.workDir / (source->entry + ".cpp");
    {
      std::ofstream out(src, std::ios::binary);
      out << source->text;
      if (!out) return ioError("cannot write " + src.string());
    }
    CompileStep cs;
    cs.source = src;
    cs.object = cfg.workDir / (source->entry + ".o");
    cs.splitMode = split;
    SK_RETURN_IF_ERROR(run(simCompileArgv(cfg.cxx, cfg.simInclude, cs)));
    objects.push_back(cs.object);
    a.entry = source->entry;
  } else {
    if (step.ops.size() != 1) return internalError("an unfused step has one op");
    a.entry = step.objects[step.ops[0].object].symbol;
  }
  a.sharedObject = cfg.workDir / (a.entry + ".so");
  SK_RETURN_IF_ERROR(run(simLinkArgv(cfg.cxx, objects, a.sharedObject)));
  return a;
}

}  // namespace sk::ascend
