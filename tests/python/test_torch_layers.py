"""superkernel.torch on decoder layers, checked against eager PyTorch: a
Llama-style layer, a stack of 8, bf16 weights, a DeepSeek-style MoE layer,
what runs eagerly and why, zero copy."""

import copy
import unittest

import torch

from _util import CompileTestCase
from models import DecoderLayer, DecoderStack, MoELayer, decode_inputs

F32 = dict(rtol=1e-4, atol=1e-5)


class LayersTest(CompileTestCase):
    cache_tag = "layers"

    def check_steps(self, model, dim, steps, tol, dtype=torch.float32):
        """Runs `steps` decode steps on the compiled module and on an eager copy
        made before the first step; every output and every KV cache must match."""
        torch.manual_seed(1)
        ref = copy.deepcopy(model)
        x, pos = decode_inputs(dim, 0)
        cm = self.compile(model, (x.to(dtype), pos))
        for step in range(steps):
            x, pos = decode_inputs(dim, step, seed=step + 7)
            x = x.to(dtype)
            with torch.no_grad():
                want = ref(x, pos)
            got = cm(x, pos)
            self.assertEqual(got.shape, want.shape)
            self.assertEqual(got.dtype, want.dtype)
            torch.testing.assert_close(got, want, **tol)
        for (name, a), (_, b) in zip(model.named_buffers(), ref.named_buffers()):
            torch.testing.assert_close(a, b, **tol, msg=f"buffer {name}")
        return cm

    def test_llama_layer_fuses_into_one_superkernel_and_matches_eager(self):
        torch.manual_seed(0)
        layer = DecoderLayer(dim=256, heads=4, kv_heads=2, ffn=512, max_seq=16).eval()
        cm = self.check_steps(layer, 256, 3, F32)
        s = cm.summary()
        self.assertEqual(s["superkernels"], 1, cm.report)
        self.assertEqual(s["launches"], 1, cm.report)
        self.assertEqual(s["eager_ops"], 0, s["splits"])
        self.assertGreater(s["aten_ops"], 50)
        self.assertIn("SuperKernel", cm.report)

    def test_stack_of_eight_layers(self):
        torch.manual_seed(2)
        stack = DecoderStack(layers=8, dim=128, heads=4, kv_heads=2, ffn=256, max_seq=8).eval()
        cm = self.check_steps(stack, 128, 2, F32)
        self.assertEqual(cm.summary()["superkernels"], 1)

    def test_bf16_model(self):
        # The whole layer in bf16 (weights and activations), as model.to(torch.bfloat16) runs it. Both sides
        # accumulate dot products in f32 and round every op's result to bf16 (8 significant bits, a relative step
        # of 2**-8 = 0.4%); they accumulate in different orders, so a result can land one bf16 step apart and the
        # difference grows over the layer's chain of ~30 rounded ops: 3e-2 relative and absolute is a few steps.
        torch.manual_seed(3)
        layer = DecoderLayer(dim=128, heads=4, kv_heads=2, ffn=256, max_seq=8).eval().to(torch.bfloat16)
        self.check_steps(layer, 128, 2, dict(rtol=3e-2, atol=3e-2), dtype=torch.bfloat16)

    def test_moe_layer_with_top2_routing_fuses_and_matches_eager(self):
        torch.manual_seed(4)
        moe = MoELayer(dim=64, ffn=128, experts=8, top_k=2).eval()
        x = torch.randn(1, 3, 64)
        pos = torch.tensor([0])
        cm = self.compile(moe, (x, pos))
        for seed in range(2):
            x = torch.randn(1, 3, 64, generator=torch.Generator().manual_seed(seed))
            with torch.no_grad():
                want = moe(x, pos)
            torch.testing.assert_close(cm(x, pos), want, **F32)
        s = cm.summary()
        # Routing (softmax, topk), the gather of expert weights by the router's indices, the expert bmms, the
        # weighted sum over the top-k and the shared expert: all in one SuperKernel.
        self.assertEqual((s["superkernels"], s["launches"], s["eager_ops"]), (1, 1, 0), s["splits"])

    def test_unsupported_op_runs_eagerly_between_superkernels(self):
        def f(x, y):
            a = torch.nn.functional.silu(x * y + 1.0)
            b = torch.cumsum(a, dim=-1)        # no lowering: eager
            return torch.softmax(b * 0.1, dim=-1) + a

        x, y = torch.randn(4, 32), torch.randn(4, 32)
        cm = self.compile(f, (x, y))
        torch.testing.assert_close(cm(x, y), f(x, y), **F32)
        s = cm.summary()
        self.assertEqual(s["eager_ops"], 1)
        self.assertEqual(len(s["splits"]), 1)
        self.assertIn("cumsum", s["splits"][0]["at"])
        self.assertIn("no superkernel lowering", s["splits"][0]["reason"])
        self.assertEqual(s["superkernels"], 2)
        self.assertIn("eager: cumsum", cm.report)

    def test_zero_copy_parameters_and_caches(self):
        torch.manual_seed(5)
        layer = DecoderLayer(dim=64, heads=2, kv_heads=1, ffn=128, max_seq=4).eval()
        x, pos = decode_inputs(64, 0)
        cm = self.compile(layer, (x, pos))
        cache_ptr = layer.attention.k_cache.data_ptr()
        out1 = cm(x, pos)
        self.assertEqual(layer.attention.k_cache.data_ptr(), cache_ptr)
        self.assertNotEqual(float(layer.attention.k_cache.abs().sum()), 0.0)  # written in place
        with torch.no_grad():
            layer.feed_forward.w2.weight.mul_(2.0)  # an in-place weight update is seen, no recompile
            want = layer(x, pos)
        out2 = cm(x, pos)
        self.assertFalse(torch.equal(out1, out2))
        torch.testing.assert_close(out2, want, **F32)
        out3 = cm(x, pos)
        self.assertIsNot(out3, out2)  # outputs are fresh tensors, as in eager
        torch.testing.assert_close(out2, want, **F32)

    def test_casts_between_f32_bf16_and_f16_are_bit_exact(self):
        def f(x):
            h = (x.to(torch.float16) * 3.0).to(torch.bfloat16)
            return h.to(torch.float32) + x.to(torch.bfloat16).to(torch.float16).to(torch.float32)

        # Normals, subnormals and the edges of half's range (overflow to inf, round to zero).
        x = torch.cat([torch.randn(200) * 10, torch.randn(20) * 1e-6, torch.tensor([65519.0, 65520.0, -7e4, 3e-8, 0.0])])
        cm = self.compile(f, (x,))
        torch.testing.assert_close(cm(x), f(x), rtol=0, atol=0, equal_nan=True)
        self.assertEqual(cm.summary()["eager_ops"], 0)

    def test_an_output_folded_to_a_constant_is_the_callers_to_change(self):
        def f(x):
            return x + 1.0, torch.arange(4).float() * 2.0

        cm = self.compile(f, (torch.randn(4),))
        y, c = cm(torch.zeros(4))
        c.add_(100.0)
        _, again = cm(torch.zeros(4))
        torch.testing.assert_close(again, torch.tensor([0.0, 2.0, 4.0, 6.0]), rtol=0, atol=0)

    def test_a_constant_written_in_place_starts_fresh_every_call(self):
        def f(x, y):
            c = torch.zeros(4)
            c.add_(x)                                   # in place on a constant, eagerly
            d = torch.zeros(2, 4)
            d.index_copy_(0, torch.tensor([1]), y)      # in place on a constant, by a kernel
            return c * 1.0, d + 0.0

        x, y = torch.ones(4), torch.ones(1, 4)
        cm = self.compile(f, (x, y))
        for _ in range(3):  # eager starts from zeros every call; so must the compiled module
            got, want = cm(x, y), f(x, y)
            torch.testing.assert_close(got[0], want[0], rtol=0, atol=0)
            torch.testing.assert_close(got[1], want[1], rtol=0, atol=0)

    def test_non_contiguous_input_is_copied_once(self):
        def f(x):
            return torch.nn.functional.silu(x) * 2.0

        x = torch.randn(8, 16)
        cm = self.compile(f, (x,))
        xt = torch.randn(16, 8).t()
        self.assertFalse(xt.is_contiguous())
        torch.testing.assert_close(cm(xt), f(xt), **F32)


if __name__ == "__main__":
    unittest.main()
