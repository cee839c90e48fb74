// Variant specialisation for targets whose sub-kernels take their scalars and
// block count at compile time (MachineModel::staticArguments; ascend).
//
// Guarantees (only when the machine model asks for it; otherwise nothing
// changes): a runtime scalar (BoundArg::runtime) is recorded by name and slot
// (KernelVariant::runtimeScalars; the device passes the slot's address), or is
// one BadInput error naming the op and the argument where the machine model
// says its device cannot (MachineModel::runtimeScalars); otherwise after specializeVariants, every op of the step points at a
// KernelVariant with specialised = true that carries the op's scalar values
// (parameter order; runtime scalars by slot, never by value), its block count inside a SuperKernel (0 for an unfused
// step) and whether its own early-start calls are honoured (fused,
// early-start=1, the kernel declares it). Two ops share a specialised variant
// iff their base variant and all of these are equal; its symbol is the base
// symbol plus "_s" and 8 hex digits of a hash of them, distinct within the
// plan (two different specialisations whose hashes collide get "_1", "_2",
// ... appended to the second one's symbol). Runs after coarsenBlocks (block counts are final) and
// before schedulePreload (which compares variants). dropUnusedVariants then
// removes the base variants no op references and renumbers every index.
#include <cstdio>
#include <cstring>
#include <set>

#include "plan/PlanInternal.h"
#include "support/Fnv1a.h"

namespace sk::plan {

namespace {

// One exact spelling per value (doubles as their bits).
std::string scalarKey(const ScalarValue& v) {
  if (const auto* i = std::get_if<int64_t>(&v)) return "i" + std::to_string(*i);
  if (const auto* u = std::get_if<uint64_t>(&v)) return "u" + std::to_string(*u);
  uint64_t bits = 0;
  const double d = std::get<double>(v);
  std::memcpy(&bits, &d, sizeof bits);
  return "d" + std::to_string(bits);
}

bool sameSpecialisation(const KernelVariant& a, const KernelVariant& b) {
  return a.macros == b.macros && a.decl.name == b.decl.name && a.staticScalars == b.staticScalars &&
         a.runtimeScalars == b.runtimeScalars &&
         a.staticBlocks == b.staticBlocks && a.ownEarlyStart == b.ownEarlyStart;
}

}  // namespace

Status specializeVariants(PlanContext& ctx, SuperKernelPlan& sk) {
  if (!ctx.config.machine.staticArguments) return Status::success();
  for (PlannedOp& op : sk.ops) {
    const KernelVariant& base = ctx.plan.variants.at(op.variant);
    if (base.specialised) return internalError("specializeVariants: op " + op.name + " is specialised already");
    KernelVariant v = base;
    v.specialised = true;
    v.staticScalars.clear();
    v.runtimeScalars.clear();
    std::string key = base.symbol + '\0';
    for (size_t i = 0; i < op.args.size(); ++i) {
      const BoundArg& a = op.args[i];
      if (a.kind != ParamKind::Scalar) continue;
      if (a.runtime) {
        if (!ctx.config.machine.runtimeScalars) {
          // The device cannot hand the object a value read at launch: one clear error here rather than an
          // object that fails to compile for a missing macro.
          return badInput("op " + op.name + " argument " + base.decl.params.at(i).name + ": a runtime value " +
                          "(\"from\") on target " + ctx.config.machine.target +
                          ", whose sub-kernels take their scalars at compile time, is not supported there; pass "
                          "a number, or run the list on cpu, cuda or cuda-sim");
        }
        // The object reads slot runtimeSlot of its launch: the slot, never the value, is part of it.
        v.runtimeScalars.emplace_back(base.decl.params.at(i).name, a.runtimeSlot);
        key += "runtime " + v.runtimeScalars.back().first + "@" + std::to_string(a.runtimeSlot) + ';';
        continue;
      }
      v.staticScalars.push_back(a.scalar);
      key += scalarKey(a.scalar) + ';';
    }
    v.staticBlocks = sk.fused ? op.blockDim : 0;
    v.ownEarlyStart = sk.fused && op.earlyStart;
    key += "blocks=" + std::to_string(v.staticBlocks) + ";own_early_start=" + (v.ownEarlyStart ? "1" : "0");
    char hex[9];
    std::snprintf(hex, sizeof hex, "%08llx", static_cast<unsigned long long>(fnv1a(key) & 0xffffffffull));
    // Reuse an equal specialisation. Two different ones whose 32-bit hashes
    // collide get the next free suffix ("_s<hash>_1", ...): rare, and then
    // only the symbol differs, never which object an op runs.
    int found = -1;
    for (uint32_t probe = 0; found < 0; ++probe) {
      v.symbol = base.symbol + "_s" + hex + (probe ? "_" + std::to_string(probe) : std::string());
      bool taken = false;
      for (size_t i = 0; i < ctx.plan.variants.size(); ++i) {
        const KernelVariant& o = ctx.plan.variants[i];
        if (!o.specialised || o.symbol != v.symbol) continue;
        taken = true;
        if (sameSpecialisation(o, v)) found = static_cast<int>(i);
        break;
      }
      if (!taken) break;
    }
    if (found < 0) {
      found = static_cast<int>(ctx.plan.variants.size());
      ctx.plan.variants.push_back(std::move(v));
    }
    op.variant = static_cast<uint32_t>(found);
  }
  return Status::success();
}

void dropUnusedVariants(FusionPlan& plan) {
  std::vector<int> remap(plan.variants.size(), -1);
  std::set<uint32_t> used;
  for (const SuperKernelPlan& sk : plan.steps)
    for (const PlannedOp& op : sk.ops) {
      used.insert(op.variant);
      if (op.preloadVariant >= 0) used.insert(static_cast<uint32_t>(op.preloadVariant));
    }
  std::vector<KernelVariant> kept;
  for (uint32_t i : used) {
    remap[i] = static_cast<int>(kept.size());
    kept.push_back(std::move(plan.variants[i]));
  }
  plan.variants = std::move(kept);
  for (SuperKernelPlan& sk : plan.steps)
    for (PlannedOp& op : sk.ops) {
      op.variant = static_cast<uint32_t>(remap[op.variant]);
      if (op.preloadVariant >= 0) op.preloadVariant = remap[static_cast<size_t>(op.preloadVariant)];
    }
}

}  // namespace sk::plan
