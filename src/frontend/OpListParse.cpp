// Op list v1 parser (DESIGN section 3): JSON text -> OpList.
//
// Guarantees: never throws and never crashes on any input; rejects files
// over OpListLimits::maxFileBytes before parsing and nesting deeper than
// maxDepth while parsing (nlohmann's parser callback sees every container
// start before the container is built); rejects duplicate object keys and
// unknown keys everywhere; every error names the file and the JSON path
// ("x.json: ops[3].args.z: ..."). Structure and types are checked here;
// cross-references and sizes are checked by validateOpList(), which
// parseOpList() runs last, so a parsed list is always a valid one.
#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "frontend/OpListInternal.h"
#include "superkernel/target/Targets.h"
#include "support/InputGrammar.h"

namespace sk {
namespace fs = std::filesystem;

namespace detail {
namespace {

// Thrown from the parser callback to stop parsing; caught right below.
struct StopParse {
  std::string path;
  std::string message;
};

// Tracks where the parser is, so that callback errors can name a JSON path.
struct Frame {
  bool isArray = false;
  size_t index = 0;        // arrays: index of the element being parsed
  std::string key;         // objects: key of the member being parsed
  std::set<std::string> keys;
};

std::string framesPath(const std::vector<Frame>& frames, size_t upTo) {
  std::string p;
  for (size_t i = 0; i < upTo && i < frames.size(); ++i) {
    if (frames[i].isArray) p += "[" + std::to_string(frames[i].index) + "]";
    else p += pathKey(frames[i].key);
  }
  return p;
}

void elementDone(std::vector<Frame>& frames) {
  if (!frames.empty() && frames.back().isArray) ++frames.back().index;
}

}  // namespace

Expected<ojson> parseJsonText(std::string_view text, const std::string& origin, const OpListLimits& limits) {
  if (text.size() > limits.maxFileBytes)
    return pathError(origin, "", "file is " + std::to_string(text.size()) + " bytes, over the limit of " +
                                     std::to_string(limits.maxFileBytes));
  std::vector<Frame> frames;
  const uint32_t maxDepth = limits.maxDepth;
  ojson::parser_callback_t cb = [&](int depth, nlohmann::detail::parse_event_t ev, ojson& parsed) -> bool {
    using E = nlohmann::detail::parse_event_t;
    switch (ev) {
      case E::object_start:
      case E::array_start:
        if (static_cast<uint32_t>(depth) >= maxDepth)
          throw StopParse{framesPath(frames, frames.size()),
                          "nesting deeper than the limit of " + std::to_string(maxDepth)};
        frames.push_back(Frame{ev == E::array_start, 0, {}, {}});
        break;
      case E::key: {
        std::string k = parsed.is_string() ? parsed.get<std::string>() : std::string();
        if (!frames.empty()) {
          if (!frames.back().keys.insert(k).second)
            throw StopParse{framesPath(frames, frames.size() - 1) + pathKey(k), "duplicate key " + quote(k)};
          frames.back().key = k;
        }
        break;
      }
      case E::object_end:
      case E::array_end:
        if (!frames.empty()) frames.pop_back();
        elementDone(frames);
        break;
      case E::value:
        elementDone(frames);
        break;
    }
    return true;
  };
  try {
    return ojson::parse(text.begin(), text.end(), cb, /*allow_exceptions=*/true, /*ignore_comments=*/false);
  } catch (const StopParse& s) {
    return pathError(origin, s.path, s.message);
  } catch (const ojson::exception& e) {
    // "[json.exception.parse_error.101] parse error at line 1, column 2: ..." -> keep the part after "] ".
    std::string what = e.what();
    if (auto p = what.find("] "); p != std::string::npos) what = what.substr(p + 2);
    return pathError(origin, "", "invalid JSON: " + what);
  } catch (const std::exception& e) {
    return pathError(origin, "", std::string("invalid JSON: ") + e.what());
  }
}

namespace {

// Typed accessors: each names the path of the offending value.
class Reader {
 public:
  Reader(const std::string& origin, const OpListLimits& limits) : origin_(origin), limits_(limits) {}

  Error err(const std::string& path, const std::string& msg) const { return pathError(origin_, path, msg); }

  Status onlyKeys(const ojson& j, const std::string& path, std::initializer_list<const char*> allowed) const {
    return onlyKeys(j, path, std::vector<std::string>(allowed.begin(), allowed.end()));
  }
  Status onlyKeys(const ojson& j, const std::string& path, const std::vector<std::string>& allowed) const {
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (std::find(allowed.begin(), allowed.end(), it.key()) != allowed.end()) continue;
      std::string list;
      for (const std::string& a : allowed) list += (list.empty() ? "" : ", ") + a;
      return err(path + pathKey(it.key()), "unknown key " + quote(it.key()) + " (expected one of: " + list + ")");
    }
    return Status::success();
  }

  Status isObject(const ojson& j, const std::string& path) const {
    if (!j.is_object()) return err(path, std::string("expected an object, got ") + j.type_name());
    return Status::success();
  }

  Expected<std::string> str(const ojson& j, const std::string& path, bool allowEmpty = false) const {
    if (!j.is_string()) return err(path, std::string("expected a string, got ") + j.type_name());
    std::string s = j.get<std::string>();
    if (!allowEmpty && s.empty()) return err(path, "must not be empty");
    return s;
  }

  // A name used as a key elsewhere (kernels, buffers, ops, events, scopes).
  Expected<std::string> name(const ojson& j, const std::string& path) const {
    SK_ASSIGN_OR_RETURN(std::string s, str(j, path));
    SK_RETURN_IF_ERROR(checkName(s, path));
    return s;
  }
  Status checkName(const std::string& s, const std::string& path) const {
    if (std::string p = grammar::nameProblem(s, limits_.maxNameBytes); !p.empty()) return err(path, p);
    return Status::success();
  }

  Expected<bool> boolean(const ojson& j, const std::string& path) const {
    if (!j.is_boolean()) return err(path, std::string("expected true or false, got ") + j.type_name());
    return j.get<bool>();
  }

  // An integer in [lo, hi]; floats ("4.0") are rejected: sizes are exact.
  Expected<int64_t> integer(const ojson& j, const std::string& path, int64_t lo, int64_t hi) const {
    std::string range = std::to_string(lo) + ".." + std::to_string(hi);
    if (!j.is_number_integer()) return err(path, "expected an integer in " + range + ", got " + j.dump());
    if (j.is_number_unsigned() && j.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
      return err(path, "integer " + j.dump() + " out of range " + range);
    int64_t v = j.get<int64_t>();
    if (v < lo || v > hi) return err(path, "integer " + j.dump() + " out of range " + range);
    return v;
  }

  Expected<uint64_t> unsignedInt(const ojson& j, const std::string& path) const {
    if (!j.is_number_integer() || (!j.is_number_unsigned() && j.get<int64_t>() < 0))
      return err(path, "expected a non-negative integer, got " + j.dump());
    return j.get<uint64_t>();
  }

  Expected<std::map<std::string, std::string>> macros(const ojson& j, const std::string& path) const {
    SK_RETURN_IF_ERROR(isObject(j, path));
    if (j.size() > limits_.maxArgs)
      return err(path, std::to_string(j.size()) + " macros, over the limit of " + std::to_string(limits_.maxArgs));
    std::map<std::string, std::string> out;
    for (auto it = j.begin(); it != j.end(); ++it) {
      std::string p = path + pathKey(it.key());
      // Macros become -D<name>=<value> argv items: a C identifier, one line.
      // (The kernel's entry is checked against the names by validateOpList.)
      if (std::string e = grammar::macroNameProblem(it.key(), ""); !e.empty()) return err(p, e);
      std::string v;
      if (it.value().is_string()) v = it.value().get<std::string>();
      else if (it.value().is_number_integer()) v = it.value().dump();
      else return err(p, std::string("expected a string or an integer, got ") + it.value().type_name());
      if (std::string e = grammar::macroValueProblem(v); !e.empty()) return err(p, e);
      out[it.key()] = v;
    }
    return out;
  }

  const OpListLimits& limits() const { return limits_; }

 private:
  const std::string& origin_;
  const OpListLimits& limits_;
};

fs::path resolveSource(const fs::path& baseDir, const std::string& source) {
  fs::path p(source);
  if (p.is_relative()) p = baseDir / p;
  std::error_code ec;
  fs::path abs = fs::absolute(p, ec);
  if (ec) abs = p;
  return abs.lexically_normal();
}

Expected<ParamDecl> parseParam(const Reader& r, const ojson& j, const std::string& path) {
  SK_RETURN_IF_ERROR(r.isObject(j, path));
  SK_RETURN_IF_ERROR(r.onlyKeys(j, path, {"name", "kind", "dtype", "access", "partition", "runtime"}));
  ParamDecl p;
  for (const char* req : {"name", "kind", "dtype"})
    if (!j.contains(req)) return r.err(path, std::string("missing key \"") + req + "\"");
  SK_ASSIGN_OR_RETURN(p.name, r.str(j["name"], path + ".name"));
  if (!isIdentifier(p.name)) return r.err(path + ".name", "parameter name " + quote(p.name) + " is not a C identifier");
  SK_ASSIGN_OR_RETURN(std::string kind, r.str(j["kind"], path + ".kind"));
  if (kind == "buffer") p.kind = ParamKind::Buffer;
  else if (kind == "scalar") p.kind = ParamKind::Scalar;
  else return r.err(path + ".kind", "unknown kind " + quote(kind) + " (accepted: buffer, scalar)");
  SK_ASSIGN_OR_RETURN(std::string dt, r.str(j["dtype"], path + ".dtype"));
  auto d = parseDType(dt);
  if (!d)
    return r.err(path + ".dtype",
                 "unknown dtype " + quote(dt) + " (accepted: f32, f64, f16, bf16, i8, i16, i32, i64, u8, u16, u32, u64, bool)");
  p.dtype = *d;
  if (p.kind == ParamKind::Scalar) {
    for (const char* k : {"access", "partition"})
      if (j.contains(k)) return r.err(path + "." + k, "only buffer parameters take \"" + std::string(k) + "\"");
    if (j.contains("runtime")) { SK_ASSIGN_OR_RETURN(p.runtime, r.boolean(j["runtime"], path + ".runtime")); }
    return p;
  }
  if (j.contains("runtime"))
    return r.err(path + ".runtime", "only scalar parameters take \"runtime\" (a buffer is always read at run time)");
  if (!j.contains("access")) return r.err(path, "missing key \"access\" (buffer parameters need read, write or readwrite)");
  SK_ASSIGN_OR_RETURN(std::string acc, r.str(j["access"], path + ".access"));
  if (acc == "read") p.access = Access::Read;
  else if (acc == "write") p.access = Access::Write;
  else if (acc == "readwrite") p.access = Access::ReadWrite;
  else return r.err(path + ".access", "unknown access " + quote(acc) + " (accepted: read, write, readwrite)");
  if (j.contains("partition")) {
    SK_ASSIGN_OR_RETURN(std::string part, r.str(j["partition"], path + ".partition"));
    if (part == "block") p.partition = Partition::Block;
    else if (part == "all") p.partition = Partition::All;
    else return r.err(path + ".partition", "unknown partition " + quote(part) + " (accepted: block, all)");
  }
  return p;
}

}  // namespace

Expected<KernelDecl> parseKernelObject(const ojson& j, const std::string& origin, const std::string& path,
                                       const fs::path& baseDir, const std::string& name,
                                       const OpListLimits& limits) {
  Reader r(origin, limits);
  SK_RETURN_IF_ERROR(r.isObject(j, path));
  KernelDecl k;
  k.name = name;
  if (j.contains("builtin")) {
    // A builtin brings its own declaration; only macros may be set over its own (Builtins.cpp).
    SK_RETURN_IF_ERROR(r.onlyKeys(j, path, {"builtin", "macros"}));
    SK_ASSIGN_OR_RETURN(k.builtin, r.str(j["builtin"], path + ".builtin"));
    if (j.contains("macros")) { SK_ASSIGN_OR_RETURN(k.macros, r.macros(j["macros"], path + ".macros")); }
    return k;
  }
  // The shared keys, then those a registered back end defines for its kernels (target/Targets.h).
  std::vector<std::string> keys = {"source",      "sources",     "entry",               "core_type",
                                   "early_start", "kernel_sync", "block_dim_invariant", "params",
                                   "macros"};
  const std::vector<std::string> attributeKeys = kernelAttributeKeys();
  keys.insert(keys.end(), attributeKeys.begin(), attributeKeys.end());
  SK_RETURN_IF_ERROR(r.onlyKeys(j, path, keys));
  if (j.contains("source") && j.contains("sources"))
    return r.err(path, "give \"source\" or \"sources\" (one per target), not both");
  for (const char* req : {"entry", "params"})
    if (!j.contains(req)) return r.err(path, std::string("missing key \"") + req + "\"");
  if (j.contains("sources")) {
    // One source per target (DESIGN section 9); the list's target picks.
    const ojson& ss = j["sources"];
    SK_RETURN_IF_ERROR(r.isObject(ss, path + ".sources"));
    if (ss.empty()) return r.err(path + ".sources", "names no target");
    for (auto it = ss.begin(); it != ss.end(); ++it) {
      std::string sp = path + ".sources" + pathKey(it.key());
      if (!isIdentifier(it.key())) return r.err(sp, "target name " + quote(it.key()) + " is not an identifier");
      SK_ASSIGN_OR_RETURN(std::string src, r.str(it.value(), sp));
      if (src.find('\0') != std::string::npos) return r.err(sp, "path contains NUL");
      k.sources[it.key()] = src;
      k.sourcePaths[it.key()] = resolveSource(baseDir, src);
    }
  } else {
    if (!j.contains("source")) return r.err(path, "missing key \"source\" (or \"sources\")");
    SK_ASSIGN_OR_RETURN(k.source, r.str(j["source"], path + ".source"));
    if (k.source.find('\0') != std::string::npos) return r.err(path + ".source", "path contains NUL");
    k.sourcePath = resolveSource(baseDir, k.source);
  }
  SK_ASSIGN_OR_RETURN(k.entry, r.str(j["entry"], path + ".entry"));
  if (!isIdentifier(k.entry)) return r.err(path + ".entry", "entry " + quote(k.entry) + " is not a C identifier");
  if (j.contains("core_type")) {
    SK_ASSIGN_OR_RETURN(std::string ct, r.str(j["core_type"], path + ".core_type"));
    auto t = parseCoreType(ct);
    if (!t) return r.err(path + ".core_type", "unknown core_type " + quote(ct) + " (accepted: vector, cube, mix)");
    k.coreType = *t;
  }
  if (j.contains("early_start")) { SK_ASSIGN_OR_RETURN(k.earlyStart, r.boolean(j["early_start"], path + ".early_start")); }
  if (j.contains("kernel_sync")) { SK_ASSIGN_OR_RETURN(k.kernelSync, r.boolean(j["kernel_sync"], path + ".kernel_sync")); }
  if (j.contains("block_dim_invariant")) {
    SK_ASSIGN_OR_RETURN(k.blockDimInvariant, r.boolean(j["block_dim_invariant"], path + ".block_dim_invariant"));
  }
  // A back end's keys: integers in the range it defines (the type error names the range). Its rules are the
  // validator's (validateKernel, which parseOpList runs), the one place that also sees declarations built in C++.
  for (const std::string& key : attributeKeys) {
    if (!j.contains(key)) continue;
    const KernelAttribute* a = findKernelAttribute(key);
    if (!a) continue;  // unregistered since kernelAttributeKeys(): not possible for built-in back ends
    SK_ASSIGN_OR_RETURN(k.attributes[key], r.integer(j[key], path + "." + key, a->min, a->max));
  }
  const ojson& params = j["params"];
  if (!params.is_array()) return r.err(path + ".params", std::string("expected an array, got ") + params.type_name());
  if (params.size() > limits.maxParams)
    return r.err(path + ".params", std::to_string(params.size()) + " parameters, over the limit of " +
                                       std::to_string(limits.maxParams));
  for (size_t i = 0; i < params.size(); ++i) {
    std::string pp = path + ".params[" + std::to_string(i) + "]";
    SK_ASSIGN_OR_RETURN(ParamDecl p, parseParam(r, params[i], pp));
    if (k.findParam(p.name)) return r.err(pp + ".name", "duplicate parameter " + quote(p.name));
    k.params.push_back(std::move(p));
  }
  if (j.contains("macros")) { SK_ASSIGN_OR_RETURN(k.macros, r.macros(j["macros"], path + ".macros")); }
  return k;
}

namespace {

Expected<BufferDecl> parseBuffer(const Reader& r, const ojson& j, const std::string& path, const std::string& name) {
  SK_RETURN_IF_ERROR(r.isObject(j, path));
  SK_RETURN_IF_ERROR(r.onlyKeys(j, path, {"dtype", "shape", "init"}));
  for (const char* req : {"dtype", "shape"})
    if (!j.contains(req)) return r.err(path, std::string("missing key \"") + req + "\"");
  BufferDecl b;
  b.name = name;
  SK_ASSIGN_OR_RETURN(std::string dt, r.str(j["dtype"], path + ".dtype"));
  auto d = parseDType(dt);
  if (!d) return r.err(path + ".dtype", "unknown dtype " + quote(dt));
  b.dtype = *d;
  const ojson& shape = j["shape"];
  if (!shape.is_array()) return r.err(path + ".shape", std::string("expected an array, got ") + shape.type_name());
  constexpr size_t kMaxRank = 16;
  if (shape.size() > kMaxRank) return r.err(path + ".shape", "rank over the limit of " + std::to_string(kMaxRank));
  for (size_t i = 0; i < shape.size(); ++i) {
    // Every dimension >= 1: a zero-size buffer has no element ranges for
    // blocks to own, and the plan would have nothing to synchronize.
    SK_ASSIGN_OR_RETURN(int64_t dim, r.integer(shape[i], path + ".shape[" + std::to_string(i) + "]", 1, INT64_MAX));
    b.shape.push_back(dim);
  }
  if (j.contains("init")) {
    const ojson& init = j["init"];
    std::string ip = path + ".init";
    if (init.is_string()) {
      std::string s = init.get<std::string>();
      if (s == "zeros") { b.init.kind = BufferInit::Kind::Zeros; b.init.explicitZeros = true; }
      else if (s == "ones") b.init.kind = BufferInit::Kind::Ones;
      else if (s == "random") b.init.kind = BufferInit::Kind::Random;
      else if (s == "iota") b.init.kind = BufferInit::Kind::Iota;
      else return r.err(ip, "unknown init " + quote(s) + " (accepted: zeros, ones, random, iota, {\"file\": ...})");
    } else if (init.is_object()) {
      SK_RETURN_IF_ERROR(r.onlyKeys(init, ip, {"file"}));
      if (!init.contains("file")) return r.err(ip, "missing key \"file\"");
      SK_ASSIGN_OR_RETURN(b.init.file, r.str(init["file"], ip + ".file"));
      if (b.init.file.find('\0') != std::string::npos) return r.err(ip + ".file", "path contains NUL");
      b.init.kind = BufferInit::Kind::File;
    } else {
      return r.err(ip, std::string("expected a string or {\"file\": ...}, got ") + init.type_name());
    }
  }
  return b;
}

Expected<ArgValue> parseArg(const Reader& r, const ojson& j, const std::string& path) {
  ArgValue a;
  if (j.is_string()) {
    BufferRef ref;
    SK_ASSIGN_OR_RETURN(ref.buffer, r.name(j, path));
    a.value = ref;
  } else if (j.is_object() && j.contains("from")) {
    // A runtime scalar: {"from": buffer, "index": element (default 0)}.
    SK_RETURN_IF_ERROR(r.onlyKeys(j, path, {"from", "index"}));
    RuntimeScalar rs;
    SK_ASSIGN_OR_RETURN(rs.buffer, r.name(j["from"], path + ".from"));
    if (j.contains("index")) { SK_ASSIGN_OR_RETURN(rs.index, r.unsignedInt(j["index"], path + ".index")); }
    a.value = rs;
  } else if (j.is_object()) {
    SK_RETURN_IF_ERROR(r.onlyKeys(j, path, {"buffer", "offset", "count"}));
    for (const char* req : {"buffer", "count"})
      if (!j.contains(req)) return r.err(path, std::string("view is missing key \"") + req + "\"");
    BufferRef ref;
    ref.isView = true;
    SK_ASSIGN_OR_RETURN(ref.buffer, r.name(j["buffer"], path + ".buffer"));
    if (j.contains("offset")) { SK_ASSIGN_OR_RETURN(ref.offset, r.unsignedInt(j["offset"], path + ".offset")); }
    SK_ASSIGN_OR_RETURN(ref.count, r.unsignedInt(j["count"], path + ".count"));
    a.value = ref;
  } else if (j.is_number_integer()) {
    // Above INT64_MAX only a u64 parameter can take it (the validator
    // checks the range against the parameter's dtype).
    if (j.is_number_unsigned() && j.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
      a.value = ScalarValue(j.get<uint64_t>());
    else
      a.value = ScalarValue(j.get<int64_t>());
  } else if (j.is_number_float()) {
    a.value = ScalarValue(j.get<double>());
  } else {
    return r.err(path, std::string("expected a buffer name, a view {\"buffer\", \"offset\", \"count\"}, a number or a "
                                   "runtime scalar {\"from\", \"index\"}, got ") +
                           j.type_name());
  }
  return a;
}

Expected<Op> parseOp(const Reader& r, const ojson& j, const std::string& path) {
  SK_RETURN_IF_ERROR(r.isObject(j, path));
  Op op;
  auto readStream = [&]() -> Status {
    if (j.contains("stream")) {
      SK_ASSIGN_OR_RETURN(int64_t s, r.integer(j["stream"], path + ".stream", 0, int64_t(r.limits().maxStreams) - 1));
      op.stream = static_cast<uint32_t>(s);
    }
    return Status::success();
  };
  if (j.contains("record") || j.contains("wait")) {
    bool rec = j.contains("record");
    if (rec && j.contains("wait")) return r.err(path, "an op is a record or a wait, not both");
    SK_RETURN_IF_ERROR(r.onlyKeys(j, path, {rec ? "record" : "wait", "stream"}));
    op.kind = rec ? Op::Kind::Record : Op::Kind::Wait;
    SK_ASSIGN_OR_RETURN(op.event, r.name(j[rec ? "record" : "wait"], path + (rec ? ".record" : ".wait")));
    SK_RETURN_IF_ERROR(readStream());
    return op;
  }
  // A collective (docs/COLLECTIVES.md) shares a launch's name, stream, scope,
  // fusible and args keys; its kernel is the runtime's, so it has none.
  const bool coll = j.contains("collective");
  if (coll) {
    SK_RETURN_IF_ERROR(r.onlyKeys(j, path, {"name", "collective", "reduce", "group", "stream", "scope", "fusible", "args"}));
    for (const char* req : {"name", "group", "args"})
      if (!j.contains(req)) return r.err(path, std::string("missing key \"") + req + "\"");
    op.kind = Op::Kind::Collective;
    SK_ASSIGN_OR_RETURN(std::string kind, r.str(j["collective"], path + ".collective"));
    auto ck = parseCollectiveKind(kind);
    if (!ck)
      return r.err(path + ".collective", "unknown collective " + quote(kind) +
                                             " (accepted: all_reduce, all_gather, reduce_scatter, all_to_all)");
    op.collective = *ck;
    if (j.contains("reduce")) {
      SK_ASSIGN_OR_RETURN(std::string red, r.str(j["reduce"], path + ".reduce"));
      auto ro = parseReduceOp(red);
      if (!ro) return r.err(path + ".reduce", "unknown reduce " + quote(red) + " (accepted: sum, max)");
      op.reduce = *ro;
    }
    SK_ASSIGN_OR_RETURN(op.group, r.name(j["group"], path + ".group"));
  } else {
    SK_RETURN_IF_ERROR(r.onlyKeys(j, path, {"name", "kernel", "block_dim", "stream", "scope", "fusible", "args", "macros"}));
    for (const char* req : {"name", "kernel", "block_dim", "args"})
      if (!j.contains(req)) return r.err(path, std::string("missing key \"") + req + "\"");
  }
  SK_ASSIGN_OR_RETURN(op.name, r.name(j["name"], path + ".name"));
  if (!coll) {
    SK_ASSIGN_OR_RETURN(op.kernel, r.name(j["kernel"], path + ".kernel"));
    SK_ASSIGN_OR_RETURN(int64_t bd, r.integer(j["block_dim"], path + ".block_dim", 1, r.limits().maxBlockDim));
    op.blockDim = static_cast<uint32_t>(bd);
  }
  SK_RETURN_IF_ERROR(readStream());
  if (j.contains("scope")) {
    const ojson& s = j["scope"];
    if (s.is_null()) op.scopeNull = true;
    else { SK_ASSIGN_OR_RETURN(op.scope, r.name(s, path + ".scope")); }
  }
  if (j.contains("fusible")) {
    SK_ASSIGN_OR_RETURN(op.fusible, r.boolean(j["fusible"], path + ".fusible"));
    op.fusibleWritten = true;
  }
  const ojson& args = j["args"];
  SK_RETURN_IF_ERROR(r.isObject(args, path + ".args"));
  if (args.size() > r.limits().maxArgs)
    return r.err(path + ".args", std::to_string(args.size()) + " args, over the limit of " + std::to_string(r.limits().maxArgs));
  for (auto it = args.begin(); it != args.end(); ++it) {
    SK_ASSIGN_OR_RETURN(ArgValue a, parseArg(r, it.value(), path + ".args" + pathKey(it.key())));
    op.args.emplace_back(it.key(), std::move(a));
  }
  if (j.contains("macros")) { SK_ASSIGN_OR_RETURN(op.macros, r.macros(j["macros"], path + ".macros")); }
  return op;
}

Status countLimit(const Reader& r, const ojson& j, const std::string& path, uint64_t limit, const char* what) {
  if (j.size() > limit)
    return r.err(path, std::to_string(j.size()) + " " + what + ", over the limit of " + std::to_string(limit));
  return Status::success();
}

Expected<OpList> parseRoot(const Reader& r, const ojson& root, const std::string& origin, const fs::path& baseDir) {
  if (!root.is_object()) return r.err("", std::string("expected a JSON object at top level, got ") + root.type_name());
  // Format and version first: a newer file should say so, not trip on its new keys.
  if (!root.contains("format")) return r.err("", "missing key \"format\" (expected \"superkernel.oplist\")");
  SK_ASSIGN_OR_RETURN(std::string format, r.str(root["format"], "format"));
  if (format != "superkernel.oplist")
    return r.err("format", "unsupported format " + quote(format) + " (expected \"superkernel.oplist\")");
  if (!root.contains("version")) return r.err("", "missing key \"version\"");
  const ojson& ver = root["version"];
  if (!ver.is_number_integer() || ver.get<int64_t>() != OpList::kFormatVersion || (ver.is_number_unsigned() && ver.get<uint64_t>() > 1000))
    return r.err("version", "unsupported version " + ver.dump() + " (supported: " + std::to_string(OpList::kFormatVersion) + ")");
  SK_RETURN_IF_ERROR(r.onlyKeys(root, "", {"format", "version", "target", "arch", "options", "kernels", "buffers", "ops", "scopes",
                                         "groups"}));

  OpList list;
  list.origin = origin;
  list.baseDir = baseDir;
  if (root.contains("target")) { SK_ASSIGN_OR_RETURN(list.target, r.str(root["target"], "target")); }
  if (root.contains("arch")) { SK_ASSIGN_OR_RETURN(list.arch, r.str(root["arch"], "arch")); }
  if (root.contains("options")) { SK_ASSIGN_OR_RETURN(list.options, r.str(root["options"], "options", true)); }

  if (root.contains("kernels")) {
    const ojson& ks = root["kernels"];
    SK_RETURN_IF_ERROR(r.isObject(ks, "kernels"));
    SK_RETURN_IF_ERROR(countLimit(r, ks, "kernels", r.limits().maxKernels, "kernels"));
    for (auto it = ks.begin(); it != ks.end(); ++it) {
      std::string p = "kernels" + pathKey(it.key());
      SK_RETURN_IF_ERROR(r.checkName(it.key(), p));
      SK_ASSIGN_OR_RETURN(KernelDecl k, parseKernelObject(it.value(), origin, p, baseDir, it.key(), r.limits()));
      list.kernels.push_back(std::move(k));
    }
  }
  if (root.contains("buffers")) {
    const ojson& bs = root["buffers"];
    SK_RETURN_IF_ERROR(r.isObject(bs, "buffers"));
    SK_RETURN_IF_ERROR(countLimit(r, bs, "buffers", r.limits().maxBuffers, "buffers"));
    for (auto it = bs.begin(); it != bs.end(); ++it) {
      std::string p = "buffers" + pathKey(it.key());
      SK_RETURN_IF_ERROR(r.checkName(it.key(), p));
      SK_ASSIGN_OR_RETURN(BufferDecl b, parseBuffer(r, it.value(), p, it.key()));
      list.buffers.push_back(std::move(b));
    }
  }
  if (root.contains("ops")) {
    const ojson& ops = root["ops"];
    if (!ops.is_array()) return r.err("ops", std::string("expected an array, got ") + ops.type_name());
    SK_RETURN_IF_ERROR(countLimit(r, ops, "ops", r.limits().maxOps, "ops"));
    for (size_t i = 0; i < ops.size(); ++i) {
      SK_ASSIGN_OR_RETURN(Op op, parseOp(r, ops[i], opPath(i)));
      list.ops.push_back(std::move(op));
    }
  }
  if (root.contains("scopes")) {
    const ojson& ss = root["scopes"];
    SK_RETURN_IF_ERROR(r.isObject(ss, "scopes"));
    SK_RETURN_IF_ERROR(countLimit(r, ss, "scopes", r.limits().maxOps, "scopes"));
    for (auto it = ss.begin(); it != ss.end(); ++it) {
      std::string p = "scopes" + pathKey(it.key());
      SK_RETURN_IF_ERROR(r.checkName(it.key(), p));
      SK_RETURN_IF_ERROR(r.isObject(it.value(), p));
      SK_RETURN_IF_ERROR(r.onlyKeys(it.value(), p, {"options"}));
      ScopeConfig sc;
      if (it.value().contains("options")) { SK_ASSIGN_OR_RETURN(sc.options, r.str(it.value()["options"], p + ".options", true)); }
      list.scopes[it.key()] = sc;
    }
  }
  if (root.contains("groups")) {
    // {"tp": {"ranks": [0, 1]}}: the validator checks the ranks' order and range.
    const ojson& gs = root["groups"];
    SK_RETURN_IF_ERROR(r.isObject(gs, "groups"));
    SK_RETURN_IF_ERROR(countLimit(r, gs, "groups", r.limits().maxOps, "groups"));
    for (auto it = gs.begin(); it != gs.end(); ++it) {
      std::string p = "groups" + pathKey(it.key());
      SK_RETURN_IF_ERROR(r.checkName(it.key(), p));
      SK_RETURN_IF_ERROR(r.isObject(it.value(), p));
      SK_RETURN_IF_ERROR(r.onlyKeys(it.value(), p, {"ranks"}));
      if (!it.value().contains("ranks")) return r.err(p, "missing key \"ranks\"");
      const ojson& rs = it.value()["ranks"];
      if (!rs.is_array()) return r.err(p + ".ranks", std::string("expected an array, got ") + rs.type_name());
      if (rs.size() > kMaxCollectiveRanks)
        return r.err(p + ".ranks", std::to_string(rs.size()) + " ranks, over the limit of " +
                                       std::to_string(kMaxCollectiveRanks));
      CollectiveGroup g;
      for (size_t i = 0; i < rs.size(); ++i) {
        SK_ASSIGN_OR_RETURN(int64_t rank, r.integer(rs[i], p + ".ranks[" + std::to_string(i) + "]", 0,
                                                    int64_t{kMaxCollectiveRanks} - 1));
        g.ranks.push_back(static_cast<uint32_t>(rank));
      }
      list.groups[it.key()] = std::move(g);
    }
  }
  return list;
}

}  // namespace
}  // namespace detail

Expected<OpList> parseOpList(std::string_view json, const std::string& origin, const fs::path& baseDir,
                             const OpListLimits& limits) {
  SK_ASSIGN_OR_RETURN(detail::ojson root, detail::parseJsonText(json, origin, limits));
  detail::Reader r(origin, limits);
  SK_ASSIGN_OR_RETURN(OpList list, detail::parseRoot(r, root, origin, baseDir));
  SK_RETURN_IF_ERROR(validateOpList(list, limits));
  return list;
}

Expected<OpList> loadOpList(const fs::path& file, const OpListLimits& limits) {
  std::string origin = file.string();
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) return ioError(origin + ": not a readable regular file");
  auto size = fs::file_size(file, ec);
  if (ec) return ioError(origin + ": " + ec.message());
  // Checked before reading so a huge file is never loaded into memory.
  if (size > limits.maxFileBytes)
    return detail::pathError(origin, "", "file is " + std::to_string(size) + " bytes, over the limit of " +
                                             std::to_string(limits.maxFileBytes));
  std::ifstream in(file, std::ios::binary);
  if (!in) return ioError(origin + ": cannot open");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (!in && !in.eof()) return ioError(origin + ": read failed");
  fs::path base = file.parent_path();
  if (base.empty()) base = ".";
  fs::path absBase = fs::absolute(base, ec);
  return parseOpList(ss.str(), origin, ec ? base : absBase.lexically_normal(), limits);
}

}  // namespace sk
