// Building an ascend step for the simulator (see SimBuild.h).
#include "ascend/SimBuild.h"

#include <fmt/format.h>

#include <algorithm>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <set>
#include <thread>

#include "superkernel/support/Paths.h"

#include "superkernel/driver/Process.h"
#include "backends/ascend/AscendBuild.h"

namespace sktest::ascend {
namespace fs = std::filesystem;
using namespace sk;
using namespace sk::ascend;

namespace {

// A compile, copy or link of a simulator build: five minutes at most.
Status run(const std::vector<std::string>& argv) { return runSimTool(argv, std::chrono::minutes(5)); }

// Run every argv, `jobs` at a time; the first failure (in argv order) is the result.
Status runAll(const std::vector<std::vector<std::string>>& all, unsigned jobs) {
  std::vector<Status> results(all.size());
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next++; i < all.size(); i = next++) results[i] = run(all[i]);
  };
  std::vector<std::thread> threads;
  for (unsigned t = 1; t < std::max(1u, jobs) && t < all.size(); ++t) threads.emplace_back(worker);
  worker();
  for (std::thread& t : threads) t.join();
  for (Status& st : results)
    if (!st) return st;
  return Status::success();
}

}  // namespace

Status runSimTool(const std::vector<std::string>& argv, std::chrono::minutes timeout) {
  ProcessOptions po;
  po.timeout = timeout;
  auto r = runProcess(argv, po);
  if (!r) return std::move(r).error();
  if (!r->succeeded()) {
    return compileError(fmt::format("{} failed ({})\n  command: {}\n{}{}", fs::path(argv[0]).filename().string(),
                                    r->describe(), formatCommand(argv), r->out, r->err));
  }
  return Status::success();
}

Expected<SimBuildConfig> defaultSimBuildConfig(const fs::path& workDir) {
  SimBuildConfig c;
  c.workDir = workDir;
  c.cxx = findExecutableUnresolved("clang++");
  if (c.cxx.empty()) return compileError("clang++ not found on PATH (the ascend simulator compiles kernels with it)");
  c.objcopy = findExecutableUnresolved("llvm-objcopy");
  if (c.objcopy.empty()) return compileError("llvm-objcopy not found on PATH (split-mode copies need it)");
  // The simulator's headers are data like the cpu runtime's: found in the
  // data directory (support/Paths.h), never through the source checkout.
  c.simInclude = dataRuntimeDir() / "ascend" / "sim" / "include";
  if (const char* l = std::getenv("SK_COMPILER_LAUNCHER"); l && *l) {
    c.launcher = splitLauncher(l);
    if (findExecutableUnresolved(c.launcher[0]).empty()) {
      return compileError(fmt::format("compiler launcher '{}' (SK_COMPILER_LAUNCHER) not found on PATH", c.launcher[0]));
    }
  }
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  c.jobs = std::min(8u, hw);
  if (const char* j = std::getenv("SK_BUILD_JOBS"); j && *j) c.jobs = std::clamp(std::atoi(j), 1, 64);
  return c;
}

Expected<SimLibrary> buildForSimulator(const std::vector<SimBuildItem>& items, const SimBuildConfig& cfg,
                                       const std::string& libraryName) {
  std::error_code ec;
  fs::create_directories(cfg.workDir, ec);
  if (ec) return ioError(fmt::format("cannot create {}: {}", cfg.workDir.string(), ec.message()));
  std::vector<fs::path> objects;
  std::vector<std::vector<std::string>> compiles, copies;
  std::set<std::string> made;  // objects and copies by file name: shared across the items
  auto withLauncher = [&](std::vector<std::string> argv) {
    argv.insert(argv.begin(), cfg.launcher.begin(), cfg.launcher.end());
    return argv;
  };
  SimLibrary lib;
  for (const SimBuildItem& item : items) {
    const AscendStep& step = *item.step;
    const AscendSource* source = item.source;
    if (step.fused != (source != nullptr)) return internalError("a fused step needs its source, an unfused one none");
    const int split = source ? source->launch.split : 1;
    std::vector<bool> used(step.objects.size(), false);
    std::vector<uint32_t> blocksOf(step.objects.size(), 0);
    std::vector<bool> ownEarly(step.objects.size(), false);
    for (const AscendOp& op : step.ops) {
      // Inside a SuperKernel an object is compiled for one block count (__SUPER_KERNEL_STATIC_BLOCK_NUM__):
      // ops with different counts need different objects (makeAscendStep keys them so).
      if (step.fused && used[op.object] && blocksOf[op.object] != op.blockDim) {
        return internalError(fmt::format("object {} is used with {} and {} blocks", step.objects[op.object].symbol,
                                         blocksOf[op.object], op.blockDim));
      }
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
      // One symbol is one object: its name carries everything its compile depends on (AscendStep.h).
      if (made.insert(cs.object.filename().string()).second) {
        compiles.push_back(withLauncher(simCompileArgv(cfg.cxx, cfg.simInclude, cs)));
        objects.push_back(cs.object);
      }
      for (int k = 1; k < split; ++k) {
        const fs::path copy = cfg.workDir / fmt::format("{}.split{}.o", o.symbol, k);
        if (!made.insert(copy.filename().string()).second) continue;
        copies.push_back(splitCopyArgv(cfg.objcopy, cs.object, copy, o.symbol, k));
        objects.push_back(copy);
      }
    }
    if (source) {
      const fs::path src = cfg.workDir / (source->launch.entry + ".cpp");
      if (!made.insert(src.filename().string()).second) {
        return badInput(fmt::format("two SuperKernels named {} in one simulator build", source->launch.entry));
      }
      {
        std::ofstream out(src, std::ios::binary);
        out << source->text;
        if (!out) return ioError("cannot write " + src.string());
      }
      CompileStep cs;
      cs.source = src;
      cs.object = cfg.workDir / (source->launch.entry + ".o");
      cs.splitMode = split;
      compiles.push_back(withLauncher(simCompileArgv(cfg.cxx, cfg.simInclude, cs)));
      objects.push_back(cs.object);
      lib.entries.push_back(source->launch.entry);
    } else {
      if (step.ops.size() != 1) return internalError("an unfused step has one op");
      lib.entries.push_back(step.objects[step.ops[0].object].symbol);
    }
  }
  SK_RETURN_IF_ERROR(runAll(compiles, cfg.jobs));
  SK_RETURN_IF_ERROR(runAll(copies, cfg.jobs));
  lib.sharedObject = cfg.workDir / (libraryName + ".so");
  SK_RETURN_IF_ERROR(run(simLinkArgv(cfg.cxx, objects, lib.sharedObject)));
  return lib;
}

Expected<SimArtifact> buildForSimulator(const AscendStep& step, const AscendSource* source, const SimBuildConfig& cfg) {
  auto lib = buildForSimulator({SimBuildItem{&step, source}}, cfg,
                               source ? source->launch.entry : step.objects.at(step.ops.at(0).object).symbol);
  if (!lib) return std::move(lib).error();
  return SimArtifact{lib->sharedObject, lib->entries.at(0)};
}

}  // namespace sktest::ascend
