"""Message fields without a per-cycle allocation (`ReusedJointState`, `InPlaceDoubles`) and a
JointTrajectory's points as arrays (`trajectory_points`)."""

from __future__ import annotations

import array

import numpy as np
from sensor_msgs.msg import JointState
from std_msgs.msg import Header
from trajectory_msgs.msg import JointTrajectory


class ReusedJointState:
    """One JointState per output, refilled per cycle rather than built (building a JointState
    costs more than the cycle's dynamics; publishing serializes it at once, so reuse is safe).
    Its effort field is one array.array refilled in place through a numpy view: no list or array
    is built per cycle."""

    __slots__ = ("msg", "values")

    def __init__(self) -> None:
        self.msg = JointState()
        self.values = InPlaceDoubles()

    def filled(self, header: Header, names: list[str], effort: np.ndarray) -> JointState:
        msg = self.msg
        msg.header = header
        if msg.name is not names:  # the names change with the model only
            msg.name = names
        msg.effort = self.values.filled(effort)
        return msg


class InPlaceDoubles:
    """An array.array('d') (what a message's float64[] field holds) refilled in place from a numpy
    vector: `filled(values)` copies through a numpy view of its buffer and returns it, allocating
    only when the length changes. Assign the result to the field (the setter keeps the object)."""

    __slots__ = ("array", "view")

    def __init__(self) -> None:
        self.array = array.array("d")
        self.view = np.frombuffer(self.array, dtype=np.float64)

    def filled(self, values: np.ndarray) -> array.array:
        if len(self.view) != len(values):
            self.array = array.array("d", bytes(8 * len(values)))
            self.view = np.frombuffer(self.array, dtype=np.float64)
        np.copyto(self.view, values)
        return self.array


def trajectory_points(
    msg: JointTrajectory,
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None]:
    """(times (K,) s, positions, velocities or None, accelerations or None (K, n)) of a
    JointTrajectory; ValueError when a point's arrays do not match its joint_names."""
    n, points = len(msg.joint_names), msg.points

    def field_of(attr: str) -> np.ndarray | None:
        rows = [list(getattr(p, attr)) for p in points]
        if all(len(r) == 0 for r in rows):
            return None
        if any(len(r) != n for r in rows):
            raise ValueError(f"every point needs {n} {attr} (or none at all)")
        return np.array(rows, dtype=float)

    times = np.array([p.time_from_start.sec + p.time_from_start.nanosec * 1e-9 for p in points])
    positions = field_of("positions")
    if positions is None:
        raise ValueError("points have no positions")
    return times, positions, field_of("velocities"), field_of("accelerations")
