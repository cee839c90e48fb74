// The ascend device, simulated (target ascend-sim, DESIGN section 9): an artifact is a shared
// object of simulated Ascend C, loaded through ascend_sim::Module from a memfd
// holding exactly the verified bytes; run() reads the launch descriptor the
// emitter put in it and makes one ascend_sim::launch (task type, block dim,
// GM arguments). Buffers are host memory: the simulator's cores are host
// threads, GM is the process's memory.
//
// Profiling: a SuperKernel compiled with profiling=1 writes 16-byte records
// {op, kind, cycle} per core into an extra GM buffer (AscendSuperKernel.h); while
// profiling is on, run() turns each launch's records into TraceEvents, one
// track per core ("cube c", "vector v"), and takeTrace() exports them with
// the cpu target's trace writer. The simulator's cycle is nanoseconds since
// the launch began, placed on the host clock at the launch.
//
// Collectives (docs/COLLECTIVES.md, "On ascend-sim"): each rank is a process
// with its own simulated device. The collective sub-kernel's core drives the
// simulated AscendC::Hccl client, whose Wait hands the task to the simulator
// (sim_abi.h hccl_run); every launch's LaunchSpec::hccl runs it through
// DeviceOptions::communicator (the Session's) with the wait limit
// (DeviceOptions::waitTimeoutMs, else SK_WAIT_TIMEOUT_MS, else 10 s), naming
// the op from the step's op names (setLaunchContext) by the tag's low 32
// bits, FNV-1a of the op's name (plan/Collectives.cpp).
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "superkernel/ascend/Simulator.h"
#include "superkernel/runtime/Communicator.h"
#include "superkernel/runtime/Executor.h"
#include "support/Fd.h"
#include "support/CollectiveTag.h"
#include "support/HostMemory.h"
#include "backends/LaunchTrace.h"
#include "backends/ascend/AscendBackend.h"
#include "backends/ascend/AscendMachine.h"
#include "backends/ascend/AscendBuild.h"
#include "backends/ascend/AscendSimSideLaunches.h"

namespace sk {

namespace {

class AscendKernel final : public LoadedKernel {
 public:
  AscendKernel(detail::UniqueFd fd, ascend_sim::Module module, ascend::LaunchDescriptor d, void* entry,
               ascend_sim::TaskType type)
      : fd_(std::move(fd)), module_(std::move(module)), desc_(std::move(d)), entry_(entry), type_(type) {}
  const ascend_sim::Module& module() const { return module_; }
  const ascend::LaunchDescriptor& descriptor() const { return desc_; }
  void* entry() const { return entry_; }
  ascend_sim::TaskType type() const { return type_; }

 private:
  detail::UniqueFd fd_;  // the memfd the module was loaded from
  ascend_sim::Module module_;
  ascend::LaunchDescriptor desc_;
  void* entry_ = nullptr;
  ascend_sim::TaskType type_ = ascend_sim::TaskType::AivOnly;
};

Expected<std::shared_ptr<const LoadedKernel>> loadSimulated(const Artifact& a) {
  if (!a.bytes) return internalError("ascend load: an artifact without bytes");
  // The bundle's descriptor says what to launch; the shared object beside it is what the simulator loads.
  auto bundle = ascend::parseSimBundle(*a.bytes);
  if (!bundle) return std::move(bundle).error().context("SuperKernel " + a.key);
  auto d = ascend::parseLaunchDescriptor(bundle->launch);
  if (!d) return std::move(d).error().context("SuperKernel " + a.key);
  if (!d->hccl.empty()) {
    // HCCL context tables are the CANN device's: the simulator's collective kernel drives its own Hccl client.
    return badInput(fmt::format("SuperKernel {}: its entry takes HCCL contexts (hccl=), which only the CANN device "
                                "passes (a plan for target ascend?)",
                                a.key));
  }
  detail::UniqueFd fd(::memfd_create("sk-ascend-sim", MFD_CLOEXEC));
  if (!fd.valid()) return runtimeError(fmt::format("cannot load {}: memfd_create: {}", a.key, std::strerror(errno)));
  if (!detail::writeAllFd(fd.get(), bundle->object)) {
    return runtimeError(fmt::format("cannot load {}: writing the memfd: {}", a.key, std::strerror(errno)));
  }
  SK_ASSIGN_OR_RETURN(ascend_sim::Module module, ascend_sim::Module::load(fmt::format("/proc/self/fd/{}", fd.get())));
  // The entry's parameter count follows from the descriptor: checked once here, not on every run.
  const size_t params = ascend::launchArguments(*d).size();
  if (params > ascend_sim::kMaxArgs) {
    return badInput(fmt::format("SuperKernel {}: its entry takes {} arguments, the simulator passes at most {}", a.key,
                                params, ascend_sim::kMaxArgs));
  }
  // The runtime scalars' slots (parseLaunchDescriptor bounds them by ascend::kMaxRuntimeValues).
  static_assert(ascend::kMaxRuntimeValues <= SK_ASCEND_SIM_MAX_RUNTIME_VALUES);
  ascend_sim::TaskType type;
  if (!ascend_sim::parseTaskType(d->type, &type)) {
    return runtimeError(fmt::format("SuperKernel {}: unknown task type {}", a.key, d->type));
  }
  SK_ASSIGN_OR_RETURN(void* entry, module.entry(d->entry));
  return std::shared_ptr<const LoadedKernel>(
      std::make_shared<AscendKernel>(std::move(fd), std::move(module), std::move(*d), entry, type));
}

// Trace tracks: cube core c is tid c, vector core v is tid kVectorTrack + v.
constexpr uint32_t kVectorTrack = 1024;

// The records of one profiled launch (AscendSuperKernel.h: per core `slots`
// records of 16 bytes; slots the core did not write keep the 0xff fill, an
// unknown kind that ends its list).
void collectRecords(const std::vector<uint8_t>& profile, ascend_sim::TaskType type, uint32_t blockDim,
                    uint64_t launchNs, uint32_t launch, std::vector<TraceEvent>& out,
                    std::map<uint32_t, std::string>& tracks) {
  const uint32_t nAic = ascend_sim::aicCount(type, blockDim);
  const uint32_t cores = nAic + ascend_sim::aivCount(type, blockDim);
  if (cores == 0 || profile.size() % (static_cast<size_t>(cores) * 16) != 0) {
    spdlog::warn("ascend profiling: {} bytes of records do not divide among {} cores; launch {} dropped",
                   profile.size(), cores, launch);
    return;
  }
  const size_t slots = profile.size() / (static_cast<size_t>(cores) * 16);
  for (uint32_t core = 0; core < cores; ++core) {
    const bool cube = core < nAic;
    const uint32_t tid = cube ? core : kVectorTrack + (core - nAic);
    tracks.emplace(tid, cube ? fmt::format("cube {}", core) : fmt::format("vector {}", core - nAic));
    for (size_t r = 0; r < slots; ++r) {
      const uint8_t* rec = profile.data() + (core * slots + r) * 16;
      uint32_t id, kind;
      uint64_t cycle;
      std::memcpy(&id, rec, 4);
      std::memcpy(&kind, rec + 4, 4);
      std::memcpy(&cycle, rec + 8, 8);
      if (kind > SK_PROF_WAIT_END) break;
      out.push_back(TraceEvent{tid, core, kind, id, launch, launchNs + cycle});
    }
  }
}

// What the next launch on this thread is called in errors (Session::run sets it around each run() on the
// calling thread; per thread, so plans run concurrently never see each other's label).
thread_local std::string tLaunchLabel;
// The step's op names of the next launch on this thread (set with the label), which name its collectives.
thread_local const std::vector<std::string>* tOpNames = nullptr;



class AscendSimDevice final : public Device {
 public:
  explicit AscendSimDevice(const DeviceOptions& o)
      : options_(o), waitMs_(o.waitTimeoutMs ? o.waitTimeoutMs : defaultWaitTimeoutMs()) {
    machine_ = ascend::ascendMachineModel(o.cores ? o.cores : ascend::aiCoresFromEnv());
    // Test hook: hold every side launch back this long after its signal, so that a SuperKernel that reads
    // a side launch's output without waiting for it reads stale data (a wrong result, never a lucky pass).
    if (const char* v = std::getenv("SK_ASCEND_SIM_SIDE_DELAY_MS"); v && *v) {
      sideDelayMs_ = static_cast<uint32_t>(std::clamp(std::strtol(v, nullptr, 10), 0L, 60000L));
    }
  }

  std::string_view target() const override { return machine_.target; }
  const MachineModel& machine() const override { return machine_; }

  Expected<std::shared_ptr<const LoadedKernel>> load(const Artifact& a) override {
    std::lock_guard<std::mutex> g(mu_);
    if (auto k = loaded_[a.key].lock()) return k;
    SK_ASSIGN_OR_RETURN(auto k, loadSimulated(a));
    loaded_[a.key] = k;
    return k;
  }

  void* defaultStream() override { return nullptr; }

  void setLaunchContext(const std::string* label, const std::vector<std::string>* opNames) override {
    tLaunchLabel = label ? *label : std::string();
    tOpNames = opNames;
  }

  Status run(const LoadedKernel& kernel, uint32_t, void*, void* const* buffers, uint32_t numBuffers) override {
    SK_ASSIGN_OR_RETURN(const AscendKernel* k, checked(kernel, numBuffers));
    if (k->descriptor().notifyWords) {
      return badInput(fmt::format("ascend run: SuperKernel {} has launches of other streams beside it; run it with "
                                  "them (Device::runBeside)",
                                  k->descriptor().entry));
    }
    std::lock_guard<std::mutex> g(runMu_);  // launches with scratch or profiling state run one at a time
    return launchLocked(*k, buffers, numBuffers, nullptr);
  }

  // Side launches: AscendSimSideLaunches.h runs the protocol; the side launches are unfused launches (no scratch).
  Status runBeside(const LoadedKernel& kernel, uint32_t, void*, void* const* buffers, uint32_t numBuffers,
                   const std::vector<SideRun>& sides) override {
    SK_ASSIGN_OR_RETURN(const AscendKernel* k, checked(kernel, numBuffers));
    const ascend::LaunchDescriptor& d = k->descriptor();
    // A side launch is an unfused step's kernel (Session::compile links them): launched directly, no scratch.
    std::vector<ascend::SideLaunchRun> runs;
    for (const SideRun& r : sides) {
      SK_ASSIGN_OR_RETURN(const AscendKernel* side, checked(*r.kernel, r.numBuffers));
      std::string name = r.label ? *r.label : side->descriptor().entry;
      runs.push_back({name, r.stream, [this, side, buffers = r.buffers, name] {
                        return launchDirect(*side, buffers, name);
                      }});
    }
    return ascend::runWithSideLaunches(
        d.notifyWords, d.sides, tLaunchLabel.empty() ? d.entry : tLaunchLabel,
        [&](void* notify) {
          std::lock_guard<std::mutex> g(runMu_);
          // The side launches' numbers follow the SuperKernel's, as their steps follow its step.
          return launchLocked(*k, buffers, numBuffers, notify, 1 + static_cast<uint32_t>(sides.size()));
        },
        runs, std::chrono::milliseconds(sideDelayMs_));
  }

  Status setProfiling(bool on) override {
    trace_.setOn(on);
    return Status::success();
  }

  Expected<std::string> takeTrace(const std::vector<std::vector<std::string>>& opNamesByLaunch) override {
    return trace_.take(opNamesByLaunch);
  }

  // Buffers are host memory, allocated and copied as on every host-memory device (support/HostMemory.h).
  Expected<void*> allocate(size_t bytes) override { return hostAllocate(bytes); }
  void release(void* buffer) override { hostRelease(buffer); }
  Status upload(void* dst, const void* src, size_t bytes) override { return hostCopy(dst, src, bytes); }
  Status download(void* dst, const void* src, size_t bytes) override { return hostCopy(dst, src, bytes); }

 private:
  Expected<const AscendKernel*> checked(const LoadedKernel& kernel, uint32_t numBuffers) const {
    const auto* k = dynamic_cast<const AscendKernel*>(&kernel);
    if (!k) return internalError("ascend run: not a kernel this device loaded");
    if (numBuffers != k->descriptor().buffers) {
      return badInput(fmt::format("ascend run: {} buffer(s) given, {} takes {}", numBuffers, k->descriptor().entry,
                                  k->descriptor().buffers));
    }
    return k;
  }

  // `buffers`: the run's buffers, which the runtime scalars' slots point into (a fixed array in the spec:
  // no allocation per run).
  ascend_sim::LaunchSpec specOf(const AscendKernel& k, std::string name, void* const* buffers) const {
    ascend_sim::LaunchSpec spec;
    spec.type = k.type();
    spec.blockDim = k.descriptor().blockDim;
    // The device's cores of the launch's kind: a single-core-type launch with more blocks runs them in waves,
    // a SuperKernel (mix) with more is refused. Block dims count AI Cores, vector cores for AIV launches.
    const bool vectorDim = spec.type == ascend_sim::TaskType::AivOnly || spec.type == ascend_sim::TaskType::MixAiv1_0;
    spec.residentBlocks = vectorDim ? machine_.pools[1].count : machine_.pools[0].count;
    spec.entry = k.entry();
    spec.enter = k.module().enter();
    spec.name = std::move(name);
    const auto& runtime = k.descriptor().runtime;  // at most kMaxRuntimeValues (checked at load)
    for (size_t i = 0; i < runtime.size(); ++i)
      spec.runtimeValues[i] = static_cast<const uint8_t*>(buffers[runtime[i].first]) + runtime[i].second;
    spec.numRuntimeValues = static_cast<uint32_t>(runtime.size());
    if (options_.runTimeoutMs) spec.watchdog = std::chrono::milliseconds(options_.runTimeoutMs);
    // The launch's Hccl tasks run over this device's communicator, named from the step's op names (the session
    // sets them on this thread just before run() and keeps them until it returns).
    spec.hccl = [this, names = tOpNames](const sk_ascend_sim_hccl_task& t, const std::function<bool()>& stop) {
      return runCollective(t, names, stop);
    };
    return spec;
  }

  static std::vector<void*> directArguments(const AscendKernel& k, void* const* buffers) {
    std::vector<void*> args;
    for (const auto& [b, offset] : k.descriptor().args) args.push_back(static_cast<uint8_t*>(buffers[b]) + offset);
    return args;
  }

  // An unfused launch: its arguments come from the descriptor, no scratch, so it may run beside another.
  Status launchDirect(const AscendKernel& k, void* const* buffers, const std::string& name) const {
    ascend_sim::LaunchSpec spec = specOf(k, name, buffers);
    spec.args = directArguments(k, buffers);
    return ascend_sim::launch(spec);
  }

  // runMu_ held. `notify`: the side launches' words (a SuperKernel with side launches), else null. `numbers`:
  // the trace's launch numbers this launch takes (its own and its side launches').
  Status launchLocked(const AscendKernel& k, void* const* buffers, uint32_t numBuffers, void* notify,
                      uint32_t numbers = 1) {
    const ascend::LaunchDescriptor& d = k.descriptor();
    ascend_sim::LaunchSpec spec = specOf(k, tLaunchLabel.empty() ? d.entry : tLaunchLabel, buffers);
    const std::optional<uint32_t> launch = trace_.nextLaunch(numbers);
    const bool record = launch && d.profileBytes;
    // The profile buffer and the buffer table are kept between runs (runs are serialised by runMu_).
    std::vector<uint8_t>& profile = profileScratch_;
    if (d.args.empty()) {
      if (record) {
        profile.assign(d.profileBytes, 0xff);  // 0xff: an unwritten record (kind ~0)
      } else if (profile.size() < d.profileBytes) {
        profile.resize(d.profileBytes);  // written and never read
      }
      spec.args = ascend::fusedLaunchArguments(d.bufferTable, buffers, numBuffers, tableScratch_, notify,
                                               d.profileBytes ? profile.data() : nullptr);
    } else {
      spec.args = directArguments(k, buffers);
    }
    const uint64_t launchNs = record ? steadyClockNs() : 0;
    Status st = ascend_sim::launch(spec);
    // A failed launch's records are kept: its unfinished slices show where it stopped.
    if (record) {
      std::vector<TraceEvent> events;
      std::map<uint32_t, std::string> tracks;
      collectRecords(profile, spec.type, spec.blockDim, launchNs, *launch, events, tracks);
      trace_.add(std::move(events), tracks);
    }
    return st;
  }

  std::string runCollective(const sk_ascend_sim_hccl_task& t, const std::vector<std::string>* names,
                            const std::function<bool()>& stop) const {
    const std::string op = collectiveOpName(t.tag, names);
    if (!options_.communicator)
      return "collective op " + op +
             ": this ascend-sim device has no communicator (run the step through a Session created with "
             "SessionOptions::communicator, e.g. sk::mpiCommunicator(), or sk-compile under mpirun)";
    const sk_collective_args args{t.in, t.out, t.n_in, t.n_out, t.desc, t.ranks, t.tag};
    Status s = options_.communicator->run(args, op, waitMs_, stop);
    return s ? std::string() : s.error().message();
  }

  DeviceOptions options_;
  uint32_t waitMs_;
  MachineModel machine_;
  uint32_t sideDelayMs_ = 0;
  std::mutex mu_, runMu_;
  std::map<std::string, std::weak_ptr<const LoadedKernel>> loaded_;
  // Launch scratch, guarded by runMu_.
  std::vector<uint8_t> profileScratch_;
  std::vector<uint64_t> tableScratch_;
  LaunchTrace trace_;
};

}  // namespace

Expected<std::unique_ptr<Device>> makeAscendSimDevice(const DeviceOptions& options) {
  return std::unique_ptr<Device>(std::make_unique<AscendSimDevice>(options));
}

}  // namespace sk
