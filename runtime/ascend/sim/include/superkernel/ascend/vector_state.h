// The Ascend C vector model's checker as both sides of the simulator see it (target: ascend-sim only): the
// state it keeps per simulated vector core (the UB, what each pipe knows of the others, the buffers of the
// TPipe, the recent GM writes), the state of a TPipe and of a queue, and the table of its entry points.
//
// Why a table: the checker's bodies are compiled once, into the simulator's library
// (runtime/ascend/sim/src/VectorChecker.cpp), instead of into every simulated sub-kernel. They were most of
// a sub-kernel's compile time (the API's templates are thin; the race, queue and TPipe checks are not). A
// sub-kernel is a shared object loaded by a process whose library may be static, or hidden behind a Python
// module's RTLD_LOCAL: it cannot link against the library's symbols, so it reaches the checker through the
// core it runs on, `sk_ascend_sim_core::ops->vector_checker` (sim_abi.h), as it reaches the flags.
//
// The state itself lives on the kernel side (superkernel/ascend/vector_check.h: one per thread of each
// simulated shared object, as before the split) and is passed to every entry point, so the layout below
// is part of the ABI: a change bumps kVectorCheckerAbi (and SK_ASCEND_SIM_ABI, whose check every kernel
// makes). Nothing here has linkage: the library and kernel code both include it.
#ifndef SUPERKERNEL_ASCEND_SIM_VECTOR_STATE_H
#define SUPERKERNEL_ASCEND_SIM_VECTOR_STATE_H

#include <stdarg.h>
#include <stdint.h>

#include "superkernel/ascend/sim_abi.h"

namespace sk_ascend_sim_vec {

constexpr uint32_t kVectorCheckerAbi = 1;

constexpr uint32_t kUbBytes = 192u * 1024u;  // unified buffer of one vector core
constexpr uint32_t kBlockBytes = 32;          // DataCopy unit and alignment of vector operands
constexpr uint32_t kUbBlocks = kUbBytes / kBlockBytes;
constexpr uint32_t kRepeatBytes = 256;  // one vector repeat: 8 blocks
constexpr int kPipes = 4;               // the modelled pipes of a vector core
enum Pipe : int { kS = 0, kV = 1, kMte2 = 2, kMte3 = 3, kNotModelled = -1 };
constexpr int kEventIds = 8;   // ids per (source, destination) pipe pair
constexpr int kMaxSlots = 64;  // buffers (queue buffers + TBufs) of one TPipe
constexpr int kMaxGmWrites = 64;
constexpr int kHardEvents = 32;  // AscendC::HardEvent::MAX (kernel_common.h checks it)

// The AscendC::TPosition values the checker tells apart (kernel_common.h checks them).
enum Position : uint8_t { kVecIn = 9, kVecOut = 10, kVecCalc = 11 };

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
  Token token{};       // the sync carried by EnQue (producer) or FreeTensor (consumer)
  uint32_t order = 0;  // EnQue order, for FIFO DeQue
};

struct GmWrite {
  uintptr_t begin, end;
  uint32_t epoch;  // the MTE3 instruction
};

struct PipeState;

// A TQueBind's or TBuf's buffers (slots of the core's table) and the positions that produce and consume
// them. Not copyable: a queue is a place, not a value.
struct QueueState {
  QueueState(uint8_t src, uint8_t dst, int32_t depth, bool isBuf) : src_(src), dst_(dst), depth_(depth), isBuf_(isBuf) {}
  QueueState(const QueueState&) = delete;
  QueueState& operator=(const QueueState&) = delete;

  PipeState* pipe_ = nullptr;  // set by TPipe::InitBuffer
  uint8_t src_, dst_;          // AscendC::TPosition
  int32_t depth_;
  bool isBuf_;
  int first_ = 0, num_ = 0;  // slots [first_, first_ + num_)
  uint32_t len_ = 0;         // bytes per buffer
  uint32_t enqueued_ = 0, order_ = 0;
  bool registered_ = false;
};

// A TPipe's allocations and what its kernel did with early start.
struct PipeState {
  PipeState() = default;
  PipeState(const PipeState&) = delete;
  PipeState& operator=(const PipeState&) = delete;

  uint32_t used_ = 0;
  QueueState* queues_[kMaxSlots] = {};
  int nQueues_ = 0;
  uint32_t eventIds_[kHardEvents] = {};
  bool gmTouched_ = false, waitedPre_ = false, setNext_ = false;
};

struct Core {
  const sk_ascend_sim_core* self = nullptr;  // the simulated core now running on this thread
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
  PipeState* pipe = nullptr;  // the TPipe alive on this core
  Core() = default;
  Core(const Core&) = delete;
  Core& operator=(const Core&) = delete;
  ~Core() {
    delete[] ub;
    delete[] blocks;
  }
};

// One transfer of `bursts` bursts of `len` bytes; source and destination advance by their own pitch.
struct Bursts {
  uint32_t bursts, len, srcPitch, dstPitch;
  uint64_t srcSpan() const { return bursts == 0 ? 0 : static_cast<uint64_t>(bursts - 1) * srcPitch + len; }
  uint64_t dstSpan() const { return bursts == 0 ? 0 : static_cast<uint64_t>(bursts - 1) * dstPitch + len; }
};

// A LocalTensor as the checker sees it: its slot and the slot's generation it was handed (is it still
// live), its UB offset and its size in elements.
struct TensorRef {
  uint32_t off = 0, size = 0;
  int slot = -1;
  uint32_t gen = 0;
};

// The checker's entry points (VectorChecker.cpp says what each checks). Every one that finds a misuse
// fails the launch through the core's trap, which unwinds the core: none of them returns then.
struct Checker {
  uint32_t abi;  // kVectorCheckerAbi
  // "Ascend C: " and the message, through the core's trap (never returns).
  void (*failv)(const sk_ascend_sim_core* self, const char* fmt, va_list ap);
  // Whether this thread is unwinding (std::uncaught_exceptions() > 0): a destructor then checks nothing.
  bool (*unwinding)();
  // The vector core's UB, created (and poisoned) on first use; on a cube core a failure naming `op`.
  void (*vectorCore)(Core& c, const char* op);
  // The next instruction of a pipe (its epoch).
  uint32_t (*issue)(Core& c, int pipe);
  // Pipe `pipe` (instruction e) accesses UB bytes [off, off + bytes): a race with an unordered access fails.
  void (*accessUb)(Core& c, int pipe, uint32_t e, uint32_t off, uint32_t bytes, bool write, const char* op);
  void (*setFlag)(Core& c, int hardEvent, int32_t id, const char* api);
  void (*waitFlag)(Core& c, int hardEvent, int32_t id, const char* api);
  // kernel_operator.h's hooks: pipe_barrier(pipe), WaitPreTaskEnd, SetNextTaskStart<AIV_PIPE>.
  void (*pipeBarrier)(Core& c, uint32_t pipe);
  void (*waitPre)(Core& c);
  void (*setNext)(Core& c, uint32_t aivPipe);
  // TPipe: its start on this core, InitBuffer, its end (with `check`: what was left behind fails).
  void (*pipeBegin)(Core& c, PipeState& p);
  void (*pipeInitBuffer)(Core& c, PipeState& p, QueueState& q, uint32_t num, uint32_t len);
  void (*pipeEnd)(Core& c, PipeState& p, bool check);
  // A queue going away before its TPipe: with `check`, its buffers must have come back.
  void (*forgetQueue)(Core& c, QueueState& q, bool check);
  // A GM transfer of this core's kernel, against its own SetNextTaskStart.
  void (*noteGm)(Core& c, const char* op);
  // TPipe::AllocEventID (allocate) / FetchEventID, ReleaseEventID.
  int (*eventId)(Core& c, PipeState& p, int hardEvent, bool allocate);
  void (*releaseEventId)(Core& c, PipeState& p, int hardEvent, int id);
  // TQueBind / TBuf: the slot a tensor of theirs gets (AllocTensor, DeQue, TBuf::Get of `len` elements of
  // `bytes` in all) or gives back.
  int (*allocTensor)(Core& c, QueueState& q);
  void (*enQue)(Core& c, QueueState& q, const TensorRef& t);
  int (*deQue)(Core& c, QueueState& q);
  void (*freeTensor)(Core& c, QueueState& q, const TensorRef& t);
  void (*bufGet)(Core& c, QueueState& q, uint32_t len, uint64_t bytes);
  // LocalTensor: live (its buffer still owned by whoever got this handle); `n` elements of it from a
  // 32-byte aligned start (vector operands and DataCopy).
  void (*live)(Core& c, const TensorRef& t, const char* op);
  void (*need)(Core& c, const TensorRef& t, uint64_t n, const char* op, const char* what);
  // DataCopy's GM <-> UB transfers, checked and done (the caller checked both ends' extents).
  void (*gmToUb)(Core& c, const TensorRef& dst, const uint8_t* gm, const Bursts& b, const char* op);
  void (*ubToGm)(Core& c, uint8_t* gm, const TensorRef& src, const Bursts& b, const char* op);
  // A vector instruction: the V pipe issues it, a TPipe alive; its epoch.
  uint32_t (*vecBegin)(Core& c, const char* op);
  // GlobalTensor::GetValue's read on the S pipe: this core's copy-outs to it must be ordered first.
  void (*scalarGmRead)(Core& c, const void* addr, uint64_t bytes, const char* op);
};

}  // namespace sk_ascend_sim_vec

#endif
