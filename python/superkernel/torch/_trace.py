"""Tracing a model file as its author wrote it into one aten graph.

Guarantee: `trace(model_or_fn, args)` returns an aten graph (make_fx over
fake tensors) whose placeholders are, in order, every distinct tensor the
module reads through an attribute (parameters, buffers and plain tensor
attributes, each once however many names it has) and then the call's
arguments. Nothing runs for real and the module is left exactly as it was.
A failure raises the package's `BadInputError` naming the module path and
the model's source line where tracing stopped; never a raw exception.

What model files do that plain `make_fx` + `functional_call` cannot take
(torch 1.13), and how this tracer takes it:
- tied weights (`lm_head.weight = wte.weight`): every name of a shared
  tensor is swapped for the same traced input, so it is one input, not a
  real tensor the fake mode refuses;
- plain tensor attributes (`self.causal_mask = torch.tril(...)`, a RoPE
  table assigned in `setup_caches`): swapped like buffers, read at each call;
- ops fake mode cannot trace or that would land on ops superkernel does not
  lower: `_decomp.py`'s curated table (decompositions chosen op by op so that
  they land on lowered ops, as Inductor does) and its torch-function rewrites
  (an integer `repeat_interleave` becomes expand + reshape).
"""

from __future__ import annotations

import contextlib
import os
import traceback
from dataclasses import dataclass
from typing import Dict, List, Tuple

import torch
from torch.fx.experimental.proxy_tensor import make_fx

from .._capi import BadInputError, SuperkernelError
from . import _decomp

_TORCH_DIR = os.path.dirname(os.path.abspath(torch.__file__))
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@dataclass
class State:
    """One distinct tensor the module reads through attributes, and every place that holds it."""
    name: str                                  # its first qualified name ("layers.0.attention.kv_cache.k_cache")
    tensor: torch.Tensor
    places: List[Tuple[torch.nn.Module, str, str]]  # (module, "_parameters" | "_buffers" | "__dict__", attribute)


def module_state(model: torch.nn.Module) -> List[State]:
    """Parameters, buffers and plain tensor attributes of every submodule, by identity: a tensor held under
    several names (tied embeddings, a shared expert) is one State with several places."""
    by_id: Dict[int, State] = {}
    order: List[State] = []
    for prefix, mod in model.named_modules(remove_duplicate=False):
        for where in ("_parameters", "_buffers", "__dict__"):
            table = getattr(mod, where) if where != "__dict__" else mod.__dict__
            for attr, t in list(table.items()):
                if not isinstance(t, torch.Tensor):
                    continue
                st = by_id.get(id(t))
                if st is None:
                    st = by_id[id(t)] = State(f"{prefix}.{attr}" if prefix else attr, t, [])
                    order.append(st)
                place = (mod, where, attr)
                if not any(p[0] is mod and p[1] == where and p[2] == attr for p in st.places):
                    st.places.append(place)
    return order


@contextlib.contextmanager
def _swapped(states: List[State], values):
    """Every place of every state holds the traced value for the duration; the originals come back after,
    whatever happens."""
    saved = []
    try:
        for st, v in zip(states, values):
            for mod, where, attr in st.places:
                table = mod.__dict__ if where == "__dict__" else getattr(mod, where)
                saved.append((table, attr, table[attr]))
                table[attr] = v
        yield
    finally:
        for table, attr, orig in reversed(saved):
            table[attr] = orig


class _ModulePath:
    """The qualified name of the submodule whose forward is running (forward hooks): where a tracing
    failure happened, for the error message."""

    def __init__(self, model: torch.nn.Module):
        self.stack: List[str] = []
        self.failed_in: str = ""
        self.handles = []
        for name, mod in model.named_modules():
            self.handles.append(mod.register_forward_pre_hook(self._enter(name or type(model).__name__)))
            self.handles.append(mod.register_forward_hook(self._exit))

    def _enter(self, name):
        def hook(_mod, _args):
            self.stack.append(name)
        return hook

    def _exit(self, _mod, _args, _out):
        if self.stack:
            self.stack.pop()

    def close(self):
        if self.stack and not self.failed_in:
            self.failed_in = self.stack[-1]
        for h in self.handles:
            h.remove()


def model_frame(tb) -> str:
    """The innermost frame of the traceback in the user's code (not torch's, not this package's)."""
    best = ""
    for fs in traceback.extract_tb(tb):
        f = os.path.abspath(fs.filename)
        if f.startswith(_TORCH_DIR) or f.startswith(_PACKAGE_DIR) or f.startswith("<"):
            continue
        best = f"{fs.filename}:{fs.lineno} in {fs.name}" + (f": {fs.line.strip()}" if fs.line else "")
    return best


def _hint(e: BaseException) -> str:
    s = str(e)
    if "data-dependent" in s or "tracing tensor" in s or "value out of" in s or "DataDependent" in type(e).__name__:
        return (" The traced code depends on a tensor's value (a Python branch, .item(), a loop over a tensor): "
                "superkernel compiles one static graph; express it as a tensor op (torch.where) or move it out of "
                "the compiled function.")
    if "DynamicOutputShape" in type(e).__name__:
        return (" That op's output shape depends on tensor values (nonzero, masked_select, repeat_interleave with a "
                "tensor of repeats), so it cannot be traced to a static graph.")
    if "non-Fake Tensor" in s:
        return (" A tensor the traced code reads is neither an argument nor an attribute of the module (a global or "
                "a closure variable): pass it as an argument or make it an attribute of the module.")
    return ""


def trace(model_or_fn, example_args) -> Tuple[torch.fx.GraphModule, List[State]]:
    """The aten graph of `model_or_fn(*example_args)`; placeholders: the states, then the arguments."""
    is_module = isinstance(model_or_fn, torch.nn.Module)
    states = module_state(model_or_fn) if is_module else []

    def fn(*flat):
        with _swapped(states, flat[:len(states)]):
            return model_or_fn(*flat[len(states):])

    inputs = [st.tensor.detach() for st in states] + [a.detach() for a in example_args]
    where = _ModulePath(model_or_fn) if is_module else None
    try:
        with torch.no_grad(), _decomp.rewrites():
            gm = make_fx(fn, decomposition_table=_decomp.table(), tracing_mode="fake")(*inputs)
    except SuperkernelError:
        raise
    except Exception as e:  # an error of the user's code, or a construct that cannot be traced
        if where is not None:
            where.close()
        what = getattr(model_or_fn, "__name__", type(model_or_fn).__name__)
        text = str(e).splitlines()[0] if str(e) else type(e).__name__
        loc = model_frame(e.__traceback__)
        at = ""
        if where is not None and where.failed_in:
            at += f" in module {where.failed_in}"
        if loc:
            at += f" at {loc}"
        raise BadInputError(f"compile: tracing {what} failed{at}: {type(e).__name__}: {text}.{_hint(e)}") from e
    finally:
        if where is not None:
            where.close()
    return gm, states
