// Cache keys (DESIGN section 6, normative): SHA-256 over length-prefixed,
// tagged fields. Each add() feeds  u64le(len(tag)) tag u64le(len(bytes)) bytes
// so no two different field sequences hash the same. The builder starts with
// the key schema version and the library version; callers add the target,
// arch, toolchain identity, canonical flags, every source/template byte,
// macros and options. finish() gives 64 lowercase hex digits.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "superkernel/support/Error.h"
#include "superkernel/support/Sha256.h"

namespace sk {

/// Bump when the set or meaning of key fields changes.
inline constexpr uint32_t kCacheKeySchemaVersion = 1;

class KeyBuilder {
 public:
  /// Starts with ("schema", kCacheKeySchemaVersion) and ("library", libraryVersion()).
  KeyBuilder();
  ~KeyBuilder();
  KeyBuilder(KeyBuilder&&) noexcept;
  KeyBuilder& operator=(KeyBuilder&&) noexcept;
  KeyBuilder(const KeyBuilder&) = delete;
  KeyBuilder& operator=(const KeyBuilder&) = delete;

  KeyBuilder& add(std::string_view tag, std::string_view bytes);
  KeyBuilder& add(std::string_view tag, const char* bytes) { return add(tag, std::string_view(bytes)); }
  KeyBuilder& add(std::string_view tag, uint64_t value);   // as its decimal text
  /// Hash a file's bytes under `tag` (its name is not hashed: content only).
  Status addFile(std::string_view tag, const std::filesystem::path& file);
  /// Every regular file under `dir` (recursive), sorted by relative path;
  /// each adds (tag + ":" + relative path, bytes).
  Status addTree(std::string_view tag, const std::filesystem::path& dir);

  /// The key: 64 lowercase hex digits. The builder may not be used after.
  std::string finish();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// True for 64 lowercase hex digits (what finish() produces).
bool isValidCacheKey(std::string_view key);

}  // namespace sk
