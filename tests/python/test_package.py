"""The package over the C API: sessions, op lists, cache statistics and the
errors every public function raises for bad input."""

import ctypes
import os
import subprocess
import sys
import unittest

import superkernel
from _util import ScratchCache

ADD = """
#include <superkernel/cpu/kernel.h>
SK_KERNEL void add1(const sk_ctx* ctx, const float* x, float* y, int64_t n) {
  int64_t b, e;
  sk_block_range(ctx, n, &b, &e);
  for (int64_t i = b; i < e; ++i) y[i] = x[i] + 1.0f;
}
"""


def oplist(n=64):
    return {"format": "superkernel.oplist", "version": 1, "target": "cpu",
            "kernels": {"add1": {"source": "add1.cpp", "entry": "add1", "params": [
                {"name": "x", "kind": "buffer", "dtype": "f32", "access": "read", "partition": "block"},
                {"name": "y", "kind": "buffer", "dtype": "f32", "access": "write", "partition": "block"},
                {"name": "n", "kind": "scalar", "dtype": "i64"}]}},
            "buffers": {"a": {"dtype": "f32", "shape": [n]}, "b": {"dtype": "f32", "shape": [n]},
                        "c": {"dtype": "f32", "shape": [n]}},
            "ops": [{"name": "o1", "kernel": "add1", "block_dim": 2, "scope": "s", "args": {"x": "a", "y": "b", "n": n}},
                    {"name": "o2", "kernel": "add1", "block_dim": 2, "scope": "s", "args": {"x": "b", "y": "c", "n": n}}]}


class PackageTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.cache = ScratchCache("package")
        cls.session = superkernel.Session(cache_dir=cls.cache.path, workers=2)

    @classmethod
    def tearDownClass(cls):
        cls.session.close()
        cls.cache.close()

    def test_compile_and_run_on_caller_memory(self):
        plan = self.session.compile(oplist(), sources={"add1.cpp": ADD})
        self.assertEqual(plan.op_count, 2)
        self.assertEqual(plan.launch_count, 1)
        self.assertEqual(plan.superkernel_count, 1)
        self.assertIn("SuperKernel", plan.report)
        a = (ctypes.c_float * 64)(*range(64))
        b, c = (ctypes.c_float * 64)(), (ctypes.c_float * 64)()
        plan.run({"a": ctypes.addressof(a), "b": ctypes.addressof(b), "c": ctypes.addressof(c)})
        self.assertEqual(list(c), [float(i + 2) for i in range(64)])
        self.assertEqual(plan.buffer_names, ("a", "b", "c"))
        self.assertEqual(plan.buffer_bytes, (256, 256, 256))

    def test_one_plan_runs_from_eight_threads(self):
        # Plan.run from several threads at once (sk_run releases the GIL): each thread has its own buffers
        # and inputs, so a run that used another call's addresses computes another thread's answer.
        import threading
        plan = self.session.compile(oplist(), sources={"add1.cpp": ADD})
        wrong, errors = [], []

        def worker(t):
            a = (ctypes.c_float * 64)(*[float(t * 1000 + i) for i in range(64)])
            b, c = (ctypes.c_float * 64)(), (ctypes.c_float * 64)()
            want = [float(t * 1000 + i + 2) for i in range(64)]
            for k in range(150):
                try:
                    if k % 2:
                        plan.run([ctypes.addressof(a), ctypes.addressof(b), ctypes.addressof(c)])
                    else:
                        plan.run({"a": ctypes.addressof(a), "b": ctypes.addressof(b), "c": ctypes.addressof(c)})
                except superkernel.SuperkernelError as e:
                    errors.append(str(e))
                if list(c) != want:
                    wrong.append((t, k))
                ctypes.memset(c, 0, ctypes.sizeof(c))

        threads = [threading.Thread(target=worker, args=(t,)) for t in range(8)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        self.assertEqual(errors, [])
        self.assertEqual(wrong, [])

    def test_cache_stats_count_compiles_and_hits(self):
        ol = oplist(96)
        before = superkernel.cache_stats(self.cache.path)
        for k in ("compiles", "hits", "misses"):
            self.assertIn(k, before)
        self.session.compile(ol, sources={"add1.cpp": ADD})
        mid = superkernel.cache_stats(self.cache.path)
        self.assertGreater(mid["compiles"], before["compiles"])
        # A new session (a new memory cache) with the same machine (workers): a disk hit, no compile.
        fresh = superkernel.Session(cache_dir=self.cache.path, workers=2)
        fresh.compile(ol, sources={"add1.cpp": ADD})
        self.assertGreater(fresh.cache_stats()["hits"], 0)
        self.assertEqual(superkernel.cache_stats(self.cache.path)["compiles"], mid["compiles"])

    def test_errors_carry_the_library_message(self):
        bad = oplist()
        bad["ops"][0]["args"]["x"] = "nope"
        with self.assertRaises(superkernel.BadInputError) as cm:
            self.session.compile(bad, sources={"add1.cpp": ADD})
        self.assertIn("nope", str(cm.exception))
        self.assertEqual(cm.exception.status, "bad_input")
        with self.assertRaises(superkernel.BadInputError) as cm:
            self.session.compile("{not json", sources={})
        self.assertIn("JSON", str(cm.exception).upper())
        with self.assertRaises(superkernel.BadInputError) as cm:
            self.session.compile(oplist(), sources={"add1.cpp": ADD}, options="early-start=7")
        self.assertIn("early-start", str(cm.exception))
        with self.assertRaises(superkernel.CompileError) as cm:
            self.session.compile(oplist(32), sources={"add1.cpp": "this is not C++"})
        self.assertIn("add1.cpp", str(cm.exception))

    def test_bad_arguments(self):
        with self.assertRaises(superkernel.InvalidArgumentError):
            superkernel.Session(workers=0)
        with self.assertRaises(superkernel.InvalidArgumentError):
            superkernel.Session(cache_dir=42)
        with self.assertRaises(superkernel.InvalidArgumentError):
            superkernel.cache_stats(3.5)
        with self.assertRaises(superkernel.InvalidArgumentError):
            self.session.compile(oplist(), sources={"add1.cpp": ADD}, options=5)
        plan = self.session.compile(oplist(), sources={"add1.cpp": ADD})
        with self.assertRaises(superkernel.InvalidArgumentError) as cm:
            plan.run({"a": 0})
        self.assertIn("b", str(cm.exception))
        with self.assertRaises(superkernel.InvalidArgumentError):
            plan.run([0, 0])
        closed = superkernel.Session(cache_dir=self.cache.path, workers=1)
        closed.close()
        with self.assertRaises(superkernel.InvalidArgumentError):
            closed.cache_stats()

    def test_calibrate_sync_is_cached_where_later_plans_read_it(self):
        # Its own cache: the calibration file is per cache directory, target and worker count.
        scratch = ScratchCache("calibrate")
        s = superkernel.Session(cache_dir=scratch.path, workers=2)
        try:
            try:
                costs = s.calibrate_sync()
            except superkernel.RuntimeFailure as e:
                self.assertIn("busy", str(e))
                self.skipTest("the machine was too busy to calibrate: " + str(e))
            self.assertEqual(sorted(costs), ["barrier_ns", "counter_ns", "flag_ns"])
            for name, ns in costs.items():
                self.assertGreater(ns, 0.0, name)
            self.assertTrue(os.path.isfile(os.path.join(scratch.path, "calibration", "cpu-2.json")))
            report = s.compile(oplist(), sources={"add1.cpp": ADD}).report
            self.assertIn("calibrated", report)
        finally:
            s.close()
            scratch.close()

    def test_calibrate_sync_errors(self):
        with self.assertRaises(superkernel.BadInputError) as cm:
            self.session.calibrate_sync("ascend")
        self.assertIn("ascend", str(cm.exception))
        with self.assertRaises(superkernel.BadInputError):
            self.session.calibrate_sync("no-such-target")
        with self.assertRaises(superkernel.InvalidArgumentError):
            self.session.calibrate_sync(5)
        with self.assertRaises(superkernel.InvalidArgumentError):
            self.session.calibrate_sync("cpu\0x")
        one = superkernel.Session(cache_dir=self.cache.path, workers=1)
        try:
            with self.assertRaises(superkernel.BadInputError) as cm:
                one.calibrate_sync()
            self.assertIn("worker", str(cm.exception))
        finally:
            one.close()

    def test_a_missing_library_is_one_clear_error(self):
        env = dict(os.environ, SK_C_LIBRARY="/nonexistent/libsuperkernel_c.so")
        code = ("import superkernel\ntry:\n    superkernel.version()\nexcept superkernel.IoError as e:\n"
                "    print('IoError:', e)\n")
        r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("IoError: superkernel: cannot load the C library /nonexistent/libsuperkernel_c.so", r.stdout)
        self.assertIn("SK_C_LIBRARY", r.stdout)

    def test_version(self):
        self.assertRegex(superkernel.version(), r"^\d+\.\d+\.\d+$")


if __name__ == "__main__":
    unittest.main()
