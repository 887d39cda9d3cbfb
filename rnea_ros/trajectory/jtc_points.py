"""A JointTrajectory's points → the points to send to joint_trajectory_controller with `effort`,
slowed down (uniformly) where the effort or velocity limits demand it. No ROS: arrays in, arrays
out, in the trajectory's own joint order; the node copies them into the message.

Steps (each usable alone): `JointMap` (the trajectory's joints within the model, others held) →
`minimal_time_scale` → `scale_trajectory` → `resample` every `period` (JTC's spline) →
`trajectory_efforts` (the node's feedforward terms) → back to the trajectory's joints.
JTC joins its current state to a first point in the future with its own spline: to annotate that
part as well, put the current state first at time 0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from rnea_ros.control.effort_law import EffortLaw
from rnea_ros.model.robot_model import RobotModel
from rnea_ros.trajectory.efforts import (
    DEFAULT_RESAMPLE_PERIOD,
    FEEDFORWARD,
    effort_terms,
    resample,
    trajectory_efforts,
)
from rnea_ros.trajectory.joint_map import JointMap
from rnea_ros.trajectory.time_scaling import (
    TimeScale,
    check_limits,
    minimal_time_scale,
    scale_trajectory,
)


@dataclass(frozen=True)
class EffortTrajectory:
    """Points for JTC in the trajectory's joint order; empty (0 points) when rejected."""

    joint_names: tuple[str, ...]
    times: np.ndarray  # (N,) s, time_from_start
    positions: np.ndarray  # (N, m) rad or m
    velocities: np.ndarray  # (N, m)
    accelerations: np.ndarray  # (N, m)
    efforts: np.ndarray  # (N, m) N m or N, the feedforward τ_d
    scale: TimeScale  # k, binding joint, reason; scale.feasible False: rejected
    terms: dict[str, np.ndarray] | None = None  # (N, m) per term, when asked for

    @property
    def accepted(self) -> bool:
        return self.scale.feasible


def effort_trajectory(
    model: RobotModel,
    joint_names: Sequence[str],
    times: npt.ArrayLike,
    positions: npt.ArrayLike,
    velocities: npt.ArrayLike | None = None,
    accelerations: npt.ArrayLike | None = None,
    *,
    held: Mapping[str, float] | npt.ArrayLike | None = None,
    period: float = DEFAULT_RESAMPLE_PERIOD,
    law: EffortLaw = FEEDFORWARD,
    slow_down: bool = True,
    with_terms: bool = False,
) -> EffortTrajectory:
    """The trajectory (points (K, m) for `joint_names`, a subset of the model's joints in any
    order; the others stay at `held` positions, see `JointMap.held_positions`) slowed down by
    the smallest k ≥ 1 that keeps every sent point within the limits of the trajectory's joints
    (`slow_down=False`: k = 1, rejected when beyond a limit), resampled every `period` s, with the
    efforts of the law's feedforward; the law's limits (`EffortLaw.limits`). ValueError for bad input;
    a statically infeasible trajectory gives `accepted == False`, no points and the reason."""
    jmap = JointMap(model, joint_names)
    q, qd, qdd = jmap.expand_trajectory(positions, velocities, accelerations, held)
    check = minimal_time_scale if slow_down else check_limits
    scale = check(model, times, q, qd, qdd, period=period, law=law, joints=jmap.names)
    m = len(jmap.names)
    if not scale.feasible:
        empty = np.zeros((0, m))
        return EffortTrajectory(jmap.names, np.zeros(0), empty, empty, empty, empty, scale)
    t, qs, qds, qdds = resample(scale_trajectory(times, q, qd, qdd, k=scale.k), period)
    tau = trajectory_efforts(model, qs, qds, qdds, law)
    terms = None
    if with_terms:
        terms = {name: jmap.restrict(x) for name, x in effort_terms(model, qs, qds, qdds, law).items()}
    qs, qds, qdds, tau = (jmap.restrict(x) for x in (qs, qds, qdds, tau))
    return EffortTrajectory(jmap.names, t, qs, qds, qdds, tau, scale, terms)
