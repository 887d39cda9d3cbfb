"""Plausible joint values (no ROS): the bounds the nodes check every joint input against
(joint_states positions and velocities, trajectory points and times) before taking it for a
state or a target, so that an absurd but finite number (1e3 … 1e308) is refused with its joint
and bound named rather than turned into saturated commands. Stated physical bounds, wider than a
URDF's limits on purpose (a real arm's readings pass a little beyond them, and a URDF's limits
are not always right):

- measured position (joint_states): a revolute or continuous joint |q| ≤ MAX_TURNING rad (its
  angle only enters through sin and cos; beyond, a double's spacing exceeds 1e-7 rad and the
  angle means nothing); a prismatic joint within its URDF range widened by the range's width +
  1 m on each side, or |q| ≤ MAX_TRAVEL m without limits (its position is a lever arm: 1e6 m
  saturates every joint);
- target position (trajectory points): a joint with URDF limits within its range widened by the
  range's width + 2π rad (revolute) or + 1 m (prismatic) on each side: a target further away is
  no target of this joint (a joint driven there first runs through a join that saturates every
  command); a continuous joint or one without limits as measured positions;
- velocity: |q̇| ≤ MAX_VELOCITY rad/s or m/s (about 10,000 rpm at the joint: beyond any geared
  joint or wheel);
- acceleration (trajectory points): |q̈| ≤ MAX_ACCELERATION rad/s² or m/s²;
- time_from_start (trajectory points): ≤ MAX_DURATION s;
- a trajectory's spline between its points (`check_rates`): the same velocity and acceleration
  bounds (bounded from its coefficients: points 1e6 rad apart within a second are refused even
  without velocities).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rnea_ros.errors import RneaError
from rnea_ros.model.robot_model import RobotModel
from rnea_ros.trajectory.sampling import TrajectorySampler

MAX_TURNING = 1e9  # rad: |q| of a revolute or continuous joint
MAX_TRAVEL = 1e3  # m: |q| of a prismatic joint without limits
PRISMATIC_MARGIN = 1.0  # m: beyond a prismatic joint's range, added to the range's width
MAX_VELOCITY = 1e3  # rad/s or m/s
MAX_ACCELERATION = 1e5  # rad/s² or m/s²
MAX_DURATION = 1e6  # s: a trajectory's last time_from_start (11.6 days)


@dataclass(frozen=True)
class JointBounds:
    """Per model joint the plausible position range (`lower`, `upper`), and `inner`: a bound
    within which every joint's position is plausible (the fast check of a whole message)."""

    names: tuple[str, ...]
    lower: np.ndarray  # measured positions
    upper: np.ndarray
    inner: float
    target_lower: np.ndarray  # trajectory points
    target_upper: np.ndarray

    @classmethod
    def of(cls, model: RobotModel) -> JointBounds:
        lo, hi = np.asarray(model.position_lower, dtype=float), np.asarray(model.position_upper, dtype=float)
        prismatic = np.array([t == "prismatic" for t in model.joint_types], dtype=bool)
        limited = prismatic & np.isfinite(lo) & np.isfinite(hi)
        margin = np.where(limited, hi - lo + PRISMATIC_MARGIN, 0.0)
        far = np.where(prismatic, MAX_TRAVEL, MAX_TURNING)
        lower = np.where(limited, lo - margin, -far)
        upper = np.where(limited, hi + margin, far)
        inner = float(min(np.minimum(-lower, upper).min(initial=MAX_TURNING), MAX_VELOCITY))
        targeted = np.isfinite(lo) & np.isfinite(hi)  # any joint with limits
        reach = np.where(prismatic, PRISMATIC_MARGIN, 2.0 * math.pi)
        target_lower = np.where(targeted, lo - (hi - lo + reach), lower)
        target_upper = np.where(targeted, hi + (hi - lo + reach), upper)
        return cls(tuple(model.joint_names), lower, upper, inner, target_lower, target_upper)

    def beyond(
        self, what: str, values: np.ndarray, joints: np.ndarray, velocity: bool = False, target: bool = False
    ) -> str:
        """'' when every value (of model joints `joints`, in that order; one row per point for a
        2-D array) is plausible as a measured position, a target position (`target`) or a
        velocity, else a sentence naming the first joint beyond, its value and its bound. `what`
        names the field ("joint_states position")."""
        values = np.asarray(values, dtype=float)
        if velocity:
            lo, hi = np.full(len(joints), -MAX_VELOCITY), np.full(len(joints), MAX_VELOCITY)
        elif target:
            lo, hi = self.target_lower[joints], self.target_upper[joints]
        else:
            lo, hi = self.lower[joints], self.upper[joints]
        bad = ~((values >= lo) & (values <= hi))  # NaN too
        if not bad.any():
            return ""
        where = tuple(int(x) for x in np.argwhere(bad)[0])
        j = where[-1]
        point = f"point {where[0]}: " if values.ndim == 2 else ""
        name, value = self.names[int(joints[j])], values[where]
        if velocity:
            bound = f"±{MAX_VELOCITY:g} rad/s or m/s"
            return f"{point}{what} of '{name}' is {value:g}, beyond the plausible {bound}"
        return (
            f"{point}{what} of '{name}' is {value:g}, beyond its plausible range [{lo[j]:.4g}, {hi[j]:.4g}]"
        )

    def fast(self, values: list[float]) -> bool:
        """Whether every value of a whole message is within `inner` (no gather needed); False
        says nothing (check `beyond`)."""
        return not values or (max(values) <= self.inner and min(values) >= -self.inner)


def check_trajectory(
    bounds: JointBounds,
    joints: np.ndarray,
    times: np.ndarray,
    positions: np.ndarray,
    velocities: np.ndarray | None,
    accelerations: np.ndarray | None,
) -> None:
    """RneaError naming the point, field, joint and bound of the first implausible value of a
    trajectory for model joints `joints` (points as rows)."""
    t = np.asarray(times, dtype=float)
    late = np.flatnonzero(~(t <= MAX_DURATION))
    if late.size:
        k = int(late[0])
        raise RneaError(f"point {k}: time_from_start {t[k]:g} s is beyond the plausible {MAX_DURATION:g} s")
    text = bounds.beyond("position", positions, joints, target=True)
    if not text and velocities is not None:
        text = bounds.beyond("velocity", velocities, joints, velocity=True)
    if not text and accelerations is not None:
        bad = np.argwhere(~(np.abs(accelerations) <= MAX_ACCELERATION))
        if bad.size:
            k, j = (int(x) for x in bad[0])
            text = (
                f"point {k}: acceleration of '{bounds.names[int(joints[j])]}' is {accelerations[k, j]:g}, "
                f"beyond the plausible ±{MAX_ACCELERATION:g} rad/s^2 (or m/s^2)"
            )
    if text:
        raise RneaError(text)


def check_rates(sampler: TrajectorySampler, names: Sequence[str]) -> None:
    """RneaError naming the joint and the points when the spline between two points of `sampler`
    (its joints named `names`) may exceed MAX_VELOCITY or MAX_ACCELERATION: bounded per segment
    from its coefficients c_k (local time s in [0, dt]: |q̇| ≤ Σ k |c_k| dt^(k-1),
    |q̈| ≤ Σ k (k-1) |c_k| dt^(k-2)), an upper bound that a plausible trajectory stays far below."""
    velocity, acceleration = sampler.rate_bounds()  # (segments, n) each
    for bound, limit, what, unit in (
        (acceleration, MAX_ACCELERATION, "acceleration", "rad/s^2 or m/s^2"),
        (velocity, MAX_VELOCITY, "velocity", "rad/s or m/s"),
    ):
        bad = np.argwhere(~(bound <= limit))
        if bad.size:
            k, j = (int(x) for x in bad[0])
            raise RneaError(
                f"the spline from point {k} to point {k + 1} reaches a {what} of '{names[j]}' up to "
                f"{bound[k, j]:.3g}, beyond the plausible ±{limit:g} {unit} (points too far apart for "
                "their times)"
            )


__all__ = [
    "MAX_ACCELERATION",
    "MAX_DURATION",
    "MAX_TRAVEL",
    "MAX_TURNING",
    "MAX_VELOCITY",
    "JointBounds",
    "check_rates",
    "check_trajectory",
]
