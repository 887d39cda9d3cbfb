"""The running node with the inputs of real set-ups: several joint_states publishers, clocks that
disagree, silence. (Model swaps: test_node_description.py.)"""

from __future__ import annotations

import numpy as np
import pytest

from rnea_ros import RobotModel, rnea
from rnea_ros.model.example_robots import example_urdf_path
from rnea_ros.testing.rosgraph import FRICTION_OFF, START_TIMEOUT, Driver, start_node, stop

PANDA = example_urdf_path("panda").read_text()
FULL = RobotModel.from_urdf(PANDA)  # 7 arm + 2 finger joints
ARM = [f"panda_joint{i}" for i in range(1, 8)]
FINGERS = ["panda_finger_joint1"]  # the gripper driver publishes the leader; the mimic follows
TIMEOUT = 0.5
ERROR, WARN, OK = 2, 1, 0


def expected(model: RobotModel, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
    return rnea(model, q, qd, np.zeros(model.nv))  # the node runs with FRICTION_OFF


@pytest.fixture(scope="module")
def two_publishers(tmp_path_factory):
    """The whole Panda tree, commanding the arm only, fed by an arm and a gripper publisher."""
    tmp = tmp_path_factory.mktemp("inputs")
    params = {"robot_description": PANDA, "joints": ARM, "joint_states_timeout": TIMEOUT, **FRICTION_OFF}
    proc = start_node(tmp, params)
    driver = Driver("inputs_driver", dict(zip(FULL.joint_names, FULL.effort_limit, strict=True)))
    driver.diagnostics_until(lambda s: s["model_loaded"] == "True", START_TIMEOUT)  # the node is up
    yield driver
    driver.close()
    output = stop(proc)
    assert "Traceback" not in output, output


def test_arm_and_gripper_publishers_are_merged_per_joint(two_publishers: Driver) -> None:
    d = two_publishers
    q_arm, qd_arm = np.linspace(-0.8, 0.8, 7), np.linspace(0.3, -0.3, 7)
    assert d.latest_diagnostics(timeout=30)["model_loaded"] == "True"  # the node is up
    assert d.no_command_for(d.state(ARM, q_arm, qd_arm), wait=1.0)
    diag = d.latest_diagnostics()
    assert "panda_finger_joint1" in diag["last_drop"] and diag["level"] == WARN
    before = int(diag["ignored_messages"])
    d.joint_states.publish(d.state(FINGERS, [0.03], [0.0]))  # gripper only: kept, not a command
    d.spin(0.2)
    got = d.command_for(d.state(ARM, q_arm, qd_arm))
    assert got is not None
    q = np.array([*q_arm, 0.03, 0.03])
    qd = np.array([*qd_arm, 0.0, 0.0])
    assert np.allclose(got, expected(FULL, q, qd)[:7], atol=1e-9)
    diag = d.latest_diagnostics()
    assert int(diag["ignored_messages"]) == before + 1
    assert "rejected.missing_joints" in diag  # only from before the gripper spoke
    # the gripper falls silent: once its value is older than the timeout, no command
    d.spin(TIMEOUT + 0.2)
    assert d.no_command_for(d.state(ARM, q_arm, qd_arm))
    d.diagnostics_until(lambda s: "panda_finger_joint1" in s.get("last_drop", ""))
    d.joint_states.publish(d.state(FINGERS, [0.01], [0.0]))
    d.spin(0.1)
    assert d.command_for(d.state(ARM, q_arm, qd_arm)) is not None


def test_future_stamps_and_clock_mixups_are_refused_with_the_reason(two_publishers: Driver) -> None:
    d = two_publishers
    q = np.zeros(7)
    d.joint_states.publish(d.state(FINGERS, [0.02], [0.0]))
    d.spin(0.1)
    assert d.no_command_for(d.state(ARM, q, q, stamp_offset=2 * TIMEOUT))
    d.diagnostics_until(lambda s: "future (clock skew)" in s.get("last_drop", ""))
    assert d.no_command_for(d.state(ARM, q, q, stamp_offset=-1.7e9))  # sim-time stamps, wall-clock node
    d.diagnostics_until(lambda s: "s old" in s.get("last_drop", "") and "use_sim_time" in s["last_drop"])
    # far in the future (1e8 s: +1.7e9, as before, overflowed the int32 seconds of a stamp into
    # the past, and a fixed wait read the previous drop's reason)
    assert d.no_command_for(d.state(ARM, q, q, stamp_offset=1e8))
    d.diagnostics_until(lambda s: "future" in s.get("last_drop", "") and "use_sim_time" in s["last_drop"])
    d.joint_states.publish(d.state(FINGERS, [0.02], [0.0]))
    assert d.command_for(d.state(ARM, q, q)) is not None, d.latest_diagnostics()


def test_diagnostics_error_when_commands_stop_and_input_age_keeps_growing(two_publishers: Driver) -> None:
    d = two_publishers
    d.joint_states.publish(d.state(FINGERS, [0.02], [0.0]))
    assert d.command_for(d.state(ARM, np.zeros(7), np.zeros(7))) is not None
    first = d.latest_diagnostics()
    second = d.latest_diagnostics()
    assert second["level"] == ERROR and "no command for" in second["message"]
    assert "no joint_states for" in second["message"]
    assert float(second["input_age_s"]) > float(first["input_age_s"]) + 0.5
    d.joint_states.publish(d.state(FINGERS, [0.02], [0.0]))
    assert d.command_for(d.state(ARM, np.zeros(7), np.zeros(7))) is not None
    for _ in range(3):  # stale input, not silence: the reason is the drop
        d.joint_states.publish(d.state(ARM, np.zeros(7), np.zeros(7), stamp_offset=-5.0))
        d.spin(0.3)  # the pace of the stale states
    d.diagnostics_until(lambda s: s["level"] == ERROR and "s old" in s["message"])


def test_zero_timeout_means_no_age_check(two_publishers: Driver) -> None:
    d = two_publishers
    q_arm = np.linspace(-0.4, 0.4, 7)
    assert d.set_parameters({"joint_states_timeout": 0})[0].successful  # an integer, as users type it
    try:
        d.joint_states.publish(d.state(FINGERS, [0.02], [0.0], stamp_offset=-30.0))
        d.spin(0.1)
        old = d.state(ARM, q_arm, np.zeros(7), stamp_offset=-20.0)
        before = len(d.commands)
        d.joint_states.publish(old)
        d.until(lambda: len(d.commands) > before, what="a command for a state 20 s old")
        q = np.array([*q_arm, 0.02, 0.02])
        assert np.allclose(d.commands[-1][1], expected(FULL, q, np.zeros(9))[:7], atol=1e-9)
    finally:
        assert d.set_parameters({"joint_states_timeout": TIMEOUT})[0].successful
