"""Parameters of the inverse_dynamics node: declarations (descriptions, ranges, read-only) and
validation of a proposed set against the loaded model, returning a reason on rejection."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from rcl_interfaces.msg import FloatingPointRange, ParameterDescriptor
from rclpy.node import Node
from rclpy.parameter import Parameter

from ..feedforward import COMPENSABLE

STATE_SOURCES = ("measured", "desired")
WRENCH_FRAMES = ("root", "tip")


@dataclass(frozen=True)
class Spec:
    default: Any
    description: str
    read_only: bool = False
    low: float | None = None
    high: float | None = None


SPECS: dict[str, Spec] = {
    "robot_description": Spec("", "URDF text; empty: listen to the robot_description topic", True),
    "root_link": Spec("", "root of the model (empty: the URDF's root link)", True),
    "tip_link": Spec("", "tip of the chain and point of the end-effector wrench (empty: whole tree)", True),
    "joints": Spec([""], "joints of ~/effort_commands, in order (empty: the model's movable joints)", True),
    "gravity": Spec([0.0, 0.0, -9.81], "gravity vector in the root frame, m/s^2 (3 values)"),
    "ee_wrench": Spec(
        [0.0] * 6, "wrench the tip link exerts on its environment [fx fy fz tx ty tz], N and N m"
    ),
    "ee_wrench_frame": Spec("root", "axes of ee_wrench: 'root' or 'tip' (moment about the tip origin)"),
    **{f"compensate.{term}": Spec(True, f"add the {term} term to the command") for term in COMPENSABLE},
    "friction.viscous": Spec(
        [-1.0], "viscous coefficient per joint (joints order), N m s/rad; [-1]: URDF damping"
    ),
    "friction.coulomb": Spec([-1.0], "Coulomb level per joint (joints order), N m; [-1]: URDF friction"),
    "friction.smoothing_velocity": Spec(
        0.01, "velocity of the tanh sign smoothing, rad/s", low=1e-6, high=10.0
    ),
    "payload.mass": Spec(0.0, "payload mass on payload.link, kg", low=0.0, high=1000.0),
    "payload.com": Spec([0.0, 0.0, 0.0], "payload centre of mass in the payload.link frame, m"),
    "payload.inertia": Spec([0.0] * 6, "payload inertia about its com [ixx ixy ixz iyy iyz izz], kg m^2"),
    "payload.link": Spec("", "link carrying the payload (empty: tip_link, else the last link)"),
    "feedback.kp": Spec([0.0], "PD stiffness on the tracking error: one value or one per joint, N m/rad"),
    "feedback.kd": Spec([0.0], "PD damping on the tracking error: one value or one per joint, N m s/rad"),
    "state_source": Spec("measured", "state the model terms are evaluated at: 'measured' or 'desired'"),
    "effort_limit_scale": Spec(1.0, "efforts are clamped to URDF effort limit x scale", low=0.0, high=10.0),
    "joint_states_timeout": Spec(0.1, "joint_states older than this (s) get no command", low=0.0, high=60.0),
    "publish_terms": Spec(True, "publish each term on ~/terms/<term> (JointState effort)"),
    "diagnostics_period": Spec(1.0, "period of /diagnostics, s", True, low=0.05, high=60.0),
}


def declare(node: Node) -> None:
    """Declare every parameter with its description, range and read-only flag."""
    for name, spec in SPECS.items():
        ranges = {}
        if spec.low is not None:
            ranges["floating_point_range"] = [
                FloatingPointRange(from_value=spec.low, to_value=spec.high, step=0.0)
            ]
        descriptor = ParameterDescriptor(description=spec.description, read_only=spec.read_only, **ranges)
        node.declare_parameter(name, spec.default, descriptor)


def _vector(value, name: str, sizes: tuple[int, ...]) -> np.ndarray:
    a = np.asarray(value, dtype=float).reshape(-1)
    if a.size not in sizes:
        raise ValueError(f"{name} must have {' or '.join(map(str, sizes))} values, got {a.size}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} must be finite")
    return a


def check(values: dict[str, Any], n_joints: int | None) -> None:
    """Raise ValueError naming the parameter when a value is invalid (n_joints: output joints,
    None while no model is loaded: per-joint lengths are then checked at model load)."""
    for name, value in values.items():
        spec = SPECS.get(name)
        if spec is None:
            continue
        if spec.low is not None and not (math.isfinite(value) and spec.low <= value <= spec.high):
            raise ValueError(f"{name} must be in [{spec.low}, {spec.high}], got {value}")
        if name == "gravity":
            _vector(value, name, (3,))
        elif name == "ee_wrench":
            _vector(value, name, (6,))
        elif name == "payload.com":
            _vector(value, name, (3,))
        elif name == "payload.inertia":
            _vector(value, name, (6,))
        elif name == "ee_wrench_frame" and value not in WRENCH_FRAMES:
            raise ValueError(f"ee_wrench_frame must be one of {WRENCH_FRAMES}, got '{value}'")
        elif name == "state_source" and value not in STATE_SOURCES:
            raise ValueError(f"state_source must be one of {STATE_SOURCES}, got '{value}'")
        elif name in ("feedback.kp", "feedback.kd"):
            a = _vector(value, name, (1, n_joints) if n_joints else (np.size(value),))
            if np.any(a < 0):
                raise ValueError(f"{name} must be >= 0")
        elif name in ("friction.viscous", "friction.coulomb"):
            a = np.asarray(value, dtype=float).reshape(-1)
            if a.tolist() == [-1.0]:
                continue
            a = _vector(a, name, (n_joints,) if n_joints else (a.size,))
            if np.any(a < 0):
                raise ValueError(f"{name} must be >= 0 (negative friction)")


def per_joint(value, n: int) -> np.ndarray:
    """A validated 1-or-n value as an (n,) array."""
    a = np.asarray(value, dtype=float).reshape(-1)
    return np.full(n, a[0]) if a.size == 1 else a


def snapshot(node: Node) -> dict[str, Any]:
    """Current values of every declared parameter."""
    return {name: node.get_parameter(name).value for name in SPECS}


def updated(current: dict[str, Any], params: list[Parameter]) -> dict[str, Any]:
    """`current` with the proposed parameters applied (rclpy has already checked their types)."""
    new = dict(current)
    new.update({p.name: list(p.value) if isinstance(p.value, tuple) else p.value for p in params})
    return new
