"""The plausible joint values every joint input is checked against (trajectory/plausible.py), on
every example robot: any angle up to 1e9 rad, a prismatic joint within its range widened by its
width + 1 m, velocities and accelerations of points and of the spline between them; each
refusal names the point, field, joint, value and bound."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rnea_ros.errors import RneaError
from rnea_ros.model.example_robots import example_urdf_path
from rnea_ros.model.robot_model import RobotModel
from rnea_ros.trajectory.plausible import (
    MAX_TRAVEL,
    MAX_TURNING,
    MAX_VELOCITY,
    JointBounds,
    check_rates,
    check_trajectory,
)
from rnea_ros.trajectory.sampling import TrajectorySampler

ROBOTS = {
    "ur5": "ur5",
    "panda": "panda",
    "double_pendulum": "double_pendulum",
    "kinova": "kinova_description/robots/kinova.urdf",
    "xarm7": "xarm_description/urdf/xarm7.urdf",
    "so101": "so_arm_description/urdf/so101.urdf",
    "talos": "talos_data/robots/talos_reduced.urdf",
    "solo12": "solo_description/robots/solo12.urdf",
}
PANDA = RobotModel.from_urdf(example_urdf_path("panda").read_text())
UR5 = RobotModel.from_urdf(example_urdf_path("ur5").read_text())


@pytest.mark.parametrize("name", sorted(ROBOTS))
def test_limits_pass_and_the_bound_is_exact(name: str) -> None:
    """Revolute and continuous joints: ±1e9 rad; prismatic ones: the range widened by its width
    + 1 m (±1e3 m without limits); a value just beyond is refused naming the joint."""
    model = RobotModel.from_urdf(example_urdf_path(ROBOTS[name]).read_text())
    bounds = JointBounds.of(model)
    joints = np.arange(model.nv)
    lo, hi = np.asarray(model.position_lower), np.asarray(model.position_upper)
    prismatic = np.array([t == "prismatic" for t in model.joint_types])
    limited = prismatic & np.isfinite(lo) & np.isfinite(hi)
    width = np.where(limited, hi - lo + 1.0, 0.0)
    edge = np.where(limited, hi + width, np.where(prismatic, MAX_TRAVEL, MAX_TURNING))
    assert (
        bounds.beyond("q", edge, joints) == ""
        and bounds.beyond("q", np.where(limited, lo, 0.0), joints) == ""
    )
    for j in range(model.nv):
        beyond = edge.copy()
        beyond[j] = np.nextafter(edge[j], np.inf)
        said = bounds.beyond("joint_states position", beyond, joints)
        assert said.startswith(f"joint_states position of '{model.joint_names[j]}' is "), said
    assert 0 < bounds.inner <= MAX_VELOCITY
    assert bounds.fast([bounds.inner, -bounds.inner]) and not bounds.fast([bounds.inner * 1.01])


def test_panda_fingers_and_velocities() -> None:
    bounds = JointBounds.of(PANDA)
    finger = PANDA.joint_names.index("panda_finger_joint1")  # prismatic, [0, 0.04] m
    assert bounds.lower[finger] == -1.04 and bounds.upper[finger] == 0.08 + 1.0
    said = bounds.beyond("joint_states position", np.array([1.5]), np.array([finger]))
    assert (
        said
        == "joint_states position of 'panda_finger_joint1' is 1.5, beyond its plausible range [-1.04, 1.08]"
    )
    j4 = PANDA.joint_names.index("panda_joint4")  # revolute: measured, an angle, any turn
    assert bounds.beyond("q", np.array([45.0]), np.array([j4])) == ""
    lo, hi = PANDA.position_lower[j4], PANDA.position_upper[j4]  # as a target: near its range
    reach = hi - lo + 2 * math.pi
    assert bounds.target_lower[j4] == lo - reach and bounds.target_upper[j4] == hi + reach
    said = bounds.beyond("position", np.array([[0.0], [45.0]]), np.array([j4]), target=True)
    bound = f"[{lo - reach:.4g}, {hi + reach:.4g}]"
    assert said == f"point 1: position of 'panda_joint4' is 45, beyond its plausible range {bound}"
    said = bounds.beyond("joint_states position", np.array([1e308]), np.array([j4]))
    assert (
        said
        == "joint_states position of 'panda_joint4' is 1e+308, beyond its plausible range [-1e+09, 1e+09]"
    )
    assert bounds.beyond("v", np.full(9, 999.0), np.arange(9), velocity=True) == ""
    said = bounds.beyond("joint_states velocity", np.array([0.0, -1e150]), np.array([0, 1]), velocity=True)
    assert (
        said == "joint_states velocity of 'panda_joint2' is -1e+150, beyond the plausible ±1000 rad/s or m/s"
    )


def test_the_spline_between_points_is_bounded_too() -> None:
    """Positions 1e6 rad apart within a second (no velocities given): the linear spline's velocity
    is 1e6 rad/s; with velocities, cubic; with accelerations, quintic: each bound from the
    coefficients is at least the true maximum, sampled densely."""
    names = ["a", "b"]
    check_rates(TrajectorySampler([0.0, 1.0], [[0.0, 0.0], [1.0, 2.0]]), names)
    with pytest.raises(
        RneaError, match="^the spline from point 0 to point 1 reaches a velocity of 'b' up to 1e"
    ):
        check_rates(TrajectorySampler([0.0, 1.0], [[0.0, 0.0], [1.0, 1e6]]), names)
    with pytest.raises(RneaError, match="acceleration of 'a'"):
        check_rates(
            TrajectorySampler(
                [0.0, 0.01, 1.0], [[0.0, 0.0], [5.0, 0.0], [5.0, 0.0]], [[0, 0], [0, 0], [0, 0]]
            ),
            names,
        )
    rng = np.random.default_rng(3)
    for _ in range(20):
        times = np.cumsum(rng.uniform(0.05, 0.5, 5))
        p, v, a = (rng.normal(0, s, (5, 2)) for s in (1.0, 2.0, 5.0))
        for args in ((p,), (p, v), (p, v, a)):
            sampler = TrajectorySampler(times, *args)
            velocity, acceleration = sampler.rate_bounds()
            t = np.linspace(times[0], times[-1], 4001)
            _, qd, qdd = sampler.sample(t, inclusive=True)
            seg = np.clip(np.searchsorted(times, t, side="right") - 1, 0, 3)
            assert np.all(np.abs(qd) <= velocity[seg] * (1 + 1e-12) + 1e-12)
            assert np.all(np.abs(qdd) <= acceleration[seg] * (1 + 1e-12) + 1e-12)


def test_trajectories_are_refused_at_the_first_implausible_value() -> None:
    bounds = JointBounds.of(UR5)
    joints = np.array([2, 0])  # elbow, shoulder_pan
    times = np.array([0.5, 1.0])
    good = np.array([[0.1, 0.2], [0.3, 0.4]])
    check_trajectory(bounds, joints, times, good, good, good)
    far = np.array([[0.1, 0.2], [0.3, 1e308]])
    fast = np.array([[1e3, 0.0], [0.0, -1e150]])
    jerky = np.array([[2e5, 0.0], [0.0, 0.0]])
    cases = [
        ((np.array([0.5, 1e10]), good, None, None), "point 1: time_from_start 1e+10 s is beyond"),
        (
            (times, far, None, None),
            "point 1: position of 'shoulder_pan_joint' is 1e+308, beyond its plausible",
        ),
        ((times, good, fast, None), "point 1: velocity of 'shoulder_pan_joint'"),
        ((times, good, good, jerky), "point 0: acceleration of 'elbow_joint' is 200000"),
    ]
    for (t, p, v, a), said in cases:
        with pytest.raises(RneaError, match=f"^{said}".replace("+", r"\+").replace("(", r"\(")):
            check_trajectory(bounds, joints, t, p, v, a)
