"""The aten lowerings: one entry per aten overload (`@register`), each
turning one node into ops of torch_ops.cpp's kernels, or declining with
`Unsupported(reason)` (the node then runs eagerly; lowering.py rolls back
whatever the entry made before it declined).

Every entry takes (low, node, fake value, *args, **kwargs) with tensor
arguments as TRefs and returns the node's value: a TRef in the fake value's
own layout (consumers and views read that layout), or a list of them.
"""

from __future__ import annotations

import math

import torch

from .lowering import DTYPES, FLOATS, Lowering, TRef, Unsupported, as_real, contiguous_strides, op_code, register

aten = torch.ops.aten


def _tensor(x, what="operand") -> TRef:
    if not isinstance(x, TRef):
        raise Unsupported(f"a non-tensor {what}")
    return x


def _operand(low: Lowering, x, dtype) -> TRef:
    """A tensor operand, or a Python number as a 0-d constant of `dtype`."""
    return x if isinstance(x, TRef) else low.scalar(x, dtype)


def _in_place(low: Lowering, dst: TRef) -> TRef:
    low.mark_written(dst)
    return dst


# ---- views: no op, the base's buffer in the fake value's layout ------------------
_VIEW_OPS = [aten.view.default, aten._unsafe_view.default, aten._reshape_alias.default, aten.t.default,
             aten.transpose.int, aten.permute.default, aten.expand.default, aten.slice.Tensor, aten.select.int,
             aten.unsqueeze.default, aten.squeeze.dim, aten.squeeze.default, aten.detach.default, aten.alias.default,
             aten.as_strided.default, aten.split.Tensor, aten.split_with_sizes.default, aten.unbind.int,
             aten.chunk.default, aten.narrow.default, aten.lift_fresh.default, aten.view_as_real.default,
             aten.view_as_complex.default, aten.diagonal.default, aten.unfold.default]


@register(*_VIEW_OPS)
def view(low: Lowering, n, v, base, *rest, **kw):
    base = _tensor(base, "view base")
    if v is None:
        raise Unsupported("a view whose shapes the trace does not record")
    if isinstance(v, (list, tuple)):
        if any(x is None for x in v):
            raise Unsupported("a multi-output view with an unused output the trace does not record")
        return [low.view_of(base, x) for x in v]
    return low.view_of(base, v)


@register(aten.empty_like.default, aten.empty.memory_format)
def empty(low: Lowering, n, v, *args, **kw):
    return low.fresh(n.name, v)  # no op: its contents are undefined until written


# ---- elementwise ------------------------------------------------------------------
_UNARY = {aten.neg.default: "NEG", aten.rsqrt.default: "RSQRT", aten.exp.default: "EXP", aten.silu.default: "SILU",
          aten.sigmoid.default: "SIGMOID", aten.sqrt.default: "SQRT", aten.reciprocal.default: "RECIP",
          aten.abs.default: "ABS", aten.tanh.default: "TANH", aten.cos.default: "COS", aten.sin.default: "SIN",
          aten.relu.default: "RELU", aten.log.default: "LOG", aten.logical_not.default: "NOT",
          aten.bitwise_not.default: "NOT", aten.erf.default: "ERF"}
_BINARY = {aten.add.Tensor: "ADD", aten.sub.Tensor: "SUB", aten.mul.Tensor: "MUL", aten.div.Tensor: "DIV",
           aten.pow.Tensor_Tensor: "POW", aten.pow.Tensor_Scalar: "POW", aten.maximum.default: "MAX",
           aten.minimum.default: "MIN", aten.eq.Tensor: "EQ", aten.ne.Tensor: "NE", aten.lt.Tensor: "LT",
           aten.le.Tensor: "LE", aten.gt.Tensor: "GT", aten.ge.Tensor: "GE", aten.eq.Scalar: "EQ", aten.ne.Scalar: "NE",
           aten.lt.Scalar: "LT", aten.le.Scalar: "LE", aten.gt.Scalar: "GT", aten.ge.Scalar: "GE",
           aten.add.Scalar: "ADD", aten.sub.Scalar: "SUB", aten.mul.Scalar: "MUL", aten.div.Scalar: "DIV",
           aten.logical_and.default: "AND", aten.logical_or.default: "OR", aten.logical_xor.default: "XOR",
           aten.bitwise_and.Tensor: "AND", aten.bitwise_or.Tensor: "OR", aten.bitwise_xor.Tensor: "XOR"}
# In-place forms write their first operand: the same kernel with out = that operand.
_UNARY_INPLACE = {aten.neg_.default: "NEG", aten.rsqrt_.default: "RSQRT", aten.exp_.default: "EXP",
                  aten.silu_.default: "SILU", aten.sigmoid_.default: "SIGMOID", aten.sqrt_.default: "SQRT",
                  aten.reciprocal_.default: "RECIP", aten.abs_.default: "ABS", aten.tanh_.default: "TANH",
                  aten.relu_.default: "RELU", aten.cos_.default: "COS", aten.sin_.default: "SIN",
                  aten.log_.default: "LOG", aten.erf_.default: "ERF"}
_BINARY_INPLACE = {aten.add_.Tensor: "ADD", aten.sub_.Tensor: "SUB", aten.mul_.Tensor: "MUL", aten.div_.Tensor: "DIV",
                   aten.add_.Scalar: "ADD", aten.sub_.Scalar: "SUB", aten.mul_.Scalar: "MUL",
                   aten.div_.Scalar: "DIV", aten.pow_.Scalar: "POW", aten.pow_.Tensor: "POW"}


def _check_real(*ts):
    for t in ts:
        if isinstance(t, TRef) and t.dtype == torch.complex64:
            raise Unsupported("complex arithmetic other than multiplication")


@register(*_UNARY)
def unary(low: Lowering, n, v, x, *rest, **kw):
    if rest or kw:
        raise Unsupported("extra arguments")
    x = _tensor(x)
    out = low.fresh(n.name, v)
    low.elementwise(n, op_code(_UNARY[n.target]), [x], out)
    return out


@register(*_UNARY_INPLACE)
def unary_(low: Lowering, n, v, x, *rest, **kw):
    if rest or kw:
        raise Unsupported("extra arguments")
    x = _tensor(x)
    low.elementwise(n, op_code(_UNARY_INPLACE[n.target]), [x], x, access="readwrite")
    return _in_place(low, x)


def _binary_operands(low: Lowering, v, a, b):
    # A Python number takes torch's promotion: the result's dtype for arithmetic, the tensor's for comparisons.
    if not isinstance(a, TRef):
        b = _tensor(b, "operand")
        return _operand(low, a, b.dtype if v.dtype == torch.bool else v.dtype), b
    return a, _operand(low, b, a.dtype if v.dtype == torch.bool else v.dtype)


@register(*_BINARY)
def binary(low: Lowering, n, v, a, b, *rest, alpha=1, **kw):
    if rest or kw:
        raise Unsupported("extra arguments")
    if n.target is aten.mul.Tensor and isinstance(a, TRef) and isinstance(b, TRef) and \
            torch.complex64 in (a.dtype, b.dtype):
        return _complex_mul(low, n, v, a, b)
    _check_real(a, b)
    a, b = _binary_operands(low, v, a, b)
    out = low.fresh(n.name, v)
    low.elementwise(n, op_code(_BINARY[n.target]), [a, b], out, alpha=alpha)
    return out


@register(*_BINARY_INPLACE)
def binary_(low: Lowering, n, v, a, b, *rest, alpha=1, **kw):
    if rest or kw:
        raise Unsupported("extra arguments")
    _check_real(a, b)
    a = _tensor(a, "destination")
    a, b = _binary_operands(low, v, a, b)
    low.elementwise(n, op_code(_BINARY_INPLACE[n.target]), [a, b], a, alpha=alpha, access="readwrite")
    return _in_place(low, a)


@register(aten.rsub.Scalar, aten.rsub.Tensor)
def rsub(low: Lowering, n, v, x, other, alpha=1):
    """other - alpha * x (`1 - x`)."""
    x = _tensor(x)
    other = _operand(low, other, v.dtype)
    out = low.fresh(n.name, v)
    low.elementwise(n, op_code("SUB"), [other, x], out, alpha=alpha)
    return out


@register(aten.gelu.default)
def gelu(low: Lowering, n, v, x, approximate="none"):
    x = _tensor(x)
    if approximate not in ("none", "tanh"):
        raise Unsupported(f"gelu approximate={approximate!r}")
    out = low.fresh(n.name, v)
    low.elementwise(n, op_code("GELU" if approximate == "none" else "GELU_TANH"), [x], out)
    return out


def _clamp_bounds(lo, hi):
    for b in (lo, hi):
        if b is not None and (not isinstance(b, (int, float)) or not math.isfinite(b)):
            raise Unsupported("a clamp bound that is not a finite number")
    return ({"SKT_CLAMP_LO": int(lo is not None), "SKT_CLAMP_HI": int(hi is not None)},
            0.0 if lo is None else lo, 0.0 if hi is None else hi)


@register(aten.clamp.default, aten.clamp_min.default, aten.clamp_max.default, aten.clamp_.default)
def clamp(low: Lowering, n, v, x, lo=None, hi=None):
    x = _tensor(x)
    if n.target is aten.clamp_max.default:
        lo, hi = None, lo
    macros, a, b = _clamp_bounds(lo, hi)
    inplace = n.target is aten.clamp_.default
    out = x if inplace else low.fresh(n.name, v)
    low.elementwise(n, op_code("CLAMP"), [x], out, alpha=a, beta=b, macros=macros,
                    access="readwrite" if inplace else "write")
    return _in_place(low, x) if inplace else out


@register(aten.where.self, aten.where.ScalarSelf, aten.where.ScalarOther, aten.where.Scalar)
def where(low: Lowering, n, v, c, a, b):
    c = _tensor(c, "condition")
    refs = [_operand(low, x, v.dtype) for x in (a, b)]
    _check_real(*refs)
    out = low.fresh(n.name, v)
    low.elementwise(n, op_code("WHERE"), [c] + refs, out)
    return out


@register(aten.masked_fill.Scalar, aten.masked_fill.Tensor, aten.masked_fill_.Scalar, aten.masked_fill_.Tensor)
def masked_fill(low: Lowering, n, v, x, mask, value):
    """where(mask, value, x); the value (often float("-inf")) is a constant operand, not text."""
    x, mask = _tensor(x), _tensor(mask, "mask")
    _check_real(x)
    if isinstance(value, TRef) and value.numel != 1:
        raise Unsupported("a fill value that is not one element")
    fill = _operand(low, value, v.dtype)
    inplace = n.target in (aten.masked_fill_.Scalar, aten.masked_fill_.Tensor)
    out = x if inplace else low.fresh(n.name, v)
    low.elementwise(n, op_code("WHERE"), [mask, fill, x], out, access="readwrite" if inplace else "write")
    return _in_place(low, x) if inplace else out


@register(aten.clone.default, aten._to_copy.default)
def copy(low: Lowering, n, v, x, *rest, **kw):
    x = _tensor(x)
    dev = kw.get("device")
    if dev is not None and torch.device(dev).type != "cpu":
        raise Unsupported(f"a copy to device {dev}")
    if torch.complex64 in (x.dtype, v.dtype):
        if x.dtype != v.dtype:
            raise Unsupported("a cast to or from complex")
        out = low.fresh(n.name, v)
        low.elementwise(n, op_code("COPY"), [as_real(x)], as_real(out))
        return out
    out = low.fresh(n.name, v)
    low.elementwise(n, op_code("COPY"), [x], out)
    return out


@register(aten.full_like.default, aten.zeros_like.default, aten.ones_like.default, aten.fill.Scalar,
          aten.fill_.Scalar, aten.zero_.default)
def fill(low: Lowering, n, v, x, value=None, *rest, **kw):
    x = _tensor(x)
    if n.target is aten.zeros_like.default or n.target is aten.zero_.default:
        value = 0
    elif n.target is aten.ones_like.default:
        value = 1
    _check_real(x)
    inplace = n.target in (aten.fill_.Scalar, aten.zero_.default)
    out = x if inplace else low.fresh(n.name, v)
    access = "readwrite" if inplace else "write"
    if isinstance(value, float) and not math.isfinite(value):  # -inf / nan: a constant operand, copied
        low.elementwise(n, op_code("COPY"), [low.scalar(value, v.dtype)], out, access=access)
    else:
        low.elementwise(n, op_code("FILL"), [], out, alpha=float(value), access=access)
    return _in_place(low, x) if inplace else out


@register(aten.copy_.default)
def copy_(low: Lowering, n, v, dst, src, non_blocking=False):
    dst, src = _tensor(dst), _tensor(src)
    if torch.complex64 in (dst.dtype, src.dtype):
        if dst.dtype != src.dtype:
            raise Unsupported("a copy between complex and real")
        dst_r, src_r = as_real(dst), as_real(src)
    else:
        dst_r, src_r = dst, src
    low.elementwise(n, op_code("COPY"), [src_r], dst_r, access="readwrite")
    return _in_place(low, dst)


def _complex_mul(low: Lowering, n, v, a: TRef, b: TRef):
    """(ar + i ai)(br + i bi) on float pairs (Llama's RoPE: xq_ * freqs_cis); a real operand counts as (x, 0)."""
    if v.dtype != torch.complex64 or any(t.dtype not in (torch.complex64, torch.float32) for t in (a, b)):
        raise Unsupported("complex multiplication other than complex64")
    out = low.fresh(n.name, v)
    iter_shape = out.shape
    macros = {"SKT_ELEMENTWISE": 1, "SKT_ARITY": 2, "SKT_OP": op_code("CMUL"), "SKT_TO": "float", "SKT_TA": "float",
              "SKT_TB": "float", "SKT_CT": "float", "SKT_A_COMPLEX": int(a.dtype == torch.complex64),
              "SKT_B_COMPLEX": int(b.dtype == torch.complex64)}
    macros.update(low.dims(iter_shape))
    macros.update(low.layout("O", out, iter_shape))
    macros.update(low.layout("A", a, iter_shape))
    macros.update(low.layout("B", b, iter_shape))
    params = [low.bparam("a", as_real(a), "read", "all"), low.bparam("b", as_real(b), "read", "all"),
              low.bparam("out", as_real(out), "write", "all"),
              {"name": "alpha", "kind": "scalar", "dtype": "f64"}, {"name": "beta", "kind": "scalar", "dtype": "f64"}]
    low.emit(n, "skt_elementwise", params, {"a": a.buf, "b": b.buf, "out": out.buf, "alpha": 1.0, "beta": 0.0},
             macros, out.numel)
    return out


# ---- matmul -----------------------------------------------------------------------
def _mm_into(low: Lowering, n, a: TRef, b: TRef, out: TRef):
    for t in (a, b):
        if t.dtype not in FLOATS:
            raise Unsupported("a non-float matmul operand")
    if len(a.shape) == 2:
        T, (M, K), N = 1, a.shape, b.shape[1]
        a_st, (a_sm, a_sk) = 0, a.stride
        b_st, (b_sk, b_sn) = 0, b.stride
    else:
        T, M, K = a.shape
        N = b.shape[2]
        a_st, a_sm, a_sk = a.stride
        b_st, b_sk, b_sn = b.stride
    wide = torch.float64 in (a.dtype, b.dtype, out.dtype)
    gathered = _gathered_columns(low, b, T, K, N, b_st, b_sk, b_sn)
    macros = {"SKT_MM": 1, "SKT_T": T, "SKT_M": M, "SKT_K": K, "SKT_N": N, "SKT_A_OFF": a.offset, "SKT_A_ST": a_st,
              "SKT_A_SM": a_sm, "SKT_A_SK": a_sk, "SKT_B_OFF": b.offset, "SKT_B_ST": b_st, "SKT_B_SK": b_sk,
              "SKT_B_SN": b_sn, "SKT_TA": DTYPES[a.dtype][1], "SKT_TB": DTYPES[b.dtype][1],
              "SKT_TO": DTYPES[out.dtype][1], "SKT_HAS_BIAS": 0, "SKT_TC": "float",
              "SKT_CT": "double" if wide else "float"}
    params = [low.bparam("a", a, "read", "all"), low.bparam("w", b, "read", "all"),
              low.bparam("bias", a, "read", "all"), low.bparam("out", out, "write", "block")]
    args = {"a": a.buf, "w": b.buf, "bias": a.buf, "out": out.buf}
    if gathered:
        table, idx = gathered["table"], gathered["idx"]
        macros.update({"SKT_B_GATHER": 1, "SKT_BG_ROW": gathered["row"], "SKT_BG_ROWS": gathered["rows"],
                       "SKT_BG_I": idx.numel, "SKT_BG_IDX_OFF": idx.offset,
                       "SKT_BG_IDX_S": idx.stride[-1] if len(idx.shape) == 1 else 1,
                       "SKT_BG_TABLE_OFF": table.offset, "SKT_BG_WRAP": int(gathered["wrap"])})
        params[1] = low.bparam("w", table, "read", "all")
        params.append(low.bparam("bidx", idx, "read", "all"))
        args.update(w=table.buf, bidx=idx.buf)
    low.emit(n, "skt_mm", params, args, macros, T * M * N * K)


def _gathered_columns(low: Lowering, b: TRef, T, K, N, b_st, b_sk, b_sn):
    """The deferred gather b views, when every column of b (all K values of one (t, n)) lies within one gathered
    row: the matmul then reads each column from the table row the index names, and the copy is never made."""
    g = low.deferred_info(b.buf)
    if g is None or b_sk < 0:
        return None
    row = g["row"]
    p0 = b.offset + torch.arange(T).view(-1, 1) * b_st + torch.arange(N).view(1, -1) * b_sn
    if bool((p0 < 0).any()) or not torch.equal(p0 // row, (p0 + (K - 1) * b_sk) // row):
        return None
    return g


@register(aten.mm.default, aten.bmm.default)
def mm(low: Lowering, n, v, a, b):
    a, b = _tensor(a), _tensor(b)
    out = low.fresh(n.name, v, contiguous_only=True)
    _mm_into(low, n, a, b, out)
    return out


@register(aten.addmm.default)
def addmm(low: Lowering, n, v, bias, a, b, beta=1, alpha=1):
    """beta * bias + alpha * (a @ b): the product, then one elementwise op adding the bias of any broadcastable
    shape (a row, a column, a whole matrix) in place."""
    a, b, bias = _tensor(a), _tensor(b), _tensor(bias, "bias")
    if bias.dtype not in FLOATS:
        raise Unsupported("a non-float bias")
    out = low.fresh(n.name, v, contiguous_only=True)
    _mm_into(low, n, a, b, out)
    if beta == 0:
        if alpha != 1:
            low.elementwise(n, op_code("MUL"), [out, low.scalar(alpha, v.dtype)], out, access="readwrite")
        return out
    if alpha != 1:
        low.elementwise(n, op_code("MUL"), [out, low.scalar(alpha, v.dtype)], out, access="readwrite")
    if beta != 1:
        scaled = low.scratch(n.name + "_bias", bias.shape, v.dtype)
        low.elementwise(n, op_code("MUL"), [bias, low.scalar(beta, v.dtype)], scaled)
        bias = scaled
    low.elementwise(n, op_code("ADD"), [out, bias], out, access="readwrite")
    return out


# ---- reductions and softmax ---------------------------------------------------------
def _rows(x: TRef, d: int) -> TRef:
    """x without dimension d: the rows a reduction over d walks."""
    return TRef(x.buf, x.dtype, x.shape[:d] + x.shape[d + 1:], x.stride[:d] + x.stride[d + 1:], x.offset)


def _reduce(kind, full=False):
    def lower(low: Lowering, n, v, x, dims=None, keepdim=False, *, dtype=None):
        x = _tensor(x)
        _check_real(x)
        if full:  # sum() / mean() of everything: one row of every element
            dtype = dims if dtype is None else dtype
            if not x.contiguous():
                raise Unsupported("a full reduction of a non-contiguous tensor")
            x, d = TRef(x.buf, x.dtype, (x.numel,), (1,), x.offset), 0
        else:
            dl = dims if isinstance(dims, (list, tuple)) else [dims]
            if dims is None or len(dl) != 1:
                raise Unsupported("a reduction over more than one dimension")
            if not x.shape:
                raise Unsupported("a reduction of a 0-d tensor")
            d = dl[0] % len(x.shape)
        # dtype= is the accumulation and result type (torch casts the input first): v's dtype says it.
        out = low.fresh(n.name, v, contiguous_only=True)
        rows = _rows(x, d)
        wide = torch.float64 in (x.dtype, v.dtype)
        macros = {"SKT_REDUCE": 1, "SKT_RED": kind, "SKT_L": x.shape[d], "SKT_X_SL": x.stride[d],
                  "SKT_TA": DTYPES[x.dtype][1], "SKT_TO": DTYPES[out.dtype][1], "SKT_CT": "double" if wide else "float"}
        macros.update(low.dims(rows.shape))
        macros.update(low.layout("X", rows, rows.shape))
        params = [low.bparam("x", x, "read", "all"), low.bparam("out", out, "write", "block")]
        low.emit(n, "skt_reduce", params, {"x": x.buf, "out": out.buf}, macros, out.numel * x.shape[d])
        return out
    return lower


register(aten.sum.dim_IntList)(_reduce(0))
register(aten.mean.dim)(_reduce(1))
register(aten.amax.default)(_reduce(2))
register(aten.sum.default)(_reduce(0, full=True))
register(aten.mean.default)(_reduce(1, full=True))


@register(aten._softmax.default)
def softmax(low: Lowering, n, v, x, dim, half_to_float=False):
    x = _tensor(x)
    _check_real(x)
    if half_to_float or not x.shape:
        raise Unsupported("a softmax of a 0-d tensor or with half_to_float")
    d = dim % len(x.shape)
    out = low.fresh(n.name, v)
    rows = _rows(x, d)
    last = d == len(x.shape) - 1 and out.contiguous() and out.offset == 0
    macros = {"SKT_SOFTMAX": 1, "SKT_SOFTMAX_ROWS": int(not last), "SKT_L": x.shape[d], "SKT_X_SL": x.stride[d],
              "SKT_TA": DTYPES[x.dtype][1], "SKT_TO": DTYPES[out.dtype][1],
              "SKT_CT": "double" if torch.float64 in (x.dtype, v.dtype) else "float"}
    macros.update(low.dims(rows.shape))
    macros.update(low.layout("X", rows, rows.shape))
    if not last:
        orows = _rows(out, d)
        macros.update(low.layout("O", orows, orows.shape))
        macros["SKT_O_SL"] = out.stride[d]
    params = [low.bparam("x", x, "read", "all"), low.bparam("out", out, "write", "block" if last else "all")]
    low.emit(n, "skt_softmax", params, {"x": x.buf, "out": out.buf}, macros, out.numel * 4)
    return out


@register(aten.topk.default)
def topk(low: Lowering, n, v, x, k, dim=-1, largest=True, sorted=True):
    x = _tensor(x)
    _check_real(x)
    if not x.shape or dim % len(x.shape) != len(x.shape) - 1 or not largest or not sorted:
        raise Unsupported("topk other than the largest, sorted, over the last dimension")
    if not isinstance(v, (list, tuple)) or v[0] is None or v[1] is None:
        raise Unsupported("topk without both outputs' shapes")
    values = low.fresh(n.name + "_values", v[0], contiguous_only=True)
    indices = low.fresh(n.name + "_indices", v[1], contiguous_only=True)
    rows = _rows(x, len(x.shape) - 1)
    macros = {"SKT_TOPK": 1, "SKT_L": x.shape[-1], "SKT_X_SL": x.stride[-1], "SKT_K": k,
              "SKT_TA": DTYPES[x.dtype][1], "SKT_TO": DTYPES[values.dtype][1]}
    macros.update(low.dims(rows.shape))
    macros.update(low.layout("X", rows, rows.shape))
    params = [low.bparam("x", x, "read", "all"), low.bparam("values", values, "write", "all"),
              low.bparam("indices", indices, "write", "all")]
    low.emit(n, "skt_topk", params, {"x": x.buf, "values": values.buf, "indices": indices.buf}, macros,
             math.prod(rows.shape) * x.shape[-1] * k)
    return [values, indices]


# ---- gather / scatter ---------------------------------------------------------------
def _dense_around(t: TRef, d: int) -> bool:
    """t is contiguous as [prod(shape[:d]), shape[d], prod(shape[d+1:])] (size-1 dimensions ignored)."""
    want = contiguous_strides(t.shape)
    return all(s == w or size == 1 for s, w, size in zip(t.stride, want, t.shape))


def _gather(low: Lowering, n, v, table: TRef, d: int, idx: TRef, wrap: bool):
    table, idx = _tensor(table), _tensor(idx, "index")
    if idx.dtype != torch.int64:
        raise Unsupported("a non-int64 index")
    if not _dense_around(table, d):
        raise Unsupported("indexing a non-contiguous tensor")
    if not (len(idx.shape) <= 1 or _dense_around(idx, 0)):
        raise Unsupported("a non-contiguous index")
    result = out = low.fresh(n.name, v, contiguous_only=True)
    # A complex table (Llama's freqs_cis[input_pos]) is gathered as its float pairs: one more inner dimension.
    table, out = as_real(table), as_real(out)
    macros = {"SKT_GATHER": 1, "SKT_P": math.prod(table.shape[:d]), "SKT_I": idx.numel,
              "SKT_Q": math.prod(table.shape[d + 1:]), "SKT_ROWS": table.shape[d], "SKT_IDX_OFF": idx.offset,
              "SKT_IDX_S": idx.stride[-1] if len(idx.shape) == 1 else 1, "SKT_TABLE_OFF": table.offset,
              "SKT_WRAP": int(wrap), "SKT_TA": DTYPES[table.dtype][1], "SKT_TO": DTYPES[out.dtype][1]}
    params = [low.bparam("table", table, "read", "all"), low.bparam("idx", idx, "read", "all"),
              low.bparam("out", out, "write", "block")]

    def compute():
        low.emit(n, "skt_gather", params, {"table": table.buf, "idx": idx.buf, "out": out.buf}, macros, out.numel)
    if d == 0 and table.dtype == out.dtype and result.dtype != torch.complex64:
        # Whole rows of a table (Mixtral's w1[expert_indices]: two experts' weights): a matmul can read them from
        # the table through the index instead of from a copy, so the copy is made only if another op needs it.
        low.defer(result, (table.buf, idx.buf), compute,
                  {"table": table, "idx": idx, "row": macros["SKT_Q"], "rows": table.shape[0], "wrap": wrap})
    else:
        compute()
    return result


@register(aten.embedding.default)
def embedding(low: Lowering, n, v, weight, indices, padding_idx=-1, scale_grad=False, sparse=False):
    if len(_tensor(weight).shape) != 2:
        raise Unsupported("an embedding table that is not 2-D")
    return _gather(low, n, v, weight, 0, indices, wrap=False)


@register(aten.index_select.default)
def index_select(low: Lowering, n, v, x, dim, index):
    x = _tensor(x)
    if len(_tensor(index, "index").shape) > 1:
        raise Unsupported("index_select with an index of more than one dimension")
    return _gather(low, n, v, x, dim % max(1, len(x.shape)), index, wrap=False)


@register(aten.index.Tensor)
def index(low: Lowering, n, v, x, indices):
    """x[..., idx, ...]: one index tensor (any shape) on any dimension, the others taken whole; negative
    indices count from the end."""
    x = _tensor(x)
    given = [(d, t) for d, t in enumerate(indices) if t is not None]
    if len(given) != 1:
        raise Unsupported("indexing with more than one index tensor")
    d, idx = given[0]
    idx = _tensor(idx, "index")
    if idx.dtype == torch.bool:
        raise Unsupported("boolean mask indexing (its result's shape depends on the mask's values)")
    return _gather(low, n, v, x, d, idx, wrap=True)


def _index_copy_dim(low: Lowering, n, dst: TRef, dim: int, index: TRef, src: TRef):
    dst, src, index = _tensor(dst), _tensor(src), _tensor(index, "index")
    if index.dtype != torch.int64 or len(index.shape) != 1:
        raise Unsupported("an index that is not a 1-D int64 tensor")
    if dst.dtype == torch.complex64 or src.dtype == torch.complex64:
        raise Unsupported("a complex destination")
    if not dst.contiguous():
        raise Unsupported("a non-contiguous destination")
    dim %= len(dst.shape)
    P, L, Q = math.prod(dst.shape[:dim]), dst.shape[dim], math.prod(dst.shape[dim + 1:])
    J = index.shape[0]
    src_shape = dst.shape[:dim] + (J,) + dst.shape[dim + 1:]
    macros = {"SKT_INDEX_COPY": 1, "SKT_P": P, "SKT_L": L, "SKT_J": J, "SKT_Q": Q, "SKT_IDX_OFF": index.offset,
              "SKT_IDX_S": index.stride[0], "SKT_DST_OFF": dst.offset, "SKT_TA": DTYPES[src.dtype][1],
              "SKT_TO": DTYPES[dst.dtype][1]}
    macros.update(low.dims(src_shape))
    macros.update(low.layout("S", src, src_shape))
    params = [low.bparam("src", src, "read", "all"), low.bparam("idx", index, "read", "all"),
              low.bparam("dst", dst, "readwrite", "all")]
    low.emit(n, "skt_index_copy", params, {"src": src.buf, "idx": index.buf, "dst": dst.buf}, macros,
             math.prod(src_shape))
    return _in_place(low, dst)


@register(aten.index_copy_.default)
def index_copy_(low: Lowering, n, v, dst, dim, index, src):
    return _index_copy_dim(low, n, dst, dim, index, src)


@register(aten.index_put_.default)
def index_put_(low: Lowering, n, v, dst, indices, values, accumulate=False):
    """dst[..., idx, ...] = values (a KV cache written at positions: cache[:, :, input_pos] = k)."""
    if accumulate:
        raise Unsupported("index_put_ with accumulate=True")
    given = [(i, t) for i, t in enumerate(indices) if t is not None]
    if len(given) != 1:
        raise Unsupported("index_put_ with other than exactly one index tensor")
    dim, index = given[0]
    return _index_copy_dim(low, n, dst, dim, index, _tensor(values, "value"))


@register(aten.cat.default)
def cat(low: Lowering, n, v, tensors, dim=0):
    out = low.fresh(n.name, v, contiguous_only=True)
    dim %= len(out.shape)
    at = 0
    for t in tensors:
        t = _tensor(t)
        if t.numel == 0:
            continue
        part = TRef(out.buf, out.dtype, t.shape, out.stride, out.offset + at * out.stride[dim])
        if out.dtype == torch.complex64:
            if t.dtype != out.dtype:
                raise Unsupported("concatenating complex and real")
            low.elementwise(n, op_code("COPY"), [as_real(t)], as_real(part), access="readwrite")
        else:
            low.elementwise(n, op_code("COPY"), [t], part, access="readwrite")
        at += t.shape[dim]
    return out

