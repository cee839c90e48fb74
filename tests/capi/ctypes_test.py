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
                ("options", ctypes.c_char_p)]


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
lib.sk_session_options_init(ctypes.byref(opts))
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

# An error comes back as a status and a message.
status = lib.sk_compile_json(session, b"[]", 2, None, None, 0, None, 1, ctypes.byref(ctypes.c_void_p()))
assert status == 1 and lib.sk_last_error(), (status, lib.sk_last_error())

lib.sk_plan_destroy(plan)
lib.sk_session_destroy(session)
print("ctypes_test ok:", lib.sk_version().decode())
