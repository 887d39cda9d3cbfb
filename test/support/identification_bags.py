"""Recordings for the documented identification commands: a robot unlike its URDF (inertials
scaled per body, friction and armature the URDF lacks, seeded) moved along a multi-sine within
its limits, its joint_states (efforts from that robot: rigid body + friction) as a rosbag2 or as
messages. The robot that made them is the reference the identified values are checked against."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from rnea_ros import Friction, RobotModel, friction_torques, rnea
from rnea_ros.identification.bag import write_joint_states
from rnea_ros.identification.excitation import ExcitationOptions, design
from rnea_ros.identification.regressor import (
    body_columns,
    joint_columns,
    standard_parameters,
    with_parameters,
)

EPOCH = 1.7e9  # header stamps like a real recording's (a stamp of 0 means "not stamped")


def unlike_its_urdf(model: RobotModel, seed: int) -> RobotModel:
    """model with every body's inertials scaled by its own factor in 0.8-1.2, a viscous friction
    of 0.2-1.0 N m s/rad, a Coulomb friction of 0.5-2 N m and an armature of 0.02-0.2 kg m² per
    joint."""
    rng = np.random.default_rng(seed)
    pi = standard_parameters(model)
    for b in range(model.nv):
        pi[body_columns(model, b)] *= rng.uniform(0.8, 1.2)
    pi[joint_columns(model, "viscous")] = rng.uniform(0.2, 1.0, model.nv)
    pi[joint_columns(model, "coulomb")] = rng.uniform(0.5, 2.0, model.nv)
    pi[joint_columns(model, "armature")] = rng.uniform(0.02, 0.2, model.nv)
    return with_parameters(model, pi)


def motion(model: RobotModel, seed: int, duration: float, rate: float, center: float = 0.3):
    """t, q, q̇, q̈ of a 5-sine excitation around `center` (each joint: clipped into its range),
    up to 2 rad/s and 10 rad/s², as test_cli.py's (the recording then passes identify's checks:
    gravity visible in every effort, no warning)."""
    middle = np.clip(np.full(model.nv, center), model.position_lower + 0.2, model.position_upper - 0.2)
    traj = design(
        middle,
        model.position_lower,
        model.position_upper,
        np.minimum(model.velocity_limit, 2.0),
        10.0,
        ExcitationOptions(
            duration=duration,
            components=5,
            frequency_range=(0.1, 1.0),
            max_amplitude=1.2,
            seed=seed,
        ),
    )
    return traj.points(rate)


def joint_states(model: RobotModel, seed: int, duration: float, rate: float, extra: tuple[str, ...] = ()):
    """(stamps, names, positions, velocities, efforts) of a recording: the model's joints, then
    `extra` joints at 0 (a gripper the fit leaves out)."""
    t, q, qd, qdd = motion(model, seed, duration, rate)
    tau = rnea(model, q, qd, qdd) + friction_torques(Friction(model.damping, model.coulomb), qd)
    pad = np.zeros((len(t), len(extra)))
    names = [*model.joint_names, *extra]
    return t + EPOCH, names, *(np.hstack([a, pad]) for a in (q, qd, tau))


def record(
    path: Path,
    model: RobotModel,
    seed: int,
    duration: float = 40.0,
    rate: float = 500.0,
    extra: tuple[str, ...] = (),
) -> Path:
    """A rosbag2 (mcap) of that recording on /joint_states."""
    return write_joint_states(path, *joint_states(model, seed, duration, rate, extra), storage="mcap")
