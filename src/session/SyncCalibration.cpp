#include "session/SyncCalibration.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>
#include <sstream>

#include "superkernel/plan/Plan.h"
#include "superkernel/support/Log.h"
#include "superkernel/target/Backend.h"

namespace sk {

namespace {

namespace fs = std::filesystem;
constexpr int kVersion = 1;
// A boundary that costs more than 10 ms is a typo or a broken measurement, not a machine.
constexpr double kMaxNs = 1e7;
constexpr const char* kEnvForm = "barrier=<ns>,counter=<ns>,flag=<ns>, e.g. barrier=340,counter=400,flag=380";

bool plausible(double ns) { return std::isfinite(ns) && ns > 0 && ns <= kMaxNs; }

// "barrier=340,counter=400,flag=380": every key once, each a positive number of nanoseconds.
Expected<SyncCosts> parseEnv(std::string_view text) {
  auto bad = [&](const std::string& why) {
    return badInput(fmt::format("SK_SYNC_COSTS=\"{}\": {} (expected {}; unset it to use the calibration or the "
                                "defaults)", text, why, kEnvForm));
  };
  SyncCosts c;
  std::stringstream in{std::string(text)};
  std::string item;
  while (std::getline(in, item, ',')) {
    const size_t eq = item.find('=');
    if (eq == std::string::npos) return bad("item \"" + item + "\" has no '='");
    const std::string key = item.substr(0, eq), value = item.substr(eq + 1);
    double* slot = key == "barrier" ? &c.barrierNs : key == "counter" ? &c.counterNs : key == "flag" ? &c.flagNs : nullptr;
    if (!slot) return bad("unknown key \"" + key + "\"");
    if (*slot != 0) return bad("key \"" + key + "\" given twice");
    char* end = nullptr;
    const double v = value.empty() ? 0 : std::strtod(value.c_str(), &end);
    if (value.empty() || *end != '\0' || !plausible(v)) return bad("\"" + key + "\" is not a number of ns in (0, 1e7]");
    *slot = v;
  }
  if (!c.known()) return bad("barrier, counter and flag are all needed");
  c.source = "$SK_SYNC_COSTS";
  return c;
}

std::string hostName() {
  char buf[256] = {};
  return ::gethostname(buf, sizeof buf - 1) == 0 ? std::string(buf) : std::string();
}

}  // namespace

fs::path syncCalibrationFile(const fs::path& root, std::string_view target, uint32_t cores) {
  return root / "calibration" / fmt::format("{}-{}.json", target, cores);
}

Expected<SyncCosts> syncCostsFor(const SyncCosts& model, const fs::path& root, std::string_view target, uint32_t cores,
                                 std::vector<std::string>& warnings) {
  // A target without a cost model takes no costs from anywhere: one with neither defaults nor a calibration
  // (ascend: its emitter picks its own pool-wide syncs). One that can be calibrated but has no defaults (cuda:
  // no GPU measured yet gives numbers worth planning with) takes a calibration or $SK_SYNC_COSTS, else stays
  // without costs, so its plans change only once costs exist.
  if (!model.known()) {
    auto backend = findBackend(target);
    if (!backend || !(*backend)->calibrateSync) return model;
  }
  if (const char* env = std::getenv("SK_SYNC_COSTS"); env && *env) return parseEnv(env);
  if (root.empty()) return model;
  const fs::path file = syncCalibrationFile(root, target, cores);
  std::error_code ec;
  if (!fs::exists(file, ec)) return model;
  auto fallback = [&](const std::string& why) {
    std::string w = fmt::format("sync calibration {}: {}; planning with {} instead (sk-compile --calibrate "
                                "measures this machine again)", file.string(), why, describeSyncCosts(model));
    spdlog::warn("{}", w);
    warnings.push_back(std::move(w));
    return model;
  };
  std::ifstream in(file);
  if (!in) return fallback("cannot be read");
  nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return fallback("is not JSON");
  auto num = [&](const char* k) { return j.contains(k) && j[k].is_number() ? j[k].get<double>() : -1.0; };
  if (!j.contains("version") || j["version"] != kVersion) return fallback("has another format version");
  SyncCosts c;
  c.barrierNs = num("barrier_ns");
  c.counterNs = num("counter_ns");
  c.flagNs = num("flag_ns");
  if (!plausible(c.barrierNs) || !plausible(c.counterNs) || !plausible(c.flagNs))
    return fallback("barrier_ns, counter_ns and flag_ns must be numbers of ns in (0, 1e7]");
  const std::string host = j.value("host", "");
  if (!host.empty() && host != hostName())
    return fallback("was measured on host " + host + ", not this one (" + hostName() + ")");
  c.source = "calibrated, " + file.string();
  return c;
}

Status prepareSyncCalibrationDir(const fs::path& root) {
  const fs::path dir = root / "calibration";
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir))
    return ioError(fmt::format("sync calibration: cannot create {}: {}", dir.string(),
                               ec ? ec.message() : std::string("not a directory")));
  return Status::success();
}

Expected<fs::path> saveSyncCalibration(const fs::path& root, std::string_view target, uint32_t cores,
                                       const SyncCosts& costs) {
  SK_RETURN_IF_ERROR(prepareSyncCalibrationDir(root));
  const fs::path file = syncCalibrationFile(root, target, cores);
  std::error_code ec;
  nlohmann::json j = {{"version", kVersion},      {"target", target},           {"cores", cores},
                      {"barrier_ns", costs.barrierNs}, {"counter_ns", costs.counterNs}, {"flag_ns", costs.flagNs},
                      {"host", hostName()},       {"measured", costs.source}};
  const fs::path tmp = file.string() + fmt::format(".tmp{}", ::getpid());
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << j.dump(2) << "\n";
    if (!out.flush()) {
      fs::remove(tmp, ec);
      return ioError("sync calibration: cannot write " + tmp.string());
    }
  }
  if (::rename(tmp.c_str(), file.c_str()) != 0) {
    fs::remove(tmp, ec);
    return ioError("sync calibration: cannot rename " + tmp.string() + " to " + file.string());
  }
  return file;
}

}  // namespace sk
