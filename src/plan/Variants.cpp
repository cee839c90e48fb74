// Kernel resolution and variant deduplication.
//
// Guarantees: ctx.kernels holds every declared kernel with its parameters
// (builtins looked up, so sourcePath is absolute for all); every launch op
// maps to exactly one KernelVariant, and two launches share a variant iff
// they use the same kernel with the same merged macros (kernel macros
// overridden by the op's). A variant's symbol is "<entry>__v<12 hex>" from a
// 64-bit FNV-1a hash of the kernel name, entry and canonical macros: stable
// across processes and runs, and distinct within a plan (checked).
#include <cstdio>
#include <set>

#include "superkernel/frontend/OpListPaths.h"
#include "plan/PlanInternal.h"
#include "support/Fnv1a.h"

namespace sk::plan {

Status resolveKernels(PlanContext& ctx) {
  for (const auto& k : ctx.list.kernels) {
    // The chosen target's declaration: a kernel it lacks is the error here.
    auto r = oplist::resolveKernel(k, ctx.list.target);
    if (!r)
      return oplist::pathError(ctx.list.origin,
                               "kernels" + oplist::pathKey(k.name) + (k.builtin.empty() ? ".sources" : ".builtin"),
                               r.error().message());
    ctx.kernels[k.name] = std::move(*r);
  }
  return Status::success();
}

Status buildVariants(PlanContext& ctx) {
  std::map<std::string, uint32_t> byKey;
  std::set<std::string> symbols;
  ctx.opVariant.assign(ctx.list.ops.size(), -1);
  for (size_t i = 0; i < ctx.list.ops.size(); ++i) {
    const Op& op = ctx.list.ops[i];
    if (op.kind != Op::Kind::Launch) continue;
    const KernelDecl& decl = ctx.kernels.at(op.kernel);
    std::map<std::string, std::string> macros = decl.macros;
    for (const auto& [k, v] : op.macros) macros[k] = v;
    // Canonical, unambiguous key: NUL cannot occur in names or macros.
    std::string key = decl.name + '\0' + decl.entry + '\0';
    for (const auto& [k, v] : macros) key += k + '=' + v + '\0';
    auto it = byKey.find(key);
    if (it == byKey.end()) {
      KernelVariant v;
      v.decl = decl;
      v.macros = macros;
      char hex[17];
      std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(fnv1a(key)));
      v.symbol = decl.entry + "__v" + std::string(hex, 12);
      if (!symbols.insert(v.symbol).second)
        return internalError("variant symbol collision on " + v.symbol + " (kernel " + decl.name + ")");
      it = byKey.emplace(key, static_cast<uint32_t>(ctx.plan.variants.size())).first;
      ctx.plan.variants.push_back(std::move(v));
    }
    ctx.opVariant[i] = static_cast<int>(it->second);
  }
  return Status::success();
}

}  // namespace sk::plan
