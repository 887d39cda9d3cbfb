"""Parameters as ROS users write them, against the running node: integers for doubles, empty
lists, misspelled keys, invalid files (one line, exit 2) and per-joint values across model swaps."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest
from builtin_interfaces.msg import Duration
from std_msgs.msg import String
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from rnea_ros import Friction, RobotModel, friction_torques, rnea
from rnea_ros.model.example_robots import example_urdf_path
from rnea_ros.testing.rosgraph import Driver, start_node, stop

UR5 = example_urdf_path("ur5").read_text()
KINOVA = example_urdf_path("kinova_description/robots/kinova.urdf").read_text()
MODEL = RobotModel.from_urdf(UR5)
NAMES = list(MODEL.joint_names)


def test_integers_empty_lists_and_a_misspelled_key(tmp_path) -> None:
    params = {
        "robot_description": UR5,
        "effort_limit_scale": 1,
        "gravity": [0, 0, -10],
        "feedback.kp": [10],
        "joints": [],
        "joint_states_timeout": 1,
        "efort_limit_scale": 2.0,
    }
    proc = start_node(tmp_path, params)
    d = Driver("params_driver", dict(zip(NAMES, MODEL.effort_limit, strict=True)))
    try:
        q, qd = np.linspace(-1, 1, 6), np.linspace(0.5, -0.5, 6)
        got = d.wait_for_commands(lambda: d.state(NAMES, q, qd))
        want = rnea(MODEL, q, qd, np.zeros(6), gravity=(0, 0, -10)) + friction_torques(
            Friction.from_model(MODEL), qd
        )
        got = d.command_for(d.state(NAMES, q, qd))
        assert np.allclose(got, want, atol=1e-9)
        # ros2 param set /inverse_dynamics effort_limit_scale 1 (an integer)
        assert all(r.successful for r in d.set_parameters({"effort_limit_scale": 1, "gravity": [0, 0, -9]}))
        want = rnea(MODEL, q, qd, np.zeros(6), gravity=(0, 0, -9)) + friction_torques(
            Friction.from_model(MODEL), qd
        )
        assert np.allclose(d.command_for(d.state(NAMES, q, qd)), want, atol=1e-9)
        result = d.set_parameters({"effort_limit_scale": "1"})
        assert not result[0].successful and "effort_limit_scale: must be a number" in result[0].reason
    finally:
        d.close()
        output = stop(proc)
    assert "unknown parameter 'efort_limit_scale' ignored (did you mean 'effort_limit_scale'?)" in output
    assert "Traceback" not in output


@pytest.mark.parametrize(
    ("params", "line"),
    [
        ({"effort_limit_scale": 20.0}, "effort_limit_scale"),
        ({"effort_limit_scale": -1}, "effort_limit_scale: must be in [0, 2], got -1"),
        ({"effort_limit_scale": 5.0}, "effort_limit_scale: must be in [0, 2], got 5"),  # 5 x the URDF
        ({"gravity": "down"}, "gravity: must be a list"),
        ({"state_source": "predicted"}, "state_source: must be one of measured, desired"),
        ({"friction.viscous": [0.1, -0.1]}, "friction.viscous: must be in [0, "),
        ({"gravity": [0, 0, -9.81]}, "write every number of a list the same way"),  # rcl cannot parse it
        ({"publish_terms": "yes"}, "publish_terms: must be true or false"),
        ({"friction.viscous": [0.1, 0.2]}, "friction.viscous: must have 6 values"),  # known with the model
        ({"payload.mass": 1.0}, "payload.mass: set payload.link (or tip_link)"),
        ({"robot_description": "<robot"}, "robot_description: robot description is not valid XML"),
        ({"tip_link": "nowhere"}, "robot_description: tip_link 'nowhere' is not a link"),
    ],
)
def test_invalid_parameter_files_end_start_up_with_one_line(tmp_path, params, line) -> None:
    """Exit 2 with one line naming the parameter, before any kernel is loaded or compiled (a
    busy machine's kernel loading once kept a per-joint error waiting for more than 30 s; a cold
    cache: test_cold_start.py)."""
    proc = start_node(tmp_path, {"robot_description": UR5, **params})
    try:
        code = proc.wait(120)  # a ceiling: it fails at start-up, a few seconds even when busy
    except subprocess.TimeoutExpired:
        code = None
    output = stop(proc)
    assert code == 2, f"exit {code}:\n{output[-3000:]}"
    assert line in output
    assert "Traceback" not in output
    assert len([x for x in output.splitlines() if "FATAL" in x]) == 1
    assert "kernels" not in output, output  # failed before loading them


def _constant_velocity(q: np.ndarray, v: np.ndarray) -> JointTrajectory:
    """From q (joined from the measured state within 1 s) on at constant velocity v for 19 s (the
    targets stay within 6 rad of q: near the joints' range, as a plausible target must)."""
    msg = JointTrajectory(joint_names=NAMES)
    for t in (1, 20):
        msg.points.append(
            JointTrajectoryPoint(
                positions=(q + v * (t - 1)).tolist(), velocities=v.tolist(), accelerations=[0.0] * 6,
                time_from_start=Duration(sec=t),
            )
        )  # fmt: skip
    return msg


def test_per_joint_values_are_never_applied_to_another_joint(tmp_path) -> None:
    """friction.viscous was given for the UR5's joints; a robot with other joints is refused,
    naming the parameter, and the UR5 keeps commanding. (Along a constant-velocity trajectory the
    friction term is exactly F_v q̇_des, the feedforward rule.)"""
    viscous = [0.5, 0.4, 0.3, 0.2, 0.1, 0.05]
    proc = start_node(tmp_path, {"friction.viscous": viscous, "friction.coulomb": [0.0] * 6})
    d = Driver("swap_params_driver", dict(zip(NAMES, MODEL.effort_limit, strict=True)))
    try:
        d.description.publish(String(data=UR5))
        q, qd = np.linspace(-1, 1, 6), np.linspace(0.5, -0.5, 6)
        v = np.linspace(0.2, -0.3, 6)
        d.wait_for_commands(lambda: d.state(NAMES, q, qd))
        trajectories = d.node.create_publisher(JointTrajectory, "/inverse_dynamics/joint_trajectory", 10)
        trajectories.publish(_constant_velocity(q, v))
        d.description.publish(String(data=KINOVA))  # 6 joints too, other names
        refused = "friction.viscous: has one value per joint for [shoulder_pan_joint"
        diag = d.diagnostics_until(lambda s: refused in s.get("last_model_error", ""))
        assert diag["model"].startswith("ur5")
        want = rnea(MODEL, q, qd, np.zeros(6)) + np.array(viscous) * v
        # the trajectory is at constant velocity 1 s after the node took it (another topic: when
        # the node gets to it; it joins from the measured state until then)
        answer = lambda: d.command_for(d.state(NAMES, q, qd))  # noqa: E731
        d.until(lambda: (got := answer()) is not None and np.allclose(got, want, atol=1e-9), 60.0, "F_v v")
        # values that do not depend on the joints: the swap goes through
        assert all(
            r.successful for r in d.set_parameters({"friction.viscous": [-1.0], "friction.coulomb": [-1.0]})
        )
        d.description.publish(String(data=KINOVA))
        kinova = RobotModel.from_urdf(KINOVA)
        got = d.wait_for_commands(lambda: d.state(kinova.joint_names, np.zeros(6), np.zeros(6)))
        assert np.allclose(got, rnea(kinova, np.zeros(6), np.zeros(6), np.zeros(6)), atol=1e-9)
    finally:
        d.close()
        output = stop(proc)
    assert "Traceback" not in output
