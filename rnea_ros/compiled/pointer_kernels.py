"""The packed kernels of the one-state fast paths as C functions on raw pointers, called through the
C extension `_pointer_call`: the cheapest way into compiled code from Python here.

A numba entry point unboxes each array argument into a reference-counted structure (an allocation
per array) and a Python wrapper must check the argument types first; `_pointer_call.Caller` checks
each vector in C (exactly a 1-D, C-contiguous, aligned, native-order numpy array of the expected
dtype; the result writeable) and calls a numba `cfunc` with two C arrays, the vectors' data
pointers and their lengths. The cfunc views them as arrays (`carray`) and runs the same compiled
kernel the entry point runs (the same specialization: q, q̇, q̈ and gravity as arrays of any
layout); the kernel checks sizes and finiteness as always. The figures: docs/performance.md.

`PointerKernel.call(*vectors)` returns the kernel's status, or None when a vector does not qualify
(a list, float32, 2-D, strided, read-only result...): the caller then takes its usual path, which
converts or names the argument. A tuple of at most 6 numbers is taken as a vector (a gravity
tuple: no array to build per call), never as the result. Given the result's length (an int)
instead of the result vector, it returns a new result vector when the status is OK, else None.

`AVAILABLE` is False without numba, without the built extension (`setup.py` builds it where a C
compiler and numpy's headers are found), or with RNEA_ROS_NO_POINTER_CALL=1; the callers then use
the entry points (`entry_points.Kernel`).
Compilation is lazy as for every kernel: on first use, or in `entry_points.compile_kernels()`.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from typing import Any

import numpy as np

from rnea_ros.compiled.jit import HAVE_NUMBA, cfunc, njit_inline, numba
from rnea_ros.compiled.kernels.fixed_root import (
    gravity_packed_gravity_kernel,
    gravity_packed_kernel,
    rnea_packed_gravity_kernel,
    rnea_packed_kernel,
    rnea_packed_wrench_kernel,
)
from rnea_ros.compiled.kernels.floating_root import (
    floating_gravity_packed_kernel,
    floating_rnea_packed_kernel,
)
from rnea_ros.compiled.kernels.layout import BAD_SIZE, WR_FORCE

Caller: Any
try:  # by name: import-linter, which cannot see into a C extension, took the import for the package's
    Caller = importlib.import_module("rnea_ros.compiled._pointer_call").Caller
except ImportError:  # not built (no C compiler or numpy headers at install): the entry points serve
    Caller = None

AVAILABLE = HAVE_NUMBA and Caller is not None and os.environ.get("RNEA_ROS_NO_POINTER_CALL", "") in ("", "0")

carray: Any
if HAVE_NUMBA:
    from numba import carray
else:  # pragma: no cover - exercised with RNEA_ROS_NO_NUMBA=1 (nothing here is then compiled)
    carray = None


# Each wrapper takes the vectors' data pointers `p` and lengths `n` (two C arrays, one entry per
# vector, as `_pointer_call` passes them) and views vector i as an array: `_vector` (float64,
# C-contiguous), `_any` (the caller's q, q̇, q̈ and gravity: an array of any layout, the type the
# kernel is compiled for, so that numba reuses that compiled code rather than compiling it again
# for C-contiguous arrays), `_int64`.
@njit_inline
def _vector(p, n, i):
    return carray(p[i], n[i], np.float64)


@njit_inline
def _any(p, n, i):
    return carray(p[i], n[i], np.float64)[::1]


@njit_inline
def _int64(p, n, i):
    return carray(p[i], n[i], np.int64)


def _rnea_packed(p, n):
    return rnea_packed_kernel(_vector(p, n, 0), _any(p, n, 1), _any(p, n, 2), _any(p, n, 3), _vector(p, n, 4))


def _gravity_packed(p, n):
    return gravity_packed_kernel(_vector(p, n, 0), _any(p, n, 1), _vector(p, n, 2))


def _rnea_packed_gravity(p, n):
    q, qd, qdd, gravity = _any(p, n, 1), _any(p, n, 2), _any(p, n, 3), _any(p, n, 4)
    return rnea_packed_gravity_kernel(_vector(p, n, 0), q, qd, qdd, gravity, _vector(p, n, 5))


def _gravity_packed_gravity(p, n):
    return gravity_packed_gravity_kernel(_vector(p, n, 0), _any(p, n, 1), _any(p, n, 2), _vector(p, n, 3))


def _rnea_packed_wrench(p, n):
    q, qd, qdd = _any(p, n, 1), _any(p, n, 2), _any(p, n, 3)
    wrench_body, wrench_data = _int64(p, n, 4), _vector(p, n, 5)
    return rnea_packed_wrench_kernel(_vector(p, n, 0), q, qd, qdd, wrench_body, wrench_data, _vector(p, n, 6))


def _rnea_packed_wrench1(p, n):
    """_rnea_packed_wrench with one link's wrench (vector 6: 6 numbers, force then moment) copied
    into the first slot of the wrench record (vector 5) here rather than in Python."""
    wrench = _vector(p, n, 6)
    wrench_data = _vector(p, n, 5)
    if len(wrench) != 6 or len(wrench_data) < WR_FORCE + 6:
        return BAD_SIZE
    for i in range(6):
        wrench_data[WR_FORCE + i] = wrench[i]
    q, qd, qdd = _any(p, n, 1), _any(p, n, 2), _any(p, n, 3)
    return rnea_packed_wrench_kernel(
        _vector(p, n, 0), q, qd, qdd, _int64(p, n, 4), wrench_data, _vector(p, n, 7)
    )


def _floating_rnea_packed(p, n):
    return floating_rnea_packed_kernel(
        _vector(p, n, 0), _any(p, n, 1), _any(p, n, 2), _any(p, n, 3), _vector(p, n, 4)
    )


def _floating_gravity_packed(p, n):
    return floating_gravity_packed_kernel(_vector(p, n, 0), _any(p, n, 1), _vector(p, n, 2))


class PointerKernel:
    """One wrapper above, compiled as a cfunc on first use; `call(*vectors)` → status or None
    (`call(*vectors, n)` → a new result of n, or None)."""

    __slots__ = ("call", "cfunc", "error", "int64_mask", "name", "python", "ready", "vectors")

    def __init__(self, python: Callable[..., int], vectors: int, int64_at: tuple[int, ...] = ()) -> None:
        self.python = python
        self.name = python.__name__.lstrip("_")
        self.vectors = vectors
        self.int64_mask = sum(1 << i for i in int64_at)
        self.ready = False
        self.cfunc: Any = None  # kept: its address is valid while it lives
        self.error = ""  # why the cfunc could not be compiled ("": it was, or was not tried)
        self.call: Callable[..., Any] = self._compile_and_call

    def _compile_and_call(self, *vectors: Any) -> Any:
        self.compile()
        return self.call(*vectors)

    def compile(self) -> bool:
        """Compile the cfunc (or load it from numba's disk cache); True if compiled. Without
        `AVAILABLE`, or when numba fails to compile it (`error` says why), `call` answers None
        (the caller's usual path)."""
        if self.ready:
            return False
        if not AVAILABLE:
            self.call = _none
            self.ready = True
            return False
        types = numba.types
        try:  # int64 (void **p, int64 *n): the vectors' data pointers and lengths
            self.cfunc = cfunc(
                types.int64(types.CPointer(types.voidptr), types.CPointer(types.int64)), self.python
            )
        except Exception as exc:  # noqa: BLE001 - a numba that cannot compile it: the entry points serve
            self.error = f"{type(exc).__name__}: {exc}"
            self.call = _none
            self.ready = True
            return False
        self.call = Caller(self.cfunc.address, self.int64_mask, self.vectors)
        self.ready = True
        return self.cfunc.cache_hits == 0


def _none(*_: Any) -> None:
    return None


RNEA_PACKED = PointerKernel(_rnea_packed, 5)
GRAVITY_PACKED = PointerKernel(_gravity_packed, 3)
RNEA_PACKED_GRAVITY = PointerKernel(_rnea_packed_gravity, 6)
GRAVITY_PACKED_GRAVITY = PointerKernel(_gravity_packed_gravity, 4)
RNEA_PACKED_WRENCH = PointerKernel(_rnea_packed_wrench, 7, int64_at=(4,))
RNEA_PACKED_WRENCH1 = PointerKernel(_rnea_packed_wrench1, 8, int64_at=(4,))
FLOATING_RNEA_PACKED = PointerKernel(_floating_rnea_packed, 5)
FLOATING_GRAVITY_PACKED = PointerKernel(_floating_gravity_packed, 3)
POINTER_KERNELS = (
    RNEA_PACKED,
    GRAVITY_PACKED,
    RNEA_PACKED_GRAVITY,
    GRAVITY_PACKED_GRAVITY,
    RNEA_PACKED_WRENCH,
    RNEA_PACKED_WRENCH1,
    FLOATING_RNEA_PACKED,
    FLOATING_GRAVITY_PACKED,
)
