"""The kernels Python calls, each with the one signature it is compiled for, and
`compile_kernels`, the one warm-up, to compile them all up front.

Nothing compiles at import or at model build. A kernel compiles (or loads from numba's disk
cache, `jit.PackageCache`) the first time it is needed: lazily, on the first call of a function that
uses it, unless `compile_kernels()` ran before. A cold cache costs seconds per kernel, a warm one
a few milliseconds; a process that must not stall in its first control cycle (the node) calls
`compile_kernels()` at start-up.

The dynamics (`rnea_ros.algorithms.dynamics`) and the momentum observer
(`rnea_ros.estimation`) call the compiled entry point of the declared signature, skipping numba's
per-call type dispatch; they check the argument types first, so no other signature is ever
compiled (`Kernel.signatures`). The effort law (`rnea_ros.control.effort_law`) and the runaway
guard call the kernel itself (numba's dispatch, which finds the declared signature for the types
they pass). Without numba (`RNEA_ROS_NO_NUMBA=1` or not installed) a Kernel calls the plain-Python
function and compiles nothing.

The one-state fast paths of the dynamics call the same kernels through `pointer_kernels` first
(C-checked vectors, no unboxing), where that extension is built.

This module imports only `kernels`, `jit` and `pointer_kernels`: nothing above `rnea_ros.compiled`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, NamedTuple

from rnea_ros.compiled.jit import HAVE_NUMBA
from rnea_ros.compiled.kernels.contact_terms import floating_contact_kernel, rows_well_conditioned_kernel
from rnea_ros.compiled.kernels.cycle import cycle_kernel
from rnea_ros.compiled.kernels.fixed_root import (
    gravity_batch_kernel,
    gravity_kernel,
    gravity_packed_gravity_kernel,
    gravity_packed_kernel,
    mass_matrix_batch_kernel,
    mass_matrix_kernel,
    mass_matrix_packed_kernel,
    rnea_batch_kernel,
    rnea_kernel,
    rnea_packed_gravity_kernel,
    rnea_packed_kernel,
    rnea_packed_wrench_kernel,
    rnea_wrench_kernel,
)
from rnea_ros.compiled.kernels.floating_root import (
    floating_gravity_kernel,
    floating_gravity_packed_kernel,
    floating_mass_matrix_kernel,
    floating_mass_matrix_packed_kernel,
    floating_rnea_kernel,
    floating_rnea_packed_kernel,
)
from rnea_ros.compiled.kernels.momentum_observer import (
    damped_wrench_kernel,
    link_jacobian_kernel,
    momentum_kernel,
    observer_step_kernel,
)
from rnea_ros.compiled.kernels.passes import joint_transforms, root_rotations
from rnea_ros.compiled.pointer_kernels import POINTER_KERNELS

F: Any
FA: Any
F2: Any
FA2: Any
I64: Any
F64: Any
if HAVE_NUMBA:
    from numba import types as _t

    F = _t.float64[::1]  # C-contiguous float64 vector: tree, gravity, workspace, results
    FA = _t.float64[:]  # float64 vector of any stride: the caller's q, qd, qdd
    F2 = _t.float64[:, ::1]  # C-contiguous (N, n) float64: batches, tables
    FA2 = _t.float64[:, :]  # (N, n) float64 of any strides: a transposed view
    I64 = _t.int64[::1]
    F64 = _t.float64  # a Python float
else:  # pragma: no cover - exercised with RNEA_ROS_NO_NUMBA=1
    F = FA = F2 = FA2 = I64 = F64 = None


class Kernel:
    """One kernel and its signature; `call(*args)` runs it (compiling first if it has not been).

    Arguments must have exactly the declared types (float64 arrays of the declared ndim; any
    stride where FA): the compiled entry point does not check them.
    """

    __slots__ = ("call", "dispatcher", "name", "ready", "signature")

    def __init__(self, dispatcher: Any, *signature: Any) -> None:
        self.dispatcher = dispatcher
        self.signature = signature
        self.name: str = getattr(dispatcher, "__name__", "kernel")
        self.call: Callable[..., int] = self._compile_and_call if HAVE_NUMBA else dispatcher
        self.ready = not HAVE_NUMBA  # whether `call` is the entry point (or the Python function)

    def _compile_and_call(self, *args: Any) -> int:
        self.compile()
        return self.call(*args)

    def compile(self) -> bool:
        """Compile the signature, or load it from numba's disk cache; True if it was compiled
        (a cache miss), False if loaded, already done, or numba is not in use."""
        if self.ready:
            return False
        before = sum(self.dispatcher.stats.cache_misses.values())
        self.call = self.dispatcher.compile(self.signature)
        self.ready = True
        return sum(self.dispatcher.stats.cache_misses.values()) > before

    @property
    def signatures(self) -> list:
        """The signatures numba holds for this kernel (one once compiled; empty without numba)."""
        return list(self.dispatcher.signatures) if HAVE_NUMBA else []


# The kernels that `dynamics` calls. FA only where the caller's arrays arrive unconverted (the fast
# paths); the checked path hands over C-contiguous copies. The packed kernels run the plain ones
# with the same types: those compile once for both.
RNEA_PACKED = Kernel(rnea_packed_kernel, F, FA, FA, FA, F)
GRAVITY_PACKED = Kernel(gravity_packed_kernel, F, FA, F)
RNEA_PACKED_GRAVITY = Kernel(rnea_packed_gravity_kernel, F, FA, FA, FA, FA, F)
GRAVITY_PACKED_GRAVITY = Kernel(gravity_packed_gravity_kernel, F, FA, FA, F)
RNEA_PACKED_WRENCH = Kernel(rnea_packed_wrench_kernel, F, FA, FA, FA, I64, F, F)
MASS_MATRIX_PACKED = Kernel(mass_matrix_packed_kernel, F, FA, F2)
RNEA = Kernel(rnea_kernel, F, FA, FA, FA, F, F, F)
RNEA_WRENCH = Kernel(rnea_wrench_kernel, F, F, F, F, F, I64, F, F, F)
RNEA_BATCH = Kernel(rnea_batch_kernel, F, F2, F2, F2, F, I64, F, F, F2)
GRAVITY_TORQUES = Kernel(gravity_kernel, F, FA, F, F, F)
GRAVITY_BATCH = Kernel(gravity_batch_kernel, F, F2, F, F, F2)
MASS_MATRIX = Kernel(mass_matrix_kernel, F, FA, F, F, F)
MASS_MATRIX_BATCH = Kernel(mass_matrix_batch_kernel, F, F2, F, F, F2)
JOINT_TRANSFORMS = Kernel(joint_transforms, F, FA, F)
ROOT_ROTATIONS = Kernel(root_rotations, F, F)
# The effort law (`effort_law.compute_efforts`) calls this kernel's dispatcher with these types,
# which then finds the compiled signature.
CYCLE = Kernel(cycle_kernel, F, F, F, F, F, F, I64, I64, F, F2, F, F2)
# The momentum observer's (`estimation.momentum`, `estimation.observer`; the node's contact cycle).
MOMENTUM = Kernel(momentum_kernel, F, FA, FA, F, F, F, F)
LINK_JACOBIAN = Kernel(link_jacobian_kernel, F, FA, F, F, F, F, F)
DAMPED_WRENCH = Kernel(damped_wrench_kernel, F, FA, F, F, F)
OBSERVER_STEP = Kernel(observer_step_kernel, F, FA, FA, FA, F2, F, F)
# floating and planar roots (tree, root record, ...)
FLOATING_RNEA = Kernel(floating_rnea_kernel, F, F, FA, FA, FA, F, I64, F, F, FA)
FLOATING_GRAVITY = Kernel(floating_gravity_kernel, F, F, FA, F, F, FA)
FLOATING_MASS_MATRIX = Kernel(floating_mass_matrix_kernel, F, F, FA, F, F, F)
FLOATING_RNEA_PACKED = Kernel(floating_rnea_packed_kernel, F, FA, FA, FA, F)
FLOATING_GRAVITY_PACKED = Kernel(floating_gravity_packed_kernel, F, FA, F)
FLOATING_MASS_MATRIX_PACKED = Kernel(floating_mass_matrix_packed_kernel, F, FA, F2)
# contact-consistent inverse dynamics on a floating root (`algorithms.contact_dynamics`)
FLOATING_CONTACT = Kernel(floating_contact_kernel, F, FA, FA, F, F, F2, F, F2, F2)
ROWS_WELL_CONDITIONED = Kernel(rows_well_conditioned_kernel, FA2, F64)
KERNELS = (
    RNEA_PACKED,
    GRAVITY_PACKED,
    RNEA_PACKED_GRAVITY,
    GRAVITY_PACKED_GRAVITY,
    RNEA_PACKED_WRENCH,
    MASS_MATRIX_PACKED,
    RNEA,
    RNEA_WRENCH,
    RNEA_BATCH,
    GRAVITY_TORQUES,
    GRAVITY_BATCH,
    MASS_MATRIX,
    MASS_MATRIX_BATCH,
    JOINT_TRANSFORMS,
    ROOT_ROTATIONS,
    CYCLE,
    MOMENTUM,
    LINK_JACOBIAN,
    DAMPED_WRENCH,
    OBSERVER_STEP,
    FLOATING_RNEA,
    FLOATING_GRAVITY,
    FLOATING_MASS_MATRIX,
    FLOATING_RNEA_PACKED,
    FLOATING_GRAVITY_PACKED,
    FLOATING_MASS_MATRIX_PACKED,
    FLOATING_CONTACT,
    ROWS_WELL_CONDITIONED,
)


class Compilation(NamedTuple):
    """What `compile_kernels` did: seconds it took, whether numba's disk cache was cold (anything
    had to be compiled), and whether numba is in use at all."""

    seconds: float
    cold_cache: bool
    numba: bool


def compile_kernels() -> Compilation:
    """Compile (or load from numba's disk cache) every kernel Python calls (KERNELS: the dynamics,
    the effort law with its friction path and feedback bound, the momentum observer; and the
    pointer kernels, POINTER_KERNELS), so that no later call compiles. Idempotent and thread-safe;
    without numba it does nothing. Not needed for correct results: without it each kernel compiles
    on first use."""
    start = time.perf_counter()
    cold = False
    for kernel in KERNELS:
        cold |= kernel.compile()
    for pointer in POINTER_KERNELS:  # after KERNELS: they reuse those compiled specializations
        cold |= pointer.compile()
    return Compilation(time.perf_counter() - start, cold, HAVE_NUMBA)
