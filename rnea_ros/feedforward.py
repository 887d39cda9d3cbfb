"""The effort law of the inverse_dynamics node, term by term (no ROS).

τ = g(q) + c(q, q̇) + M(q) q̈_des + τ_friction(q̇) + Jᵀ F + Kp (q_des − q) + Kd (q̇_des − q̇)

The model terms are evaluated at the measured or the desired state (`state_source`); the
feedback term always compares desired with measured. All arrays in `model.joint_names` order,
efforts in N m or N. The total is clamped to the effort limit × scale. One compiled kernel
(`kernels.effort_kernel`) computes every term of a cycle into a preallocated table.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from . import kernels as k
from .dynamics import GRAVITY, Data, raise_not_finite, wrench_arrays
from .errors import RneaError
from .friction import Friction
from .model import RobotModel

TERMS = ("gravity", "coriolis", "inertia", "friction", "wrench", "feedback")
COMPENSABLE = TERMS[:5]


@dataclass(frozen=True)
class EffortLaw:
    """What the node compensates, with which gains; immutable, swapped whole on a change."""

    gravity: tuple[float, ...] = GRAVITY  # root frame, m/s², 3 values
    compensate: frozenset[str] = frozenset(COMPENSABLE)
    kp: np.ndarray | float = 0.0  # N m/rad (or N/m), per joint or one value for all
    kd: np.ndarray | float = 0.0  # N m s/rad (or N s/m)
    use_desired_state: bool = False  # evaluate model terms at the desired state
    effort_limit_scale: float = 1.0


class Efforts:
    """A model, its friction and an effort law packed for `compute_efforts`, with the table each
    call overwrites (like Pinocchio's Data: one per thread, results valid until the next call)."""

    def __init__(self, model: RobotModel, friction: Friction, law: EffortLaw) -> None:
        n = model.nv
        if friction.viscous.shape != (n,):
            raise RneaError(f"friction must have {n} joints, got {friction.viscous.size}")
        self.model = model
        self._tree = model.kernel_tree()
        self._ws = np.asarray(Data(model).ws, dtype=float)
        self._gravity = np.array([*np.asarray(law.gravity, dtype=float).reshape(3), 0.0, 0.0, 0.0])
        switches = [t in law.compensate for t in COMPENSABLE] + [law.use_desired_state]
        self._switches = np.array(switches, dtype=np.int64)
        self._law = np.empty((k.LAW_ROWS, n))
        self._law[k.LAW_VISCOUS] = friction.viscous
        self._law[k.LAW_COULOMB] = friction.coulomb
        self._law[k.LAW_STATIC] = friction.static
        self._law[k.LAW_STRIBECK] = friction.stribeck_velocity
        self._law[k.LAW_SMOOTHING] = friction.smoothing_velocity
        self._law[k.LAW_KP] = law.kp
        self._law[k.LAW_KD] = law.kd
        self._law[k.LAW_LIMIT] = model.effort_limit * law.effort_limit_scale
        self.table = np.zeros((k.OUT_ROWS, n))

    @property
    def total(self) -> np.ndarray:
        """The clamped command of the last call (view of `table`)."""
        return self.table[k.OUT_TOTAL]

    @property
    def clamped(self) -> np.ndarray:
        """Where the last command was clamped (bool copy)."""
        return self.table[k.OUT_CLAMPED] != 0.0

    @property
    def terms(self) -> dict[str, np.ndarray]:
        """Each term of the last call by name (views of `table`)."""
        return {term: self.table[row] for row, term in enumerate(TERMS)}


def compute_efforts(
    efforts: Efforts,
    q: np.ndarray,
    qd: np.ndarray,
    desired: tuple[np.ndarray, np.ndarray, np.ndarray],
    wrenches: Mapping[str, np.ndarray] | None = None,
) -> Efforts:
    """Every term of the law for the measured (q, q̇) and desired (q, q̇, q̈) into `efforts.table`;
    raises ValueError (naming the input) on non-finite input instead of returning a non-finite
    command. q, q̇ and the desired arrays: float64, (n,)."""
    q_des, qd_des, qdd_des = desired
    wb, wd = wrench_arrays(efforts.model, wrenches)
    args = (q, qd, q_des, qd_des, qdd_des, efforts._gravity, efforts._switches, efforts._law, wb, wd)
    try:
        status = k.effort_kernel(efforts._tree, *args, efforts._ws, efforts.table)
    except (ValueError, OverflowError):  # pure-Python fallback only: math.cos(inf) and the like
        status = k.NOT_FINITE
    if status == k.BAD_SIZE:
        raise RneaError(f"q, qd and the desired state must have {efforts.model.nv} values each")
    if status != k.OK:
        named = {"q": q, "qd": qd, "desired q": q_des, "desired qd": qd_des, "desired qdd": qdd_des}
        raise_not_finite(named)
    return efforts
