"""A trajectory's joints (a subset of the model's movable joints, in any order) mapped to and from
`model.joint_names` order, the other joints held at given positions.

A JointTrajectory names some joints in its own order; the dynamics need every joint of the model.
`JointMap.expand` fills the model-order arrays (held positions, zero velocity and acceleration for
the joints the trajectory does not move) and `JointMap.restrict` takes the trajectory's columns
back. Positions in rad or m; arrays (..., m) in trajectory order, (..., n) in model order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import numpy.typing as npt

from rnea_ros.errors import RneaError
from rnea_ros.model.robot_model import RobotModel


class JointMap:
    """Column mapping between a trajectory's joint order and the model's (immutable)."""

    def __init__(self, model: RobotModel, names: Sequence[str]) -> None:
        """`names`: movable joints of `model`, each once, in the trajectory's order; ValueError
        naming an unknown or repeated joint."""
        names = tuple(str(j) for j in names)
        if not names:
            raise RneaError("joint names: a trajectory needs at least one joint")
        seen: set[str] = set()
        for j in names:
            if j in seen:
                raise RneaError(f"joint names: '{j}' appears twice")
            seen.add(j)
        unknown = [j for j in names if j not in model.joint_names]
        if unknown:
            raise RneaError(f"joint names: {unknown} are not movable joints of the model")
        self.model = model
        self.names = names
        self.index = np.array([model.joint_index(j) for j in names], dtype=np.int64)
        self.index.flags.writeable = False
        self.others = tuple(j for j in model.joint_names if j not in seen)

    @property
    def nv(self) -> int:
        """Number of the model's joints."""
        return self.model.nv

    def held_positions(self, held: Mapping[str, float] | npt.ArrayLike | None) -> np.ndarray:
        """Model-order positions (n,) of the joints the trajectory does not move: a mapping
        name → position (extra names ignored, every other joint required) or an array (n,) in
        model order (its trajectory columns are ignored); None only when there are no others."""
        n = self.nv
        if held is None:
            if self.others:
                raise RneaError(f"held positions needed for joints {list(self.others)}")
            return np.zeros(n)
        if isinstance(held, Mapping):
            missing = [j for j in self.others if j not in held]
            if missing:
                raise RneaError(f"held positions: no value for joints {missing}")
            values = np.zeros(n)
            for j in self.others:
                values[self.model.joint_index(j)] = float(held[j])
        else:
            values = np.array(held, dtype=float).reshape(-1)
            if values.shape != (n,):
                raise RneaError(f"held positions must have {n} values in model order, got {values.size}")
        if not np.all(np.isfinite(values)):
            raise RneaError("held positions contain NaN or Inf")
        return values

    def expand(self, values: npt.ArrayLike, fill: npt.ArrayLike) -> np.ndarray:
        """Trajectory-order values (..., m) as model order (..., n): the trajectory's columns
        from `values`, the others from `fill` (n,) (or a scalar)."""
        values = np.asarray(values, dtype=float)
        m = self.index.size
        if values.shape[-1:] != (m,):
            raise RneaError(f"values must have {m} columns (one per trajectory joint), got {values.shape}")
        out = np.empty((*values.shape[:-1], self.nv))
        out[...] = fill
        out[..., self.index] = values
        return out

    def expand_trajectory(
        self, positions, velocities=None, accelerations=None, held=None
    ) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
        """Model-order (positions, velocities, accelerations) (K, n) of a trajectory given in its
        own order (K, m); joints it does not move stay at `held` (see `held_positions`) at rest.
        None stays None."""
        rest = self.held_positions(held)
        q = self.expand(positions, rest)
        qd = None if velocities is None else self.expand(velocities, 0.0)
        qdd = None if accelerations is None else self.expand(accelerations, 0.0)
        return q, qd, qdd

    def restrict(self, values: npt.ArrayLike) -> np.ndarray:
        """The trajectory's columns (..., m) of model-order values (..., n)."""
        values = np.asarray(values, dtype=float)
        if values.shape[-1:] != (self.nv,):
            raise RneaError(f"values must have {self.nv} columns (model order), got {values.shape}")
        return values[..., self.index]
