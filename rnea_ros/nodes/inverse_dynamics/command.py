"""The one output stage of the inverse_dynamics node (no ROS): every command the node publishes on
~/effort_commands (each cycle's, the lifecycle hold on deactivate, the hold on shutdown from
active) goes through `CommandStage`: joint torques in model order → the output joints in `joints`
order, clamped to the URDF effort limit × effort_limit_scale (joint torque), then in each joint's
`effort_unit` (effort_units.py); a command that is not finite is not given at all.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from rnea_ros.nodes.inverse_dynamics.effort_units import EffortUnits


@dataclass(frozen=True)
class CommandStage:
    """Limits and units of the output joints: `output` (model index per output joint, in
    `joints` order), `limit` (effort limit × effort_limit_scale per output joint, joint torque),
    `units` (None: every joint in joint torque)."""

    output: np.ndarray
    limit: np.ndarray
    units: EffortUnits | None = None
    in_order: bool = False  # output is every model joint in model order: no reindexing
    _work: np.ndarray = field(init=False, repr=False, compare=False)
    _floor: np.ndarray = field(init=False, repr=False, compare=False)  # -limit, kept

    def __post_init__(self) -> None:
        object.__setattr__(self, "_work", np.zeros(len(self.output)))
        object.__setattr__(self, "_floor", -np.asarray(self.limit, dtype=float))

    def __call__(self, tau: np.ndarray) -> np.ndarray | None:
        """The command for joint torques `tau` (model order): output order, clamped, in each
        joint's unit; None when a value is not finite. The array is this stage's workspace,
        valid until the next call (publish it, or copy it)."""
        out = self._work
        if self.in_order:
            np.copyto(out, tau)
        else:
            np.take(tau, self.output, out=out, mode="wrap")  # indices valid: no buffering
        np.minimum(out, self.limit, out=out)  # NaN stays NaN through both
        np.maximum(out, self._floor, out=out)
        if self.units is not None:
            out = self.units.command(out)
        # the sum of Python floats: NaN and Inf carry through; a finite overflow is cleared below
        if not math.isfinite(sum(out.tolist())) and not np.isfinite(out).all():
            return None
        return out


__all__ = ["CommandStage"]
