"""Geared motors (seed 004, Modern Robotics §8.9): per joint a gear ratio G, a rotor inertia and a
torque constant; the dynamics with the rotors as bodies, and the conversions between joint
torque, motor torque and motor current.

Rotor model: the rotor of joint j is a massless (its mass belongs to the link it sits on),
axisymmetric body on j's parent link, coaxial with joint j at its origin, turning at G_j q̇_j
relative to that link (prismatic joints: a screw or belt, the rotor turning about the joint axis
at G_j q̇_j rad/s per m/s). Its angular velocity in the world is the parent link's plus G_j q̇_j
about the axis, so it adds G_j² I_rotor to M_jj (the armature), G_j I_rotor (z_k · z_j) to M_kj for
every joint k before j (the coupling scales with G, not G²), its transverse and axial inertia to
the joints before j, and gyroscopic velocity-product terms. The armature-only model
(`armature_model`) keeps just G_j² I_rotor on the diagonal; `geared_inverse_dynamics` is the full form.

Ideal gearbox: τ_motor = τ_joint / G, current = τ_motor / K_t, where τ_joint is the full-form
effort at the joint (it includes what accelerates the rotor). Joints with G = 0 have no rotor
and no conversion (τ_motor and current are then reported as the joint torque).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from rnea_ros.algorithms.dynamics import gravity_torques, joint_vector
from rnea_ros.algorithms.lagrangian import christoffel, mass_matrix_partials
from rnea_ros.errors import RneaError
from rnea_ros.model.robot_model import GRAVITY, RobotModel

__all__ = ["EFFORT_UNITS", "Gearing", "armature_model", "effort_unit_factors", "geared_inverse_dynamics"]

EFFORT_UNITS = ("joint_torque", "motor_torque", "current")  # what a drive is commanded in


def _values(value: npt.ArrayLike, n: int, name: str) -> np.ndarray:
    a = (
        np.broadcast_to(np.asarray(value, dtype=float), (n,)).copy()
        if np.ndim(value) == 0
        else np.asarray(value, dtype=float)
    )
    if a.shape != (n,) or not np.all(np.isfinite(a)) or np.any(a < 0):
        raise RneaError(f"gearing.{name} must be one value or {n} values, finite and >= 0, got {value!r}")
    a.flags.writeable = False
    return a


@dataclass(frozen=True)
class Gearing:
    """Per joint (model order): gear ratio G (joint speed × G = motor speed; 0 = no rotor), rotor
    inertia about its axis (kg m², motor side), transverse rotor inertia (kg m², default half the
    axial one: a thin disc), torque constant K_t (N m/A, motor side; 0 = no current conversion)."""

    ratio: np.ndarray
    rotor_inertia: np.ndarray
    torque_constant: np.ndarray
    rotor_transverse: np.ndarray | None = None

    def __post_init__(self) -> None:
        n = np.size(self.ratio)
        object.__setattr__(self, "ratio", _values(self.ratio, n, "ratio"))
        object.__setattr__(self, "rotor_inertia", _values(self.rotor_inertia, n, "rotor_inertia"))
        object.__setattr__(self, "torque_constant", _values(self.torque_constant, n, "torque_constant"))
        transverse = 0.5 * self.rotor_inertia if self.rotor_transverse is None else self.rotor_transverse
        object.__setattr__(self, "rotor_transverse", _values(transverse, n, "rotor_transverse"))

    @property
    def armature(self) -> np.ndarray:
        """G² I_rotor per joint: the reflected rotor inertia (kg m²)."""
        return self.ratio**2 * self.rotor_inertia

    def _ratio(self) -> np.ndarray:
        return np.where(self.ratio > 0, self.ratio, 1.0)

    def _kt(self) -> np.ndarray:
        return np.where(self.torque_constant > 0, self.torque_constant, 1.0)

    def motor_torque(self, joint_torque: npt.ArrayLike) -> np.ndarray:
        """τ_motor = τ_joint / G (N m), per joint (last axis)."""
        return np.asarray(joint_torque, dtype=float) / self._ratio()

    def joint_torque(self, motor_torque: npt.ArrayLike) -> np.ndarray:
        """τ_joint = G τ_motor."""
        return np.asarray(motor_torque, dtype=float) * self._ratio()

    def current(self, joint_torque: npt.ArrayLike) -> np.ndarray:
        """Motor current (A) for a joint torque: τ_joint / (G K_t)."""
        return self.motor_torque(joint_torque) / self._kt()

    def joint_torque_from_current(self, current: npt.ArrayLike) -> np.ndarray:
        """Joint torque for a motor current: G K_t i."""
        return self.joint_torque(np.asarray(current, dtype=float) * self._kt())


def effort_unit_factors(
    units: Sequence[str], ratio: npt.ArrayLike, torque_constant: npt.ArrayLike
) -> np.ndarray:
    """Per joint, the factor f with (effort in the joint's unit) = f × joint torque: 1 for
    joint_torque, 1/G for motor_torque, 1/(G K_t) for current, from `Gearing`'s conversions (so
    G or K_t = 0 means no conversion there); ratio and torque_constant one value or one per joint.
    The joint torque of an effort e given in that unit is e / f."""
    n = len(units)
    unknown = [u for u in units if u not in EFFORT_UNITS]
    if unknown:
        raise RneaError(f"effort unit '{unknown[0]}' is not one of {', '.join(EFFORT_UNITS)}")
    per_joint = [np.broadcast_to(np.asarray(v, dtype=float), (n,)) for v in (ratio, torque_constant)]
    gearing = Gearing(per_joint[0], np.zeros(n), per_joint[1])
    ones = np.ones(n)
    by_unit = {
        "joint_torque": ones,
        "motor_torque": gearing.motor_torque(ones),
        "current": gearing.current(ones),
    }
    return np.array([by_unit[u][i] for i, u in enumerate(units)])


def _check(model: RobotModel, gearing: Gearing) -> None:
    if gearing.ratio.size != model.nv:
        raise RneaError(
            f"gearing has {gearing.ratio.size} joints, the model {model.nv} ({', '.join(model.joint_names)})"
        )


def armature_model(model: RobotModel, gearing: Gearing) -> RobotModel:
    """The model with G² I_rotor added to its armature: the usual diagonal approximation."""
    _check(model, gearing)
    return model.with_armature(model.armature + gearing.armature)


def geared_inverse_dynamics(
    model: RobotModel,
    gearing: Gearing,
    q: npt.ArrayLike,
    qd: npt.ArrayLike,
    qdd: npt.ArrayLike,
    *,
    gravity: npt.ArrayLike = GRAVITY,
) -> np.ndarray:
    """Joint efforts of the full geared form at one state: τ = M q̈ + C q̇ + g with the rotors as
    bodies (see the module docstring); τ / G is the motor torque. O(n³) numpy: an analysis tool."""
    _check(model, gearing)
    qd = joint_vector(model, qd)
    qdd = joint_vector(model, qdd)
    mass, _ = mass_matrix_partials(model, q, gearing)
    c = christoffel(model, q, gearing) @ qd @ qd
    return mass @ qdd + c + gravity_torques(model, joint_vector(model, q), gravity=gravity)
