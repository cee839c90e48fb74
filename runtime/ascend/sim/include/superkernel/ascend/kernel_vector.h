// The Ascend C vector programming model for the simulator: TPipe, TQue / TQueBind, TBuf, LocalTensor,
// GlobalTensor, DataCopy / DataCopyPad between GM and the unified buffer (UB), the basic vector
// instructions on f32 / f16, SetFlag / WaitFlag with HardEvent, PipeBarrier. Included by kernel_operator.h
// (inside its hidden-visibility region); not a header of its own. Names, template parameters and
// signatures follow the public Ascend C API so a kernel written from its documentation compiles here
// unchanged; the bodies are this project's.
//
// What is modelled, and why (docs/ASCEND.md "Writing a sub-kernel" says the same for kernel authors):
//  - The UB: 192 KiB per vector core (Atlas A2 vector core), one per simulated core thread, filled with
//    0xFF bytes (NaN as f32 / f16) when the core first builds a TPipe, so a read of data nobody wrote is
//    visible as NaN rather than as a lucky zero. TPipe::InitBuffer allocates from it; an allocation past
//    the capacity fails the launch naming the sizes. Cube cores have no UB here (no L1 / L0 model).
//  - The pipes: every instruction is executed at once, in program order, on the host. What a device
//    would do concurrently is modelled as *ordering knowledge*: each pipe (S, V, MTE2, MTE3) counts the
//    instructions it issued, and knows how far each other pipe has got only through a sync that tells it
//    (SetFlag/WaitFlag, EnQue/DeQue, FreeTensor/AllocTensor, PipeBarrier<PIPE_ALL>). Every UB access is
//    checked per 32-byte block against the last writer and the last reader of each other pipe: an access
//    that no sync orders after a conflicting one (read after write, write after read or write) is the
//    race a device would run into, and fails the launch naming both pipes and the HardEvent that would
//    order them. GM written by MTE3 and read back by MTE2 or the scalar unit on the same core is checked
//    the same way. So a missing WaitFlag is an error, not a silently right answer.
//  - Queues: each buffer of a TQue is Free, Allocated, Queued or Dequeued; AllocTensor with every buffer
//    in use, EnQue past the queue depth, DeQue of an empty queue, FreeTensor twice or of a queued tensor,
//    and a LocalTensor used after its EnQue (it belongs to the queue until DeQue) or its FreeTensor are
//    errors. A TPipe ending with tensors still allocated or queued, or with a SetFlag nobody waited for,
//    is an error.
//  - Early start: a sub-kernel's own WaitPreTaskEnd must come before its first GM transfer (MTE2 copy-in,
//    MTE3 copy-out, GlobalTensor Get/SetValue) and its own SetNextTaskStart after its last: checked on the
//    TPipe alive when they are called, in fused and unfused launches alike. SetNextTaskStart<AIV_PIPE>
//    is issued on AIV_PIPE (default PIPE_MTE3): that pipe must already know every MTE2 and MTE3 transfer
//    completed, or the next sub-kernel could start while this one still moves data.
// Not modelled: timing and throughput (instructions take no time; the simulator says nothing about
// performance), bank conflicts, the level-0 mask / repeat forms of the vector instructions, the cube unit
// (L1, L0A/B/C, MTE1, Mmad, Fixpipe), atomics, and the exact reduction order of the hardware (ReduceSum
// sums each 256-byte repeat in order, then the repeats in order, in f32).
#ifndef SUPERKERNEL_ASCEND_SIM_KERNEL_VECTOR_H
#define SUPERKERNEL_ASCEND_SIM_KERNEL_VECTOR_H

#ifndef SUPERKERNEL_ASCEND_SIM_KERNEL_OPERATOR_H
#error "superkernel/ascend/kernel_vector.h is part of kernel_operator.h: include that"
#endif

// Its standard headers (math.h, string.h, stdarg.h, <exception>, <initializer_list>, <type_traits>) are
// included by kernel_operator.h before its hidden-visibility region.

// ---- scalar types the vector unit has and the host compiler may not ----------------------------------
// IEEE binary16, round to nearest even from f32 (bit arithmetic: clang on x86 may have no _Float16).
inline uint16_t sk_ascend_sim_f32_to_f16(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u | ((ax >> 13) & 0x3ffu));  // quiet NaN
  if (ax >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // inf, or rounds past 65504
  if (ax < 0x38800000u) {  // below the smallest normal half: subnormal or zero
    if (ax < 0x33000000u) return static_cast<uint16_t>(sign);  // at most half the smallest subnormal
    const uint32_t m = (ax & 0x7fffffu) | 0x800000u, shift = 126u - (ax >> 23);
    uint32_t r = m >> shift;
    const uint32_t rem = m & ((1u << shift) - 1u), halfway = 1u << (shift - 1u);
    if (rem > halfway || (rem == halfway && (r & 1u))) ++r;
    return static_cast<uint16_t>(sign | r);
  }
  uint32_t r = (ax - 0x38000000u) >> 13;  // rebias 127 -> 15
  const uint32_t rem = ax & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (r & 1u))) ++r;
  return static_cast<uint16_t>(sign | r);
}
inline float sk_ascend_sim_f16_to_f32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  uint32_t x;
  if (e == 0) {
    if (m == 0) {
      x = sign;
    } else {
      const float v = __builtin_ldexpf(static_cast<float>(m), -24);
      memcpy(&x, &v, 4);
      x |= sign;
    }
  } else if (e == 31) {
    x = sign | 0x7f800000u | (m << 13);
  } else {
    x = sign | ((e + 112u) << 23) | (m << 13);
  }
  float f;
  memcpy(&f, &x, 4);
  return f;
}
inline uint16_t sk_ascend_sim_f32_to_bf16(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // quiet NaN
  return static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}
inline float sk_ascend_sim_bf16_to_f32(uint16_t b) {
  const uint32_t x = static_cast<uint32_t>(b) << 16;
  float f;
  memcpy(&f, &x, 4);
  return f;
}

// `half` and `bfloat16_t` are types of the device compiler; here 16-bit storage converting through f32.
// Arithmetic on them is f32 arithmetic rounded once (f32 has more than twice half's precision, so +,-,*,/
// and sqrt rounded from f32 equal the correctly rounded half results).
struct half {
  uint16_t sk_bits;
  half() = default;
  template <class U, class = typename std::enable_if<std::is_arithmetic<U>::value>::type>
  half(U v) : sk_bits(sk_ascend_sim_f32_to_f16(static_cast<float>(v))) {}
  operator float() const { return sk_ascend_sim_f16_to_f32(sk_bits); }
  half& operator+=(float v) { return *this = half(float(*this) + v); }
  half& operator-=(float v) { return *this = half(float(*this) - v); }
  half& operator*=(float v) { return *this = half(float(*this) * v); }
  half& operator/=(float v) { return *this = half(float(*this) / v); }
};
struct bfloat16_t {
  uint16_t sk_bits;
  bfloat16_t() = default;
  template <class U, class = typename std::enable_if<std::is_arithmetic<U>::value>::type>
  bfloat16_t(U v) : sk_bits(sk_ascend_sim_f32_to_bf16(static_cast<float>(v))) {}
  operator float() const { return sk_ascend_sim_bf16_to_f32(sk_bits); }
};
static_assert(sizeof(half) == 2 && sizeof(bfloat16_t) == 2, "16-bit storage");

// Event ids of SetFlag / WaitFlag (global names in the CANN headers too).
enum event_t : int32_t {
  EVENT_ID0 = 0,
  EVENT_ID1 = 1,
  EVENT_ID2 = 2,
  EVENT_ID3 = 3,
  EVENT_ID4 = 4,
  EVENT_ID5 = 5,
  EVENT_ID6 = 6,
  EVENT_ID7 = 7,
};

namespace AscendC {

enum class TPosition : uint8_t {
  GM,
  A1,
  A2,
  B1,
  B2,
  C1,
  C2,
  CO1,
  CO2,
  VECIN,
  VECOUT,
  VECCALC,
  LCM = VECCALC,
  SPM,
  SHM = SPM,
  TSCM,
  C2PIPE2GM,
  C2PIPE2LOCAL,
  MAX,
};
using QuePosition = TPosition;

// Pipe-to-pipe events, named source_destination. The simulator models the vector core's pipes (S, V,
// MTE2, MTE3); an event naming a cube pipe (M, MTE1, FIX) fails the launch as not modelled.
enum class HardEvent : uint8_t {
  MTE2_MTE1,
  MTE1_MTE2,
  MTE1_M,
  M_MTE1,
  MTE2_V,
  V_MTE2,
  MTE3_V,
  V_MTE3,
  M_V,
  V_M,
  V_V,
  MTE3_MTE1,
  MTE1_MTE3,
  MTE1_V,
  MTE2_M,
  M_MTE2,
  V_MTE1,
  M_FIX,
  FIX_M,
  MTE3_MTE2,
  MTE2_MTE3,
  S_V,
  V_S,
  S_MTE2,
  MTE2_S,
  S_MTE3,
  MTE3_S,
  MTE2_FIX,
  FIX_MTE2,
  FIX_S,
  M_S,
  FIX_MTE3,
  MAX,
};
using TEventID = int8_t;

enum class RoundMode : uint8_t {
  CAST_NONE = 0,
  CAST_RINT,
  CAST_FLOOR,
  CAST_CEIL,
  CAST_ROUND,
  CAST_TRUNC,
  CAST_ODD,
};

enum class ReduceOrder : uint8_t { ORDER_VALUE_INDEX, ORDER_INDEX_VALUE, ORDER_ONLY_VALUE, ORDER_ONLY_INDEX };

class TPipe;

}  // namespace AscendC

// ---- the per-core model (internal) -----------------------------------------------------------------
namespace sk_ascend_sim_vec {

constexpr uint32_t kUbBytes = 192u * 1024u;  // unified buffer of one vector core
constexpr uint32_t kBlockBytes = 32;          // DataCopy unit and alignment of vector operands
constexpr uint32_t kUbBlocks = kUbBytes / kBlockBytes;
constexpr uint32_t kRepeatBytes = 256;  // one vector repeat: 8 blocks
constexpr int kPipes = 4;               // the modelled pipes of a vector core
enum Pipe : int { kS = 0, kV = 1, kMte2 = 2, kMte3 = 3, kNotModelled = -1 };
constexpr int kEventIds = 8;   // ids per (source, destination) pipe pair
constexpr int kMaxSlots = 64;  // buffers (queue buffers + TBufs) of one TPipe
constexpr int kMaxGmWrites = 64;

inline const char* pipeName(int p) {
  static const char* const names[kPipes] = {"S (scalar)", "V (vector)", "MTE2 (copy-in)", "MTE3 (copy-out)"};
  return p >= 0 && p < kPipes ? names[p] : "?";
}
inline const char* pipeShort(int p) {
  static const char* const names[kPipes] = {"S", "V", "MTE2", "MTE3"};
  return p >= 0 && p < kPipes ? names[p] : "?";
}

// The launch fails with the message (trap unwinds the core; it never returns).
[[noreturn]] inline void fail(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
inline void fail(const char* fmt, ...) {
  char msg[1024] = "Ascend C: ";
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg + 10, sizeof msg - 10, fmt, ap);
  va_end(ap);
  const sk_ascend_sim_core* c = sk_ascend_sim_core_now();
  c->ops->trap(c, msg);
  abort();  // trap unwinds the core with an exception; not reached
}

// What a pipe knew of every pipe when it made a sync: at[q] = the last instruction of q it is ordered after.
struct Token {
  uint32_t at[kPipes];
};

// Last accesses of one 32-byte UB block: the writing pipe and its instruction, each pipe's last read.
struct BlockUse {
  uint32_t write;
  int8_t writer;
  uint32_t read[kPipes];
};

enum class SlotState : uint8_t { Unused, Free, Allocated, Queued, Dequeued, Buf };
// Why a slot's generation last changed, so a stale LocalTensor's error says what made it stale.
enum class Stale : uint8_t { None, Enqueued, Freed, PipeEnded };

struct Slot {
  uint32_t off = 0, bytes = 0;
  uint32_t gen = 1;  // a LocalTensor holds (slot, gen); any change of ownership bumps gen
  SlotState state = SlotState::Unused;
  Stale why = Stale::None;
  Token token{};      // the sync carried by EnQue (producer) or FreeTensor (consumer)
  uint32_t order = 0;  // EnQue order, for FIFO DeQue
};

struct GmWrite {
  uintptr_t begin, end;
  uint32_t epoch;  // the MTE3 instruction
};

struct Core {
  uint8_t* ub = nullptr;
  BlockUse* blocks = nullptr;
  uint32_t epoch[kPipes] = {};
  uint32_t seen[kPipes][kPipes] = {};  // seen[p][q]: the last instruction of q that p is ordered after
  bool evSet[kPipes][kPipes][kEventIds] = {};
  Token evToken[kPipes][kPipes][kEventIds] = {};
  GmWrite gm[kMaxGmWrites] = {};
  int nGm = 0;
  Slot slots[kMaxSlots];
  int nSlots = 0;
  AscendC::TPipe* pipe = nullptr;
  Core() = default;
  Core(const Core&) = delete;
  Core& operator=(const Core&) = delete;
  ~Core() {
    delete[] ub;
    delete[] blocks;
  }
};

// One per simulated core: every core is its own thread (and a launch starts fresh threads).
inline thread_local Core tlCore;

inline Core& core() { return tlCore; }

inline bool isVectorCore() { return sk_ascend_sim_core_now()->core_type == SK_ASCEND_SIM_AIV; }

// The vector core's UB, created (and poisoned) on first use.
inline Core& vectorCore(const char* op) {
  if (!isVectorCore()) fail("%s on a cube core: the unified buffer and the vector unit are on vector cores", op);
  Core& c = core();
  if (c.ub == nullptr) {
    c.ub = new uint8_t[kUbBytes];
    memset(c.ub, 0xff, kUbBytes);
    c.blocks = new BlockUse[kUbBlocks]();
  }
  return c;
}

inline uint32_t issue(Core& c, int p) {
  const uint32_t e = ++c.epoch[p];
  c.seen[p][p] = e;
  return e;
}

inline Token snapshot(const Core& c, int p) {
  Token t;
  for (int q = 0; q < kPipes; ++q) t.at[q] = c.seen[p][q];
  t.at[p] = c.epoch[p];
  return t;
}

inline void learn(Core& c, int p, const Token& t) {
  for (int q = 0; q < kPipes; ++q)
    if (t.at[q] > c.seen[p][q]) c.seen[p][q] = t.at[q];
}

// PipeBarrier<PIPE_ALL>: every pipe waits for every other.
inline void barrierAll(Core& c) {
  for (int p = 0; p < kPipes; ++p)
    for (int q = 0; q < kPipes; ++q) c.seen[p][q] = c.epoch[q];
  c.nGm = 0;
}

// The HardEvent that orders `later` after `earlier`, for messages.
inline const char* eventName(int earlier, int later) {
  static const char* const names[kPipes][kPipes] = {
      {"S_S", "S_V", "S_MTE2", "S_MTE3"},
      {"V_S", "V_V", "V_MTE2", "V_MTE3"},
      {"MTE2_S", "MTE2_V", "MTE2_MTE2", "MTE2_MTE3"},
      {"MTE3_S", "MTE3_V", "MTE3_MTE2", "MTE3_MTE3"},
  };
  return names[earlier][later];
}

// Pipe p (instruction e) accesses UB bytes [off, off + bytes): conflicts with an access of another pipe
// that p is not ordered after are races.
inline void accessUb(Core& c, int p, uint32_t e, uint32_t off, uint32_t bytes, bool write, const char* op) {
  if (bytes == 0) return;
  const uint32_t first = off / kBlockBytes, last = (off + bytes - 1) / kBlockBytes;
  for (uint32_t b = first; b <= last; ++b) {
    BlockUse& u = c.blocks[b];
    if (u.write != 0 && u.writer != p && c.seen[p][u.writer] < u.write) {
      fail("%s: the %s pipe %s UB bytes [%u, %u) that the %s pipe wrote, with no sync ordering it after that write "
           "(SetFlag/WaitFlag<HardEvent::%s>, EnQue/DeQue or PipeBarrier<PIPE_ALL>): on a device this races",
           op, pipeName(p), write ? "overwrites" : "reads", b * kBlockBytes, (b + 1) * kBlockBytes,
           pipeName(u.writer), eventName(u.writer, p));
    }
    if (write) {
      for (int q = 0; q < kPipes; ++q) {
        if (q != p && u.read[q] > c.seen[p][q]) {
          fail("%s: the %s pipe overwrites UB bytes [%u, %u) that the %s pipe reads, with no sync ordering the "
               "write after that read (SetFlag/WaitFlag<HardEvent::%s>, FreeTensor/AllocTensor or "
               "PipeBarrier<PIPE_ALL>): on a device this races",
               op, pipeName(p), b * kBlockBytes, (b + 1) * kBlockBytes, pipeName(q), eventName(q, p));
        }
      }
      u.write = e;
      u.writer = static_cast<int8_t>(p);
    } else {
      u.read[p] = e;
    }
  }
}

// GM bytes [begin, end) read by pipe p (MTE2 or S): a copy-out of this core over them must be ordered first.
inline void readGm(Core& c, int p, const void* addr, uint64_t bytes, const char* op) {
  const uintptr_t b = reinterpret_cast<uintptr_t>(addr), e = b + bytes;
  for (int i = 0; i < c.nGm; ++i) {
    const GmWrite& w = c.gm[i];
    if (w.begin < e && b < w.end && c.seen[p][kMte3] < w.epoch) {
      fail("%s: the %s pipe reads GM this core's MTE3 copy-out writes, with no sync ordering the read after it "
           "(SetFlag/WaitFlag<HardEvent::%s> or PipeBarrier<PIPE_ALL>): on a device it may read the old data",
           op, pipeName(p), eventName(kMte3, p));
    }
  }
}

inline void wroteGm(Core& c, const void* addr, uint64_t bytes, uint32_t e) {
  const uintptr_t b = reinterpret_cast<uintptr_t>(addr);
  if (c.nGm == kMaxGmWrites) {
    // Keep the writes some reader is not yet ordered after; when all are, drop the oldest (less checking,
    // never a false error).
    int k = 0;
    for (int i = 0; i < c.nGm; ++i)
      if (c.seen[kMte2][kMte3] < c.gm[i].epoch || c.seen[kS][kMte3] < c.gm[i].epoch) c.gm[k++] = c.gm[i];
    if (k == c.nGm) {
      for (int i = 1; i < c.nGm; ++i) c.gm[i - 1] = c.gm[i];
      --k;
    }
    c.nGm = k;
  }
  c.gm[c.nGm++] = GmWrite{b, b + bytes, e};
}

// A HardEvent's (source, destination) pipes; kNotModelled for the cube's.
inline void eventPipes(AscendC::HardEvent ev, int* src, int* dst) {
  using H = AscendC::HardEvent;
  *src = *dst = kNotModelled;
  switch (ev) {
    case H::MTE2_V: *src = kMte2, *dst = kV; break;
    case H::V_MTE2: *src = kV, *dst = kMte2; break;
    case H::MTE3_V: *src = kMte3, *dst = kV; break;
    case H::V_MTE3: *src = kV, *dst = kMte3; break;
    case H::V_V: *src = kV, *dst = kV; break;
    case H::MTE3_MTE2: *src = kMte3, *dst = kMte2; break;
    case H::MTE2_MTE3: *src = kMte2, *dst = kMte3; break;
    case H::S_V: *src = kS, *dst = kV; break;
    case H::V_S: *src = kV, *dst = kS; break;
    case H::S_MTE2: *src = kS, *dst = kMte2; break;
    case H::MTE2_S: *src = kMte2, *dst = kS; break;
    case H::S_MTE3: *src = kS, *dst = kMte3; break;
    case H::MTE3_S: *src = kMte3, *dst = kS; break;
    default: break;
  }
}

inline void setFlag(AscendC::HardEvent ev, int32_t id, const char* api) {
  int src, dst;
  eventPipes(ev, &src, &dst);
  if (src == kNotModelled) fail("%s: HardEvent %d names a cube pipe (M, MTE1, FIX), which the simulator does not model", api, static_cast<int>(ev));
  if (id < 0 || id >= kEventIds) fail("%s<HardEvent::%s>(%d): event ids are 0..%d", api, eventName(src, dst), id, kEventIds - 1);
  Core& c = vectorCore(api);
  if (c.evSet[src][dst][id]) {
    fail("%s<HardEvent::%s>(%d) while the previous set of that event was not yet waited for: on a device the "
         "second set is lost or stalls",
         api, eventName(src, dst), id);
  }
  issue(c, src);  // the set is an instruction of the source pipe, after its earlier ones
  c.evSet[src][dst][id] = true;
  c.evToken[src][dst][id] = snapshot(c, src);
}

inline void waitFlag(AscendC::HardEvent ev, int32_t id, const char* api) {
  int src, dst;
  eventPipes(ev, &src, &dst);
  if (src == kNotModelled) fail("%s: HardEvent %d names a cube pipe (M, MTE1, FIX), which the simulator does not model", api, static_cast<int>(ev));
  if (id < 0 || id >= kEventIds) fail("%s<HardEvent::%s>(%d): event ids are 0..%d", api, eventName(src, dst), id, kEventIds - 1);
  Core& c = vectorCore(api);
  if (!c.evSet[src][dst][id]) {
    fail("%s<HardEvent::%s>(%d) with no SetFlag of that event before it: on a device the %s pipe waits forever",
         api, eventName(src, dst), id, pipeName(dst));
  }
  c.evSet[src][dst][id] = false;
  issue(c, dst);
  learn(c, dst, c.evToken[src][dst][id]);
}

}  // namespace sk_ascend_sim_vec

namespace AscendC {

template <class T>
class LocalTensor;
template <class T>
class GlobalTensor;
class TPipe;

}  // namespace AscendC

namespace sk_ascend_sim_vec {

// Base of TQueBind and TBuf: where their buffers are (slots of the core's table) and which pipes produce
// and consume them. Not copyable: a queue is a place, not a value.
class QueueBase {
 public:
  QueueBase(AscendC::TPosition src, AscendC::TPosition dst, int32_t depth, bool isBuf)
      : src_(src), dst_(dst), depth_(depth), isBuf_(isBuf) {}
  QueueBase(const QueueBase&) = delete;
  QueueBase& operator=(const QueueBase&) = delete;

  AscendC::TPipe* pipe_ = nullptr;  // set by TPipe::InitBuffer
  AscendC::TPosition src_, dst_;
  int32_t depth_;
  bool isBuf_;
  int first_ = 0, num_ = 0;  // slots [first_, first_ + num_)
  uint32_t len_ = 0;         // bytes per buffer
  uint32_t enqueued_ = 0, order_ = 0;
  bool registered_ = false;
};

}  // namespace sk_ascend_sim_vec

namespace AscendC {

// ---- GlobalTensor --------------------------------------------------------------------------------------
template <class T>
class GlobalTensor {
 public:
  GlobalTensor() = default;
  __aicore__ inline void SetGlobalBuffer(__gm__ T* buffer, uint64_t bufferSize) {
    addr_ = buffer;
    size_ = bufferSize;
  }
  __aicore__ inline void SetGlobalBuffer(__gm__ T* buffer) {
    addr_ = buffer;
    size_ = 0;
  }
  __aicore__ inline const __gm__ T* GetPhyAddr() const { return addr_; }
  __aicore__ inline __gm__ T* GetPhyAddr(const uint64_t offset) const { return addr_ + offset; }
  // 0 when SetGlobalBuffer was given no size (then transfers are not bounds-checked).
  __aicore__ inline uint64_t GetSize() const { return size_; }
  __aicore__ inline GlobalTensor operator[](const uint64_t offset) const {
    GlobalTensor t;
    t.addr_ = addr_ + offset;
    t.size_ = size_ == 0 ? 0 : (offset < size_ ? size_ - offset : 1);  // past the end: any use fails
    t.pastEnd_ = pastEnd_ || (size_ != 0 && offset >= size_);
    return t;
  }
  // Scalar GM access (the S pipe).
  __aicore__ inline T GetValue(const uint64_t offset) const;
  __aicore__ inline void SetValue(const uint64_t offset, const T value) const;

  // Simulator: the checked element range [0, n) of this tensor, for an operation named `op`.
  __gm__ T* skRange(uint64_t n, const char* op) const {
    if (addr_ == nullptr) sk_ascend_sim_vec::fail("%s: a GlobalTensor with no SetGlobalBuffer", op);
    if (pastEnd_ || (size_ != 0 && n > size_)) {
      sk_ascend_sim_vec::fail("%s: %llu element(s) from a GlobalTensor past its SetGlobalBuffer size", op,
                              static_cast<unsigned long long>(n));
    }
    return addr_;
  }

 private:
  __gm__ T* addr_ = nullptr;
  uint64_t size_ = 0;
  bool pastEnd_ = false;
};

// ---- LocalTensor ---------------------------------------------------------------------------------------
template <class T>
class LocalTensor {
 public:
  LocalTensor() = default;
  __aicore__ inline uint32_t GetSize() const { return size_; }
  __aicore__ inline void SetSize(const uint32_t size) {
    if (size * sizeof(T) > capBytes_) sk_ascend_sim_vec::fail("LocalTensor::SetSize(%u) past its buffer of %u bytes", size, capBytes_);
    size_ = size;
  }
  __aicore__ inline TPosition GetPosition() const { return pos_; }
  __aicore__ inline LocalTensor operator[](const uint32_t offset) const {
    if (offset > size_) sk_ascend_sim_vec::fail("LocalTensor[%u] on a tensor of %u element(s)", offset, size_);
    LocalTensor t = *this;
    t.off_ = off_ + offset * static_cast<uint32_t>(sizeof(T));
    t.size_ = size_ - offset;
    t.capBytes_ = capBytes_ - offset * static_cast<uint32_t>(sizeof(T));
    return t;
  }
  template <class U>
  __aicore__ inline LocalTensor<U> ReinterpretCast() const {
    LocalTensor<U> t;
    t.skInit(off_, capBytes_, static_cast<uint32_t>(size_ * sizeof(T) / sizeof(U)), slot_, gen_, pos_);
    return t;
  }
  // The UB address (host memory here). Accesses through it are not checked for races.
  __aicore__ inline __ubuf__ T* GetPhyAddr() const { return reinterpret_cast<T*>(skUb("GetPhyAddr") + off_); }
  __aicore__ inline __ubuf__ T* GetPhyAddr(const uint32_t offset) const { return GetPhyAddr() + offset; }
  // Scalar UB access (the S pipe): ordered after V / MTE2 writes only by a sync (e.g. HardEvent::V_S).
  __aicore__ inline T GetValue(const uint32_t index) const;
  __aicore__ inline void SetValue(const uint32_t index, const T value) const;

  // ---- simulator internals (public so the API's free functions can use them) ----
  void skInit(uint32_t off, uint32_t capBytes, uint32_t size, int slot, uint32_t gen, TPosition pos) {
    off_ = off;
    capBytes_ = capBytes;
    size_ = size;
    slot_ = slot;
    gen_ = gen;
    pos_ = pos;
  }
  uint32_t skOff() const { return off_; }
  int skSlot() const { return slot_; }
  uint32_t skGen() const { return gen_; }
  // Checks the tensor is live (its buffer still owned by whoever got this handle) and returns the UB.
  uint8_t* skUb(const char* op) const {
    using namespace sk_ascend_sim_vec;
    Core& c = vectorCore(op);
    if (slot_ < 0) fail("%s: a LocalTensor that no AllocTensor, DeQue or TBuf::Get returned", op);
    const Slot& s = c.slots[slot_];
    if (s.gen != gen_) {
      switch (s.why) {
        case Stale::Enqueued:
          fail("%s: a LocalTensor used after its EnQue (it belongs to the queue until DeQue returns it)", op);
        case Stale::Freed: fail("%s: a LocalTensor used after its FreeTensor", op);
        default: fail("%s: a LocalTensor of a TPipe that has ended", op);
      }
    }
    return c.ub;
  }
  // Checks `n` elements of this tensor exist and start 32-byte aligned (vector operands and DataCopy).
  void skNeed(uint64_t n, const char* op, const char* what) const {
    skUb(op);
    if (n > size_) {
      sk_ascend_sim_vec::fail("%s: %llu element(s) of %s, a LocalTensor of %u", op, static_cast<unsigned long long>(n),
                              what, size_);
    }
    if (off_ % sk_ascend_sim_vec::kBlockBytes != 0) {
      sk_ascend_sim_vec::fail("%s: %s starts at UB byte %u, not 32-byte aligned (the vector unit and DataCopy "
                              "address UB in 32-byte blocks)",
                              op, what, off_);
    }
  }
  T* skData() const { return reinterpret_cast<T*>(sk_ascend_sim_vec::core().ub + off_); }

 private:
  uint32_t off_ = 0, capBytes_ = 0, size_ = 0;
  int slot_ = -1;
  uint32_t gen_ = 0;
  TPosition pos_ = TPosition::VECCALC;
};

// ---- TPipe ---------------------------------------------------------------------------------------------
// One per kernel (a second one alive on the core is an error), owning the UB allocations of its queues
// and buffers. Its end is PipeBarrier<PIPE_ALL> (every pipe drained) and checks nothing was left behind.
class TPipe {
 public:
  __aicore__ inline TPipe() {
    using namespace sk_ascend_sim_vec;
    Core& c = core();
    if (c.pipe != nullptr) fail("a second TPipe while another is alive on this core (one TPipe per kernel)");
    c.pipe = this;
    c.nSlots = 0;
    if (isVectorCore()) barrierAll(vectorCore("TPipe"));
  }
  TPipe(const TPipe&) = delete;
  TPipe& operator=(const TPipe&) = delete;
  // noexcept(false): a misuse found at the end fails the launch by unwinding the core, as every error does.
  __aicore__ inline ~TPipe() noexcept(false) {
    if (std::uncaught_exceptions() > 0) {  // the core is already unwinding: just let go of the UB
      release(false);
      return;
    }
    Destroy();
  }

  // `num` buffers of `len` bytes (rounded up to 32) for a queue.
  template <class Q>
  __aicore__ inline bool InitBuffer(Q& que, uint8_t num, uint32_t len) {
    static_assert(std::is_base_of<sk_ascend_sim_vec::QueueBase, Q>::value, "InitBuffer(queue, num, len) takes a TQue");
    if (que.isBuf_) sk_ascend_sim_vec::fail("TPipe::InitBuffer(buf, num, len) on a TBuf: a TBuf takes InitBuffer(buf, len)");
    return skInit(que, num, len);
  }
  // One buffer of `len` bytes for a TBuf.
  template <class B>
  __aicore__ inline bool InitBuffer(B& buf, uint32_t len) {
    static_assert(std::is_base_of<sk_ascend_sim_vec::QueueBase, B>::value, "InitBuffer(buf, len) takes a TBuf");
    if (!buf.isBuf_) sk_ascend_sim_vec::fail("TPipe::InitBuffer(que, len) on a TQue: a queue takes InitBuffer(que, num, len)");
    return skInit(buf, 1, len);
  }

  // Releases every buffer (PipeBarrier<PIPE_ALL> first); the checks of the TPipe's end.
  __aicore__ inline void Destroy() { release(true); }
  // Frees the UB for new InitBuffer calls, like Destroy, but the TPipe stays this core's.
  __aicore__ inline void Reset() {
    release(true);
    sk_ascend_sim_vec::core().pipe = this;
  }

  template <HardEvent evt>
  __aicore__ inline TEventID AllocEventID() {
    const int k = static_cast<int>(evt);
    for (int id = 0; id < sk_ascend_sim_vec::kEventIds; ++id) {
      if (!(eventIds_[k] & (1u << id))) {
        eventIds_[k] |= 1u << id;
        return static_cast<TEventID>(id);
      }
    }
    sk_ascend_sim_vec::fail("TPipe::AllocEventID: all %d ids of HardEvent %d are allocated", sk_ascend_sim_vec::kEventIds, k);
  }
  template <HardEvent evt>
  __aicore__ inline void ReleaseEventID(TEventID id) {
    const int k = static_cast<int>(evt);
    if (id < 0 || id >= sk_ascend_sim_vec::kEventIds || !(eventIds_[k] & (1u << id))) {
      sk_ascend_sim_vec::fail("TPipe::ReleaseEventID(%d) of HardEvent %d: not allocated", id, k);
    }
    eventIds_[k] &= ~(1u << id);
  }
  // The id AllocEventID would return next, without allocating it.
  __aicore__ inline TEventID FetchEventID(HardEvent evt) {
    const int k = static_cast<int>(evt);
    for (int id = 0; id < sk_ascend_sim_vec::kEventIds; ++id)
      if (!(eventIds_[k] & (1u << id))) return static_cast<TEventID>(id);
    sk_ascend_sim_vec::fail("TPipe::FetchEventID: all %d ids of HardEvent %d are allocated", sk_ascend_sim_vec::kEventIds, k);
  }
  template <HardEvent evt>
  __aicore__ inline TEventID FetchEventID() {
    return FetchEventID(evt);
  }

  // ---- simulator internals ----
  // Early start (docs/ASCEND.md): GM transfers of this TPipe's kernel relative to its own
  // WaitPreTaskEnd / SetNextTaskStart.
  void skNoteGm(const char* op) {
    if (setNext_) {
      sk_ascend_sim_vec::fail("%s after this kernel's SetNextTaskStart: the next sub-kernel of a SuperKernel may "
                              "already run, so every GM transfer must come before it (set after the last MTE3 "
                              "copy-out)",
                              op);
    }
    gmTouched_ = true;
  }
  void skNoteWaitPre() {
    if (waitedPre_) sk_ascend_sim_vec::fail("WaitPreTaskEnd called twice in one kernel (once per core)");
    if (gmTouched_) {
      sk_ascend_sim_vec::fail("WaitPreTaskEnd after this kernel already moved GM data: in a SuperKernel the "
                              "previous sub-kernel may still be writing it, so wait before the first MTE2 copy-in");
    }
    waitedPre_ = true;
  }
  void skNoteSetNext(int onPipe) {
    using namespace sk_ascend_sim_vec;
    if (setNext_) fail("SetNextTaskStart called twice in one kernel (once per core)");
    setNext_ = true;
    if (!isVectorCore() || onPipe == kNotModelled) return;
    Core& c = vectorCore("SetNextTaskStart");
    for (const int q : {static_cast<int>(kMte2), static_cast<int>(kMte3)}) {
      if (q != onPipe && c.seen[onPipe][q] < c.epoch[q]) {
        fail("SetNextTaskStart is issued on the %s pipe, which is not ordered after this kernel's last %s "
             "transfer: on a device the next sub-kernel could start while it still runs (SetFlag/"
             "WaitFlag<HardEvent::%s> first, or the default PIPE_MTE3)",
             pipeShort(onPipe), pipeShort(q), eventName(q, onPipe));
      }
    }
  }

 private:
  bool skInit(sk_ascend_sim_vec::QueueBase& q, uint32_t num, uint32_t len) {
    using namespace sk_ascend_sim_vec;
    Core& c = vectorCore("TPipe::InitBuffer");
    if (c.pipe != this) fail("TPipe::InitBuffer on a TPipe that is not this core's (it ended)");
    if (q.pipe_ != nullptr) fail("TPipe::InitBuffer twice for one queue or TBuf");
    if (num == 0 || len == 0) fail("TPipe::InitBuffer with %u buffer(s) of %u bytes", num, len);
    const bool vec = [](TPosition p) {
      return p == TPosition::VECIN || p == TPosition::VECOUT || p == TPosition::VECCALC;
    }(q.src_) && (q.dst_ == TPosition::VECIN || q.dst_ == TPosition::VECOUT || q.dst_ == TPosition::VECCALC);
    if (!vec) fail("TPipe::InitBuffer for a queue of a cube position (A1, B1, CO1, ...): the simulator models the vector core's UB only");
    if (!q.isBuf_ && q.depth_ < 1) fail("TQue depth %d: the simulator models queues of depth 1 or more", q.depth_);
    const uint32_t bytes = (len + kBlockBytes - 1) / kBlockBytes * kBlockBytes;
    const uint64_t need = static_cast<uint64_t>(bytes) * num;
    if (used_ + need > kUbBytes) {
      fail("TPipe::InitBuffer of %u x %u bytes: the unified buffer holds %u bytes and %u are already allocated "
           "(%llu past the end)",
           num, bytes, kUbBytes, used_, static_cast<unsigned long long>(used_ + need - kUbBytes));
    }
    if (c.nSlots + static_cast<int>(num) > kMaxSlots) fail("TPipe::InitBuffer: more than %d buffers in one TPipe", kMaxSlots);
    q.pipe_ = this;
    q.first_ = c.nSlots;
    q.num_ = static_cast<int>(num);
    q.len_ = bytes;
    q.enqueued_ = 0;
    for (uint32_t i = 0; i < num; ++i) {
      Slot& s = c.slots[c.nSlots++];
      s.off = used_ + i * bytes;
      s.bytes = bytes;
      s.gen += 1;
      s.state = q.isBuf_ ? SlotState::Buf : SlotState::Free;
      s.why = Stale::None;
      s.token = Token{};
    }
    used_ += static_cast<uint32_t>(need);
    if (nQueues_ == kMaxSlots) fail("TPipe: more than %d queues and buffers", kMaxSlots);
    queues_[nQueues_++] = &q;
    q.registered_ = true;
    return true;
  }

 public:
  // A queue going away before its TPipe: checks its buffers came back, and forgets it.
  void skForget(sk_ascend_sim_vec::QueueBase& q, bool check) {
    for (int i = 0; i < nQueues_; ++i) {
      if (queues_[i] == &q) {
        queues_[i] = queues_[--nQueues_];
        break;
      }
    }
    q.registered_ = false;
    q.pipe_ = nullptr;
    if (check) {
      if (const char* what = skLeftover(q)) sk_ascend_sim_vec::fail("%s", what);
    }
  }

 private:
  // What a queue still holds (an error at its end), or nullptr.
  static const char* skLeftover(const sk_ascend_sim_vec::QueueBase& q) {
    using namespace sk_ascend_sim_vec;
    if (q.isBuf_) return nullptr;
    Core& c = core();
    for (int i = 0; i < q.num_; ++i) {
      const SlotState st = c.slots[q.first_ + i].state;
      if (st == SlotState::Queued) return "a TQue ends with a tensor still queued: an EnQue with no DeQue";
      if (st == SlotState::Allocated || st == SlotState::Dequeued) {
        return "a TQue ends with a tensor still allocated: an AllocTensor or DeQue with no FreeTensor";
      }
    }
    return nullptr;
  }

  // Ends the TPipe: every buffer released and every tensor of it stale, every pipe drained. With `check`,
  // what was left behind (a tensor in a queue, a SetFlag nobody waited for) then fails the launch.
  void release(bool check) {
    using namespace sk_ascend_sim_vec;
    Core& c = core();
    if (c.pipe != this) return;  // ended already
    const char* leftover = nullptr;
    char event[160] = "";
    for (int i = 0; i < nQueues_; ++i) {
      if (!leftover) leftover = skLeftover(*queues_[i]);
      queues_[i]->registered_ = false;
      queues_[i]->pipe_ = nullptr;
    }
    nQueues_ = 0;
    for (int i = 0; i < c.nSlots; ++i) {
      c.slots[i].gen += 1;
      c.slots[i].why = Stale::PipeEnded;
      c.slots[i].state = SlotState::Unused;
    }
    c.nSlots = 0;
    used_ = 0;
    c.pipe = nullptr;
    if (isVectorCore() && c.ub != nullptr) {
      for (int p = 0; p < kPipes; ++p)
        for (int q = 0; q < kPipes; ++q)
          for (int id = 0; id < kEventIds; ++id)
            if (c.evSet[p][q][id]) {
              c.evSet[p][q][id] = false;
              if (!event[0]) snprintf(event, sizeof event, "the kernel ends with SetFlag<HardEvent::%s>(%d) never waited for", eventName(p, q), id);
            }
      barrierAll(c);
    }
    if (check && leftover) fail("%s", leftover);
    if (check && event[0]) fail("%s", event);
  }

  uint32_t used_ = 0;
  sk_ascend_sim_vec::QueueBase* queues_[sk_ascend_sim_vec::kMaxSlots] = {};
  int nQueues_ = 0;
  uint32_t eventIds_[static_cast<int>(HardEvent::MAX)] = {};
  bool gmTouched_ = false, waitedPre_ = false, setNext_ = false;
};

__aicore__ inline TPipe* GetTPipePtr() { return sk_ascend_sim_vec::core().pipe; }

}  // namespace AscendC

namespace sk_ascend_sim_vec {

// Which pipe writes a buffer of a position and which reads it (the queue's EnQue / DeQue pair).
inline int producerOf(AscendC::TPosition p) { return p == AscendC::TPosition::VECIN ? kMte2 : kV; }
inline int consumerOf(AscendC::TPosition p) { return p == AscendC::TPosition::VECOUT ? kMte3 : kV; }

inline void noteGm(const char* op) {
  if (AscendC::TPipe* p = core().pipe) p->skNoteGm(op);
}

}  // namespace sk_ascend_sim_vec

namespace AscendC {

// ---- TQue / TQueBind / TBuf ----------------------------------------------------------------------------
// A queue between the pipe that fills its buffers (src position: VECIN by MTE2, else V) and the pipe that
// drains them (dst position: VECOUT by MTE3, else V). EnQue carries the producer's sync to DeQue;
// FreeTensor carries the consumer's to the next AllocTensor of that buffer.
template <TPosition src, TPosition dst, int32_t depth, auto mask = 0>
class TQueBind : public sk_ascend_sim_vec::QueueBase {
 public:
  __aicore__ inline TQueBind() : QueueBase(src, dst, depth, false) {}
  __aicore__ inline ~TQueBind() noexcept(false) {
    if (registered_ && pipe_ != nullptr) pipe_->skForget(*this, std::uncaught_exceptions() == 0);
  }

  template <class T>
  __aicore__ inline LocalTensor<T> AllocTensor() {
    using namespace sk_ascend_sim_vec;
    Core& c = bound("AllocTensor");
    for (int i = 0; i < num_; ++i) {
      Slot& s = c.slots[first_ + i];
      if (s.state != SlotState::Free) continue;
      s.state = SlotState::Allocated;
      s.gen += 1;
      // The producer is ordered after the consumer's use of the buffer's previous contents.
      learn(c, producerOf(src_), s.token);
      LocalTensor<T> t;
      t.skInit(s.off, s.bytes, static_cast<uint32_t>(s.bytes / sizeof(T)), first_ + i, s.gen, src);
      return t;
    }
    fail("AllocTensor: all %d buffer(s) of the queue are in use (a FreeTensor is missing; on a device this "
         "waits forever)",
         num_);
  }
  template <class T>
  __aicore__ inline void AllocTensor(LocalTensor<T>& tensor) {
    tensor = AllocTensor<T>();
  }

  template <class T>
  __aicore__ inline bool EnQue(const LocalTensor<T>& tensor) {
    using namespace sk_ascend_sim_vec;
    Core& c = bound("EnQue");
    Slot& s = owned(c, tensor, "EnQue");
    if (s.state != SlotState::Allocated) fail("EnQue of a tensor that is not freshly allocated (enqueued twice, or a DeQue'd one)");
    if (static_cast<int32_t>(enqueued_) >= depth_) {
      fail("EnQue past the queue's depth %d: %u tensor(s) are queued and not yet dequeued", depth_, enqueued_);
    }
    const int prod = producerOf(src_);
    issue(c, prod);  // SetFlag<producer_consumer>
    s.token = snapshot(c, prod);
    s.state = SlotState::Queued;
    s.gen += 1;
    s.why = Stale::Enqueued;
    s.order = ++order_;
    ++enqueued_;
    return true;
  }

  template <class T>
  __aicore__ inline LocalTensor<T> DeQue() {
    using namespace sk_ascend_sim_vec;
    Core& c = bound("DeQue");
    int best = -1;
    for (int i = 0; i < num_; ++i) {
      const Slot& s = c.slots[first_ + i];
      if (s.state == SlotState::Queued && (best < 0 || s.order < c.slots[best].order)) best = first_ + i;
    }
    if (best < 0) fail("DeQue of an empty queue: no EnQue before it (on a device this waits forever)");
    Slot& s = c.slots[best];
    const int cons = consumerOf(dst);
    issue(c, cons);  // WaitFlag<producer_consumer>
    learn(c, cons, s.token);
    s.state = SlotState::Dequeued;
    s.gen += 1;
    --enqueued_;
    LocalTensor<T> t;
    t.skInit(s.off, s.bytes, static_cast<uint32_t>(s.bytes / sizeof(T)), best, s.gen, dst);
    return t;
  }
  template <class T>
  __aicore__ inline void DeQue(LocalTensor<T>& tensor) {
    tensor = DeQue<T>();
  }

  template <class T>
  __aicore__ inline void FreeTensor(LocalTensor<T>& tensor) {
    using namespace sk_ascend_sim_vec;
    Core& c = bound("FreeTensor");
    Slot& s = owned(c, tensor, "FreeTensor");
    if (s.state == SlotState::Queued) fail("FreeTensor of a tensor still queued (EnQue without DeQue)");
    if (s.state != SlotState::Allocated && s.state != SlotState::Dequeued) fail("FreeTensor of a tensor already freed");
    // The buffer's last user: the consumer once dequeued, the producer if it never went through the queue.
    const int user = s.state == SlotState::Dequeued ? consumerOf(dst_) : producerOf(src_);
    issue(c, user);  // SetFlag<consumer_producer>
    s.token = snapshot(c, user);
    s.state = SlotState::Free;
    s.gen += 1;
    s.why = Stale::Freed;
  }

  __aicore__ inline bool HasTensorInQue() { return enqueued_ > 0; }
  __aicore__ inline int32_t GetTensorCountInQue() { return static_cast<int32_t>(enqueued_); }
  __aicore__ inline bool VacantInQue() { return static_cast<int32_t>(enqueued_) < depth_; }

 private:
  sk_ascend_sim_vec::Core& bound(const char* op) {
    sk_ascend_sim_vec::Core& c = sk_ascend_sim_vec::vectorCore(op);
    if (pipe_ == nullptr) sk_ascend_sim_vec::fail("%s on a queue with no TPipe::InitBuffer (or whose TPipe ended)", op);
    return c;
  }
  template <class T>
  sk_ascend_sim_vec::Slot& owned(sk_ascend_sim_vec::Core& c, const LocalTensor<T>& t, const char* op) {
    using namespace sk_ascend_sim_vec;
    const int k = t.skSlot();
    if (k < first_ || k >= first_ + num_) fail("%s of a tensor that is not one of this queue's buffers", op);
    Slot& s = c.slots[k];
    if (t.skOff() != s.off) fail("%s of a part of a buffer (an operator[] view): pass the tensor AllocTensor or DeQue returned", op);
    if (t.skGen() != s.gen) {
      if (s.why == Stale::Freed || s.state == SlotState::Free) fail("%s of a tensor already freed", op);
      if (s.why == Stale::Enqueued) fail("%s of a tensor already enqueued (it belongs to the queue until DeQue)", op);
      fail("%s of a stale LocalTensor", op);
    }
    return s;
  }
};

template <TPosition pos, int32_t depth, auto mask = 0>
using TQue = TQueBind<pos, pos, depth, mask>;

// A plain buffer (no queue, no automatic sync): scratch space of the vector unit.
template <TPosition pos = TPosition::VECCALC>
class TBuf : public sk_ascend_sim_vec::QueueBase {
 public:
  __aicore__ inline TBuf() : QueueBase(pos, pos, 0, true) {}
  __aicore__ inline ~TBuf() {
    if (registered_ && pipe_ != nullptr) pipe_->skForget(*this, false);
  }
  template <class T>
  __aicore__ inline LocalTensor<T> Get() {
    return Get<T>(static_cast<uint32_t>(len_ / sizeof(T)));
  }
  // The first `len` elements of the buffer.
  template <class T>
  __aicore__ inline LocalTensor<T> Get(uint32_t len) {
    using namespace sk_ascend_sim_vec;
    Core& c = vectorCore("TBuf::Get");
    if (pipe_ == nullptr) fail("TBuf::Get with no TPipe::InitBuffer (or whose TPipe ended)");
    if (len * sizeof(T) > len_) fail("TBuf::Get(%u) past the buffer's %u bytes", len, len_);
    const Slot& s = c.slots[first_];
    LocalTensor<T> t;
    t.skInit(s.off, s.bytes, len, first_, s.gen, pos);
    return t;
  }
};

// ---- scalar access --------------------------------------------------------------------------------------
template <class T>
__aicore__ inline T LocalTensor<T>::GetValue(const uint32_t index) const {
  using namespace sk_ascend_sim_vec;
  skUb("LocalTensor::GetValue");
  if (index >= size_) fail("LocalTensor::GetValue(%u) on a tensor of %u element(s)", index, size_);
  Core& c = core();
  accessUb(c, kS, issue(c, kS), off_ + index * static_cast<uint32_t>(sizeof(T)), sizeof(T), false, "LocalTensor::GetValue");
  return skData()[index];
}
template <class T>
__aicore__ inline void LocalTensor<T>::SetValue(const uint32_t index, const T value) const {
  using namespace sk_ascend_sim_vec;
  skUb("LocalTensor::SetValue");
  if (index >= size_) fail("LocalTensor::SetValue(%u) on a tensor of %u element(s)", index, size_);
  Core& c = core();
  accessUb(c, kS, issue(c, kS), off_ + index * static_cast<uint32_t>(sizeof(T)), sizeof(T), true, "LocalTensor::SetValue");
  skData()[index] = value;
}
template <class T>
__aicore__ inline T GlobalTensor<T>::GetValue(const uint64_t offset) const {
  using namespace sk_ascend_sim_vec;
  __gm__ T* p = skRange(offset + 1, "GlobalTensor::GetValue");
  noteGm("GlobalTensor::GetValue");
  if (isVectorCore() && core().ub != nullptr) {
    Core& c = core();
    issue(c, kS);
    readGm(c, kS, p + offset, sizeof(T), "GlobalTensor::GetValue");
  }
  return p[offset];
}
template <class T>
__aicore__ inline void GlobalTensor<T>::SetValue(const uint64_t offset, const T value) const {
  __gm__ T* p = skRange(offset + 1, "GlobalTensor::SetValue");
  sk_ascend_sim_vec::noteGm("GlobalTensor::SetValue");
  p[offset] = value;
}

// ---- sync --------------------------------------------------------------------------------------------
template <HardEvent event>
__aicore__ inline void SetFlag(int32_t eventID) {
  sk_ascend_sim_vec::setFlag(event, eventID, "SetFlag");
}
template <HardEvent event>
__aicore__ inline void WaitFlag(int32_t eventID) {
  sk_ascend_sim_vec::waitFlag(event, eventID, "WaitFlag");
}

// ---- DataCopy --------------------------------------------------------------------------------------------
struct DataCopyParams {
  __aicore__ DataCopyParams() {}
  __aicore__ DataCopyParams(const uint16_t count, const uint16_t len, const uint16_t srcStrideIn,
                            const uint16_t dstStrideIn)
      : blockCount(count), blockLen(len), srcStride(srcStrideIn), dstStride(dstStrideIn) {}
  uint16_t blockCount = 1;  // bursts
  uint16_t blockLen = 0;    // 32-byte blocks per burst
  union {
    uint16_t srcGap = 0;  // 32-byte blocks skipped between bursts in the source
    uint16_t srcStride;
  };
  union {
    uint16_t dstGap = 0;  // 32-byte blocks skipped between bursts in the destination
    uint16_t dstStride;
  };
};

// DataCopyPad: lengths and GM gaps in bytes; UB gaps in 32-byte blocks, each UB burst 32-byte aligned.
struct DataCopyExtParams {
  __aicore__ DataCopyExtParams() {}
  __aicore__ DataCopyExtParams(const uint16_t count, const uint32_t len, const uint32_t srcStrideIn,
                               const uint32_t dstStrideIn, const uint32_t rsvIn)
      : blockCount(count), blockLen(len), srcStride(srcStrideIn), dstStride(dstStrideIn), rsv(rsvIn) {}
  uint16_t blockCount = 1;
  uint32_t blockLen = 0;
  uint32_t srcStride = 0;
  uint32_t dstStride = 0;
  uint32_t rsv = 0;
};

template <class T>
struct DataCopyPadExtParams {
  __aicore__ DataCopyPadExtParams() {}
  __aicore__ DataCopyPadExtParams(const bool isPadValue, const uint8_t leftPadValue, const uint8_t rightPadValue,
                                  T padValue)
      : isPad(isPadValue), leftPadding(leftPadValue), rightPadding(rightPadValue), paddingValue(padValue) {}
  bool isPad = false;
  uint8_t leftPadding = 0;
  uint8_t rightPadding = 0;
  T paddingValue = T();
};

}  // namespace AscendC

namespace sk_ascend_sim_vec {

// One transfer of `bursts` bursts of `len` bytes; source and destination advance by their own pitch.
struct Bursts {
  uint32_t bursts, len, srcPitch, dstPitch;
  uint64_t srcSpan() const { return bursts == 0 ? 0 : static_cast<uint64_t>(bursts - 1) * srcPitch + len; }
  uint64_t dstSpan() const { return bursts == 0 ? 0 : static_cast<uint64_t>(bursts - 1) * dstPitch + len; }
};

template <class T>
inline void gmToUb(const AscendC::LocalTensor<T>& dst, const AscendC::GlobalTensor<T>& src, const Bursts& b,
                   uint32_t /*unused*/, const char* op) {
  if (b.bursts == 0 || b.len == 0) return;
  const uint64_t ubElems = (b.dstSpan() + sizeof(T) - 1) / sizeof(T), gmElems = (b.srcSpan() + sizeof(T) - 1) / sizeof(T);
  dst.skNeed(ubElems, op, "the destination");
  const uint8_t* g = reinterpret_cast<const uint8_t*>(src.skRange(gmElems, op));
  noteGm(op);
  Core& c = core();
  const uint32_t e = issue(c, kMte2);
  for (uint32_t i = 0; i < b.bursts; ++i) readGm(c, kMte2, g + static_cast<uint64_t>(i) * b.srcPitch, b.len, op);
  for (uint32_t i = 0; i < b.bursts; ++i) accessUb(c, kMte2, e, dst.skOff() + i * b.dstPitch, b.len, true, op);
  uint8_t* u = c.ub + dst.skOff();
  for (uint32_t i = 0; i < b.bursts; ++i) memcpy(u + static_cast<uint64_t>(i) * b.dstPitch, g + static_cast<uint64_t>(i) * b.srcPitch, b.len);
}

template <class T>
inline void ubToGm(const AscendC::GlobalTensor<T>& dst, const AscendC::LocalTensor<T>& src, const Bursts& b,
                   const char* op) {
  if (b.bursts == 0 || b.len == 0) return;
  const uint64_t ubElems = (b.srcSpan() + sizeof(T) - 1) / sizeof(T), gmElems = (b.dstSpan() + sizeof(T) - 1) / sizeof(T);
  src.skNeed(ubElems, op, "the source");
  uint8_t* g = reinterpret_cast<uint8_t*>(dst.skRange(gmElems, op));
  noteGm(op);
  Core& c = core();
  const uint32_t e = issue(c, kMte3);
  for (uint32_t i = 0; i < b.bursts; ++i) accessUb(c, kMte3, e, src.skOff() + i * b.srcPitch, b.len, false, op);
  const uint8_t* u = c.ub + src.skOff();
  for (uint32_t i = 0; i < b.bursts; ++i) {
    memcpy(g + static_cast<uint64_t>(i) * b.dstPitch, u + static_cast<uint64_t>(i) * b.srcPitch, b.len);
    wroteGm(c, g + static_cast<uint64_t>(i) * b.dstPitch, b.len, e);
  }
}

inline void alignedLength(uint64_t bytes, const char* op) {
  if (bytes % kBlockBytes != 0) {
    fail("%s of %llu bytes: DataCopy moves whole 32-byte blocks (DataCopyPad copies other lengths)", op,
         static_cast<unsigned long long>(bytes));
  }
}

}  // namespace sk_ascend_sim_vec

namespace AscendC {

// GM -> UB (MTE2), `count` elements; count * sizeof(T) a multiple of 32 bytes.
template <class T>
__aicore__ inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const uint32_t count) {
  const uint32_t bytes = count * static_cast<uint32_t>(sizeof(T));
  sk_ascend_sim_vec::alignedLength(bytes, "DataCopy (GM -> UB)");
  sk_ascend_sim_vec::gmToUb(dst, src, sk_ascend_sim_vec::Bursts{1, bytes, bytes, bytes}, 0, "DataCopy (GM -> UB)");
}
// UB -> GM (MTE3).
template <class T>
__aicore__ inline void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t count) {
  const uint32_t bytes = count * static_cast<uint32_t>(sizeof(T));
  sk_ascend_sim_vec::alignedLength(bytes, "DataCopy (UB -> GM)");
  sk_ascend_sim_vec::ubToGm(dst, src, sk_ascend_sim_vec::Bursts{1, bytes, bytes, bytes}, "DataCopy (UB -> GM)");
}
// Strided: blockCount bursts of blockLen 32-byte blocks, srcStride / dstStride blocks skipped between them.
template <class T>
__aicore__ inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyParams& p) {
  const uint32_t len = p.blockLen * sk_ascend_sim_vec::kBlockBytes;
  sk_ascend_sim_vec::gmToUb(dst, src,
                            sk_ascend_sim_vec::Bursts{p.blockCount, len, len + p.srcStride * sk_ascend_sim_vec::kBlockBytes,
                                                      len + p.dstStride * sk_ascend_sim_vec::kBlockBytes},
                            0, "DataCopy (GM -> UB, DataCopyParams)");
}
template <class T>
__aicore__ inline void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& p) {
  const uint32_t len = p.blockLen * sk_ascend_sim_vec::kBlockBytes;
  sk_ascend_sim_vec::ubToGm(dst, src,
                            sk_ascend_sim_vec::Bursts{p.blockCount, len, len + p.srcStride * sk_ascend_sim_vec::kBlockBytes,
                                                      len + p.dstStride * sk_ascend_sim_vec::kBlockBytes},
                            "DataCopy (UB -> GM, DataCopyParams)");
}
// UB -> UB, on the vector pipe.
template <class T>
__aicore__ inline void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t count) {
  using namespace sk_ascend_sim_vec;
  const char* op = "DataCopy (UB -> UB)";
  const uint32_t bytes = count * static_cast<uint32_t>(sizeof(T));
  alignedLength(bytes, op);
  dst.skNeed(count, op, "the destination");
  src.skNeed(count, op, "the source");
  Core& c = core();
  const uint32_t e = issue(c, kV);
  accessUb(c, kV, e, src.skOff(), bytes, false, op);
  accessUb(c, kV, e, dst.skOff(), bytes, true, op);
  memmove(c.ub + dst.skOff(), c.ub + src.skOff(), bytes);
}

// GM -> UB of any length: blockCount bursts of blockLen bytes, srcStride bytes skipped in GM between them;
// each burst lands 32-byte aligned in UB with dstStride blocks between bursts. With isPad, the burst's
// last 32-byte block is filled past the data with paddingValue (rightPadding elements; left padding is not
// modelled).
template <class T>
__aicore__ inline void DataCopyPad(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyExtParams& p,
                                   const DataCopyPadExtParams<T>& pad) {
  using namespace sk_ascend_sim_vec;
  const char* op = "DataCopyPad (GM -> UB)";
  if (pad.leftPadding != 0) fail("%s with leftPadding: not modelled by the simulator", op);
  const uint32_t ubLen = (p.blockLen + kBlockBytes - 1) / kBlockBytes * kBlockBytes;
  if (pad.isPad && p.blockLen + pad.rightPadding * sizeof(T) > ubLen) {
    fail("%s: rightPadding %u element(s) past the burst's last 32-byte block", op, pad.rightPadding);
  }
  const Bursts b{p.blockCount, p.blockLen, p.blockLen + p.srcStride, ubLen + p.dstStride * kBlockBytes};
  if (pad.isPad && p.blockCount > 0) dst.skNeed((b.dstSpan() - p.blockLen + ubLen) / sizeof(T), op, "the destination");
  gmToUb(dst, src, b, 0, op);
  if (pad.isPad) {
    T* u = dst.skData();
    for (uint32_t i = 0; i < p.blockCount; ++i)
      for (uint32_t k = 0; k < pad.rightPadding; ++k) u[(i * b.dstPitch + p.blockLen) / sizeof(T) + k] = pad.paddingValue;
  }
}
template <class T>
__aicore__ inline void DataCopyPad(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyExtParams& p) {
  DataCopyPad(dst, src, p, DataCopyPadExtParams<T>());
}
// UB -> GM of any length: each burst read from a 32-byte aligned UB position (srcStride blocks between
// bursts), written with dstStride bytes skipped in GM between bursts.
template <class T>
__aicore__ inline void DataCopyPad(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyExtParams& p) {
  using namespace sk_ascend_sim_vec;
  const uint32_t ubLen = (p.blockLen + kBlockBytes - 1) / kBlockBytes * kBlockBytes;
  ubToGm(dst, src, Bursts{p.blockCount, p.blockLen, ubLen + p.srcStride * kBlockBytes, p.blockLen + p.dstStride},
         "DataCopyPad (UB -> GM)");
}

}  // namespace AscendC

// ---- vector instructions (the count forms) ---------------------------------------------------------------
namespace sk_ascend_sim_vec {

template <class T>
struct Arith {
  static constexpr bool kFloat = std::is_same<T, float>::value || std::is_same<T, half>::value;
  static constexpr bool kInt = std::is_same<T, int16_t>::value || std::is_same<T, int32_t>::value;
};
// Computation type: f32 for f32 and f16 (rounded once to f16 on store), the integer itself otherwise.
template <class T>
using Wide = typename std::conditional<std::is_same<T, half>::value, float, T>::type;

template <class T>
struct NoDeduce {
  using type = T;
};

// A vector instruction: checks its operands, records its UB reads and write on the V pipe.
struct VecOp {
  Core& c;
  uint32_t e;
  const char* op;
  explicit VecOp(const char* name) : c(vectorCore(name)), e(0), op(name) {
    if (c.pipe == nullptr) fail("%s with no TPipe alive", name);
    e = issue(c, kV);
  }
  template <class T>
  T* read(const AscendC::LocalTensor<T>& t, uint64_t n, const char* what) {
    t.skNeed(n, op, what);
    accessUb(c, kV, e, t.skOff(), static_cast<uint32_t>(n * sizeof(T)), false, op);
    return t.skData();
  }
  template <class T>
  T* write(const AscendC::LocalTensor<T>& t, uint64_t n, const char* what) {
    t.skNeed(n, op, what);
    accessUb(c, kV, e, t.skOff(), static_cast<uint32_t>(n * sizeof(T)), true, op);
    return t.skData();
  }
};

inline uint32_t checkedCount(int32_t n, const char* op) {
  if (n < 0) fail("%s with count %d", op, n);
  return static_cast<uint32_t>(n);
}

template <class T, class F>
inline void binary(const char* op, const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& a,
                   const AscendC::LocalTensor<T>& b, int32_t n, F f) {
  const uint32_t k = checkedCount(n, op);
  VecOp v(op);
  const T* x = v.read(a, k, "src0");
  const T* y = v.read(b, k, "src1");
  T* d = v.write(dst, k, "dst");
  for (uint32_t i = 0; i < k; ++i) d[i] = static_cast<T>(f(static_cast<Wide<T>>(x[i]), static_cast<Wide<T>>(y[i])));
}

template <class T, class F>
inline void unary(const char* op, const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& a, int32_t n,
                  F f) {
  const uint32_t k = checkedCount(n, op);
  VecOp v(op);
  const T* x = v.read(a, k, "src");
  T* d = v.write(dst, k, "dst");
  for (uint32_t i = 0; i < k; ++i) d[i] = static_cast<T>(f(static_cast<Wide<T>>(x[i])));
}

}  // namespace sk_ascend_sim_vec

namespace AscendC {

#define SK_ASCEND_SIM_FLOAT_ONLY(T, name) \
  static_assert(sk_ascend_sim_vec::Arith<T>::kFloat, name ": float or half only")
#define SK_ASCEND_SIM_NUMERIC(T, name)                                                      \
  static_assert(sk_ascend_sim_vec::Arith<T>::kFloat || sk_ascend_sim_vec::Arith<T>::kInt, \
                name ": float, half, int16_t or int32_t")

template <class T>
__aicore__ inline void Add(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                           const int32_t& count) {
  SK_ASCEND_SIM_NUMERIC(T, "Add");
  sk_ascend_sim_vec::binary("Add", dst, src0, src1, count, [](auto a, auto b) { return a + b; });
}
template <class T>
__aicore__ inline void Sub(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                           const int32_t& count) {
  SK_ASCEND_SIM_NUMERIC(T, "Sub");
  sk_ascend_sim_vec::binary("Sub", dst, src0, src1, count, [](auto a, auto b) { return a - b; });
}
template <class T>
__aicore__ inline void Mul(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                           const int32_t& count) {
  SK_ASCEND_SIM_NUMERIC(T, "Mul");
  sk_ascend_sim_vec::binary("Mul", dst, src0, src1, count, [](auto a, auto b) { return a * b; });
}
template <class T>
__aicore__ inline void Div(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                           const int32_t& count) {
  SK_ASCEND_SIM_FLOAT_ONLY(T, "Div");
  sk_ascend_sim_vec::binary("Div", dst, src0, src1, count, [](auto a, auto b) { return a / b; });
}
template <class T>
__aicore__ inline void Max(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                           const int32_t& count) {
  SK_ASCEND_SIM_NUMERIC(T, "Max");
  sk_ascend_sim_vec::binary("Max", dst, src0, src1, count, [](auto a, auto b) { return a > b ? a : b; });
}
template <class T>
__aicore__ inline void Min(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                           const int32_t& count) {
  SK_ASCEND_SIM_NUMERIC(T, "Min");
  sk_ascend_sim_vec::binary("Min", dst, src0, src1, count, [](auto a, auto b) { return a < b ? a : b; });
}

template <class T, bool isSetMask = true>
__aicore__ inline void Adds(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                            const typename sk_ascend_sim_vec::NoDeduce<T>::type& scalarValue, const int32_t& count) {
  SK_ASCEND_SIM_NUMERIC(T, "Adds");
  const sk_ascend_sim_vec::Wide<T> s = static_cast<sk_ascend_sim_vec::Wide<T>>(scalarValue);
  sk_ascend_sim_vec::unary("Adds", dst, src, count, [s](auto a) { return a + s; });
}
template <class T, bool isSetMask = true>
__aicore__ inline void Muls(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                            const typename sk_ascend_sim_vec::NoDeduce<T>::type& scalarValue, const int32_t& count) {
  SK_ASCEND_SIM_NUMERIC(T, "Muls");
  const sk_ascend_sim_vec::Wide<T> s = static_cast<sk_ascend_sim_vec::Wide<T>>(scalarValue);
  sk_ascend_sim_vec::unary("Muls", dst, src, count, [s](auto a) { return a * s; });
}
template <class T, bool isSetMask = true>
__aicore__ inline void Maxs(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                            const typename sk_ascend_sim_vec::NoDeduce<T>::type& scalarValue, const int32_t& count) {
  SK_ASCEND_SIM_NUMERIC(T, "Maxs");
  const sk_ascend_sim_vec::Wide<T> s = static_cast<sk_ascend_sim_vec::Wide<T>>(scalarValue);
  sk_ascend_sim_vec::unary("Maxs", dst, src, count, [s](auto a) { return a > s ? a : s; });
}
template <class T, bool isSetMask = true>
__aicore__ inline void Mins(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                            const typename sk_ascend_sim_vec::NoDeduce<T>::type& scalarValue, const int32_t& count) {
  SK_ASCEND_SIM_NUMERIC(T, "Mins");
  const sk_ascend_sim_vec::Wide<T> s = static_cast<sk_ascend_sim_vec::Wide<T>>(scalarValue);
  sk_ascend_sim_vec::unary("Mins", dst, src, count, [s](auto a) { return a < s ? a : s; });
}

template <class T>
__aicore__ inline void Exp(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t& count) {
  SK_ASCEND_SIM_FLOAT_ONLY(T, "Exp");
  sk_ascend_sim_vec::unary("Exp", dst, src, count, [](float a) { return __builtin_expf(a); });
}
template <class T>
__aicore__ inline void Ln(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t& count) {
  SK_ASCEND_SIM_FLOAT_ONLY(T, "Ln");
  sk_ascend_sim_vec::unary("Ln", dst, src, count, [](float a) { return __builtin_logf(a); });
}
template <class T>
__aicore__ inline void Abs(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t& count) {
  SK_ASCEND_SIM_NUMERIC(T, "Abs");
  sk_ascend_sim_vec::unary("Abs", dst, src, count, [](auto a) { return a < 0 ? -a : a; });
}
template <class T>
__aicore__ inline void Sqrt(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t& count) {
  SK_ASCEND_SIM_FLOAT_ONLY(T, "Sqrt");
  sk_ascend_sim_vec::unary("Sqrt", dst, src, count, [](float a) { return __builtin_sqrtf(a); });
}
template <class T>
__aicore__ inline void Rsqrt(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t& count) {
  SK_ASCEND_SIM_FLOAT_ONLY(T, "Rsqrt");
  sk_ascend_sim_vec::unary("Rsqrt", dst, src, count, [](float a) { return 1.0f / __builtin_sqrtf(a); });
}
template <class T>
__aicore__ inline void Reciprocal(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t& count) {
  SK_ASCEND_SIM_FLOAT_ONLY(T, "Reciprocal");
  sk_ascend_sim_vec::unary("Reciprocal", dst, src, count, [](float a) { return 1.0f / a; });
}
template <class T>
__aicore__ inline void Relu(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t& count) {
  SK_ASCEND_SIM_NUMERIC(T, "Relu");
  sk_ascend_sim_vec::unary("Relu", dst, src, count, [](auto a) { return a > 0 ? a : decltype(a)(0); });
}

template <class T>
__aicore__ inline void Duplicate(const LocalTensor<T>& dst, const typename sk_ascend_sim_vec::NoDeduce<T>::type& scalarValue,
                                 const int32_t& count) {
  SK_ASCEND_SIM_NUMERIC(T, "Duplicate");
  const uint32_t k = sk_ascend_sim_vec::checkedCount(count, "Duplicate");
  sk_ascend_sim_vec::VecOp v("Duplicate");
  T* d = v.write(dst, k, "dst");
  for (uint32_t i = 0; i < k; ++i) d[i] = scalarValue;
}

// dst[i] = the element of src at byte offset srcBaseAddr + srcOffset[i], i < count (the vector unit's gather):
// offsets in bytes, each a whole element inside src; dst may not overlap src or srcOffset.
template <class T>
__aicore__ inline void Gather(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint32_t>& srcOffset,
                              const uint32_t srcBaseAddr, const uint32_t count) {
  static_assert(sizeof(T) == 2 || sizeof(T) == 4, "Gather: 16- or 32-bit elements");
  using namespace sk_ascend_sim_vec;
  VecOp v("Gather");
  const uint32_t* off = v.read(srcOffset, count, "srcOffset");
  const uint64_t srcBytes = static_cast<uint64_t>(src.GetSize()) * sizeof(T);
  uint64_t span = 0;  // elements of src read: up to the largest offset
  for (uint32_t i = 0; i < count; ++i) {
    const uint64_t at = static_cast<uint64_t>(srcBaseAddr) + off[i];
    if (at % sizeof(T) != 0) fail("Gather: srcOffset[%u] = %u (+ srcBaseAddr %u) is not a whole element of %u bytes", i, off[i], srcBaseAddr, static_cast<unsigned>(sizeof(T)));
    if (at >= srcBytes) fail("Gather: srcOffset[%u] = %u (+ srcBaseAddr %u) past src, a LocalTensor of %llu bytes", i, off[i], srcBaseAddr, static_cast<unsigned long long>(srcBytes));
    if (at / sizeof(T) + 1 > span) span = at / sizeof(T) + 1;
  }
  const T* x = v.read(src, span, "src");
  const uint64_t d0 = dst.skOff(), d1 = d0 + static_cast<uint64_t>(count) * sizeof(T);
  const uint64_t s0 = src.skOff(), s1 = s0 + span * sizeof(T), o0 = srcOffset.skOff(), o1 = o0 + static_cast<uint64_t>(count) * 4;
  if (count > 0 && ((d0 < s1 && s0 < d1) || (d0 < o1 && o0 < d1))) fail("Gather: dst overlaps src or srcOffset");
  T* d = v.write(dst, count, "dst");
  for (uint32_t i = 0; i < count; ++i) d[i] = x[(srcBaseAddr + off[i]) / sizeof(T)];
}

}  // namespace AscendC

namespace sk_ascend_sim_vec {

// Cast between f32 and f16 / bf16 / int32. f32 -> f16 / bf16: CAST_NONE and CAST_RINT round to nearest even
// (other modes are not modelled); to f32: exact (CAST_NONE); f32 -> int32: CAST_RINT / FLOOR / CEIL / ROUND
// (half away from zero) / TRUNC, saturating, NaN -> 0.
inline int32_t toInt(float v, AscendC::RoundMode m) {
  using M = AscendC::RoundMode;
  float r;
  switch (m) {
    case M::CAST_RINT: r = __builtin_nearbyintf(v); break;
    case M::CAST_FLOOR: r = __builtin_floorf(v); break;
    case M::CAST_CEIL: r = __builtin_ceilf(v); break;
    case M::CAST_ROUND: r = __builtin_roundf(v); break;
    case M::CAST_TRUNC: r = __builtin_truncf(v); break;
    default: fail("Cast float -> int32_t: round mode %d (RINT, FLOOR, CEIL, ROUND or TRUNC)", static_cast<int>(m));
  }
  if (r != r) return 0;
  if (r >= 2147483648.0f) return INT32_MAX;
  if (r < -2147483648.0f) return INT32_MIN;
  return static_cast<int32_t>(r);
}

template <class D, class S>
inline D castOne(S v, AscendC::RoundMode m) {
  using M = AscendC::RoundMode;
  if constexpr (std::is_same<D, float>::value) {
    static_assert(std::is_same<S, half>::value || std::is_same<S, bfloat16_t>::value || std::is_same<S, int32_t>::value,
                  "Cast to float: from half, bfloat16_t or int32_t");
    if (std::is_same<S, int32_t>::value && m != M::CAST_NONE && m != M::CAST_RINT) {
      fail("Cast int32_t -> float: round mode %d (CAST_NONE or CAST_RINT)", static_cast<int>(m));
    }
    return static_cast<float>(v);
  } else if constexpr (std::is_same<D, int32_t>::value) {
    static_assert(std::is_same<S, float>::value, "Cast to int32_t: from float");
    return toInt(v, m);
  } else {
    static_assert(std::is_same<S, float>::value && (std::is_same<D, half>::value || std::is_same<D, bfloat16_t>::value),
                  "Cast: float <-> half, float <-> bfloat16_t, float <-> int32_t");
    if (m != M::CAST_NONE && m != M::CAST_RINT) {
      fail("Cast float -> 16-bit float: round mode %d is not modelled (CAST_NONE or CAST_RINT, nearest even)",
           static_cast<int>(m));
    }
    return D(v);
  }
}

// Reductions: each 256-byte repeat summed in order in f32, then the repeats' sums in order.
template <class T>
inline float sumOf(const T* x, uint32_t n, T* partial) {
  const uint32_t per = kRepeatBytes / sizeof(T);
  float total = 0.0f;
  for (uint32_t r = 0; r * per < n; ++r) {
    float s = 0.0f;
    for (uint32_t i = r * per; i < n && i < (r + 1) * per; ++i) s += static_cast<float>(x[i]);
    if (partial) partial[r] = static_cast<T>(s);
    total += s;
  }
  return total;
}

}  // namespace sk_ascend_sim_vec

namespace AscendC {

template <class T, class U>
__aicore__ inline void Cast(const LocalTensor<T>& dst, const LocalTensor<U>& src, const RoundMode& round_mode,
                            const uint32_t count) {
  sk_ascend_sim_vec::VecOp v("Cast");
  const U* x = v.read(src, count, "src");
  T* d = v.write(dst, count, "dst");
  // Distinct UB ranges unless in place with equal sizes; a narrowing cast in place reads before it writes.
  if (sizeof(T) > sizeof(U) && reinterpret_cast<const void*>(x) == reinterpret_cast<const void*>(d) && count > 1) {
    sk_ascend_sim_vec::fail("Cast in place to a wider type overwrites its own source");
  }
  for (uint32_t i = 0; i < count; ++i) d[i] = sk_ascend_sim_vec::castOne<T, U>(x[i], round_mode);
}

// dst[0] = the sum of src[0, count); sharedTmpBuffer receives the per-repeat sums (one element per 256 bytes
// of input), as on the device it is clobbered.
template <class T, bool isSetMask = true>
__aicore__ inline void ReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& sharedTmpBuffer,
                                 const int32_t count) {
  SK_ASCEND_SIM_FLOAT_ONLY(T, "ReduceSum");
  const uint32_t k = sk_ascend_sim_vec::checkedCount(count, "ReduceSum");
  sk_ascend_sim_vec::VecOp v("ReduceSum");
  const uint32_t repeats = (k * static_cast<uint32_t>(sizeof(T)) + sk_ascend_sim_vec::kRepeatBytes - 1) / sk_ascend_sim_vec::kRepeatBytes;
  const T* x = v.read(src, k, "src");
  T* w = v.write(sharedTmpBuffer, repeats, "sharedTmpBuffer");
  const float s = sk_ascend_sim_vec::sumOf(x, k, w);
  v.write(dst, 1, "dst")[0] = static_cast<T>(s);
}

template <class T, bool isMax>
inline void skReduceExtreme(const char* op, const LocalTensor<T>& dst, const LocalTensor<T>& src,
                            const LocalTensor<T>& tmp, int32_t count, bool calIndex) {
  const uint32_t k = sk_ascend_sim_vec::checkedCount(count, op);
  if (k == 0) sk_ascend_sim_vec::fail("%s of 0 elements", op);
  sk_ascend_sim_vec::VecOp v(op);
  const T* x = v.read(src, k, "src");
  v.write(tmp, 1, "sharedTmpBuffer");
  uint32_t best = 0;
  for (uint32_t i = 1; i < k; ++i) {
    const float a = static_cast<float>(x[i]), b = static_cast<float>(x[best]);
    if (isMax ? a > b : a < b) best = i;
  }
  T* d = v.write(dst, calIndex ? 2 : 1, "dst");
  const T value = x[best];
  d[0] = value;
  if (calIndex) {  // the index's bits in the second element, as the device stores it
    if (sizeof(T) == 4) {
      const uint32_t idx = best;
      memcpy(&d[1], &idx, 4);
    } else {
      const uint16_t idx = static_cast<uint16_t>(best);
      memcpy(&d[1], &idx, 2);
    }
  }
}

// dst[0] = the largest (smallest) of src[0, count); with calIndex, dst[1] holds its index's bits (read them
// with a reinterpret, e.g. ReinterpretCast<uint32_t>() for float).
template <class T>
__aicore__ inline void ReduceMax(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& sharedTmpBuffer,
                                 const int32_t count, bool calIndex = 0) {
  SK_ASCEND_SIM_FLOAT_ONLY(T, "ReduceMax");
  skReduceExtreme<T, true>("ReduceMax", dst, src, sharedTmpBuffer, count, calIndex);
}
template <class T>
__aicore__ inline void ReduceMin(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& sharedTmpBuffer,
                                 const int32_t count, bool calIndex = 0) {
  SK_ASCEND_SIM_FLOAT_ONLY(T, "ReduceMin");
  skReduceExtreme<T, false>("ReduceMin", dst, src, sharedTmpBuffer, count, calIndex);
}

// Per repeat r (repeatTime of them): the sum of the first `mask` elements of the repeat's 8 blocks (block
// b at srcBlkStride * b blocks, repeat r at srcRepStride * r blocks) into dst[r * dstRepStride].
template <class T, bool isSetMask = true>
__aicore__ inline void WholeReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t mask,
                                      const int32_t repeatTime, const int32_t dstRepStride,
                                      const int32_t srcBlkStride, const int32_t srcRepStride) {
  SK_ASCEND_SIM_FLOAT_ONLY(T, "WholeReduceSum");
  using namespace sk_ascend_sim_vec;
  const char* op = "WholeReduceSum";
  const int32_t perRepeat = static_cast<int32_t>(kRepeatBytes / sizeof(T)), perBlock = static_cast<int32_t>(kBlockBytes / sizeof(T));
  if (mask < 1 || mask > perRepeat) fail("%s: mask %d (1..%d elements of a repeat)", op, mask, perRepeat);
  if (repeatTime < 0 || repeatTime > 255) fail("%s: repeatTime %d (0..255)", op, repeatTime);
  if (dstRepStride < 0 || srcBlkStride < 0 || srcRepStride < 0) fail("%s: negative stride", op);
  VecOp v(op);
  const int32_t lastBlock = (mask - 1) / perBlock;
  const uint64_t srcElems = repeatTime == 0 ? 0 : (static_cast<uint64_t>(repeatTime - 1) * srcRepStride + static_cast<uint64_t>(lastBlock) * srcBlkStride) * perBlock + perBlock;
  const T* x = v.read(src, srcElems, "src");
  T* d = v.write(dst, repeatTime == 0 ? 0 : static_cast<uint64_t>(repeatTime - 1) * dstRepStride + 1, "dst");
  for (int32_t r = 0; r < repeatTime; ++r) {
    float s = 0.0f;
    for (int32_t i = 0; i < mask; ++i) {
      const int32_t blk = i / perBlock, in = i % perBlock;
      s += static_cast<float>(x[(static_cast<int64_t>(r) * srcRepStride + static_cast<int64_t>(blk) * srcBlkStride) * perBlock + in]);
    }
    d[static_cast<int64_t>(r) * dstRepStride] = static_cast<T>(s);
  }
}

#undef SK_ASCEND_SIM_FLOAT_ONLY
#undef SK_ASCEND_SIM_NUMERIC

}  // namespace AscendC

// ---- hooks of kernel_operator.h -------------------------------------------------------------------------
inline void sk_ascend_sim_vec_barrier(pipe_t pipe) {
  if (pipe == PIPE_ALL && sk_ascend_sim_vec::isVectorCore() && sk_ascend_sim_vec::core().ub != nullptr) {
    sk_ascend_sim_vec::barrierAll(sk_ascend_sim_vec::core());
  }
}
inline void sk_ascend_sim_vec_wait_pre() {
  if (AscendC::TPipe* p = sk_ascend_sim_vec::core().pipe) p->skNoteWaitPre();
}
inline void sk_ascend_sim_vec_set_next(pipe_t aivPipe) {
  AscendC::TPipe* p = sk_ascend_sim_vec::core().pipe;
  if (p == nullptr) return;
  int on = sk_ascend_sim_vec::kNotModelled;
  switch (aivPipe) {
    case PIPE_S: on = sk_ascend_sim_vec::kS; break;
    case PIPE_V: on = sk_ascend_sim_vec::kV; break;
    case PIPE_MTE2: on = sk_ascend_sim_vec::kMte2; break;
    case PIPE_MTE3: on = sk_ascend_sim_vec::kMte3; break;
    default: break;
  }
  p->skNoteSetNext(on);
}

#endif
