"""superkernel: a JIT kernel-fusion compiler (Python front end over the C API).

    import superkernel
    s = superkernel.Session(cache_dir="/tmp/skc", workers=2)
    plan = s.compile(oplist_json_text)      # plan, generate, compile (cached), load
    plan.run({"x": ptr, ...})               # every step on caller memory
    superkernel.cache_stats("/tmp/skc")     # {"compiles": ..., "hits": ..., "misses": ...}

`superkernel.torch` compiles PyTorch modules and functions (docs/PYTORCH.md).
Every failure raises a `SuperkernelError` subclass carrying the library's message.
"""

from __future__ import annotations

import ctypes
import json
import os
import sys
from typing import Dict, Mapping, Optional, Sequence, Tuple, Union

from ._capi import (BadInputError, CompileError, InternalError, InvalidArgumentError, IoError, MismatchError,
                    RuntimeFailure, SuperkernelError, check, lib)
from . import _capi

__all__ = ["Session", "Plan", "cache_stats", "shared_session", "version", "SuperkernelError", "BadInputError", "CompileError",
           "RuntimeFailure", "MismatchError", "IoError", "InternalError", "InvalidArgumentError"]


def version() -> str:
    """The library's version ("0.1.0")."""
    return lib().sk_version().decode()


def _opt_str(name: str, value: Optional[str]) -> Optional[bytes]:
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidArgumentError(f"{name} must be a str or None, not {type(value).__name__}")
    if "\0" in value:
        raise InvalidArgumentError(f"{name} contains a NUL character")
    return value.encode()


class Session:
    """A compile-and-run session: its cache (memory + disk) and executor.

    cache_dir: None for the default ($SK_CACHE_DIR, $XDG_CACHE_HOME/superkernel,
    ~/.cache/superkernel); workers: executor threads (None: $SK_NUM_WORKERS,
    else the hardware threads); options: merged over every op list's own;
    communicator: the ranks of the plans' collective ops, an mpi4py
    communicator (``MPI.COMM_WORLD`` or one split from it; docs/COLLECTIVES.md).
    None: a plan with a collective fails when it runs, naming the op.
    """

    def __init__(self, cache_dir: Optional[Union[str, os.PathLike]] = None, workers: Optional[int] = None,
                 options: Optional[str] = None, compiler: Optional[str] = None, memory_only: bool = False,
                 communicator=None):
        if workers is not None and (not isinstance(workers, int) or isinstance(workers, bool) or
                                    not 1 <= workers <= 1024):
            raise InvalidArgumentError(f"workers must be an int in [1, 1024] or None, not {workers!r}")
        if cache_dir is not None and not isinstance(cache_dir, (str, os.PathLike)):
            raise InvalidArgumentError(f"cache_dir must be a path or None, not {type(cache_dir).__name__}")
        l = lib()
        o = _capi.SessionOptions()
        l.sk_session_options_init_sized(ctypes.byref(o), ctypes.sizeof(o))
        o.workers = workers or 0
        o.memory_only = 1 if memory_only else 0
        # Kept alive with the session: the C API copies them, but only at create.
        self._keep = [_opt_str("cache_dir", os.fspath(cache_dir) if cache_dir is not None else None),
                      _opt_str("compiler", compiler), _opt_str("options", options)]
        o.cache_dir, o.compiler, o.options = self._keep
        comm = _communicator(communicator) if communicator is not None else None
        try:
            o.communicator = comm.value if comm is not None else None
            h = ctypes.c_void_p()
            check(l.sk_session_create(ctypes.byref(o), ctypes.byref(h)))
        finally:
            if comm is not None:  # the session holds its own reference
                l.sk_communicator_destroy(comm)
        self._h = h

    def close(self) -> None:
        """Frees the session (its plans stay valid only while it lives)."""
        if getattr(self, "_h", None) is not None and self._h.value:
            lib().sk_session_destroy(self._h)
            self._h = None

    def __del__(self):
        try:
            self.close()
        except Exception:  # interpreter shutdown: the library may be gone
            pass

    def _handle(self) -> ctypes.c_void_p:
        if getattr(self, "_h", None) is None:
            raise InvalidArgumentError("the session is closed")
        return self._h

    @property
    def cache_dir(self) -> str:
        return lib().sk_cache_dir(self._handle()).decode()

    def cache_stats(self) -> Dict[str, int]:
        """This session's cache counters (persisted ones included)."""
        st = _capi.CacheStats()
        check(lib().sk_cache_stats_get(self._handle(), ctypes.byref(st)))
        return {name: int(getattr(st, name)) for name, _ in _capi.CacheStats._fields_}

    def calibrate_sync(self, target: str = "cpu") -> Dict[str, float]:
        """Measures this machine's sync costs for ``target`` on the session's
        workers (about half a second) and caches them in the session's cache
        directory, where every later plan for that target and worker count
        reads them (``sync-model``). Returns ``barrier_ns``, ``counter_ns`` and
        ``flag_ns``. Raises BadInputError for a target without a calibration
        or a one-worker session, RuntimeFailure when another job disturbed the
        timings (nothing was saved)."""
        if target is None:
            raise InvalidArgumentError("target must be a str, not NoneType")
        costs = _capi.SyncCosts()
        check(lib().sk_calibrate_sync(self._handle(), _opt_str("target", target), ctypes.byref(costs)))
        return {name: float(getattr(costs, name)) for name, _ in _capi.SyncCosts._fields_}

    def compile(self, oplist: Union[str, Mapping], *, sources: Optional[Mapping[str, str]] = None,
                base_dir: Optional[str] = None, options: Optional[str] = None, fuse: bool = True) -> "Plan":
        """Plans, generates, compiles (cached) and loads an op list given as
        JSON text or a dict. `sources` maps a kernel's "source" name to its
        text (compiled from memory); fuse=False gives the unfused reference."""
        text = oplist if isinstance(oplist, str) else json.dumps(oplist)
        data = text.encode()
        srcs = list((sources or {}).items())
        arr = (_capi.Source * max(1, len(srcs)))()
        keep = []
        for i, (name, body) in enumerate(srcs):
            nb, tb = name.encode(), body.encode()
            keep += [nb, tb]
            arr[i].name, arr[i].text, arr[i].size = nb, tb, len(tb)
        h = ctypes.c_void_p()
        check(lib().sk_compile_json(self._handle(), data, len(data), _opt_str("base_dir", base_dir), arr, len(srcs),
                                    _opt_str("options", options), 1 if fuse else 0, ctypes.byref(h)))
        return Plan(self, h)


def _communicator(comm) -> ctypes.c_void_p:
    """The C API's communicator for an mpi4py one, through its Fortran handle
    (sk_communicator_mpi); the library checks the handle and says what is
    wrong with it."""
    mpi = sys.modules.get("mpi4py.MPI")  # never imported here: importing it initialises MPI
    if mpi is None or not isinstance(comm, mpi.Comm):
        raise InvalidArgumentError(
            f"communicator must be an mpi4py communicator (MPI.COMM_WORLD or one split from it), not "
            f"{type(comm).__module__}.{type(comm).__qualname__}"
            + ("" if mpi is not None else " (mpi4py.MPI is not imported: `from mpi4py import MPI`; Debian: python3-mpi4py)"))
    h = ctypes.c_void_p()
    check(lib().sk_communicator_mpi(comm.py2f(), ctypes.byref(h)))
    return h


class Plan:
    """A compiled op list: its buffers, report and `run`."""

    def __init__(self, session: Session, handle: ctypes.c_void_p):
        self._session = session  # keeps the session (its device, its modules) alive
        self._h = handle
        l = lib()
        n = l.sk_plan_buffer_count(handle)
        self.buffer_names: Tuple[str, ...] = tuple(l.sk_plan_buffer_name(handle, i).decode() for i in range(n))
        self.buffer_bytes: Tuple[int, ...] = tuple(int(l.sk_plan_buffer_bytes(handle, i)) for i in range(n))
        self._index = {name: i for i, name in enumerate(self.buffer_names)}
        self._ptrs_type = ctypes.c_void_p * max(1, n)
        self._sk_run = l.sk_run  # bound once: run_pointers is the per-step path

    def __del__(self):
        try:
            if self._h is not None and self._h.value:
                lib().sk_plan_destroy(self._h)
                self._h = None
        except Exception:
            pass

    @property
    def op_count(self) -> int:
        return int(lib().sk_plan_op_count(self._h))

    @property
    def launch_count(self) -> int:
        return int(lib().sk_plan_launch_count(self._h))

    @property
    def superkernel_count(self) -> int:
        return int(lib().sk_plan_superkernel_count(self._h))

    @property
    def report(self) -> str:
        return lib().sk_plan_report(self._h).decode()

    def run(self, buffers: Union[Mapping[str, int], Sequence[int]]) -> None:
        """Runs every step on caller memory: `buffers` maps each buffer name
        (or gives, in buffer order) the address of at least buffer_bytes.

        Several threads may run one plan at once, each on its own buffers:
        every call has its own address array, and the library's run only
        reads the plan (sk_run; Session.h, "Thread-safety"). Calls that
        share an output buffer race on its contents."""
        n = len(self.buffer_names)
        ptrs = self._ptrs_type()
        if isinstance(buffers, Mapping):
            missing = [b for b in self.buffer_names if b not in buffers]
            if missing:
                raise InvalidArgumentError(f"run: no address for buffer(s) {', '.join(missing)}")
            for name, i in self._index.items():
                ptrs[i] = buffers[name]
        else:
            if len(buffers) != n:
                raise InvalidArgumentError(f"run: {len(buffers)} addresses for {n} buffers")
            for i, p in enumerate(buffers):
                ptrs[i] = p
        self.run_pointers(ptrs)

    def run_pointers(self, ptrs) -> None:
        """run() for a prepared ctypes array in buffer order (the hot path of
        superkernel.torch: no per-call dict or list work). Thread-safe as
        run() is, as long as each concurrent call passes its own array."""
        status = self._sk_run(self._session._handle(), self._h, ptrs, len(self.buffer_names))
        if status:
            check(status)


_shared: Dict[Tuple[Optional[str], Optional[int]], Session] = {}


def _check_dir(cache_dir) -> Optional[str]:
    if cache_dir is not None and not isinstance(cache_dir, (str, os.PathLike)):
        raise InvalidArgumentError(f"cache_dir must be a path or None, not {type(cache_dir).__name__}")
    return os.path.abspath(os.fspath(cache_dir)) if cache_dir is not None else None


def shared_session(cache_dir: Optional[Union[str, os.PathLike]] = None, workers: Optional[int] = None) -> Session:
    """The process's one Session for (cache_dir, workers): compiled modules
    share it, so its memory cache and counters cover all of them."""
    key = (_check_dir(cache_dir), workers)
    s = _shared.get(key)
    if s is None:
        s = _shared[key] = Session(cache_dir=key[0], workers=workers)
    return s


def cache_stats(cache_dir: Optional[Union[str, os.PathLike]] = None) -> Dict[str, int]:
    """The counters of the cache at `cache_dir` (None: the default cache):
    at least "compiles", "hits" and "misses". Counts this process's sessions
    on that cache and what earlier processes persisted."""
    d = _check_dir(cache_dir)
    for (sd, _), s in _shared.items():
        if sd == d:
            return s.cache_stats()
    return shared_session(d).cache_stats()
