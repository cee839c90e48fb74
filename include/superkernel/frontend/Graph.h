// The C++ recording API: sk::Graph records kernels, buffers, streams, events
// and launches into an OpList (the same structure sk-compile reads), and
// sk::Scope marks which launches are planned together.
//
//   sk::Graph g;
//   g.addKernel(addDecl);                       // or g.addBuiltinKernel("scale", "scale_f32")
//   g.addBuffer("x", sk::DType::F32, {4096});
//   {
//     sk::Scope s(g, "sk1", "early-start=1");   // launches in here are fused
//     g.launch({.name = "add_100", .kernel = "add", .blockDim = 40,
//               .args = {{"x", sk::arg("x")}, {"z", sk::arg("a", 0, 4096)}, {"n", sk::arg(int64_t{4096})}}});
//   }
//   g.launch(...);                              // outside any scope: runs now via the hook
//
// Scopes nest; the innermost one decides a launch's scope. Scope::never()
// opens a region whose launches are recorded with "scope": null (never fused)
// even inside a named scope. Options given to a Scope are stored in
// OpList::scopes[name].options (a second Scope of the same name must give the
// same options or none).
//
// Launches outside every Scope are "run immediately": they are recorded (so
// writeJson() exports the whole program) and passed to the launch hook with
// their index; the Session installs a hook that executes them on the
// executor (the unfused path). Without a hook they are only recorded.
// ranImmediately(i) tells a later planner which ops already ran.
//
// Every record call validates what it records against what is recorded so
// far and returns a Status naming the place (e.g. `ops[3].args.z: unknown
// buffer "c_out"`); a failed call records nothing.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "superkernel/frontend/OpList.h"

namespace sk {

/// Argument helpers: a whole buffer, a view (offset, count in elements), a
/// scalar literal; argFrom below: a scalar read from a buffer at run time.
inline ArgValue arg(std::string buffer) { return ArgValue{BufferRef{std::move(buffer), false, 0, 0}}; }
inline ArgValue arg(std::string buffer, uint64_t offset, uint64_t count) {
  return ArgValue{BufferRef{std::move(buffer), true, offset, count}};
}
inline ArgValue arg(int64_t v) { return ArgValue{ScalarValue{v}}; }
inline ArgValue arg(int v) { return ArgValue{ScalarValue{int64_t{v}}}; }
inline ArgValue arg(double v) { return ArgValue{ScalarValue{v}}; }
/// For u64 parameters: values above INT64_MAX are kept as uint64_t.
inline ArgValue arg(uint64_t v) {
  return v > static_cast<uint64_t>(INT64_MAX) ? ArgValue{ScalarValue{v}} : ArgValue{ScalarValue{static_cast<int64_t>(v)}};
}

/// A runtime scalar: element `index` of buffer `buffer` (its dtype the
/// parameter's), read on the device each time the op is called; the
/// parameter must be declared "runtime" (RuntimeScalar in OpList.h).
inline ArgValue argFrom(std::string buffer, uint64_t index = 0) {
  return ArgValue{RuntimeScalar{std::move(buffer), index}};
}

/// One launch to record.
struct LaunchDesc {
  std::string name;                          // unique op name
  std::string kernel;                        // a declared kernel (addKernel / addBuiltinKernel)
  uint32_t blockDim = 1;
  uint32_t stream = 0;
  std::vector<std::pair<std::string, ArgValue>> args;   // by parameter name
  std::map<std::string, std::string> macros;            // override the kernel's
  bool fusible = true;
};

/// One collective to record (docs/COLLECTIVES.md): `in` and `out` are
/// buffers or views (sk::arg(name), sk::arg(name, offset, count)), over a
/// group declared with addGroup.
struct CollectiveDesc {
  std::string name;                          // unique op name
  CollectiveKind kind = CollectiveKind::AllReduce;
  ReduceOp reduce = ReduceOp::None;          // sum or max for all_reduce and reduce_scatter
  std::string group;
  ArgValue in, out;
  uint32_t stream = 0;
  bool fusible = true;
};

class Scope;

class Graph {
 public:
  using LaunchHook = std::function<Status(const OpList& list, size_t opIndex)>;

  explicit Graph(std::string target = "cpu", std::string arch = "native");

  /// List-level option string (validated; see Options.h).
  Status setOptions(const std::string& options);
  /// Relative kernel sources resolve against this directory (default: cwd).
  void setBaseDir(const std::filesystem::path& dir);

  /// Declare a kernel. `decl.name` is the key launches use; a relative
  /// `decl.source` resolves against the base dir (sourcePath is filled);
  /// the source file must exist.
  Status addKernel(KernelDecl decl);
  /// Declare `name` as the library's builtin kernel `builtin` (kernels/<target>/).
  Status addBuiltinKernel(const std::string& name, const std::string& builtin);

  /// Declare a buffer. `host` (optional) is memory the engine owns and keeps
  /// alive; the graph only stores the pointer (hostPointer()).
  Status addBuffer(const std::string& name, DType dtype, std::vector<int64_t> shape, void* host = nullptr,
                   BufferInit init = {});
  void* hostPointer(const std::string& buffer) const;
  /// Host pointers parallel to opList().buffers (nullptr where none was given).
  const std::vector<void*>& hostPointers() const { return host_; }

  /// A fresh stream id (0 is the default stream and always exists).
  uint32_t newStream() { return ++lastStream_; }
  Status record(const std::string& event, uint32_t stream = 0);
  Status wait(const std::string& event, uint32_t stream = 0);

  /// Record a launch (validated). Outside any Scope it is then passed to the
  /// launch hook; the hook's error is returned (the op stays recorded).
  Status launch(LaunchDesc desc);
  /// Declare a group of ranks for collectives (strictly ascending, below 64).
  Status addGroup(const std::string& name, std::vector<uint32_t> ranks);
  /// Record a collective (validated), scoped like a launch.
  Status collective(CollectiveDesc desc);

  void setLaunchHook(LaunchHook hook) { hook_ = std::move(hook); }
  bool ranImmediately(size_t opIndex) const { return opIndex < ran_.size() && ran_[opIndex]; }

  const OpList& opList() const { return list_; }
  /// The op-list JSON sk-compile reads (writeOpList of opList()).
  std::string writeJson() const;
  Status writeJsonFile(const std::filesystem::path& file) const;

 private:
  friend class Scope;
  /// Scope `op` like a launch, record it, check it with `check` (undone if it
  /// fails) and run it now through the hook when no Scope is open.
  Status addOp(Op op, const std::function<Status(size_t index)>& check);
  struct ScopeEntry {
    uint64_t id = 0;
    std::string name;                        // empty: never-fuse region
    bool never = false;
    Status status;                           // a bad scope fails every launch inside it
  };
  uint64_t pushScope(std::string name, bool never, const std::string& options);
  void popScope(uint64_t id);

  OpList list_;
  std::vector<void*> host_;
  std::vector<bool> ran_;
  std::map<std::string, KernelDecl> resolved_;   // kernel name -> declaration with params
  std::vector<ScopeEntry> scopes_;
  uint64_t nextScopeId_ = 1;
  uint32_t lastStream_ = 0;
  LaunchHook hook_;
};

/// RAII scope guard. Not copyable or movable: it lives on the stack of the
/// code that records into it.
class Scope {
 public:
  Scope(Graph& graph, std::string name, const std::string& options = {});
  /// A never-fuse region: launches inside are recorded with "scope": null.
  static Scope never(Graph& graph) { return Scope(graph); }
  ~Scope();
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

  /// The scope's own problem (empty name, options that do not parse or
  /// conflict with an earlier scope of the same name), if any. Launches
  /// inside a bad scope fail with it too.
  const Status& status() const { return status_; }

 private:
  explicit Scope(Graph& graph);
  Graph& graph_;
  uint64_t id_ = 0;
  Status status_;
};

}  // namespace sk
