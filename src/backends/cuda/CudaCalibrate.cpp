// Calibration of the cuda SyncCosts: what one CTA spends at an op boundary on a grid barrier, a counter wait
// and a flag wait, measured on the GPU present with the primitives the generated SuperKernel uses (sync.cuh's
// sk_cta_barrier, sk_cta_arrive, sk_cta_flag_set and sk_wait_ge).
//
// Why this shape (the cpu calibration's, src/backends/cpu/CpuCalibrate.cpp): the cost that matters is what a
// boundary adds to a chain of small ops that stream their own data, as a fused step does, not a primitive in a
// tight loop. runtime/cuda/calibration/sync_calibration.cu runs, on one CTA per SM, a chain of ops y = x * a + b
// over each CTA's own slice of buffers larger than L2, with one kind of boundary after every op: none (the
// ideal), a grid barrier, an all-to-all counter (a counter of its own per op), a flag wait on the next CTA's block.
// Cost per boundary = (chain - ideal) / ops, the median over repetitions in which the four chains run
// interleaved in a rotating order (a clock change or another process on the GPU shifts all four alike), after
// a warm-up. The chains are timed by the GPU's own clock inside the kernel, so a launch's host overhead is not
// in them.
//
// The kernel is built like a SuperKernel: its text through the target's recipe (nvcc for cuda, the host
// compiler against the simulator's headers for cuda-sim), keyed and kept in the cache, so a prepared cache
// (scripts/gpu-prepare.sh) holds it and a lent GPU spends no time compiling. The build uses the session's cache
// and the target's toolchain (Backend::calibrateSync's CalibrationContext), so `--cache-dir`, a read-only cache
// and the compiler the session found all hold for it as for a SuperKernel.
//
// cuda-sim runs the same text in the simulator: its numbers are the simulator's (host threads polling host
// memory), not a GPU's. It is calibrated so the whole path (build, load, run, the arithmetic, the cache file,
// the plans that read it) is tested without a GPU; its `source` says so.
#include "backends/cuda/CudaCalibrate.h"

#include <algorithm>
#include <cmath>
#include <string>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "superkernel/driver/Deadline.h"
#include "superkernel/driver/Driver.h"
#include "superkernel/support/Paths.h"
#include "support/Fd.h"
#include "support/Untrusted.h"
#include "backends/cuda/CudaBackend.h"

namespace sk {
namespace {
namespace cudacal {  // named: this folder's files are built as one unity source

namespace fs = std::filesystem;

// The chain: CTA size, floats per op and CTA (in and out), ops, repetitions.
struct Shape {
  uint32_t threads;      // per CTA
  uint32_t slice;        // floats per op and CTA, read and written
  size_t maxBytes;       // x and y together at most this (more ops evict more)
  uint32_t minOps, maxOps;
  int reps;              // interleaved repetitions after kWarmup
};
// A GPU: the builtins' 256-thread CTA, 8 KiB slices (the cpu calibration's); 1 GiB of buffers is 496 ops on
// 132 SMs, 20 times an H100's or H200's 50 MB L2, so every op reads and writes lines no earlier op left there.
constexpr Shape kGpu{256, 2048, size_t{1} << 30, 64, 1000, 31};
// The simulator: one warp per CTA and 1 KiB slices (its CUDA threads are fibers on a host thread: a 256-thread
// CTA would spend the time switching them), 64 ops, 31 repetitions: under a second on 2 host cores.
constexpr Shape kSim{32, 256, size_t{64} << 20, 64, 64, 31};
constexpr int kWarmup = 2;
// Trust limits beyond SyncChains.h's: no boundary costs more than the planner accepts from a calibration file
// (src/session/SyncCalibration.cpp: 10 ms).
constexpr double kMaxNs = 1e7;

enum Kind : uint32_t { kIdeal, kBarrier, kCounter, kFlag, kKinds };  // sync_calibration.cu's SK_CAL_*
constexpr const char* kKindNames[kKinds] = {"ideal", "barrier", "counter", "flag"};

// The calibration kernel's source: the shape's two macros, then the runtime file as it is (#line keeps its
// diagnostics on its own lines).
Expected<std::string> kernelSource(const Shape& s) {
  const fs::path file = dataRuntimeDir() / "cuda" / "calibration" / "sync_calibration.cu";
  auto body = detail::readFileBytes(file);
  if (!body)
    return ioError(fmt::format("sync calibration: {} (the cuda runtime's data files: reinstall superkernel, or set "
                               "SK_DATA_DIR to the directory holding runtime/)",
                               body.error().message()));
  return fmt::format("// superkernel sync calibration: {} threads per CTA, {} floats per op and CTA\n"
                     "#define SK_CAL_THREADS {}\n#define SK_CAL_SLICE {}u\n#line 1 \"{}\"\n",
                     s.threads, s.slice, s.threads, s.slice, file.filename().string()) +
         *body;
}

// Builds (or takes from the cache) the kernel with the target's own recipe and toolchain, as the session builds
// a SuperKernel, and loads it on `device`. A disk entry whose bytes do not load is discarded and built again.
Expected<std::shared_ptr<const LoadedKernel>> loadKernel(Device& device, const CalibrationContext& context,
                                                         bool simulator, const Shape& s) {
  SK_ASSIGN_OR_RETURN(std::string text, kernelSource(s));
  std::shared_ptr<const BuildRecipe> recipe = simulator ? makeCudaSimRecipe() : makeCudaRecipe();
  // Session::calibrateSync always passes both; a caller that does not is a bug, not a fallback to guess for.
  if (!context.toolchain || !context.cache)
    return internalError("sync calibration: called without the session's toolchain and cache");
  const std::shared_ptr<Cache>& cache = context.cache;
  DriverConfig cfg;
  cfg.jobs = 1;
  cfg.timeout = compileLimits().perCompile;
  cfg.arch = "native";                  // the GPU found, else sm_90: what a plan with the default arch builds for
  cfg.sourceEncodesPlanOptions = true;  // the text is the whole kernel: no plan options to key
  Driver driver(recipe, *context.toolchain, cache, cfg);
  const SuperKernelSource source{text};
  const std::string meta = R"j({"what": "sync calibration kernel (src/backends/cuda/CudaCalibrate.cpp)"})j";
  auto art = driver.buildSuperKernel(source, {}, Options{}, meta);
  if (!art) return std::move(art).error().context("sync calibration: building its kernel");
  auto kernel = device.load(*art->artifact);
  if (!kernel && art->artifact->origin == Artifact::Origin::Disk) {
    cache->discard(art->key, kernel.error().message());
    art = driver.buildSuperKernel(source, {}, Options{}, meta);
    if (!art) return std::move(art).error().context("sync calibration: building its kernel");
    kernel = device.load(*art->artifact);
  }
  if (!kernel) return std::move(kernel).error().context("sync calibration: loading its kernel");
  return kernel;
}

// The device buffers of one calibration, released with it.
class Buffers {
 public:
  explicit Buffers(Device& d) : device_(d) {}
  ~Buffers() {
    for (void* p : ptrs_) device_.release(p);
  }
  Buffers(const Buffers&) = delete;
  Buffers& operator=(const Buffers&) = delete;
  Expected<void*> add(size_t bytes) {
    SK_ASSIGN_OR_RETURN(void* p, device_.allocate(bytes));
    ptrs_.push_back(p);
    return p;
  }
  void* const* data() const { return ptrs_.data(); }
  uint32_t size() const { return static_cast<uint32_t>(ptrs_.size()); }

 private:
  Device& device_;
  std::vector<void*> ptrs_;
};

// Fills `bytes` of device memory at `dst` with copies of `pattern` (bounded host memory for a 512 MiB buffer).
Status fill(Device& d, void* dst, size_t bytes, const std::vector<char>& pattern) {
  for (size_t off = 0; off < bytes; off += pattern.size())
    SK_RETURN_IF_ERROR(d.upload(static_cast<char*>(dst) + off, pattern.data(), std::min(pattern.size(), bytes - off)));
  return Status::success();
}

struct Run {
  Device& device;
  const LoadedKernel& kernel;
  Buffers& buffers;
  void* ctlDevice;
  uint32_t ctas = 0, ops = 0;
  uint64_t launches = 0;
  uint64_t epoch[kKinds] = {};
  std::vector<unsigned long long> ctl;  // sync_calibration.cu's ctl words

  // One chain of `kind`: its time from the first CTA's start to the last one's end.
  Expected<double> chain(Kind kind) {
    std::fill(ctl.begin(), ctl.end(), 0ull);
    ctl[0] = kind;
    ctl[1] = ++epoch[kind];
    ctl[2] = ++launches;
    ctl[3] = ops;
    const size_t bytes = ctl.size() * sizeof ctl[0];
    void* stream = device.defaultStream();
    auto what = [&] { return fmt::format("sync calibration: the {} chain on {} CTAs", kKindNames[kind], ctas); };
    if (Status st = device.upload(ctlDevice, ctl.data(), bytes); !st) return std::move(st).error().context(what());
    if (Status st = device.run(kernel, ctas, stream, buffers.data(), buffers.size()); !st)
      return std::move(st).error().context(what());
    if (Status st = device.synchronize(stream); !st) return std::move(st).error().context(what());
    if (Status st = device.download(ctl.data(), ctlDevice, bytes); !st) return std::move(st).error().context(what());
    unsigned long long first = ~0ull, last = 0;
    for (uint32_t c = 0; c < ctas; ++c) {
      const unsigned long long start = ctl[4 + 2 * c], end = ctl[5 + 2 * c];
      if (start == 0 || end < start)
        return internalError(fmt::format("{}: CTA {} recorded no chain (start {}, end {} ns)", what(), c, start, end));
      first = std::min(first, start);
      last = std::max(last, end);
    }
    return static_cast<double>(last - first);
  }
};

Expected<CudaSyncTimes> measure(Run& r, const Shape& s, bool simulator) {
  CudaSyncTimes t;
  t.boundaries = r.ops;
  t.ctas = r.ctas;
  t.simulator = simulator;
  std::vector<double>* samples[kKinds] = {&t.ideal, &t.barrier, &t.counter, &t.flag};
  for (int rep = 0; rep < kWarmup + s.reps; ++rep) {
    for (uint32_t j = 0; j < kKinds; ++j) {
      const Kind kind = static_cast<Kind>((j + static_cast<uint32_t>(rep)) % kKinds);
      SK_ASSIGN_OR_RETURN(double ns, r.chain(kind));
      if (rep >= kWarmup) samples[kind]->push_back(ns);
    }
  }
  return t;
}

Expected<SyncCosts> costsFromTimes(const CudaSyncTimes& t);

Expected<SyncCosts> calibrate(Device& device, const CalibrationContext& context, bool simulator) {
  const Shape& s = simulator ? kSim : kGpu;
  const uint32_t ctas = device.machine().deviceCores();
  if (ctas < 2)
    return badInput(fmt::format(
        "sync calibration needs at least 2 CTAs ({} has {}): with one, every edge is local and there is nothing to "
        "measure{}",
        device.target(), ctas, simulator ? "; set SK_CUDA_SIM_SMS to 2 or more" : ""));
  SK_ASSIGN_OR_RETURN(std::shared_ptr<const LoadedKernel> kernel, loadKernel(device, context, simulator, s));

  const uint32_t ops = static_cast<uint32_t>(std::clamp<size_t>(
      s.maxBytes / (size_t{ctas} * s.slice * 2 * sizeof(float)), s.minOps, s.maxOps));
  const size_t dataBytes = size_t{ops} * ctas * s.slice * sizeof(float);
  const size_t syncBytes = (2 + size_t{ops} + size_t{ops} * ctas) * sizeof(unsigned long long);
  const size_t ctlWords = 4 + 2 * size_t{ctas};
  Buffers buffers(device);  // x, y, sync, ctl: sync_calibration.cu's order
  SK_ASSIGN_OR_RETURN(void* x, buffers.add(dataBytes));
  SK_ASSIGN_OR_RETURN(void* y, buffers.add(dataBytes));
  SK_ASSIGN_OR_RETURN(void* syncWords, buffers.add(syncBytes));
  SK_ASSIGN_OR_RETURN(void* ctl, buffers.add(ctlWords * sizeof(unsigned long long)));
  {
    std::vector<float> ones(size_t{1} << 20, 1.0f);  // 4 MiB at a time
    std::vector<char> pattern(reinterpret_cast<const char*>(ones.data()),
                              reinterpret_cast<const char*>(ones.data() + ones.size()));
    SK_RETURN_IF_ERROR(fill(device, x, dataBytes, pattern));
    std::fill(pattern.begin(), pattern.end(), 0);
    SK_RETURN_IF_ERROR(fill(device, y, dataBytes, pattern));
    SK_RETURN_IF_ERROR(fill(device, syncWords, syncBytes, pattern));  // zeroed once: every target grows with an epoch
  }
  Run r{device, *kernel, buffers, ctl, ctas, ops, 0, {}, std::vector<unsigned long long>(ctlWords, 0)};
  spdlog::info("sync calibration on {}: {} CTAs of {} threads, {} ops per chain, {} repetitions{}", device.target(),
               ctas, s.threads, ops, s.reps,
               simulator ? " (the simulator: its costs describe host threads, not a GPU)" : "");

  return measureUntilTrusted([&] { return measure(r, s, simulator); }, costsFromTimes);
}

Expected<SyncCosts> costsFromTimes(const CudaSyncTimes& t) {
  SyncChainJudgement j;
  j.where = t.simulator ? fmt::format("in the cuda simulator on {} CTAs", t.ctas) : fmt::format("on {} CTAs", t.ctas);
  j.busy = t.simulator ? "nothing was saved. The host was busy with other work: run sk-compile --calibrate --target "
                         "cuda-sim again when it is idle"
                       : "nothing was saved. Another process was using the GPU, or its clocks changed: run sk-compile "
                         "--calibrate --target cuda again when it is idle";
  j.cores = "SMs";
  j.maxNs = kMaxNs;
  SK_ASSIGN_OR_RETURN(SyncCosts c, syncCostsFromChains(t, j));
  c.source = t.simulator
                 ? fmt::format("measured in the cuda simulator on {} CTAs: the simulator's host threads, not a GPU", t.ctas)
                 : fmt::format("measured on {} CTAs of the GPU", t.ctas);
  return c;
}

}  // namespace cudacal
}  // namespace

Expected<SyncCosts> calibrateCudaSync(Device& device, const CalibrationContext& context, bool simulator) {
  return cudacal::calibrate(device, context, simulator);
}

Expected<SyncCosts> cudaSyncCostsFromTimes(const CudaSyncTimes& t) { return cudacal::costsFromTimes(t); }

}  // namespace sk
