// The ascend back ends, ascend and ascend-sim, assembled, and their launch descriptor (see AscendBackend.h).
#include "backends/ascend/AscendBackend.h"
#include "backends/ascend/AscendKernelKeys.h"

#include <fmt/format.h>

#include <charconv>

#include "backends/ascend/AscendMachine.h"
#include "backends/ascend/AscendBuild.h"

namespace sk {

Backend ascendBackend() {
  Backend b;
  b.name = "ascend";
  b.kernelAttributes = ascendKernelAttributes();  // sync_all_calls
  // The part the arch names, never the device found (MachineQuery): a plan is the same with or without one.
  b.machineModel = [](const MachineQuery& q) -> Expected<MachineModel> {
    return ascend::ascendDeviceMachineModel(q.cores ? q.cores : ascend::deviceAiCoresForArch(q.arch));
  };
  b.makeEmitter = [] { return makeAscendEmitter("ascend"); };
  b.makeRecipe = [] { return makeAscendRecipe(); };
  b.makeDevice = [](const DeviceOptions& o) { return makeAscendDevice(o); };
  return b;
}

Backend ascendSimBackend() {
  Backend b;
  b.name = "ascend-sim";
  b.kernels = "ascend";
  b.machineModel = [](const MachineQuery& q) -> Expected<MachineModel> {
    return ascend::ascendMachineModel(q.cores ? q.cores : ascend::aiCoresFromEnv());
  };
  b.makeEmitter = [] { return makeAscendEmitter("ascend-sim"); };
  b.makeRecipe = [] { return makeAscendSimRecipe(); };
  b.makeDevice = [](const DeviceOptions& o) { return makeAscendSimDevice(o); };
  return b;
}

}  // namespace sk

namespace sk::ascend {

namespace {

template <typename T>
bool parseNumber(std::string_view s, T* out) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size();
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find(sep, start);
    if (end == std::string_view::npos) end = s.size();
    if (end > start) out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

bool isIdentifier(std::string_view s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return false;
  return true;
}

}  // namespace

std::string formatLaunchDescriptor(const LaunchDescriptor& d) {
  std::string s = fmt::format("entry={} type={} block_dim={} buffers={} profile_bytes={} split={}", d.entry, d.type,
                              d.blockDim, d.buffers, d.profileBytes, d.split);
  if (d.fused) s += " fused=1";
  if (d.bufferTable) s += " table=1";
  if (d.notifyWords) {
    s += fmt::format(" notify_words={} sides=", d.notifyWords);
    for (size_t i = 0; i < d.sides.size(); ++i)
      s += fmt::format("{}{}:{}:{}", i ? "," : "", d.sides[i].done, d.sides[i].first, d.sides[i].count);
  }
  if (!d.objects.empty()) {
    s += " objects=";
    for (size_t i = 0; i < d.objects.size(); ++i) s += (i ? "," : "") + d.objects[i];
  }
  if (!d.args.empty()) {
    s += " args=";
    for (size_t i = 0; i < d.args.size(); ++i) s += fmt::format("{}{}:{}", i ? "," : "", d.args[i].first, d.args[i].second);
  }
  if (!d.runtime.empty()) {
    s += " runtime=";
    for (size_t i = 0; i < d.runtime.size(); ++i)
      s += fmt::format("{}{}:{}", i ? "," : "", d.runtime[i].first, d.runtime[i].second);
  }
  if (!d.hccl.empty()) {
    s += " hccl=";
    for (size_t i = 0; i < d.hccl.size(); ++i) s += fmt::format("{}{}", i ? "," : "", d.hccl[i]);
  }
  return s;
}

Expected<LaunchDescriptor> parseLaunchDescriptor(std::string_view text) {
  LaunchDescriptor d;
  bool haveEntry = false, haveType = false;
  auto bad = [&](std::string_view what) {
    return badInput(fmt::format("ascend launch descriptor \"{}\": {}", text, what));
  };
  for (std::string_view item : split(text, ' ')) {
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos) return bad(fmt::format("'{}' is not key=value", item));
    const std::string_view k = item.substr(0, eq), v = item.substr(eq + 1);
    if (k == "entry") {
      if (!isIdentifier(v)) return bad("entry is not an identifier");
      d.entry = std::string(v);
      haveEntry = true;
    } else if (k == "type") {
      d.type = std::string(v);
      haveType = true;
    } else if (k == "block_dim") {
      if (!parseNumber(v, &d.blockDim) || d.blockDim == 0 || d.blockDim > 65535) return bad("block_dim not in 1..65535");
    } else if (k == "buffers") {
      if (!parseNumber(v, &d.buffers)) return bad("buffers is not a count");
    } else if (k == "profile_bytes") {
      if (!parseNumber(v, &d.profileBytes) || d.profileBytes > (uint64_t{1} << 32)) return bad("profile_bytes");
    } else if (k == "split") {
      if (!parseNumber(v, &d.split) || d.split < 1 || d.split > 64) return bad("split not in 1..64");
    } else if (k == "fused") {
      if (v != "0" && v != "1") return bad("fused is 0 or 1");
      d.fused = v == "1";
    } else if (k == "table") {
      if (v != "0" && v != "1") return bad("table is 0 or 1");
      d.bufferTable = v == "1";
    } else if (k == "notify_words") {
      if (!parseNumber(v, &d.notifyWords) || d.notifyWords > (1u << 20)) return bad("notify_words");
    } else if (k == "sides") {
      for (std::string_view w : split(v, ',')) {
        const std::vector<std::string_view> f = split(w, ':');
        SideWords sw;
        if (f.size() != 3 || !parseNumber(f[0], &sw.done) || !parseNumber(f[1], &sw.first) ||
            !parseNumber(f[2], &sw.count))
          return bad("sides are done:first:count");
        d.sides.push_back(sw);
      }
    } else if (k == "objects") {
      for (std::string_view o : split(v, ',')) {
        if (!isIdentifier(o)) return bad("an object symbol is not an identifier");
        d.objects.emplace_back(o);
      }
    } else if (k == "args") {
      for (std::string_view a : split(v, ',')) {
        const size_t colon = a.find(':');
        std::pair<uint32_t, uint64_t> arg;
        if (colon == std::string_view::npos || !parseNumber(a.substr(0, colon), &arg.first) ||
            !parseNumber(a.substr(colon + 1), &arg.second))
          return bad("args are buffer:byte_offset");
        d.args.push_back(arg);
      }
    } else if (k == "runtime") {
      for (std::string_view a : split(v, ',')) {
        const size_t colon = a.find(':');
        std::pair<uint32_t, uint64_t> slot;
        if (colon == std::string_view::npos || !parseNumber(a.substr(0, colon), &slot.first) ||
            !parseNumber(a.substr(colon + 1), &slot.second))
          return bad("runtime slots are buffer:byte_offset");
        d.runtime.push_back(slot);
      }
      if (d.runtime.size() > kMaxRuntimeValues) {
        return bad(fmt::format("{} runtime slots (at most {})", d.runtime.size(), kMaxRuntimeValues));
      }
    } else if (k == "hccl") {
      for (std::string_view m : split(v, ',')) {
        uint64_t mask = 0;
        if (!parseNumber(m, &mask) || mask == 0) return bad("hccl is a list of group rank masks");
        d.hccl.push_back(mask);
      }
    } else {
      return bad(fmt::format("unknown key '{}'", k));
    }
  }
  if (!haveEntry || !haveType) return bad("entry and type are required");
  for (const auto& [b, off] : d.args)
    if (b >= d.buffers) return bad(fmt::format("argument buffer {} of {}", b, d.buffers));
  for (const auto& [b, off] : d.runtime)
    if (b >= d.buffers) return bad(fmt::format("runtime slot buffer {} of {}", b, d.buffers));
  if (d.sides.empty() != (d.notifyWords == 0)) return bad("sides and notify_words come together");
  for (const SideWords& w : d.sides) {
    if (w.done >= d.notifyWords || w.first > d.notifyWords || w.count > d.notifyWords - w.first)
      return bad(fmt::format("a side launch's words lie outside the {} notify words", d.notifyWords));
  }
  return d;
}

std::vector<LaunchArg> launchArguments(const LaunchDescriptor& d) {
  using K = LaunchArg::Kind;
  std::vector<LaunchArg> args;
  if (!d.args.empty()) {
    for (const auto& [b, offset] : d.args) args.push_back({K::Buffer, b, offset});
    if (!d.hccl.empty()) args.push_back({K::Hccl, 0, 0});
    return args;
  }
  if (d.bufferTable) {
    args.push_back({K::BufferTable, 0, 0});
  } else {
    for (uint32_t b = 0; b < d.buffers; ++b) args.push_back({K::Buffer, b, 0});
  }
  if (d.notifyWords) args.push_back({K::Notify, 0, 0});
  if (!d.hccl.empty()) args.push_back({K::Hccl, 0, 0});
  if (d.profileBytes) args.push_back({K::Profile, 0, 0});
  return args;
}

std::vector<void*> fusedLaunchArguments(bool bufferTable, void* const* buffers, uint32_t n,
                                        std::vector<uint64_t>& table, void* notify, void* profile) {
  LaunchDescriptor d;
  d.bufferTable = bufferTable;
  d.buffers = n;
  d.notifyWords = notify ? 1 : 0;
  d.profileBytes = profile ? 1 : 0;
  std::vector<void*> args;
  for (const LaunchArg& a : launchArguments(d)) {
    switch (a.kind) {
      case LaunchArg::Kind::Buffer: args.push_back(buffers[a.buffer]); break;
      case LaunchArg::Kind::BufferTable:
        table.resize(n);
        for (uint32_t b = 0; b < n; ++b) table[b] = reinterpret_cast<uintptr_t>(buffers[b]);
        args.push_back(table.data());
        break;
      case LaunchArg::Kind::Notify: args.push_back(notify); break;
      case LaunchArg::Kind::Hccl: break;  // never: d has no hccl groups (the simulator runs the Hccl client itself)
      case LaunchArg::Kind::Profile: args.push_back(profile); break;
    }
  }
  return args;
}

}  // namespace sk::ascend
