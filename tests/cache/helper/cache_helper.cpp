// Helper process for sk_test_cache.
//   key                                   print a key over fixed fields
//   build ROOT KEY COUNTER SLEEP_MS       get-or-build KEY; the fake build
//                                         appends a line to COUNTER (flock)
//                                         and sleeps; prints "built" or "hit"
//   hang ROOT KEY MARKER                  build that writes MARKER, then sleeps
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

#include "superkernel/cache/Cache.h"

namespace fs = std::filesystem;

static std::string fixedKey() {
  sk::KeyBuilder kb;
  kb.add("target", "cpu").add("arch", "native").add("toolchain", "/usr/bin/clang++\nabc\nclang 14");
  kb.add("flags", "-O2").add("source", "int x;").add("macro:N", "4096").add("options", "early-start=1");
  return kb.finish();
}

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  std::string mode = argv[1];
  if (mode == "key") {
    std::printf("%s\n", fixedKey().c_str());
    return 0;
  }
  if ((mode == "build" && argc != 6) || (mode == "hang" && argc != 5)) return 2;
  sk::CacheConfig cfg;
  cfg.root = argv[2];
  auto cache = sk::Cache::open(cfg);
  if (!cache) {
    std::fprintf(stderr, "%s\n", cache.error().message().c_str());
    return 3;
  }
  std::string key = argv[3];
  bool built = false;
  sk::CacheRequest req;
  req.key = key;
  req.kind = "object";
  if (mode == "build") {
    std::string counter = argv[4];
    int sleepMs = std::atoi(argv[5]);
    req.build = [&built, counter, sleepMs, key](const fs::path& staging) -> sk::Expected<sk::BuildOutput> {
      built = true;
      int fd = ::open(counter.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
      ::flock(fd, LOCK_EX);
      (void)!::write(fd, "x\n", 2);
      ::flock(fd, LOCK_UN);
      ::close(fd);
      std::this_thread::sleep_for(std::chrono::milliseconds(sleepMs));
      std::ofstream(staging / "art.bin") << "payload-" << key;
      return sk::BuildOutput{"art.bin", {"fake"}, "fake", {}, {}};
    };
  } else {
    std::string marker = argv[4];
    req.build = [marker](const fs::path& staging) -> sk::Expected<sk::BuildOutput> {
      std::ofstream(staging / "partial.bin") << "half";
      std::ofstream(marker) << "started";
      std::this_thread::sleep_for(std::chrono::seconds(60));
      return sk::internalError("should have been killed");
    };
  }
  auto r = (*cache)->getOrBuild(req);
  if (!r) {
    std::fprintf(stderr, "%s\n", r.error().message().c_str());
    return 4;
  }
  if (*(*r)->bytes != "payload-" + key) return 5;
  std::printf("%s\n", built ? "built" : "hit");
  return 0;
}
