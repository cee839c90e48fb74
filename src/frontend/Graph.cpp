// Graph / Scope recorder (see Graph.h).
//
// Guarantees: opList() is always a list validateOpList() accepts (every
// record call is checked with the same per-item validators the file parser
// uses, and a failed call leaves the list unchanged), so what a graph engine
// records plans exactly like the JSON it exports.
#include "superkernel/frontend/Graph.h"

#include <algorithm>
#include <fstream>

#include "frontend/OpListInternal.h"
#include "superkernel/frontend/Options.h"
#include "support/InputGrammar.h"

namespace sk {
namespace fs = std::filesystem;

Graph::Graph(std::string target, std::string arch) {
  list_.target = std::move(target);
  list_.arch = std::move(arch);
  std::error_code ec;
  list_.baseDir = fs::current_path(ec);
}

Status Graph::setOptions(const std::string& options) {
  SK_RETURN_IF_ERROR(detail::checkOptionsText(list_, options, "options"));
  list_.options = options;
  return Status::success();
}

void Graph::setBaseDir(const fs::path& dir) {
  std::error_code ec;
  fs::path abs = fs::absolute(dir, ec);
  list_.baseDir = ec ? dir : abs.lexically_normal();
}

Status Graph::addKernel(KernelDecl decl) {
  std::string path = "kernels" + detail::pathKey(decl.name);
  if (decl.name.empty()) return badInput("kernels: kernel name must not be empty");
  if (list_.findKernel(decl.name)) return badInput(path + ": duplicate kernel " + detail::quote(decl.name));
  if (!decl.builtin.empty()) return addBuiltinKernel(decl.name, decl.builtin);
  if (decl.sourcePath.empty()) {
    if (decl.source.empty()) return badInput(path + ".source: missing source");
    fs::path p(decl.source);
    if (p.is_relative()) p = list_.baseDir / p;
    std::error_code ec;
    fs::path abs = fs::absolute(p, ec);
    decl.sourcePath = (ec ? p : abs).lexically_normal();
  }
  // The writer emits `source`; keep it filled so the export reads back equal.
  if (decl.source.empty()) decl.source = decl.sourcePath.string();
  list_.kernels.push_back(decl);
  Status s = detail::validateKernel(list_, list_.kernels.size() - 1, decl, OpListLimits{});
  if (!s) {
    list_.kernels.pop_back();
    return s;
  }
  resolved_[decl.name] = std::move(decl);
  return Status::success();
}

Status Graph::addBuiltinKernel(const std::string& name, const std::string& builtin) {
  std::string path = "kernels" + detail::pathKey(name);
  if (name.empty()) return badInput("kernels: kernel name must not be empty");
  if (list_.findKernel(name)) return badInput(path + ": duplicate kernel " + detail::quote(name));
  KernelDecl decl;
  decl.name = name;
  decl.builtin = builtin;
  auto r = detail::resolveKernel(decl, list_.target);
  if (!r) return r.error().context(path + ".builtin");
  list_.kernels.push_back(decl);
  Status s = detail::validateKernel(list_, list_.kernels.size() - 1, *r, OpListLimits{});
  if (!s) {
    list_.kernels.pop_back();
    return s;
  }
  resolved_[name] = std::move(*r);
  return Status::success();
}

Status Graph::addBuffer(const std::string& name, DType dtype, std::vector<int64_t> shape, void* host, BufferInit init) {
  if (list_.findBuffer(name)) return badInput("buffers" + detail::pathKey(name) + ": duplicate buffer " + detail::quote(name));
  BufferDecl b;
  b.name = name;
  b.dtype = dtype;
  b.shape = std::move(shape);
  b.init = std::move(init);
  list_.buffers.push_back(std::move(b));
  uint64_t total = 0;
  for (size_t i = 0; i + 1 < list_.buffers.size(); ++i) total += list_.buffers[i].bytes();
  Status s = detail::validateBuffer(list_, list_.buffers.size() - 1, OpListLimits{}, total);
  if (!s) {
    list_.buffers.pop_back();
    return s;
  }
  host_.push_back(host);
  return Status::success();
}

void* Graph::hostPointer(const std::string& buffer) const {
  int i = list_.bufferIndex(buffer);
  return i < 0 ? nullptr : host_[static_cast<size_t>(i)];
}

Status Graph::record(const std::string& event, uint32_t stream) {
  std::string path = detail::opPath(list_.ops.size());
  if (std::string p = grammar::nameProblem(event, OpListLimits{}.maxNameBytes); !p.empty())
    return badInput(path + ".record: " + p);
  if (stream >= OpListLimits{}.maxStreams) return badInput(path + ".stream: stream " + std::to_string(stream) + " out of range");
  Op op;
  op.kind = Op::Kind::Record;
  op.event = event;
  op.stream = stream;
  list_.ops.push_back(std::move(op));
  ran_.push_back(false);
  return Status::success();
}

Status Graph::wait(const std::string& event, uint32_t stream) {
  std::string path = detail::opPath(list_.ops.size());
  if (stream >= OpListLimits{}.maxStreams) return badInput(path + ".stream: stream " + std::to_string(stream) + " out of range");
  bool recorded = std::any_of(list_.ops.begin(), list_.ops.end(),
                              [&](const Op& o) { return o.kind == Op::Kind::Record && o.event == event; });
  if (!recorded) return badInput(path + ".wait: event " + detail::quote(event) + " is waited for before it is recorded");
  Op op;
  op.kind = Op::Kind::Wait;
  op.event = event;
  op.stream = stream;
  list_.ops.push_back(std::move(op));
  ran_.push_back(false);
  return Status::success();
}

namespace {
// Launches and collectives share one namespace of op names.
Status checkFreshOpName(const OpList& list, const std::string& name, const std::string& path) {
  for (const auto& o : list.ops)
    if ((o.kind == Op::Kind::Launch || o.kind == Op::Kind::Collective) && o.name == name)
      return badInput(path + ".name: duplicate op name " + detail::quote(name));
  return Status::success();
}
}  // namespace

Status Graph::launch(LaunchDesc desc) {
  size_t index = list_.ops.size();
  std::string path = detail::opPath(index);
  for (const auto& s : scopes_)
    if (!s.status.ok()) return s.status.error().context(path);
  auto k = resolved_.find(desc.kernel);
  if (k == resolved_.end()) return badInput(path + ".kernel: unknown kernel " + detail::quote(desc.kernel));
  SK_RETURN_IF_ERROR(checkFreshOpName(list_, desc.name, path));
  Op op;
  op.kind = Op::Kind::Launch;
  op.name = std::move(desc.name);
  op.kernel = std::move(desc.kernel);
  op.blockDim = desc.blockDim;
  op.stream = desc.stream;
  op.fusible = desc.fusible;
  op.fusibleWritten = !desc.fusible;
  op.args = std::move(desc.args);
  op.macros = std::move(desc.macros);
  const KernelDecl& decl = k->second;
  return addOp(std::move(op), [&](size_t i) { return detail::validateLaunch(list_, i, decl, OpListLimits{}); });
}

Status Graph::addOp(Op op, const std::function<Status(size_t index)>& check) {
  const size_t index = list_.ops.size();
  bool scoped = !scopes_.empty();
  if (scoped) {
    const ScopeEntry& inner = scopes_.back();
    if (inner.never) op.scopeNull = true;
    else op.scope = inner.name;
  }
  list_.ops.push_back(std::move(op));
  Status s = check(index);
  if (!s) {
    list_.ops.pop_back();
    return s;
  }
  ran_.push_back(!scoped);
  if (!scoped && hook_) return hook_(list_, index);
  return Status::success();
}

Status Graph::addGroup(const std::string& name, std::vector<uint32_t> ranks) {
  std::string path = "groups" + detail::pathKey(name);
  if (std::string p = grammar::nameProblem(name, OpListLimits{}.maxNameBytes); !p.empty()) return badInput(path + ": " + p);
  if (list_.groups.count(name)) return badInput(path + ": duplicate group " + detail::quote(name));
  if (ranks.empty()) return badInput(path + ".ranks: a group needs at least one rank");
  for (size_t i = 0; i < ranks.size(); ++i)
    if (ranks[i] >= kMaxCollectiveRanks || (i > 0 && ranks[i] <= ranks[i - 1]))
      return badInput(path + ".ranks[" + std::to_string(i) + "]: ranks must be strictly ascending and below " +
                      std::to_string(kMaxCollectiveRanks));
  list_.groups[name] = CollectiveGroup{std::move(ranks)};
  return Status::success();
}

Status Graph::collective(CollectiveDesc desc) {
  std::string path = detail::opPath(list_.ops.size());
  for (const auto& s : scopes_)
    if (!s.status.ok()) return s.status.error().context(path);
  SK_RETURN_IF_ERROR(checkFreshOpName(list_, desc.name, path));
  Op op;
  op.kind = Op::Kind::Collective;
  op.name = std::move(desc.name);
  op.collective = desc.kind;
  op.reduce = desc.reduce;
  op.group = std::move(desc.group);
  op.stream = desc.stream;
  op.fusible = desc.fusible;
  op.fusibleWritten = !desc.fusible;
  op.args = {{"in", std::move(desc.in)}, {"out", std::move(desc.out)}};
  return addOp(std::move(op), [&](size_t i) { return detail::validateCollective(list_, i, OpListLimits{}); });
}

std::string Graph::writeJson() const { return writeOpList(list_); }

Status Graph::writeJsonFile(const fs::path& file) const {
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  if (!out) return ioError(file.string() + ": cannot open for writing");
  out << writeJson();
  out.close();
  if (!out) return ioError(file.string() + ": write failed");
  return Status::success();
}

uint64_t Graph::pushScope(std::string name, bool never, const std::string& options) {
  ScopeEntry e;
  e.id = nextScopeId_++;
  e.never = never;
  e.name = std::move(name);
  std::string path = "scopes" + detail::pathKey(e.name);
  if (!never) {
    if (std::string p = grammar::nameProblem(e.name, OpListLimits{}.maxNameBytes); !p.empty()) {
      e.status = badInput(path + ": " + p);
    } else if (Status st = detail::checkOptionsText(list_, options, path + ".options"); !st) {
      e.status = st;
    } else {
      auto it = list_.scopes.find(e.name);
      if (it == list_.scopes.end()) {
        list_.scopes[e.name].options = options;
      } else if (!options.empty() && it->second.options != options) {
        e.status = badInput(path + ".options: scope reopened with options " + detail::quote(options) +
                            ", first opened with " + detail::quote(it->second.options));
      }
    }
  }
  scopes_.push_back(std::move(e));
  return scopes_.back().id;
}

void Graph::popScope(uint64_t id) {
  // Normally the innermost; by id so that an out-of-order destruction cannot
  // pop somebody else's scope.
  for (size_t i = scopes_.size(); i-- > 0;)
    if (scopes_[i].id == id) {
      scopes_.erase(scopes_.begin() + static_cast<std::ptrdiff_t>(i));
      return;
    }
}

Scope::Scope(Graph& graph, std::string name, const std::string& options) : graph_(graph) {
  id_ = graph_.pushScope(std::move(name), false, options);
  status_ = graph_.scopes_.back().status;
}

Scope::Scope(Graph& graph) : graph_(graph) { id_ = graph_.pushScope({}, true, {}); }

Scope::~Scope() { graph_.popScope(id_); }

}  // namespace sk
