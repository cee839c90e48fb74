"""Small models written in the idioms of the popular public LLM repositories
(our own code, each idiom as those repositories write it), for
test_torch_idioms.py. Each is tiny so that a compile stays a few seconds;
what matters is the way the code is written, not the size.

Idioms: tied input/output embeddings; LayerNorm + GELU (erf and tanh) with
biases; fused qkv split with `split`; RMSNorm + RoPE on real numbers and on
complex numbers (torch.polar, view_as_complex); GQA through
repeat_interleave and through expand/reshape; a causal mask as a registered
buffer and as a plain attribute; masks made with float("-inf") through
masked_fill, torch.where(cond, full_like(s, -inf), s) and an additive mask;
KV caches written as `cache[:, :, input_pos] = k` and with index_copy_; an
MoE with einsum over gathered expert weights, and one with a shared expert;
a parallel-residual, partial-rotary block; the last position `x[:, [-1], :]`.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn


# ---- GPT-2 style (minimal training repositories) ------------------------------------
class NewGELU(nn.Module):
    """GELU's tanh approximation written out, as GPT-2 ports do."""

    def forward(self, x):
        return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


class GPTBlock(nn.Module):
    def __init__(self, dim, heads, max_seq, gelu="erf", mask_as_attribute=False):
        super().__init__()
        self.heads = heads
        self.ln_1 = nn.LayerNorm(dim)
        self.c_attn = nn.Linear(dim, 3 * dim)
        self.c_proj = nn.Linear(dim, dim)
        self.ln_2 = nn.LayerNorm(dim)
        self.c_fc = nn.Linear(dim, 4 * dim)
        self.mlp_proj = nn.Linear(4 * dim, dim)
        self.gelu = {"erf": nn.GELU(), "tanh": nn.GELU(approximate="tanh"), "written": NewGELU()}[gelu]
        mask = torch.tril(torch.ones(max_seq, max_seq)).view(1, 1, max_seq, max_seq)
        if mask_as_attribute:
            self.bias = mask                       # a plain attribute, not a buffer
        else:
            self.register_buffer("bias", mask)

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(self.ln_1(x)).split(C, dim=2)
        k = k.view(B, T, self.heads, C // self.heads).transpose(1, 2)
        q = q.view(B, T, self.heads, C // self.heads).transpose(1, 2)
        v = v.view(B, T, self.heads, C // self.heads).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        x = x + self.c_proj(y)
        return x + self.mlp_proj(self.gelu(self.c_fc(self.ln_2(x))))


class TiedGPT(nn.Module):
    def __init__(self, vocab=64, dim=32, heads=4, layers=2, max_seq=16, **kw):
        super().__init__()
        self.wte = nn.Embedding(vocab, dim)
        self.wpe = nn.Embedding(max_seq, dim)
        self.h = nn.ModuleList(GPTBlock(dim, heads, max_seq, **kw) for _ in range(layers))
        self.ln_f = nn.LayerNorm(dim)
        self.lm_head = nn.Linear(dim, vocab, bias=False)
        self.wte.weight = self.lm_head.weight      # tied: one Parameter under two names

    def forward(self, idx):
        b, t = idx.size()
        pos = torch.arange(0, t, dtype=torch.long)
        x = self.wte(idx) + self.wpe(pos)
        for block in self.h:
            x = block(x)
        x = self.ln_f(x)
        return self.lm_head(x[:, [-1], :])         # the last position only


# ---- Llama style (reference inference code) ------------------------------------------
class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim) + 0.1 * torch.randn(dim))

    def _norm(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)

    def forward(self, x):
        return self._norm(x.float()).type_as(x) * self.weight


def precompute_freqs_cis(dim, end, theta=10000.0):
    freqs = 1.0 / (theta ** (torch.arange(0, dim, 2)[: (dim // 2)].float() / dim))
    t = torch.arange(end, device=freqs.device)
    freqs = torch.outer(t, freqs).float()
    return torch.polar(torch.ones_like(freqs), freqs)  # complex64


def apply_rotary_emb_complex(xq, xk, freqs_cis):
    xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    xk_ = torch.view_as_complex(xk.float().reshape(*xk.shape[:-1], -1, 2))
    freqs_cis = freqs_cis.view(1, xq_.shape[1], 1, xq_.shape[-1])
    xq_out = torch.view_as_real(xq_ * freqs_cis).flatten(3)
    xk_out = torch.view_as_real(xk_ * freqs_cis).flatten(3)
    return xq_out.type_as(xq), xk_out.type_as(xk)


def apply_rotary_emb_real(x, cos, sin):
    x1, x2 = x.float().reshape(x.shape[:-1] + (-1, 2)).unbind(-1)
    out_r = x1 * cos - x2 * sin
    out_i = x1 * sin + x2 * cos
    return torch.stack([out_r, out_i], dim=-1).flatten(3).type_as(x)


def repeat_kv(x, n_rep):
    bs, slen, n_kv_heads, head_dim = x.shape
    if n_rep == 1:
        return x
    return x[:, :, :, None, :].expand(bs, slen, n_kv_heads, n_rep, head_dim).reshape(
        bs, slen, n_kv_heads * n_rep, head_dim)


class LlamaAttention(nn.Module):
    """GQA over a KV cache at tensor positions. rope: "complex" | "real"; gqa: "repeat_interleave" | "expand";
    cache: "index_put" (cache[:, :, pos] = k) | "index_copy"; mask: "masked_fill" | "where" | "additive";
    cache_as_attribute: the caches and the mask are plain attributes (not buffers)."""

    def __init__(self, dim, heads, kv_heads, max_seq, rope="complex", gqa="repeat_interleave", cache="index_put",
                 mask="masked_fill", cache_as_attribute=False):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, dim // heads
        self.rope, self.gqa, self.cache, self.mask_kind = rope, gqa, cache, mask
        self.wq = nn.Linear(dim, heads * self.head_dim, bias=False)
        self.wk = nn.Linear(dim, kv_heads * self.head_dim, bias=False)
        self.wv = nn.Linear(dim, kv_heads * self.head_dim, bias=False)
        self.wo = nn.Linear(heads * self.head_dim, dim, bias=False)
        k = torch.zeros(1, kv_heads, max_seq, self.head_dim)
        v = torch.zeros(1, kv_heads, max_seq, self.head_dim)
        causal = torch.tril(torch.ones(max_seq, max_seq, dtype=torch.bool))
        if cache_as_attribute:
            self.k_cache, self.v_cache, self.causal_mask = k, v, causal
        else:
            self.register_buffer("k_cache", k)
            self.register_buffer("v_cache", v)
            self.register_buffer("causal_mask", causal)

    def forward(self, x, freqs, input_pos):
        bsz, seqlen, _ = x.shape
        xq = self.wq(x).view(bsz, seqlen, self.heads, self.head_dim)
        xk = self.wk(x).view(bsz, seqlen, self.kv_heads, self.head_dim)
        xv = self.wv(x).view(bsz, seqlen, self.kv_heads, self.head_dim)
        if self.rope == "complex":
            xq, xk = apply_rotary_emb_complex(xq, xk, freqs)
        else:
            cos, sin = freqs
            xq, xk = apply_rotary_emb_real(xq, cos, sin), apply_rotary_emb_real(xk, cos, sin)
        q, k, v = (t.transpose(1, 2) for t in (xq, xk, xv))
        if self.cache == "index_put":
            self.k_cache[:, :, input_pos] = k
            self.v_cache[:, :, input_pos] = v
        else:
            self.k_cache.index_copy_(2, input_pos, k)
            self.v_cache.index_copy_(2, input_pos, v)
        keys, values = self.k_cache, self.v_cache
        n_rep = self.heads // self.kv_heads
        if self.gqa == "repeat_interleave":
            keys = keys.repeat_interleave(n_rep, dim=1)
            values = values.repeat_interleave(n_rep, dim=1)
        else:
            keys = repeat_kv(keys.transpose(1, 2), n_rep).transpose(1, 2)
            values = repeat_kv(values.transpose(1, 2), n_rep).transpose(1, 2)
        scores = torch.matmul(q, keys.transpose(2, 3)) / math.sqrt(self.head_dim)
        allowed = self.causal_mask[None, None, input_pos]            # [1, 1, T, S]
        if self.mask_kind == "masked_fill":
            scores = scores.masked_fill(~allowed, float("-inf"))
        elif self.mask_kind == "where":
            scores = torch.where(allowed, scores, torch.full_like(scores, float("-inf")))
        else:
            scores = scores + torch.zeros_like(scores).masked_fill(~allowed, float("-inf"))
        scores = F.softmax(scores.float(), dim=-1).type_as(q)
        out = torch.matmul(scores, values).transpose(1, 2).contiguous().view(bsz, seqlen, -1)
        return self.wo(out)


class LlamaFFN(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.w1 = nn.Linear(dim, hidden, bias=False)
        self.w2 = nn.Linear(hidden, dim, bias=False)
        self.w3 = nn.Linear(dim, hidden, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class Llama(nn.Module):
    """Token ids and positions in, logits out; the RoPE table is a plain attribute (set after construction, as
    reference code does in its constructor or in setup_caches)."""

    def __init__(self, vocab=64, dim=32, heads=4, kv_heads=2, layers=2, max_seq=16, hidden=64, tied=False, **kw):
        super().__init__()
        self.rope = kw.get("rope", "complex")
        self.tok_embeddings = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleList()
        for _ in range(layers):
            layer = nn.Module()
            layer.attention_norm = RMSNorm(dim)
            layer.attention = LlamaAttention(dim, heads, kv_heads, max_seq, **kw)
            layer.ffn_norm = RMSNorm(dim)
            layer.feed_forward = LlamaFFN(dim, hidden)
            self.layers.append(layer)
        self.norm = RMSNorm(dim)
        self.output = nn.Linear(dim, vocab, bias=False)
        if tied:
            self.output.weight = self.tok_embeddings.weight
        fc = precompute_freqs_cis(dim // heads, max_seq * 2)
        if self.rope == "complex":
            self.freqs_cis = fc
        else:
            self.freqs_cos, self.freqs_sin = fc.real.contiguous(), fc.imag.contiguous()

    def forward(self, tokens, input_pos):
        h = self.tok_embeddings(tokens)
        if self.rope == "complex":
            freqs = self.freqs_cis[input_pos]
        else:
            freqs = (self.freqs_cos[input_pos].view(1, -1, 1, self.freqs_cos.shape[-1]),
                     self.freqs_sin[input_pos].view(1, -1, 1, self.freqs_sin.shape[-1]))
        for layer in self.layers:
            h = h + layer.attention(layer.attention_norm(h), freqs, input_pos)
            h = h + layer.feed_forward(layer.ffn_norm(h))
        return self.output(self.norm(h)).float()


# ---- MoE ---------------------------------------------------------------------------
class EinsumMoE(nn.Module):
    """Mixtral-style routed experts: the top-k experts' stacked weights gathered by index, applied with einsum;
    shared=True adds an always-on shared expert (DeepSeek style)."""

    def __init__(self, dim=32, hidden=48, experts=4, top_k=2, shared=False):
        super().__init__()
        self.top_k = top_k
        self.gate = nn.Linear(dim, experts, bias=False)
        self.w1 = nn.Parameter(torch.randn(experts, hidden, dim) * 0.2)
        self.w2 = nn.Parameter(torch.randn(experts, dim, hidden) * 0.2)
        self.w3 = nn.Parameter(torch.randn(experts, hidden, dim) * 0.2)
        self.shared = LlamaFFN(dim, hidden) if shared else None

    def forward(self, x):
        x = x.view(-1, x.shape[-1])                                   # [T, D]
        scores = self.gate(x)
        expert_weights = F.softmax(scores, dim=-1)
        expert_weights, expert_indices = torch.topk(expert_weights, self.top_k, dim=-1)
        expert_weights /= expert_weights.sum(dim=-1, keepdim=True)    # in place
        w1_weights = self.w1[expert_indices]                          # [T, A, H, D]
        w3_weights = self.w3[expert_indices]
        w2_weights = self.w2[expert_indices]                          # [T, A, D, H]
        x1 = F.silu(torch.einsum("ti,taoi -> tao", x, w1_weights))
        x3 = torch.einsum("ti, taoi -> tao", x, w3_weights)
        expert_outs = torch.einsum("tao, taio -> tai", (x1 * x3), w2_weights)
        out = torch.einsum("tai,ta -> ti", expert_outs, expert_weights)
        if self.shared is not None:
            out = out + self.shared(x)
        return out


# ---- GPT-NeoX / Phi style -------------------------------------------------------------
class ParallelBlock(nn.Module):
    """x + attn(ln(x)) + mlp(ln(x)) with rotary on the first rotary_dim of each head (rotate_half form)."""

    def __init__(self, dim=32, heads=4, max_seq=16, rotary_pct=0.5):
        super().__init__()
        self.heads, self.head_dim = heads, dim // heads
        self.rot = int(self.head_dim * rotary_pct)
        self.input_layernorm = nn.LayerNorm(dim)
        self.query_key_value = nn.Linear(dim, 3 * dim)
        self.dense = nn.Linear(dim, dim)
        self.fc1 = nn.Linear(dim, 4 * dim)
        self.fc2 = nn.Linear(4 * dim, dim)
        inv_freq = 1.0 / (10000 ** (torch.arange(0, self.rot, 2).float() / self.rot))
        t = torch.arange(max_seq).float()
        emb = torch.cat([torch.outer(t, inv_freq)] * 2, dim=-1)
        self.register_buffer("cos_cached", emb.cos()[None, None], persistent=False)
        self.register_buffer("sin_cached", emb.sin()[None, None], persistent=False)

    @staticmethod
    def rotate_half(x):
        x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
        return torch.cat((-x2, x1), dim=-1)

    def forward(self, x):
        B, T, C = x.shape
        h = self.input_layernorm(x)
        qkv = self.query_key_value(h).view(B, T, self.heads, 3 * self.head_dim).permute(0, 2, 1, 3)
        q, k, v = qkv.chunk(3, dim=-1)
        cos, sin = self.cos_cached[:, :, :T], self.sin_cached[:, :, :T]
        q_rot, q_pass = q[..., : self.rot], q[..., self.rot:]
        k_rot, k_pass = k[..., : self.rot], k[..., self.rot:]
        q = torch.cat((q_rot * cos + self.rotate_half(q_rot) * sin, q_pass), dim=-1)
        k = torch.cat((k_rot * cos + self.rotate_half(k_rot) * sin, k_pass), dim=-1)
        causal = torch.tril(torch.ones(T, T, dtype=torch.bool))
        s = torch.baddbmm(torch.zeros(B * self.heads, T, T), q.reshape(-1, T, self.head_dim),
                          k.reshape(-1, T, self.head_dim).transpose(1, 2), beta=1.0,
                          alpha=1.0 / math.sqrt(self.head_dim)).view(B, self.heads, T, T)
        s = torch.where(causal, s, torch.tensor(torch.finfo(s.dtype).min, dtype=s.dtype))
        a = F.softmax(s, dim=-1) @ v
        attn = self.dense(a.permute(0, 2, 1, 3).reshape(B, T, C))
        mlp = self.fc2(F.gelu(self.fc1(h), approximate="tanh"))
        return x + attn + mlp
