"""superkernel.torch: compile PyTorch modules and functions into SuperKernels.

    import superkernel.torch as skt
    cm = skt.compile(model, (x, pos), options="", cache_dir="/tmp/skc", workers=2)
    out = cm(x, pos)          # the model's outputs, computed on its own tensors
    print(cm.report)          # the plan report of every compiled segment
    cm.summary()              # {"aten_ops", "launches", "superkernels", "eager_ops", "splits", "lowering_failures"}

`compile` traces the call with make_fx on fake tensors (no real work, no side
effect on the model's buffers; _trace.py, with _decomp.py's decompositions)
to an aten graph, lowers it (lowering.py, one entry per aten op in
_aten.py) and compiles each segment with the library. Semantics follow the C++ API:
options are option strings checked by the library; `scope` is torchair's
super_kernel scope. docs/PYTORCH.md has the details and the limits.
"""

from __future__ import annotations

import ctypes
import json
import os
import threading
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

try:
    import torch
except ImportError as e:  # say which interpreter lacks it: Debian's torch serves /usr/bin/python3 only
    import sys as _sys
    raise ImportError(f"superkernel.torch needs PyTorch (1.13 or later), which this interpreter ({_sys.executable}) "
                      f"cannot import: {e}. Debian's python3-torch (scripts/setup.sh installs it) is for "
                      "/usr/bin/python3; run that, or install torch for this interpreter") from e
from torch.utils._pytree import tree_flatten, tree_map

from .. import shared_session
from .._capi import BadInputError, InvalidArgumentError
from . import lowering
from ._chunked import ChunkedModule
from ._scope import scope
from ._trace import trace
from .lowering import DTYPES, KERNEL_SOURCE, EagerStep, Segment, TRef, width

__all__ = ["compile", "compile_chunked", "scope", "CompiledModule", "ChunkedModule", "lowering"]

_SOURCE_NAME = "torch_ops.cpp"


def _kernel_source() -> str:
    return KERNEL_SOURCE.read_text()


def compile(model_or_fn: Union[torch.nn.Module, Callable], example_args, options: str = "", target: str = "cpu",
            cache_dir: Optional[Union[str, os.PathLike]] = None, workers: Optional[int] = None,
            fuse: bool = True) -> "CompiledModule":
    """Traces `model_or_fn(*example_args)` and compiles it into SuperKernels.

    example_args: a tuple of tensors (one tensor is taken as a 1-tuple); the
    compiled module accepts tensors of exactly these shapes and dtypes.
    options: an option string merged over the plan's (e.g. "early-start=0").
    Parameters and buffers of a module are read and written in place: a
    KV cache updated with index_copy_ / index_put_ in forward is updated in
    the module's own tensor. fuse=False compiles the unfused reference (one
    launch per op, the same kernels): what fusion is measured against.
    """
    if not (isinstance(model_or_fn, torch.nn.Module) or callable(model_or_fn)):
        raise InvalidArgumentError(f"compile: model_or_fn must be a torch.nn.Module or a callable, "
                                   f"not {type(model_or_fn).__name__}")
    if isinstance(example_args, torch.Tensor):
        example_args = (example_args,)
    if not isinstance(example_args, (tuple, list)):
        raise InvalidArgumentError(f"compile: example_args must be a tuple of tensors, not "
                                   f"{type(example_args).__name__}")
    for i, a in enumerate(example_args):
        if not isinstance(a, torch.Tensor):
            raise InvalidArgumentError(f"compile: example_args[{i}] is a {type(a).__name__}; every argument must be "
                                       "a tensor (bind other values into the function, e.g. with functools.partial)")
        if a.device.type != "cpu":
            raise InvalidArgumentError(f"compile: example_args[{i}] is on {a.device}; superkernel.torch runs CPU "
                                       "tensors (target cpu)")
    if not isinstance(options, str):
        raise InvalidArgumentError(f"compile: options must be a str, not {type(options).__name__}")
    if target != "cpu":
        raise BadInputError(f"compile: target {target!r} is not supported by superkernel.torch yet: its kernels "
                            "(python/superkernel/torch/kernels) are written for target cpu")
    if workers is not None and (not isinstance(workers, int) or isinstance(workers, bool) or workers < 1):
        raise InvalidArgumentError(f"compile: workers must be a positive int or None, not {workers!r}")
    return CompiledModule(model_or_fn, tuple(example_args), options, cache_dir, workers, bool(fuse))


def compile_chunked(model, example_args, seq_dims: Sequence[Optional[int]], max_len: int, out_dim: int = 1,
                    **compile_kwargs) -> "ChunkedModule":
    """A model that takes every sequence length 1..max_len with at most floor(log2(max_len)) + 1 compiles
    (chunked prefill, exact for causal models over a KV cache: _chunked.py says when).

    seq_dims: for each argument, its sequence dimension or None (gpt-fast's (tokens, input_pos): (1, 0));
    out_dim: the output's sequence dimension; compile_kwargs go to `compile`."""
    return ChunkedModule(model, example_args, seq_dims, max_len, out_dim, compile_kwargs)


class CompiledModule:
    """The compiled form of one traced call; call it like the original."""

    def __init__(self, model_or_fn, example_args: Tuple[torch.Tensor, ...], options: str, cache_dir, workers,
                 fuse: bool = True):
        self._model = model_or_fn
        self._fuse = fuse
        self._options = options
        self._signature = [(tuple(a.shape), a.dtype) for a in example_args]
        gm, states = trace(model_or_fn, example_args)
        self.graph_module = gm
        self._state = [st.tensor for st in states]
        self._session = shared_session(cache_dir, workers)
        nworkers = workers or int(os.environ.get("SK_NUM_WORKERS", "0") or 0) or (os.cpu_count() or 1)
        self._program = lowering.Lowering(gm, nworkers, [st.name for st in states]).run()
        self._plans: List[Any] = []
        self._compile_segments()
        self._prepare_runtime()

    # ---- compile -------------------------------------------------------------
    def _oplist(self, seg: Segment) -> dict:
        kernels: Dict[Tuple[str, str], str] = {}
        klist: Dict[str, dict] = {}
        bufs: Dict[str, dict] = {}
        ops = []
        scopes = {}
        for op in seg.ops:
            key = (op.entry, json.dumps(op.params, sort_keys=True))
            kname = kernels.get(key)
            if kname is None:
                kname = kernels[key] = f"{op.entry}_{len(kernels)}"
                klist[kname] = {"source": _SOURCE_NAME, "entry": op.entry, "core_type": "vector",
                                "block_dim_invariant": True, "params": op.params, "macros": {}}
            for p in op.params:
                if p["kind"] == "buffer":
                    b = self._program.buffers[op.args[p["name"]]]
                    bufs[b.name] = {"dtype": DTYPES[b.dtype][0], "shape": [b.numel * width(b.dtype)]}
            o = {"name": op.name, "kernel": kname, "block_dim": op.block_dim, "args": op.args, "macros": op.macros}
            if op.scope is None:
                o["scope"] = None
            elif op.scope:
                o["scope"] = op.scope
                opts = self._program.scope_options.get(op.scope)
                if opts:
                    scopes[op.scope] = {"options": opts}
            ops.append(o)
        ol = {"format": "superkernel.oplist", "version": 1, "target": "cpu", "kernels": klist, "buffers": bufs,
              "ops": ops}
        if scopes:
            ol["scopes"] = scopes
        return ol

    def _compile_segments(self):
        src = _kernel_source()
        for step in self._program.steps:
            if isinstance(step, Segment):
                ol = self._oplist(step)
                try:
                    plan = self._session.compile(ol, sources={_SOURCE_NAME: src}, options=self._options or None,
                                                 fuse=self._fuse)
                except BadInputError as e:
                    raise _scope_error(e, ol) from None
                self._plans.append((step, plan, ol))

    # ---- run -------------------------------------------------------------------
    def _prepare_runtime(self):
        """Fixes what each call does. A call runs in a context: the module's intermediates (work buffers
        allocated once) and each segment's pointer array with their addresses and the constants' written
        once; a call writes only the addresses that change (arguments, state tensors, fresh outputs, eager
        results). Calls from several threads at once each take their own context from a pool (one thread
        reuses one context), so concurrent calls never share an intermediate."""
        prog = self._program
        outputs = {leaf.buf for leaf in tree_flatten(prog.output)[0] if isinstance(leaf, TRef)}
        for name in outputs:
            if prog.buffers[name].kind == "work":
                prog.buffers[name].per_call = True
        self._work_specs = [(b.name, b.numel, b.dtype) for b in prog.buffers.values()
                            if b.kind == "work" and not b.per_call]
        self._consts = {b.name: b.source.reshape(-1) for b in prog.buffers.values()
                        if b.kind == "const" and not b.mutated}
        # A constant the graph writes in place (zeros(...).add_(x)) is fresh in every eager call: a copy per call.
        self._const_copies = [(b.name, b.source.reshape(-1)) for b in prog.buffers.values()
                              if b.kind == "const" and b.mutated]
        self._per_call = [(b.name, b.numel, b.dtype) for b in prog.buffers.values() if b.per_call]
        nstate = len(self._state)
        self._state_bufs = [(b.name, b.source) for b in prog.buffers.values() if b.kind == "arg" and b.source < nstate]
        self._arg_bufs = [(b.name, b.source - nstate) for b in prog.buffers.values()
                          if b.kind == "arg" and b.source >= nstate]
        self._mutated = {b.name for b in prog.buffers.values() if b.kind == "arg" and b.mutated}
        self._lock = threading.Lock()
        self._free: List[_Context] = [self._new_context()]
        self._contexts = 1

    def _new_context(self) -> "_Context":
        static = dict(self._consts)
        for name, numel, dtype in self._work_specs:
            static[name] = torch.empty(numel, dtype=dtype)
        runs = {}
        for step, plan, _ in self._plans:
            names = list(plan.buffer_names)
            ptrs = (ctypes.c_void_p * max(1, len(names)))()
            dynamic = []
            for i, n in enumerate(names):
                if n in static:
                    ptrs[i] = static[n].data_ptr()
                else:
                    dynamic.append((i, n))
            runs[id(step)] = (plan, ptrs, dynamic)
        return _Context(static, runs)

    def _acquire(self) -> "_Context":
        with self._lock:
            if self._free:
                return self._free.pop()
            self._contexts += 1
        return self._new_context()

    def _release(self, ctx: "_Context"):
        with self._lock:
            self._free.append(ctx)

    def _bind(self, args) -> Dict[str, torch.Tensor]:
        """The tensors of this call's arguments and state, by buffer name."""
        if len(args) != len(self._signature):
            raise InvalidArgumentError(f"compiled module takes {len(self._signature)} tensor argument(s) "
                                       f"(as traced), got {len(args)}")
        dyn: Dict[str, torch.Tensor] = {}
        for name, i in self._arg_bufs:
            t = args[i]
            shape, dtype = self._signature[i]
            if not isinstance(t, torch.Tensor):
                raise InvalidArgumentError(f"argument {i} is a {type(t).__name__}, not a tensor")
            if t.shape != shape or t.dtype != dtype:
                raise BadInputError(f"argument {i} is {list(t.shape)} {t.dtype} but the module was compiled for "
                                    f"{list(shape)} {dtype}; shapes are static: compile again for this shape")
            if t.device.type != "cpu":
                raise InvalidArgumentError(f"argument {i} is on {t.device}; superkernel.torch runs CPU tensors")
            dyn[name] = self._contiguous(t, name, f"argument {i}")
        for name, j in self._state_bufs:
            dyn[name] = self._contiguous(self._state[j], name, "a parameter or buffer of the module")
        for name, numel, dtype in self._per_call:
            dyn[name] = torch.empty(numel, dtype=dtype)
        for name, const in self._const_copies:
            dyn[name] = const.clone()
        return dyn

    def _contiguous(self, t: torch.Tensor, name: str, what: str) -> torch.Tensor:
        if t.is_contiguous():
            return t
        if name in self._mutated:
            raise BadInputError(f"{what} is written in place by the compiled code but is not contiguous; "
                                "pass a contiguous tensor")
        return t.contiguous()  # documented: one copy per call of a non-contiguous input

    def __call__(self, *args):
        dyn = self._bind(args)
        ctx = self._acquire()
        try:
            for step in self._program.steps:
                if isinstance(step, Segment):
                    plan, ptrs, dynamic = ctx.runs[id(step)]
                    for i, n in dynamic:
                        ptrs[i] = dyn[n].data_ptr()
                    plan.run_pointers(ptrs)
                else:
                    self._run_eager(step, dyn, ctx)
            return tree_map(lambda x: self._output(dyn, ctx, x) if isinstance(x, TRef) else x, self._program.output)
        finally:
            self._release(ctx)

    def _output(self, dyn, ctx, t: TRef) -> torch.Tensor:
        out = self._tensor(dyn, ctx, t)
        # A constant or an intermediate is returned as a copy: the caller may write to what it gets, as it may to
        # eager's fresh tensor, and the next call must still see the constant.
        return out.clone() if t.buf in ctx.static else out

    @staticmethod
    def _tensor(dyn, ctx, t: TRef) -> torch.Tensor:
        base = dyn.get(t.buf)
        if base is None:
            base = ctx.static[t.buf]
        return torch.as_strided(base, t.shape, t.stride, base.storage_offset() + t.offset)

    def _run_eager(self, step: EagerStep, storage, ctx):
        real = tree_map(lambda x: self._tensor(storage, ctx, x) if isinstance(x, TRef) else x, (step.args, step.kwargs))
        with torch.no_grad():
            out = step.target(*real[0], **real[1])
        outs = out if isinstance(out, (list, tuple)) else [out]
        for name, shape, stride, offset, i in step.outputs:
            o = outs[i]
            if o.is_contiguous() and tuple(o.stride()) == stride and offset == 0:
                storage[name] = o  # the eager result itself, no copy
            else:  # the layout the traced graph expects
                storage[name] = _copy_into(o, shape, stride, offset)

    # ---- introspection -------------------------------------------------------
    @property
    def report(self) -> str:
        """Every compiled segment's plan report, and the ops that ran eagerly."""
        parts = []
        seg_i = 0
        plans = {id(step): plan for step, plan, _ in self._plans}
        for step in self._program.steps:
            if isinstance(step, Segment):
                plan = plans[id(step)]
                parts.append(f"segment {seg_i}: {len(step.ops)} ops\n{plan.report.rstrip()}")
                seg_i += 1
            else:
                parts.append(f"eager: {step.node.name} ({step.target})")
        return "\n".join(parts) + "\n"

    def summary(self) -> Dict[str, Any]:
        eager = sum(1 for s in self._program.steps if isinstance(s, EagerStep))
        return {
            "aten_ops": self._program.aten_ops,
            "launches": sum(p.launch_count for _, p, _ in self._plans) + eager,
            "superkernels": sum(p.superkernel_count for _, p, _ in self._plans),
            "eager_ops": eager,
            "splits": [dict(s) for s in self._program.splits],
            "lowering_failures": self._program.lowering_failures,
        }

    def oplists(self) -> List[dict]:
        """The op list of each compiled segment, as `sk-compile` takes it: each kernel's source is the absolute
        path of this package's torch_ops.cpp (json.dump one to a file and run `sk-compile FILE`)."""
        out = []
        for _, _, ol in self._plans:
            ol = json.loads(json.dumps(ol))
            for k in ol["kernels"].values():
                k["source"] = str(KERNEL_SOURCE)
            out.append(ol)
        return out

    def write_oplists(self, directory: Union[str, os.PathLike]) -> List[Path]:
        """Writes segment_<i>.json for each compiled segment and torch_ops.cpp beside them (sources relative to
        the lists, so the folder can be moved or shared); returns the lists' paths."""
        d = Path(directory)
        d.mkdir(parents=True, exist_ok=True)
        (d / _SOURCE_NAME).write_text(_kernel_source())
        paths = []
        for i, (_, _, ol) in enumerate(self._plans):
            p = d / f"segment_{i}.json"
            p.write_text(json.dumps(ol, indent=1, allow_nan=False) + "\n")
            paths.append(p)
        return paths


def _copy_into(o: torch.Tensor, shape, stride, offset) -> torch.Tensor:
    numel = max(1, lowering.extent(shape, stride, offset))
    flat = torch.empty(numel, dtype=o.dtype)
    torch.as_strided(flat, shape, stride, offset).copy_(o)
    return flat


class _Context:
    """One call's intermediates and pointer arrays (see CompiledModule._prepare_runtime)."""
    __slots__ = ("static", "runs")

    def __init__(self, static, runs):
        self.static = static
        self.runs = runs


def _scope_error(e: BadInputError, ol: dict) -> BadInputError:
    """The library checks a scope's options as an op list's `scopes.<name>.options`; the PyTorch user wrote
    skt.scope(name, options), so the message names that, not an op list they never saw."""
    msg = str(e)
    for name, sc in ol.get("scopes", {}).items():
        key = f"scopes.{name}.options"
        if key in msg:
            detail = msg.split(key, 1)[1].lstrip(": ")
            return type(e)(f"skt.scope({name!r}, {sc.get('options', '')!r}): bad options: {detail}")
    return e
