// SHA-256 (OpenSSL EVP), shared by cache keys, the disk store's entry check
// and the toolchain identity.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

#include "superkernel/support/Error.h"

namespace sk {

/// Incremental hasher: update() any number of times, then hexDigest() once.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  void update(const void* data, size_t size);
  void update(std::string_view bytes) { update(bytes.data(), bytes.size()); }
  /// 64 lowercase hex digits. The hasher may not be used after.
  std::string hexDigest();

 private:
  void* ctx_;
};

/// Hex SHA-256 of bytes (lowercase, 64 digits).
std::string sha256Hex(std::string_view bytes);
/// Hex SHA-256 of a file's bytes.
Expected<std::string> sha256File(const std::filesystem::path& file);

}  // namespace sk
