"""The decompositions the tracer applies: composite ops rewritten into ops
superkernel lowers, chosen op by op (as Inductor curates its table), so a
model's layer norm, fused attention or GELU-with-bias lands on kernels
instead of running eagerly.

Guarantee: each decomposition computes what the op computes (same shapes,
dtypes and values up to float rounding; low-precision inputs are computed
in f32 as torch's own kernels do) from ops that `_aten.py` lowers, and
returns NotImplemented for a case it does not cover, which then traces as
the op itself (and runs eagerly with its reason if nothing lowers it).

Two kinds of entries:
- `table()`: aten overload -> Python function, passed to make_fx as its
  decomposition table (ops that reach the dispatcher);
- `rewrites()`: a torch-function mode for calls that must be rewritten
  before they reach the dispatcher, because their CompositeImplicit kernel
  already produces an untraceable op (an integer `repeat_interleave` becomes
  `repeat_interleave.Tensor`, whose output shape fake mode cannot know).
"""

from __future__ import annotations

import contextlib
import math
from typing import Callable, Dict, Optional

import torch
from torch.overrides import TorchFunctionMode

aten = torch.ops.aten

_TABLE: Dict[torch._ops.OpOverload, Callable] = {}


def register(*ops):
    """Adds a decomposition for each of `ops` (aten overloads) to the table."""
    def wrap(fn):
        for op in ops:
            _TABLE[op] = fn
        return fn
    return wrap


# Torch's own decompositions, where they land on lowered ops.
_FROM_TORCH = [
    aten.rsub.Scalar, aten.rsub.Tensor, aten.addcmul.default, aten.addcdiv.default, aten.hardtanh.default,
    aten.tril.default, aten.triu.default, aten.stack.default, aten._log_softmax.default, aten.leaky_relu.default,
    aten.hardswish.default, aten.hardsigmoid.default, aten.softplus.default, aten.var_mean.correction,
    aten.var.correction, aten.std.correction, aten.mse_loss.default, aten.logit.default, aten.elu.default,
    aten.new_zeros.default, aten.new_ones.default, aten.new_full.default, aten.new_empty.default,
]


def table() -> Dict[torch._ops.OpOverload, Callable]:
    from torch._decomp import decomposition_table
    out = {op: decomposition_table[op] for op in _FROM_TORCH if op in decomposition_table}
    out.update(_TABLE)
    return out


def _acc(x: torch.Tensor) -> torch.Tensor:
    """bf16/f16 inputs computed in f32, as torch's CPU kernels do."""
    return x.float() if x.dtype in (torch.bfloat16, torch.float16) else x


@register(aten.native_layer_norm.default)
def native_layer_norm(x, normalized_shape, weight, bias, eps):
    n = len(normalized_shape)
    lead = tuple(x.shape[:x.dim() - n])
    xf = _acc(x).reshape(lead + (-1,))
    mean = xf.mean(-1, keepdim=True)
    d = xf - mean
    rstd = torch.rsqrt((d * d).mean(-1, keepdim=True) + eps)
    out = (d * rstd).reshape(x.shape)
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    stat_shape = lead + (1,) * n
    return out.to(x.dtype), mean.reshape(stat_shape), rstd.reshape(stat_shape)


@register(aten.native_batch_norm.default)
def native_batch_norm(x, weight, bias, running_mean, running_var, training, momentum, eps):
    """Batch norm in eval (running statistics): a per-channel affine map over dimension 1."""
    if training or running_mean is None or running_var is None:
        return NotImplemented
    shape = [1, -1] + [1] * (x.dim() - 2)
    out = (_acc(x) - running_mean.view(shape)) * torch.rsqrt(running_var.view(shape) + eps)
    if weight is not None:
        out = out * weight.view(shape)
    if bias is not None:
        out = out + bias.view(shape)
    # torch returns empty saved statistics in eval.
    return out.to(x.dtype), x.new_empty((0,)), x.new_empty((0,))


@register(aten.baddbmm.default)
def baddbmm(x, b1, b2, *, beta=1, alpha=1):
    prod = torch.bmm(b1, b2)
    if alpha != 1:
        prod = prod * alpha
    if beta == 0:
        return prod
    return prod + (x if beta == 1 else x * beta)


def _dims_desc(x, dims):
    return sorted({d % max(1, x.dim()) for d in dims}, reverse=True)


@register(aten.sum.dim_IntList)
def sum_dims(x, dims, keepdim=False, *, dtype=None):
    """A sum over several dimensions: one reduction per dimension (lowered), last dimension first."""
    if dims is None or len(dims) <= 1:
        return NotImplemented
    out = x if dtype is None else x.to(dtype)
    for d in _dims_desc(x, dims):
        out = out.sum(d, keepdim=True)
    return out if keepdim else _squeeze_all(out, _dims_desc(x, dims))


@register(aten.mean.dim)
def mean_dims(x, dims, keepdim=False, *, dtype=None):
    if dims is None or len(dims) <= 1:
        return NotImplemented
    count = math.prod(x.shape[d] for d in _dims_desc(x, dims))
    return sum_dims(x, dims, keepdim, dtype=dtype) / count


@register(aten.amax.default)
def amax_dims(x, dims=(), keepdim=False):
    if len(dims) == 1:
        return NotImplemented
    dims = dims if len(dims) else list(range(x.dim()))
    out = x
    for d in _dims_desc(x, dims):
        out = out.amax(d, keepdim=True)
    return out if keepdim else _squeeze_all(out, _dims_desc(x, dims))


def _squeeze_all(x, dims_desc):
    """torch 1.13 has no squeeze over several dimensions: one at a time, highest first."""
    for d in dims_desc:
        x = x.squeeze(d)
    return x


@register(aten._native_multi_head_attention.default)
def native_multi_head_attention(query, key, value, embed_dim, num_head, qkv_weight, qkv_bias, proj_weight, proj_bias,
                                mask=None, need_weights=True, average_attn_weights=True, mask_type=None):
    """nn.MultiheadAttention's eval fast path (batch first), written with the ops it is made of."""
    B, L, E = query.shape
    S = key.shape[1]
    hd = embed_dim // num_head
    wq, wk, wv = qkv_weight.split(embed_dim, dim=0)
    bq, bk, bv = qkv_bias.split(embed_dim, dim=0) if qkv_bias is not None else (None, None, None)
    q = torch.nn.functional.linear(query, wq, bq).view(B, L, num_head, hd).transpose(1, 2)
    k = torch.nn.functional.linear(key, wk, bk).view(B, S, num_head, hd).transpose(1, 2)
    v = torch.nn.functional.linear(value, wv, bv).view(B, S, num_head, hd).transpose(1, 2)
    scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(hd)
    if mask is not None:
        if mask.dtype == torch.bool:
            m = mask
            if mask_type == 1 and m.dim() == 2:  # a key padding mask [B, S]
                m = m.view(B, 1, 1, S)
            scores = scores.masked_fill(m, float("-inf"))
        else:
            scores = scores + mask
    attn = torch.softmax(scores, dim=-1)
    out = torch.matmul(attn, v).transpose(1, 2).reshape(B, L, embed_dim)
    out = torch.nn.functional.linear(out, proj_weight, proj_bias)
    if not need_weights:
        return out, torch.empty(0, dtype=out.dtype)
    w = attn.mean(dim=1) if average_attn_weights else attn
    return out, w


@register(aten._transformer_encoder_layer_fwd.default)
def transformer_encoder_layer_fwd(src, embed_dim, num_heads, qkv_weight, qkv_bias, proj_weight, proj_bias, use_gelu,
                                  norm_first, eps, norm_weight_1, norm_bias_1, norm_weight_2, norm_bias_2,
                                  ffn_weight_1, ffn_bias_1, ffn_weight_2, ffn_bias_2, mask=None, mask_type=None):
    """nn.TransformerEncoderLayer's eval fast path (batch first), written with the ops it is made of."""
    ln = torch.nn.functional.layer_norm

    def attn(x):
        return native_multi_head_attention(x, x, x, embed_dim, num_heads, qkv_weight, qkv_bias, proj_weight,
                                           proj_bias, mask, False, True, mask_type)[0]

    def ffn(x):
        h = torch.nn.functional.linear(x, ffn_weight_1, ffn_bias_1)
        h = torch.nn.functional.gelu(h) if use_gelu else torch.relu(h)
        return torch.nn.functional.linear(h, ffn_weight_2, ffn_bias_2)

    if norm_first:
        x = src + attn(ln(src, (embed_dim,), norm_weight_1, norm_bias_1, eps))
        return x + ffn(ln(x, (embed_dim,), norm_weight_2, norm_bias_2, eps))
    x = ln(src + attn(src), (embed_dim,), norm_weight_1, norm_bias_1, eps)
    return ln(x + ffn(x), (embed_dim,), norm_weight_2, norm_bias_2, eps)


# ---- torch-function rewrites ---------------------------------------------------

def repeat_interleave_int(x: torch.Tensor, repeats: int, dim: Optional[int] = None, *, output_size=None):
    """x.repeat_interleave(r, dim) for an integer r: each element repeated r times along dim (flattened when dim is
    None), as expand + reshape: a view and one copy, with a static shape."""
    if dim is None:
        x, dim = x.reshape(-1), 0
    dim %= x.dim()
    shape = list(x.shape)
    y = x.unsqueeze(dim + 1).expand(*shape[:dim + 1], repeats, *shape[dim + 1:])
    return y.reshape(*shape[:dim], shape[dim] * repeats, *shape[dim + 1:])


_REPEAT_INTERLEAVE = {torch.repeat_interleave, torch.Tensor.repeat_interleave}


class _Rewrites(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func in _REPEAT_INTERLEAVE and len(args) >= 2 and isinstance(args[1], int) and \
                not isinstance(args[1], bool):
            return repeat_interleave_int(*args, **kwargs)
        if func in _REPEAT_INTERLEAVE and len(args) == 1 and isinstance(kwargs.get("repeats"), int):
            return repeat_interleave_int(args[0], **kwargs)
        return func(*args, **kwargs)


@contextlib.contextmanager
def rewrites():
    with _Rewrites():
        yield
