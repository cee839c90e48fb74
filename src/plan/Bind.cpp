// Binding: a segment's launches -> PlannedOps with arguments in parameter
// order and the SuperKernel's buffer manifest.
//
// Guarantees: SuperKernelPlan::ops is the segment's launches in recorded
// order (a topological order of every dependency); each op's args follow
// its kernel's parameter order, with buffer indices into the manifest, view
// offset/count in elements (a whole buffer: offset 0, count = elements) and
// scalars converted to their parameter's kind (an integer given for a float
// parameter becomes a double); the manifest is the buffers the segment
// touches, in op-list order (OpList::buffers is the manifest order).
// A runtime scalar is bound as a read of its one element (BoundArg::runtime),
// its buffer is in the manifest, and its source is a slot of the step's
// runtimeValues (distinct sources in order of first use).
// The step's options are the segment's with preload-code=auto and
// preload-data=auto replaced by the machine's defaultPreloadCode and
// defaultPreloadData.
// earlyStart = the kernel declares early_start, early-start == 1 and the op
// has no runtime scalar: a call's arguments are evaluated before the kernel
// runs, so a runtime scalar is read before a kernel's own sk_wait_inputs; the
// op is then waited for before its call, like any other.
#include <algorithm>
#include <set>

#include "plan/PlanInternal.h"

namespace sk::plan {

SuperKernelPlan bindSegment(const PlanContext& ctx, const Segment& seg) {
  const OpList& list = ctx.list;
  SuperKernelPlan sk;
  sk.name = seg.name;
  sk.fused = seg.fused;
  sk.scope = seg.scope;
  sk.endReason = seg.endReason;
  sk.options = seg.options;
  // preload-code=auto is the target's choice: a step's options say what its code does.
  if (sk.options.preloadCode == PreloadCode::Auto)
    sk.options.preloadCode = machineFor(sk.options, ctx.config).defaultPreloadCode;
  if (sk.options.preloadData == PreloadData::Auto)
    sk.options.preloadData = machineFor(sk.options, ctx.config).defaultPreloadData;

  std::set<uint32_t> used;
  for (uint32_t i : seg.ops)
    for (const auto& [name, a] : list.ops[i].args)
      if (a.isBuffer()) used.insert(static_cast<uint32_t>(list.bufferIndex(a.buffer().buffer)));
      else if (a.isRuntime()) used.insert(static_cast<uint32_t>(list.bufferIndex(a.runtime().buffer)));
  std::map<uint32_t, int> manifest;
  for (uint32_t bi : used) {
    const BufferDecl& b = list.buffers[bi];
    manifest[bi] = static_cast<int>(sk.buffers.size());
    sk.buffers.push_back(PlanBuffer{b.name, b.dtype, b.elements(), bi});
  }

  for (uint32_t i : seg.ops) {
    const Op& op = list.ops[i];
    const KernelDecl& k = ctx.kernels.at(op.kernel);
    PlannedOp p;
    p.opIndex = i;
    p.name = op.name;
    p.variant = static_cast<uint32_t>(ctx.opVariant[i]);
    p.blockDim = op.blockDim;
    p.stream = op.stream;
    bool anyRuntime = false;
    for (const auto& [name, a] : op.args) anyRuntime = anyRuntime || a.isRuntime();
    p.earlyStart = k.earlyStart && seg.options.earlyStart == 1 && !anyRuntime;
    p.kernelSync = k.kernelSync;
    for (const ParamDecl& param : k.params) {
      const ArgValue* a = op.findArg(param.name);  // validated: present, right kind
      BoundArg b;
      b.kind = param.kind;
      b.dtype = param.dtype;
      if (param.kind == ParamKind::Buffer) {
        const BufferRef& ref = a->buffer();
        uint32_t bi = static_cast<uint32_t>(list.bufferIndex(ref.buffer));
        b.access = param.access;
        b.partition = param.partition;
        b.buffer = manifest.at(bi);
        b.offset = ref.isView ? ref.offset : 0;
        b.count = ref.isView ? ref.count : list.buffers[bi].elements();
      } else if (a->isRuntime()) {
        const uint32_t bi = static_cast<uint32_t>(list.bufferIndex(a->runtime().buffer));
        b.runtime = true;
        b.access = Access::Read;
        b.partition = Partition::All;
        b.buffer = manifest.at(bi);
        b.offset = a->runtime().index;
        b.count = 1;
        const RuntimeValue rv{b.buffer, b.offset, param.dtype};
        auto slot = std::find(sk.runtimeValues.begin(), sk.runtimeValues.end(), rv);
        b.runtimeSlot = static_cast<uint32_t>(slot - sk.runtimeValues.begin());
        if (slot == sk.runtimeValues.end()) sk.runtimeValues.push_back(rv);
      } else {
        ScalarValue v = a->scalar();
        if (dtypeIsFloat(param.dtype) && !std::holds_alternative<double>(v)) v = scalarAsDouble(v);
        b.scalar = v;
      }
      p.args.push_back(std::move(b));
    }
    sk.ops.push_back(std::move(p));
  }
  return sk;
}

namespace {
// The element range of a buffer an op's argument covers (a view, or the whole buffer), and whether it writes.
struct Touch {
  size_t buffer;
  uint64_t lo, hi;
  bool write;
};
std::vector<Touch> touches(const PlanContext& ctx, const Op& op) {
  std::vector<Touch> out;
  for (const ParamDecl& param : ctx.kernels.at(op.kernel).params) {
    const ArgValue* a = op.findArg(param.name);  // validated: present, of the parameter's kind
    if (a->isRuntime()) {
      const RuntimeScalar& rs = a->runtime();
      out.push_back({static_cast<size_t>(ctx.list.bufferIndex(rs.buffer)), rs.index, rs.index + 1, false});
      continue;
    }
    if (param.kind != ParamKind::Buffer) continue;
    const BufferRef& ref = a->buffer();
    const auto bi = static_cast<size_t>(ctx.list.bufferIndex(ref.buffer));
    const uint64_t lo = ref.isView ? ref.offset : 0;
    out.push_back({bi, lo, lo + (ref.isView ? ref.count : ctx.list.buffers[bi].elements()), writes(param.access)});
  }
  return out;
}
}  // namespace

// Whole ops, not blocks: an op's blocks together cover each of its arguments (DESIGN section 3), so two
// ops conflict exactly when some pair of their arguments does.
bool launchesConflict(const PlanContext& ctx, uint32_t a, uint32_t b) {
  const std::vector<Touch> ta = touches(ctx, ctx.list.ops[a]), tb = touches(ctx, ctx.list.ops[b]);
  for (const Touch& x : ta)
    for (const Touch& y : tb)
      if (x.buffer == y.buffer && (x.write || y.write) && std::max(x.lo, y.lo) < std::min(x.hi, y.hi)) return true;
  return false;
}

}  // namespace sk::plan
