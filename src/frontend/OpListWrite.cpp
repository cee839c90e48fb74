// Op list v1 writer: OpList -> JSON text.
//
// Guarantees: parseOpList(writeOpList(x)) == x for any valid x (with the same
// origin and baseDir), and the output is a fixed point: writing the parse of
// written text gives the same text. Keys come in a fixed order (top level as
// in DESIGN section 3; kernels, buffers and args in list order); optional
// keys are written only when they differ from their default or were written
// in the source (the *Written / explicit* flags), so nothing is lost.
#include "frontend/OpListInternal.h"

namespace sk {

namespace detail {

namespace {
ojson writeMacros(const std::map<std::string, std::string>& macros) {
  ojson m = ojson::object();
  for (const auto& [n, v] : macros) m[n] = v;
  return m;
}
}  // namespace

ojson writeKernelObject(const KernelDecl& k) {
  ojson j = ojson::object();
  if (!k.builtin.empty()) {
    j["builtin"] = k.builtin;
    // Macros set over the builtin's own (the benchmark's SK_KERNELS_BASELINE): part of what the list means,
    // so of every key computed from its text.
    if (!k.macros.empty()) j["macros"] = writeMacros(k.macros);
    return j;
  }
  if (!k.sources.empty()) {
    ojson ss = ojson::object();
    for (const auto& [t, s] : k.sources) ss[t] = s.empty() ? k.sourcePaths.at(t).string() : s;
    j["sources"] = std::move(ss);
  } else {
    j["source"] = k.source.empty() ? k.sourcePath.string() : k.source;
  }
  j["entry"] = k.entry;
  j["core_type"] = coreTypeName(k.coreType);
  if (k.earlyStart) j["early_start"] = true;
  if (k.kernelSync) j["kernel_sync"] = true;
  if (k.blockDimInvariant) j["block_dim_invariant"] = true;
  for (const auto& [key, value] : k.attributes) j[key] = value;  // a back end's keys (target/Targets.h)
  ojson params = ojson::array();
  for (const auto& p : k.params) {
    ojson pj = ojson::object();
    pj["name"] = p.name;
    pj["kind"] = p.kind == ParamKind::Buffer ? "buffer" : "scalar";
    pj["dtype"] = dtypeName(p.dtype);
    if (p.kind == ParamKind::Buffer) {
      pj["access"] = accessName(p.access);
      pj["partition"] = partitionName(p.partition);
    }
    if (p.runtime) pj["runtime"] = true;
    params.push_back(std::move(pj));
  }
  j["params"] = std::move(params);
  if (!k.macros.empty()) j["macros"] = writeMacros(k.macros);
  return j;
}

namespace {

ojson writeArg(const ArgValue& a) {
  if (a.isBuffer()) {
    const BufferRef& r = a.buffer();
    if (!r.isView) return r.buffer;
    ojson v = ojson::object();
    v["buffer"] = r.buffer;
    v["offset"] = r.offset;
    v["count"] = r.count;
    return v;
  }
  if (a.isRuntime()) {
    ojson v = ojson::object();
    v["from"] = a.runtime().buffer;
    v["index"] = a.runtime().index;
    return v;
  }
  if (std::holds_alternative<int64_t>(a.scalar())) return std::get<int64_t>(a.scalar());
  if (std::holds_alternative<uint64_t>(a.scalar())) return std::get<uint64_t>(a.scalar());
  // nlohmann writes doubles so that they read back bit-identical and always
  // with a '.' or exponent, so a float stays a float through the round trip.
  return std::get<double>(a.scalar());
}

ojson writeOp(const Op& op) {
  ojson j = ojson::object();
  if (op.kind == Op::Kind::Record || op.kind == Op::Kind::Wait) {
    j[op.kind == Op::Kind::Record ? "record" : "wait"] = op.event;
    j["stream"] = op.stream;
    return j;
  }
  j["name"] = op.name;
  if (op.kind == Op::Kind::Collective) {
    j["collective"] = collectiveKindName(op.collective);
    if (op.reduce != ReduceOp::None) j["reduce"] = reduceOpName(op.reduce);
    j["group"] = op.group;
  } else {
    j["kernel"] = op.kernel;
    j["block_dim"] = op.blockDim;
  }
  j["stream"] = op.stream;
  if (op.scope) j["scope"] = *op.scope;
  else if (op.scopeNull) j["scope"] = nullptr;
  if (op.fusibleWritten || !op.fusible) j["fusible"] = op.fusible;
  ojson args = ojson::object();
  for (const auto& [n, v] : op.args) args[n] = writeArg(v);
  j["args"] = std::move(args);
  if (!op.macros.empty()) j["macros"] = writeMacros(op.macros);
  return j;
}

const char* initName(BufferInit::Kind k) {
  switch (k) {
    case BufferInit::Kind::Zeros: return "zeros";
    case BufferInit::Kind::Ones: return "ones";
    case BufferInit::Kind::Random: return "random";
    case BufferInit::Kind::Iota: return "iota";
    case BufferInit::Kind::File: return "file";
  }
  return "zeros";
}

}  // namespace
}  // namespace detail

std::string writeOpList(const OpList& list) {
  using detail::ojson;
  ojson j = ojson::object();
  j["format"] = "superkernel.oplist";
  j["version"] = list.version;
  j["target"] = list.target;
  j["arch"] = list.arch;
  if (!list.options.empty()) j["options"] = list.options;
  ojson kernels = ojson::object();
  for (const auto& k : list.kernels) kernels[k.name] = detail::writeKernelObject(k);
  j["kernels"] = std::move(kernels);
  ojson buffers = ojson::object();
  for (const auto& b : list.buffers) {
    ojson bj = ojson::object();
    bj["dtype"] = dtypeName(b.dtype);
    bj["shape"] = b.shape;
    if (b.init.kind == BufferInit::Kind::File) bj["init"] = ojson{{"file", b.init.file}};
    else if (b.init.kind != BufferInit::Kind::Zeros || b.init.explicitZeros) bj["init"] = detail::initName(b.init.kind);
    buffers[b.name] = std::move(bj);
  }
  j["buffers"] = std::move(buffers);
  ojson ops = ojson::array();
  for (const auto& op : list.ops) ops.push_back(detail::writeOp(op));
  j["ops"] = std::move(ops);
  if (!list.scopes.empty()) {
    ojson scopes = ojson::object();
    for (const auto& [n, s] : list.scopes) {
      ojson sj = ojson::object();
      if (!s.options.empty()) sj["options"] = s.options;
      scopes[n] = std::move(sj);
    }
    j["scopes"] = std::move(scopes);
  }
  if (!list.groups.empty()) {
    ojson groups = ojson::object();
    for (const auto& [n, g] : list.groups) groups[n] = ojson{{"ranks", g.ranks}};
    j["groups"] = std::move(groups);
  }
  // Invalid UTF-8 in a Graph-recorded name must not throw from a writer.
  return j.dump(2, ' ', false, ojson::error_handler_t::replace) + "\n";
}

}  // namespace sk
