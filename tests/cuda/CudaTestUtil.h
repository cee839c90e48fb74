// Shared by the cuda tests: where nvcc is (the recipe's lookup: SK_NVCC,
// PATH, /usr/local/cuda/bin/nvcc) and the golden-file check.
#pragma once

#include "GoldenFile.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>

namespace sk::cudatest {
namespace fs = std::filesystem;

inline std::string readFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// nvcc's path, or "" when there is none (tests that need it skip).
inline std::string findNvcc() {
  if (const char* e = std::getenv("SK_NVCC"); e && *e) return ::access(e, X_OK) == 0 ? std::string(e) : std::string();
  if (const char* path = std::getenv("PATH")) {
    std::stringstream ss(path);
    std::string dir;
    while (std::getline(ss, dir, ':'))
      if (!dir.empty() && ::access((fs::path(dir) / "nvcc").c_str(), X_OK) == 0) return (fs::path(dir) / "nvcc").string();
  }
  return ::access("/usr/local/cuda/bin/nvcc", X_OK) == 0 ? std::string("/usr/local/cuda/bin/nvcc") : std::string();
}

#define SK_REQUIRE_NVCC(var)                                                                                      \
  const std::string var = ::sk::cudatest::findNvcc();                                                             \
  if (var.empty())                                                                                                \
    GTEST_SKIP() << "nvcc not found (SK_NVCC, PATH, /usr/local/cuda/bin/nvcc): the cuda compile checks need it"

/// A scratch directory removed with the object; `tag` names the suite.
struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& tag) {
    path = fs::temp_directory_path() / ("sk-cuda-" + tag + "-" + std::to_string(::getpid()) + "-" +
                                        std::to_string(reinterpret_cast<uintptr_t>(this)));
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
};

/// An example op list of the source tree, e.g. example("decode_layer/decode_layer.json").
inline std::string example(const char* rel) { return (fs::path(SK_SOURCE_ROOT) / "examples" / rel).string(); }

inline fs::path goldenDir() { return fs::path(SK_SOURCE_ROOT) / "tests" / "cuda" / "golden"; }

/// Compare `text` with tests/cuda/golden/<name> (tests/GoldenFile.h).
inline void checkGolden(const std::string& name, const std::string& text) {
  sktest::checkGoldenFile(goldenDir(), name, text, "scripts/regen-cuda-goldens.sh");
}

}  // namespace sk::cudatest
