/* The C API: compile and run superkernel op lists from C, or from any
 * language with a C FFI (Python ctypes, Rust, Go, ...). A C99 header, no
 * C++ types; every object is an opaque handle, every fallible call returns an
 * sk_status, and the message of the last failure on the calling thread is
 * sk_last_error().
 *
 *   sk_session_options so;
 *   sk_session_options_init(&so);
 *   so.cache_dir = "/tmp/my-cache";                   (NULL: the default)
 *   sk_session* s;
 *   if (sk_session_create(&so, &s) != SK_OK) { puts(sk_last_error()); ... }
 *   sk_plan* p;
 *   sk_compile_file(s, "model.json", NULL, 1, &p);    (or sk_compile_json: op
 *                                                      list and kernel sources
 *                                                      from memory)
 *   void* buffers[] = {x, y, out};                    (op-list buffer order)
 *   sk_run(s, p, buffers, 3);
 *   sk_plan_destroy(p);  sk_session_destroy(s);
 *
 * Thread safety: as the C++ Session (include/superkernel/session/Session.h):
 * compiles may run concurrently; one plan must not run on two threads at once.
 * Strings passed in are copied; strings returned stay valid as long as the
 * handle they came from (sk_last_error: until the thread's next call). */
#ifndef SUPERKERNEL_SUPERKERNEL_C_H
#define SUPERKERNEL_SUPERKERNEL_C_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 2: sk_communicator and sk_session_options.communicator (collectives over MPI);
 *    sk_session_options_init_sized (sk_session_create takes a version 1 or 2 struct). */
#define SK_C_API_VERSION 2

/* Exported from libsuperkernel_c.so (built with hidden visibility). */
#if defined(__GNUC__)
#define SK_C_API __attribute__((visibility("default")))
#else
#define SK_C_API
#endif

/* Status codes. Values are stable (they are the ABI). */
typedef enum sk_status {
  SK_OK = 0,
  SK_ERR_BAD_INPUT = 1,        /* malformed op list, options, unknown buffer */
  SK_ERR_COMPILE = 2,          /* compiler missing or failed, link failure */
  SK_ERR_RUNTIME = 3,          /* a wait timed out, a kernel reported an error */
  SK_ERR_MISMATCH = 4,         /* fused and unfused results differ */
  SK_ERR_IO = 5,               /* file system trouble */
  SK_ERR_INTERNAL = 6,         /* a bug in superkernel */
  SK_ERR_INVALID_ARGUMENT = 7  /* a NULL handle or out-pointer, an index out of range */
} sk_status;

typedef struct sk_session sk_session;
typedef struct sk_plan sk_plan;
typedef struct sk_buffers sk_buffers;
typedef struct sk_communicator sk_communicator;

/* "0.1.0" */
SK_C_API const char* sk_version(void);
/* "ok", "bad_input", ... */
SK_C_API const char* sk_status_name(sk_status status);
/* The message of the last failed call on this thread ("" after a success). */
SK_C_API const char* sk_last_error(void);

typedef struct sk_session_options {
  uint32_t struct_size;   /* sizeof(sk_session_options): set by _init */
  uint32_t workers;       /* executor threads; 0: $SK_NUM_WORKERS, else hardware threads */
  uint32_t jobs;          /* parallel compiles; 0: hardware threads */
  int memory_only;        /* nonzero: no disk cache */
  const char* cache_dir;  /* NULL: $SK_CACHE_DIR, $XDG_CACHE_HOME/superkernel, ~/.cache/superkernel */
  const char* compiler;   /* NULL: $SK_CXX, else clang++ */
  const char* options;    /* option string merged over every op list's (NULL: none) */
  /* The ranks of the plans' collective ops (sk_communicator_mpi below; NULL:
   * none, and a plan with a collective fails when it runs, naming the op).
   * The session keeps its own reference: the handle may be destroyed right
   * after sk_session_create. */
  sk_communicator* communicator;
} sk_session_options;

/* Defaults for a struct of `struct_size` bytes: the size the caller was
 * compiled with, so the library never writes past a struct from an older
 * header. Call it as sk_session_options_init(&so) (the macro below). */
SK_C_API void sk_session_options_init_sized(sk_session_options* options, uint32_t struct_size);
/* The SK_C_API_VERSION 1 entry point, kept for binaries built against that
 * header: it writes the version 1 fields only (no communicator). */
SK_C_API void sk_session_options_init(sk_session_options* options);
#define sk_session_options_init(options) \
  sk_session_options_init_sized((options), (uint32_t)sizeof *(options))
/* `options` may be NULL (defaults). */
SK_C_API sk_status sk_session_create(const sk_session_options* options, sk_session** out);
SK_C_API void sk_session_destroy(sk_session* session);

/* Collectives (docs/COLLECTIVES.md): a communicator over MPI for
 * sk_session_options.communicator. `fortran_comm` is an MPI communicator's
 * Fortran handle, the language-neutral way to pass one: MPI_Comm_c2f(comm) in
 * C, comm.py2f() in mpi4py; the caller has initialised MPI (at
 * MPI_THREAD_SERIALIZED or above: whichever worker reaches a collective calls
 * MPI). The library duplicates the communicator, so the caller's may be freed
 * afterwards; group ranks in op lists are ranks of this communicator.
 *   SK_ERR_BAD_INPUT: the library was built without MPI (the message says how
 *   to build with it), MPI is not initialised or below SERIALIZED, or the
 *   handle is not an intracommunicator (MPI_COMM_NULL, a freed one, any other
 *   number). */
SK_C_API sk_status sk_communicator_mpi(int fortran_comm, sk_communicator** out);
/* The same over MPI_COMM_WORLD, initialising MPI (at MPI_THREAD_SERIALIZED)
 * if the caller has not: for a program that uses no MPI itself. Such a
 * program calls sk_mpi_finalize() before it exits. */
SK_C_API sk_status sk_communicator_mpi_world(sk_communicator** out);
/* This process's rank in the communicator, and its number of ranks (0 for NULL). */
SK_C_API uint32_t sk_communicator_rank(const sk_communicator* comm);
SK_C_API uint32_t sk_communicator_size(const sk_communicator* comm);
SK_C_API void sk_communicator_destroy(sk_communicator* comm);
/* MPI_Finalize, if the library initialised MPI (sk_communicator_mpi_world),
 * after every session holding a communicator is destroyed; otherwise nothing
 * (MPI is the caller's to finalise). After a failed collective, exit without
 * it: a peer may never match what the failed one left pending. */
SK_C_API void sk_mpi_finalize(void);

/* A kernel source held in memory: an op list kernel whose "source" is
 * exactly `name` compiles `text` (the name's extension, .c or .cpp, picks the
 * language). Stored content-addressed under the cache directory, so it is
 * compiled once and cache keys follow the text. */
typedef struct sk_source {
  const char* name;
  const char* text;
  size_t size;
} sk_source;

/* Plan, generate, compile (cached), load. `options` (NULL: none) is merged
 * over the op list's own; fuse = 0 gives the unfused reference. */
SK_C_API sk_status sk_compile_file(sk_session* session, const char* oplist_path, const char* options, int fuse,
                          sk_plan** out);
/* The same from an op list held in memory. Relative sources not among
 * `sources` resolve against `base_dir` (NULL: the current directory). */
SK_C_API sk_status sk_compile_json(sk_session* session, const char* json, size_t json_size, const char* base_dir,
                          const sk_source* sources, size_t source_count, const char* options, int fuse,
                          sk_plan** out);
SK_C_API void sk_plan_destroy(sk_plan* plan);

SK_C_API size_t sk_plan_op_count(const sk_plan* plan);      /* launches in the op list */
SK_C_API size_t sk_plan_launch_count(const sk_plan* plan);  /* launches after fusion */
SK_C_API size_t sk_plan_buffer_count(const sk_plan* plan);
SK_C_API size_t sk_plan_superkernel_count(const sk_plan* plan); /* fused steps among the launches */
/* The plan report (ops before/after, each SuperKernel, where and why the
 * plan split, edges by sync kind); valid until sk_plan_destroy. NULL for a
 * NULL plan. */
SK_C_API const char* sk_plan_report(sk_plan* plan);
/* NULL when index is out of range. */
SK_C_API const char* sk_plan_buffer_name(const sk_plan* plan, size_t index);
/* 0 when index is out of range. */
SK_C_API uint64_t sk_plan_buffer_bytes(const sk_plan* plan, size_t index);

/* Run every step on caller memory: `buffers[i]` is the base of the op list's
 * buffer i (at least sk_plan_buffer_bytes(i) bytes); count must equal
 * sk_plan_buffer_count. Several threads may run one plan at once, each on
 * its own buffers: a run only reads the plan (its argument arrays are its
 * own) and the session's device serializes the launches. Runs that share an
 * output buffer race on its contents. */
SK_C_API sk_status sk_run(sk_session* session, sk_plan* plan, void* const* buffers, size_t count);

/* Buffers owned by the library, initialized as the op list says (zeros,
 * ones, random, iota, file). */
SK_C_API sk_status sk_buffers_create(const sk_plan* plan, sk_buffers** out);
SK_C_API void sk_buffers_destroy(sk_buffers* buffers);
SK_C_API void* sk_buffers_data(sk_buffers* buffers, size_t index); /* NULL when out of range */
SK_C_API sk_status sk_run_buffers(sk_session* session, sk_plan* plan, sk_buffers* buffers);
/* SK_OK if every buffer is bit-identical, SK_ERR_MISMATCH (message: the
 * first difference) if not. */
SK_C_API sk_status sk_buffers_compare(const sk_buffers* expected, const sk_buffers* actual);

typedef struct sk_cache_stats {
  uint64_t hits, misses, compiles, compile_failures;
  uint64_t corrupt, untrusted, evicted;
  uint64_t entries, bytes, max_bytes;
} sk_cache_stats;
/* The session cache's counters (persisted ones included) and size. */
SK_C_API sk_status sk_cache_stats_get(sk_session* session, sk_cache_stats* out);
/* Evict least recently used entries until the cache holds <= max_bytes. */
SK_C_API sk_status sk_cache_gc(sk_session* session, uint64_t max_bytes);
/* The cache directory in use. */
SK_C_API const char* sk_cache_dir(sk_session* session);

/* What the sync cost model compares (the plan's sync-model option), in ns per
 * op boundary on one worker. */
typedef struct sk_sync_costs {
  double barrier_ns;  /* a full barrier among the queue's cores */
  double counter_ns;  /* a wait on one producer's completion counter */
  double flag_ns;     /* a wait on one producer block's flag */
} sk_sync_costs;
/* Measure this machine's sync costs for `target` (NULL: "cpu") on the
 * session's workers, about half a second, and cache them in the session's
 * cache directory, where every later plan for that target and worker count
 * reads them (sk-compile --calibrate does the same). `out` may be NULL.
 * SK_ERR_BAD_INPUT: a target without a calibration, or a session of one
 * worker; SK_ERR_RUNTIME: timings another job disturbed, 3 times (nothing
 * was saved: run it again on a quieter machine). */
SK_C_API sk_status sk_calibrate_sync(sk_session* session, const char* target, sk_sync_costs* out);

#ifdef __cplusplus
}
#endif

#endif
