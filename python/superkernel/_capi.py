"""ctypes binding of the C API (include/superkernel/superkernel_c.h).

Why ctypes and not a compiled module: the C API is the library's stable ABI
(status codes, opaque handles), so a binding over it needs no compiler, no
Python headers and no rebuild per Python version, and it has exactly the C
API's semantics. Each call is a handful of pointer arguments, and a
SuperKernel run is one call, so ctypes' per-call cost (about a microsecond)
is paid once per step, not once per op.
"""

from __future__ import annotations

import ctypes
import os
import threading
from pathlib import Path

try:  # written by CMake into the build tree's and the installed package
    from ._build_info import LIBRARY
except ImportError:  # the source tree: only $SK_C_LIBRARY can say where the library is
    LIBRARY = None

__all__ = [
    "SuperkernelError", "BadInputError", "CompileError", "RuntimeFailure", "MismatchError",
    "IoError", "InternalError", "InvalidArgumentError", "lib",
]


class SuperkernelError(Exception):
    """An error of the library; `status` is the C API's status name, the
    message is the library's (what, where, what to do)."""

    status = "error"

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class BadInputError(SuperkernelError, ValueError):
    status = "bad_input"


class CompileError(SuperkernelError):
    status = "compile"


class RuntimeFailure(SuperkernelError, RuntimeError):
    status = "runtime"


class MismatchError(SuperkernelError):
    status = "mismatch"


class IoError(SuperkernelError, OSError):
    status = "io"


class InternalError(SuperkernelError):
    status = "internal"


class InvalidArgumentError(SuperkernelError, ValueError):
    status = "invalid_argument"


_BY_STATUS = {1: BadInputError, 2: CompileError, 3: RuntimeFailure, 4: MismatchError, 5: IoError,
              6: InternalError, 7: InvalidArgumentError}


class SessionOptions(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("workers", ctypes.c_uint32), ("jobs", ctypes.c_uint32),
                ("memory_only", ctypes.c_int), ("cache_dir", ctypes.c_char_p), ("compiler", ctypes.c_char_p),
                ("options", ctypes.c_char_p), ("communicator", ctypes.c_void_p)]


class Source(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("text", ctypes.c_char_p), ("size", ctypes.c_size_t)]


class CacheStats(ctypes.Structure):
    _fields_ = [(n, ctypes.c_uint64) for n in ("hits", "misses", "compiles", "compile_failures", "corrupt",
                                               "untrusted", "evicted", "entries", "bytes", "max_bytes")]


class SyncCosts(ctypes.Structure):
    _fields_ = [(n, ctypes.c_double) for n in ("barrier_ns", "counter_ns", "flag_ns")]


def _library_path() -> str:
    """$SK_C_LIBRARY, else the path recorded when the package was built or
    installed (relative to this file for an installed, relocatable prefix)."""
    env = os.environ.get("SK_C_LIBRARY")
    if env:
        return env
    if LIBRARY is None:
        raise IoError("superkernel: this copy of the package was not built or installed by CMake, so it does not "
                      "know where libsuperkernel_c.so is: import it from build/<config>/python or from the "
                      "installed prefix, or set SK_C_LIBRARY to the library's path")
    p = Path(LIBRARY)
    if not p.is_absolute():
        p = (Path(__file__).resolve().parent / p).resolve()
    return str(p)


_lib = None
_lock = threading.Lock()


def lib() -> ctypes.CDLL:
    """The loaded libsuperkernel_c, with every prototype declared."""
    global _lib
    with _lock:
        if _lib is None:
            path = _library_path()
            try:
                l = ctypes.CDLL(path)
            except OSError as e:
                raise IoError(f"superkernel: cannot load the C library {path}: {e}\n"
                              "set SK_C_LIBRARY to libsuperkernel_c.so, or import the package from the "
                              "build tree (build/<config>/python) or the installed prefix") from None
            _declare(l)
            _lib = l
        return _lib


def _declare(l: ctypes.CDLL) -> None:
    P, S = ctypes.c_void_p, ctypes.c_int
    sz, s = ctypes.c_size_t, ctypes.c_char_p
    protos = {
        "sk_version": (s, []),
        "sk_status_name": (s, [S]),
        "sk_last_error": (s, []),
        "sk_session_options_init_sized": (None, [ctypes.POINTER(SessionOptions), ctypes.c_uint32]),
        "sk_session_create": (S, [ctypes.POINTER(SessionOptions), ctypes.POINTER(P)]),
        "sk_session_destroy": (None, [P]),
        "sk_compile_json": (S, [P, s, sz, s, ctypes.POINTER(Source), sz, s, S, ctypes.POINTER(P)]),
        "sk_plan_destroy": (None, [P]),
        "sk_plan_op_count": (sz, [P]),
        "sk_plan_launch_count": (sz, [P]),
        "sk_plan_superkernel_count": (sz, [P]),
        "sk_plan_report": (s, [P]),
        "sk_plan_buffer_count": (sz, [P]),
        "sk_plan_buffer_name": (s, [P, sz]),
        "sk_plan_buffer_bytes": (ctypes.c_uint64, [P, sz]),
        "sk_run": (S, [P, P, ctypes.POINTER(P), sz]),
        "sk_cache_stats_get": (S, [P, ctypes.POINTER(CacheStats)]),
        "sk_cache_dir": (s, [P]),
        "sk_calibrate_sync": (S, [P, s, ctypes.POINTER(SyncCosts)]),
        "sk_communicator_mpi": (S, [ctypes.c_int, ctypes.POINTER(P)]),
        "sk_communicator_destroy": (None, [P]),
    }
    for name, (res, args) in protos.items():
        f = getattr(l, name)
        f.restype = res
        f.argtypes = args


def check(status: int) -> None:
    """Raises the exception of a failed call, with the library's message."""
    if status != 0:
        msg = lib().sk_last_error().decode("utf-8", "replace")
        raise _BY_STATUS.get(status, SuperkernelError)(msg)
