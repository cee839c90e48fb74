"""`skt.scope`: torchair's super_kernel scope, recorded in the traced graph.

Inside `superkernel.torch.compile`'s trace, entering and leaving a scope
calls two side-effect-only ops of the `superkernel` torch library namespace;
make_fx records them in program order, so every aten node between an enter
and its exit belongs to that scope. Outside a trace the ops do nothing, so
the same module runs eagerly unchanged.
"""

from __future__ import annotations

import contextlib
from typing import Iterator, Optional

import torch

from .._capi import InvalidArgumentError

_lib = torch.library.Library("superkernel", "DEF")
_lib.define("scope_enter(str name, str options, bool never) -> ()")
_lib.define("scope_exit() -> ()")


def _enter(name: str, options: str, never: bool) -> None:
    return None


def _exit() -> None:
    return None


_lib.impl("scope_enter", _enter, "CompositeExplicitAutograd")
_lib.impl("scope_exit", _exit, "CompositeExplicitAutograd")

SCOPE_ENTER = torch.ops.superkernel.scope_enter.default
SCOPE_EXIT = torch.ops.superkernel.scope_exit.default


@contextlib.contextmanager
def scope(name: Optional[str], options: str = "") -> Iterator[None]:
    """Marks the ops inside as one fusion scope `name` with `options`
    (an option string, e.g. "early-start=1", checked like an op list's
    scope options when the module is compiled). The same name anywhere is one
    range; `scope(None)` never fuses what is inside, and wins over an
    enclosing scope; an inner scope wins over an outer one."""
    if name is not None and (not isinstance(name, str) or not name):
        raise InvalidArgumentError(f"skt.scope: name must be a non-empty str or None, not {name!r}")
    if not isinstance(options, str):
        raise InvalidArgumentError(f"skt.scope: options must be a str, not {type(options).__name__}")
    if name is None and options:
        raise InvalidArgumentError("skt.scope(None) never fuses, so it takes no options "
                                   f"(got {options!r})")
    torch.ops.superkernel.scope_enter(name or "", options, name is None)
    try:
        yield
    finally:
        torch.ops.superkernel.scope_exit()
