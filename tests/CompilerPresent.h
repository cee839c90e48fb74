// Whether a compiler is installed, looked up independently of the driver's
// findToolchain: a test that needs a compiler skips only where it is absent,
// so a findToolchain (or Session) that fails on an installed compiler fails
// the test instead of skipping it.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>

namespace sktest {

/// `name` is an executable file (a name with a '/') or an executable on PATH.
inline bool installed(const std::string& name) {
  if (name.find('/') != std::string::npos) return ::access(name.c_str(), X_OK) == 0;
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "");
  std::string dir;
  while (std::getline(dirs, dir, ':'))
    if (!dir.empty() && ::access((std::filesystem::path(dir) / name).c_str(), X_OK) == 0) return true;
  return false;
}

/// The compiler the cpu target uses without a request: $SK_CXX, else clang++.
inline std::string defaultCompiler() {
  const char* e = std::getenv("SK_CXX");
  return e && *e ? std::string(e) : std::string("clang++");
}

}  // namespace sktest
