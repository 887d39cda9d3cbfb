"""The effort law against MuJoCo in one process (rnea_ros.sim.closed_loop, no ROS): passivity of
the friction compensation on every arm the demo accepts, with the plant's friction equal to the
model's and 30 % lower; the naive compensation it replaces as the counter-example; and the demo's
three phases meeting the demo's targets on every accepted arm.

Every arm of example-robot-data the demo accepts (rnea_ros.sim.scenario) is in the set; each
check runs a few simulated seconds at 1 kHz."""

from __future__ import annotations

import functools

import numpy as np
import pytest

from rnea_ros import RobotModel
from rnea_ros.model.example_robots import example_robots_dir
from rnea_ros.sim.closed_loop import passivity, run_phases
from rnea_ros.sim.demos.forward import argument_parser
from rnea_ros.sim.report import check_targets, summarize
from rnea_ros.sim.scenario import Refused, make_config

GAIN_TOLERANCE = 1e-3  # a coasting arm may end with at most 0.1 % more kinetic energy than it started


@functools.cache
def accepted_arms() -> tuple[str, ...]:
    root = example_robots_dir()
    arms = []
    for path in sorted(root.rglob("*.urdf")):
        try:
            make_config(argument_parser().parse_args(["--urdf", str(path)]))
        except (Refused, ValueError):
            continue
        arms.append(str(path.relative_to(root)))
    return tuple(arms)


ARMS = accepted_arms()


def test_the_arm_set_is_the_one_of_the_issue() -> None:
    names = {a.split("/")[-1] for a in ARMS}
    assert names == {
        "panda.urdf", "panda_collision.urdf", "xarm7.urdf", "z1.urdf", "kinova.urdf", "so100.urdf",
        "so101.urdf", "talos_left_arm.urdf", "ur3_robot.urdf", "ur3_joint_limited_robot.urdf",
        "ur3_gripper.urdf", "ur5_robot.urdf", "ur5_joint_limited_robot.urdf", "ur5_gripper.urdf",
        "ur10_robot.urdf", "ur10_joint_limited_robot.urdf",
    }  # fmt: skip


@pytest.mark.parametrize("arm", ARMS)
@pytest.mark.parametrize("plant", [1.0, 0.7])
def test_a_coasting_joint_loses_kinetic_energy(arm: str, plant: float) -> None:
    """PD gains zero, no trajectory, gravity + Coriolis + friction compensated; each chain joint
    in turn starts at 0.5 rad/s for 0.3 s. The arm never gains more than GAIN_TOLERANCE of its
    kinetic energy, and where the kicked joint has friction it ends with less than it started;
    the compensation's work never exceeds what the plant's friction dissipated."""
    urdf = (example_robots_dir() / arm).read_text()
    model = RobotModel.from_urdf(urdf)
    for coast in passivity(urdf, plant):
        i = model.joint_index(coast.joint)
        assert coast.peak_ratio <= 1 + GAIN_TOLERANCE, coast.joint
        if model.damping[i] > 0 or model.coulomb[i] > 0:
            assert coast.ratio < 1 - 1e-4, coast.joint
        assert coast.friction_work[-1] <= -coast.plant_friction_work[-1] + 1e-12, coast.joint
        assert not coast.tripped


FRICTION_ARMS = (
    "xarm_description/urdf/xarm7.urdf",
    "z1_description/urdf/z1.urdf",
    "talos_data/robots/talos_left_arm.urdf",
)


@pytest.mark.parametrize("arm", FRICTION_ARMS)
@pytest.mark.parametrize("plant", [1.0, 0.7])
def test_passive_also_against_mujocos_frictionloss(arm: str, plant: float) -> None:
    """The same with the simulator applying dry friction as MuJoCo's frictionloss, a soft
    constraint far weaker than the URDF's friction on light joints (see test_mujoco_arm.py)."""
    for coast in passivity((example_robots_dir() / arm).read_text(), plant, coulomb="frictionloss"):
        assert coast.peak_ratio <= 1 + GAIN_TOLERANCE, coast.joint
        assert coast.ratio < 1 - 1e-4, coast.joint
        assert coast.friction_work[-1] <= -coast.plant_friction_work[-1] + 1e-12, coast.joint


@pytest.mark.parametrize("arm", ["xarm_description/urdf/xarm7.urdf", "z1_description/urdf/z1.urdf"])
def test_the_naive_compensation_drives_an_arm_whose_friction_is_lower(arm: str) -> None:
    """The counter-example: the whole model friction at the measured velocity (what the node did
    before) makes the same coasting joints gain energy when the plant has 30 % less friction, and
    against MuJoCo's frictionloss even with the URDF's friction (issue 15's runaway)."""
    urdf = (example_robots_dir() / arm).read_text()
    lower = [c.peak_ratio for c in passivity(urdf, 0.7, naive=True)]
    assert max(lower) > 10.0
    assert min(lower) > 1 + GAIN_TOLERANCE
    soft = [c.peak_ratio for c in passivity(urdf, 1.0, naive=True, coulomb="frictionloss")]
    assert max(soft) > 5.0


@pytest.mark.parametrize("arm", ARMS)
def test_demo_phases_meet_the_targets_in_process(arm: str) -> None:
    """The demo's phases, timeline and gains in one process (lock-step, 12 s): drift < 0.1°,
    RMS ratio >= 10x, max error with feedforward < 1°, no friction term faded."""
    config = make_config(
        argument_parser().parse_args(["--urdf", str(example_robots_dir() / arm), "--duration", "12"])
    )
    summary = summarize(run_phases(config))
    assert check_targets(summary) == []
    assert summary.guard_trips == 0
    assert np.all(summary.max_pd > summary.max_ff)
