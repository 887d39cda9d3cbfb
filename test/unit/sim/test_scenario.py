"""The demo's scenario (rnea_ros.sim.scenario, no ROS): which robots are arms, the gripper the
simulator holds, the gains rule, and the refusals, over every URDF of example-robot-data."""

from __future__ import annotations

import numpy as np
import pytest

from rnea_ros import RobotModel, mass_matrix
from rnea_ros.model.example_robots import example_robots_dir, example_urdf_path
from rnea_ros.sim.demos.forward import argument_parser
from rnea_ros.sim.scenario import (
    BANDWIDTH,
    FRICTION_DEFLECTION,
    Refused,
    gains,
    home_of,
    make_config,
    multisine,
    sampled_pd_radius,
    split_arm,
)

URDFS = sorted(str(p.relative_to(example_robots_dir())) for p in example_robots_dir().rglob("*.urdf"))


def config(path: str, *extra: str):
    return make_config(argument_parser().parse_args(["--urdf", str(example_robots_dir() / path), *extra]))


SO_ARM = ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll"]
UR = [f"{j}_joint" for j in ("shoulder_pan", "shoulder_lift", "elbow", "wrist_1", "wrist_2", "wrist_3")]


@pytest.mark.parametrize(
    ("path", "chain", "gripper"),
    [
        ("panda_description/urdf/panda.urdf", [f"panda_joint{i}" for i in range(1, 8)],
         ["panda_finger_joint1", "panda_finger_joint2"]),
        ("z1_description/urdf/z1.urdf", [f"joint{i}" for i in range(1, 7)], ["jointGripper"]),
        ("so_arm_description/urdf/so101.urdf", SO_ARM, ["gripper"]),
        ("talos_data/robots/talos_left_arm.urdf", [f"arm_left_{i}_joint" for i in range(2, 8)],
         ["gripper_left_joint"]),
        ("xarm_description/urdf/xarm7.urdf", [f"joint{i}" for i in range(1, 8)], []),
        ("ur_description/urdf/ur5_robot.urdf", UR, []),
    ],
)  # fmt: skip
def test_arm_chain_and_gripper(path: str, chain: list[str], gripper: list[str]) -> None:
    arm = split_arm(RobotModel.from_urdf((example_robots_dir() / path).read_text()))
    assert arm.chain == chain and arm.gripper == gripper
    c = config(path)
    assert c.joints == chain and list(c.held) == gripper


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("talos_data/robots/talos_reduced.urdf", "not an arm: 32 movable joints"),
        ("double_pendulum_description/urdf/double_pendulum.urdf", "not an arm: 2 movable joints"),
        ("bolt_description/robots/bolt.urdf", "not an arm: 0 joints besides the gripper"),
        ("quadruped_description/urdf/quadruped.urdf", "not an arm: 0 joints besides the gripper"),
        ("ur_description/urdf/ur3.urdf", "no <link>"),
    ],
)
def test_non_arms_are_refused_with_the_reason(path: str, reason: str) -> None:
    with pytest.raises(ValueError, match=reason):
        config(path)


def test_every_urdf_is_an_arm_or_refused() -> None:
    """Accepted: 6 to 9 movable joints, all but the gripper one chain from the root, >= 5 of them."""
    accepted = []
    for path in URDFS:
        try:
            c = config(path)
        except ValueError:
            continue
        model = RobotModel.from_urdf((example_robots_dir() / path).read_text())
        assert 6 <= model.nv <= 9
        parents = [int(model.parent[model.joint_index(j)]) for j in c.joints]
        assert parents == [-1, *(model.joint_index(j) for j in c.joints[:-1])]
        assert len(c.joints) >= 5
        accepted.append(path)
    assert len(accepted) == 16


GAIN_ROBOTS = ["xarm_description/urdf/xarm7.urdf", "z1_description/urdf/z1.urdf", "panda", "ur5"]


@pytest.mark.parametrize("path", GAIN_ROBOTS)
def test_gains_rule(path: str) -> None:
    """kp = max(ω² M_ii, F_c / e_c), kd = 2 √(kp M_ii), M_ii at home from mass_matrix."""
    model = RobotModel.from_urdf(example_urdf_path(path).read_text())
    home = home_of(model)
    chain = split_arm(model).chain
    kp, kd = gains(model, home, chain)
    q = np.array([home.get(j, 0.0) for j in model.joint_names])
    idx = [model.joint_index(j) for j in chain]
    m = np.diag(mass_matrix(model, q))[idx]
    omega = 2 * np.pi * BANDWIDTH
    floor = model.coulomb[idx] / FRICTION_DEFLECTION
    np.testing.assert_allclose(kp, np.maximum(omega**2 * m, floor), rtol=1e-12)
    np.testing.assert_allclose(kd, 2 * np.sqrt(np.array(kp) * m), rtol=1e-12)
    assert np.all(np.array(kp) * FRICTION_DEFLECTION >= model.coulomb[idx] - 1e-12)


def test_sampled_pd_radius_matches_iterating_the_loop() -> None:
    """The spectral radius against the loop iterated step by step (command from the state at the
    step's start, damping implicit, position semi-implicit): the state's growth per step over the
    last 100 of 300 steps is the radius (within the bounded factor of an oscillating mode)."""
    t = 1e-3
    cases = [(1e-4, 2.0, 229.0, 0.36), (0.1, 0.0, 158.0, 2.5), (1e-3, 0.0, 50.0, 3.0), (1e-4, 0.0, 1.0, 0.5)]
    for m, d, kp, kd in cases:
        e, v = 1.0, 0.0
        norms = []
        for _ in range(300):
            v = (v + t / m * (-kp * e - kd * v)) / (1 + t * d / m)
            e = e + t * v
            norms.append(np.hypot(e, v * t))
        radius = sampled_pd_radius(m, d, kp, kd, t)
        measured = (norms[-1] / norms[-101]) ** (1 / 100)
        assert measured == pytest.approx(radius, rel=0.03), (m, d, kp, kd)
    assert sampled_pd_radius(1e-4, 0.0, 1.0, 0.5, t) > 1  # kd T / M = 5: the explicit velocity loop flips


def test_unstable_gains_and_impossible_loads_are_refused() -> None:
    with pytest.raises(Refused, match="unstable"):
        config("so_arm_description/urdf/so101.urdf", "--kd", "10")
    with pytest.raises(Refused, match="effort limit"):
        weak = (example_robots_dir() / "ur_description/urdf/ur5_robot.urdf").read_text()
        weak = weak.replace('effort="150.0"', 'effort="1.0"')
        from rnea_ros.sim.scenario import check_arm

        model = RobotModel.from_urdf(weak)
        chain = split_arm(model).chain
        check_arm(model, home_of(model), chain, *gains(model, home_of(model), chain))


FAST = {"frequency_range": (0.3, 1.0), "max_amplitude": 0.6, "velocity_scale": 0.8}  # the collision demo's


@pytest.mark.parametrize("shape", [{}, FAST])
def test_multisine_stays_within_the_models_limits_of_the_joints_it_moves(shape: dict) -> None:
    """The demos' multi-sine on the Panda's joints 2, 4, 6 (velocity indices), sampled at 1 kHz:
    from home at rest, inside the URDF's position and velocity limits of those joints (less the
    margin and scale design promises), |q̈| within the bound, back at home at the end."""
    model = RobotModel.from_urdf(example_urdf_path("panda").read_text())
    index = [model.joint_index(j) for j in ("panda_joint2", "panda_joint4", "panda_joint6")]
    q0 = np.array([-0.785, -2.356, 1.571])
    motion = multisine(model, index, q0, 4.0, 6.0, 1.0, 3, **shape)
    q, qd, qdd = motion.sample(np.arange(0.0, 6.0005, 0.001))
    np.testing.assert_allclose(q[0], q0, atol=1e-12)
    np.testing.assert_allclose(q[-1], q0, atol=1e-9)
    assert np.all(q >= model.position_lower[index] + 0.1 - 1e-9)
    assert np.all(q <= model.position_upper[index] - 0.1 + 1e-9)
    assert np.all(np.abs(qd) <= shape.get("velocity_scale", 0.5) * model.velocity_limit[index] + 1e-9)
    assert np.abs(qdd).max() <= 4.0 + 1e-9 and np.abs(q - q0).max() > 0.05  # it moves
