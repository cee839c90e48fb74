// Semantic validation of an op list (DESIGN section 3).
//
// Guarantees, for a list that passes: the target is known (cpu, ascend,
// cuda); options and scope options parse; names are unique and within
// limits; every builtin resolves and every kernel source file exists; every
// buffer's byte size fits in 64 bits and the configured limits (one buffer
// and all together) and its init file, if any, exists with the right size;
// every launch names a declared kernel, has block_dim in 1..maxBlockDim and
// exactly one argument per parameter of the right kind and dtype (scalars in
// range of their dtype), views are non-empty and inside their buffer; every
// wait follows a record of its event. The planner relies on all of this.
//
// Paths in messages are rebuilt from the in-memory list (kernels, buffers and
// args keep file order), so a Graph-recorded list gets the same messages as
// a parsed file.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "frontend/OpListInternal.h"
#include "superkernel/target/Targets.h"
#include "superkernel/frontend/Options.h"
#include "support/InputGrammar.h"

namespace sk {
namespace fs = std::filesystem;

namespace detail {
namespace {

Error err(const OpList& l, const std::string& path, const std::string& msg) { return pathError(l.origin, path, msg); }

Status checkName(const OpList& l, const std::string& name, const std::string& path, const OpListLimits& limits) {
  if (std::string p = grammar::nameProblem(name, limits.maxNameBytes); !p.empty()) return err(l, path, p);
  return Status::success();
}

// Macros become -D<name>=<value> argv items of the kernel's compile: the
// grammar (support/InputGrammar.h) keeps them to one token each.
Status checkMacros(const OpList& l, const std::map<std::string, std::string>& m, const std::string& path,
                   const OpListLimits& limits, const std::string& entry) {
  if (m.size() > limits.maxArgs)
    return err(l, path, std::to_string(m.size()) + " macros, over the limit of " + std::to_string(limits.maxArgs));
  for (const auto& [k, v] : m) {
    if (std::string p = grammar::macroNameProblem(k, entry); !p.empty()) return err(l, path + pathKey(k), p);
    if (std::string p = grammar::macroValueProblem(v); !p.empty()) return err(l, path + pathKey(k), p);
  }
  return Status::success();
}

std::string paramList(const KernelDecl& k) {
  std::string s;
  for (const auto& p : k.params) s += (s.empty() ? "" : ", ") + p.name;
  return s.empty() ? "none" : s;
}

}  // namespace

Status checkOptionsText(const OpList& l, const std::string& text, const std::string& path) {
  if (Status s = checkOptionString(text); !s) return err(l, path, s.error().message());
  return Status::success();
}

Status validateKernel(const OpList& l, size_t ki, const KernelDecl& k, const OpListLimits& limits) {
  const KernelDecl& declared = l.kernels[ki];
  std::string path = "kernels" + pathKey(declared.name);
  SK_RETURN_IF_ERROR(checkName(l, declared.name, path, limits));
  // For a builtin, the declaration's own file is the place to blame.
  std::string where = declared.builtin.empty() ? path : path + ".builtin (" + quote(declared.builtin) + ")";
  if (k.params.size() > limits.maxParams)
    return err(l, where + ".params", std::to_string(k.params.size()) + " parameters, over the limit of " +
                                        std::to_string(limits.maxParams));
  std::set<std::string> seen, scalarMacros;
  for (size_t i = 0; i < k.params.size(); ++i) {
    std::string pp = where + ".params[" + std::to_string(i) + "].name";
    const std::string& name = k.params[i].name;
    if (!isIdentifier(name)) return err(l, pp, "parameter name " + quote(name) + " is not a C identifier");
    if (!seen.insert(name).second) return err(l, pp, "duplicate parameter " + quote(name));
    if (k.params[i].kind != ParamKind::Scalar) continue;
    // Where scalars are compiled in (ascend), a scalar is the macro SK_<NAME>: it obeys the macro rules and
    // no two scalars may become one macro.
    const std::string macro = scalarMacroName(name);
    if (std::string p = grammar::macroNameProblem(macro, k.entry); !p.empty())
      return err(l, pp, "scalar parameter " + quote(name) + " becomes the macro " + macro +
                            " on targets that compile scalars in (ascend): " + p);
    if (!scalarMacros.insert(macro).second)
      return err(l, pp, "scalar parameter " + quote(name) + " becomes the macro " + macro +
                            ", as another scalar parameter does (names differing only in case)");
  }
  if (!isIdentifier(k.entry)) return err(l, where + ".entry", "entry " + quote(k.entry) + " is not a C identifier");
  // The back ends' keys, with their rules (target/Targets.h): as the parser checks them, since a declaration
  // built through the C++ API skips the parser, then the rules across the declaration.
  for (const auto& [key, value] : k.attributes) {
    const KernelAttribute* a = findKernelAttribute(key);
    if (!a) {
      std::string known;
      for (const std::string& n : kernelAttributeKeys()) known += (known.empty() ? "" : ", ") + n;
      return err(l, where + "." + key, "no back end defines the kernel key " + quote(key) + " (defined: " + known + ")");
    }
    if (value < a->min || value > a->max)
      return err(l, where + "." + key, "integer " + std::to_string(value) + " out of range " + std::to_string(a->min) +
                                           ".." + std::to_string(a->max));
    if (a->checkValue) {
      if (std::string p = a->checkValue(value); !p.empty()) return err(l, where + "." + key, std::to_string(value) + " " + p);
    }
    if (a->checkDecl) {
      if (std::string p = a->checkDecl(k); !p.empty()) return err(l, where + "." + key, p);
    }
  }
  SK_RETURN_IF_ERROR(checkMacros(l, k.macros, where + ".macros", limits, k.entry));
  if (k.source.empty() && k.sourcePath.empty()) return err(l, where + ".source", "missing source");
  std::error_code ec;
  // A relative path handed in through the C++ API could read as a flag on the compiler's command line.
  if (!k.sourcePath.empty() && k.sourcePath.string().front() == '-')
    return err(l, where + ".source", "source path " + quote(k.sourcePath.string()) + " starts with '-'");
  if (!fs::is_regular_file(k.sourcePath, ec))
    return err(l, where + ".source", "source file " + quote(k.sourcePath.string()) + " not found");
  return Status::success();
}

Status validateBuffer(const OpList& l, size_t bi, const OpListLimits& limits, uint64_t& totalBytes) {
  const BufferDecl& b = l.buffers[bi];
  std::string path = "buffers" + pathKey(b.name);
  SK_RETURN_IF_ERROR(checkName(l, b.name, path, limits));
  if (b.shape.size() > 16) return err(l, path + ".shape", "rank over the limit of 16");
  uint64_t n = 1;
  for (size_t i = 0; i < b.shape.size(); ++i) {
    int64_t d = b.shape[i];
    if (d < 1) return err(l, path + ".shape[" + std::to_string(i) + "]", "dimension " + std::to_string(d) + " must be >= 1");
    if (n > UINT64_MAX / static_cast<uint64_t>(d))
      return err(l, path + ".shape", "element count overflows 64 bits");
    n *= static_cast<uint64_t>(d);
  }
  uint64_t size = dtypeSize(b.dtype);
  if (n > UINT64_MAX / size) return err(l, path + ".shape", "byte size overflows 64 bits");
  uint64_t bytes = n * size;
  if (bytes > limits.maxBufferBytes)
    return err(l, path + ".shape", "buffer of " + std::to_string(bytes) + " bytes exceeds the limit of " +
                                       std::to_string(limits.maxBufferBytes) + " bytes");
  if (totalBytes + bytes > limits.maxTotalBytes || totalBytes + bytes < totalBytes)
    return err(l, path + ".shape", "all buffers together exceed the limit of " + std::to_string(limits.maxTotalBytes) + " bytes");
  totalBytes += bytes;
  if (b.init.kind == BufferInit::Kind::File) {
    if (b.init.file.empty()) return err(l, path + ".init.file", "must not be empty");
    fs::path p(b.init.file);
    if (p.is_relative()) p = l.baseDir / p;
    std::error_code ec;
    if (!fs::is_regular_file(p, ec)) return err(l, path + ".init.file", "init file " + quote(p.string()) + " not found");
    uint64_t fsize = fs::file_size(p, ec);
    if (ec || fsize != bytes)
      return err(l, path + ".init.file", "init file " + quote(p.string()) + " has " + std::to_string(fsize) +
                                             " bytes, the buffer " + std::to_string(bytes));
  }
  return Status::success();
}

// A runtime scalar (RuntimeScalar): the parameter takes one (declared "runtime"), the buffer exists, holds
// the parameter's dtype and has the element, and no macro fixes the parameter at compile time (a kernel's
// SK_<NAME> static-shape macro would silently win over the value read at run time).
Status checkRuntimeScalar(const OpList& l, const Op& op, const KernelDecl& k, const ParamDecl& p,
                          const RuntimeScalar& rs, const std::string& ap) {
  if (!p.runtime)
    return err(l, ap, "parameter " + quote(p.name) + " of kernel " + quote(op.kernel) +
                          " is compile-time: it takes a number, not a value read from buffer " + quote(rs.buffer) +
                          " at run time (a kernel declares \"runtime\": true on the scalar parameters it reads "
                          "only as values; on ascend the others are compiled in as macros)");
  const BufferDecl* b = l.findBuffer(rs.buffer);
  if (!b) return err(l, ap + ".from", "unknown buffer " + quote(rs.buffer));
  if (b->dtype != p.dtype)
    return err(l, ap + ".from", "buffer " + quote(rs.buffer) + " is " + dtypeName(b->dtype) + " but parameter " +
                                    quote(p.name) + " of kernel " + quote(op.kernel) + " is " + dtypeName(p.dtype) +
                                    " (a runtime scalar is read as the parameter's dtype)");
  if (rs.index >= b->elements())
    return err(l, ap + ".index", "index " + std::to_string(rs.index) + " is out of range of buffer " +
                                     quote(rs.buffer) + " (" + std::to_string(b->elements()) + " elements)");
  const std::string macro = scalarMacroName(p.name);
  for (const auto* macros : {&k.macros, &op.macros})
    if (macros->count(macro))
      return err(l, ap, "macro " + macro + " (" + (macros == &op.macros ? "the op's" : "the kernel's") +
                            " macros) fixes parameter " + quote(p.name) +
                            " at compile time, but its argument is a runtime value: drop one of the two");
  return Status::success();
}

Status validateLaunch(const OpList& l, size_t oi, const KernelDecl& k, const OpListLimits& limits) {
  const Op& op = l.ops[oi];
  std::string path = opPath(oi);
  SK_RETURN_IF_ERROR(checkName(l, op.name, path + ".name", limits));
  if (op.scope) SK_RETURN_IF_ERROR(checkName(l, *op.scope, path + ".scope", limits));
  if (op.blockDim < 1 || op.blockDim > limits.maxBlockDim)
    return err(l, path + ".block_dim", "block_dim " + std::to_string(op.blockDim) + " out of range 1.." +
                                           std::to_string(limits.maxBlockDim));
  if (op.stream >= limits.maxStreams)
    return err(l, path + ".stream", "stream " + std::to_string(op.stream) + " out of range 0.." +
                                        std::to_string(limits.maxStreams - 1));
  if (op.args.size() > limits.maxArgs)
    return err(l, path + ".args", std::to_string(op.args.size()) + " args, over the limit of " + std::to_string(limits.maxArgs));
  std::set<std::string> given;
  for (const auto& [name, arg] : op.args) {
    std::string ap = path + ".args" + pathKey(name);
    if (!given.insert(name).second) return err(l, ap, "argument given twice");
    const ParamDecl* p = k.findParam(name);
    if (!p)
      return err(l, ap, "kernel " + quote(op.kernel) + " has no parameter " + quote(name) + " (parameters: " + paramList(k) + ")");
    if (p->kind == ParamKind::Buffer) {
      if (arg.isRuntime())
        return err(l, ap, "parameter " + quote(name) + " is a buffer (" + dtypeName(p->dtype) +
                              "), got a runtime scalar {\"from\": " + quote(arg.runtime().buffer) +
                              "}: pass the buffer's name or a view {\"buffer\", \"offset\", \"count\"}");
      if (!arg.isBuffer())
        return err(l, ap, "parameter " + quote(name) + " is a buffer (" + dtypeName(p->dtype) + "), got a number");
      const BufferRef& ref = arg.buffer();
      const BufferDecl* b = l.findBuffer(ref.buffer);
      if (!b) return err(l, ap, "unknown buffer " + quote(ref.buffer));
      if (b->dtype != p->dtype)
        return err(l, ap, "buffer " + quote(ref.buffer) + " is " + dtypeName(b->dtype) + " but parameter " + quote(name) +
                              " of kernel " + quote(op.kernel) + " is " + dtypeName(p->dtype));
      if (ref.isView) {
        uint64_t n = b->elements();
        if (ref.count == 0) return err(l, ap, "view of buffer " + quote(ref.buffer) + " has count 0");
        if (ref.offset > n || ref.count > n - ref.offset)
          return err(l, ap, "view [" + std::to_string(ref.offset) + ", +" + std::to_string(ref.count) +
                                ") is out of bounds of buffer " + quote(ref.buffer) + " (" + std::to_string(n) + " elements)");
      }
    } else if (arg.isRuntime()) {
      SK_RETURN_IF_ERROR(checkRuntimeScalar(l, op, k, *p, arg.runtime(), ap));
    } else {
      if (arg.isBuffer())
        return err(l, ap, "parameter " + quote(name) + " is a scalar (" + dtypeName(p->dtype) + "), got buffer " +
                              quote(arg.buffer().buffer));
      const ScalarValue& v = arg.scalar();
      if (std::holds_alternative<double>(v)) {
        double d = std::get<double>(v);
        if (!dtypeIsFloat(p->dtype))
          return err(l, ap, "parameter " + quote(name) + " is " + dtypeName(p->dtype) + ", got a floating-point number");
        if (!std::isfinite(d)) return err(l, ap, "scalar is not finite");
      } else if (!dtypeIsFloat(p->dtype)) {
        // JSON integers reach us as int64 or (above INT64_MAX) uint64; the
        // dtype's own range decides (u64 takes 0 .. 2^64-1).
        auto [lo, hi] = dtypeIntRange(p->dtype);
        const __int128 x = *scalarInteger(v);
        if (x < lo || x > hi) {
          const std::string text = std::holds_alternative<uint64_t>(v) ? std::to_string(std::get<uint64_t>(v))
                                                                       : std::to_string(std::get<int64_t>(v));
          return err(l, ap, "value " + text + " out of range of " + dtypeName(p->dtype));
        }
      }
    }
  }
  for (const auto& p : k.params)
    if (!op.findArg(p.name))
      return err(l, path + ".args", "missing argument " + quote(p.name) + " (" +
                                        (p.kind == ParamKind::Buffer ? "buffer" : "scalar") + " parameter of kernel " +
                                        quote(op.kernel) + ")");
  SK_RETURN_IF_ERROR(checkMacros(l, op.macros, path + ".macros", limits, k.entry));
  return Status::success();
}

namespace {

// The buffer a collective's "in" or "out" names, with its element count
// (a view's count, else the buffer's size).
Expected<std::pair<const BufferDecl*, uint64_t>> collectiveBuffer(const OpList& l, const Op& op, const char* param,
                                                                   const std::string& path) {
  const ArgValue* a = op.findArg(param);
  std::string ap = path + ".args" + pathKey(param);
  if (!a) return err(l, path + ".args", std::string("missing argument \"") + param + "\" (a collective takes \"in\" and \"out\")");
  if (!a->isBuffer()) return err(l, ap, "a collective's argument is a buffer name or a view {\"buffer\", \"offset\", \"count\"}");
  const BufferRef& ref = a->buffer();
  const BufferDecl* b = l.findBuffer(ref.buffer);
  if (!b) return err(l, ap, "unknown buffer " + quote(ref.buffer));
  uint64_t n = b->elements();
  if (ref.isView) {
    if (ref.count == 0) return err(l, ap, "view of buffer " + quote(ref.buffer) + " has count 0");
    if (ref.offset > n || ref.count > n - ref.offset)
      return err(l, ap, "view [" + std::to_string(ref.offset) + ", +" + std::to_string(ref.count) +
                            ") is out of bounds of buffer " + quote(ref.buffer) + " (" + std::to_string(n) + " elements)");
    n = ref.count;
  }
  return std::make_pair(b, n);
}

}  // namespace

// Sizes follow the kind (g = the group's ranks): all_reduce in = out;
// all_gather out = g x in; reduce_scatter in = g x out; all_to_all in = out,
// a multiple of g. Every rank checks its own list the same way, so a rank
// whose sizes differ fails here or, with a list that is valid on its own,
// at the run's descriptor exchange (docs/COLLECTIVES.md).
Status validateCollective(const OpList& l, size_t oi, const OpListLimits& limits) {
  const Op& op = l.ops[oi];
  std::string path = opPath(oi);
  SK_RETURN_IF_ERROR(checkName(l, op.name, path + ".name", limits));
  if (op.scope) SK_RETURN_IF_ERROR(checkName(l, *op.scope, path + ".scope", limits));
  if (op.stream >= limits.maxStreams)
    return err(l, path + ".stream", "stream " + std::to_string(op.stream) + " out of range 0.." +
                                        std::to_string(limits.maxStreams - 1));
  const char* kind = collectiveKindName(op.collective);
  if (collectiveReduces(op.collective) && op.reduce == ReduceOp::None)
    return err(l, path, std::string(kind) + " needs \"reduce\": \"sum\" or \"max\"");
  if (!collectiveReduces(op.collective) && op.reduce != ReduceOp::None)
    return err(l, path + ".reduce", std::string(kind) + " takes no \"reduce\" (only all_reduce and reduce_scatter do)");
  auto g = l.groups.find(op.group);
  if (g == l.groups.end()) {
    std::string have;
    for (const auto& [n, _] : l.groups) have += (have.empty() ? "" : ", ") + quote(n);
    return err(l, path + ".group", "unknown group " + quote(op.group) + " (declare it in \"groups\": {" +
                                       quote(op.group) + ": {\"ranks\": [0, 1]}}" +
                                       (have.empty() ? "" : "; declared: " + have) + ")");
  }
  for (const auto& [name, _] : op.args)
    if (name != "in" && name != "out")
      return err(l, path + ".args" + pathKey(name), "a collective takes the arguments \"in\" and \"out\" only");
  SK_ASSIGN_OR_RETURN(auto in, collectiveBuffer(l, op, "in", path));
  SK_ASSIGN_OR_RETURN(auto out, collectiveBuffer(l, op, "out", path));
  if (in.first->dtype != out.first->dtype)
    return err(l, path + ".args.out", "buffer " + quote(out.first->name) + " is " + dtypeName(out.first->dtype) +
                                          " but \"in\" is " + dtypeName(in.first->dtype) + " (a collective keeps the dtype)");
  const DType dt = in.first->dtype;
  if (collectiveReduces(op.collective) && dt != DType::F32 && dt != DType::F64 && dt != DType::I32 && dt != DType::I64)
    return err(l, path + ".args.in", std::string(kind) + " reduces f32, f64, i32 or i64, not " + dtypeName(dt));
  const uint64_t ranks = g->second.ranks.size(), nIn = in.second, nOut = out.second;
  auto sizeErr = [&](const std::string& rule) {
    return err(l, path + ".args", std::string(kind) + " over group " + quote(op.group) + " (" + std::to_string(ranks) +
                                      " ranks) needs " + rule + ", got in " + std::to_string(nIn) + " and out " +
                                      std::to_string(nOut) + " elements");
  };
  switch (op.collective) {
    case CollectiveKind::AllReduce:
      if (nIn != nOut) return sizeErr("as many elements out as in");
      break;
    case CollectiveKind::AllGather:
      if (nOut != nIn * ranks) return sizeErr("out = ranks x in");
      break;
    case CollectiveKind::ReduceScatter:
      if (nIn != nOut * ranks) return sizeErr("in = ranks x out");
      break;
    case CollectiveKind::AllToAll:
      if (nIn != nOut || nIn % ranks != 0) return sizeErr("in = out, a multiple of the ranks");
      break;
  }
  // A different buffer for in and out must not overlap it (the runtime
  // reads every input before it writes, but only within one buffer).
  const BufferRef& ri = op.findArg("in")->buffer();
  const BufferRef& ro = op.findArg("out")->buffer();
  if (ri.buffer == ro.buffer && !(ri.offset == ro.offset && nIn == nOut) &&
      ri.offset < ro.offset + nOut && ro.offset < ri.offset + nIn)
    return err(l, path + ".args.out", "\"out\" overlaps \"in\" without being the same elements (use one buffer in place, or two that do not overlap)");
  return Status::success();
}

}  // namespace detail

Status validateOpList(const OpList& l, const OpListLimits& limits) {
  using namespace detail;
  if (l.version != OpList::kFormatVersion)
    return err(l, "version", "unsupported version " + std::to_string(l.version) + " (supported: 1)");
  {
    if (!isRegisteredTarget(l.target)) {
      std::string names;
      for (const auto& t : targetNames()) names += (names.empty() ? "" : ", ") + t;
      return err(l, "target", "unknown target " + quote(l.target) + " (accepted: " + names + ")");
    }
  }
  if (std::string p = grammar::archProblem(l.arch); !p.empty()) return err(l, "arch", p);
  SK_RETURN_IF_ERROR(checkOptionsText(l, l.options, "options"));
  if (l.kernels.size() > limits.maxKernels) return err(l, "kernels", "over the limit of " + std::to_string(limits.maxKernels));
  if (l.buffers.size() > limits.maxBuffers) return err(l, "buffers", "over the limit of " + std::to_string(limits.maxBuffers));
  if (l.ops.size() > limits.maxOps) return err(l, "ops", "over the limit of " + std::to_string(limits.maxOps));

  std::map<std::string, KernelDecl> resolved;
  for (size_t i = 0; i < l.kernels.size(); ++i) {
    const KernelDecl& k = l.kernels[i];
    std::string path = "kernels" + pathKey(k.name);
    if (resolved.count(k.name)) return err(l, path, "duplicate kernel " + quote(k.name));
    if (k.name.rfind(kCollectiveKernelPrefix, 0) == 0)
      return err(l, path, std::string("kernel names starting \"") + kCollectiveKernelPrefix +
                              "\" are reserved for the collectives the planner lowers (rename the kernel)");
    auto r = resolveKernelForChecks(k, l.target);
    if (!r) return err(l, path + (k.builtin.empty() ? ".sources" : ".builtin"), r.error().message());
    SK_RETURN_IF_ERROR(validateKernel(l, i, *r, limits));
    resolved.emplace(k.name, std::move(*r));
  }
  std::set<std::string> bufferNames;
  uint64_t total = 0;
  for (size_t i = 0; i < l.buffers.size(); ++i) {
    if (!bufferNames.insert(l.buffers[i].name).second)
      return err(l, "buffers" + pathKey(l.buffers[i].name), "duplicate buffer " + quote(l.buffers[i].name));
    SK_RETURN_IF_ERROR(validateBuffer(l, i, limits, total));
  }
  for (const auto& [name, g] : l.groups) {
    std::string path = "groups" + pathKey(name);
    SK_RETURN_IF_ERROR(checkName(l, name, path, limits));
    if (g.ranks.empty()) return err(l, path + ".ranks", "a group needs at least one rank");
    if (g.ranks.size() > kMaxCollectiveRanks)
      return err(l, path + ".ranks", "over the limit of " + std::to_string(kMaxCollectiveRanks) + " ranks");
    for (size_t i = 0; i < g.ranks.size(); ++i) {
      std::string rp = path + ".ranks[" + std::to_string(i) + "]";
      if (g.ranks[i] >= kMaxCollectiveRanks)
        return err(l, rp, "rank " + std::to_string(g.ranks[i]) + " out of range 0.." + std::to_string(kMaxCollectiveRanks - 1));
      if (i > 0 && g.ranks[i] <= g.ranks[i - 1])
        return err(l, rp, "ranks must be strictly ascending (a rank's place in the list is its index in the group)");
    }
  }
  for (const auto& [name, sc] : l.scopes) {
    std::string path = "scopes" + pathKey(name);
    SK_RETURN_IF_ERROR(checkName(l, name, path, limits));
    SK_RETURN_IF_ERROR(checkOptionsText(l, sc.options, path + ".options"));
  }
  std::map<std::string, size_t> opNames;
  std::set<std::string> recorded;
  for (size_t i = 0; i < l.ops.size(); ++i) {
    const Op& op = l.ops[i];
    std::string path = opPath(i);
    if (op.kind == Op::Kind::Collective) {
      if (auto [it, fresh] = opNames.emplace(op.name, i); !fresh)
        return err(l, path + ".name", "duplicate op name " + quote(op.name) + " (also " + opPath(it->second) + ")");
      SK_RETURN_IF_ERROR(validateCollective(l, i, limits));
    } else if (op.kind == Op::Kind::Launch) {
      auto k = resolved.find(op.kernel);
      if (k == resolved.end()) return err(l, path + ".kernel", "unknown kernel " + quote(op.kernel));
      if (auto [it, fresh] = opNames.emplace(op.name, i); !fresh)
        return err(l, path + ".name", "duplicate op name " + quote(op.name) + " (also " + opPath(it->second) + ")");
      SK_RETURN_IF_ERROR(validateLaunch(l, i, k->second, limits));
    } else {
      const char* key = op.kind == Op::Kind::Record ? ".record" : ".wait";
      SK_RETURN_IF_ERROR(checkName(l, op.event, path + key, limits));
      if (op.stream >= limits.maxStreams)
        return err(l, path + ".stream", "stream " + std::to_string(op.stream) + " out of range 0.." +
                                            std::to_string(limits.maxStreams - 1));
      if (op.kind == Op::Kind::Record) recorded.insert(op.event);
      else if (!recorded.count(op.event))
        return err(l, path + ".wait", "event " + quote(op.event) + " is waited for before it is recorded");
    }
  }
  return Status::success();
}

}  // namespace sk
