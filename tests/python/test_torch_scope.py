"""skt.scope (torchair's super_kernel scope) and the errors of compile and
of a compiled module's call."""

import unittest

import torch

import superkernel
import superkernel.torch as skt
from _util import CompileTestCase, ScratchCache

F32 = dict(rtol=1e-4, atol=1e-5)


class Scoped(torch.nn.Module):
    def __init__(self, inner=None, inner_options="", outer_options=""):
        super().__init__()
        self.inner, self.inner_options, self.outer_options = inner, inner_options, outer_options

    def forward(self, x):
        y = x * 2.0                        # outside every scope: not fused
        with skt.scope("outer", self.outer_options):
            y = torch.sigmoid(y) + 1.0
            if self.inner is not False:
                with skt.scope(self.inner, self.inner_options):
                    y = torch.exp(y * 0.5) - x
                    y = y * y
            y = torch.relu(y - 0.5)
        return y + x


class ScopeTest(CompileTestCase):
    cache_tag = "scope"

    def test_without_scopes_the_whole_graph_is_one_superkernel(self):
        def f(x):
            return torch.relu(torch.sigmoid(x * 2.0) + x) * 3.0

        x = torch.randn(64)
        cm = self.compile(f, (x,))
        torch.testing.assert_close(cm(x), f(x), **F32)
        s = cm.summary()
        self.assertEqual((s["superkernels"], s["launches"]), (1, 1))
        self.assertEqual(s["aten_ops"], 5)

    def test_only_scoped_ops_fuse_and_the_module_runs_eagerly_unchanged(self):
        m = Scoped(inner=False)
        x = torch.randn(32)
        want = m(x)  # outside a trace the scope does nothing
        cm = self.compile(m, (x,))
        torch.testing.assert_close(cm(x), want, **F32)
        s = cm.summary()
        # mul outside (1 launch), the outer scope's 4 ops (1 SuperKernel), the final add outside (1 launch).
        self.assertEqual(s["superkernels"], 1, cm.report)
        self.assertEqual(s["launches"], 3, cm.report)
        self.assertIn("scope outer", cm.report)

    def test_an_inner_scope_wins_and_splits_the_outer_one(self):
        m = Scoped(inner="inner")
        x = torch.randn(32)
        cm = self.compile(m, (x,))
        torch.testing.assert_close(cm(x), m(x), **F32)
        s = cm.summary()
        # outer (sigmoid, add) | inner (mul, exp, sub, mul) | outer (sub, relu): 3 SuperKernels + 2 unscoped ops.
        self.assertEqual(s["superkernels"], 3, cm.report)
        self.assertEqual(s["launches"], 5, cm.report)
        self.assertIn("scope inner", cm.report)

    def test_scope_none_never_fuses_inside_an_enclosing_scope(self):
        m = Scoped(inner=None)
        x = torch.randn(32)
        cm = self.compile(m, (x,))
        torch.testing.assert_close(cm(x), m(x), **F32)
        s = cm.summary()
        # outer | 4 never-fused ops | outer, and the 2 unscoped ops.
        self.assertEqual(s["superkernels"], 2, cm.report)
        self.assertEqual(s["launches"], 2 + 4 + 2, cm.report)

    def test_per_scope_options_apply_to_that_scope(self):
        m = Scoped(inner="inner", inner_options="early-start=0")
        x = torch.randn(4096)
        cm = self.compile(m, (x,))
        torch.testing.assert_close(cm(x), m(x), **F32)
        ol = cm.oplists()[0]
        self.assertEqual(ol["scopes"], {"inner": {"options": "early-start=0"}})
        m2 = Scoped(inner="inner", inner_options="debug-sync-all=1")
        cm2 = self.compile(m2, (x,))
        self.assertRegex(cm2.report, r"scope inner\)[^\n]*[1-9]\d* barriers")

    def test_bad_scope_options_are_the_librarys_error(self):
        m = Scoped(inner="inner", inner_options="early-start=7")
        with self.assertRaises(superkernel.BadInputError) as cm:
            self.compile(m, (torch.randn(8),))
        # The library's message, naming the scope as the user wrote it (not an op list's "scopes.inner.options").
        self.assertIn("early-start", str(cm.exception))
        self.assertIn("skt.scope('inner', 'early-start=7')", str(cm.exception))
        self.assertNotIn("<memory>", str(cm.exception))

    def test_one_scope_one_option_set(self):
        def f(x):
            with skt.scope("a", "early-start=0"):
                x = x + 1.0
            x = x * 2.0
            with skt.scope("a", "early-start=1"):
                x = x + 1.0
            return x

        with self.assertRaises(superkernel.BadInputError) as cm:
            self.compile(f, (torch.randn(8),))
        self.assertIn("'a'", str(cm.exception))

    def test_scope_arguments(self):
        for bad in (lambda: skt.scope(3), lambda: skt.scope(""), lambda: skt.scope("a", 1),
                    lambda: skt.scope(None, "early-start=1")):
            with self.assertRaises(superkernel.InvalidArgumentError):
                with bad():
                    pass


class CompileErrorsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.cache = ScratchCache("errors")

    @classmethod
    def tearDownClass(cls):
        cls.cache.close()

    def test_bad_input_to_compile(self):
        x = torch.randn(4)
        c = self.cache.path
        cases = [
            (lambda: skt.compile(42, (x,), cache_dir=c), superkernel.InvalidArgumentError, "callable"),
            (lambda: skt.compile(torch.relu, [1.0], cache_dir=c), superkernel.InvalidArgumentError, "tensor"),
            (lambda: skt.compile(torch.relu, "x", cache_dir=c), superkernel.InvalidArgumentError, "tuple"),
            (lambda: skt.compile(torch.relu, (x,), target="cuda", cache_dir=c), superkernel.BadInputError, "cuda"),
            (lambda: skt.compile(torch.relu, (x,), options=3, cache_dir=c), superkernel.InvalidArgumentError, "options"),
            (lambda: skt.compile(torch.relu, (x,), options="nonsense=1", cache_dir=c), superkernel.BadInputError,
             "nonsense"),
            (lambda: skt.compile(torch.relu, (x,), workers=0, cache_dir=c), superkernel.InvalidArgumentError, "workers"),
            (lambda: skt.compile(torch.relu, (x,), cache_dir=7), superkernel.InvalidArgumentError, "cache_dir"),
            (lambda: skt.compile(torch.relu, (x.to(torch.complex128),), cache_dir=c), superkernel.BadInputError,
             "dtype"),
        ]
        for fn, exc, words in cases:
            with self.assertRaises(exc) as cm:
                fn()
            self.assertIn(words, str(cm.exception))

    def test_a_branch_on_a_tensor_value_is_an_error_not_a_frozen_guess(self):
        def f(x):
            if x.sum() > 0:
                return x * 2.0
            return x * 3.0

        with self.assertRaises(superkernel.BadInputError) as cm:
            skt.compile(f, (torch.randn(8),), cache_dir=self.cache.path)
        self.assertIn("depends on a tensor's value", str(cm.exception))

    def test_bad_calls_of_a_compiled_module(self):
        cm = skt.compile(lambda x, y: x + y, (torch.randn(4), torch.randn(4)), cache_dir=self.cache.path, workers=1)
        with self.assertRaises(superkernel.InvalidArgumentError):
            cm(torch.randn(4))
        with self.assertRaises(superkernel.BadInputError) as err:
            cm(torch.randn(5), torch.randn(4))
        self.assertIn("compile again", str(err.exception))
        with self.assertRaises(superkernel.BadInputError):
            cm(torch.randn(4, dtype=torch.float64), torch.randn(4))
        with self.assertRaises(superkernel.InvalidArgumentError):
            cm(torch.randn(4), 1.0)
        torch.testing.assert_close(cm(torch.ones(4), torch.ones(4)), torch.full((4,), 2.0))

    def test_a_tensor_written_in_place_must_be_contiguous(self):
        def f(cache, v):
            cache.index_copy_(0, torch.tensor([1]), v)
            return cache.sum(-1)

        cm = skt.compile(f, (torch.zeros(4, 8), torch.ones(1, 8)), cache_dir=self.cache.path, workers=1)
        with self.assertRaises(superkernel.BadInputError) as err:
            cm(torch.zeros(8, 4).t(), torch.ones(1, 8))
        self.assertIn("written in place", str(err.exception))
        cache = torch.zeros(4, 8)
        cm(cache, torch.ones(1, 8))
        self.assertEqual(float(cache[1].sum()), 8.0)  # the caller's own tensor was written


if __name__ == "__main__":
    unittest.main()
