"""torch >= 2 APIs that public model files call, for torch 1.13 (Debian's).

`scaled_dot_product_attention` follows the math of the reference
implementation in PyTorch's documentation of
torch.nn.functional.scaled_dot_product_attention (softmax(q k^T * scale +
bias) v, a boolean mask allowing where True, is_causal a lower-triangular
mask), written with plain tensor ops so that superkernel.torch traces it like
any model code. Models see it as torch.nn.functional.scaled_dot_product_attention
after `install()`, which changes nothing on a torch that has its own."""

import math

import torch
import torch.nn.functional as F


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None):
    L, S = query.size(-2), key.size(-2)
    scale_factor = 1 / math.sqrt(query.size(-1)) if scale is None else scale
    attn_weight = query @ key.transpose(-2, -1) * scale_factor
    if is_causal:
        allowed = torch.ones(L, S, dtype=torch.bool).tril(diagonal=0)
        attn_weight = attn_weight.masked_fill(allowed.logical_not(), float("-inf"))
    if attn_mask is not None:
        if attn_mask.dtype == torch.bool:
            attn_weight = attn_weight.masked_fill(attn_mask.logical_not(), float("-inf"))
        else:
            attn_weight = attn_weight + attn_mask
    attn_weight = torch.softmax(attn_weight, dim=-1)
    if dropout_p > 0.0:
        attn_weight = torch.dropout(attn_weight, dropout_p, train=True)
    return attn_weight @ value


def install():
    if not hasattr(F, "scaled_dot_product_attention"):
        F.scaled_dot_product_attention = scaled_dot_product_attention
