// The C API (include/superkernel/superkernel_c.h) over Session, BufferSet and
// Cache. Every entry point catches everything: no C++ exception may cross the
// C boundary (a caller in C or Python could not handle it), so anything
// unexpected becomes SK_ERR_INTERNAL with its message.
#include "superkernel/superkernel_c.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <exception>
#include <new>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#ifdef SK_HAVE_MPI
#include <mpi.h>
#endif

#include "superkernel/runtime/Communicator.h"
#include "superkernel/session/KernelSource.h"
#include "superkernel/superkernel.h"
#include "superkernel/target/Targets.h"

struct sk_session {
  std::unique_ptr<sk::Session> session;
  std::string cacheDir;
};
struct sk_plan {
  sk::CompiledPlan plan;
  std::string report;  // formatPlanReport, made on first ask (the pointer sk_plan_report returns)
};
struct sk_buffers {
  sk::BufferSet set;
};
struct sk_communicator {
  std::shared_ptr<sk::Communicator> comm;
};

namespace {

thread_local std::string lastError;

sk_status statusFor(sk::ErrorKind k) {
  switch (k) {
    case sk::ErrorKind::BadInput: return SK_ERR_BAD_INPUT;
    case sk::ErrorKind::Compile: return SK_ERR_COMPILE;
    case sk::ErrorKind::Runtime: return SK_ERR_RUNTIME;
    case sk::ErrorKind::Mismatch: return SK_ERR_MISMATCH;
    case sk::ErrorKind::Io: return SK_ERR_IO;
    case sk::ErrorKind::Internal: return SK_ERR_INTERNAL;
  }
  return SK_ERR_INTERNAL;
}

sk_status fail(const sk::Error& e) {
  lastError = e.message();
  return statusFor(e.kind());
}
sk_status invalid(const char* what) {
  lastError = what;
  return SK_ERR_INVALID_ARGUMENT;
}
sk_status ok() {
  lastError.clear();
  return SK_OK;
}

// Runs `body`, turning any exception into SK_ERR_INTERNAL.
template <class F>
sk_status guarded(F&& body) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    lastError = "out of memory";
  } catch (const std::exception& e) {
    lastError = std::string("internal error: ") + e.what();
  } catch (...) {
    lastError = "internal error: unknown exception";
  }
  return SK_ERR_INTERNAL;
}

std::string str(const char* s) { return s ? std::string(s) : std::string(); }

sk_status finishCompile(sk_session* s, const sk::OpList& list, const char* options, int fuse, sk_plan** out) {
  sk::CompileRequest req;
  req.options = str(options);
  req.fuse = fuse != 0;
  auto cp = s->session->compile(list, req);
  if (!cp) return fail(cp.error());
  *out = new sk_plan{std::move(*cp), {}};
  return ok();
}

}  // namespace

extern "C" {

const char* sk_version(void) { return sk::libraryVersion(); }

const char* sk_status_name(sk_status status) {
  switch (status) {
    case SK_OK: return "ok";
    case SK_ERR_BAD_INPUT: return "bad_input";
    case SK_ERR_COMPILE: return "compile";
    case SK_ERR_RUNTIME: return "runtime";
    case SK_ERR_MISMATCH: return "mismatch";
    case SK_ERR_IO: return "io";
    case SK_ERR_INTERNAL: return "internal";
    case SK_ERR_INVALID_ARGUMENT: return "invalid_argument";
  }
  return "unknown";
}

const char* sk_last_error(void) { return lastError.c_str(); }

// The header's sk_session_options_init is a macro passing the caller's sizeof; the exported function of that
// name is the version 1 entry point old binaries call.
#undef sk_session_options_init

namespace {
// Version 1 of the struct ended before `communicator`: binaries built against it pass (and allocate) that much.
constexpr uint32_t kOptionsV1 = offsetof(sk_session_options, communicator);
}  // namespace

void sk_session_options_init_sized(sk_session_options* o, uint32_t size) {
  // Every default is zero or NULL. Write no more than the caller's struct holds (a smaller size is refused by
  // sk_session_create with a message), and never more than this library's.
  if (!o || size < sizeof(uint32_t)) return;
  std::memset(o, 0, std::min<size_t>(size, sizeof(sk_session_options)));
  o->struct_size = size;
}

void sk_session_options_init(sk_session_options* o) { sk_session_options_init_sized(o, kOptionsV1); }

sk_status sk_session_create(const sk_session_options* o, sk_session** out) {
  return guarded([&] {
    if (!out) return invalid("sk_session_create: out is NULL");
    *out = nullptr;
    sk::SessionOptions so;
    if (o) {
      // A caller built against a newer header passes a bigger struct: refuse what we cannot read. Version 1's
      // (no communicator) and this one are read.
      if (o->struct_size != sizeof(sk_session_options) && o->struct_size != kOptionsV1)
        return invalid(fmt::format("sk_session_create: options.struct_size is {}; this library reads {} (version 1) "
                                   "or {} (call sk_session_options_init)",
                                   o->struct_size, kOptionsV1, sizeof(sk_session_options))
                           .c_str());
      so.workers = o->workers;
      so.jobs = o->jobs;
      so.diskCache = o->memory_only == 0;
      so.cacheDir = str(o->cache_dir);
      so.compiler = str(o->compiler);
      so.options = str(o->options);
      if (o->struct_size > kOptionsV1 && o->communicator) so.communicator = o->communicator->comm;
    }
    auto s = sk::Session::create(so);
    if (!s) return fail(s.error());
    *out = new sk_session{std::move(*s), {}};
    (*out)->cacheDir = (*out)->session->cache()->root().string();
    return ok();
  });
}

void sk_session_destroy(sk_session* session) { delete session; }

sk_status sk_communicator_mpi(int fortranComm, sk_communicator** out) {
  return guarded([&] {
    if (!out) return invalid("sk_communicator_mpi: out is NULL");
    *out = nullptr;
#ifdef SK_HAVE_MPI
    int initialised = 0, finalized = 0;
    MPI_Initialized(&initialised);
    MPI_Finalized(&finalized);
    if (!initialised || finalized)
      return fail(sk::Error(sk::ErrorKind::BadInput,
                            fmt::format("sk_communicator_mpi: MPI is {}, so Fortran handle {} names no communicator: "
                                        "initialise MPI first (mpi4py does at import), or use "
                                        "sk_communicator_mpi_world",
                                        finalized ? "finalised" : "not initialised", fortranComm)));
    // Open MPI answers an unknown handle with NULL, the standard with MPI_COMM_NULL.
    MPI_Comm comm = MPI_Comm_f2c(MPI_Fint(fortranComm));
    int inter = 0;
    if (comm == MPI_COMM_NULL || comm == MPI_Comm{} || MPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter)
      return fail(sk::Error(
          sk::ErrorKind::BadInput,
          fmt::format("sk_communicator_mpi: Fortran handle {} is not an MPI intracommunicator of this process "
                      "({}): pass MPI_Comm_c2f(comm) from C or comm.py2f() from mpi4py, for MPI_COMM_WORLD or "
                      "a communicator split from it",
                      fortranComm,
                      comm == MPI_COMM_NULL ? "it is MPI_COMM_NULL" : inter ? "an intercommunicator" : "no such handle")));
    auto c = sk::mpiCommunicator(&comm);
#else
    (void)fortranComm;
    auto c = sk::mpiCommunicator(nullptr);  // the error saying how to build with MPI
#endif
    if (!c) return fail(c.error());
    *out = new sk_communicator{std::move(*c)};
    return ok();
  });
}

sk_status sk_communicator_mpi_world(sk_communicator** out) {
  return guarded([&] {
    if (!out) return invalid("sk_communicator_mpi_world: out is NULL");
    *out = nullptr;
    auto c = sk::mpiCommunicator(nullptr);
    if (!c) return fail(c.error());
    *out = new sk_communicator{std::move(*c)};
    return ok();
  });
}

uint32_t sk_communicator_rank(const sk_communicator* c) { return c ? c->comm->rank() : 0; }
uint32_t sk_communicator_size(const sk_communicator* c) { return c ? c->comm->size() : 0; }
void sk_communicator_destroy(sk_communicator* c) { delete c; }
void sk_mpi_finalize(void) { sk::finalizeMpi(); }

sk_status sk_compile_file(sk_session* s, const char* path, const char* options, int fuse, sk_plan** out) {
  return guarded([&] {
    if (!s || !path || !out) return invalid("sk_compile_file: session, oplist_path and out must not be NULL");
    *out = nullptr;
    auto list = sk::loadOpList(path);
    if (!list) return fail(list.error());
    return finishCompile(s, *list, options, fuse, out);
  });
}

sk_status sk_compile_json(sk_session* s, const char* json, size_t size, const char* baseDir, const sk_source* sources,
                          size_t sourceCount, const char* options, int fuse, sk_plan** out) {
  return guarded([&] {
    if (!s || !json || !out) return invalid("sk_compile_json: session, json and out must not be NULL");
    if (sourceCount && !sources) return invalid("sk_compile_json: sources is NULL but source_count is not 0");
    *out = nullptr;
    std::string text(json, size);
    if (sourceCount) {
      // Kernels whose "source" names an in-memory source get the stored
      // file's path instead; the op list is otherwise untouched (its own
      // parser still validates everything).
      std::map<std::string, std::string> stored;
      for (size_t i = 0; i < sourceCount; ++i) {
        if (!sources[i].name || (!sources[i].text && sources[i].size))
          return invalid("sk_compile_json: a source has a NULL name or text");
        auto p = sk::storeKernelSource(*s->session, sources[i].name,
                                       std::string_view(sources[i].text ? sources[i].text : "", sources[i].size));
        if (!p) return fail(p.error());
        stored[sources[i].name] = p->string();
      }
      auto j = nlohmann::ordered_json::parse(text, nullptr, false);
      if (!j.is_discarded() && j.is_object() && j.contains("kernels") && j["kernels"].is_object()) {
        for (auto& [name, k] : j["kernels"].items()) {
          if (!k.is_object() || !k.contains("source") || !k["source"].is_string()) continue;
          auto it = stored.find(k["source"].get<std::string>());
          if (it != stored.end()) k["source"] = it->second;
        }
        text = j.dump();
      }
      // Unparsable text goes to the op-list parser as it is: its error names the line.
    }
    std::error_code ec;
    std::filesystem::path base = baseDir ? std::filesystem::path(baseDir) : std::filesystem::current_path(ec);
    auto list = sk::parseOpList(text, "<memory>", base);
    if (!list) return fail(list.error());
    return finishCompile(s, *list, options, fuse, out);
  });
}

void sk_plan_destroy(sk_plan* plan) { delete plan; }

size_t sk_plan_op_count(const sk_plan* p) { return p ? p->plan.list.ops.size() : 0; }
size_t sk_plan_launch_count(const sk_plan* p) { return p ? p->plan.steps.size() : 0; }
size_t sk_plan_buffer_count(const sk_plan* p) { return p ? p->plan.list.buffers.size() : 0; }
size_t sk_plan_superkernel_count(const sk_plan* p) { return p ? p->plan.plan.report.superKernels : 0; }
const char* sk_plan_report(sk_plan* p) {
  if (!p) return nullptr;
  if (p->report.empty()) p->report = sk::formatPlanReport(p->plan.plan);
  return p->report.c_str();
}
const char* sk_plan_buffer_name(const sk_plan* p, size_t i) {
  if (!p || i >= p->plan.list.buffers.size()) return nullptr;
  return p->plan.list.buffers[i].name.c_str();
}
uint64_t sk_plan_buffer_bytes(const sk_plan* p, size_t i) {
  if (!p || i >= p->plan.list.buffers.size()) return 0;
  return p->plan.list.buffers[i].bytes();
}

sk_status sk_run(sk_session* s, sk_plan* p, void* const* buffers, size_t count) {
  return guarded([&] {
    if (!s || !p || (!buffers && count)) return invalid("sk_run: session, plan and buffers must not be NULL");
    if (count != p->plan.list.buffers.size())
      return invalid(fmt::format("sk_run: {} buffers given, the op list has {}", count, p->plan.list.buffers.size())
                         .c_str());
    for (size_t i = 0; i < count; ++i)
      if (!buffers[i]) return invalid(fmt::format("sk_run: buffer {} is NULL", i).c_str());
    sk::Status st = s->session->run(p->plan, buffers, count);
    return st ? ok() : fail(st.error());
  });
}

sk_status sk_buffers_create(const sk_plan* p, sk_buffers** out) {
  return guarded([&] {
    if (!p || !out) return invalid("sk_buffers_create: plan and out must not be NULL");
    *out = nullptr;
    auto set = sk::BufferSet::create(p->plan.list);
    if (!set) return fail(set.error());
    *out = new sk_buffers{std::move(*set)};
    return ok();
  });
}

void sk_buffers_destroy(sk_buffers* b) { delete b; }

void* sk_buffers_data(sk_buffers* b, size_t i) { return b && i < b->set.size() ? b->set.data(i) : nullptr; }

sk_status sk_run_buffers(sk_session* s, sk_plan* p, sk_buffers* b) {
  return guarded([&] {
    if (!s || !p || !b) return invalid("sk_run_buffers: session, plan and buffers must not be NULL");
    sk::Status st = s->session->run(p->plan, b->set);
    return st ? ok() : fail(st.error());
  });
}

sk_status sk_buffers_compare(const sk_buffers* expected, const sk_buffers* actual) {
  return guarded([&] {
    if (!expected || !actual) return invalid("sk_buffers_compare: buffers must not be NULL");
    auto diff = expected->set.compare(actual->set);
    if (!diff) return fail(diff.error());
    if (*diff) return fail(sk::Error(sk::ErrorKind::Mismatch, (*diff)->message()));
    return ok();
  });
}

sk_status sk_cache_stats_get(sk_session* s, sk_cache_stats* out) {
  return guarded([&] {
    if (!s || !out) return invalid("sk_cache_stats_get: session and out must not be NULL");
    auto st = s->session->cache()->stats();
    if (!st) return fail(st.error());
    *out = sk_cache_stats{st->hits,    st->misses,  st->compiles, st->compileFailures,
                          st->corrupt, st->untrusted, st->evicted, st->entries,
                          st->bytes,   s->session->cache()->maxBytes()};
    return ok();
  });
}

sk_status sk_cache_gc(sk_session* s, uint64_t maxBytes) {
  return guarded([&] {
    if (!s) return invalid("sk_cache_gc: session is NULL");
    auto r = s->session->cache()->gc(maxBytes);
    return r ? ok() : fail(r.error());
  });
}

const char* sk_cache_dir(sk_session* s) { return s ? s->cacheDir.c_str() : nullptr; }

sk_status sk_calibrate_sync(sk_session* s, const char* target, sk_sync_costs* out) {
  return guarded([&] {
    if (!s) return invalid("sk_calibrate_sync: session is NULL");
    // NULL: the host's target (cpu), whose executor the session's workers are.
    const std::string name = target ? std::string(target) : sk::hostTargetName();
    auto costs = s->session->calibrateSync(name);
    if (!costs) return fail(costs.error());
    if (out) *out = sk_sync_costs{costs->barrierNs, costs->counterNs, costs->flagNs};
    return ok();
  });
}

}  // extern "C"
