"""Decoder-only LLM building blocks written the way gpt-fast and the Llama,
Qwen and DeepSeek reference code write them (RMSNorm, RoPE on real numbers,
grouped-query attention over an in-place KV cache indexed by a position
tensor, SwiGLU, top-k routed experts over stacked weights plus a shared
expert). The tests and bench/torch_decode.py compile these with
superkernel.torch and compare against eager PyTorch."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim) + 0.1 * torch.randn(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat([-x[..., half:], x[..., :half]], dim=-1)


class Attention(nn.Module):
    def __init__(self, dim: int, heads: int, kv_heads: int, max_seq: int, wdtype=torch.float32):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, dim // heads
        self.wq = nn.Linear(dim, heads * self.head_dim, bias=False, dtype=wdtype)
        self.wk = nn.Linear(dim, kv_heads * self.head_dim, bias=False, dtype=wdtype)
        self.wv = nn.Linear(dim, kv_heads * self.head_dim, bias=False, dtype=wdtype)
        self.wo = nn.Linear(heads * self.head_dim, dim, bias=False, dtype=wdtype)
        self.register_buffer("k_cache", torch.zeros(1, kv_heads, max_seq, self.head_dim))
        self.register_buffer("v_cache", torch.zeros(1, kv_heads, max_seq, self.head_dim))
        inv = 1.0 / (10000 ** (torch.arange(0, self.head_dim, 2).float() / self.head_dim))
        freqs = torch.outer(torch.arange(max_seq).float(), inv)
        emb = torch.cat([freqs, freqs], dim=-1)
        self.register_buffer("cos", emb.cos())
        self.register_buffer("sin", emb.sin())
        self.register_buffer("allowed", torch.tril(torch.ones(max_seq, max_seq, dtype=torch.bool)))

    def _proj(self, lin, x):
        return F.linear(x, lin.weight.to(x.dtype)) if lin.weight.dtype != x.dtype else lin(x)

    def forward(self, x, pos):
        b, s, _ = x.shape
        q = self._proj(self.wq, x).view(b, s, self.heads, self.head_dim).transpose(1, 2)
        k = self._proj(self.wk, x).view(b, s, self.kv_heads, self.head_dim).transpose(1, 2)
        v = self._proj(self.wv, x).view(b, s, self.kv_heads, self.head_dim).transpose(1, 2)
        cos = self.cos.index_select(0, pos)
        sin = self.sin.index_select(0, pos)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        self.k_cache.index_copy_(2, pos, k)
        self.v_cache.index_copy_(2, pos, v)
        # Grouped-query attention: each kv head serves heads / kv_heads query heads (expand + reshape:
        # torch 1.13 cannot trace repeat_interleave on fake tensors, its output shape is value-dependent).
        rep = self.heads // self.kv_heads
        S = self.k_cache.shape[2]
        kk = self.k_cache[:, :, None].expand(b, self.kv_heads, rep, S, self.head_dim).reshape(b, self.heads, S, -1)
        vv = self.v_cache[:, :, None].expand(b, self.kv_heads, rep, S, self.head_dim).reshape(b, self.heads, S, -1)
        scores = torch.matmul(q, kk.transpose(-2, -1)) * (1.0 / math.sqrt(self.head_dim))
        mask = self.allowed.index_select(0, pos)
        scores = scores.masked_fill(mask.logical_not(), float("-inf"))
        att = torch.softmax(scores, dim=-1)
        out = torch.matmul(att, vv).transpose(1, 2).contiguous().view(b, s, -1)
        return self._proj(self.wo, out)


class FeedForward(nn.Module):
    def __init__(self, dim: int, hidden: int, wdtype=torch.float32):
        super().__init__()
        self.w1 = nn.Linear(dim, hidden, bias=False, dtype=wdtype)
        self.w3 = nn.Linear(dim, hidden, bias=False, dtype=wdtype)
        self.w2 = nn.Linear(hidden, dim, bias=False, dtype=wdtype)

    def forward(self, x):
        w1, w2, w3 = self.w1.weight, self.w2.weight, self.w3.weight
        if w1.dtype != x.dtype:
            w1, w2, w3 = w1.to(x.dtype), w2.to(x.dtype), w3.to(x.dtype)
        return F.linear(F.silu(F.linear(x, w1)) * F.linear(x, w3), w2)


class DecoderLayer(nn.Module):
    def __init__(self, dim=256, heads=4, kv_heads=2, ffn=512, max_seq=64, wdtype=torch.float32):
        super().__init__()
        self.attention_norm = RMSNorm(dim)
        self.attention = Attention(dim, heads, kv_heads, max_seq, wdtype)
        self.ffn_norm = RMSNorm(dim)
        self.feed_forward = FeedForward(dim, ffn, wdtype)

    def forward(self, x, pos):
        h = x + self.attention(self.attention_norm(x), pos)
        return h + self.feed_forward(self.ffn_norm(h))


class DecoderStack(nn.Module):
    def __init__(self, layers=8, **kw):
        super().__init__()
        self.layers = nn.ModuleList(DecoderLayer(**kw) for _ in range(layers))

    def forward(self, x, pos):
        for layer in self.layers:
            x = layer(x, pos)
        return x


class MoELayer(nn.Module):
    """DeepSeek-style routed MoE: softmax gate, top-k experts whose stacked
    weights are gathered by the router's indices (gpt-fast's MoE), plus a
    shared expert."""

    def __init__(self, dim=128, ffn=256, experts=8, top_k=2):
        super().__init__()
        self.top_k = top_k
        self.gate = nn.Linear(dim, experts, bias=False)
        self.w1 = nn.Parameter(torch.randn(experts, ffn, dim) * dim ** -0.5)
        self.w3 = nn.Parameter(torch.randn(experts, ffn, dim) * dim ** -0.5)
        self.w2 = nn.Parameter(torch.randn(experts, dim, ffn) * ffn ** -0.5)
        self.shared = FeedForward(dim, ffn)
        self.norm = RMSNorm(dim)

    def forward(self, x, pos):
        h = self.norm(x).view(-1, x.shape[-1])                    # [T, D]
        scores = torch.softmax(self.gate(h), dim=-1)              # [T, E]
        weights, idx = torch.topk(scores, self.top_k, dim=-1)     # [T, k]
        weights = weights / weights.sum(dim=-1, keepdim=True)
        flat = idx.view(-1)                                       # [T*k]
        w1, w3, w2 = self.w1[flat], self.w3[flat], self.w2[flat]  # [T*k, F, D] ...
        T, D = h.shape
        hx = h[:, None].expand(T, self.top_k, D).reshape(T * self.top_k, D, 1)  # [T*k, D, 1]
        a = torch.bmm(w1, hx).squeeze(-1)
        b = torch.bmm(w3, hx).squeeze(-1)
        y = torch.bmm(w2, (F.silu(a) * b).unsqueeze(-1)).squeeze(-1)  # [T*k, D]
        y = (y.view(-1, self.top_k, x.shape[-1]) * weights.unsqueeze(-1)).sum(dim=1)
        return x + (y + self.shared(h)).view(x.shape)


def decode_inputs(dim, pos_value=0, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(1, 1, dim, generator=g), torch.tensor([pos_value], dtype=torch.int64)
