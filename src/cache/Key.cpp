#include "superkernel/cache/Key.h"

#include <algorithm>
#include <fstream>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "superkernel/support/Paths.h"
#include "support/Fd.h"

namespace sk {
namespace fs = std::filesystem;

struct KeyBuilder::Impl {
  Sha256 sha;
  void field(std::string_view tag, std::string_view bytes) {
    auto len = [&](uint64_t n) {
      unsigned char le[8];
      for (int i = 0; i < 8; ++i) le[i] = static_cast<unsigned char>(n >> (8 * i));
      sha.update(le, 8);
    };
    len(tag.size());
    sha.update(tag.data(), tag.size());
    len(bytes.size());
    sha.update(bytes.data(), bytes.size());
  }
};

KeyBuilder::KeyBuilder() : impl_(std::make_unique<Impl>()) {
  add("schema", uint64_t{kCacheKeySchemaVersion});
  add("library", libraryVersion());
}
KeyBuilder::~KeyBuilder() = default;
KeyBuilder::KeyBuilder(KeyBuilder&&) noexcept = default;
KeyBuilder& KeyBuilder::operator=(KeyBuilder&&) noexcept = default;

KeyBuilder& KeyBuilder::add(std::string_view tag, std::string_view bytes) {
  impl_->field(tag, bytes);
  return *this;
}

KeyBuilder& KeyBuilder::add(std::string_view tag, uint64_t value) {
  return add(tag, std::string_view(std::to_string(value)));
}

Status KeyBuilder::addFile(std::string_view tag, const fs::path& file) {
  SK_ASSIGN_OR_RETURN(std::string data, detail::readFileBytes(file));
  add(tag, data);
  return Status::success();
}

Status KeyBuilder::addTree(std::string_view tag, const fs::path& dir) {
  std::error_code ec;
  std::vector<fs::path> files;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file(ec)) files.push_back(it->path().lexically_relative(dir));
  }
  if (ec) return ioError(fmt::format("cannot list {}: {}", dir.string(), ec.message()));
  std::sort(files.begin(), files.end());
  add(std::string(tag) + ":count", uint64_t{files.size()});
  for (const auto& rel : files) {
    SK_RETURN_IF_ERROR(addFile(std::string(tag) + ":" + rel.generic_string(), dir / rel));
  }
  return Status::success();
}

std::string KeyBuilder::finish() {
  return impl_->sha.hexDigest();
}

bool isValidCacheKey(std::string_view key) {
  if (key.size() != 64) return false;
  return std::all_of(key.begin(), key.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

}  // namespace sk
