// The Ascend C vector model's checker (target: ascend-sim), compiled once into the simulator's library;
// simulated sub-kernels reach it through their core's ops (superkernel/ascend/vector_state.h says why and
// holds the state it works on). kernel_operator.h's header comment says what is modelled; this file is
// how: every UB access is checked per 32-byte block against the last writer and the last reader of each
// other pipe, and a pipe knows how far another has got only through a sync that told it (SetFlag /
// WaitFlag, EnQue / DeQue, FreeTensor / AllocTensor, PipeBarrier<PIPE_ALL>).
//
// Messages and the order of checks are those of the header-only model this replaced: tests match them.
#include "superkernel/ascend/vector_state.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <exception>

#include "superkernel/ascend/Simulator.h"

namespace sk_ascend_sim_vec {
namespace {

// kernel_operator.h's pipe_t values the hooks receive.
constexpr uint32_t kPipeS = 0, kPipeV = 1, kPipeMte2 = 4, kPipeMte3 = 5, kPipeAll = 6;

[[noreturn]] void failv(const sk_ascend_sim_core* self, const char* fmt, va_list ap) {
  char msg[1024] = "Ascend C: ";
  vsnprintf(msg + 10, sizeof msg - 10, fmt, ap);
  self->ops->trap(self, msg);
  abort();  // trap unwinds the core with an exception; not reached
}

// The launch fails with the message (trap unwinds the core; it never returns).
[[noreturn]] void fail(const Core& c, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
void fail(const Core& c, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  failv(c.self, fmt, ap);
}

bool unwinding() { return std::uncaught_exceptions() > 0; }

const char* pipeName(int p) {
  static const char* const names[kPipes] = {"S (scalar)", "V (vector)", "MTE2 (copy-in)", "MTE3 (copy-out)"};
  return p >= 0 && p < kPipes ? names[p] : "?";
}
const char* pipeShort(int p) {
  static const char* const names[kPipes] = {"S", "V", "MTE2", "MTE3"};
  return p >= 0 && p < kPipes ? names[p] : "?";
}

// The HardEvent that orders `later` after `earlier`, for messages.
const char* eventName(int earlier, int later) {
  static const char* const names[kPipes][kPipes] = {
      {"S_S", "S_V", "S_MTE2", "S_MTE3"},
      {"V_S", "V_V", "V_MTE2", "V_MTE3"},
      {"MTE2_S", "MTE2_V", "MTE2_MTE2", "MTE2_MTE3"},
      {"MTE3_S", "MTE3_V", "MTE3_MTE2", "MTE3_MTE3"},
  };
  return names[earlier][later];
}

bool isVectorCore(const Core& c) { return c.self->core_type == SK_ASCEND_SIM_AIV; }

void vectorCore(Core& c, const char* op) {
  if (!isVectorCore(c)) fail(c, "%s on a cube core: the unified buffer and the vector unit are on vector cores", op);
  if (c.ub == nullptr) {
    c.ub = new uint8_t[kUbBytes];
    memset(c.ub, 0xff, kUbBytes);
    c.blocks = new BlockUse[kUbBlocks]();
  }
}

uint32_t issue(Core& c, int p) {
  const uint32_t e = ++c.epoch[p];
  c.seen[p][p] = e;
  return e;
}

Token snapshot(const Core& c, int p) {
  Token t;
  for (int q = 0; q < kPipes; ++q) t.at[q] = c.seen[p][q];
  t.at[p] = c.epoch[p];
  return t;
}

void learn(Core& c, int p, const Token& t) {
  for (int q = 0; q < kPipes; ++q)
    if (t.at[q] > c.seen[p][q]) c.seen[p][q] = t.at[q];
}

// PipeBarrier<PIPE_ALL>: every pipe waits for every other.
void barrierAll(Core& c) {
  for (int p = 0; p < kPipes; ++p)
    for (int q = 0; q < kPipes; ++q) c.seen[p][q] = c.epoch[q];
  c.nGm = 0;
}

void accessUb(Core& c, int p, uint32_t e, uint32_t off, uint32_t bytes, bool write, const char* op) {
  if (bytes == 0) return;
  const uint32_t first = off / kBlockBytes, last = (off + bytes - 1) / kBlockBytes;
  for (uint32_t b = first; b <= last; ++b) {
    BlockUse& u = c.blocks[b];
    if (u.write != 0 && u.writer != p && c.seen[p][u.writer] < u.write) {
      fail(c,
           "%s: the %s pipe %s UB bytes [%u, %u) that the %s pipe wrote, with no sync ordering it after that write "
           "(SetFlag/WaitFlag<HardEvent::%s>, EnQue/DeQue or PipeBarrier<PIPE_ALL>): on a device this races",
           op, pipeName(p), write ? "overwrites" : "reads", b * kBlockBytes, (b + 1) * kBlockBytes,
           pipeName(u.writer), eventName(u.writer, p));
    }
    if (write) {
      for (int q = 0; q < kPipes; ++q) {
        if (q != p && u.read[q] > c.seen[p][q]) {
          fail(c,
               "%s: the %s pipe overwrites UB bytes [%u, %u) that the %s pipe reads, with no sync ordering the "
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
void readGm(Core& c, int p, const void* addr, uint64_t bytes, const char* op) {
  const uintptr_t b = reinterpret_cast<uintptr_t>(addr), e = b + bytes;
  for (int i = 0; i < c.nGm; ++i) {
    const GmWrite& w = c.gm[i];
    if (w.begin < e && b < w.end && c.seen[p][kMte3] < w.epoch) {
      fail(c,
           "%s: the %s pipe reads GM this core's MTE3 copy-out writes, with no sync ordering the read after it "
           "(SetFlag/WaitFlag<HardEvent::%s> or PipeBarrier<PIPE_ALL>): on a device it may read the old data",
           op, pipeName(p), eventName(kMte3, p));
    }
  }
}

void wroteGm(Core& c, const void* addr, uint64_t bytes, uint32_t e) {
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

// A HardEvent's (source, destination) pipes; kNotModelled for the cube's. The values are
// AscendC::HardEvent's (kernel_common.h), in its order.
void eventPipes(int ev, int* src, int* dst) {
  enum : int { MTE2_V = 4, V_MTE2, MTE3_V, V_MTE3, M_V, V_M, V_V };
  enum : int { MTE3_MTE2 = 19, MTE2_MTE3, S_V, V_S, S_MTE2, MTE2_S, S_MTE3, MTE3_S };
  *src = *dst = kNotModelled;
  switch (ev) {
    case MTE2_V: *src = kMte2, *dst = kV; break;
    case V_MTE2: *src = kV, *dst = kMte2; break;
    case MTE3_V: *src = kMte3, *dst = kV; break;
    case V_MTE3: *src = kV, *dst = kMte3; break;
    case V_V: *src = kV, *dst = kV; break;
    case MTE3_MTE2: *src = kMte3, *dst = kMte2; break;
    case MTE2_MTE3: *src = kMte2, *dst = kMte3; break;
    case S_V: *src = kS, *dst = kV; break;
    case V_S: *src = kV, *dst = kS; break;
    case S_MTE2: *src = kS, *dst = kMte2; break;
    case MTE2_S: *src = kMte2, *dst = kS; break;
    case S_MTE3: *src = kS, *dst = kMte3; break;
    case MTE3_S: *src = kMte3, *dst = kS; break;
    default: break;
  }
}

// The pipes of a SetFlag / WaitFlag, checked; the core's UB made.
void flagPipes(Core& c, int ev, int32_t id, const char* api, int* src, int* dst) {
  eventPipes(ev, src, dst);
  if (*src == kNotModelled) {
    fail(c, "%s: HardEvent %d names a cube pipe (M, MTE1, FIX), which the simulator does not model", api, ev);
  }
  if (id < 0 || id >= kEventIds) {
    fail(c, "%s<HardEvent::%s>(%d): event ids are 0..%d", api, eventName(*src, *dst), id, kEventIds - 1);
  }
  vectorCore(c, api);
}

void setFlag(Core& c, int ev, int32_t id, const char* api) {
  int src, dst;
  flagPipes(c, ev, id, api, &src, &dst);
  if (c.evSet[src][dst][id]) {
    fail(c,
         "%s<HardEvent::%s>(%d) while the previous set of that event was not yet waited for: on a device the "
         "second set is lost or stalls",
         api, eventName(src, dst), id);
  }
  issue(c, src);  // the set is an instruction of the source pipe, after its earlier ones
  c.evSet[src][dst][id] = true;
  c.evToken[src][dst][id] = snapshot(c, src);
}

void waitFlag(Core& c, int ev, int32_t id, const char* api) {
  int src, dst;
  flagPipes(c, ev, id, api, &src, &dst);
  if (!c.evSet[src][dst][id]) {
    fail(c, "%s<HardEvent::%s>(%d) with no SetFlag of that event before it: on a device the %s pipe waits forever",
         api, eventName(src, dst), id, pipeName(dst));
  }
  c.evSet[src][dst][id] = false;
  issue(c, dst);
  learn(c, dst, c.evToken[src][dst][id]);
}

// ---- early start: GM transfers of the TPipe's kernel relative to its own WaitPreTaskEnd / SetNextTaskStart

void noteGm(Core& c, const char* op) {
  PipeState* p = c.pipe;
  if (p == nullptr) return;
  if (p->setNext_) {
    fail(c,
         "%s after this kernel's SetNextTaskStart: the next sub-kernel of a SuperKernel may already run, so every "
         "GM transfer must come before it (set after the last MTE3 copy-out)",
         op);
  }
  p->gmTouched_ = true;
}

void waitPre(Core& c) {
  PipeState* p = c.pipe;
  if (p == nullptr) return;
  if (p->waitedPre_) fail(c, "WaitPreTaskEnd called twice in one kernel (once per core)");
  if (p->gmTouched_) {
    fail(c,
         "WaitPreTaskEnd after this kernel already moved GM data: in a SuperKernel the previous sub-kernel may "
         "still be writing it, so wait before the first MTE2 copy-in");
  }
  p->waitedPre_ = true;
}

void setNext(Core& c, uint32_t aivPipe) {
  PipeState* p = c.pipe;
  if (p == nullptr) return;
  int on = kNotModelled;
  switch (aivPipe) {
    case kPipeS: on = kS; break;
    case kPipeV: on = kV; break;
    case kPipeMte2: on = kMte2; break;
    case kPipeMte3: on = kMte3; break;
    default: break;
  }
  if (p->setNext_) fail(c, "SetNextTaskStart called twice in one kernel (once per core)");
  p->setNext_ = true;
  if (!isVectorCore(c) || on == kNotModelled) return;
  vectorCore(c, "SetNextTaskStart");
  for (const int q : {static_cast<int>(kMte2), static_cast<int>(kMte3)}) {
    if (q != on && c.seen[on][q] < c.epoch[q]) {
      fail(c,
           "SetNextTaskStart is issued on the %s pipe, which is not ordered after this kernel's last %s "
           "transfer: on a device the next sub-kernel could start while it still runs (SetFlag/"
           "WaitFlag<HardEvent::%s> first, or the default PIPE_MTE3)",
           pipeShort(on), pipeShort(q), eventName(q, on));
    }
  }
}

void pipeBarrier(Core& c, uint32_t pipe) {
  if (pipe == kPipeAll && isVectorCore(c) && c.ub != nullptr) barrierAll(c);
}

// ---- TPipe -------------------------------------------------------------------------------------------------

void pipeBegin(Core& c, PipeState& p) {
  if (c.pipe != nullptr) fail(c, "a second TPipe while another is alive on this core (one TPipe per kernel)");
  c.pipe = &p;
  c.nSlots = 0;
  if (isVectorCore(c)) {
    vectorCore(c, "TPipe");
    barrierAll(c);
  }
}

bool isVecPosition(uint8_t pos) { return pos == kVecIn || pos == kVecOut || pos == kVecCalc; }

void pipeInitBuffer(Core& c, PipeState& p, QueueState& q, uint32_t num, uint32_t len) {
  vectorCore(c, "TPipe::InitBuffer");
  if (c.pipe != &p) fail(c, "TPipe::InitBuffer on a TPipe that is not this core's (it ended)");
  if (q.pipe_ != nullptr) fail(c, "TPipe::InitBuffer twice for one queue or TBuf");
  if (num == 0 || len == 0) fail(c, "TPipe::InitBuffer with %u buffer(s) of %u bytes", num, len);
  if (!(isVecPosition(q.src_) && isVecPosition(q.dst_))) {
    fail(c, "TPipe::InitBuffer for a queue of a cube position (A1, B1, CO1, ...): the simulator models the vector "
            "core's UB only");
  }
  if (!q.isBuf_ && q.depth_ < 1) fail(c, "TQue depth %d: the simulator models queues of depth 1 or more", q.depth_);
  const uint32_t bytes = (len + kBlockBytes - 1) / kBlockBytes * kBlockBytes;
  const uint64_t need = static_cast<uint64_t>(bytes) * num;
  if (p.used_ + need > kUbBytes) {
    fail(c,
         "TPipe::InitBuffer of %u x %u bytes: the unified buffer holds %u bytes and %u are already allocated "
         "(%llu past the end)",
         num, bytes, kUbBytes, p.used_, static_cast<unsigned long long>(p.used_ + need - kUbBytes));
  }
  if (c.nSlots + static_cast<int>(num) > kMaxSlots) fail(c, "TPipe::InitBuffer: more than %d buffers in one TPipe", kMaxSlots);
  q.pipe_ = &p;
  q.first_ = c.nSlots;
  q.num_ = static_cast<int>(num);
  q.len_ = bytes;
  q.enqueued_ = 0;
  for (uint32_t i = 0; i < num; ++i) {
    Slot& s = c.slots[c.nSlots++];
    s.off = p.used_ + i * bytes;
    s.bytes = bytes;
    s.gen += 1;
    s.state = q.isBuf_ ? SlotState::Buf : SlotState::Free;
    s.why = Stale::None;
    s.token = Token{};
  }
  p.used_ += static_cast<uint32_t>(need);
  if (p.nQueues_ == kMaxSlots) fail(c, "TPipe: more than %d queues and buffers", kMaxSlots);
  p.queues_[p.nQueues_++] = &q;
  q.registered_ = true;
}

// What a queue still holds (an error at its end), or nullptr.
const char* leftover(const Core& c, const QueueState& q) {
  if (q.isBuf_) return nullptr;
  for (int i = 0; i < q.num_; ++i) {
    const SlotState st = c.slots[q.first_ + i].state;
    if (st == SlotState::Queued) return "a TQue ends with a tensor still queued: an EnQue with no DeQue";
    if (st == SlotState::Allocated || st == SlotState::Dequeued) {
      return "a TQue ends with a tensor still allocated: an AllocTensor or DeQue with no FreeTensor";
    }
  }
  return nullptr;
}

void forgetQueue(Core& c, QueueState& q, bool check) {
  PipeState& p = *q.pipe_;
  for (int i = 0; i < p.nQueues_; ++i) {
    if (p.queues_[i] == &q) {
      p.queues_[i] = p.queues_[--p.nQueues_];
      break;
    }
  }
  q.registered_ = false;
  q.pipe_ = nullptr;
  if (check) {
    if (const char* what = leftover(c, q)) fail(c, "%s", what);
  }
}

// Ends the TPipe: every buffer released and every tensor of it stale, every pipe drained. With `check`,
// what was left behind (a tensor in a queue, a SetFlag nobody waited for) then fails the launch.
void pipeEnd(Core& c, PipeState& p, bool check) {
  if (c.pipe != &p) return;  // ended already
  const char* left = nullptr;
  char event[160] = "";
  for (int i = 0; i < p.nQueues_; ++i) {
    if (!left) left = leftover(c, *p.queues_[i]);
    p.queues_[i]->registered_ = false;
    p.queues_[i]->pipe_ = nullptr;
  }
  p.nQueues_ = 0;
  for (int i = 0; i < c.nSlots; ++i) {
    c.slots[i].gen += 1;
    c.slots[i].why = Stale::PipeEnded;
    c.slots[i].state = SlotState::Unused;
  }
  c.nSlots = 0;
  p.used_ = 0;
  c.pipe = nullptr;
  if (isVectorCore(c) && c.ub != nullptr) {
    for (int a = 0; a < kPipes; ++a)
      for (int b = 0; b < kPipes; ++b)
        for (int id = 0; id < kEventIds; ++id)
          if (c.evSet[a][b][id]) {
            c.evSet[a][b][id] = false;
            if (!event[0]) {
              snprintf(event, sizeof event, "the kernel ends with SetFlag<HardEvent::%s>(%d) never waited for",
                       eventName(a, b), id);
            }
          }
    barrierAll(c);
  }
  if (check && left) fail(c, "%s", left);
  if (check && event[0]) fail(c, "%s", event);
}

int eventId(Core& c, PipeState& p, int k, bool allocate) {
  for (int id = 0; id < kEventIds; ++id) {
    if (!(p.eventIds_[k] & (1u << id))) {
      if (allocate) p.eventIds_[k] |= 1u << id;
      return id;
    }
  }
  fail(c, "TPipe::%s: all %d ids of HardEvent %d are allocated", allocate ? "AllocEventID" : "FetchEventID",
       kEventIds, k);
}

void releaseEventId(Core& c, PipeState& p, int k, int id) {
  if (id < 0 || id >= kEventIds || !(p.eventIds_[k] & (1u << id))) {
    fail(c, "TPipe::ReleaseEventID(%d) of HardEvent %d: not allocated", id, k);
  }
  p.eventIds_[k] &= ~(1u << id);
}

// ---- TQueBind / TBuf ---------------------------------------------------------------------------------------
// Which pipe writes a buffer of a position and which reads it (the queue's EnQue / DeQue pair).
int producerOf(uint8_t pos) { return pos == kVecIn ? kMte2 : kV; }
int consumerOf(uint8_t pos) { return pos == kVecOut ? kMte3 : kV; }

void bound(Core& c, const QueueState& q, const char* op) {
  vectorCore(c, op);
  if (q.pipe_ == nullptr) fail(c, "%s on a queue with no TPipe::InitBuffer (or whose TPipe ended)", op);
}

// The slot of one of this queue's tensors, still the one handed out.
Slot& owned(Core& c, const QueueState& q, const TensorRef& t, const char* op) {
  const int k = t.slot;
  if (k < q.first_ || k >= q.first_ + q.num_) fail(c, "%s of a tensor that is not one of this queue's buffers", op);
  Slot& s = c.slots[k];
  if (t.off != s.off) {
    fail(c, "%s of a part of a buffer (an operator[] view): pass the tensor AllocTensor or DeQue returned", op);
  }
  if (t.gen != s.gen) {
    if (s.why == Stale::Freed || s.state == SlotState::Free) fail(c, "%s of a tensor already freed", op);
    if (s.why == Stale::Enqueued) fail(c, "%s of a tensor already enqueued (it belongs to the queue until DeQue)", op);
    fail(c, "%s of a stale LocalTensor", op);
  }
  return s;
}

int allocTensor(Core& c, QueueState& q) {
  bound(c, q, "AllocTensor");
  for (int i = 0; i < q.num_; ++i) {
    Slot& s = c.slots[q.first_ + i];
    if (s.state != SlotState::Free) continue;
    s.state = SlotState::Allocated;
    s.gen += 1;
    // The producer is ordered after the consumer's use of the buffer's previous contents.
    learn(c, producerOf(q.src_), s.token);
    return q.first_ + i;
  }
  fail(c, "AllocTensor: all %d buffer(s) of the queue are in use (a FreeTensor is missing; on a device this waits "
          "forever)",
       q.num_);
}

void enQue(Core& c, QueueState& q, const TensorRef& t) {
  bound(c, q, "EnQue");
  Slot& s = owned(c, q, t, "EnQue");
  if (s.state != SlotState::Allocated) fail(c, "EnQue of a tensor that is not freshly allocated (enqueued twice, or a DeQue'd one)");
  if (static_cast<int32_t>(q.enqueued_) >= q.depth_) {
    fail(c, "EnQue past the queue's depth %d: %u tensor(s) are queued and not yet dequeued", q.depth_, q.enqueued_);
  }
  const int prod = producerOf(q.src_);
  issue(c, prod);  // SetFlag<producer_consumer>
  s.token = snapshot(c, prod);
  s.state = SlotState::Queued;
  s.gen += 1;
  s.why = Stale::Enqueued;
  s.order = ++q.order_;
  ++q.enqueued_;
}

int deQue(Core& c, QueueState& q) {
  bound(c, q, "DeQue");
  int best = -1;
  for (int i = 0; i < q.num_; ++i) {
    const Slot& s = c.slots[q.first_ + i];
    if (s.state == SlotState::Queued && (best < 0 || s.order < c.slots[best].order)) best = q.first_ + i;
  }
  if (best < 0) fail(c, "DeQue of an empty queue: no EnQue before it (on a device this waits forever)");
  Slot& s = c.slots[best];
  const int cons = consumerOf(q.dst_);
  issue(c, cons);  // WaitFlag<producer_consumer>
  learn(c, cons, s.token);
  s.state = SlotState::Dequeued;
  s.gen += 1;
  --q.enqueued_;
  return best;
}

void freeTensor(Core& c, QueueState& q, const TensorRef& t) {
  bound(c, q, "FreeTensor");
  Slot& s = owned(c, q, t, "FreeTensor");
  if (s.state == SlotState::Queued) fail(c, "FreeTensor of a tensor still queued (EnQue without DeQue)");
  if (s.state != SlotState::Allocated && s.state != SlotState::Dequeued) fail(c, "FreeTensor of a tensor already freed");
  // The buffer's last user: the consumer once dequeued, the producer if it never went through the queue.
  const int user = s.state == SlotState::Dequeued ? consumerOf(q.dst_) : producerOf(q.src_);
  issue(c, user);  // SetFlag<consumer_producer>
  s.token = snapshot(c, user);
  s.state = SlotState::Free;
  s.gen += 1;
  s.why = Stale::Freed;
}

void bufGet(Core& c, QueueState& q, uint32_t len, uint64_t bytes) {
  vectorCore(c, "TBuf::Get");
  if (q.pipe_ == nullptr) fail(c, "TBuf::Get with no TPipe::InitBuffer (or whose TPipe ended)");
  if (bytes > q.len_) fail(c, "TBuf::Get(%u) past the buffer's %u bytes", len, q.len_);
}

// ---- LocalTensor and transfers -----------------------------------------------------------------------------

void live(Core& c, const TensorRef& t, const char* op) {
  vectorCore(c, op);
  if (t.slot < 0) fail(c, "%s: a LocalTensor that no AllocTensor, DeQue or TBuf::Get returned", op);
  const Slot& s = c.slots[t.slot];
  if (s.gen != t.gen) {
    switch (s.why) {
      case Stale::Enqueued:
        fail(c, "%s: a LocalTensor used after its EnQue (it belongs to the queue until DeQue returns it)", op);
      case Stale::Freed: fail(c, "%s: a LocalTensor used after its FreeTensor", op);
      default: fail(c, "%s: a LocalTensor of a TPipe that has ended", op);
    }
  }
}

void need(Core& c, const TensorRef& t, uint64_t n, const char* op, const char* what) {
  live(c, t, op);
  if (n > t.size) {
    fail(c, "%s: %llu element(s) of %s, a LocalTensor of %u", op, static_cast<unsigned long long>(n), what, t.size);
  }
  if (t.off % kBlockBytes != 0) {
    fail(c,
         "%s: %s starts at UB byte %u, not 32-byte aligned (the vector unit and DataCopy address UB in 32-byte "
         "blocks)",
         op, what, t.off);
  }
}

void gmToUb(Core& c, const TensorRef& dst, const uint8_t* g, const Bursts& b, const char* op) {
  noteGm(c, op);
  const uint32_t e = issue(c, kMte2);
  for (uint32_t i = 0; i < b.bursts; ++i) readGm(c, kMte2, g + static_cast<uint64_t>(i) * b.srcPitch, b.len, op);
  for (uint32_t i = 0; i < b.bursts; ++i) accessUb(c, kMte2, e, dst.off + i * b.dstPitch, b.len, true, op);
  uint8_t* u = c.ub + dst.off;
  for (uint32_t i = 0; i < b.bursts; ++i) {
    memcpy(u + static_cast<uint64_t>(i) * b.dstPitch, g + static_cast<uint64_t>(i) * b.srcPitch, b.len);
  }
}

void ubToGm(Core& c, uint8_t* g, const TensorRef& src, const Bursts& b, const char* op) {
  noteGm(c, op);
  const uint32_t e = issue(c, kMte3);
  for (uint32_t i = 0; i < b.bursts; ++i) accessUb(c, kMte3, e, src.off + i * b.srcPitch, b.len, false, op);
  const uint8_t* u = c.ub + src.off;
  for (uint32_t i = 0; i < b.bursts; ++i) {
    memcpy(g + static_cast<uint64_t>(i) * b.dstPitch, u + static_cast<uint64_t>(i) * b.srcPitch, b.len);
    wroteGm(c, g + static_cast<uint64_t>(i) * b.dstPitch, b.len, e);
  }
}

uint32_t vecBegin(Core& c, const char* op) {
  vectorCore(c, op);
  if (c.pipe == nullptr) fail(c, "%s with no TPipe alive", op);
  return issue(c, kV);
}

void scalarGmRead(Core& c, const void* addr, uint64_t bytes, const char* op) {
  if (!isVectorCore(c) || c.ub == nullptr) return;
  issue(c, kS);
  readGm(c, kS, addr, bytes, op);
}

}  // namespace

// What the simulator's ops hand every simulated core (sim_abi.h vector_checker).
extern const Checker kChecker;
const Checker kChecker = {kVectorCheckerAbi, failv,          unwinding,  vectorCore,  issue,     accessUb,
                          setFlag,           waitFlag,       pipeBarrier, waitPre,    setNext,   pipeBegin,
                          pipeInitBuffer,    pipeEnd,        forgetQueue, noteGm,     eventId,   releaseEventId,
                          allocTensor,       enQue,          deQue,       freeTensor, bufGet,    live,
                          need,              gmToUb,         ubToGm,      vecBegin,   scalarGmRead};

}  // namespace sk_ascend_sim_vec

const void* sk::ascend_sim::vectorChecker() { return &sk_ascend_sim_vec::kChecker; }
