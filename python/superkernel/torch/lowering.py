"""Lowering an aten graph (make_fx, fake tensors) to superkernel op lists:
the core, and the public API lowerings are written in.

Guarantee: every aten node of the graph either becomes ops of a segment's op
list (computed by superkernel, on the tensors' own memory) or runs eagerly
in PyTorch between segments, in program order; nothing is dropped and no
node is reordered across an eager node. A node runs eagerly exactly when no
lowering accepts it; `Program.splits` names each one and why. A lowering
that declines (raises `Unsupported`) leaves nothing behind: the buffers,
constants and ops it made are rolled back before the node runs eagerly.

Layout: every tensor value is a `TRef` into a buffer: the buffer's element
offset, shape and strides, read from the node's fake value. Fake values
carry storage offsets within their root tensor's storage, so a view (view,
transpose, slice, expand, select, split, ...) needs no op and no copy: its
TRef is its base's buffer with the fake value's layout. A complex64 value
is a float32 buffer of (real, imaginary) pairs; its TRef counts in complex
elements, and `as_real` gives the float view kernels read.

Adding an aten op is one entry (see `_aten.py`):

    @register(aten.foo.default)
    def foo(low: Lowering, n, v, x, *args, **kwargs) -> TRef:
        out = low.fresh(n.name, v)                        # a buffer for the result, in v's layout
        low.elementwise(n, op_code("FOO"), [x], out)      # one op of the segment
        return out

`n` is the fx node, `v` its fake value, the rest its arguments with tensors
as TRefs. Raise `Unsupported(reason)` for a case the kernels do not cover.
"""

from __future__ import annotations

import logging
import math
import operator
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import torch
from torch.utils._pytree import tree_flatten, tree_map

from .._capi import BadInputError
from ._scope import SCOPE_ENTER, SCOPE_EXIT

__all__ = ["Lowering", "TRef", "Buffer", "Unsupported", "register", "lowering_for", "op_codes", "op_code", "DTYPES",
           "FLOATS", "KERNEL_SOURCE", "contiguous_strides", "extent", "is_inplace", "Program", "Segment",
           "EagerStep", "Op"]

aten = torch.ops.aten
_log = logging.getLogger("superkernel.torch")

# dtype -> (op-list dtype, C storage type). complex64 is stored as float pairs.
DTYPES = {torch.float32: ("f32", "float"), torch.float64: ("f64", "double"), torch.bfloat16: ("bf16", "bf16"),
          torch.float16: ("f16", "f16"), torch.int64: ("i64", "int64_t"), torch.int32: ("i32", "int32_t"),
          torch.bool: ("bool", "uint8_t"), torch.complex64: ("f32", "float")}
FLOATS = (torch.float32, torch.float64, torch.bfloat16, torch.float16)
MAX_DIMS = 6
DEFAULT_SCOPE = "superkernel"
KERNEL_SOURCE = Path(__file__).resolve().parent / "kernels" / "torch_ops.cpp"


def width(dtype) -> int:
    """Storage elements per value: 2 for complex (a float pair), else 1."""
    return 2 if dtype == torch.complex64 else 1


@lru_cache(maxsize=None)
def op_codes() -> Dict[str, int]:
    """The kernels' op codes by name (`#define OP_NAME N` in torch_ops.cpp): one definition, read here."""
    codes = {m.group(1): int(m.group(2))
             for m in re.finditer(r"^#define OP_([A-Z0-9_]+) (\d+)$", KERNEL_SOURCE.read_text(), re.M)}
    if not codes:
        raise BadInputError(f"superkernel.torch: no op codes in {KERNEL_SOURCE}: the package is damaged")
    return codes


def op_code(name: str) -> int:
    return op_codes()[name]


# ---- the registry: one aten overload, one lowering ------------------------------
_LOWERINGS: Dict[Any, Callable] = {}


def register(*ops):
    """Registers the decorated function as the lowering of each aten overload in `ops`."""
    def wrap(fn):
        for op in ops:
            if op in _LOWERINGS and _LOWERINGS[op] is not fn:
                raise ValueError(f"superkernel.torch: {op} already has a lowering ({_LOWERINGS[op].__name__})")
            _LOWERINGS[op] = fn
        return fn
    return wrap


def lowering_for(op) -> Optional[Callable]:
    return _LOWERINGS.get(op)


@dataclass
class Buffer:
    name: str
    dtype: torch.dtype
    numel: int                 # in values of dtype (complex: pairs)
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


def as_real(t: TRef) -> TRef:
    """A complex value's float view ([..., 2]); other values unchanged."""
    if t.dtype != torch.complex64:
        return t
    return TRef(t.buf, torch.float32, t.shape + (2,), tuple(2 * s for s in t.stride) + (1,), 2 * t.offset)


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


def is_inplace(target) -> bool:
    try:
        return target._schema.name.endswith("_") or any(a.alias_info is not None and a.alias_info.is_write
                                                         for a in target._schema.arguments)
    except AttributeError:
        return False


class Unsupported(Exception):
    """This node has no lowering for this case (the reason is the message): it runs eagerly."""


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
    lowering_failures: int = 0               # lowerings that raised something other than Unsupported (logged)


_FACTORIES = {aten.arange.default, aten.arange.start, aten.arange.start_step, aten.full.default, aten.zeros.default,
              aten.ones.default, aten.empty.memory_format, aten.scalar_tensor.default, aten.eye.default,
              aten.linspace.default}


def node_value(node, index: Optional[int] = None):
    """The fake value of a node; for a multi-output node whose own value torch 1.13 leaves out (split), the
    list of its getitem users' values."""
    v = node.meta.get("val")
    if v is None:
        items = {u.args[1]: u.meta.get("val") for u in node.users if u.target is operator.getitem}
        if items:
            v = [items.get(i) for i in range(max(items) + 1)]
    return v


class Lowering:
    """Walks the graph once, in order, building segments of ops and eager steps."""

    def __init__(self, gm: torch.fx.GraphModule, workers: int, state_names: Sequence[str] = ()):
        self.gm = gm
        self.workers = max(1, workers)
        self.state_names = list(state_names)
        self.buffers: Dict[str, Buffer] = {}
        self.base_so: Dict[str, int] = {}        # fake storage offset of each buffer's element 0, in storage units
        self.env: Dict[Any, Any] = {}            # node -> TRef / list / scalar
        self.steps: List[Any] = []
        self.seg = Segment()
        self.scope_stack: List[Tuple[str, bool]] = []
        self.scope_options: Dict[str, str] = {}
        self.has_scopes = any(n.op == "call_function" and n.target is SCOPE_ENTER for n in gm.graph.nodes)
        self.splits: List[Dict[str, str]] = []
        self.aten_ops = 0
        self.lowering_failures = 0
        self.used_names = set()
        self._names_log: List[str] = []          # names in the order given (a rollback forgets the newest)
        self._written_log: List[str] = []        # buffers first marked written, in order (a rollback unmarks them)
        # Deferred buffers (`defer`): buffer -> (the function emitting its ops, the buffers it reads, what a
        # consumer may read instead), and the journal of deferrals and materializations (a rollback undoes them).
        self._deferred: Dict[str, Tuple[Callable[[], None], Tuple[str, ...], Dict[str, Any]]] = {}
        self._deferred_log: List[Tuple[str, str, Any]] = []
        self._making: List[str] = []             # deferred buffers being emitted now (their own write is no change)

    # ---- buffers -------------------------------------------------------------
    def name(self, base: str) -> str:
        """A fresh buffer or op name (a C identifier) from `base`."""
        base = "".join(c if c.isalnum() or c == "_" else "_" for c in base)[:200] or "t"
        n, i = base, 1
        while n in self.used_names:
            n, i = f"{base}_{i}", i + 1
        self.used_names.add(n)
        self._names_log.append(n)
        return n

    @staticmethod
    def _check_dtype(dtype):
        if dtype not in DTYPES:
            raise Unsupported(f"dtype {dtype} is not supported by superkernel.torch")

    def new_buffer(self, node_name, v, kind, source=None) -> TRef:
        """A buffer holding v's whole storage extent from v's element 0 (a graph input)."""
        self._check_dtype(v.dtype)
        name = self.name(node_name)
        numel = max(1, extent(tuple(v.shape), tuple(v.stride()), 0))
        self.buffers[name] = Buffer(name, v.dtype, numel, kind, source)
        self.base_so[name] = v.storage_offset() * width(v.dtype)
        return TRef(name, v.dtype, tuple(v.shape), tuple(v.stride()), 0)

    def fresh(self, node_name, v, contiguous_only=False) -> TRef:
        """A new work buffer holding v in v's own layout (a kernel's output)."""
        if contiguous_only and tuple(v.stride()) != contiguous_strides(tuple(v.shape)):
            raise Unsupported("its output layout is not contiguous")
        self._check_dtype(v.dtype)
        name = self.name(node_name)
        numel = max(1, extent(tuple(v.shape), tuple(v.stride()), v.storage_offset()))
        self.buffers[name] = Buffer(name, v.dtype, numel, "work")
        self.base_so[name] = 0
        return TRef(name, v.dtype, tuple(v.shape), tuple(v.stride()), v.storage_offset())

    def scratch(self, node_name, shape, dtype) -> TRef:
        """A contiguous work buffer of `shape` for an intermediate no graph node names."""
        self._check_dtype(dtype)
        name = self.name(node_name)
        self.buffers[name] = Buffer(name, dtype, max(1, math.prod(shape)), "work")
        self.base_so[name] = 0
        return TRef(name, dtype, tuple(shape), contiguous_strides(shape), 0)

    def view_of(self, base: TRef, v) -> TRef:
        """v (a fake view of base's storage) as a TRef into base's buffer."""
        w = width(v.dtype)
        off = v.storage_offset() * w - self.base_so[base.buf]
        if off % w:
            raise Unsupported("a complex view at an odd float offset")
        return TRef(base.buf, v.dtype, tuple(v.shape), tuple(v.stride()), off // w)

    def const(self, name, t: torch.Tensor) -> TRef:
        """A constant known at compile time (folded values, Python numbers, lifted tensors)."""
        t = t.detach().contiguous().clone()
        if t.dtype not in DTYPES:
            raise Unsupported(f"a constant of dtype {t.dtype}")
        b = self.name("const_" + name)
        self.buffers[b] = Buffer(b, t.dtype, max(1, t.numel()), "const", t)
        self.base_so[b] = 0
        return TRef(b, t.dtype, tuple(t.shape), tuple(t.stride()), 0)

    def scalar(self, value, dtype) -> TRef:
        """A Python number as an operand: a 0-d constant (broadcasts to any shape, including 0-d results).
        Non-finite values (float("-inf") in a mask) are data, never text of the op list."""
        if not isinstance(value, (int, float, bool)):
            raise Unsupported(f"operand {value!r}")
        return self.const("scalar", torch.tensor(value, dtype=dtype))

    def is_const(self, a) -> bool:
        """A value known now: a constant no earlier op wrote in place (ops run in program order)."""
        if not isinstance(a, TRef):
            return False
        b = self.buffers[a.buf]
        return b.kind == "const" and not b.mutated

    def mark_written(self, t: TRef):
        b = self.buffers[t.buf]
        if not b.mutated:
            b.mutated = True
            self._written_log.append(b.name)

    # ---- deferred buffers --------------------------------------------------------
    def defer(self, out: TRef, reads: Sequence[str], compute: Callable[[], None], info: Dict[str, Any]):
        """out's buffer is computed by `compute` (which emits its ops) only if something needs the buffer itself.
        A consumer that can read the value through `info` instead (a matmul reading a gather's rows straight from
        the table: `deferred_info`) leaves it unmade. Otherwise it is emitted before its first reader, and before
        any op writes one of `reads`, so it holds the values it would have held where the node stands."""
        self._deferred[out.buf] = (compute, tuple(reads), info)
        self._deferred_log.append(("defer", out.buf, None))

    def deferred_info(self, buf: str) -> Optional[Dict[str, Any]]:
        entry = self._deferred.get(buf)
        return entry[2] if entry else None

    def materialize(self, buf: str, written: bool = False):
        """An op is about to read buf (or, written=True, to write it): deferred buffers it needs are made now."""
        if not self._deferred:
            return
        if buf in self._deferred:
            entry = self._deferred.pop(buf)
            self._deferred_log.append(("done", buf, entry))
            self._making.append(buf)
            try:
                entry[0]()
            finally:
                self._making.pop()
        if written and buf not in self._making:  # a deferred reader of buf (x[i][j]) must not see it made first
            for b in [b for b, e in self._deferred.items() if buf in e[1]]:
                self.materialize(b)

    # ---- ops -----------------------------------------------------------------
    def _scope(self):
        if not self.has_scopes:
            return DEFAULT_SCOPE
        if not self.scope_stack:
            return ""
        name, never = self.scope_stack[-1]
        return None if never else name

    def block_dim(self, work: int) -> int:
        return max(1, min(self.workers, 64, work // 8192))

    def emit(self, node, entry, params, args, macros, work):
        """Appends one op of kernel `entry` to the current segment."""
        for k, a in args.items():
            if isinstance(a, float) and not math.isfinite(a):
                raise Unsupported(f"a non-finite scalar argument {k}={a} (pass it as a tensor operand)")
        for p in params:
            if p.get("kind") == "buffer" and isinstance(args.get(p["name"]), str):
                self.materialize(args[p["name"]], written=p["access"] != "read")
        self.seg.ops.append(Op(self.name("op_" + node.name), entry, params, args,
                               {k: str(v) for k, v in macros.items()}, self.block_dim(work), self._scope()))

    @staticmethod
    def bparam(name, t: TRef, access, partition):
        """An op-list buffer parameter for operand t."""
        if t.dtype not in DTYPES:
            raise Unsupported(f"an operand of dtype {t.dtype}, which superkernel.torch does not support")
        return {"name": name, "kind": "buffer", "dtype": DTYPES[t.dtype][0], "access": access,
                "partition": partition}

    @staticmethod
    def layout(prefix: str, t: TRef, iter_shape) -> Dict[str, int]:
        """Strides of t broadcast to iter_shape (right-aligned), padded to 6 dims."""
        nd = len(iter_shape)
        if nd > MAX_DIMS:
            raise Unsupported(f"more than {MAX_DIMS} dimensions")
        # Leading size-1 dimensions of an operand broadcast away (x of [1, 1, n] against a result of [n]).
        shape, stride = list(t.shape), list(t.stride)
        while len(shape) > nd and shape[0] == 1:
            shape.pop(0)
            stride.pop(0)
        pad = nd - len(shape)
        if pad < 0:
            raise Unsupported("an operand has more dimensions than the result")
        strides = []
        for i, d in enumerate(iter_shape):
            j = i - pad
            if j < 0:
                strides.append(0)
            elif shape[j] == d:
                strides.append(stride[j] if d != 1 else 0)
            elif shape[j] == 1:
                strides.append(0)
            else:
                raise Unsupported(f"shape {list(t.shape)} does not broadcast to {list(iter_shape)}")
        strides = [0] * (MAX_DIMS - nd) + strides
        out = {f"SKT_{prefix}_OFF": t.offset}
        for i, s in enumerate(strides):
            out[f"SKT_{prefix}_S{i}"] = s
        return out

    @staticmethod
    def dims(shape) -> Dict[str, int]:
        if len(shape) > MAX_DIMS:
            raise Unsupported(f"more than {MAX_DIMS} dimensions")
        padded = [1] * (MAX_DIMS - len(shape)) + list(shape)
        return {f"SKT_D{i}": d for i, d in enumerate(padded)}

    def whole(self, t: TRef) -> bool:
        """t is its whole buffer, contiguous from element 0."""
        return t.contiguous() and t.offset == 0 and self.buffers[t.buf].numel == t.numel

    def elementwise(self, node, op: int, inputs: List[TRef], out: TRef, alpha=1.0, beta=0.0, access="write",
                    macros=None):
        """out = f_op(inputs...) over out's shape, inputs broadcast; alpha/beta are the op's finite scalars."""
        if any(t.dtype == torch.complex64 for t in inputs + [out]):
            raise Unsupported("complex arithmetic other than multiplication")
        iter_shape = out.shape
        wide = any(t.dtype == torch.float64 for t in inputs + [out])
        m = {"SKT_ELEMENTWISE": 1, "SKT_ARITY": len(inputs), "SKT_OP": op, "SKT_TO": DTYPES[out.dtype][1],
             "SKT_CT": "double" if wide else "float"}
        m.update(macros or {})
        m.update(self.dims(iter_shape))
        m.update(self.layout("O", out, iter_shape))
        params, args = [], {}
        out_whole = self.whole(out)
        for pname, tname, t in zip(("a", "b", "c"), ("SKT_TA", "SKT_TB", "SKT_TC"), inputs):
            m[tname] = DTYPES[t.dtype][1]
            m.update(self.layout(pname.upper(), t, iter_shape))
            exact = t.shape == out.shape and self.whole(t) and out_whole
            params.append(self.bparam(pname, t, "read", "block" if exact else "all"))
            args[pname] = t.buf
        params.append(self.bparam("out", out, access, "block" if out_whole and access == "write" else "all"))
        args["out"] = out.buf
        params += [{"name": "alpha", "kind": "scalar", "dtype": "f64"},
                   {"name": "beta", "kind": "scalar", "dtype": "f64"}]
        args["alpha"], args["beta"] = float(alpha), float(beta)
        self.emit(node, "skt_elementwise", params, args, m, out.numel)

    # ---- the graph -------------------------------------------------------------
    def run(self) -> Program:
        placeholders = [n for n in self.gm.graph.nodes if n.op == "placeholder"]
        for i, n in enumerate(placeholders):
            v = n.meta.get("val")
            what = (f"attribute {self.state_names[i]} of the module" if i < len(self.state_names)
                    else f"argument {i - len(self.state_names)}")
            if not isinstance(v, torch.Tensor):
                raise BadInputError(f"superkernel.torch.compile: {what} is a {type(v).__name__}; only tensors can be "
                                    "inputs (pass other values as constants of the function)")
            if v.dtype not in DTYPES:
                raise BadInputError(f"superkernel.torch.compile: {what} has dtype {v.dtype}; supported: "
                                    + ", ".join(str(d) for d in DTYPES))
            self.env[n] = self.new_buffer(n.name, v, "arg", i)
        output = None
        for n in self.gm.graph.nodes:
            if n.op == "placeholder":
                continue
            if n.op == "output":
                output = self._map(n.args[0])
                for t in tree_flatten(output)[0]:
                    if isinstance(t, TRef):
                        self.materialize(t.buf)
                continue
            if n.op == "get_attr":
                t = getattr(self.gm, n.target)
                if not isinstance(t, torch.Tensor) or t.dtype not in DTYPES:
                    raise BadInputError(f"superkernel.torch.compile: constant {n.target} ({type(t).__name__}"
                                        f"{' ' + str(t.dtype) if isinstance(t, torch.Tensor) else ''}) is not a "
                                        "tensor of a supported dtype")
                self.env[n] = self.const(n.name, t)
                continue
            if n.op != "call_function":
                raise BadInputError(f"superkernel.torch.compile: unexpected graph node {n.op} {n.target}")
            if n.target is SCOPE_ENTER:
                self._enter_scope(*n.args)
                continue
            if n.target is SCOPE_EXIT:
                if self.scope_stack:
                    self.scope_stack.pop()
                continue
            if n.target is operator.getitem:
                seq = self.env[n.args[0]]
                self.env[n] = seq[n.args[1]]
                continue
            if not n.users and not is_inplace(n.target):
                continue  # a value nothing reads and no side effect (an unused output slot): nothing to do
            self.aten_ops += 1
            self._node(n)
        self._close_segment()
        for b in self._deferred:  # never needed: every reader took it through its inputs
            del self.buffers[b]
        return Program(self.buffers, self.steps, output, self.scope_options, self.splits, self.aten_ops,
                       self.lowering_failures)

    def _enter_scope(self, name, options, never):
        if not never:
            prev = self.scope_options.setdefault(name, options)
            if prev != options:
                raise BadInputError(f"skt.scope({name!r}): options {options!r} differ from the {prev!r} given to "
                                    "the same scope elsewhere (one scope, one option set)")
        self.scope_stack.append((name, never))

    def _map(self, a):
        return tree_map(lambda x: self.env[x] if isinstance(x, torch.fx.Node) else x, a)

    def _close_segment(self):
        if self.seg.ops:
            self.steps.append(self.seg)
        self.seg = Segment()

    def _checkpoint(self):
        """Where a node's lowering starts: lengths only (buffers are an insertion-ordered dict), so a node costs
        nothing more when it succeeds, however large the graph."""
        return (len(self.buffers), len(self._names_log), len(self.seg.ops), len(self._written_log),
                len(self._deferred_log))

    def _rollback(self, cp):
        nbuf, nnames, nops, nwritten, ndeferred = cp
        for what, b, entry in reversed(self._deferred_log[ndeferred:]):
            if what == "defer":
                self._deferred.pop(b, None)
            else:
                self._deferred[b] = entry
        del self._deferred_log[ndeferred:]
        for b in self._written_log[nwritten:]:
            if b in self.buffers:
                self.buffers[b].mutated = False
        del self._written_log[nwritten:]
        for k in list(self.buffers)[nbuf:]:
            del self.buffers[k]
            self.base_so.pop(k, None)
        for nm in self._names_log[nnames:]:
            self.used_names.discard(nm)
        del self._names_log[nnames:]
        del self.seg.ops[nops:]

    def _node(self, n):
        args, kwargs = self._map(n.args), self._map(n.kwargs)
        v = node_value(n)
        tensors = [a for a in tree_flatten((args, kwargs))[0] if isinstance(a, TRef)]
        cp = self._checkpoint()
        try:
            if tensors and all(self.is_const(t) for t in tensors) or (not tensors and n.target in _FACTORIES):
                if is_inplace(n.target):
                    raise Unsupported("an in-place op on a constant")
                self.env[n] = self._fold(n, args, kwargs)
                return
            fn = _LOWERINGS.get(n.target)
            if fn is None:
                raise Unsupported(f"{n.target} has no superkernel lowering")
            self.env[n] = fn(self, n, v, *args, **kwargs)
        except Unsupported as e:
            self._rollback(cp)
            self._eager(n, args, kwargs, v, str(e))
        except BadInputError:
            raise
        except Exception as e:  # a lowering's own failure: the node still runs, eagerly, counted and logged
            self._rollback(cp)
            self.lowering_failures += 1
            _log.warning("superkernel.torch: lowering %s (%s) failed with %s: %s; it runs eagerly (please report "
                         "this)", n.name, n.target, type(e).__name__, e)
            self._eager(n, args, kwargs, v, f"its lowering failed ({type(e).__name__}: {e})")

    def _fold(self, n, args, kwargs):
        """A node that depends on constants only is computed once, now."""
        real = tree_map(lambda a: self._real_const(a) if isinstance(a, TRef) else a, (args, kwargs))
        out = n.target(*real[0], **real[1])
        if isinstance(out, torch.Tensor):
            return self.const(n.name, out)
        if isinstance(out, (list, tuple)):
            return [self.const(f"{n.name}_{i}", o) for i, o in enumerate(out)]
        return out

    def _real_const(self, t: TRef) -> torch.Tensor:
        base = self.buffers[t.buf].source
        return torch.as_strided(base.reshape(-1), t.shape, t.stride, t.offset)

    def _eager(self, n, args, kwargs, v, reason):
        for t in tree_flatten((args, kwargs))[0]:
            if isinstance(t, TRef):  # PyTorch reads (and may write) the buffer itself
                self.materialize(t.buf, written=True)
        self._close_segment()
        self.splits.append({"at": f"{n.name} ({n.target})", "reason": reason + "; it runs eagerly in PyTorch"})
        vals = v if isinstance(v, (list, tuple)) else [v]
        refs, outs = [], []
        for i, ov in enumerate(vals):
            if isinstance(ov, torch.Tensor):
                # Any dtype can flow between eager ops; a kernel operand of an unsupported dtype declines in bparam.
                if is_inplace(n.target) and i == 0 and isinstance(args[0], TRef):
                    r = self.view_of(args[0], ov)
                    self.mark_written(r)
                    refs.append(r)
                    continue
                name = self.name(f"{n.name}_{i}" if len(vals) > 1 else n.name)
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


# The lowerings register themselves on import.
from . import _aten  # noqa: E402,F401
