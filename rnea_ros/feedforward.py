"""The effort law of the inverse_dynamics node, term by term (no ROS).

τ = g(q) + c(q, q̇) + M(q) q̈_des + τ_friction(q̇) + Jᵀ F + Kp (q_des − q) + Kd (q̇_des − q̇)

The model terms are evaluated at the measured or the desired state (`state_source`); the
feedback term always compares desired with measured. All arrays in `model.joint_names` order,
efforts in N m or N. The total is clamped to the effort limit × scale.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .dynamics import GRAVITY, Data, gravity_torques, rnea
from .friction import Friction, friction_torques
from .model import RobotModel

TERMS = ("gravity", "coriolis", "inertia", "friction", "wrench", "feedback")
_ZERO_GRAVITY = (0.0, 0.0, 0.0)


@dataclass(frozen=True)
class EffortLaw:
    """What the node compensates, with which gains; immutable, swapped whole on a change."""

    gravity: tuple[float, float, float] = GRAVITY  # root frame, m/s²
    compensate: frozenset[str] = frozenset(("gravity", "coriolis", "inertia", "friction", "wrench"))
    kp: np.ndarray | float = 0.0  # N m/rad (or N/m), per joint or one value for all
    kd: np.ndarray | float = 0.0  # N m s/rad (or N s/m)
    use_desired_state: bool = False  # evaluate model terms at the desired state
    effort_limit_scale: float = 1.0


@dataclass
class Efforts:
    """One command: each term and the clamped total, `model.joint_names` order."""

    terms: dict[str, np.ndarray]
    total: np.ndarray
    clamped: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))


def compute_efforts(
    model: RobotModel,
    friction: Friction,
    law: EffortLaw,
    q: np.ndarray,
    qd: np.ndarray,
    desired: tuple[np.ndarray, np.ndarray, np.ndarray],
    wrenches: dict[str, np.ndarray] | None = None,
    data: Data | None = None,
) -> Efforts:
    """Every term of the law for the measured (q, q̇) and desired (q, q̇, q̈); raises ValueError
    (naming the input) on non-finite input instead of returning a non-finite command."""
    q_des, qd_des, qdd_des = desired
    qx, qdx = (q_des, qd_des) if law.use_desired_state else (q, qd)
    zero = np.zeros(model.nv)
    on = law.compensate
    terms = {
        "gravity": gravity_torques(model, qx, gravity=law.gravity, data=data) if "gravity" in on else zero,
        "coriolis": rnea(model, qx, qdx, zero, gravity=_ZERO_GRAVITY, data=data)
        if "coriolis" in on
        else zero,
        "inertia": rnea(model, qx, zero, qdd_des, gravity=_ZERO_GRAVITY, data=data)
        if "inertia" in on
        else zero,
        "friction": friction_torques(friction, qdx) if "friction" in on else zero,
        "wrench": rnea(model, qx, zero, zero, gravity=_ZERO_GRAVITY, wrenches=wrenches, data=data)
        if wrenches and "wrench" in on
        else zero,
        "feedback": law.kp * (q_des - q) + law.kd * (qd_des - qd),
    }
    total = sum(terms.values())
    if not np.all(np.isfinite(total)):
        raise ValueError("command is not finite")
    limit = model.effort_limit * law.effort_limit_scale
    clamped = np.abs(total) > limit
    return Efforts(terms, np.clip(total, -limit, limit), clamped)
