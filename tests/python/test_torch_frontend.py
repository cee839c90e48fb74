"""The tracer and the lowering on what model files do: errors that name the
module and the source line (never a raw exception), arithmetic written the
way people write it (1 - x, in-place updates, Python scalars on 0-d results,
-inf and NaN fills), f64 computed in f64, a lowering that declines leaving
nothing behind, and one compiled module called from 8 threads at once."""

import json
import os
import subprocess
import sys
import tempfile
import threading
import unittest

import torch
import torch.nn.functional as F

import superkernel
from superkernel.torch import lowering
from _util import CompileTestCase
from models import DecoderLayer, decode_inputs

F32 = dict(rtol=1e-4, atol=1e-5)


class Inner(torch.nn.Module):
    def forward(self, x):
        if x.sum() > 0:  # a branch on a tensor's value
            return x
        return -x


class Outer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Inner()

    def forward(self, x):
        return self.block(x * 2)


class FrontendTest(CompileTestCase):
    cache_tag = "frontend"

    def check(self, fn, args, eager_ops=0, tol=F32):
        cm = self.compile(fn, args)
        with torch.no_grad():
            want = fn(*[a.clone() for a in args])
        torch.testing.assert_close(cm(*args), want, **tol)
        self.assertEqual(cm.summary()["eager_ops"], eager_ops, cm.summary()["splits"])
        return cm

    # ---- errors ----------------------------------------------------------------------
    def test_a_tracing_error_names_the_module_path_and_the_source_line(self):
        with self.assertRaises(superkernel.BadInputError) as cm:
            self.compile(Outer(), (torch.randn(4),))
        msg = str(cm.exception)
        self.assertIn("in module block", msg)
        self.assertIn("test_torch_frontend.py:", msg)
        self.assertIn("if x.sum() > 0", msg)
        self.assertIn("depends on a tensor's value", msg)

    def test_a_global_tensor_is_a_clear_error(self):
        table = torch.randn(4)

        def f(x):
            return x + table  # neither an argument nor a module attribute

        with self.assertRaises(superkernel.BadInputError) as cm:
            self.compile(f, (torch.randn(4),))
        self.assertIn("pass it as an argument", str(cm.exception))

    def test_the_module_is_left_as_it_was_after_a_failed_trace(self):
        m = Outer()
        m.register_buffer("b", torch.ones(3))
        before = m.b
        with self.assertRaises(superkernel.BadInputError):
            self.compile(m, (torch.randn(4),))
        self.assertIs(m.b, before)
        self.assertEqual(len(m.block._forward_pre_hooks) + len(m._forward_hooks), 0)

    # ---- arithmetic as written ---------------------------------------------------------
    def test_rsub_inplace_scalars_on_0d_gelu_clamp(self):
        def f(x, y):
            buf = torch.zeros_like(x)
            buf.add_(x)
            buf.mul_(2.0)
            z = 1 - torch.sigmoid(buf)
            s = z.sum() + 1
            return F.gelu(z) * s, F.gelu(y, approximate="tanh").clamp(-0.5, 0.5), torch.relu_(y * 1.0)

        self.check(f, (torch.randn(3, 8), torch.randn(8)))

    def test_minus_inf_and_nan_fills_of_a_computed_tensor(self):
        def f(s, keep):
            a = torch.where(keep, s, torch.full_like(s, float("-inf")))
            b = torch.full_like(s, float("nan"))
            return torch.softmax(a, dim=-1), b, s.masked_fill(~keep, float("-inf"))

        cm = self.compile(f, (torch.randn(2, 5), torch.rand(2, 5) > 0.3))
        s, keep = torch.randn(2, 5), torch.rand(2, 5) > 0.3
        keep[:, 0] = True
        got, want = cm(s, keep), f(s, keep)
        for g, w in zip(got, want):
            torch.testing.assert_close(g, w, equal_nan=True, **F32)
        self.assertEqual(cm.summary()["eager_ops"], 0)

    def test_maximum_and_minimum_propagate_nan(self):
        # Found by fuzz_torch.py (seed 1, program 1000727): -inf @ a zero weight is NaN, and maximum must keep it.
        def f(x, y):
            return torch.maximum(x, y), torch.minimum(y, x)

        x = torch.tensor([1.0, float("nan"), -2.0, 0.5])
        y = torch.tensor([0.0, 3.0, float("nan"), 0.25])
        cm = self.compile(f, (x, y))
        for g, w in zip(cm(x, y), f(x, y)):
            torch.testing.assert_close(g, w, equal_nan=True)

    def test_f64_is_computed_in_f64(self):
        def f(a, b):
            return (a + b) - a, (a * b).sum(dim=-1), torch.softmax(a, dim=0), a @ b.t()

        a = torch.ones(4, 4, dtype=torch.float64)
        b = torch.full((4, 4), 1e-10, dtype=torch.float64)
        cm = self.compile(f, (a, b))
        got = cm(a, b)
        want = f(a, b)
        for g, w in zip(got, want):
            torch.testing.assert_close(g, w, rtol=1e-12, atol=0)
        self.assertGreater(float(got[0][0, 0]), 0.0)  # 1 + 1e-10 - 1 is not 0 in f64

    def test_sum_and_mean_of_everything_take_dtype(self):
        def f(x):
            return x.sum(dtype=torch.float64), x.mean(dtype=torch.float64), x.sum(dim=(0, 2)), x.mean((1, 2))

        x = torch.randn(3, 4, 5)
        cm = self.check(f, (x,))
        self.assertEqual(cm(x)[0].dtype, torch.float64)

    def test_softmax_over_a_middle_dimension_and_log_softmax(self):
        self.check(lambda x: (torch.softmax(x, dim=1), F.log_softmax(x, dim=-1)), (torch.randn(2, 5, 3),))

    def test_index_on_any_dimension_with_a_list_or_a_tensor(self):
        def f(x, i):
            return x[:, [-1], :], x[:, :, i], x[i]

        self.check(f, (torch.randn(4, 5, 6), torch.tensor([2, 0, 3])))

    def test_addmm_with_a_full_bias_and_baddbmm(self):
        def f(b, a, w, c, x, y):
            return torch.addmm(b, a, w, beta=0.5, alpha=2.0), torch.baddbmm(c, x, y, alpha=0.25)

        self.check(f, (torch.randn(3, 4), torch.randn(3, 5), torch.randn(5, 4), torch.randn(2, 3, 4),
                       torch.randn(2, 3, 6), torch.randn(2, 6, 4)))

    # ---- gathered weights read by a matmul without a copy (Mixtral's w1[expert_indices]) ---------------
    @staticmethod
    def _ops(cm, entry):
        return [op for step in cm._program.steps if isinstance(step, lowering.Segment) for op in step.ops
                if op.entry == entry]

    def test_a_matmul_reads_gathered_rows_from_the_table_and_no_copy_is_made(self):
        def f(x, w, idx):  # einsum over gathered experts, negative indices too
            return torch.einsum("ti,taoi->tao", x, w[idx]), torch.einsum("tao,taio->tai", x.new_ones(2, 2, 6), w[idx].transpose(-1, -2))

        w, idx = torch.randn(5, 6, 4), torch.tensor([[1, -1], [0, 3]])
        cm = self.check(f, (torch.randn(2, 4), w, idx))
        self.assertEqual(self._ops(cm, "skt_gather"), [])
        folded = [op for op in self._ops(cm, "skt_mm") if op.macros.get("SKT_B_GATHER") == "1"]
        self.assertEqual(len(folded), 2)
        self.assertFalse(any(b.numel == 2 * 2 * 6 * 4 for b in cm._program.buffers.values() if b.kind == "work"))
        # Other indices, same plan: the rows come from the index at run time.
        idx2 = torch.tensor([[4, 2], [-2, 0]])
        torch.testing.assert_close(cm(torch.ones(2, 4), w, idx2), f(torch.ones(2, 4), w, idx2), **F32)

    def test_gathered_rows_another_op_reads_are_copied_once_before_it(self):
        def f(x, w, idx):
            g = w[idx]                       # [2, 6, 4]
            y = torch.bmm(g, x)              # folded
            return y, g * 2.0                # g itself is needed: one copy

        cm = self.check(f, (torch.randn(2, 4, 3), torch.randn(5, 6, 4), torch.tensor([3, 1])))
        self.assertEqual(len(self._ops(cm, "skt_gather")), 1)

    def test_an_index_written_after_the_gather_does_not_change_the_gathered_rows(self):
        def f(x, w, idx):
            g = w[idx]
            idx.add_(1)                      # the gather must have read the old index
            return torch.bmm(g, x), idx

        args = (torch.randn(2, 4, 3), torch.randn(5, 6, 4), torch.tensor([3, 1]))
        cm = self.compile(f, tuple(a.clone() for a in args))
        want = f(*[a.clone() for a in args])
        torch.testing.assert_close(cm(*[a.clone() for a in args]), want, **F32)

    def test_a_gather_of_gathered_rows_is_made_after_them(self):
        # Found by fuzz_torch (seed 1, program 1000054): making t1 must not make t2 (which reads t1) first.
        self.check(lambda x: (x[torch.tensor([1, 2])], x[torch.tensor([1, 2])][torch.tensor([0, 1])]),
                   (torch.randn(3, dtype=torch.float64),))
        self.check(lambda w, i, j: (w[i][j] * 2.0, w[i]), (torch.randn(6, 3, 4), torch.tensor([5, 0, 2]),
                                                          torch.tensor([2, 2])))

    def test_a_gathered_matmul_with_an_index_out_of_range_is_a_runtime_error(self):
        cm = self.compile(lambda x, w, idx: torch.bmm(w[idx], x),
                          (torch.randn(2, 4, 3), torch.randn(5, 6, 4), torch.tensor([3, 1])))
        with self.assertRaises(superkernel.RuntimeFailure) as err:
            cm(torch.randn(2, 4, 3), torch.randn(5, 6, 4), torch.tensor([3, 5]))
        self.assertIn("index out of range", str(err.exception))

    def test_a_declined_lowering_leaves_no_buffer_and_no_op(self):
        def f(x):
            y = x * 2.0
            v, i = torch.topk(y, 2, largest=False)  # topk over the smallest: runs eagerly
            return v + 1.0, i

        cm = self.check(f, (torch.randn(3, 6),), eager_ops=1)
        prog = cm._program
        used = {cm._program.output[0].buf, cm._program.output[1].buf}
        for step in prog.steps:
            if isinstance(step, lowering.Segment):
                for op in step.ops:
                    used |= {a for a in op.args.values() if isinstance(a, str)}
            else:
                used |= {o[0] for o in step.outputs}
        orphans = [b.name for b in prog.buffers.values() if b.kind == "work" and b.name not in used]
        self.assertEqual(orphans, [])
        self.assertIn("largest", cm.summary()["splits"][0]["reason"])

    def test_a_lowering_that_fails_unexpectedly_runs_the_op_eagerly_counted(self):
        op = torch.ops.aten.exp.default
        original = lowering.lowering_for(op)

        def broken(low, n, v, x):
            raise KeyError("a bug")

        lowering._LOWERINGS[op] = broken
        try:
            with self.assertLogs("superkernel.torch", level="WARNING") as logs:
                cm = self.check(lambda x: torch.exp(x) * 2.0, (torch.randn(5),), eager_ops=1)
        finally:
            lowering._LOWERINGS[op] = original
        self.assertEqual(cm.summary()["lowering_failures"], 1)
        self.assertIn("KeyError", cm.summary()["splits"][0]["reason"])
        self.assertIn("a bug", "".join(logs.output))

    def test_dropout_in_eval_and_no_grad(self):
        m = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.Dropout(0.5), torch.nn.Linear(8, 4)).eval()
        self.check(m, (torch.randn(2, 8),))

    # ---- usability -------------------------------------------------------------------------
    def test_oplists_run_in_sk_compile_as_they_are(self):
        m = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.GELU(), torch.nn.LayerNorm(16)).eval()
        cm = self.compile(m, (torch.randn(2, 8),))
        tool = os.path.join(os.environ.get("SK_TEST_BINARY_DIR", ""), "tools", "sk-compile")
        if not os.path.exists(tool):
            self.skipTest("sk-compile is not built beside this package")
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "from_oplists.json")
            with open(path, "w") as f:
                json.dump(cm.oplists()[0], f)
            paths = cm.write_oplists(os.path.join(d, "written"))
            for p in (path, str(paths[0])):
                r = subprocess.run([tool, p, "--run", "--cache-dir", self.cache.path], capture_output=True, text=True,
                                   timeout=600)
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertIn("identical", r.stdout)

    def test_import_without_torch_names_the_interpreter(self):
        code = "import sys; sys.modules['torch'] = None; import superkernel.torch"
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("ImportError", r.stderr)
        self.assertIn(sys.executable, r.stderr)
        self.assertIn("python3-torch", r.stderr)

    # ---- several threads -------------------------------------------------------------------
    def test_one_compiled_module_from_eight_threads(self):
        torch.manual_seed(0)
        layer = DecoderLayer(dim=64, heads=4, kv_heads=2, ffn=128, max_seq=8).eval()
        x, pos = decode_inputs(64, 3)
        cm = self.compile(layer, (x, pos))
        want = cm(x, pos)
        bad, errors = [], []

        def worker():
            try:
                for _ in range(1000):
                    if not torch.equal(cm(x, pos), want):
                        bad.append(1)
            except Exception as e:  # pragma: no cover - reported below
                errors.append(repr(e))

        threads = [threading.Thread(target=worker) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])
        self.assertEqual(len(bad), 0, f"{len(bad)} of 8000 concurrent results differ from the single-threaded one")


if __name__ == "__main__":
    unittest.main()
