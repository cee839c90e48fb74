// Worker placement: parsing SK_CPU_MASK, choosing CPUs, pinning (Placement.h).
#include "Placement.h"

#include <pthread.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>

namespace sk::rt {

namespace {

constexpr int kMaxCpu = CPU_SETSIZE;  // 1024: what a cpu_set_t holds

Error maskError(const std::string& text, const std::string& why) {
  return Error(badInput("SK_CPU_MASK='" + text + "': " + why +
                        " (expected a hex mask like 0x3, a CPU list like 0-3,8, auto or off)"));
}

// The first CPU of `cpu`'s core (its sibling list's first entry), or cpu.
int coreLeader(int cpu) {
  std::ifstream in("/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/thread_siblings_list");
  int first = cpu;
  if (in >> first) return first;
  return cpu;
}

}  // namespace

Expected<std::vector<int>> parseCpuMask(const std::string& text) {
  std::vector<int> cpus;
  if (text.empty()) return maskError(text, "empty");
  const bool hex = text.rfind("0x", 0) == 0 || text.rfind("0X", 0) == 0;
  const bool list = !hex && text.find_first_of(",-") != std::string::npos;
  if (!list) {
    // A hex bit mask (ggml style); "3" is hex too, like ggml.
    const std::string digits = hex ? text.substr(2) : text;
    if (digits.empty()) return maskError(text, "no hex digits");
    const int n = static_cast<int>(digits.size());
    for (int i = 0; i < n; ++i) {
      const char c = digits[static_cast<size_t>(n - 1 - i)];
      int v;
      if (c >= '0' && c <= '9') v = c - '0';
      else if (c >= 'a' && c <= 'f') v = c - 'a' + 10;
      else if (c >= 'A' && c <= 'F') v = c - 'A' + 10;
      else return maskError(text, std::string("'") + c + "' is not a hex digit");
      for (int b = 0; b < 4; ++b)
        if (v & (1 << b)) {
          const int cpu = 4 * i + b;
          if (cpu >= kMaxCpu) return maskError(text, "CPU " + std::to_string(cpu) + " is beyond " + std::to_string(kMaxCpu - 1));
          cpus.push_back(cpu);
        }
    }
  } else {
    size_t p = 0;
    while (p <= text.size()) {
      size_t q = text.find(',', p);
      if (q == std::string::npos) q = text.size();
      const std::string item = text.substr(p, q - p);
      if (item.empty()) return maskError(text, "empty list item");
      const size_t dash = item.find('-');
      auto num = [&](const std::string& s, int* out) -> bool {
        if (s.empty() || s.size() > 5 || s.find_first_not_of("0123456789") != std::string::npos) return false;
        *out = std::atoi(s.c_str());
        return *out < kMaxCpu;
      };
      int lo, hi;
      if (dash == std::string::npos) {
        if (!num(item, &lo)) return maskError(text, "'" + item + "' is not a CPU number below " + std::to_string(kMaxCpu));
        hi = lo;
      } else if (!num(item.substr(0, dash), &lo) || !num(item.substr(dash + 1), &hi) || hi < lo) {
        return maskError(text, "'" + item + "' is not a range lo-hi of CPU numbers");
      }
      for (int c = lo; c <= hi; ++c) cpus.push_back(c);
      p = q + 1;
    }
  }
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  if (cpus.empty()) return maskError(text, "selects no CPU");
  return cpus;
}

Placement planPlacement(uint32_t workers, const std::string& option) {
  Placement p;
  std::string mask = option;
  if (mask.empty()) {
    const char* env = std::getenv("SK_CPU_MASK");
    mask = env ? env : "";
  }
  if (mask == "off") {
    p.note = "off (SK_CPU_MASK/cpuMask)";
    return p;
  }
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) {
    p.note = std::string("not pinned: sched_getaffinity failed: ") + std::strerror(errno);
    spdlog::warn("executor placement: {}", p.note);
    return p;
  }
  std::vector<int> cpus;
  if (mask.empty() || mask == "auto") {
    for (int c = 0; c < kMaxCpu; ++c)
      if (CPU_ISSET(c, &allowed)) cpus.push_back(c);
  } else {
    auto sel = parseCpuMask(mask);
    if (!sel) {
      p.note = "not pinned: " + sel.error().message();
      spdlog::warn("executor placement: {}", p.note);
      return p;
    }
    for (int c : *sel)
      if (CPU_ISSET(c, &allowed)) cpus.push_back(c);
  }
  if (cpus.size() < workers) {
    p.note = "not pinned: " + std::to_string(workers) + " workers but " + std::to_string(cpus.size()) +
             " allowed CPU(s)";
    spdlog::debug("executor placement: {}", p.note);
    return p;
  }
  // One CPU per physical core first, then hyperthread siblings.
  std::stable_partition(cpus.begin(), cpus.end(), [](int c) { return coreLeader(c) == c; });
  cpus.resize(workers);
  p.pinned = true;
  p.cpus = cpus;
  p.note = "pinned: worker w on CPU";
  for (size_t w = 0; w < cpus.size(); ++w) p.note += (w ? "," : " ") + std::to_string(cpus[w]);
  p.note += " (worker 0 = the launching thread, moved there when found on another worker's CPU)";
  return p;
}

bool pinThisThread(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  const int rc = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
  if (rc != 0) spdlog::warn("executor placement: pinning a worker to CPU {} failed: {}", cpu, std::strerror(rc));
  return rc == 0;
}

CallerPlacement::CallerPlacement(const Placement& p, uint64_t* moves) {
  if (!p.pinned || p.cpus.size() < 2) return;
  const int here = sched_getcpu();
  if (here < 0 || here == p.cpus[0]) return;
  if (std::find(p.cpus.begin() + 1, p.cpus.end(), here) == p.cpus.end()) return;
  // Stacked on a worker's CPU: move to the launching thread's own CPU.
  CPU_ZERO(&saved_);
  if (pthread_getaffinity_np(pthread_self(), sizeof(saved_), &saved_) != 0) return;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(p.cpus[0], &one);
  if (pthread_setaffinity_np(pthread_self(), sizeof(one), &one) != 0) return;
  moved_ = true;
  if (moves) ++*moves;
}

CallerPlacement::~CallerPlacement() {
  if (moved_) (void)pthread_setaffinity_np(pthread_self(), sizeof(saved_), &saved_);
}

}  // namespace sk::rt
