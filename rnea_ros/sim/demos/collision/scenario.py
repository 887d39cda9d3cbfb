"""What the two collision runs share (`rnea_ros.sim.demos.collision.demo` on a plant equal to the URDF,
`rnea_ros.sim.demos.collision.mismatch` on a mismatched one): the fast motion they track, the collision
pulse, the margin of the collision thresholds over the contact-free residual, and when a residual
first crosses them (no ROS). Units: s, N m, rad.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from rnea_ros.model.robot_model import RobotModel
from rnea_ros.sim.scenario import multisine

THRESHOLD_MARGIN = 1.5  # collision threshold per joint = margin × the largest contact-free |r|
PULSE = 25e-3  # s, length of the collision's force pulse
Disturbance = Callable[[float], np.ndarray]  # t → [force (3), torque (3)] applied to the link, world axes


def fast_motion(model: RobotModel, chain: list[str], home: dict[str, float], duration: float, seed: int):
    """A multi-sine for `chain` faster than the demo's (velocity_scale 0.8, 6 rad/s² bound)."""
    index = [model.joint_index(j) for j in chain]
    q0 = np.array([home.get(j, 0.0) for j in model.joint_names])[index]
    shape = {"frequency_range": (0.3, 1.0), "max_amplitude": 0.6, "velocity_scale": 0.8}
    return multisine(model, index, q0, 6.0, duration, min(1.0, duration / 4), seed, **shape)


def first_flag(r: np.ndarray, thresholds: np.ndarray, t: np.ndarray, start: float) -> float:
    """Time of the first |r_i| > threshold_i at or after `start` (inf: none)."""
    hit = np.flatnonzero((t >= start) & (np.abs(r) > thresholds).any(axis=1))
    return float(t[hit[0]]) if hit.size else float("inf")


__all__ = ["PULSE", "THRESHOLD_MARGIN", "Disturbance", "fast_motion", "first_flag"]
