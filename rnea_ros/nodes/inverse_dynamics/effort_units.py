"""The effort_unit of each output joint (no ROS): commands in joint torque, motor torque τ/G or
motor current τ/(G K_t), and measured efforts in that unit back to joint torque.

The factors come from `rnea_ros.algorithms.gearing.effort_unit_factors` once per parameter change; a cycle
pays one numpy multiply into a preallocated array (nothing when every joint is in joint torque).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rnea_ros.algorithms.gearing import effort_unit_factors
from rnea_ros.errors import ParameterError

# the effort units that need each gearing parameter
NEEDED_BY = {"gearing.ratio": ("motor_torque", "current"), "gearing.torque_constant": ("current",)}


def _per_joint(params: dict, name: str, joints: list[str]) -> np.ndarray:
    values = np.asarray(params[name], dtype=float if name.startswith("gearing.") else object)
    if values.size not in (1, len(joints)):
        raise ParameterError(name, f"must have 1 or {len(joints)} values (one per joint of 'joints')")
    return np.broadcast_to(values, (len(joints),))


@dataclass(frozen=True)
class EffortUnits:
    """Per output joint its unit and factor f (unit value = f × joint torque); `to_joint` is 1/f
    per model joint (1 off the output)."""

    units: tuple[str, ...]
    factor: np.ndarray
    to_joint: np.ndarray
    _command: np.ndarray  # workspaces, refilled every cycle
    _measured: np.ndarray

    def command(self, total: np.ndarray) -> np.ndarray:
        """Output efforts (joint torque, `joints` order) in each joint's unit."""
        return np.multiply(total, self.factor, out=self._command)

    def measured(self, effort: np.ndarray) -> np.ndarray:
        """Measured efforts (model order, each output joint in its unit) in joint torque."""
        return np.multiply(effort, self.to_joint, out=self._measured)

    def text(self, names: list[str]) -> str:
        """'joint:unit' for the joints not in joint torque."""
        return " ".join(f"{n}:{u}" for n, u in zip(names, self.units, strict=True) if u != "joint_torque")


def effort_units(params: dict, joints: list[str], output: np.ndarray, nv: int) -> EffortUnits | None:
    """The units of the output joints `joints` (model indices `output`, nv model joints) from
    effort_unit and gearing.*, None when every joint is in joint torque; ParameterError naming
    the parameter and the joint when a unit lacks its gear ratio or torque constant."""
    units = _per_joint(params, "effort_unit", joints)
    gearing = {
        name: _per_joint(params, name, joints) for name in ("gearing.ratio", "gearing.torque_constant")
    }
    for name, values in gearing.items():
        for joint, unit, value in zip(joints, units, values, strict=True):
            if unit in NEEDED_BY[name] and not value > 0:
                raise ParameterError(
                    name, f"joint '{joint}' has effort_unit '{unit}', which needs {name} > 0 (got {value:g})"
                )
    try:
        factor = effort_unit_factors(
            list(units), gearing["gearing.ratio"], gearing["gearing.torque_constant"]
        )
    except ValueError as exc:
        raise ParameterError("effort_unit", str(exc)) from None
    if all(u == "joint_torque" for u in units):
        return None
    to_joint = np.ones(nv)
    to_joint[output] = 1.0 / factor
    return EffortUnits(tuple(units), factor, to_joint, np.zeros(len(joints)), np.zeros(nv))


__all__ = ["EffortUnits", "effort_units"]
