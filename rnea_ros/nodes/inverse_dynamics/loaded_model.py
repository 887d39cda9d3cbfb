"""`LoadedModel`: what the inverse_dynamics node runs with once a description is loaded (the model,
its cycle model, joint cache, desired state and name layouts), replaced whole on a new model or
parameter set, so a cycle never sees half an update."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from rnea_ros.model.robot_model import RobotModel
from rnea_ros.nodes.inverse_dynamics.cycle_model import CycleModel
from rnea_ros.ros.joint_states import JointStateCache, Layout
from rnea_ros.trajectory.desired_state import DesiredState
from rnea_ros.trajectory.plausible import JointBounds


@dataclass(frozen=True)
class LoadedModel:
    """A model with everything that belongs to it; replaced whole, never edited in place (the
    joint cache's arrays aside, which only the joint_states intake writes, and the desired
    state, which the trajectory callback feeds and the cycle samples)."""

    base: RobotModel  # the joints' model, its root link fixed (root_joint fixed: the model)
    cycle: CycleModel
    cache: JointStateCache
    desired: DesiredState
    floating: RobotModel | None = None  # root_joint floating or planar: the model with it
    layouts: dict[tuple[str, ...], Layout] = field(default_factory=dict)
    # q̈_des 0 and no joint driven, without a trajectory: per model, not per cycle (only read;
    # writable, as numba compiles other signatures for read-only arrays)
    rest: np.ndarray = field(default_factory=lambda: np.zeros(0))
    undriven: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    # plausible joint positions and velocities (rnea_ros.trajectory.plausible), of the cycle's model
    bounds: JointBounds = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "bounds", JointBounds.of(self.cycle.model))
        nv = self.cycle.model.nv
        if len(self.rest) != nv:
            object.__setattr__(self, "rest", np.zeros(nv))
            object.__setattr__(self, "undriven", np.zeros(nv, dtype=np.int64))


__all__ = ["LoadedModel"]
