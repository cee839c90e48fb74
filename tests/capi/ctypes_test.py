#!/usr/bin/env python3
"""The C API from Python through ctypes (no bindings, no build step): what a
Python graph engine does. Usage: ctypes_test.py LIBSUPERKERNEL_C CACHE_DIR"""
import ctypes
import sys

lib = ctypes.CDLL(sys.argv[1])
cache_dir = sys.argv[2].encode()


class SessionOptions(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("workers", ctypes.c_uint32), ("jobs", ctypes.c_uint32),
                ("memory_only", ctypes.c_int), ("cache_dir", ctypes.c_char_p), ("compiler", ctypes.c_char_p),
                ("options", ctypes.c_char_p), ("communicator", ctypes.c_void_p)]


class Source(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("text", ctypes.c_char_p), ("size", ctypes.c_size_t)]


lib.sk_last_error.restype = ctypes.c_char_p
lib.sk_version.restype = ctypes.c_char_p
lib.sk_plan_launch_count.restype = ctypes.c_size_t
lib.sk_plan_launch_count.argtypes = [ctypes.c_void_p]
lib.sk_session_destroy.argtypes = [ctypes.c_void_p]
lib.sk_plan_destroy.argtypes = [ctypes.c_void_p]
lib.sk_compile_json.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p,
                                ctypes.POINTER(Source), ctypes.c_size_t, ctypes.c_char_p, ctypes.c_int,
                                ctypes.POINTER(ctypes.c_void_p)]
lib.sk_run.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]


def check(status, what):
    if status != 0:
        sys.exit(f"ctypes_test: {what} failed ({status}): {lib.sk_last_error().decode()}")


opts = SessionOptions()
lib.sk_session_options_init_sized(ctypes.byref(opts), ctypes.sizeof(opts))
opts.cache_dir = cache_dir
opts.workers = 2
session = ctypes.c_void_p()
check(lib.sk_session_create(ctypes.byref(opts), ctypes.byref(session)), "sk_session_create")

kernel = b"""#include <superkernel/cpu/kernel.h>
SK_KERNEL void twice(const sk_ctx* ctx, const float* x, float* y, int64_t n) {
  int64_t b, e;
  sk_block_range(ctx, n, &b, &e);
  for (int64_t i = b; i < e; ++i) y[i] = 2.0f * x[i];
}
"""
oplist = b"""{"format": "superkernel.oplist", "version": 1, "target": "cpu", "arch": "native",
 "kernels": {"twice": {"source": "twice.cpp", "entry": "twice", "params": [
   {"name": "x", "kind": "buffer", "dtype": "f32", "access": "read", "partition": "block"},
   {"name": "y", "kind": "buffer", "dtype": "f32", "access": "write", "partition": "block"},
   {"name": "n", "kind": "scalar", "dtype": "i64"}]}},
 "buffers": {"a": {"dtype": "f32", "shape": [256]}, "b": {"dtype": "f32", "shape": [256]},
             "c": {"dtype": "f32", "shape": [256]}},
 "ops": [{"name": "t0", "kernel": "twice", "block_dim": 4, "scope": "s", "args": {"x": "a", "y": "b", "n": 256}},
         {"name": "t1", "kernel": "twice", "block_dim": 4, "scope": "s", "args": {"x": "b", "y": "c", "n": 256}}]}"""
src = Source(b"twice.cpp", kernel, len(kernel))
plan = ctypes.c_void_p()
check(lib.sk_compile_json(session, oplist, len(oplist), None, ctypes.byref(src), 1, None, 1, ctypes.byref(plan)),
      "sk_compile_json")
assert lib.sk_plan_launch_count(plan) == 1, lib.sk_plan_launch_count(plan)

Floats = ctypes.c_float * 256
a, b, c = Floats(*range(256)), Floats(), Floats()
bufs = (ctypes.c_void_p * 3)(ctypes.addressof(a), ctypes.addressof(b), ctypes.addressof(c))
check(lib.sk_run(session, plan, bufs, 3), "sk_run")
bad = [i for i in range(256) if c[i] != 4.0 * i]
assert not bad, f"wrong results at {bad[:5]}"

# A generation loop: the position is element 0 of "step", read at run time
# ({"from": "step"}); the plan's last op advances it, so T runs need nothing
# from the host, and a host that writes the position between runs works too.
# No run compiles anything (the cache's compile counter stays put).
class CacheStats(ctypes.Structure):
    _fields_ = [(n, ctypes.c_uint64) for n in ("hits", "misses", "compiles", "compile_failures", "corrupt",
                                                "untrusted", "evicted", "entries", "bytes", "max_bytes")]


loop_kernel = b"""#include <superkernel/cpu/kernel.h>
SK_KERNEL void at_pos(const sk_ctx* ctx, const float* x, float* y, int64_t n, int64_t pos) {
  int64_t b, e;
  sk_block_range(ctx, n, &b, &e);
  for (int64_t i = b; i < e; ++i) y[i] = x[i] * (float)(pos + 1);
}
SK_KERNEL void advance(const sk_ctx* ctx, int64_t* s) {
  if (ctx->block_idx == 0) s[0] += 1;
}
"""
loop_list = b"""{"format": "superkernel.oplist", "version": 1,
 "kernels": {
   "at_pos": {"source": "loop.cpp", "entry": "at_pos", "params": [
     {"name": "x", "kind": "buffer", "dtype": "f32", "access": "read", "partition": "block"},
     {"name": "y", "kind": "buffer", "dtype": "f32", "access": "write", "partition": "block"},
     {"name": "n", "kind": "scalar", "dtype": "i64"},
     {"name": "pos", "kind": "scalar", "dtype": "i64", "runtime": true}]},
   "advance": {"source": "loop.cpp", "entry": "advance", "params": [
     {"name": "s", "kind": "buffer", "dtype": "i64", "access": "readwrite", "partition": "all"}]}},
 "buffers": {"x": {"dtype": "f32", "shape": [64]}, "y": {"dtype": "f32", "shape": [64]},
             "step": {"dtype": "i64", "shape": [1]}},
 "ops": [{"name": "scale", "kernel": "at_pos", "block_dim": 4, "scope": "tok",
          "args": {"x": "x", "y": "y", "n": 64, "pos": {"from": "step", "index": 0}}},
         {"name": "next", "kernel": "advance", "block_dim": 1, "scope": "tok", "args": {"s": "step"}}]}"""
lsrc = Source(b"loop.cpp", loop_kernel, len(loop_kernel))
loop_plan = ctypes.c_void_p()
check(lib.sk_compile_json(session, loop_list, len(loop_list), None, ctypes.byref(lsrc), 1, None, 1,
                          ctypes.byref(loop_plan)), "sk_compile_json (loop)")
before = CacheStats()
check(lib.sk_cache_stats_get(session, ctypes.byref(before)), "sk_cache_stats_get")
x, y = (ctypes.c_float * 64)(*[0.5 * i for i in range(64)]), (ctypes.c_float * 64)()
step = (ctypes.c_int64 * 1)(0)
loop_bufs = (ctypes.c_void_p * 3)(ctypes.addressof(x), ctypes.addressof(y), ctypes.addressof(step))
for t in range(6):
    check(lib.sk_run(session, loop_plan, loop_bufs, 3), f"sk_run (token {t})")
    assert step[0] == t + 1, (t, step[0])
    assert all(y[i] == x[i] * (t + 1) for i in range(64)), f"token {t}: {list(y)[:4]}"
step[0] = 40  # the host sets the position
check(lib.sk_run(session, loop_plan, loop_bufs, 3), "sk_run (host position)")
assert step[0] == 41 and y[3] == x[3] * 41, (step[0], y[3])
after = CacheStats()
check(lib.sk_cache_stats_get(session, ctypes.byref(after)), "sk_cache_stats_get")
assert after.compiles == before.compiles, (before.compiles, after.compiles)
lib.sk_plan_destroy(loop_plan)

# A runtime value for a compile-time parameter is bad input (status 1) naming the argument.
bad_list = loop_list.replace(b'"runtime": true', b'"runtime": false')
status = lib.sk_compile_json(session, bad_list, len(bad_list), None, ctypes.byref(lsrc), 1, None, 1,
                             ctypes.byref(ctypes.c_void_p()))
msg = lib.sk_last_error().decode()
assert status == 1 and "ops[0].args.pos" in msg and "compile-time" in msg, (status, msg)

# An error comes back as a status and a message.
status = lib.sk_compile_json(session, b"[]", 2, None, None, 0, None, 1, ctypes.byref(ctypes.c_void_p()))
assert status == 1 and lib.sk_last_error(), (status, lib.sk_last_error())

lib.sk_plan_destroy(plan)
lib.sk_session_destroy(session)
print("ctypes_test ok:", lib.sk_version().decode())
