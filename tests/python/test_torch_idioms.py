"""Model code as the popular public LLM repositories write it (idioms.py),
compiled unchanged and checked against eager: every logit and every KV
cache after each token (f32: rtol 1e-4, atol 1e-5), one SuperKernel per
model, nothing eager, nothing compiled after the first decode token; and
prompts of several lengths through compile_chunked with a bounded number of
compiles."""

import copy
import math
import unittest

import torch

import superkernel
import superkernel.torch as skt
import idioms
from _util import CompileTestCase

F32 = dict(rtol=1e-4, atol=1e-5)


class IdiomTest(CompileTestCase):
    cache_tag = "idioms"

    def assert_fused(self, cm, superkernels=1):
        s = cm.summary()
        self.assertEqual(s["eager_ops"], 0, s["splits"])
        self.assertEqual(s["superkernels"], superkernels, cm.report)

    def check_once(self, model, args):
        ref = copy.deepcopy(model)
        cm = self.compile(model, args)
        with torch.no_grad():
            want = ref(*args)
        torch.testing.assert_close(cm(*args), want, **F32)
        self.assert_fused(cm)
        return cm

    def check_prefill_decode(self, model, prompt_len=5, tokens=4, vocab=64):
        """A prompt, then tokens one by one (the output fed back), each equal to eager, the KV caches too."""
        torch.manual_seed(11)
        ref = copy.deepcopy(model)
        prompt, pos = torch.randint(0, vocab, (1, prompt_len)), torch.arange(prompt_len)
        pre = self.compile(model, (prompt, pos))
        with torch.no_grad():
            want = ref(prompt, pos)
        got = pre(prompt, pos)
        torch.testing.assert_close(got, want, **F32)
        self.assert_fused(pre)
        tok = got[:, -1:].argmax(-1)
        dec = self.compile(model, (tok, torch.tensor([prompt_len])))
        self.assert_fused(dec)
        compiles = superkernel.cache_stats(self.cache.path)["compiles"]
        for t in range(prompt_len, prompt_len + tokens):
            p = torch.tensor([t])
            with torch.no_grad():
                want = ref(tok, p)
            got = dec(tok, p)
            torch.testing.assert_close(got, want, **F32, msg=f"token {t}")
            for (name, a), (_, b) in zip(_caches(model), _caches(ref)):
                torch.testing.assert_close(a, b, **F32, msg=f"{name} after token {t}")
            tok = got.argmax(-1)
        self.assertEqual(superkernel.cache_stats(self.cache.path)["compiles"], compiles)

    # ---- GPT-2 style ----------------------------------------------------------------
    def test_tied_embeddings_layernorm_gelu_erf_fused_qkv_split_registered_mask_last_position(self):
        torch.manual_seed(0)
        m = idioms.TiedGPT(gelu="erf").eval()
        self.assertIs(m.wte.weight, m.lm_head.weight)
        cm = self.check_once(m, (torch.randint(0, 64, (1, 8)),))
        # The tied Parameter is one input, bound to the module's own tensor.
        self.assertEqual(sum(1 for t in cm._state if t is m.lm_head.weight), 1)
        # An in-place update of the tied weight is seen by the next call (zero copy).
        with torch.no_grad():
            m.lm_head.weight.mul_(0.5)
        idx = torch.randint(0, 64, (1, 8))
        with torch.no_grad():
            want = m(idx)
        torch.testing.assert_close(cm(idx), want, **F32)

    def test_gelu_tanh_and_a_mask_as_a_plain_attribute(self):
        torch.manual_seed(1)
        self.check_once(idioms.TiedGPT(gelu="tanh", mask_as_attribute=True).eval(), (torch.randint(0, 64, (1, 8)),))

    def test_gelu_written_out_with_pow_and_tanh(self):
        torch.manual_seed(2)
        self.check_once(idioms.TiedGPT(gelu="written").eval(), (torch.randint(0, 64, (1, 8)),))

    # ---- Llama style: prefill, then decode ------------------------------------------
    def test_complex_rope_repeat_interleave_gqa_index_put_cache_masked_fill(self):
        torch.manual_seed(3)
        self.check_prefill_decode(idioms.Llama().eval())

    def test_real_rope_expand_reshape_gqa_index_copy_cache(self):
        torch.manual_seed(4)
        self.check_prefill_decode(idioms.Llama(rope="real", gqa="expand", cache="index_copy").eval())

    def test_mask_through_where_and_full_like_minus_inf(self):
        torch.manual_seed(5)
        self.check_prefill_decode(idioms.Llama(mask="where").eval())

    def test_additive_mask_caches_as_plain_attributes_tied_output(self):
        torch.manual_seed(6)
        self.check_prefill_decode(idioms.Llama(mask="additive", cache_as_attribute=True, tied=True).eval())

    # ---- MoE and parallel blocks ----------------------------------------------------
    def test_moe_einsum_over_gathered_expert_weights(self):
        torch.manual_seed(7)
        self.check_once(idioms.EinsumMoE().eval(), (torch.randn(1, 3, 32),))

    def test_moe_with_a_shared_expert(self):
        torch.manual_seed(8)
        self.check_once(idioms.EinsumMoE(shared=True).eval(), (torch.randn(1, 3, 32),))

    def test_parallel_residual_partial_rotary_baddbmm(self):
        torch.manual_seed(9)
        self.check_once(idioms.ParallelBlock().eval(), (torch.randn(1, 6, 32),))

    # ---- prompts of any length ----------------------------------------------------------
    def test_prompts_of_three_lengths_then_sixteen_tokens_with_log2_compiles(self):
        torch.manual_seed(10)
        max_len = 32
        model = idioms.Llama(max_seq=max_len).eval()
        ck = skt.compile_chunked(model, (torch.zeros(1, 1, dtype=torch.long), torch.zeros(1, dtype=torch.long)),
                                 seq_dims=(1, 0), max_len=max_len, cache_dir=self.cache.path, workers=2)
        self.assertEqual(ck.chunk_lengths, [32, 16, 8, 4, 2, 1])
        for T in (3, 7, 12):
            ref = copy.deepcopy(model)
            prompt = torch.randint(0, 64, (1, T))
            with torch.no_grad():
                want = ref(prompt, torch.arange(T))
            got = ck(prompt, torch.arange(T))
            torch.testing.assert_close(got, want, **F32, msg=f"prompt of {T}")
            tok = got[:, -1:].argmax(-1)
            for t in range(T, T + 16):
                p = torch.tensor([t])
                with torch.no_grad():
                    want = ref(tok, p)
                got = ck(tok, p)
                torch.testing.assert_close(got, want, **F32, msg=f"prompt of {T}, token {t}")
                tok = got.argmax(-1)
            for (name, a), (_, b) in zip(_caches(model), _caches(ref)):
                torch.testing.assert_close(a, b, **F32, msg=f"{name} after a prompt of {T}")
        # 3 = 2 + 1, 7 = 4 + 2 + 1, 12 = 8 + 4: four shapes, where one compile per length would be 3 + 1.
        self.assertEqual(ck.compiled_lengths, [1, 2, 4, 8])
        self.assertLessEqual(len(ck.compiled_lengths), int(math.log2(max_len)) + 1)
        with self.assertRaises(superkernel.BadInputError):
            ck(torch.zeros(1, 33, dtype=torch.long), torch.arange(33))


def _caches(model):
    """Every KV cache of the model, buffer or plain attribute."""
    out = []
    for name, mod in model.named_modules():
        for attr in ("k_cache", "v_cache"):
            t = getattr(mod, attr, None)
            if isinstance(t, torch.Tensor):
                out.append((f"{name}.{attr}", t))
    return out


if __name__ == "__main__":
    unittest.main()
