#include "superkernel/session/BufferSet.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>

namespace sk {
namespace fs = std::filesystem;

namespace {

constexpr size_t kAlign = 64;

// FNV-1a: a stable, platform-independent seed from the buffer's name, so the
// fused and unfused runs (and two processes) get identical random inputs.
uint64_t nameSeed(std::string_view name) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : name) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

struct SplitMix64 {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [-1, 1) with 24 random bits: exact in float.
  float unit() { return static_cast<float>(static_cast<int32_t>(next() >> 40) - (1 << 23)) / float(1 << 23); }
};

// Fill element i with a double value converted to dtype (ones, iota).
void storeValue(void* data, DType t, uint64_t i, double v) {
  switch (t) {
    case DType::F32: static_cast<float*>(data)[i] = static_cast<float>(v); break;
    case DType::F64: static_cast<double*>(data)[i] = v; break;
    case DType::F16: static_cast<uint16_t*>(data)[i] = floatToHalf(static_cast<float>(v)); break;
    case DType::BF16: static_cast<uint16_t*>(data)[i] = floatToBFloat16(static_cast<float>(v)); break;
    // Integer iota wraps modulo the type's width (defined for the unsigned cast).
    case DType::I8: static_cast<int8_t*>(data)[i] = static_cast<int8_t>(static_cast<uint8_t>(static_cast<uint64_t>(v))); break;
    case DType::I16: static_cast<int16_t*>(data)[i] = static_cast<int16_t>(static_cast<uint16_t>(static_cast<uint64_t>(v))); break;
    case DType::I32: static_cast<int32_t*>(data)[i] = static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(v))); break;
    case DType::I64: static_cast<int64_t*>(data)[i] = static_cast<int64_t>(v); break;
    case DType::U8: static_cast<uint8_t*>(data)[i] = static_cast<uint8_t>(static_cast<uint64_t>(v)); break;
    case DType::U16: static_cast<uint16_t*>(data)[i] = static_cast<uint16_t>(static_cast<uint64_t>(v)); break;
    case DType::U32: static_cast<uint32_t*>(data)[i] = static_cast<uint32_t>(static_cast<uint64_t>(v)); break;
    case DType::U64: static_cast<uint64_t*>(data)[i] = static_cast<uint64_t>(v); break;
    case DType::Bool: static_cast<bool*>(data)[i] = (static_cast<uint64_t>(v) & 1) != 0; break;
  }
}

// Random values that are safe inputs for any kernel: floats in [-1, 1),
// small integers (no overflow in sums/products of a few terms), bools 0/1.
void fillRandom(void* data, DType t, uint64_t n, uint64_t seed) {
  SplitMix64 rng{seed};
  for (uint64_t i = 0; i < n; ++i) {
    switch (t) {
      case DType::F32: static_cast<float*>(data)[i] = rng.unit(); break;
      case DType::F64: static_cast<double*>(data)[i] = rng.unit(); break;
      case DType::F16: static_cast<uint16_t*>(data)[i] = floatToHalf(rng.unit()); break;
      case DType::BF16: static_cast<uint16_t*>(data)[i] = floatToBFloat16(rng.unit()); break;
      case DType::I8: static_cast<int8_t*>(data)[i] = static_cast<int8_t>(static_cast<int>(rng.next() % 128) - 64); break;
      case DType::I16: static_cast<int16_t*>(data)[i] = static_cast<int16_t>(static_cast<int>(rng.next() % 2048) - 1024); break;
      case DType::I32: static_cast<int32_t*>(data)[i] = static_cast<int32_t>(rng.next() % 65536) - 32768; break;
      case DType::I64: static_cast<int64_t*>(data)[i] = static_cast<int64_t>(rng.next() % 65536) - 32768; break;
      case DType::U8: static_cast<uint8_t*>(data)[i] = static_cast<uint8_t>(rng.next() % 128); break;
      case DType::U16: static_cast<uint16_t*>(data)[i] = static_cast<uint16_t>(rng.next() % 2048); break;
      case DType::U32: static_cast<uint32_t*>(data)[i] = static_cast<uint32_t>(rng.next() % 65536); break;
      case DType::U64: static_cast<uint64_t*>(data)[i] = rng.next() % 65536; break;
      case DType::Bool: static_cast<bool*>(data)[i] = (rng.next() & 1) != 0; break;
    }
  }
}

bool plainFileName(std::string_view n) {
  return !n.empty() && n != "." && n != ".." && n.find('/') == std::string_view::npos &&
         n.find('\0') == std::string_view::npos;
}

}  // namespace

// ---- half / bfloat16 -------------------------------------------------------

uint16_t floatToHalf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t exp = (x >> 23) & 0xffu;
  uint32_t mant = x & 0x7fffffu;
  if (exp == 0xff) return static_cast<uint16_t>(sign | 0x7c00u | (mant ? 0x200u : 0u));  // inf / nan
  int e = static_cast<int>(exp) - 127 + 15;
  if (e >= 31) return static_cast<uint16_t>(sign | 0x7c00u);                              // overflow -> inf
  if (e <= 0) {
    if (e < -10) return static_cast<uint16_t>(sign);                                      // underflow -> 0
    mant |= 0x800000u;                                                                     // subnormal
    uint32_t shift = static_cast<uint32_t>(14 - e);
    uint32_t half = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1);
    uint32_t mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = (static_cast<uint32_t>(e) << 10) | (mant >> 13);
  uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (half & 1))) ++half;  // may carry into the exponent: correct
  return static_cast<uint16_t>(sign | half);
}

float halfToFloat(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t x;
  if (exp == 0) {
    if (mant == 0) {
      x = sign;
    } else {
      int e = -1;
      do {
        ++e;
        mant <<= 1;
      } while (!(mant & 0x400u));
      x = sign | (static_cast<uint32_t>(127 - 15 - e) << 23) | ((mant & 0x3ffu) << 13);
    }
  } else if (exp == 31) {
    x = sign | 0x7f800000u | (mant << 13);
  } else {
    x = sign | ((exp - 15 + 127) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

uint16_t floatToBFloat16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // quiet nan
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>(x >> 16);
}

float bfloat16ToFloat(uint16_t h) {
  uint32_t x = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

std::string formatElement(const void* data, DType t, uint64_t i) {
  switch (t) {
    case DType::F32: {
      float v = static_cast<const float*>(data)[i];
      uint32_t b;
      std::memcpy(&b, &v, 4);
      return fmt::format("{:.9g} (0x{:08x})", v, b);
    }
    case DType::F64: {
      double v = static_cast<const double*>(data)[i];
      uint64_t b;
      std::memcpy(&b, &v, 8);
      return fmt::format("{:.17g} (0x{:016x})", v, b);
    }
    case DType::F16: {
      uint16_t b = static_cast<const uint16_t*>(data)[i];
      return fmt::format("{:.5g} (0x{:04x})", halfToFloat(b), b);
    }
    case DType::BF16: {
      uint16_t b = static_cast<const uint16_t*>(data)[i];
      return fmt::format("{:.4g} (0x{:04x})", bfloat16ToFloat(b), b);
    }
    case DType::I8: return std::to_string(static_cast<const int8_t*>(data)[i]);
    case DType::I16: return std::to_string(static_cast<const int16_t*>(data)[i]);
    case DType::I32: return std::to_string(static_cast<const int32_t*>(data)[i]);
    case DType::I64: return std::to_string(static_cast<const int64_t*>(data)[i]);
    case DType::U8: return std::to_string(static_cast<const uint8_t*>(data)[i]);
    case DType::U16: return std::to_string(static_cast<const uint16_t*>(data)[i]);
    case DType::U32: return std::to_string(static_cast<const uint32_t*>(data)[i]);
    case DType::U64: return std::to_string(static_cast<const uint64_t*>(data)[i]);
    case DType::Bool: {
      // Read the byte: a kernel may have stored a non-0/1 value.
      uint8_t b = static_cast<const uint8_t*>(data)[i];
      return b == 0 ? "false" : b == 1 ? "true" : fmt::format("bool byte {}", b);
    }
  }
  return "?";
}

std::string BufferMismatch::message() const {
  std::string m = fmt::format("buffer {}: element {} differs: expected {}, got {}", buffer, index, expected, actual);
  if (differingBuffers > 1) m += fmt::format(" ({} buffers differ)", differingBuffers);
  return m;
}

// ---- BufferSet -------------------------------------------------------------

void BufferSet::Free::operator()(std::byte* p) const { std::free(p); }

Expected<BufferSet> BufferSet::allocate(const OpList& list) {
  BufferSet set;
  set.buffers_.reserve(list.buffers.size());
  for (const BufferDecl& d : list.buffers) {
    Buffer b;
    b.name = d.name;
    b.dtype = d.dtype;
    b.elements = d.elements();
    b.bytes = b.elements * dtypeSize(d.dtype);
    // aligned_alloc needs a multiple of the alignment; at least one line so
    // an empty buffer still has a distinct, valid pointer.
    uint64_t rounded = std::max<uint64_t>(kAlign, (b.bytes + kAlign - 1) / kAlign * kAlign);
    void* p = std::aligned_alloc(kAlign, rounded);
    if (!p) return ioError(fmt::format("out of memory allocating buffer {} ({} bytes)", d.name, b.bytes));
    std::memset(p, 0, rounded);
    b.data.reset(static_cast<std::byte*>(p));
    set.pointers_.push_back(p);
    set.buffers_.push_back(std::move(b));
  }
  return set;
}

Expected<BufferSet> BufferSet::create(const OpList& list) {
  auto set = allocate(list);
  if (!set) return set;
  SK_RETURN_IF_ERROR(set->initialize(list));
  return set;
}

Status BufferSet::initialize(const OpList& list) {
  if (list.buffers.size() != buffers_.size()) {
    return internalError("BufferSet::initialize: the op list's buffers differ from the allocated ones");
  }
  for (size_t i = 0; i < buffers_.size(); ++i) {
    const BufferDecl& d = list.buffers[i];
    Buffer& b = buffers_[i];
    switch (d.init.kind) {
      case BufferInit::Kind::Zeros:
        std::memset(b.data.get(), 0, b.bytes);
        break;
      case BufferInit::Kind::Ones:
        for (uint64_t e = 0; e < b.elements; ++e) storeValue(b.data.get(), b.dtype, e, 1.0);
        break;
      case BufferInit::Kind::Iota:
        for (uint64_t e = 0; e < b.elements; ++e) storeValue(b.data.get(), b.dtype, e, static_cast<double>(e));
        break;
      case BufferInit::Kind::Random:
        fillRandom(b.data.get(), b.dtype, b.elements, nameSeed(b.name));
        break;
      case BufferInit::Kind::File: {
        fs::path file = fs::path(d.init.file);
        if (file.is_relative()) file = list.baseDir / file;
        std::ifstream in(file, std::ios::binary | std::ios::ate);
        if (!in) return ioError(fmt::format("buffers.{}.init: cannot open {}", d.name, file.string()));
        auto size = static_cast<uint64_t>(in.tellg());
        if (size != b.bytes) {
          return badInput(fmt::format("buffers.{}.init: {} has {} bytes, the buffer needs {} ({} x {})", d.name,
                                      file.string(), size, b.bytes, b.elements, dtypeName(b.dtype)));
        }
        in.seekg(0);
        in.read(reinterpret_cast<char*>(b.data.get()), static_cast<std::streamsize>(b.bytes));
        if (!in) return ioError(fmt::format("buffers.{}.init: reading {} failed", d.name, file.string()));
        break;
      }
    }
  }
  return Status::success();
}

int BufferSet::find(std::string_view name) const {
  for (size_t i = 0; i < buffers_.size(); ++i)
    if (buffers_[i].name == name) return static_cast<int>(i);
  return -1;
}

bool BufferSet::sameLayout(const BufferSet& o) const {
  if (o.buffers_.size() != buffers_.size()) return false;
  for (size_t i = 0; i < buffers_.size(); ++i) {
    const Buffer& a = buffers_[i];
    const Buffer& b = o.buffers_[i];
    if (a.name != b.name || a.dtype != b.dtype || a.elements != b.elements) return false;
  }
  return true;
}

Status BufferSet::copyFrom(const BufferSet& other) {
  if (!sameLayout(other)) return internalError("BufferSet::copyFrom: the buffer sets have different layouts");
  for (size_t i = 0; i < buffers_.size(); ++i)
    std::memcpy(buffers_[i].data.get(), other.buffers_[i].data.get(), buffers_[i].bytes);
  return Status::success();
}

Expected<BufferSet> BufferSet::clone() const {
  BufferSet set;
  for (const Buffer& b : buffers_) {
    Buffer c;
    c.name = b.name;
    c.dtype = b.dtype;
    c.elements = b.elements;
    c.bytes = b.bytes;
    uint64_t rounded = std::max<uint64_t>(kAlign, (b.bytes + kAlign - 1) / kAlign * kAlign);
    void* p = std::aligned_alloc(kAlign, rounded);
    if (!p) return ioError(fmt::format("out of memory copying buffer {}", b.name));
    std::memcpy(p, b.data.get(), rounded);
    c.data.reset(static_cast<std::byte*>(p));
    set.pointers_.push_back(p);
    set.buffers_.push_back(std::move(c));
  }
  return set;
}

Expected<std::optional<BufferMismatch>> BufferSet::compare(const BufferSet& other,
                                                            const std::vector<std::string>& only) const {
  if (!sameLayout(other)) return internalError("BufferSet::compare: the buffer sets have different layouts");
  std::vector<bool> selected(buffers_.size(), only.empty());
  for (const std::string& n : only) {
    int i = find(n);
    if (i < 0) return badInput(fmt::format("compare: unknown buffer \"{}\"", n));
    selected[static_cast<size_t>(i)] = true;
  }
  std::optional<BufferMismatch> first;
  size_t differing = 0;
  for (size_t i = 0; i < buffers_.size(); ++i) {
    if (!selected[i]) continue;
    const Buffer& a = buffers_[i];
    const Buffer& b = other.buffers_[i];
    if (std::memcmp(a.data.get(), b.data.get(), a.bytes) == 0) continue;
    ++differing;
    if (first) continue;
    size_t es = dtypeSize(a.dtype);
    uint64_t e = 0;
    while (e < a.elements && std::memcmp(a.data.get() + e * es, b.data.get() + e * es, es) == 0) ++e;
    BufferMismatch m;
    m.buffer = a.name;
    m.index = e;
    m.expected = formatElement(a.data.get(), a.dtype, e);
    m.actual = formatElement(b.data.get(), b.dtype, e);
    first = std::move(m);
  }
  if (first) first->differingBuffers = differing;
  return first;
}

Status BufferSet::dump(const fs::path& dir) const {
  // DIR itself is created if missing, its parents never: a mistyped path
  // fails with the system's reason instead of silently growing a tree.
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    const int e = errno;
    return ioError(fmt::format("cannot create {}: {}{}", dir.string(), std::strerror(e),
                               e == ENOENT ? " (its parent directory does not exist; create it first)" : ""));
  }
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return ioError(fmt::format("cannot dump into {}: not a directory", dir.string()));
  for (const Buffer& b : buffers_) {
    if (!plainFileName(b.name)) {
      return badInput(fmt::format("buffer name \"{}\" is not a plain file name; cannot dump it", b.name));
    }
    const fs::path file = dir / (b.name + ".bin");
    const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return ioError(fmt::format("cannot write {}: {}", file.string(), std::strerror(errno)));
    const char* p = reinterpret_cast<const char*>(b.data.get());
    uint64_t left = b.bytes;
    while (left > 0) {
      const ssize_t n = ::write(fd, p, left);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        const int e = n < 0 ? errno : ENOSPC;
        ::close(fd);
        return ioError(fmt::format("writing {} failed: {}", file.string(), std::strerror(e)));
      }
      p += n;
      left -= static_cast<uint64_t>(n);
    }
    if (::close(fd) != 0) return ioError(fmt::format("writing {} failed: {}", file.string(), std::strerror(errno)));
  }
  return Status::success();
}

}  // namespace sk
