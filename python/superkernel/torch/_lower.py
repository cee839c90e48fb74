"""Lowering an aten graph (make_fx, fake tensors) to superkernel op lists.

Guarantee: every aten node of the graph either becomes ops of a segment's op
list (computed by superkernel, on the tensors' own memory) or runs eagerly
in PyTorch between segments, in program order; nothing is dropped and no
node is reordered across an eager node. A node runs eagerly exactly when no
lowering below accepts it; `Program.splits` names each one and why.

Layout: every tensor value is a `TRef` into a buffer: the buffer's element
offset, shape and strides, read from the node's fake value. Fake values
carry storage offsets within their root tensor's storage, so a view (view,
transpose, slice, expand, select, split, ...) needs no op and no copy: its
TRef is its base's buffer with the fake value's layout.
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

import torch

from .._capi import BadInputError
from ._scope import SCOPE_ENTER, SCOPE_EXIT

aten = torch.ops.aten

DTYPES = {torch.float32: ("f32", "float"), torch.float64: ("f64", "double"), torch.bfloat16: ("bf16", "bf16"),
          torch.float16: ("f16", "f16"),
          torch.int64: ("i64", "int64_t"), torch.int32: ("i32", "int32_t"), torch.bool: ("bool", "uint8_t")}
FLOATS = (torch.float32, torch.float64, torch.bfloat16, torch.float16)
MAX_DIMS = 6
DEFAULT_SCOPE = "superkernel"


@dataclass
class Buffer:
    name: str
    dtype: torch.dtype
    numel: int
    kind: str                  # "arg" (a placeholder), "const", "work" (our output), "eager" (an eager op's output)
    source: Any = None         # arg: placeholder index; const: the tensor; eager: (step index, output index)
    per_call: bool = False     # a fresh tensor each call (it is, or aliases, a returned output)
    mutated: bool = False


@dataclass(frozen=True)
class TRef:
    buf: str
    dtype: torch.dtype
    shape: Tuple[int, ...]
    stride: Tuple[int, ...]
    offset: int

    @property
    def numel(self) -> int:
        return math.prod(self.shape)

    def contiguous(self) -> bool:
        return self.stride == contiguous_strides(self.shape)


def contiguous_strides(shape: Sequence[int]) -> Tuple[int, ...]:
    out, acc = [], 1
    for d in reversed(shape):
        out.append(acc)
        acc *= max(d, 1)
    return tuple(reversed(out))


def extent(shape, stride, offset) -> int:
    if any(d == 0 for d in shape):
        return offset
    return offset + sum((d - 1) * s for d, s in zip(shape, stride)) + 1


class Unsupported(Exception):
    """This node has no lowering (the reason is the message): it runs eagerly."""


@dataclass
class Op:
    name: str
    entry: str
    params: List[dict]                       # op-list parameter declarations
    args: Dict[str, Any]                     # parameter -> buffer name or number
    macros: Dict[str, str]
    block_dim: int
    scope: Any                               # str, None (never fuse) or "" (no scope: not fused)


@dataclass
class Segment:
    ops: List[Op] = field(default_factory=list)


@dataclass
class EagerStep:
    node: Any                                # torch.fx.Node
    target: Any
    args: Any                                # with TRef leaves
    kwargs: Any
    outputs: List[Tuple[str, Tuple[int, ...], Tuple[int, ...], int, int]]  # (buffer, shape, stride, offset, index)


@dataclass
class Program:
    buffers: Dict[str, Buffer]
    steps: List[Any]                         # Segment | EagerStep, in order
    output: Any                              # the graph's output structure with TRef leaves
    scope_options: Dict[str, str]
    splits: List[Dict[str, str]]
    aten_ops: int


def _val(node):
    v = node.meta.get("val")
    return v


class Lowering:
    def __init__(self, gm: torch.fx.GraphModule, workers: int):
        self.gm = gm
        self.workers = max(1, workers)
        self.buffers: Dict[str, Buffer] = {}
        self.base_so: Dict[str, int] = {}        # fake storage offset of each buffer's element 0
        self.env: Dict[Any, Any] = {}            # node -> TRef / list / scalar
        self.steps: List[Any] = []
        self.seg = Segment()
        self.scope_stack: List[Tuple[str, bool]] = []
        self.scope_options: Dict[str, str] = {}
        self.has_scopes = any(n.op == "call_function" and n.target is SCOPE_ENTER for n in gm.graph.nodes)
        self.splits: List[Dict[str, str]] = []
        self.aten_ops = 0
        self.used_names = set()

    # ---- buffers -------------------------------------------------------------
    def _name(self, base: str) -> str:
        base = "".join(c if c.isalnum() or c == "_" else "_" for c in base)[:200] or "t"
        n, i = base, 1
        while n in self.used_names:
            n, i = f"{base}_{i}", i + 1
        self.used_names.add(n)
        return n

    def _new_buffer(self, node_name, v, kind, source=None) -> TRef:
        if v.dtype not in DTYPES:
            raise Unsupported(f"dtype {v.dtype} is not supported by superkernel.torch")
        name = self._name(node_name)
        numel = max(1, extent(tuple(v.shape), tuple(v.stride()), 0))
        self.buffers[name] = Buffer(name, v.dtype, numel, kind, source)
        self.base_so[name] = v.storage_offset()
        return TRef(name, v.dtype, tuple(v.shape), tuple(v.stride()), 0)

    def _fresh(self, node_name, v, contiguous_only=False) -> TRef:
        """A new work buffer holding v in v's own layout (a kernel's output)."""
        if contiguous_only and tuple(v.stride()) != contiguous_strides(tuple(v.shape)):
            raise Unsupported("its output layout is not contiguous")
        name = self._name(node_name)
        if v.dtype not in DTYPES:
            raise Unsupported(f"dtype {v.dtype} is not supported by superkernel.torch")
        numel = max(1, extent(tuple(v.shape), tuple(v.stride()), v.storage_offset()))
        self.buffers[name] = Buffer(name, v.dtype, numel, "work")
        self.base_so[name] = 0
        return TRef(name, v.dtype, tuple(v.shape), tuple(v.stride()), v.storage_offset())

    def _view_of(self, base: TRef, v) -> TRef:
        return TRef(base.buf, v.dtype, tuple(v.shape), tuple(v.stride()), v.storage_offset() - self.base_so[base.buf])

    # ---- ops -----------------------------------------------------------------
    def _scope(self):
        if not self.has_scopes:
            return DEFAULT_SCOPE
        if not self.scope_stack:
            return ""
        name, never = self.scope_stack[-1]
        return None if never else name

    def _block_dim(self, work: int) -> int:
        return max(1, min(self.workers, 64, work // 8192))

    def _emit(self, node, entry, params, args, macros, work):
        self.seg.ops.append(Op(self._op_name(node), entry, params, args,
                               {k: str(v) for k, v in macros.items()}, self._block_dim(work), self._scope()))

    def _op_name(self, node):
        return self._name("op_" + node.name)

    @staticmethod
    def _bparam(name, t: TRef, access, partition):
        return {"name": name, "kind": "buffer", "dtype": DTYPES[t.dtype][0], "access": access,
                "partition": partition}

    @staticmethod
    def _layout(prefix: str, t: TRef, iter_shape) -> Dict[str, int]:
        """Strides of t broadcast to iter_shape (right-aligned), padded to 6 dims."""
        nd = len(iter_shape)
        if nd > MAX_DIMS:
            raise Unsupported(f"more than {MAX_DIMS} dimensions")
        pad = len(iter_shape) - len(t.shape)
        if pad < 0:
            raise Unsupported("an operand has more dimensions than the result")
        strides = []
        for i, d in enumerate(iter_shape):
            j = i - pad
            if j < 0:
                strides.append(0)
            elif t.shape[j] == d:
                strides.append(t.stride[j] if d != 1 else 0)
            elif t.shape[j] == 1:
                strides.append(0)
            else:
                raise Unsupported(f"shape {list(t.shape)} does not broadcast to {list(iter_shape)}")
        strides = [0] * (MAX_DIMS - nd) + strides
        out = {f"SKT_{prefix}_OFF": t.offset}
        for i, s in enumerate(strides):
            out[f"SKT_{prefix}_S{i}"] = s
        return out

    @staticmethod
    def _dims(shape) -> Dict[str, int]:
        padded = [1] * (MAX_DIMS - len(shape)) + list(shape)
        return {f"SKT_D{i}": d for i, d in enumerate(padded)}

    def _block_exact(self, t: TRef, out: TRef) -> bool:
        """t is read in the output's flat order and is its whole buffer: "block" is exact."""
        b = self.buffers[t.buf]
        return (t.shape == out.shape and t.contiguous() and t.offset == 0 and b.numel == t.numel and
                out.contiguous() and out.offset == 0 and self.buffers[out.buf].numel == out.numel)

    def elementwise(self, node, op_code: int, inputs: List[TRef], out: TRef, alpha=1.0, beta=0.0, access="write"):
        arity = len(inputs)
        iter_shape = out.shape
        macros = {"SKT_ELEMENTWISE": 1, "SKT_ARITY": arity, "SKT_OP": op_code, "SKT_TO": DTYPES[out.dtype][1]}
        macros.update(self._dims(iter_shape))
        macros.update(self._layout("O", out, iter_shape))
        params, args = [], {}
        for pname, tname, t in zip(("a", "b", "c"), ("SKT_TA", "SKT_TB", "SKT_TC"), inputs):
            macros[tname] = DTYPES[t.dtype][1]
            macros.update(self._layout(pname.upper(), t, iter_shape))
            params.append(self._bparam(pname, t, "read", "block" if self._block_exact(t, out) else "all"))
            args[pname] = t.buf
        out_exact = out.contiguous() and out.offset == 0 and self.buffers[out.buf].numel == out.numel
        params.append(self._bparam("out", out, access, "block" if out_exact and access == "write" else "all"))
        args["out"] = out.buf
        params += [{"name": "alpha", "kind": "scalar", "dtype": "f64"}, {"name": "beta", "kind": "scalar", "dtype": "f64"}]
        args["alpha"], args["beta"] = float(alpha), float(beta)
        self._emit(node, "skt_elementwise", params, args, macros, out.numel)

    # ---- the graph -------------------------------------------------------------
    def run(self) -> Program:
        placeholders = [n for n in self.gm.graph.nodes if n.op == "placeholder"]
        for i, n in enumerate(placeholders):
            v = _val(n)
            if not isinstance(v, torch.Tensor):
                raise BadInputError(f"superkernel.torch.compile: input {n.name} is a {type(v).__name__}; "
                                    "only tensors can be inputs (pass other values as constants of the function)")
            if v.dtype not in DTYPES:
                raise BadInputError(f"superkernel.torch.compile: input {n.name} has dtype {v.dtype}; supported: "
                                    + ", ".join(str(d) for d in DTYPES))
            self.env[n] = self._new_buffer(n.name, v, "arg", i)
        output = None
        for n in self.gm.graph.nodes:
            if n.op == "placeholder":
                continue
            if n.op == "output":
                output = self._map(n.args[0])
                continue
            if n.op == "get_attr":
                t = getattr(self.gm, n.target)
                if not isinstance(t, torch.Tensor) or t.dtype not in DTYPES:
                    raise BadInputError(f"superkernel.torch.compile: constant {n.target} ({type(t).__name__}) is "
                                        "not a tensor of a supported dtype")
                self.env[n] = self._const(n.name, t)
                continue
            if n.op != "call_function":
                raise BadInputError(f"superkernel.torch.compile: unexpected graph node {n.op} {n.target}")
            if n.target is SCOPE_ENTER:
                name, options, never = n.args
                if not never:
                    prev = self.scope_options.setdefault(name, options)
                    if prev != options:
                        raise BadInputError(f"skt.scope({name!r}): options {options!r} differ from the "
                                            f"{prev!r} given to the same scope elsewhere (one scope, one option set)")
                self.scope_stack.append((name, never))
                continue
            if n.target is SCOPE_EXIT:
                if self.scope_stack:
                    self.scope_stack.pop()
                continue
            if n.target is operator.getitem:
                seq = self.env[n.args[0]]
                self.env[n] = seq[n.args[1]]
                continue
            self.aten_ops += 1
            self._node(n)
        self._close_segment()
        return Program(self.buffers, self.steps, output, self.scope_options, self.splits, self.aten_ops)

    def _map(self, a):
        if isinstance(a, torch.fx.Node):
            return self.env[a]
        if isinstance(a, (list, tuple)):
            return type(a)(self._map(x) for x in a)
        if isinstance(a, dict):
            return {k: self._map(v) for k, v in a.items()}
        return a

    def _const(self, name, t: torch.Tensor) -> TRef:
        t = t.detach().contiguous().clone()
        b = self._name("const_" + name)
        self.buffers[b] = Buffer(b, t.dtype, max(1, t.numel()), "const", t)
        self.base_so[b] = 0
        return TRef(b, t.dtype, tuple(t.shape), tuple(t.stride()), 0)

    def _close_segment(self):
        if self.seg.ops:
            self.steps.append(self.seg)
        self.seg = Segment()

    def _is_const(self, a) -> bool:
        """A value known now: a constant no earlier op wrote in place (ops run in program order)."""
        if not isinstance(a, TRef):
            return False
        b = self.buffers[a.buf]
        return b.kind == "const" and not b.mutated

    def _node(self, n):
        args, kwargs = self._map(n.args), self._map(n.kwargs)
        v = _val(n)
        tensors = [a for a in _leaves((args, kwargs)) if isinstance(a, TRef)]
        try:
            if tensors and all(self._is_const(t) for t in tensors) or (not tensors and n.target in _FACTORIES):
                if _is_inplace(n.target):
                    raise Unsupported("an in-place op on a constant")
                self.env[n] = self._fold(n, args, kwargs)
                return
            fn = _LOWERINGS.get(n.target)
            if fn is None:
                raise Unsupported(f"{n.target} has no superkernel lowering")
            out = fn(self, n, v, *args, **kwargs)
            self.env[n] = out
        except Unsupported as e:
            self._eager(n, args, kwargs, v, str(e))

    def _fold(self, n, args, kwargs):
        """A node that depends on constants only is computed once, now."""
        real = _tree_map(lambda a: self._real_const(a) if isinstance(a, TRef) else a, (args, kwargs))
        out = n.target(*real[0], **real[1])
        if isinstance(out, torch.Tensor):
            return self._const(n.name, out)
        if isinstance(out, (list, tuple)):
            return [self._const(f"{n.name}_{i}", o) for i, o in enumerate(out)]
        return out

    def _real_const(self, t: TRef) -> torch.Tensor:
        base = self.buffers[t.buf].source
        return torch.as_strided(base.reshape(-1), t.shape, t.stride, t.offset)

    def _eager(self, n, args, kwargs, v, reason):
        self._close_segment()
        self.splits.append({"at": f"{n.name} ({n.target})", "reason": reason + "; it runs eagerly in PyTorch"})
        outs = []
        if v is None:  # a multi-output op whose node has no value of its own: its getitem users have them
            items = {u.args[1]: _val(u) for u in n.users if u.target is operator.getitem}
            if items:
                v = [items.get(i) for i in range(max(items) + 1)]
        vals = v if isinstance(v, (list, tuple)) else [v]
        refs = []
        for i, ov in enumerate(vals):
            if isinstance(ov, torch.Tensor):
                if ov.dtype not in DTYPES:
                    raise BadInputError(f"superkernel.torch.compile: {n.name} ({n.target}) produces "
                                        f"dtype {ov.dtype}, which superkernel.torch does not support")
                if _is_inplace(n.target) and i == 0 and isinstance(args[0], TRef):
                    r = self._view_of(args[0], ov)
                    self.buffers[r.buf].mutated = True
                    refs.append(r)
                    continue
                name = self._name(f"{n.name}_{i}" if len(vals) > 1 else n.name)
                numel = max(1, extent(tuple(ov.shape), tuple(ov.stride()), ov.storage_offset()))
                self.buffers[name] = Buffer(name, ov.dtype, numel, "eager", (len(self.steps), i))
                self.base_so[name] = 0
                r = TRef(name, ov.dtype, tuple(ov.shape), tuple(ov.stride()), ov.storage_offset())
                outs.append((name, r.shape, r.stride, r.offset, i))
                refs.append(r)
            else:
                refs.append(ov)
        self.steps.append(EagerStep(n, n.target, args, kwargs, outs))
        self.env[n] = refs if isinstance(v, (list, tuple)) else refs[0]


def _leaves(x):
    if isinstance(x, (list, tuple)):
        for y in x:
            yield from _leaves(y)
    elif isinstance(x, dict):
        for y in x.values():
            yield from _leaves(y)
    else:
        yield x


def _tree_map(f, x):
    if isinstance(x, (list, tuple)):
        return type(x)(_tree_map(f, y) for y in x)
    if isinstance(x, dict):
        return {k: _tree_map(f, y) for k, y in x.items()}
    return f(x)



def _is_inplace(target) -> bool:
    try:
        return target._schema.name.endswith("_") or any(a.alias_info is not None and a.alias_info.is_write
                                                         for a in target._schema.arguments)
    except AttributeError:
        return False


_FACTORIES = {aten.arange.default, aten.arange.start, aten.arange.start_step, aten.full.default, aten.zeros.default,
              aten.ones.default, aten.empty.memory_format, aten.scalar_tensor.default}

# ---- lowerings: (lowering, node, fake value, *args) -> TRef ----------------------


def _views(low: Lowering, n, v, base, *rest, **kw):
    if isinstance(v, (list, tuple)):
        return [low._view_of(base, x) for x in v]
    return low._view_of(base, v)


_VIEW_OPS = [aten.view.default, aten._unsafe_view.default, aten._reshape_alias.default, aten.t.default,
             aten.transpose.int, aten.permute.default, aten.expand.default, aten.slice.Tensor, aten.select.int,
             aten.unsqueeze.default, aten.squeeze.dim, aten.squeeze.default, aten.detach.default, aten.alias.default,
             aten.as_strided.default, aten.split.Tensor, aten.split_with_sizes.default, aten.unbind.int,
             aten.chunk.default, aten.narrow.default, aten.lift_fresh.default]


def _require_view(low, n, v, base, *rest, **kw):
    if not isinstance(base, TRef):
        raise Unsupported("a view of a non-tensor")
    return _views(low, n, v, base)


UNARY = {aten.neg.default: 1, aten.rsqrt.default: 2, aten.exp.default: 3, aten.silu.default: 4,
         aten.sigmoid.default: 5, aten.sqrt.default: 6, aten.reciprocal.default: 7, aten.abs.default: 8,
         aten.tanh.default: 9, aten.cos.default: 10, aten.sin.default: 11, aten.relu.default: 12,
         aten.log.default: 14, aten.logical_not.default: 15, aten.bitwise_not.default: 15}
BINARY = {aten.add.Tensor: 20, aten.sub.Tensor: 21, aten.mul.Tensor: 22, aten.div.Tensor: 23,
          aten.pow.Tensor_Tensor: 24, aten.pow.Tensor_Scalar: 24, aten.maximum.default: 25, aten.minimum.default: 26,
          aten.eq.Tensor: 27, aten.ne.Tensor: 28, aten.lt.Tensor: 29, aten.le.Tensor: 30, aten.gt.Tensor: 31,
          aten.ge.Tensor: 32, aten.eq.Scalar: 27, aten.ne.Scalar: 28, aten.lt.Scalar: 29, aten.le.Scalar: 30,
          aten.gt.Scalar: 31, aten.ge.Scalar: 32, aten.add.Scalar: 20, aten.sub.Scalar: 21, aten.mul.Scalar: 22,
          aten.div.Scalar: 23}


def _scalar_ref(low: Lowering, value, dtype) -> TRef:
    """A python number operand: a one-element constant broadcast (stride 0)."""
    if not isinstance(value, (int, float, bool)):
        raise Unsupported(f"operand {value!r}")
    return low._const("scalar", torch.tensor([value], dtype=dtype))


def _unary(low, n, v, x, *rest, **kw):
    if rest or kw:
        raise Unsupported("extra arguments")
    if not isinstance(x, TRef):
        raise Unsupported("a non-tensor operand")
    out = low._fresh(n.name, v)
    low.elementwise(n, UNARY[n.target], [x], out)
    return out


def _binary(low, n, v, a, b, *rest, alpha=1, **kw):
    if rest or kw:
        raise Unsupported("extra arguments")
    if not isinstance(a, TRef):
        raise Unsupported("a scalar first operand")
    if not isinstance(b, TRef):
        # The number's type follows torch's promotion: the result's dtype for arithmetic, a's for comparisons.
        b = _scalar_ref(low, b, a.dtype if v.dtype == torch.bool else v.dtype)
    out = low._fresh(n.name, v)
    low.elementwise(n, BINARY[n.target], [a, b], out, alpha=alpha)
    return out


def _where(low, n, v, c, a, b):
    refs = []
    for x in (a, b):
        refs.append(x if isinstance(x, TRef) else _scalar_ref(low, x, v.dtype))
    if not isinstance(c, TRef):
        raise Unsupported("a non-tensor condition")
    out = low._fresh(n.name, v)
    low.elementwise(n, 40, [c] + refs, out)
    return out


def _masked_fill(low, n, v, x, mask, value):
    if not isinstance(x, TRef) or not isinstance(mask, TRef):
        raise Unsupported("non-tensor operands")
    out = low._fresh(n.name, v)
    low.elementwise(n, 40, [mask, _scalar_ref(low, value, v.dtype), x], out)
    return out


def _copy_like(low, n, v, x, *rest, **kw):
    if not isinstance(x, TRef):
        raise Unsupported("a non-tensor operand")
    dev = kw.get("device")
    if dev is not None and torch.device(dev).type != "cpu":
        raise Unsupported(f"a copy to device {dev}")
    out = low._fresh(n.name, v)
    low.elementwise(n, 0, [x], out)
    return out


def _fill_like(low, n, v, x, value=0, *rest, **kw):
    out = low._fresh(n.name, v)
    low.elementwise(n, 41, [], out, alpha=float(value))
    return out


def _copy_(low, n, v, dst, src, non_blocking=False):
    if not isinstance(dst, TRef) or not isinstance(src, TRef):
        raise Unsupported("non-tensor operands")
    low.buffers[dst.buf].mutated = True
    low.elementwise(n, 0, [src], dst, access="readwrite")
    return dst


def _mm(low, n, v, a, b, bias=None, beta=1, alpha=1):
    if beta != 1 or alpha != 1:
        raise Unsupported("addmm with beta or alpha other than 1")
    for t in (a, b):
        if not isinstance(t, TRef) or t.dtype not in FLOATS:
            raise Unsupported("a non-float operand")
    out = low._fresh(n.name, v, contiguous_only=True)
    if len(a.shape) == 2:
        T, (M, K), N = 1, a.shape, b.shape[1]
        a_st, (a_sm, a_sk) = 0, a.stride
        b_st, (b_sk, b_sn) = 0, b.stride
    else:
        T, M, K = a.shape
        N = b.shape[2]
        a_st, a_sm, a_sk = a.stride
        b_st, b_sk, b_sn = b.stride
    macros = {"SKT_MM": 1, "SKT_T": T, "SKT_M": M, "SKT_K": K, "SKT_N": N, "SKT_A_OFF": a.offset, "SKT_A_ST": a_st,
              "SKT_A_SM": a_sm, "SKT_A_SK": a_sk, "SKT_B_OFF": b.offset, "SKT_B_ST": b_st, "SKT_B_SK": b_sk,
              "SKT_B_SN": b_sn, "SKT_TA": DTYPES[a.dtype][1], "SKT_TB": DTYPES[b.dtype][1],
              "SKT_TO": DTYPES[out.dtype][1], "SKT_HAS_BIAS": 0}
    params = [low._bparam("a", a, "read", "all"), low._bparam("w", b, "read", "all")]
    args = {"a": a.buf, "w": b.buf}
    if bias is not None:
        if not isinstance(bias, TRef) or bias.dtype not in FLOATS:
            raise Unsupported("a non-float bias")
        if len(bias.shape) == 2 and bias.shape[0] == 1:
            bsn = bias.stride[1]
        elif len(bias.shape) == 1 and bias.shape[0] == N:
            bsn = bias.stride[0]
        else:
            raise Unsupported("a bias that is not one row")
        macros.update({"SKT_HAS_BIAS": 1, "SKT_BIAS_OFF": bias.offset, "SKT_BIAS_SN": bsn,
                       "SKT_TC": DTYPES[bias.dtype][1]})
        params.append(low._bparam("bias", bias, "read", "all"))
        args["bias"] = bias.buf
    else:
        macros["SKT_TC"] = "float"
        params.append(low._bparam("bias", a, "read", "all"))   # unused: any buffer of the op
        args["bias"] = a.buf
    params.append(low._bparam("out", out, "write", "block"))
    args["out"] = out.buf
    low._emit(n, "skt_mm", params, args, macros, T * M * N * K)
    return out


def _addmm(low, n, v, bias, a, b, beta=1, alpha=1):
    return _mm(low, n, v, a, b, bias, beta, alpha)


def _last_dim(x: TRef, dims) -> bool:
    nd = len(x.shape)
    if dims is None:
        return False
    dims = [d % nd for d in (dims if isinstance(dims, (list, tuple)) else [dims])]
    return dims == [nd - 1]


def _reduce(kind, full=False):
    def lower(low, n, v, x, dims=None, keepdim=False, dtype=None):
        if not isinstance(x, TRef):
            raise Unsupported("a non-tensor operand")
        if full:  # sum() / mean() of everything: one row of every element
            dtype = dims
            if not x.contiguous():
                raise Unsupported("a full reduction of a non-contiguous tensor")
            x, d = TRef(x.buf, x.dtype, (x.numel,), (1,), x.offset), 0
        else:
            dl = dims if isinstance(dims, (list, tuple)) else [dims]
            if dims is None or len(dl) != 1:
                raise Unsupported("a reduction over more than one dimension")
            d = dl[0] % len(x.shape)
        if dtype is not None and dtype != v.dtype:
            raise Unsupported("a dtype argument")
        out = low._fresh(n.name, v, contiguous_only=True)
        # Rows are every dimension but d, in order; the output holds them contiguously (keepdim adds a 1).
        rows = x.shape[:d] + x.shape[d + 1:]
        row_ref = TRef(x.buf, x.dtype, rows, x.stride[:d] + x.stride[d + 1:], x.offset)
        macros = {"SKT_REDUCE": 1, "SKT_RED": kind, "SKT_L": x.shape[d], "SKT_X_SL": x.stride[d],
                  "SKT_TA": DTYPES[x.dtype][1], "SKT_TO": DTYPES[out.dtype][1]}
        macros.update(low._dims(rows))
        macros.update(low._layout("X", row_ref, rows))
        params = [low._bparam("x", x, "read", "all"), low._bparam("out", out, "write", "block")]
        low._emit(n, "skt_reduce", params, {"x": x.buf, "out": out.buf}, macros, out.numel * x.shape[d])
        return out
    return lower


def _topk(low, n, v, x, k, dim=-1, largest=True, sorted=True):
    if not isinstance(x, TRef) or not _last_dim(x, dim) or not largest or not sorted:
        raise Unsupported("topk other than the largest, sorted, over the last dimension")
    vals = v if isinstance(v, (list, tuple)) and v[0] is not None else None
    if vals is None:
        items = {u.args[1]: _val(u) for u in n.users if u.target is operator.getitem}
        vals = [items.get(0), items.get(1)]
    if vals[0] is None or vals[1] is None:
        raise Unsupported("topk without both outputs' shapes")
    values = low._fresh(n.name + "_values", vals[0], contiguous_only=True)
    indices = low._fresh(n.name + "_indices", vals[1], contiguous_only=True)
    rows = x.shape[:-1]
    row_ref = TRef(x.buf, x.dtype, rows, x.stride[:-1], x.offset)
    macros = {"SKT_TOPK": 1, "SKT_L": x.shape[-1], "SKT_X_SL": x.stride[-1], "SKT_K": k,
              "SKT_TA": DTYPES[x.dtype][1], "SKT_TO": DTYPES[values.dtype][1]}
    macros.update(low._dims(rows))
    macros.update(low._layout("X", row_ref, rows))
    params = [low._bparam("x", x, "read", "all"), low._bparam("values", values, "write", "all"),
              low._bparam("indices", indices, "write", "all")]
    low._emit(n, "skt_topk", params, {"x": x.buf, "values": values.buf, "indices": indices.buf}, macros,
              math.prod(rows) * x.shape[-1] * k)
    return [values, indices]


def _index(low, n, v, x, indices):
    if not isinstance(x, TRef) or len(indices) != 1 or not isinstance(indices[0], TRef):
        raise Unsupported("indexing with other than one index tensor on dimension 0")
    return _gather(low, n, v, x, indices[0])


def _softmax(low, n, v, x, dim, half_to_float=False):
    if half_to_float or not isinstance(x, TRef) or not _last_dim(x, dim):
        raise Unsupported("a softmax over other than the last dimension")
    out = low._fresh(n.name, v, contiguous_only=True)
    rows = x.shape[:-1]
    row_ref = TRef(x.buf, x.dtype, rows, x.stride[:-1], x.offset)
    macros = {"SKT_SOFTMAX": 1, "SKT_L": x.shape[-1], "SKT_X_SL": x.stride[-1], "SKT_TA": DTYPES[x.dtype][1],
              "SKT_TO": DTYPES[out.dtype][1]}
    macros.update(low._dims(rows))
    macros.update(low._layout("X", row_ref, rows))
    params = [low._bparam("x", x, "read", "all"), low._bparam("out", out, "write", "block")]
    low._emit(n, "skt_softmax", params, {"x": x.buf, "out": out.buf}, macros, out.numel * 4)
    return out


def _gather(low, n, v, table: TRef, idx: TRef):
    if not isinstance(table, TRef) or not isinstance(idx, TRef) or idx.dtype != torch.int64:
        raise Unsupported("a non-int64 index")
    if not table.contiguous() or len(table.shape) < 2:
        raise Unsupported("a non-contiguous table")
    if len(idx.shape) != 1 and not idx.contiguous():
        raise Unsupported("a non-contiguous index")
    out = low._fresh(n.name, v, contiguous_only=True)
    cols = math.prod(table.shape[1:])
    macros = {"SKT_GATHER": 1, "SKT_I": idx.numel, "SKT_C": cols, "SKT_ROWS": table.shape[0],
              "SKT_IDX_OFF": idx.offset, "SKT_IDX_S": idx.stride[-1] if len(idx.shape) == 1 else 1,
              "SKT_TABLE_OFF": table.offset, "SKT_TA": DTYPES[table.dtype][1], "SKT_TO": DTYPES[out.dtype][1]}
    params = [low._bparam("table", table, "read", "all"), low._bparam("idx", idx, "read", "all"),
              low._bparam("out", out, "write", "block")]
    low._emit(n, "skt_gather", params, {"table": table.buf, "idx": idx.buf, "out": out.buf}, macros, out.numel)
    return out


def _embedding(low, n, v, weight, indices, padding_idx=-1, scale_grad=False, sparse=False):
    return _gather(low, n, v, weight, indices)


def _index_select(low, n, v, x, dim, index):
    if dim % max(1, len(x.shape)) != 0 or len(index.shape) != 1:
        raise Unsupported("index_select over other than dimension 0 with a 1-D index")
    return _gather(low, n, v, x, index)


def _index_copy_dim(low, n, dst: TRef, dim: int, index: TRef, src: TRef):
    if not isinstance(dst, TRef) or not isinstance(src, TRef) or not isinstance(index, TRef):
        raise Unsupported("non-tensor operands")
    if index.dtype != torch.int64 or len(index.shape) != 1:
        raise Unsupported("an index that is not a 1-D int64 tensor")
    if not dst.contiguous():
        raise Unsupported("a non-contiguous destination")
    dim %= len(dst.shape)
    P, L, Q = math.prod(dst.shape[:dim]), dst.shape[dim], math.prod(dst.shape[dim + 1:])
    J = index.shape[0]
    src_shape = dst.shape[:dim] + (J,) + dst.shape[dim + 1:]
    macros = {"SKT_INDEX_COPY": 1, "SKT_P": P, "SKT_L": L, "SKT_J": J, "SKT_Q": Q, "SKT_IDX_OFF": index.offset,
              "SKT_IDX_S": index.stride[0], "SKT_DST_OFF": dst.offset, "SKT_TA": DTYPES[src.dtype][1],
              "SKT_TO": DTYPES[dst.dtype][1]}
    macros.update(low._dims(src_shape))
    macros.update(low._layout("S", src, src_shape))
    low.buffers[dst.buf].mutated = True
    params = [low._bparam("src", src, "read", "all"), low._bparam("idx", index, "read", "all"),
              low._bparam("dst", dst, "readwrite", "all")]
    low._emit(n, "skt_index_copy", params, {"src": src.buf, "idx": index.buf, "dst": dst.buf}, macros,
              math.prod(src_shape))
    return dst


def _index_copy_(low, n, v, dst, dim, index, src):
    return _index_copy_dim(low, n, dst, dim, index, src)


def _index_put_(low, n, v, dst, indices, values, accumulate=False):
    if accumulate:
        raise Unsupported("index_put_ with accumulate=True")
    given = [(i, t) for i, t in enumerate(indices) if t is not None]
    if len(given) != 1:
        raise Unsupported("index_put_ with other than exactly one index tensor")
    dim, index = given[0]
    if not isinstance(values, TRef):
        raise Unsupported("a non-tensor value")
    return _index_copy_dim(low, n, dst, dim, index, values)


def _cat(low, n, v, tensors, dim=0):
    out = low._fresh(n.name, v, contiguous_only=True)
    dim %= len(out.shape)
    at = 0
    for t in tensors:
        if not isinstance(t, TRef):
            raise Unsupported("a non-tensor operand")
        if t.numel == 0:
            continue
        part = TRef(out.buf, out.dtype, t.shape, out.stride, out.offset + at * out.stride[dim])
        low.elementwise(n, 0, [t], part, access="readwrite")
        at += t.shape[dim]
    return out


_LOWERINGS = {}
for _op in _VIEW_OPS:
    _LOWERINGS[_op] = _require_view
for _op in UNARY:
    _LOWERINGS[_op] = _unary
for _op in BINARY:
    _LOWERINGS[_op] = _binary
_LOWERINGS.update({
    aten.where.self: _where, aten.masked_fill.Scalar: _masked_fill, aten.clone.default: _copy_like,
    aten._to_copy.default: _copy_like, aten.copy_.default: _copy_, aten.full_like.default: _fill_like,
    aten.zeros_like.default: lambda low, n, v, x, *r, **k: _fill_like(low, n, v, x, 0),
    aten.ones_like.default: lambda low, n, v, x, *r, **k: _fill_like(low, n, v, x, 1),
    aten.mm.default: _mm, aten.bmm.default: _mm, aten.addmm.default: _addmm,
    aten.sum.dim_IntList: _reduce(0), aten.mean.dim: _reduce(1), aten.amax.default: _reduce(2),
    aten.sum.default: _reduce(0, full=True), aten.mean.default: _reduce(1, full=True),
    aten._softmax.default: _softmax, aten.embedding.default: _embedding, aten.index_select.default: _index_select,
    aten.topk.default: _topk, aten.index.Tensor: _index,
    aten.index_copy_.default: _index_copy_, aten.index_put_.default: _index_put_, aten.cat.default: _cat,
})
