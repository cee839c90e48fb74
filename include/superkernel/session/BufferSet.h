// Host buffers for an op list: allocation (64-byte aligned), initialization
// per BufferDecl::init, copy, bit-exact comparison and dumping. What
// sk-compile --run and the end-to-end tests execute fused and unfused plans on.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "superkernel/frontend/OpList.h"
#include "superkernel/support/Error.h"

namespace sk {

/// The first difference between two buffer sets (compare()).
struct BufferMismatch {
  std::string buffer;                      // its name
  uint64_t index = 0;                      // first differing element
  std::string expected, actual;            // both values, formatted per dtype (with bits for floats)
  size_t differingBuffers = 0;             // how many buffers differ in total
  std::string message() const;             // "buffer out: element 17 differs: 1.5 (0x3fc00000) vs ..."
};

class BufferSet {
 public:
  BufferSet() = default;
  BufferSet(BufferSet&&) noexcept = default;
  BufferSet& operator=(BufferSet&&) noexcept = default;
  BufferSet(const BufferSet&) = delete;
  BufferSet& operator=(const BufferSet&) = delete;

  /// One zeroed, 64-byte aligned allocation per buffer of `list`, in its order.
  static Expected<BufferSet> allocate(const OpList& list);
  /// allocate() + initialize().
  static Expected<BufferSet> create(const OpList& list);

  /// Fill every buffer per its init: zeros, ones, random (seeded by the
  /// buffer's name, so every BufferSet of one list starts identical), iota
  /// (element i = i in the dtype), or a raw little-endian file relative to
  /// list.baseDir whose size must equal the buffer's bytes.
  Status initialize(const OpList& list);

  size_t size() const { return buffers_.size(); }
  const std::string& name(size_t i) const { return buffers_[i].name; }
  DType dtype(size_t i) const { return buffers_[i].dtype; }
  uint64_t elements(size_t i) const { return buffers_[i].elements; }
  uint64_t bytes(size_t i) const { return buffers_[i].bytes; }
  void* data(size_t i) { return buffers_[i].data.get(); }
  const void* data(size_t i) const { return buffers_[i].data.get(); }
  /// Index of `name`, -1 if absent.
  int find(std::string_view name) const;
  /// Base pointers in list order (stable for the set's lifetime).
  void* const* pointers() const { return pointers_.data(); }

  /// Same names, dtypes and sizes (what copyFrom/compare require).
  bool sameLayout(const BufferSet& other) const;
  /// Copy every buffer's bytes from `other` (same layout).
  Status copyFrom(const BufferSet& other);
  /// A deep copy.
  Expected<BufferSet> clone() const;

  /// Bit-exact comparison of every buffer (or only those named in `only`,
  /// when non-empty): nullopt when equal, else the first difference (in
  /// list order). An error when the layouts differ or `only` names an
  /// unknown buffer.
  Expected<std::optional<BufferMismatch>> compare(const BufferSet& other,
                                                  const std::vector<std::string>& only = {}) const;

  /// Write each buffer to DIR/<name>.bin (raw little-endian). Names that are
  /// not plain file names (a '/', "..") are rejected.
  Status dump(const std::filesystem::path& dir) const;

 private:
  struct Free {
    void operator()(std::byte* p) const;
  };
  struct Buffer {
    std::string name;
    DType dtype = DType::F32;
    uint64_t elements = 0;
    uint64_t bytes = 0;
    std::unique_ptr<std::byte[], Free> data;
  };
  std::vector<Buffer> buffers_;
  std::vector<void*> pointers_;
};

/// Format element `index` of a buffer of `dtype` for messages ("1.5 (0x3fc00000)", "-3", "true").
std::string formatElement(const void* data, DType dtype, uint64_t index);
/// IEEE half / bfloat16 from float (round to nearest even): what iota/ones use.
uint16_t floatToHalf(float f);
uint16_t floatToBFloat16(float f);
float halfToFloat(uint16_t h);
float bfloat16ToFloat(uint16_t h);

}  // namespace sk
