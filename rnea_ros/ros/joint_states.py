"""joint_states merged per joint, as robot_state_publisher does (plain Python, no ROS types).

Several publishers may share `joint_states` (joint_state_broadcaster for the arm, a gripper
driver for the fingers). `JointStateCache` keeps the latest position, velocity and stamp of every
model joint, and the latest measured effort with its own stamp (the contact monitor uses it); a
message updates the joints it carries, and the model's state is complete when every joint (mimic
joints aside: they follow their leader) is no older than the timeout.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rnea_ros.model.robot_model import RobotModel

NEVER = np.iinfo(np.int64).min // 2  # stamp of a joint never received (ns)


@dataclass(frozen=True)
class Layout:
    """Where the model's joints sit in one joint_states name list."""

    model_index: np.ndarray  # model joints carried by the message
    msg_index: np.ndarray  # their positions in the message
    commanded: bool  # whether the message carries an output (commanded) joint


def layout(model: RobotModel, output: np.ndarray, names: Sequence[str]) -> Layout:
    """Map a joint_states name list onto the model; ValueError naming a duplicated joint."""
    position: dict[str, int] = {}
    for i, name in enumerate(names):
        if name in position:
            raise ValueError(f"joint '{name}' appears twice in joint_states")
        position[name] = i
    pairs = [(i, position[j]) for i, j in enumerate(model.joint_names) if j in position]
    model_index = np.array([p[0] for p in pairs], dtype=np.int64)
    commanded = bool(np.isin(output, model_index).any())
    return Layout(model_index, np.array([p[1] for p in pairs], dtype=np.int64), commanded)


class JointStateCache:
    """Latest position (rad or m), velocity (rad/s or m/s) and stamp (ns) of each model joint;
    `effort` (N m or N) with `effort_stamp`, the stamp of the message that last carried it."""

    def __init__(self, model: RobotModel, previous: JointStateCache | None = None) -> None:
        n = model.nv
        self.model = model
        self.q = np.zeros(n)
        self.qd = np.zeros(n)
        self.stamp = np.full(n, NEVER, dtype=np.int64)
        self.effort = np.zeros(n)
        self.effort_stamp = np.full(n, NEVER, dtype=np.int64)
        self.mimic = tuple(
            (model.joint_index(j), model.joint_index(m.leader), m.multiplier, m.offset)
            for j, m in model.mimic.items()
        )
        self._checked = np.ones(n, dtype=bool)  # joints whose age matters (mimic joints follow)
        for i, *_ in self.mimic:
            self._checked[i] = False
        self._all_checked = not self.mimic  # no masked copy per cycle then
        if previous is not None:  # a model swap keeps what is known of the joints both share
            old = {name: i for i, name in enumerate(previous.model.joint_names)}
            for i, name in enumerate(model.joint_names):
                j = old.get(name)
                if j is not None:
                    self.q[i], self.qd[i], self.stamp[i] = previous.q[j], previous.qd[j], previous.stamp[j]
                    self.effort[i], self.effort_stamp[i] = previous.effort[j], previous.effort_stamp[j]

    def update(
        self,
        lay: Layout,
        position: np.ndarray,
        velocity: np.ndarray | None,
        stamp_ns: int,
        effort: np.ndarray | None = None,
    ) -> None:
        """Store the message's values (already checked finite) for the joints it carries; `effort`
        None (absent, or not finite) leaves the joints' efforts as they were (stale)."""
        idx = lay.model_index
        self.q[idx] = position[lay.msg_index]
        self.qd[idx] = 0.0 if velocity is None else velocity[lay.msg_index]
        self.stamp[idx] = stamp_ns
        if effort is not None:
            self.effort[idx] = effort[lay.msg_index]
            self.effort_stamp[idx] = stamp_ns

    def state(self, oldest_ns: int | None) -> tuple[np.ndarray, np.ndarray] | list[str]:
        """(q, q̇) of every model joint (mimic joints from their leader unless fresh themselves), or
        the names of the joints never received or older than oldest_ns (None: any age)."""
        limit = NEVER + 1 if oldest_ns is None else oldest_ns
        stamp = self.stamp
        # as Python ints: cheaper per cycle than numpy's reduction for a few joints
        oldest = min((stamp if self._all_checked else stamp[self._checked]).tolist(), default=limit)
        if oldest < limit:
            names = self.model.joint_names
            return [names[i] for i in np.flatnonzero((stamp < limit) & self._checked)]
        for i, leader, mult, offset in self.mimic:
            if stamp[i] < limit:
                self.q[i] = mult * self.q[leader] + offset
                self.qd[i] = mult * self.qd[leader]
        return self.q, self.qd


def efforts_of(effort: list[float] | np.ndarray, lay: Layout) -> np.ndarray | None:
    """A joint_states effort field as an array, or None when it does not give a finite effort for
    every model joint the message carries (empty, wrong length, NaN or Inf)."""
    if len(effort) == 0 or len(effort) <= int(lay.msg_index.max(initial=-1)):
        return None
    values = np.asarray(effort, dtype=float)
    return values if np.isfinite(values[lay.msg_index]).all() else None
