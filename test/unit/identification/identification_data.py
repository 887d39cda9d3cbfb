"""Synthetic identification data shared by the identification tests: example-robot-data models,
perturbed copies with friction and armature (the truth), multi-sine trajectories and the efforts
our rnea + friction give on them."""

from __future__ import annotations

import numpy as np

from rnea_ros import Friction, RobotModel, friction_torques, rnea
from rnea_ros.identification.excitation import ExcitationOptions, design
from rnea_ros.identification.regressor import (
    body_columns,
    joint_columns,
    standard_parameters,
    with_parameters,
)
from rnea_ros.model.example_robots import example_urdf_path

ROBOTS = {"panda": "panda_hand", "ur5": None, "double_pendulum": None}


def urdf_model(name: str) -> RobotModel:
    return RobotModel.from_urdf(example_urdf_path(name).read_text(), tip_link=ROBOTS.get(name))


def perturbed(model: RobotModel, seed: int, armature: bool = True) -> tuple[RobotModel, np.ndarray]:
    """Each body's 10 parameters scaled by its own factor in [0.8, 1.2] (stays physical), friction
    and armature drawn at random."""
    rng = np.random.default_rng(seed)
    n = model.nv
    pi = standard_parameters(model)
    for b in range(n):
        pi[body_columns(model, b)] *= rng.uniform(0.8, 1.2)
    pi[joint_columns(model, "viscous")] = rng.uniform(0.1, 1.0, n)
    pi[joint_columns(model, "coulomb")] = rng.uniform(0.5, 2.0, n)
    pi[joint_columns(model, "armature")] = rng.uniform(0.02, 0.2, n) if armature else 0.0
    return with_parameters(model, pi), pi


def trajectory(model: RobotModel, seed: int, duration: float = 30.0, rate: float = 100.0):
    lower = np.where(np.isfinite(model.position_lower), model.position_lower, -10.0)
    upper = np.where(np.isfinite(model.position_upper), model.position_upper, 10.0)
    home = np.where(upper - lower < 1.2, 0.5 * (lower + upper), np.clip(0.3, lower + 0.5, upper - 0.5))
    traj = design(
        home,
        model.position_lower,
        model.position_upper,
        np.minimum(model.velocity_limit, 2.0),
        10.0,
        ExcitationOptions(
            duration=duration,
            components=5,
            frequency_range=(0.1, 1.0),
            max_amplitude=1.2,
            position_margin=0.05,
            seed=seed,
        ),
    )
    return traj.points(rate)


def torques(model: RobotModel, q, qd, qdd) -> np.ndarray:
    return rnea(model, q, qd, qdd) + friction_torques(Friction(model.damping, model.coulomb), qd)


def relerr(a, b) -> float:
    return float(np.max(np.abs(np.asarray(a) - b)) / max(1e-300, float(np.max(np.abs(b)))))
