"""Joint friction: viscous + Coulomb with a smooth sign, optionally with a Stribeck peak.

τ_f(q̇) = F_v q̇ + (F_c + (F_s − F_c) exp(−(q̇ / v_s)²)) · tanh(q̇ / v_ε)

per joint, in N m (revolute) or N (prismatic), q̇ in rad/s or m/s. tanh with a smoothing velocity
v_ε replaces sign(q̇) so the command does not chatter around zero velocity. With F_s = F_c
(the default) the Stribeck term vanishes. The effort that compensates friction is +τ_f.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rnea_ros.errors import RneaError
from rnea_ros.model.robot_model import RobotModel

SMOOTHING_VELOCITY = 0.01  # v_ε, rad/s or m/s: the default of Friction, the nodes and identification


def _per_joint(value, n: int, name: str, positive: bool = False) -> np.ndarray:
    a = (
        np.broadcast_to(np.asarray(value, dtype=float), (n,)).copy()
        if np.ndim(value) == 0
        else np.asarray(value, dtype=float)
    )
    if a.shape != (n,):
        raise RneaError(f"friction.{name} must have {n} values, got {a.size}")
    if not np.all(np.isfinite(a)) or np.any(a < 0) or (positive and np.any(a <= 0)):
        raise RneaError(f"friction.{name} must be finite and {'> 0' if positive else '>= 0'}")
    a.flags.writeable = False
    return a


@dataclass(frozen=True)
class Friction:
    """Friction parameters per joint (`model.joint_names` order); validated on construction."""

    viscous: np.ndarray  # F_v, N m s/rad or N s/m
    coulomb: np.ndarray  # F_c, N m or N
    smoothing_velocity: float = SMOOTHING_VELOCITY  # v_ε, rad/s or m/s
    static: np.ndarray | None = None  # F_s ≥ F_c (Stribeck peak at rest); None = coulomb
    stribeck_velocity: np.ndarray | None = None  # v_s, rad/s or m/s; None = 0.1

    def __post_init__(self) -> None:
        n = np.size(self.viscous)
        object.__setattr__(self, "viscous", _per_joint(self.viscous, n, "viscous"))
        object.__setattr__(self, "coulomb", _per_joint(self.coulomb, n, "coulomb"))
        static = self.coulomb if self.static is None else _per_joint(self.static, n, "static")
        object.__setattr__(self, "static", static)
        vs = 0.1 if self.stribeck_velocity is None else self.stribeck_velocity
        object.__setattr__(self, "stribeck_velocity", _per_joint(vs, n, "stribeck_velocity", True))
        v_eps = float(self.smoothing_velocity)
        if not np.isfinite(v_eps) or v_eps <= 0:
            raise RneaError("friction.smoothing_velocity must be finite and > 0")
        object.__setattr__(self, "smoothing_velocity", v_eps)

    @classmethod
    def from_model(cls, model: RobotModel, smoothing_velocity: float = SMOOTHING_VELOCITY) -> Friction:
        """Viscous from URDF <dynamics damping>, Coulomb from <dynamics friction>."""
        return cls(model.damping, model.coulomb, smoothing_velocity)


def friction_torques(friction: Friction, qd) -> np.ndarray:
    """Effort that compensates friction at joint velocity qd, shape (n,) or (N, n)."""
    qd = np.asarray(qd, dtype=float)
    if qd.shape[-1:] != friction.viscous.shape:
        raise RneaError(f"qd must have {friction.viscous.size} values per state, got {qd.shape}")
    if not np.all(np.isfinite(qd)):
        raise RneaError("qd contains NaN or Inf")
    level = friction.coulomb + (friction.static - friction.coulomb) * np.exp(
        -np.square(qd / friction.stribeck_velocity)
    )
    return friction.viscous * qd + level * np.tanh(qd / friction.smoothing_velocity)
