"""A 32-token decode loop: the KV caches are updated in place at a tensor
position, every token matches eager, and nothing compiles after the first."""

import copy
import unittest

import torch

import superkernel
import superkernel.torch as skt
from _util import ScratchCache
from models import DecoderStack, decode_inputs


class DecodeLoopTest(unittest.TestCase):
    def test_thirty_two_tokens_compile_once_and_match_eager(self):
        cache = ScratchCache("decode")
        try:
            torch.manual_seed(0)
            model = DecoderStack(layers=2, dim=128, heads=4, kv_heads=2, ffn=256, max_seq=32).eval()
            ref = copy.deepcopy(model)
            x, pos = decode_inputs(128, 0)
            cm = skt.compile(model, (x, pos), cache_dir=cache.path, workers=2)
            compiles = superkernel.cache_stats(cache.path)["compiles"]
            self.assertGreater(compiles, 0)
            for t in range(32):
                pos = torch.tensor([t])
                with torch.no_grad():
                    want = ref(x, pos)
                got = cm(x, pos)
                torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5, msg=f"token {t}")
                x = got.detach().clone()  # feed the output back, as generation does
            for (name, a), (_, b) in zip(model.named_buffers(), ref.named_buffers()):
                torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5, msg=name)
            self.assertEqual(superkernel.cache_stats(cache.path)["compiles"], compiles)
            # Every row of the caches was written by the loop.
            k = model.layers[0].attention.k_cache
            self.assertTrue(bool((k.abs().sum(dim=-1) > 0).all()))
            # A position past the cache is a runtime error naming the op, not a write past the buffer.
            with self.assertRaises(superkernel.RuntimeFailure) as err:
                cm(x, torch.tensor([32]))
            self.assertIn("index out of range", str(err.exception))
        finally:
            cache.close()


if __name__ == "__main__":
    unittest.main()
